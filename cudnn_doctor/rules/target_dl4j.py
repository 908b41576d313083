"""--for dl4j: the CUDA/cuDNN pairs a Deeplearning4j release has backends for, against this machine."""
from __future__ import annotations

from typing import List

from ..knowledge import Compat
from ..versions import dl4j_key, ver
from ..model import Facts, Finding
from ..remedies import advice, say, then
from ..queries import gpus_with_cc, platform_of
from ..remedies import driver_upgrade_fix, toolkit_install_fix
from ..remedies.targets import dl4j_for_this_gpu_fix, dl4j_matrix_fix
from .common import ERROR, WARNING, finding
from .fit import (arch_blocks_driver, cudnn_problem, driver_problem, gpu_problems, newest_cudnn_release,
                  toolkit_problem, verdict, with_driver_step)
from .policy import Target


def judge_dl4j(facts: Facts, compat: Compat, target: Target) -> List[Finding]:
    release = target.version or compat.dl4j_releases()[0]
    # Newest CUDA first, so the suggested pair is the most current one when several fit equally.
    rows = sorted((r for r in compat.framework_rows("dl4j") if r["dl4j"] == release), key=lambda r: ver(r["cuda"]),
                  reverse=True)
    options = []
    for row in rows:
        cuda, cudnn = row["cuda"], row["cudnn"]
        problems = [p for p in [driver_problem(facts, compat, cuda)] if p]
        problems += gpu_problems(facts, compat, cuda)
        problems += [p for p in (toolkit_problem(facts, compat, cuda), cudnn_problem(facts, compat, cudnn, cuda))
                     if p]
        newest = newest_cudnn_release(compat, cudnn, cuda)
        steps = []
        driver_issue = driver_problem(facts, compat, cuda)
        if driver_issue:
            blocked = arch_blocks_driver(facts, compat, cuda)
            if blocked:
                problems.append(blocked.strip())
            floor = compat.min_driver(cuda, platform_of(facts))
            steps.append(with_driver_step(facts, compat, cuda, advice("")) if blocked else
                         driver_upgrade_fix(floor.text() if floor else "one for CUDA %s" % cuda, platform_of(facts)))
        if toolkit_problem(facts, compat, cuda):
            steps.append(say("install the CUDA %s toolkit (https://developer.nvidia.com/cuda-toolkit-archive; apt: "
                             "%s)", cuda, toolkit_install_fix(facts, compat, cuda)))
        if cudnn_problem(facts, compat, cudnn, cuda):
            archive = compat.cudnn_archive_name(newest, cuda, platform_of(facts),
                                                facts.host.machine or "x86_64") if newest else None
            steps.append(advice("install cuDNN %s for CUDA %s%s" % (
                newest or cudnn, cuda, (" (%s, then `sudo cp -P` its files into /usr/local/cuda-%s)" % (archive, cuda))
                if archive else "")))
        steps.append(advice("use the %s backend (and deeplearning4j-cuda-%s for cuDNN) at version %s" % (
            row["backend"], cuda, release)))
        if row.get("redist"):
            steps.append(advice("or add %s, which bundles CUDA and cuDNN, instead of installing them" % row["redist"]))
        options.append(("CUDA %s + cuDNN %s (%s)" % (cuda, cudnn, row["backend"]), problems, then(*steps, joint="; ")))
    if not options:
        return [finding("CD920", WARNING, "No CUDA/cuDNN pairs known for DL4J %s" % release,
                        remedy=dl4j_matrix_fix())]
    source = compat.framework_table("dl4j").get("source", "")
    blocked = [(row, gpu_problems(facts, compat, row["cuda"])) for row in rows]
    if gpus_with_cc(facts) and all(problems for _, problems in blocked):
        # No backend of this release can drive the GPU: installing CUDA/cuDNN cannot help.
        newer = sorted((r for r in compat.framework_rows("dl4j") if not gpu_problems(facts, compat, r["cuda"])),
                       key=lambda r: (dl4j_key(r["dl4j"]), ver(r["cuda"])))
        newest = max(compat.framework_rows("dl4j"), key=lambda r: ver(r["cuda"]))
        fix = dl4j_for_this_gpu_fix(newer[-1] if newer else None, newest)
        return [finding(
            "CD920", ERROR, "This machine does not fit DL4J %s: its GPU is not supported by any of the release's "
                            "CUDA backends" % release,
            detail="; ".join("CUDA %s: %s" % (row["cuda"], ", ".join(problems)) for row, problems in blocked) +
                   " [%s]." % source,
            remedy=fix, evidence={"options": [{"cuda": r["cuda"], "cudnn": r["cudnn"], "problems": p}
                                           for r, p in blocked]}, catalogue=["G7"])]
    return verdict("DL4J %s" % release + ("" if target.version else " (newest DL4J in compat)"), options, source,
                    ["G7"])

