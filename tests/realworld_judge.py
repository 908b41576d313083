"""One corpus case end to end: the oracle's load, what cudnn-doctor predicts, whether they agree, and whether the
printed fix, applied to a copy of the stack, makes the framework load a cuDNN it accepts."""
from __future__ import annotations

import mmap
import os
import re
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

import realworld_oracle as oracle
import realworld_pool as pool
import realworld_stacks as stacks
import realworld_wheels as wheels
from shellcheck_kit import simple_commands, without_sudo
from cudnn_doctor.diagnose import collect_report
from cudnn_doctor.host import Host
from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.model import Severity
from cudnn_doctor.results import Report
from cudnn_doctor.probes import collect

# What a fix may run here: package installs and environment changes. Anything touching the machine's own loader
# configuration (/etc, ldconfig, apt) is never run by a test.
# Programs a fix may run that change the machine itself (or a conda install the pool cannot serve): not run here.
UNSAFE = ("ldconfig", "apt", "apt-get", "dnf", "yum", "conda", "reboot", "ubuntu-drivers")


def unsafe(command: str) -> bool:
    """Whether a fix's line runs one of UNSAFE or writes under /etc (a path that merely names a conda folder, as
    a pattern to drop from LD_LIBRARY_PATH, is not)."""
    for words in simple_commands(command):
        words = without_sudo(words)
        if words[:1] == ["chroot"]:  # the program run inside the root
            words = words[2:]
        if words and (os.path.basename(words[0]) in UNSAFE or
                      words[0] not in ("grep", "echo", "printf", "export") and
                      any(w.startswith("/etc/") for w in words[1:])):
            return True
    return ">" in command and "/etc/" in command.split(">", 1)[1]


def other_index(command: str) -> bool:
    """Whether a fix's pip line installs from another index than PyPI (torch's cu126 build from PyTorch's own): a
    gigabyte-sized wheel this harness cannot prove offline, and whose pool build it does not hold."""
    return any(w in ("--index-url", "--extra-index-url", "-i", "-f", "--find-links") or
               w.startswith(("--index-url=", "--extra-index-url=", "--find-links="))
               for words in simple_commands(command) if words[:1] == ["pip"] or words[1:3] == ["-m", "pip"]
               for w in words)


class CaseHost(Host):
    """The live machine, with the case's environment and its own ld.so.conf/ld.so.cache standing in for /etc's."""

    def __init__(self, stack: stacks.Stack) -> None:
        super().__init__("/", env=stack.env, running_python=False)
        self._swap = {"/etc/ld.so.cache": stack.cache, "/etc/ld.so.conf": stack.conf}

    def _outside(self, inside: str) -> str:  # the one mapping every read of the Host goes through
        swapped = self._swap.get("/" + inside.lstrip("/"))
        return str(swapped) if swapped is not None else super()._outside(inside)


@dataclass
class Verdict:
    """One side's answer for a case: which files the framework gets, and whether that works."""

    main: Optional[str]  # realpath of libcudnn.so.N, None when not found
    parts: Dict[str, Optional[str]] = field(default_factory=dict)  # sub-library soname -> realpath
    works: bool = False
    summary: str = ""


def _real(path: Optional[str]) -> Optional[str]:
    return os.path.realpath(path) if path else None


def short(path: str, stack: stacks.Stack) -> str:
    return path.replace(str(stack.site), "site").replace(str(stack.root), "~")


def _version_text(v: Optional[int]) -> str:
    if v is None:
        return "?"
    return "%d.%d.%d" % ((v // 10000, v // 100 % 100, v % 100) if v >= 90000 else (v // 1000, v // 100 % 10, v % 100))


# torch._C._cudnn.getCompileVersion() of the real wheel, installed whole with its dependencies in a scratch venv (the
# pool keeps only what the loader reads, too little to import torch): what torch compares the runtime with.
TORCH_COMPILED = {"2.9.1": (9, 8)}


def compiled_cudnn(stack: stacks.Stack) -> Tuple[Optional[int], int, str]:
    """(major, minor, where read) of the cuDNN the framework was built for, from the framework's own records."""
    name = stack.case.framework[0]
    site = stack.site
    meta = next(site.glob("%s-*.dist-info/METADATA" % name.replace("-", "_")), None)
    pins = []
    # A JAX pjrt plugin's pins are its cuda plugin's (the one JAX install); never another framework's floor.
    plugins = list(site.glob("jax_cuda1*_plugin-*.dist-info/METADATA")) if name.startswith("jax-") else []
    for p in [meta] + plugins:
        if p is None:
            continue
        for line in p.read_text().splitlines():
            if line.startswith("Requires-Dist:"):
                req = Requirement(line.split(":", 1)[1].strip())
                if canonicalize_name(req.name).startswith("nvidia-cudnn-"):
                    pins.append(req)
    floor = None
    for req in pins:
        for spec in req.specifier:
            if spec.operator in ("==", ">=", "~="):
                parts = spec.version.replace(".*", "").split(".")
                floor = (int(parts[0]), int(parts[1]) if len(parts) > 1 else 0)
    if name == "paddlepaddle-gpu":  # paddle/version/__init__.py: cudnn_version = '8.6.0'
        m = re.search(r"^cudnn_version\s*=\s*'(\d+)\.(\d+)", (site / "paddle/version/__init__.py").read_text(), re.M)
        return (int(m.group(1)), int(m.group(2)), "paddle.version.cudnn()") if m else (None, 0, "nothing")
    if name == "tensorflow":
        info = oracle.tf_build_info(site)
        major = int(str(info["cudnn_version"]).split(".")[0])
        return major, floor[1] if floor and floor[0] == major else 0, "tf.sysconfig.get_build_info() + pin"
    if name == "torch" and stack.case.framework[1] in TORCH_COMPILED:
        return TORCH_COMPILED[stack.case.framework[1]] + ("torch._C._cudnn.getCompileVersion()",)
    lib = stack.library()
    if lib is not None:
        needed = oracle.needed_soname(lib)
        if needed:
            major = int(needed.rsplit(".", 1)[1])
            return major, floor[1] if floor and floor[0] == major else 0, "DT_NEEDED + pin"
    return (floor[0], floor[1], "pin") if floor else (None, 0, "nothing")


# How each framework loads cuDNN, for the oracle: its Python-side preloads (torch, JAX), Paddle's unversioned name.
KIND = {"torch": "torch", "jax-cuda12-pjrt": "jax", "jax-cuda13-pjrt": "jax", "tensorflow": "tensorflow",
        "paddlepaddle-gpu": "paddle"}
# TensorFlow's start-up dlopens besides cuDNN (tsl dso_loader's TryDlopenCUDALibraries: cudart, cuBLAS, cuBLASLt,
# cuFFT, cuSOLVER, cuSPARSE; never cuRAND), by the CUDA major of its build; the folders its RUNPATH names agree.
TF_STARTUP = {"12": ("libcudart.so.12", "libcublas.so.12", "libcublasLt.so.12", "libcufft.so.11",
                     "libcusolver.so.11", "libcusparse.so.12")}
# PaddlePaddle's GPU build dlopens the unversioned name from its own search list (phi/backends/dynload's
# GetCUDNNDsoHandle: FLAGS_cudnn_dir, the loader's own search, then the CUDA folder) and accepts its recorded major.
PADDLE_SONAME = "libcudnn.so"
# cuDNN 9's engine sub-libraries (compat/cudnn_layout.toml [v9] linux_sublibraries): loaded at the first convolution,
# not by the version checks, and each one needed there. Asked of an H100
# (git show 44f09e4:scripts/gpu_engines_probe.sh, cuDNN 9.19 wheel, `cudnn-doctor smoke --library`): the whole folder
# runs the convolution; without
# libcudnn_engines_precompiled.so.9 it fails with CUDNN_STATUS_NOT_SUPPORTED, without
# libcudnn_engines_runtime_compiled.so.9 with CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED (docs/real-stacks.md).
def engines() -> Tuple[str, ...]:
    """cuDNN 9's engine sub-libraries, asked of the knowledge when a case is judged (never when this module is imported:
    a test session's cache folder is set by then)."""
    return tuple(n for n in load_compat().cudnn_layout(9).get("linux_sublibraries", []) if "_engines_" in n)


def _accepts(v: Optional[int], major: int, minor: int) -> bool:
    return v is not None and v // (10000 if v >= 90000 else 1000) == major and (
        (v // 100 % 100 if v >= 90000 else v // 100 % 10) >= minor)


def cuda_major(stack: stacks.Stack) -> Optional[int]:
    """The CUDA major the framework was built for, from its own records: its library's DT_NEEDED CUDA runtime or
    cuBLAS, TensorFlow's build info, Paddle's version module, the CUDA major in its wheel's name."""
    name, site = stack.case.framework[0], stack.site
    if name == "tensorflow":
        return int(str(oracle.tf_build_info(site).get("cuda_version", "0")).split(".")[0]) or None
    if name == "paddlepaddle-gpu":
        m = re.search(r"^cuda_version\s*=\s*'(\d+)", (site / "paddle/version/__init__.py").read_text(), re.M)
        return int(m.group(1)) if m else None
    m = re.search(r"cuda(\d+)", name)
    if m:
        return int(m.group(1))
    dyn = subprocess.run(["readelf", "-d", str(stack.library())], capture_output=True, text=True).stdout
    m = re.search(r"\[lib(?:cudart|cublas)\.so\.(\d+)", dyn)
    return int(m.group(1)) if m else None


def observe(stack: stacks.Stack, work: Path) -> Tuple[Verdict, Optional[oracle.OracleResult]]:
    """The oracle's side: the environment's own python and the real loader, the framework's own checks."""
    lib = stack.library()
    if lib is None:  # a CPU-only build, or CuPy 14 (no cuDNN module): nothing loads cuDNN, which is fine
        return Verdict(None, works=True, summary="loads no cuDNN (CPU-only, or no cuDNN module)"), None
    name = stack.case.framework[0]
    kind = KIND.get(name, "plain")
    major, minor, _ = compiled_cudnn(stack)
    startup: Tuple[str, ...] = ()
    soname = "libcudnn.so.%d" % major
    if kind == "tensorflow":
        startup = TF_STARTUP.get(str(oracle.tf_build_info(stack.site).get("cuda_version", "")).split(".")[0], ())
    elif kind == "paddle":
        soname = PADDLE_SONAME
    result = oracle.run(lib, soname, work, stack.cache, stack.env, stack.python, kind,
                        stack.site, startup, engines(), user_site=stack.case.user_site)
    own_check = ""  # the framework's own GPU-less verdict, where it has one
    if kind == "jax":
        # JAX's own check names the version it was built for and the one it got, after its own preloads.
        build, got = result.framework.get("JAXBUILD", ""), result.framework.get("JAXGOT", "")
        if build.isdigit():
            major, minor = int(build) // 10000, int(build) // 100 % 100
            if not (got.isdigit() and int(got) // 100 >= int(build) // 100):
                own_check = "jax says " + (got or result.framework.get("JAXERROR", "no version"))
    parts = {os.path.basename(m): _real(m) for m in result.maps if os.path.basename(m) != result.asked
             and not os.path.basename(m).startswith("libcudnn.so")}
    parts.update({name: _real(path) for name, path in result.rejected.items()})  # found, then refused: still its file
    v = result.version
    accepted = _accepts(v, major, minor)
    checks_ok = all(status == 0 for status in result.checks.values())
    # The engine sub-libraries export no VersionCheck: each holds its own `cudnn_version != (9 * 10000 + ...)` test,
    # run at first use, so a part of another release behind this version fails there (draw 399261-34).
    expects = {name: engine_expects(path) for name, path in parts.items() if path}
    checks_ok = checks_ok and all(e is None or e == v for e in expects.values())
    missing = sorted(n for n, path in result.startup.items() if path is None)
    no_engine = sorted(n for n, path in result.engines.items() if path is None)  # the first convolution fails
    cudart, cuda = result.framework.get("CUDART", ""), cuda_major(stack)
    if cudart.isdigit() and cuda and int(cudart) // 1000 != cuda:  # cuDNN built for another CUDA major
        own_check = "cuDNN built for CUDA %d, %s for CUDA %d" % (int(cudart) // 1000, name, cuda)
    works = result.opened is not None and accepted and checks_ok and not result.crashed and not own_check \
        and not missing and not no_engine
    summary = ("%s; " % own_check if own_check else "") + (
        "no %s; " % ",".join(missing) if missing else "") + ("no engine %s; " % ",".join(no_engine) if no_engine else "")
    if result.opened is None:
        summary += "%s: %s" % (result.asked, result.error)
    else:
        bad = ["%s=%d" % (k.replace("VersionCheck", "").replace("cudnn", ""), s) for k, s in result.checks.items()
               if s] + ["%s wants %d" % (k, e) for k, e in sorted(expects.items()) if e is not None and e != v] + (
            [result.crashed] if result.crashed else [])
        summary += "%s %s%s%s" % (_version_text(v), short(os.path.dirname(_real(result.opened)), stack),
                                 "" if accepted else " (built for %d.%d)" % (major, minor),
                                 (" FAILS " + ",".join(bad)) if bad else "")
        others = sorted({os.path.dirname(p) for p in parts.values() if p} - {os.path.dirname(_real(result.opened))})
        if others:
            summary += " +parts from " + ",".join(short(o, stack) for o in others)
    return Verdict(_real(result.opened), parts, works, summary), result


def engine_expects(path: str) -> Optional[int]:
    """The cuDNN version a sub-library insists on at first use, from the test compiled into it (cuDNN 9.x's engine
    and graph libraries carry `cudnn_version != (9 * 10000 + 10 * 100 + 2)`); None where it has none."""
    st = os.stat(path)
    identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    if identity not in _EXPECTS:  # a case's files are hard links into the shared trees: one read per file, not per case
        _EXPECTS[identity] = _expects(path)
    return _EXPECTS[identity]


_EXPECTS: Dict[Tuple[int, int, int, int], Optional[int]] = {}  # a wheel's file is hundreds of MB: read once


def _expects(path: str) -> Optional[int]:
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        at = data.find(b"cudnn_version != (")
        m = re.match(rb"cudnn_version != \((\d+) \* 10000 \+ (\d+) \* 100 \+ (\d+)\)", data[at:at + 60]) \
            if at >= 0 else None
    return int(m.group(1)) * 10000 + int(m.group(2)) * 100 + int(m.group(3)) if m else None


def about(finding, fw_name: str, fw_version: str) -> bool:
    """Whether a finding judges this framework's cuDNN (what the oracle sees). CD706 names cuBLAS, cuFFT and the
    rest (cuDNN has CD704), which the corpus does not install and the oracle does not load: not counted."""
    ev = finding.evidence or {}
    if finding.id == "CD706" and not fw_name.startswith("tensorflow"):
        return False  # the oracle loads TensorFlow's start-up libraries only
    return ev.get("framework") in (fw_name, "%s %s" % (fw_name, fw_version)) or \
        "%s %s" % (fw_name, fw_version) in finding.title


def doctor(stack: stacks.Stack) -> Tuple[object, Report]:
    """cudnn-doctor's facts and report for the whole environment (once per stack: every framework is judged on it)."""
    facts = collect(CaseHost(stack), timeout=600, compat=load_compat())  # a cold page cache on a busy CI machine: no deadline cut
    if any(b.reason == "timed-out" for b in facts.blocked):
        # A native call the load of a busy 2-core machine held past its few seconds (draw 601201-7): the doctor then
        # rightly says it could not tell, which is not what is judged here; asked once more, as a user would.
        facts = collect(CaseHost(stack), timeout=600, compat=load_compat())
    return facts, collect_report(facts=facts)


def predict(stack: stacks.Stack, seen: Optional[Tuple[object, Report]] = None) -> Tuple[Verdict, Report]:
    """cudnn-doctor's side: its facts about the framework and its error findings."""
    facts, report = seen or doctor(stack)
    name, version = stack.case.framework
    fws = [f for f in facts.python.frameworks if f.name == name and f.location == str(stack.site)]
    fw = fws[0] if fws else None
    errors = [f for f in report.findings if f.severity == Severity.ERROR and fw is not None
              and about(f, fw.name, fw.version)]
    res = fw.resolved_cudnn if fw else None
    parts = {k: _real(r.realpath or r.path) for k, r in (getattr(fw, "resolved_cudnn_parts", {}) if fw else {}).items()}
    main = _real(res.realpath or res.path) if res else None
    if res is None:
        summary = "no cuDNN"
    elif not res.path:
        summary = "%s not found" % res.name
    else:
        copy = next((c for c in facts.cudnn if any(_real(x.path) == main for x in c.files)
                     or _real(c.path) == main), None)
        summary = "%s %s" % (copy.version if copy else "?", short(os.path.dirname(_real(res.path)), stack))
    if errors:
        summary += " ERR " + ",".join(sorted({f.id for f in errors}))
    return Verdict(main, parts, works=not errors, summary=summary), report


def disagreements(seen: Verdict, said: Verdict) -> List[str]:
    out = []
    if seen.main != said.main:
        out.append("libcudnn: oracle %s, doctor %s" % (seen.main, said.main))
    for soname, path in seen.parts.items():
        if said.parts.get(soname) != path:
            out.append("%s: oracle %s, doctor %s" % (soname, path, said.parts.get(soname)))
    if seen.works != said.works:
        out.append("verdict: oracle %s, doctor %s" % ("works" if seen.works else "fails",
                                                     "no error" if said.works else "error"))
    return out


def fix_commands(report: Report, stack: stacks.Stack) -> List[str]:
    """Every error's commands for every framework of the environment (a fix is judged for all of them)."""
    judged = [stack.case.framework, *stack.case.judged]
    commands: List[str] = []
    for f in report.findings:
        if f.severity == Severity.ERROR and f.remedy is not None and any(about(f, n, v) for n, v in judged):
            commands += [c for c in f.remedy.commands if c not in commands]
    return commands


# A fix that gives each framework its own environment: `python3.X -m venv DIR && DIR/bin/pip install REQ...`.
# Paddle's also links the unversioned name in the wheel's folder: `&& ln -sf libcudnn.so.N $(echo DIR/...)/NAME`.
NEW_ENVIRONMENT = re.compile(r"^python3(?:\.\d+)? -m venv (?:--upgrade-deps )?(\S+) && (?:PYTHONPATH= )?\1/bin/pip install (.+?)"
                             r"(?: && ln -sf (libcudnn\.so\.\d+) \$\(echo \1/lib/python3\*/site-packages/nvidia/cudnn/lib\)"
                             r"/(libcudnn\.so))?( && echo 'export LD_LIBRARY_PATH=[^']*' >> \1/bin/activate)?"
                             r"(?: && printf '%s\\n' ('.*') >> \1/bin/activate)?$")
# The wheels of a new environment the oracle loads for its framework (what its install pins of these projects, from
# its own metadata): torch's global deps need its CUDA runtime, TensorFlow's start-up its CUDA libraries.
ORACLE_LOADS = {"torch": ("nvidia-cudnn-", "nvidia-cuda-runtime-"),
                "tensorflow": ("nvidia-cudnn-", "nvidia-cuda-runtime-", "nvidia-cublas-", "nvidia-cufft-",
                               "nvidia-cusolver-", "nvidia-cusparse-", "nvidia-nvjitlink-")}


def _pins_under(wheel: Tuple[str, str], extras: List[str], loads: Tuple[str, ...]) -> List[Tuple[str, str]]:
    """The nvidia-* wheels a framework wheel's METADATA pins (under `extras`) of the projects in `loads`."""
    tree = wheels.tree(*wheel)
    meta = next(tree.glob("*.dist-info/METADATA"), None) if tree else None
    out = []
    for line in (meta.read_text(errors="replace").splitlines() if meta else []):
        if not line.startswith("Requires-Dist:"):
            continue
        req = Requirement(line.split(":", 1)[1].strip())
        env = [{"extra": e, "platform_system": "Linux", "sys_platform": "linux", "platform_machine": "x86_64"}
               for e in [""] + extras]
        if req.marker is not None and not any(req.marker.evaluate(e) for e in env):
            continue
        same = [sp.version for sp in req.specifier if sp.operator == "=="]
        name = canonicalize_name(req.name)
        # a range (JAX's >=9.12,<10): pip takes the newest release it admits; of the pool's cuDNN wheels here
        fits = [w for w in pool.CUDNN if w[0] == name and req.specifier.contains(w[1])]
        if name.startswith(loads) and (same or fits):
            out.append((name, same[0]) if same else max(fits, key=lambda w: Version(w[1])))
    return out


def environment_case(name: str, arguments: str, ld_path: bool) -> stacks.Case:
    """The environment a `pip install` line makes, as a case over the pool: the framework's own wheels, and the
    wheels its install pins that the oracle loads (pip's own choice for an exact pin; other pins install nothing
    the oracle reads)."""
    words = shlex.split(arguments)
    reqs = [Requirement(w) for i, w in enumerate(words) if not w.startswith("-") and
            (i == 0 or words[i - 1] != "--index-url")]
    first, rest = reqs[0], reqs[1:]
    version = next(iter(first.specifier)).version
    if canonicalize_name(first.name) == "jax":  # jax[cudaNN]: its plugin and PJRT wheels, the plugin's with-cuda
        major = next(iter(first.extras))[len("cuda"):]
        framework = ("jax-cuda%s-pjrt" % major, version)
        plugin = ("jax-cuda%s-plugin" % major, version)
        site = [plugin] + _pins_under(plugin, ["with-cuda", "with_cuda"], ("nvidia-cudnn-",))
    else:
        framework = (canonicalize_name(first.name), version)
        kind = KIND.get(framework[0], framework[0])
        site = _pins_under(framework, sorted(first.extras), ORACLE_LOADS.get(kind, ("nvidia-cudnn-",)))
    for r in rest:  # an exact pin as named; a wildcard or no version: pip's newest match, of the pool's cuDNN wheels
        fits = [w for w in pool.CUDNN if w[0] == canonicalize_name(r.name) and r.specifier.contains(w[1])]
        if not r.specifier:  # a CUDA library's wheel (ONNX Runtime 1.18's cu11 set): the oracle loads no such wheel
            site += [max(fits, key=lambda w: Version(w[1]))] if fits else []
            continue
        site += [max(fits, key=lambda w: Version(w[1]))] if "*" in str(r.specifier) and fits else [
            (canonicalize_name(r.name), next(iter(r.specifier)).version.replace(".*", ""))]
    return stacks.Case(name=name, framework=framework, site=site, ld_path=["@site-cudnn"] if ld_path else [])


# `pip install "NAME[EXTRA]==V"` where NAME V is installed: pip installs the extra's requirements. With PIP_NO_DEPS the
# harness names the ones the oracle reads, as pip resolves them (the same _pins_under as a new environment's).
EXTRA_INSTALL = re.compile(r'^pip install "([A-Za-z0-9_.-]+)\[([A-Za-z0-9_,-]+)\]==([^"*]+)"$')


def with_extras_named(command: str) -> str:
    m = EXTRA_INSTALL.match(command)
    if not m:
        return command
    name, extras, version = canonicalize_name(m.group(1)), m.group(2).split(","), m.group(3)
    pins = _pins_under((name, version), extras, ORACLE_LOADS.get(KIND.get(name, name), ("nvidia-cudnn-",)))
    return "pip install %s" % " ".join(shlex.quote("%s==%s" % wheel) for wheel in [(name, version), *pins])


# A line that changes only the shell's variables. A new environment is made and used from that same shell, so it
# inherits what the user's shell has (an LD_PRELOAD, a conda prefix on LD_LIBRARY_PATH) after those lines.
SHELL_LINE = re.compile(r"^(?:unset (?:LD_PRELOAD|LD_LIBRARY_PATH)|export LD_LIBRARY_PATH=.*)$")
INHERITED = ("LD_PRELOAD", "LD_LIBRARY_PATH")


def shell_after(env: Dict[str, str], lines: List[str]) -> Dict[str, str]:
    """The loader's variables of a shell with `env` after these lines."""
    script = "set -e\n%s\nenv -0\n" % "\n".join(lines)
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=60, check=True)
    after = dict(item.split("=", 1) for item in proc.stdout.split("\0") if "=" in item)
    return {k: after[k] for k in INHERITED if after.get(k)}


def inherit(env: stacks.Stack, inherited: Dict[str, str]) -> None:
    """A new environment used from the user's shell: its activate's own LD_LIBRARY_PATH line goes in front of the
    shell's; the shell's LD_PRELOAD applies as it is."""
    for var, value in inherited.items():
        own = env.env.get(var) if var == "LD_LIBRARY_PATH" else None
        env.env[var] = "%s:%s" % (own, value) if own else value


def apply_fix(stack: stacks.Stack, commands: List[str], root: Path) -> Tuple[List[stacks.Stack], str]:
    """Run the fix's own commands in a copy of the stack (pip from the wheel cache, no index); the new stacks: the
    copy, or each environment a fix makes per framework (built from the pool as its install line lays it out)."""
    if not commands:
        return [], "no commands"
    refused = [c for c in commands if unsafe(c)]
    if refused:
        return [], "not run here: %s" % refused[0]
    elsewhere = [c for c in commands if other_index(c)]
    if elsewhere:
        return [], "not run here (another index than PyPI): %s" % elsewhere[0]
    apart = [NEW_ENVIRONMENT.match(c) for c in commands]
    if any(apart):
        shell = [c for c, m in zip(commands, apart) if not m and SHELL_LINE.match(c)]
        in_place = [c for c, m in zip(commands, apart) if not m and not SHELL_LINE.match(c)]
        if in_place:
            # Another error's fix for the environment the frameworks leave (TensorFlow's missing cuBLAS): it must
            # run there as printed, but what is judged is the new environments, where they go
            done, how = apply_fix(stack, shell + in_place, Path("%s-in-place" % root))
            if not done:
                return [], "the in-place part of a per-framework fix: %s" % how
        inherited = shell_after(stack.env, shell)
        plain = {k: v for k, v in stack.env.items() if k not in INHERITED}
        built = []
        for i, m in enumerate(m for m in apart if m):
            case = environment_case("%s-env%d" % (stack.case.name, i), m.group(2), bool(m.group(5)))
            missing = stacks.missing_wheels(case)
            if missing:
                return [], "wheels not available: %s" % missing
            env = stacks.build(case, Path("%s-env%d" % (root, i)))
            if m.group(3):  # the line's own link, made in the built environment's wheel folder
                link = env.site / "nvidia/cudnn/lib" / m.group(4)
                link.unlink(missing_ok=True)
                link.symlink_to(m.group(3))
            # the activate's own line that takes the shell's cuDNN folders off, run on what the shell hands it
            inherit(env, shell_after(dict(plain, **inherited), shlex.split(m.group(6))) if m.group(6) else inherited)
            built.append(env)
        return built, "; ".join(commands)
    moved = stacks.copy(stack, root)
    script = "set -e\n%s\nenv -0\n" % "\n".join(with_extras_named(c).replace(str(stack.root), str(root))
                                                  for c in commands)
    # pip runs on the wheel cache alone (wheels.for_pip: the big wheels the fix names stored uncompressed), filled
    # first with each release the fix names, as pip with the index would pick it (unless downloads are off).
    # HOME is the copy's own: nothing a fix writes under ~ lands in the machine's.
    # No bytecode compiled (PIP_COMPILE=0 is pip's --no-compile): the loader and the frameworks' library loads are what
    # is judged, and compiling a framework's thousands of modules costs seconds of CPU at every install.
    named = wheels.requirements_in(script)
    if not os.environ.get("CUDNN_DOCTOR_NO_DOWNLOAD"):
        wheels.fetch(named)  # one it cannot get fails pip's install below, as it would for the user
    env = dict(moved.env, PIP_FIND_LINKS=str(wheels.for_pip(named)), PIP_NO_INDEX="1", PIP_NO_DEPS="1",
               PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_COMPILE="0", HOME=str(root / "home"))
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, cwd=str(root),
                          timeout=600)
    if proc.returncode != 0:
        return [], "fix failed: %s" % (proc.stderr.strip()[-400:])
    after = dict(item.split("=", 1) for item in proc.stdout.split("\0") if "=" in item)
    # What the user's shell still has after the fix (PYTHONPATH too: a fix that ignored it would fail for them; an
    # LD_PRELOAD the fix did not unset, as `fix`'s own new shell keeps it: draw 2757830195-32 was judged without it).
    moved.env = {k: after[k] for k in ("PATH", "VIRTUAL_ENV", "LD_LIBRARY_PATH", "LD_PRELOAD", "CONDA_PREFIX",
                                       "PYTHONPATH") if k in after}
    moved.env["HOME"] = stack.env.get("HOME", "/root").replace(str(stack.root), str(root))  # a user site moves too
    return [moved], "; ".join(shlex.quote(c) if " " not in c else c for c in commands)
