"""--for dl4j: the CUDA/cuDNN pairs a Deeplearning4j release has backends for, against this machine."""
from __future__ import annotations

from typing import List

from ..knowledge import Compat
from ..versions import dl4j_key, version_of
from ..model import Facts, Finding
from ..queries import driver_version, gpus_with_cc
from ..remedies.targets import (cuda_driver_fix, dl4j_for_this_gpu_fix, dl4j_matrix_fix, dl4j_pair_fix,
                                no_driver_for_gpu_fix)
from .common import ERROR, WARNING, finding
from .fit import (arch_blocks_driver, cudnn_problem, driver_problem, gpu_problems, newest_cudnn_release,
                  toolkit_problem, verdict)
from .policy import Target


def judge_dl4j(facts: Facts, compat: Compat, target: Target) -> List[Finding]:
    release = target.version or compat.dl4j_releases()[0]
    # Newest CUDA first, so the suggested pair is the most current one when several fit equally.
    rows = sorted((r for r in compat.framework_rows("dl4j") if r["dl4j"] == release),
                  key=lambda r: version_of(r["cuda"]), reverse=True)
    options = []
    for row in rows:
        cuda, cudnn = row["cuda"], row["cudnn"]
        problems = [p for p in [driver_problem(facts, compat, cuda)] if p]
        problems += gpu_problems(facts, compat, cuda)
        problems += [p for p in (toolkit_problem(facts, compat, cuda), cudnn_problem(facts, compat, cudnn, cuda))
                     if p]
        newest = newest_cudnn_release(compat, cudnn, cuda)
        driver = None
        if driver_problem(facts, compat, cuda):
            blocked = arch_blocks_driver(facts, compat, cuda)
            if blocked:
                problems.append(blocked.strip())
            # A GPU past its last driver branch: say so rather than recommend a driver that does not exist.
            driver = (no_driver_for_gpu_fix(cuda, blocked, driver_version(facts)) if blocked else
                      cuda_driver_fix(facts, compat, cuda))
        fix = dl4j_pair_fix(facts, compat, row, release, newest, driver, bool(toolkit_problem(facts, compat, cuda)),
                            bool(cudnn_problem(facts, compat, cudnn, cuda)))
        options.append(("CUDA %s + cuDNN %s (%s)" % (cuda, cudnn, row["backend"]), problems, fix))
    if not options:
        return [finding(WARNING, "No CUDA/cuDNN pairs known for DL4J %s" % release,
                        remedy=dl4j_matrix_fix())]
    source = compat.framework_source("dl4j")
    judged = [(row, gpu_problems(facts, compat, row["cuda"])) for row in rows]
    if gpus_with_cc(facts) and all(problems for _, problems in judged):
        # No backend of this release can drive the GPU: installing CUDA/cuDNN cannot help.
        newer = sorted((r for r in compat.framework_rows("dl4j") if not gpu_problems(facts, compat, r["cuda"])),
                       key=lambda r: (dl4j_key(r["dl4j"]), version_of(r["cuda"])))
        newest_row = max(compat.framework_rows("dl4j"), key=lambda r: version_of(r["cuda"]))
        fix = dl4j_for_this_gpu_fix(newer[-1] if newer else None, newest_row)
        return [finding(
            ERROR, "This machine does not fit DL4J %s: its GPU is not supported by any of the release's "
                            "CUDA backends" % release,
            detail="; ".join("CUDA %s: %s" % (row["cuda"], ", ".join(problems)) for row, problems in judged) +
                   " [%s]." % source,
            remedy=fix, evidence={"options": [{"cuda": r["cuda"], "cudnn": r["cudnn"], "problems": p}
                                           for r, p in judged]}, catalogue=["G7"])]
    return verdict("DL4J %s" % release + ("" if target.version else " (newest DL4J in compat)"), options, source,
                    ["G7"])

