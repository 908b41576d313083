"""One corpus case end to end: the oracle's load, what cudnn-doctor predicts, whether they agree, and whether the
printed fix, applied to a copy of the stack, makes the framework load a cuDNN it accepts."""
from __future__ import annotations

import os
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import realworld_oracle as oracle
import realworld_stacks as stacks
import realworld_wheels as wheels
from cudnn_doctor.diagnose import collect_report
from cudnn_doctor.host import Host
from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.model import Report, Severity
from cudnn_doctor.probes import collect

# What a fix may run here: package installs and environment changes. Anything touching the machine's own loader
# configuration (/etc, ldconfig, apt) is never run by a test.
UNSAFE = ("ldconfig", "/etc/", "apt", "dnf", "yum", "conda", "reboot", "ubuntu-drivers")


class CaseHost(Host):
    """The live machine, with the case's environment and its own ld.so.conf/ld.so.cache standing in for /etc's."""

    def __init__(self, stack: stacks.Stack) -> None:
        super().__init__("/", env=stack.env, running_python=False)
        self._swap = {"/etc/ld.so.cache": stack.cache, "/etc/ld.so.conf": stack.conf}

    def outside(self, inside: str) -> Path:
        swapped = self._swap.get("/" + inside.lstrip("/"))
        return swapped if swapped is not None else super().outside(inside)


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


def compiled_cudnn(stack: stacks.Stack) -> Tuple[Optional[int], int, str]:
    """(major, minor, where read) of the cuDNN the framework was built for, from the framework's own records."""
    name = stack.case.framework[0]
    site = stack.site
    meta = next(site.glob("%s-*.dist-info/METADATA" % name.replace("-", "_")), None)
    pins = []
    for p in [meta] + list(site.glob("jax_cuda12_plugin-*.dist-info/METADATA")):
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
    if name == "tensorflow":
        info = oracle.tf_build_info(site)
        major = int(str(info["cudnn_version"]).split(".")[0])
        return major, floor[1] if floor and floor[0] == major else 0, "tf.sysconfig.get_build_info() + pin"
    lib = stack.library()
    if lib is not None:
        needed = oracle.needed_soname(lib)
        if needed:
            major = int(needed.rsplit(".", 1)[1])
            return major, floor[1] if floor and floor[0] == major else 0, "DT_NEEDED + pin"
    return (floor[0], floor[1], "pin") if floor else (None, 0, "nothing")


def observe(stack: stacks.Stack, work: Path) -> Tuple[Verdict, Optional[oracle.OracleResult]]:
    """The oracle's side: the real loader, the framework's own checks."""
    lib = stack.library()
    if lib is None:  # a CPU-only build, or CuPy 14 (no cuDNN module): nothing loads cuDNN, which is fine
        return Verdict(None, works=True, summary="loads no cuDNN (CPU-only, or no cuDNN module)"), None
    major, minor, _ = compiled_cudnn(stack)
    own_check = None  # the framework's own GPU-less verdict, where it has one
    if stack.case.framework[0] == "jax-cuda12-pjrt":
        # JAX's own check (jax_cuda12_plugin._versions, what jax's CUDA version check calls) names the version it
        # was built for and loads cuDNN itself: it must find one at least that new.
        build, got = oracle.jax_versions(stack.site, oracle.loader_for(work, stack.cache), stack.env)
        if build:
            major, minor = build // 10000, build // 100 % 100
            own_check = got if not (got.isdigit() and int(got) >= build) else ""
    result = oracle.run(lib, "libcudnn.so.%d" % major, work, stack.cache, stack.env)
    parts = {os.path.basename(m): _real(m) for m in result.maps if os.path.basename(m) != result.asked}
    v = result.version
    accepted = v is not None and v // (10000 if v >= 90000 else 1000) == major and (
        (v // 100 % 100 if v >= 90000 else v // 100 % 10) >= minor)
    checks_ok = all(status == 0 for status in result.checks.values())
    works = result.opened is not None and accepted and checks_ok and not result.crashed and not own_check
    if own_check:
        summary = "jax says %s; " % own_check
    else:
        summary = ""
    if result.opened is None:
        summary += "%s: %s" % (result.asked, result.error)
    else:
        bad = ["%s=%d" % (k.replace("VersionCheck", "").replace("cudnn", ""), s) for k, s in result.checks.items()
               if s] + ([result.crashed] if result.crashed else [])
        summary += "%s %s%s%s" % (_version_text(v), short(os.path.dirname(_real(result.opened)), stack),
                                 "" if accepted else " (built for %d.%d)" % (major, minor),
                                 (" FAILS " + ",".join(bad)) if bad else "")
        others = sorted({os.path.dirname(p) for p in parts.values() if p} - {os.path.dirname(_real(result.opened))})
        if others:
            summary += " +parts from " + ",".join(short(o, stack) for o in others)
    return Verdict(_real(result.opened), parts, works, summary), result


def about(finding, fw_name: str, fw_version: str) -> bool:
    """Whether a finding judges this framework's cuDNN (what the oracle sees). CD706 names cuBLAS, cuFFT and the
    rest (cuDNN has CD704), which the corpus does not install and the oracle does not load: not counted."""
    ev = finding.evidence or {}
    if finding.id == "CD706":
        return False
    return ev.get("framework") in (fw_name, "%s %s" % (fw_name, fw_version)) or \
        "%s %s" % (fw_name, fw_version) in finding.title


def predict(stack: stacks.Stack) -> Tuple[Verdict, Report]:
    """cudnn-doctor's side: its facts about the framework and its error findings."""
    facts = collect(CaseHost(stack), timeout=600, compat=load_compat())  # a cold page cache on a busy CI machine: no deadline cut
    report = collect_report(facts=facts)
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
    name, version = stack.case.framework
    commands: List[str] = []
    for f in report.findings:
        if f.severity == Severity.ERROR and about(f, name, version) and f.remedy is not None:
            commands += [c for c in f.remedy.commands if c not in commands]
    return commands


def apply_fix(stack: stacks.Stack, commands: List[str], root: Path) -> Tuple[Optional[stacks.Stack], str]:
    """Run the fix's own commands in a copy of the stack (pip from the wheel cache, no index); the new stack."""
    if not commands:
        return None, "no commands"
    unsafe = [c for c in commands if any(word in c for word in UNSAFE)]
    if unsafe:
        return None, "not run here: %s" % unsafe[0]
    moved = stacks.copy(stack, root)
    script = "set -e\n%s\nenv -0\n" % "\n".join(c.replace(str(stack.root), str(root)) for c in commands)
    env = dict(moved.env, PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheels.WHEELS), PIP_NO_DEPS="1",
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, cwd=str(root),
                          timeout=600)
    if proc.returncode != 0:
        return None, "fix failed: %s" % (proc.stderr.strip()[-400:])
    after = dict(item.split("=", 1) for item in proc.stdout.split("\0") if "=" in item)
    moved.env = {k: after[k] for k in ("PATH", "VIRTUAL_ENV", "HOME", "LD_LIBRARY_PATH", "CONDA_PREFIX") if k in after}
    return moved, "; ".join(shlex.quote(c) if " " not in c else c for c in commands)
