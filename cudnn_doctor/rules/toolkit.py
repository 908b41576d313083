"""CD3xx: CUDA toolkits and framework CUDA builds against the driver; forward-compat and stub libcuda."""
from __future__ import annotations

import os
import re
from typing import Iterator, List, Optional, Tuple

from ..knowledge import Compat, DriverFloor
from ..versions import mm
from ..model import Facts, Finding, GpuFacts, ToolkitFacts
from ..remedies import loader_dir_fix
from ..remedies.loader import off_ld_library_path_fix
from ..remedies.toolkit import (driver_for_framework_fix, driver_for_toolkit_fix, drop_compat_libcuda_fix,
                                drop_compat_libcuda_on_804_fix, drop_stub_libcuda_fix, exact_driver_for_ptx_fix,
                                reinstall_toolkit_fix, relink_toolkit_fix, tensorflow_cuda_runtime_fix)
from . import LINUX, RuleContext, rule
from ..queries import (best_torch_variant, driver_cuda, driver_version, framework_kind, framework_label, has_driver,
                       ld_entry_for, platform_of, visible_gpus)
from .common import ERROR, INFO, WARNING, compat_of, finding


def _judge(facts: Facts, compat: Compat, cuda: str) -> Tuple[Optional[bool], str, Optional[DriverFloor]]:
    return compat.driver_runs_cuda(driver_version(facts) or "", cuda, platform_of(facts), facts.driver.cuda_version)


def _toolkits_vs_driver(facts: Facts, compat: Compat, with_pip: bool = True
                        ) -> Iterator[Tuple[ToolkitFacts, str, Optional[bool], str, Optional[DriverFloor]]]:
    """(toolkit, its version, verdict, how, floor) for every toolkit with a known version (CD301 and CD305 judge the
    same)."""
    if not has_driver(facts):
        return
    for tk in facts.toolkits:
        if not tk.version or tk.dangling or (tk.kind == "pip" and not with_pip):
            continue
        ok, how, floor = _judge(facts, compat, tk.version)
        yield tk, tk.version, ok, how, floor


def _serves(compat: Compat, have: Optional[Tuple[int, int]], want: Optional[Tuple[int, int]]) -> bool:
    """Whether a toolkit of CUDA `have` serves a build for CUDA `want`: the same minor, or the same major where
    minor-version compatibility holds."""
    return have is not None and (have == want or (want is not None and compat.has_minor_compat(want[0])
                                                  and have[0] == want[0]))


@rule("CD301", "driver-too-old-for-toolkit", "Driver too old for an installed CUDA toolkit", section="toolkits")
def toolkit_vs_driver(facts: Facts, ctx: RuleContext) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    dcuda = driver_cuda(facts, compat)
    for tk, _, ok, how, floor in _toolkits_vs_driver(facts, compat):
        if ok is False:
            out.append(finding(
                ERROR, "Driver %s (CUDA %s) is too old for CUDA %s at %s" % (
                    driver_version(facts) or "?", dcuda or "?", tk.version, tk.path),
                detail="Programs built with this toolkit fail with 'CUDA driver version is insufficient for CUDA "
                       "runtime version' (error 35). CUDA %s needs a driver %s [%s, %s]." % (
                           tk.version, floor.text() if floor else "?", floor.source if floor else "", floor.status
                           if floor else ""),
                remedy=driver_for_toolkit_fix(facts, compat, floor, dcuda),
                evidence={"driver": driver_version(facts), "driver_cuda": dcuda, "toolkit": tk.version,
                          "path": tk.path, "needs": floor.text() if floor else None},
                catalogue=["C1"]))
        elif ok is None and driver_version(facts):
            out.append(finding(
                INFO, "Cannot tell whether driver %s runs CUDA %s" % (driver_version(facts), tk.version),
                detail=how, evidence={"toolkit": tk.version, "path": tk.path}, catalogue=["C1"]))
    return out


@rule("CD305", "toolkit-newer-than-driver", "Toolkit runs only through minor-version compatibility", section="toolkits")
def toolkit_minor_compat(facts: Facts, ctx: RuleContext) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    dcuda = driver_cuda(facts, compat)
    for tk, version, ok, how, floor in _toolkits_vs_driver(facts, compat, with_pip=False):
        if not ok or how == "exact":
            continue
        exact = compat.min_driver(version, platform_of(facts)) or floor
        out.append(finding(
            WARNING, "CUDA %s at %s runs on driver %s only through minor-version compatibility" % (
                tk.version, tk.path, driver_version(facts)),
            detail="Applications work, but PTX this toolkit generates cannot be JIT-compiled by the driver "
                   "('the provided PTX was compiled with an unsupported toolchain', CUDA_ERROR_UNSUPPORTED_PTX_"
                   "VERSION), which breaks JAX/Triton/custom kernels [%s]." % (floor.source if floor else ""),
            remedy=exact_driver_for_ptx_fix(exact, platform_of(facts)),
            evidence={"driver": driver_version(facts), "driver_cuda": dcuda, "toolkit": tk.version},
            catalogue=["C4"]))
    return out


@rule("CD302", "driver-too-old-for-framework", "Driver too old for a framework's CUDA build", section="toolkits")
def framework_vs_driver(facts: Facts, ctx: RuleContext) -> List[Finding]:
    if not has_driver(facts):
        return []
    compat = compat_of(ctx)
    out: List[Finding] = []
    dcuda = driver_cuda(facts, compat)
    for fw in facts.python.frameworks:
        if not fw.cuda_build or not fw.cuda_version:
            continue
        ok, how, floor = _judge(facts, compat, fw.cuda_version)
        if ok is not False:
            continue
        better = best_torch_variant(facts, compat, fw.version, site=fw.location) if framework_kind(fw) == "torch" else None
        out.append(finding(
            ERROR, "%s is built for CUDA %s; driver %s supports CUDA %s" % (
                framework_label(facts, fw), fw.cuda_version, driver_version(facts) or "?", dcuda or "?"),
            detail="It fails at start-up with 'CUDA driver version is insufficient' / 'The NVIDIA driver on your "
                   "system is too old'. CUDA %s needs a driver %s [%s]." % (
                       fw.cuda_version, floor.text() if floor else "?", floor.source if floor else ""),
            remedy=driver_for_framework_fix(facts, compat, floor, fw.version, better["cuda"] if better else None),
            evidence={"framework": fw.name, "version": fw.version, "framework_cuda": fw.cuda_version,
                               "driver": driver_version(facts), "driver_cuda": dcuda},
            catalogue=["C1"]))
    return out


def _compat_libcuda(facts: Facts) -> Optional[str]:
    for name in ("libcuda.so.1", "libcuda.so"):
        res = facts.loader.resolved.get(name)
        for path in filter(None, (res.path if res else None, res.realpath if res else None)):
            if "/compat/" in path:
                return path
    if facts.driver.libcuda_path and "/compat/" in facts.driver.libcuda_path:
        return facts.driver.libcuda_path
    return None


@rule("CD303", "forward-compat-unsupported-gpu", "cuda-compat libcuda on a GPU without forward compatibility",
      section="toolkits")
def forward_compat(facts: Facts, ctx: RuleContext) -> List[Finding]:
    path = _compat_libcuda(facts)
    if not path:
        return []
    compat = compat_of(ctx)
    fc = compat.forward_compat()
    entry = ld_entry_for(facts, path)
    out: List[Finding] = []
    gpus: List[Optional[GpuFacts]] = list(visible_gpus(facts)) or [None]
    for gpu in gpus:
        verdict = compat.forward_compat_gpu(gpu.name if gpu else None)
        label = "GPU %d (%s)" % (gpu.index, gpu.name) if gpu else "this GPU"
        evidence = {"libcuda": path, "gpu": gpu.name if gpu else None,
                    "kernel_module": facts.driver.kernel_module_version}
        if verdict is False:
            out.append(finding(
                ERROR, "A forward-compatibility libcuda (%s) is loaded, but %s does not support forward "
                                "compatibility" % (path, label),
                detail="CUDA fails with error 804 'forward compatibility was attempted on non supported HW'. Forward "
                       "compatibility works only on %s [%s]." % (", ".join(fc.get("supported_gpus", [])),
                                                                 fc.get("source")),
                remedy=drop_compat_libcuda_fix(facts, entry, os.path.dirname(path)),
                evidence=evidence, catalogue=["C2"]))
        elif verdict is None:
            out.append(finding(
                WARNING, "A forward-compatibility libcuda (%s) is loaded; cannot tell whether %s supports "
                                  "it" % (path, label),
                detail="Forward compatibility works only on %s; other GPUs fail with error 804 [%s]." % (
                    ", ".join(fc.get("supported_gpus", [])), fc.get("source")),
                remedy=drop_compat_libcuda_on_804_fix(facts, entry, os.path.dirname(path)),
                evidence=evidence, catalogue=["C2"]))
        else:
            out.append(finding(
                INFO, "CUDA forward compatibility is in use (%s) on %s, which supports it" % (path, label),
                detail="The cuda-compat libcuda lets a newer CUDA run on the older kernel driver %s." % (
                    facts.driver.kernel_module_version or "?"), evidence=evidence, catalogue=["C2"]))
    return out


@rule("CD304", "stub-libcuda", "The toolkit's stub libcuda is on the search path", platforms=LINUX, section="toolkits")
def stub(facts: Facts, ctx: RuleContext) -> List[Finding]:
    out: List[Finding] = []
    for name in ("libcuda.so.1", "libcuda.so"):
        res = facts.loader.resolved.get(name)
        if res and res.path and "/stubs/" in "/%s/" % os.path.dirname(res.path).strip("/") + "/":
            entry = ld_entry_for(facts, res.path)
            out.append(finding(
                ERROR, "%s resolves to the link-time stub %s" % (name, res.path),
                detail="The stub from the toolkit's stubs/ folder is for linking only; at run time CUDA fails with "
                       "CUDA_ERROR_STUB_LIBRARY (34) or a misleading 'driver version is insufficient'.",
                remedy=drop_stub_libcuda_fix(facts, entry, os.path.dirname(res.path)),
                evidence={"soname": name, "path": res.path, "via": res.via}, catalogue=["C3"]))
            return out
    stubs = [d for d in facts.loader.ld_library_path if os.path.basename(d.rstrip("/")) == "stubs"]
    if stubs:
        out.append(finding(
            WARNING, "LD_LIBRARY_PATH contains the CUDA stubs folder %s" % stubs[0],
            detail="Programs that ask for libcuda.so (cuDNN 8 does) get the link-time stub instead of the driver.",
            remedy=off_ld_library_path_fix(facts, stubs), evidence={"LD_LIBRARY_PATH": facts.loader.ld_library_path},
            catalogue=["C3"]))
    return out


@rule("CD306", "cuda-runtime-missing", "CUDA runtime a consumer needs is not on the search path", platforms=LINUX,
      section="toolkits")
def runtime_missing(facts: Facts, ctx: RuleContext) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    for tk in facts.toolkits:
        # Judge each toolkit by the soname its own runtime file carries (libcudart.so.11.0, .so.12, ...).
        name = tk.cudart_soname
        res = facts.loader.resolved.get(name) if name else None
        if tk.dangling or tk.kind == "pip" or res is None or res.path or tk.cudart_path is None:
            continue
        lib = os.path.dirname(tk.cudart_path)
        out.append(finding(
            WARNING, "CUDA %s is installed at %s but %s is not on the loader's search path" % (
                tk.version or "", tk.path, name),
            detail="Programs linked against the toolkit's runtime fail with '%s: cannot open shared object file'." %
                   name,
            remedy=loader_dir_fix(facts, lib),
            evidence={"soname": name, "toolkit": tk.path, "runtime": tk.cudart_path}, catalogue=["C5", "F1"]))
    for fw in facts.python.frameworks:
        # TensorFlow before the [and-cuda] wheels (and any build without nvidia-* requirements) uses the system CUDA.
        if framework_kind(fw) != "tensorflow" or not fw.cuda_build or not fw.cuda_version:
            continue
        if any(r.lower().startswith("nvidia-cuda-runtime") for r in fw.requires):
            continue
        want = mm(fw.cuda_version)
        fits = [t for t in facts.toolkits if _serves(compat, mm(t.version), want)]
        if fits:
            continue
        out.append(finding(
            ERROR, "%s needs the CUDA %s runtime, which is not installed" % (
                framework_label(facts, fw), fw.cuda_version),
            detail="It will log 'Could not load dynamic library libcudart.so...' and 'Cannot dlopen some GPU "
                   "libraries', then run on CPU. Installed toolkits: %s." % (
                       ", ".join("%s (%s)" % (t.version, t.path) for t in facts.toolkits) or "none"),
            remedy=tensorflow_cuda_runtime_fix(facts, compat, fw),
            evidence={"framework": fw.name, "cuda": fw.cuda_version}, catalogue=["C5", "G3"]))
    return out


@rule("CD307", "toolkit-link-dangling", "A CUDA toolkit link points nowhere", platforms=LINUX, section="toolkits")
def dangling_toolkit(facts: Facts, ctx: RuleContext) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    alive = [t for t in facts.toolkits if not t.dangling and t.realpath and t.kind != "pip"]
    for tk in facts.toolkits:
        if not tk.dangling:
            continue
        target = alive[0].realpath if alive else None
        # The release the link pointed to (/usr/local/cuda-12.6), else the one the driver runs.
        named = re.search(r"cuda-(\d+\.\d+)$", (tk.realpath or "").rstrip("/"))
        out.append(finding(
            ERROR, "%s points to %s, which does not exist" % (tk.path, tk.realpath or "?"),
            detail="Builds and programs that use this path find no CUDA (the toolkit it pointed to was removed).",
            remedy=relink_toolkit_fix(target, tk.path) if target else
            reinstall_toolkit_fix(facts, compat, named.group(1) if named else None, tk.path),
            evidence={"path": tk.path, "link_chain": tk.link_chain}, catalogue=["C5"]))
    return out


@rule("CD308", "toolkit-version-unknown", "CUDA toolkit version could not be read", section="toolkits")
def toolkit_unknown(facts: Facts, ctx: RuleContext) -> List[Finding]:
    return [finding(
        INFO, "Cannot tell the version of the CUDA toolkit at %s" % tk.path,
        detail="No version.json/version.txt, nvcc, cuda.h or versioned libcudart answered%s; checks against the "
               "driver skip it." % ((": %s" % tk.error) if tk.error else ""),
        evidence={"path": tk.path, "error": tk.error}, catalogue=["C1"])
        for tk in facts.toolkits if not tk.version and not tk.dangling]
