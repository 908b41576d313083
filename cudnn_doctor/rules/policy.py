"""CD9xx: installers and policy: conda cuDNN pins, --require expressions, --for FRAMEWORK[==VERSION] targets."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from ..knowledge import Compat
from ..versions import dl4j_key, major_of, mm, mm_text, release3, ver
from ..model import Facts, Finding
from . import rule
from .common import (ERROR, INFO, WARNING, arch_driver_limit, best_torch_variant, compat_of, consumers, cudnn_older,
                     cudnn_wheel_for, driver_cuda, driver_upgrade_fix, driver_version, finding, floor_branch,
                     framework_kind, gpu_cudnn_problems, gpu_label, gpus_with_cc, has_driver, machine_cuda,
                     platform_of, toolkit_install_fix, torch_install)

# What each --require key is compared with (documented in `cudnn-doctor check --help` and the README).
REQUIRE_KEYS: Dict[str, str] = {
    "driver": "the NVIDIA driver version (NVML, else libcuda's file name, else the kernel module)",
    "cuda": "the newest CUDA version the driver supports, as nvidia-smi prints it (cuDriverGetVersion; derived "
            "from the driver version through compat/cuda_driver.toml when not reported). Minor-version "
            "compatibility does not count: use 'toolkit' for the installed toolkit",
    "toolkit": "the version of an installed CUDA toolkit (met when any installed toolkit matches)",
    "cudnn": "every cuDNN copy that gets loaded: the one a plain process finds (libcudnn.so.N through the loader) "
             "and the one each installed framework finds; when nothing would load one, any installed copy",
    "cc": "the compute capability of every visible GPU",
}
_KEY_ALIASES = {"compute_capability": "cc", "sm": "cc", "nvidia-driver": "driver", "cuda-toolkit": "toolkit"}
_FRAMEWORKS = {"torch": "torch", "pytorch": "torch", "tensorflow": "tensorflow", "tf": "tensorflow",
               "tensorflow-gpu": "tensorflow", "jax": "jax", "jaxlib": "jax", "dl4j": "dl4j",
               "deeplearning4j": "dl4j", "nd4j": "dl4j"}


@dataclass
class Requirement:
    key: str
    spec: SpecifierSet
    text: str


@dataclass
class Target:
    framework: str  # torch, tensorflow, jax, dl4j
    version: Optional[str]
    text: str


def parse_requirement(expr: str) -> Requirement:
    """'cudnn>=8.9,<10' -> Requirement; a one-line ValueError for anything else."""
    m = re.fullmatch(r"\s*([A-Za-z][A-Za-z_-]*)\s*(.*?)\s*", expr or "")
    if not m:
        raise ValueError("expected KEY followed by a version comparison, e.g. 'cudnn>=8.9' (keys: %s)" %
                         ", ".join(REQUIRE_KEYS))
    key = _KEY_ALIASES.get(m.group(1).lower(), m.group(1).lower())
    if key not in REQUIRE_KEYS:
        raise ValueError("unknown key %r; use one of: %s" % (m.group(1), ", ".join(REQUIRE_KEYS)))
    rest = m.group(2)
    if not rest or not re.match(r"(===|==|!=|~=|<=|>=|<|>)", rest):
        raise ValueError("%r needs a version comparison such as %s>=%s" % (
            expr, key, {"driver": "535", "cc": "7.0", "cudnn": "8.9"}.get(key, "11.8")))
    try:
        spec = SpecifierSet(rest.replace(" ", ""))
    except InvalidSpecifier:
        raise ValueError("%r is not a valid version comparison (write e.g. >=8.9,<10)" % rest) from None
    if not len(spec):
        raise ValueError("%r has no version comparison" % expr)
    return Requirement(key, spec, expr.strip())


def parse_target(text: str, compat: Optional[Compat] = None) -> Target:
    """'dl4j==1.0.0-beta6' -> Target; a one-line ValueError when the framework or version is unknown.

    Rules pass RuleContext.compat. The default (None) is for the CLI's up-front validation only, which may read
    the knowledge base; no rule calls this without compat."""
    if compat is None:
        from ..knowledge import load_compat

        compat = load_compat()
    m = re.fullmatch(r"\s*([A-Za-z][A-Za-z0-9_-]*)\s*(?:==\s*(\S+))?\s*", text or "")
    if not m:
        raise ValueError("expected FRAMEWORK or FRAMEWORK==VERSION (frameworks: torch, tensorflow, jax, dl4j)")
    name = _FRAMEWORKS.get(m.group(1).lower())
    if name is None:
        raise ValueError("unknown framework %r; use torch, tensorflow, jax or dl4j" % m.group(1))
    version = m.group(2)
    if version:
        if name == "dl4j":
            known = compat.dl4j_releases()
            match = next((k for k in known if k.lower() == version.lower()), None)
            if match is None:
                raise ValueError("no compat data for DL4J %s; known releases: %s" % (version, ", ".join(known)))
            version = match
        elif name == "tensorflow" and _tf_row(compat, version, "linux") is None:
            raise ValueError("no compat data for TensorFlow %s (known: 1.0-%s)" % (
                version, compat.framework_rows("tensorflow_linux")[0]["tensorflow"]))
        elif name == "torch" and not _torch_rows(compat, version):
            raise ValueError("no compat data for PyTorch %s (known: %s)" % (
                version, ", ".join(sorted({r["torch"] for r in compat.framework_rows("pytorch")}, key=ver))))
        elif ver(version.split("+")[0]) is None:
            raise ValueError("%r is not a version" % version)
    return Target(name, version, text.strip())


# --- facts a requirement is compared with -----------------------------------


def _values(facts: Facts, compat: Compat, key: str) -> Tuple[List[Tuple[str, str]], str]:
    """[(value, where)] for a key, and why it is empty when it is."""
    if key == "driver":
        v = driver_version(facts)
        return ([(v, facts.driver.version_source or "driver")] if v else []), "no NVIDIA driver version found"
    if key == "cuda":
        v = driver_cuda(facts, compat)
        return ([(v, facts.driver.cuda_version_source or "driver version via compat")] if v else []), \
            "the driver's CUDA version is unknown"
    if key == "toolkit":
        vals = [(t.version, t.path) for t in facts.toolkits if t.version and not t.dangling]
        return vals, "no CUDA toolkit with a known version found"
    if key == "cudnn":
        loaded = [(c.version, "%s (%s)" % (c.directory, who)) for who, c, _ in consumers(facts) if c and c.version]
        if loaded:
            return loaded, ""
        return [(c.version, c.directory) for c in facts.cudnn if c.version], "no cuDNN with a known version found"
    if key == "cc":
        vals = [(g.compute_capability, "GPU %d (%s)" % (g.index, g.name)) for g in gpus_with_cc(facts)]
        return vals, "no GPU compute capability known"
    return [], "unknown key"


@rule("CD910", "require-policy", "A --require policy is not met")
def requirements(facts: Facts, ctx) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    for expr in ctx.requires or []:
        try:
            req = parse_requirement(expr)
        except ValueError as exc:
            out.append(finding("CD910", ERROR, "--require %r cannot be read: %s" % (expr, exc),
                               fix="Write it as KEY<op>VERSION, e.g. --require 'cudnn>=8.9,<10'"))
            continue
        values, why = _values(facts, compat, req.key)
        if req.key == "toolkit":
            bad = [] if any(_ok(req.spec, v) for v, _ in values) else values
        else:
            bad = [(v, where) for v, where in values if not _ok(req.spec, v)]
        if not values:
            present = {"driver": has_driver(facts), "cuda": has_driver(facts), "toolkit": bool(facts.toolkits),
                       "cudnn": bool(facts.cudnn), "cc": bool(facts.gpus)}[req.key]
            out.append(finding(
                "CD910", WARNING if present else ERROR,
                ("Cannot tell whether %s holds: %s" % (req.text, why)) if present else
                "%s is not met: %s" % (req.text, why),
                detail="%s means %s." % (req.key, REQUIRE_KEYS[req.key]),
                fix=_require_fix(req, facts, compat), evidence={"requirement": req.text}))
        elif bad:
            out.append(finding(
                "CD910", ERROR, "%s is not met: %s" % (req.text, ", ".join("%s at %s" % (v, w) for v, w in bad)),
                detail="%s means %s." % (req.key, REQUIRE_KEYS[req.key]), fix=_require_fix(req, facts, compat),
                evidence={"requirement": req.text, "values": [{"value": v, "where": w} for v, w in values]}))
        else:
            out.append(finding(
                "CD910", INFO, "%s is met (%s)" % (req.text, ", ".join(v for v, _ in values)),
                evidence={"requirement": req.text, "values": [{"value": v, "where": w} for v, w in values]}))
    return out


def _ok(spec: SpecifierSet, value: str) -> bool:
    try:
        return spec.contains(Version(value), prereleases=True)
    except InvalidVersion:
        return False


def _require_fix(req: Requirement, facts: Facts, compat: Compat) -> str:
    if req.key in ("driver", "cuda"):
        return driver_upgrade_fix("a release that satisfies %s" % req.text)
    if req.key == "toolkit":
        # The newest CUDA release in compat that satisfies the requirement, preferring one this driver runs.
        wanted = [c for c in compat.cuda_releases() if _ok(req.spec, c)]
        runs = [c for c in wanted if _driver_problem(facts, compat, c) is None]
        pick = (runs or wanted or [None])[-1]
        if pick is None:
            return "No CUDA release in compat satisfies %s; check the expression" % req.text
        fix = "Install CUDA %s, which satisfies %s: %s" % (pick, req.text, toolkit_install_fix(facts, compat, pick))
        if not runs and has_driver(facts):
            floor = compat.min_driver(pick, platform_of(facts))
            fix = driver_upgrade_fix(floor.text() if floor else "one for CUDA %s" % pick) + "; then " + fix[0].lower() \
                + fix[1:]
        return fix
    if req.key == "cudnn":
        cuda = machine_cuda(facts, compat)
        wheel = cudnn_wheel_for(compat, cuda)
        cm = major_of(cuda) if cuda else None
        apt = next((r for r in compat.cudnn_channels() if r.get("channel") == "apt-v9"), None)
        ways = []
        if wheel:
            ways.append('`pip install "%s%s"`' % (wheel, req.spec))
        if apt and cm is not None and compat.has_minor_compat(cm) and any(
                _ok(req.spec, r) for r in compat.cudnn_releases(9)):  # the apt-v9 channel carries cuDNN 9 only
            ways.append("`%s`" % str(apt["install"]).replace("<cuda_major>", str(cm)))
        if not ways:
            return ("Install a cuDNN that satisfies %s built for this machine's CUDA %s (`cudnn-doctor matrix --cuda "
                    "%s` lists the builds) and make it the one programs load" % (req.text, cuda or "?",
                                                                                mm_text(cuda) or "?"))
        return "Install a cuDNN that satisfies %s (%s) and make it the one programs load" % (
            req.text, " or ".join(ways))
    return "Run on a GPU whose compute capability satisfies %s" % req.text


# --- --for FRAMEWORK[==VERSION] ---------------------------------------------


def _tf_row(compat: Compat, version: str, platform: str) -> Optional[Dict[str, Any]]:
    v = ver(version)
    if v is None:
        return None
    table = "tensorflow_windows" if platform == "windows" else "tensorflow_linux"
    rows = sorted(compat.framework_rows(table), key=lambda r: ver(r["tensorflow"]))
    for row in rows:
        rv = ver(row["tensorflow"])
        if rv.release[0] == v.release[0] and rv >= ver(mm_text(version) or version):
            return row
    return None


def _torch_rows(compat: Compat, version: str) -> List[Dict[str, Any]]:
    minor = mm_text(version.split("+")[0])
    return [r for r in compat.framework_rows("pytorch") if r["torch"] == minor]


def _cuda_of(text: str) -> str:
    """TensorFlow's table writes '9' and '10' for 9.0 and 10.0."""
    return text if "." in text else text + ".0"


def _driver_problem(facts: Facts, compat: Compat, cuda: str) -> Optional[str]:
    if not has_driver(facts):
        return "no NVIDIA driver is installed"
    ok, how, floor = compat.driver_runs_cuda(driver_version(facts) or "", cuda, platform_of(facts),
                                             facts.driver.cuda_version)
    if ok is None:
        return "cannot tell whether the driver runs CUDA %s (%s)" % (cuda, how)
    if ok is False:
        return "driver %s (CUDA %s) is too old for CUDA %s, which needs %s" % (
            driver_version(facts) or "?", driver_cuda(facts, compat) or "?", cuda, floor.text() if floor else "?")
    return None


def _gpu_problems(facts: Facts, compat: Compat, cuda: str, min_cc: Optional[str] = None,
                  arch: Optional[Dict[str, Any]] = None) -> List[str]:
    problems = []
    floor = compat.cuda_min_cc(cuda)
    for gpu in gpus_with_cc(facts):
        cc = gpu.compute_capability
        if arch is not None and not compat.sass_runs(arch["arch"], arch.get("ptx"), cc):
            problems.append("%s has no kernels in this build (built for %s)" % (gpu_label(gpu), ", ".join(arch["arch"])))
            continue
        if floor and mm(cc) < mm(floor.low):
            problems.append("%s is below CUDA %s's minimum %s" % (gpu_label(gpu), major_of(cuda), floor.low))
        elif min_cc and mm(cc) < mm(min_cc):
            problems.append("%s is below the build's minimum compute capability %s" % (gpu_label(gpu), min_cc))
        first = compat.first_cuda_for_cc(cc)
        if arch is None and first and mm(first) and mm(cuda) and mm(first) > mm(cuda):
            problems.append("%s needs CUDA %s or newer" % (gpu_label(gpu), first))
    return problems


def _arch_blocks_driver(facts: Facts, compat: Compat, cuda: str) -> str:
    """The note when the driver CUDA `cuda` needs is newer than the GPU's last driver branch (upgrading cannot
    help); empty otherwise."""
    if not _driver_problem(facts, compat, cuda) or not has_driver(facts):
        return ""
    return arch_driver_limit(facts, compat, floor_branch(compat.min_driver(cuda, platform_of(facts))))


def _with_driver_step(facts: Facts, compat: Compat, cuda: str, fix: str, floor_text: Optional[str] = None) -> str:
    """`fix`, preceded by the driver upgrade CUDA `cuda` needs when the driver is too old, unless no driver that new
    exists for the GPU: then say so instead of recommending one."""
    if not _driver_problem(facts, compat, cuda) or not has_driver(facts):
        return fix
    blocked = _arch_blocks_driver(facts, compat, cuda)
    if blocked:
        return ("This build cannot run on this GPU: no driver for CUDA %s exists for it.%s Use a release built "
                "for a CUDA the installed driver runs (`cudnn-doctor matrix --driver %s`), or a newer GPU." % (
                    cuda, blocked, driver_version(facts) or "<driver version>"))
    floor = compat.min_driver(cuda, platform_of(facts))
    return driver_upgrade_fix(floor_text or (floor.text() if floor else "one for CUDA %s" % cuda)) + "; then " + fix


def _toolkit_problem(facts: Facts, compat: Compat, cuda: str) -> Optional[str]:
    want = mm(cuda)
    for tk in facts.toolkits:
        have = mm(tk.version)
        if tk.dangling or have is None or want is None:
            continue
        if have == want or (compat.has_minor_compat(want[0]) and have[0] == want[0] and have >= want):
            return None
    found = ", ".join("%s (%s)" % (t.version, t.path) for t in facts.toolkits if t.version) or "none"
    return "no CUDA %s toolkit is installed (found: %s)" % (cuda, found)


def _cudnn_problem(facts: Facts, compat: Compat, cudnn: str, cuda: str) -> Optional[str]:
    for copy in facts.cudnn:
        if ver(copy.version) is None or ver(cudnn) is None or cudnn_older(copy.version, cudnn)[0]:
            continue
        ok, _ = compat.cudnn_cuda_verdict(copy.version, copy.cuda_version, cuda)
        if ok is not False:
            return None
    found = ", ".join("%s for CUDA %s at %s" % (c.version, c.cuda_version or "?", c.directory)
                      for c in facts.cudnn if c.version) or "none"
    return "no cuDNN %s (or newer %s.x) built for CUDA %s is installed (found: %s)" % (
        cudnn, cudnn.split(".")[0], cuda, found)


def _newest_cudnn_release(compat: Compat, cudnn: str, cuda: str) -> Optional[str]:
    """The newest release of a cuDNN major.minor with a build for this CUDA, for the download hint."""
    want = mm(cudnn) or (major_of(cudnn), 0)
    best = None
    for b in compat.cudnn_builds_for_cuda(cuda):
        last = release3(b.last)
        if (last.release[0], last.release[1]) == tuple(want) or (len(cudnn.split(".")) == 1 and last.release[0]
                                                                  == want[0]):
            if best is None or last > best:
                best = last
    return str(best) if best else None


def _judge_target(facts: Facts, ctx) -> List[Finding]:
    compat = compat_of(ctx)
    target = parse_target(ctx.target, compat)
    judge = {"dl4j": _judge_dl4j, "tensorflow": _judge_tf, "torch": _judge_torch, "jax": _judge_jax}[target.framework]
    return judge(facts, compat, target)


@rule("CD920", "for-target", "The machine does not fit the --for framework build")
def for_target(facts: Facts, ctx) -> List[Finding]:
    if not ctx.target:
        return []
    try:
        return _judge_target(facts, ctx)
    except ValueError as exc:
        return [finding("CD920", ERROR, "--for %r cannot be judged: %s" % (ctx.target, exc),
                        fix="Use torch, tensorflow, jax or dl4j, optionally ==VERSION (see `cudnn-doctor matrix "
                            "--for dl4j`)")]


def _verdict(target_label: str, options: List[Tuple[str, List[str], str]], source: str,
             catalogue: Sequence[str], fits_fix: str = "") -> List[Finding]:
    """options: (label, problems, fix). INFO when one fits, ERROR (WARNING when only unknowns) otherwise."""
    fitting = [o for o in options if not o[1]]
    evidence = {"options": [{"option": label, "problems": problems} for label, problems, _ in options],
                "source": source}
    if fitting:
        label, _, fix = fitting[0]
        return [finding("CD920", INFO, "This machine fits %s through %s" % (target_label, label),
                        detail="Checked driver, GPU, toolkit and cuDNN against %s." % source,
                        fix=fix or fits_fix, evidence=evidence, catalogue=catalogue)]
    only_unknown = all(all(p.startswith("cannot tell") for p in problems) for _, problems, _ in options)
    best = min(options, key=lambda o: (len(o[1]), any("driver" in p for p in o[1])))
    reasons = "; ".join("%s: %s" % (label, ", ".join(problems)) for label, problems, _ in options)
    return [finding(
        "CD920", WARNING if only_unknown else ERROR, "This machine does not fit %s" % target_label,
        detail="%s [%s]." % (reasons, source), fix=best[2], evidence=evidence, catalogue=catalogue)]


def _judge_dl4j(facts: Facts, compat: Compat, target: Target) -> List[Finding]:
    release = target.version or compat.dl4j_releases()[0]
    # Newest CUDA first, so the suggested pair is the most current one when several fit equally.
    rows = sorted((r for r in compat.framework_rows("dl4j") if r["dl4j"] == release), key=lambda r: ver(r["cuda"]),
                  reverse=True)
    options = []
    for row in rows:
        cuda, cudnn = row["cuda"], row["cudnn"]
        problems = [p for p in [_driver_problem(facts, compat, cuda)] if p]
        problems += _gpu_problems(facts, compat, cuda)
        problems += [p for p in (_toolkit_problem(facts, compat, cuda), _cudnn_problem(facts, compat, cudnn, cuda))
                     if p]
        newest = _newest_cudnn_release(compat, cudnn, cuda)
        steps = []
        driver_issue = _driver_problem(facts, compat, cuda)
        if driver_issue:
            blocked = _arch_blocks_driver(facts, compat, cuda)
            if blocked:
                problems.append(blocked.strip())
            floor = compat.min_driver(cuda, platform_of(facts))
            steps.append(_with_driver_step(facts, compat, cuda, "") if blocked else
                         driver_upgrade_fix(floor.text() if floor else "one for CUDA %s" % cuda))
        if _toolkit_problem(facts, compat, cuda):
            steps.append("install the CUDA %s toolkit (https://developer.nvidia.com/cuda-toolkit-archive; apt: "
                         "%s)" % (cuda, toolkit_install_fix(facts, compat, cuda)))
        if _cudnn_problem(facts, compat, cudnn, cuda):
            archive = compat.cudnn_archive_name(newest, cuda, platform_of(facts),
                                                facts.host.machine or "x86_64") if newest else None
            steps.append("install cuDNN %s for CUDA %s%s" % (newest or cudnn, cuda,
                                                            (" (%s, then `sudo cp -P` its files into /usr/local/"
                                                             "cuda-%s)" % (archive, cuda)) if archive else ""))
        steps.append("use the %s backend (and deeplearning4j-cuda-%s for cuDNN) at version %s" % (
            row["backend"], cuda, release))
        if row.get("redist"):
            steps.append("or add %s, which bundles CUDA and cuDNN, instead of installing them" % row["redist"])
        options.append(("CUDA %s + cuDNN %s (%s)" % (cuda, cudnn, row["backend"]), problems, "; ".join(steps)))
    if not options:
        return [finding("CD920", WARNING, "No CUDA/cuDNN pairs known for DL4J %s" % release,
                        fix="See `cudnn-doctor matrix --for dl4j` for the releases compat knows.")]
    source = compat.framework_table("dl4j").get("source", "")
    blocked = [(row, _gpu_problems(facts, compat, row["cuda"])) for row in rows]
    if gpus_with_cc(facts) and all(problems for _, problems in blocked):
        # No backend of this release can drive the GPU: installing CUDA/cuDNN cannot help.
        newer = sorted((r for r in compat.framework_rows("dl4j") if not _gpu_problems(facts, compat, r["cuda"])),
                       key=lambda r: (dl4j_key(r["dl4j"]), ver(r["cuda"])))
        newest = max(compat.framework_rows("dl4j"), key=lambda r: ver(r["cuda"]))
        fix = ("Use DL4J %s (CUDA %s backend %s), whose CUDA supports this GPU." % (
            newer[-1]["dl4j"], newer[-1]["cuda"], newer[-1]["backend"]) if newer else
               "No DL4J release in compat has a CUDA backend for this GPU (newest backend: CUDA %s in DL4J %s); "
               "run DL4J on a GPU that CUDA %s supports, or on CPU with the nd4j-native backend." % (
                   newest["cuda"], newest["dl4j"], newest["cuda"]))
        return [finding(
            "CD920", ERROR, "This machine does not fit DL4J %s: its GPU is not supported by any of the release's "
                            "CUDA backends" % release,
            detail="; ".join("CUDA %s: %s" % (row["cuda"], ", ".join(problems)) for row, problems in blocked) +
                   " [%s]." % source,
            fix=fix, evidence={"options": [{"cuda": r["cuda"], "cudnn": r["cudnn"], "problems": p}
                                           for r, p in blocked]}, catalogue=["G7"])]
    return _verdict("DL4J %s" % release + ("" if target.version else " (newest DL4J in compat)"), options, source,
                    ["G7"])


def _judge_tf(facts: Facts, compat: Compat, target: Target) -> List[Finding]:
    installed = next((fw for fw in facts.python.frameworks if framework_kind(fw) == "tensorflow"), None)
    version = target.version or (installed.version.split("+")[0] if installed else
                                 compat.framework_rows("tensorflow_linux")[0]["tensorflow"])
    platform = platform_of(facts)
    last_windows = ver(compat.framework_table("tensorflow_windows").get("last_native_gpu"))
    if platform == "windows" and last_windows is not None and ver(version) > last_windows:
        return [finding("CD920", ERROR, "TensorFlow %s has no GPU support on native Windows" % version,
                        fix='Use WSL2 with `pip install "tensorflow[and-cuda]==%s"`, or TensorFlow %s (`pip install '
                            '"tensorflow==%s.*"`)' % (version, mm_text(str(last_windows)), mm_text(str(last_windows))),
                        catalogue=["G2"])]
    row = _tf_row(compat, version, platform)
    if row is None:
        return [finding("CD920", WARNING, "No compat data for TensorFlow %s" % version,
                        fix="See `cudnn-doctor matrix --for tensorflow`.")]
    cuda, cudnn = _cuda_of(row["cuda"]), row["cudnn"]
    # Without the table's answer, assume no [and-cuda] wheels: the toolkit and cuDNN are then checked too.
    wheels_from = ver(compat.framework_table("tensorflow_linux").get("pip_wheels_from"))
    pip_wheels = wheels_from is not None and ver(version) >= wheels_from
    problems = [p for p in [_driver_problem(facts, compat, cuda)] if p]
    problems += [p for p in _gpu_problems(facts, compat, cuda,
                                          compat.framework_table("tensorflow_pip").get("min_cc"))
                 if "needs CUDA" not in p]
    problems += [p for p in gpu_cudnn_problems(facts, compat, cudnn, cuda) if p not in problems]
    blocked = _arch_blocks_driver(facts, compat, cuda)
    if blocked:
        problems.append(blocked.strip())
    if pip_wheels and platform != "windows":
        fix = 'pip install "tensorflow[and-cuda]==%s"' % version
    else:
        problems += [p for p in (_toolkit_problem(facts, compat, cuda), _cudnn_problem(facts, compat, cudnn, cuda))
                     if p]
        fix = "install CUDA %s and cuDNN %s for CUDA %s (TensorFlow's tested build), then pip install " \
              "tensorflow==%s" % (cuda, cudnn, cuda, version)
    fix = _with_driver_step(facts, compat, cuda, fix)
    table = "tensorflow_windows" if platform == "windows" else "tensorflow_linux"
    return _verdict("TensorFlow %s (CUDA %s, cuDNN %s)" % (version, cuda, cudnn),
                    [("its tested build (CUDA %s, cuDNN %s)" % (cuda, cudnn), problems, fix)],
                    compat.framework_table(table).get("source", ""), ["C1", "E1"])


def _judge_torch(facts: Facts, compat: Compat, target: Target) -> List[Finding]:
    installed = next((fw for fw in facts.python.frameworks if framework_kind(fw) == "torch"), None)
    version = target.version or (installed.version if installed else None)
    rows = _torch_rows(compat, version) if version else []
    if not rows:
        newest = max(compat.framework_rows("pytorch"), key=lambda r: ver(r["torch"]))["torch"]
        version, rows = newest, _torch_rows(compat, newest)
    tag = version.split("+", 1)[1] if "+" in version else ""
    if tag.startswith("cu"):
        wanted = "%s.%s" % (tag[2:-1], tag[-1])
        rows = [r for r in rows if r["cuda"] == wanted] or rows
    options = []
    # Newest CUDA build first: pip users get the newest that fits.
    for row in sorted(rows, key=lambda r: ver(r["cuda"]), reverse=True):
        cuda = row["cuda"]
        arch = compat.pytorch_arch(version.split("+")[0] if version.count(".") >= 2 else row["torch"] + ".0", cuda)
        problems = [p for p in [_driver_problem(facts, compat, cuda)] if p]
        problems += _gpu_problems(facts, compat, cuda, arch=arch)
        problems += [p for p in gpu_cudnn_problems(facts, compat, row.get("cudnn"), cuda) if p not in problems]
        blocked = _arch_blocks_driver(facts, compat, cuda)
        if blocked:
            problems.append(blocked.strip())
        fix = _with_driver_step(facts, compat, cuda, torch_install(version, cuda))
        if blocked or any("compute capability" in p and "below" in p or "no kernels" in p for p in problems):
            # The GPU itself rules this build out: name the newest PyTorch build that still runs here.
            other = best_torch_variant(facts, compat, None)
            if other is not None:
                fix = ("This build cannot run on this GPU; the newest PyTorch build that does (with this driver) is "
                       "%s for CUDA %s: %s" % (other["torch"], other["cuda"],
                                               torch_install(other["torch"], other["cuda"])))
        options.append(("the CUDA %s build (bundled cuDNN %s)" % (cuda, row["cudnn"]), problems, fix))
    return _verdict("PyTorch %s" % version.split("+")[0], options,
                    compat.framework_table("pytorch").get("source", ""), ["C1", "B1"])


def _judge_jax(facts: Facts, compat: Compat, target: Target) -> List[Finding]:
    options = []
    bad = [c for c in facts.cudnn if any(b.get("severity") == "error_if_jax" for b in compat.known_bad("cudnn", c.version))]
    for row in compat.framework_rows("jax"):
        problems = []
        if platform_of(facts) == "windows":
            problems.append("JAX has no native-Windows GPU build (use WSL2)")
        if not has_driver(facts):
            problems.append("no NVIDIA driver is installed")
        elif driver_version(facts) and ver(driver_version(facts)) < ver(row["driver_linux"]):
            problems.append("driver %s is older than the R%s branch JAX %s needs" % (
                driver_version(facts), row["driver_linux"], row["extra"]))
        elif not driver_version(facts):
            problems.append("cannot tell the driver version")
        problems += _gpu_problems(facts, compat, _cuda_of(row["built_cuda"].split(".")[0]), row["min_cc"])
        problems = [p for p in problems if "needs CUDA" not in p]
        problems += ["cuDNN %s at %s is refused by JAX (known-bad)" % (c.version, c.directory) for c in bad]
        fix = 'pip install -U "jax[%s]"' % row["extra"]
        if any("driver" in p for p in problems):
            limit = arch_driver_limit(facts, compat, str(row["driver_linux"]).split(".")[0])
            fix = ("No driver of the R%s branch exists for this GPU.%s JAX's current CUDA builds cannot run "
                   "here." % (row["driver_linux"], limit) if limit else
                   driver_upgrade_fix("the R%s branch" % row["driver_linux"]) + "; then " + fix)
        options.append(("jax[%s] (CUDA %s, cuDNN %s)" % (row["extra"], row["cuda"], row["cudnn"]), problems, fix))
    note = "" if not target.version else " (compat holds the current JAX requirements only)"
    return _verdict("JAX%s%s" % ((" " + target.version) if target.version else "", note), options,
                    compat.framework_table("jax").get("source", ""), ["C1", "E1"])


# --- conda --------------------------------------------------------------------


@rule("CD901", "conda-cudnn-mismatch", "A conda environment's cuDNN does not fit its frameworks")
def conda(facts: Facts, ctx) -> List[Finding]:
    out: List[Finding] = []
    pkgs = facts.python.conda_packages
    for cud in [p for p in pkgs if p.get("name") in ("cudnn", "libcudnn")]:
        prefix = cud.get("prefix", "")
        needs = []
        for p in pkgs:
            if p.get("prefix") != prefix or p.get("name") in ("cudnn", "libcudnn"):
                continue
            m = re.search(r"cudnn(\d+(?:\.\d+)+)", p.get("build", ""))
            # conda-meta "depends": 'cudnn >=9.1.1.17,<10.0a0' names the floor the package was built against.
            dep = re.search(r"(?:lib)?cudnn\s*>=\s*(\d+(?:\.\d+)+)", p.get("cudnn_depends", ""))
            if m:
                needs.append(("%s %s (conda build %s)" % (p["name"], p["version"], p["build"]), m.group(1)))
            elif dep:
                needs.append(("%s %s (depends %s)" % (p["name"], p["version"], p["cudnn_depends"]),
                              ".".join(dep.group(1).split(".")[:2])))
        for fw in facts.python.frameworks:
            if prefix and fw.location.startswith(prefix.rstrip("/") + "/") and fw.cudnn_version:
                needs.append(("%s %s" % (fw.name, fw.version), fw.cudnn_version))
        for who, compiled in needs:
            want = ver(compiled)
            if ver(cud.get("version")) is None or want is None or not cudnn_older(cud.get("version"), compiled)[0]:
                continue
            out.append(finding(
                "CD901", ERROR, "The conda environment %s has cuDNN %s, but %s needs cuDNN %s" % (
                    prefix, cud.get("version"), who, compiled),
                detail="The environment resolved a cuDNN older than (or of another major than) the one the "
                       "framework was built with: 'Outdated cuDNN installation found' / 'Loaded runtime CuDNN "
                       "library: X but source was compiled with: Y'.",
                fix='conda install -p %s -c conda-forge "cudnn>=%s,<%d"   (and avoid mixing pip nvidia-* wheels '
                    'into conda environments)' % (prefix, compiled, want.release[0] + 1),
                evidence={"prefix": prefix, "cudnn": cud.get("version"), "consumer": who, "needs": compiled},
                catalogue=["I1"]))
    return out
