"""CD705: Deeplearning4j/JavaCPP presets name an exact CUDA and cuDNN; check this machine provides them (G7)."""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from ..versions import mm, mm_before, mm_of
from ..model import Facts, Finding, Fix
from . import LINUX, RuleContext, rule
from ..queries import copy_for_path, driver_cuda, driver_version, has_driver, platform_of
from ..remedies.java import (javacpp_preset_fix, preset_cuda_runtime_fix, preset_cudnn_install_fix,
                             preset_cudnn_upgrade_fix, preset_driver_fix, preset_redist_fix)
from .common import ERROR, INFO, finding, compat_of


def preset_parts(version: str) -> Optional[Tuple[str, str, str]]:
    """'10.2-7.6-1.5.3' -> ('10.2', '7.6', '1.5.3')."""
    parts = version.split("-")
    return (parts[0], parts[1], parts[2]) if len(parts) >= 3 and mm(parts[0]) and mm(parts[1]) else None


@rule("CD705", "javacpp-preset-unmet", "A JavaCPP/DL4J CUDA preset needs a CUDA/cuDNN this machine lacks",
      platforms=LINUX, section="python")
def javacpp_presets(facts: Facts, ctx: RuleContext) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    bundled = {r["version"] for r in facts.java.redist}
    for preset in facts.java.javacpp_presets:
        parts = preset_parts(preset["version"])
        if not parts:
            continue
        cuda, cudnn, _javacpp = parts
        label = "org.bytedeco:cuda:%s (CUDA %s, cuDNN %s)" % (preset["version"], cuda, cudnn)
        evidence: Dict[str, Optional[str]] = {"preset": preset["version"], "path": preset["path"]}
        problems: List[str] = []
        fixes: List[Fix] = []
        if has_driver(facts):
            ok, how, floor = compat.driver_runs_cuda(driver_version(facts) or "", cuda, platform_of(facts),
                                                      driver_cuda(facts, compat))
            if ok is False:
                problems.append("the driver (%s, CUDA %s) is too old for CUDA %s" % (
                    driver_version(facts), driver_cuda(facts, compat), cuda))
                fixes.append(preset_driver_fix(floor, platform_of(facts)))
        if preset["version"] not in bundled:
            # Without cuda-platform-redist, JavaCPP loads cuDNN and cudart from the system search path.
            soname = "libcudnn.so.%d" % mm_of(cudnn)[0]
            res = facts.loader.resolved.get(soname)
            copy = copy_for_path(facts, res.path, res.realpath) if res and res.path else None
            evidence["cudnn"] = res.path if res else None
            if copy is None:
                problems.append("no %s on the loader's search path ('no jnicudnn in java.library.path', "
                                "'Could not load CudnnConvolutionHelper')" % soname)
                fixes.append(preset_cudnn_install_fix(cudnn, cuda))
            elif mm_before(copy.version, cudnn):
                problems.append("the cuDNN the loader finds is %s at %s, older than the %s the preset was built "
                                "with ('Loaded runtime CuDNN library ... but source was compiled with ...')" % (
                                    copy.version, copy.path, cudnn))
                fixes.append(preset_cudnn_upgrade_fix(cudnn, cuda, mm_of(cudnn)[0]))
            runtime = compat.cudart_soname(cuda)
            rt = facts.loader.resolved.get(runtime) if runtime else None
            evidence["cudart"] = rt.path if rt else None
            if rt is not None and not rt.path:
                problems.append("no %s (the CUDA %s runtime) on the search path" % (runtime, cuda))
                fixes.append(preset_cuda_runtime_fix(cuda))
            fixes.append(preset_redist_fix(preset["version"]))
        if problems:
            out.append(finding(
                ERROR, "%s: %s" % (label, "; ".join(problems)),
                detail="JavaCPP presets are built for one exact CUDA/cuDNN pair, encoded in the artifact version "
                       "<cuda>-<cudnn>-<javacpp>; Deeplearning4j's CUDA backend and cuDNN helpers fail to load "
                       "without it (debug with -Dorg.bytedeco.javacpp.logger.debug=true).",
                remedy=javacpp_preset_fix(fixes), evidence=evidence, catalogue=["G7"]))
        else:
            out.append(finding(INFO, "%s: this machine provides what it needs" % label,
                               evidence=evidence, catalogue=["G7"]))
    return out
