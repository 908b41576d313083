"""Whether one build runs on a machine: its CUDA on the driver, the driver on each GPU, and code for each GPU
(a cubin of its family, or PTX the driver can JIT-compile)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from ..knowledge import Build, Compat
from ..readers.fatbin import GpuCode, runs_on
from ..versions import major_of, mm
from .machine import Gpu, Machine


@dataclass
class Verdict:
    build: Build
    ok: Optional[bool]  # None: the knowledge cannot tell (no GPU code known for the build)
    driver_how: str = ""  # "exact", "minor-version compatibility"
    gpus: List[Tuple[Gpu, str]] = field(default_factory=list)  # how each GPU runs it: "sm_86", "compute_90 (JIT)"
    why: List[str] = field(default_factory=list)  # what stops it, one line each


def gpu_driver_floor(compat: Compat, cc: str) -> Tuple[Optional[str], Optional[str], str]:
    """(the first CUDA release with code for this GPU, the first driver branch that drives it, the last branch
    that does or ''). The branch is the architecture's own where the knowledge lists it, else the driver the
    first CUDA release that knows the GPU shipped with."""
    arch = compat.arch_for_cc(cc)
    if arch is None:
        return None, None, ""
    first = arch.first_cuda_for(cc)
    listed = getattr(arch, "first_driver_for", None)  # the per-architecture floor, where the knowledge has it
    branch = listed(cc) if listed is not None else ""
    if not branch:
        floor = compat.min_driver(first) if first else None
        found = major_of(floor.branch or floor.version) if floor else None
        branch = str(found) if found is not None else ""
    return first, branch or None, arch.last_driver_branch


def driver_cuda(compat: Compat, machine: Machine) -> Optional[str]:
    """The newest CUDA the machine's driver runs by itself."""
    if machine.driver_cuda:
        return machine.driver_cuda
    return compat.max_cuda_for_driver(machine.driver, machine.platform) if machine.driver else None


def _driver_line(compat: Compat, machine: Machine) -> str:
    own = driver_cuda(compat, machine)
    return "driver %s runs CUDA %s" % (machine.driver, own) if own else "driver %s" % machine.driver


def gpu_not_driven(compat: Compat, machine: Machine, gpu: Gpu) -> Optional[str]:
    """Why the driver cannot drive this GPU at all (too old for its architecture, or past its last branch)."""
    if not machine.driver or not gpu.cc:
        return None
    first, branch, last = gpu_driver_floor(compat, gpu.cc)
    have = major_of(machine.driver)
    if have is None:
        return None
    if branch and have < int(branch):
        return "%s (compute capability %s) needs CUDA %s builds; %s: upgrade the driver to R%s or newer" % (
            gpu.name, gpu.cc, first, _driver_line(compat, machine), branch)
    if last and have > int(last):
        return "%s (compute capability %s) is not driven by driver branches after R%s; driver %s is R%d" % (
            gpu.name, gpu.cc, last, machine.driver, have)
    return None


def judge(compat: Compat, build: Build, machine: Machine) -> Verdict:
    out = Verdict(build, True)
    if not build.code_known:
        out.ok, out.why = None, ["the knowledge does not hold the GPU code of this build"]
        return out
    runs, how = _driver_runs(compat, build, machine)
    out.driver_how = how
    if runs is not True:
        out.ok = runs if runs is False else None
        out.why.append("driver %s cannot run CUDA %s builds (%s)" % (machine.driver, build.cuda, how)
                       if runs is False else "cannot tell whether driver %s runs CUDA %s" % (machine.driver, build.cuda))
    for gpu in machine.gpus:
        stop = gpu_not_driven(compat, machine, gpu)
        how_gpu, why = _gpu_runs(compat, build, machine, gpu, how)
        out.gpus.append((gpu, how_gpu or "no code"))
        out.why.extend(filter(None, (stop, why)))
        if stop or (why and gpu.cc):
            out.ok = False
        elif why and out.ok:  # an unknown capability: the knowledge cannot prove the build runs there
            out.ok = None
    return out


def code_for(build: Build, cc: str) -> Optional[str]:
    """How a GPU of this capability gets a kernel from the build, the driver aside: 'sm_86' (a cubin of its
    family), 'compute_90' (PTX to JIT-compile), 'run time' (a framework that compiles for the GPU it finds, from
    a documented lowest capability), or None."""
    if build.min_cc:
        have, floor = mm(cc), mm(build.min_cc)
        return "run time" if have is not None and floor is not None and have >= floor else None
    return runs_on(GpuCode(sass=list(build.sass), ptx=list(build.ptx)), cc)


def _driver_runs(compat: Compat, build: Build, machine: Machine) -> Tuple[Optional[bool], str]:
    if not machine.driver:
        return None, "no driver version"
    if build.driver_branch:  # the framework documents its own floor (JAX: R525 for CUDA 12, R580 for CUDA 13)
        need, have = major_of(build.driver_branch), major_of(machine.driver)
        ok = have is not None and need is not None and have >= need
        return ok, ("R%s or newer" % build.driver_branch) if ok else "needs R%s or newer" % build.driver_branch
    runs, how, toolkit_floor = compat.driver_runs_cuda(machine.driver, build.cuda, machine.platform,
                                                       machine.driver_cuda)
    if runs is False:
        lowest = compat.minor_compat_floor(str(major_of(build.cuda)), machine.platform) or toolkit_floor
        how = "needs %s" % lowest.text() if lowest else how
    return runs, how


def _gpu_runs(compat: Compat, build: Build, machine: Machine, gpu: Gpu, driver_how: str
              ) -> Tuple[Optional[str], Optional[str]]:
    """(how this GPU runs the build, why it cannot)."""
    if not gpu.cc:
        return None, "%s: its compute capability is unknown" % gpu.name
    how = code_for(build, gpu.cc)
    if how is None and build.min_cc:
        return None, "%s (compute capability %s): %s %s builds for CUDA %s need %s or newer" % (
            gpu.name, gpu.cc, build.framework, build.release, build.cuda, build.min_cc)
    if how is None:
        return None, "%s (compute capability %s): %s %s (CUDA %s) has no code for it (cubins %s%s)" % (
            gpu.name, gpu.cc, build.framework, build.release, build.cuda, ", ".join(build.sass) or "none",
            "; PTX " + ", ".join(build.ptx) if build.ptx else "; no PTX")
    if how.startswith("compute_"):
        if "." not in build.cuda:
            return None, "%s (compute capability %s) needs %s's PTX JIT-compiled, and the CUDA minor that made " \
                         "it is unknown" % (gpu.name, gpu.cc, how)
        if driver_how != "exact":
            return None, "%s (compute capability %s) needs %s's PTX JIT-compiled, and driver %s is older than " \
                         "CUDA %s, which made it" % (gpu.name, gpu.cc, how, machine.driver, build.cuda)
        return "%s (JIT-compiled by the driver)" % how, None
    if how == "run time":
        return "compiled for it at run time (compute capability >= %s)" % build.min_cc, None
    return "%s cubin" % how, None
