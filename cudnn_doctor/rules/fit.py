"""Whether this machine fits one CUDA/cuDNN build: the questions every --for judge asks, and its verdict."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from packaging.version import Version

from ..knowledge import Compat
from ..versions import major_of, mm, mm_before, release3, release3_of, ver
from ..model import Facts, Finding, Fix
from ..queries import (cudnn_older, driver_cuda, driver_place, driver_version, floor_branch, gpu_label, gpus_with_cc,
                       has_driver, known_cc, platform_of)
from ..remedies import arch_driver_limit
from ..remedies.driver import missing_driver_fix
from ..remedies.targets import driver_first_fix, no_driver_for_gpu_fix
from .common import ERROR, INFO, WARNING, finding


def driver_problem(facts: Facts, compat: Compat, cuda: str) -> Optional[str]:
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


def gpu_problems(facts: Facts, compat: Compat, cuda: str, min_cc: Optional[str] = None,
                  arch: Optional[Dict[str, Any]] = None) -> List[str]:
    problems = []
    floor = compat.cuda_min_cc(cuda)
    for gpu in gpus_with_cc(facts):
        cc = known_cc(gpu)
        if arch is not None and not compat.sass_runs(arch["arch"], arch.get("ptx"), cc):
            problems.append("%s has no kernels in this build (built for %s)" % (gpu_label(gpu), ", ".join(arch["arch"])))
            continue
        if floor and mm_before(cc, floor.low):
            problems.append("%s is below CUDA %s's minimum %s" % (gpu_label(gpu), major_of(cuda), floor.low))
        elif min_cc and mm_before(cc, min_cc):
            problems.append("%s is below the build's minimum compute capability %s" % (gpu_label(gpu), min_cc))
        first = compat.first_cuda_for_cc(cc)
        if arch is None and first and mm_before(cuda, first):
            problems.append("%s needs CUDA %s or newer" % (gpu_label(gpu), first))
    return problems


def arch_blocks_driver(facts: Facts, compat: Compat, cuda: str) -> str:
    """The note when the driver CUDA `cuda` needs is newer than the GPU's last driver branch (upgrading cannot
    help); empty otherwise."""
    if not driver_problem(facts, compat, cuda) or not has_driver(facts):
        return ""
    return arch_driver_limit(facts, compat, floor_branch(compat.min_driver(cuda, platform_of(facts))))


def with_driver_step(facts: Facts, compat: Compat, cuda: str, fix: Fix, floor_text: Optional[str] = None) -> Fix:
    """`fix`, preceded by the driver upgrade CUDA `cuda` needs when the driver is too old, unless no driver that new
    exists for the GPU: then say so instead of recommending one."""
    if not has_driver(facts):
        return missing_driver_fix(driver_place(facts))  # the driver first: no reinstall can make up for it
    if not driver_problem(facts, compat, cuda):
        return fix
    blocked = arch_blocks_driver(facts, compat, cuda)
    if blocked:
        return no_driver_for_gpu_fix(cuda, blocked, driver_version(facts))
    return driver_first_fix(facts, compat, cuda, fix, floor_text)


def toolkit_problem(facts: Facts, compat: Compat, cuda: str) -> Optional[str]:
    want = mm(cuda)
    for tk in facts.toolkits:
        have = mm(tk.version)
        if tk.dangling or have is None or want is None:
            continue
        if have == want or (compat.has_minor_compat(want[0]) and have[0] == want[0] and have >= want):
            return None
    found = ", ".join("%s (%s)" % (t.version, t.path) for t in facts.toolkits if t.version) or "none"
    return "no CUDA %s toolkit is installed (found: %s)" % (cuda, found)


def cudnn_problem(facts: Facts, compat: Compat, cudnn: str, cuda: str) -> Optional[str]:
    for copy in facts.cudnn:
        if copy.version is None or ver(copy.version) is None or ver(cudnn) is None \
                or cudnn_older(copy.version, cudnn)[0]:
            continue
        ok, _ = compat.cudnn_cuda_verdict(copy.version, copy.cuda_version, cuda)
        if ok is not False:
            return None
    found = ", ".join("%s for CUDA %s at %s" % (c.version, c.cuda_version or "?", c.directory)
                      for c in facts.cudnn if c.version) or "none"
    return "no cuDNN %s (or newer %s.x) built for CUDA %s is installed (found: %s)" % (
        cudnn, cudnn.split(".")[0], cuda, found)


def newest_cudnn_release(compat: Compat, cudnn: str, cuda: str) -> Optional[str]:
    """The newest release of a cuDNN major.minor with a build for this CUDA, for the download hint."""
    want = mm(cudnn) or (major_of(cudnn), 0)
    best: Optional[Version] = None
    for b in compat.cudnn_builds_for_cuda(cuda):
        last = release3_of(b.last)
        if (last.release[0], last.release[1]) == tuple(want) or (len(cudnn.split(".")) == 1 and last.release[0]
                                                                  == want[0]):
            if best is None or last > best:
                best = last
    return str(best) if best else None


def verdict(target_label: str, options: List[Tuple[str, List[str], Fix]], source: str,
            catalogue: Sequence[str]) -> List[Finding]:
    """options: (label, problems, fix). INFO when one fits, ERROR (WARNING when only unknowns) otherwise."""
    fitting = [o for o in options if not o[1]]
    evidence = {"options": [{"option": label, "problems": problems} for label, problems, _ in options],
                "source": source}
    if fitting:
        label, _, fix = fitting[0]
        return [finding("CD920", INFO, "This machine fits %s through %s" % (target_label, label),
                        detail="Checked driver, GPU, toolkit and cuDNN against %s." % source,
                        remedy=fix or None, evidence=evidence, catalogue=catalogue)]
    only_unknown = all(all(p.startswith("cannot tell") for p in problems) for _, problems, _ in options)
    best = min(options, key=lambda o: (len(o[1]), any("driver" in p for p in o[1])))
    reasons = "; ".join("%s: %s" % (label, ", ".join(problems)) for label, problems, _ in options)
    return [finding(
        "CD920", WARNING if only_unknown else ERROR, "This machine does not fit %s" % target_label,
        detail="%s [%s]." % (reasons, source), remedy=best[2], evidence=evidence, catalogue=catalogue)]

