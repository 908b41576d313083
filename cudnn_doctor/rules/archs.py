"""CD201 from the binaries: the sm_XX cubins and compute_XX PTX a framework's CUDA libraries really carry."""
from __future__ import annotations

from typing import Any, Dict, List

from ..knowledge import Compat
from ..model import Facts, Finding, Fix, FrameworkFacts, GpuFacts
from ..readers.fatbin import GpuCode, runs_on
from ..queries import best_torch_variant, framework_kind, framework_label, gpu_label, known_cc
from ..remedies import torch_install
from ..remedies.targets import framework_upgrade_for_cc_fix, torch_from_source_fix
from .common import ERROR, INFO, finding


def _code(entry: Dict[str, Any]) -> GpuCode:
    return GpuCode(sass=list(entry.get("sass") or []), ptx=list(entry.get("ptx") or []))


def _describe(entry: Dict[str, Any]) -> str:
    parts = []
    if entry.get("sass"):
        parts.append("%s cubins" % ", ".join(entry["sass"]))
    if entry.get("ptx"):
        parts.append("%s PTX" % ", ".join(entry["ptx"]))
    return " and ".join(parts) or "no GPU code"


def _how(where: str) -> str:
    return "natively (%s)" % where if where.startswith("sm_") else (
        "through %s PTX, compiled by the driver at first use (slow start, no native kernels)" % where)


def _fix(facts: Facts, compat: Compat, fw: FrameworkFacts, gpu: GpuFacts) -> Fix:
    if framework_kind(fw) == "torch":
        better = best_torch_variant(facts, compat, fw.version, site=fw.location)
        if better:
            return torch_install(compat, better["torch"], better["cuda"])
        return torch_from_source_fix(known_cc(gpu))
    return framework_upgrade_for_cc_fix(fw.name, known_cc(gpu))

def judge(facts: Facts, compat: Compat, fw: FrameworkFacts, gpus: List[GpuFacts]) -> List[Finding]:
    """One finding per group of identical GPUs (queries.gpu_groups): an error naming the library without code for
    it, or an answer saying how it runs."""
    libs = [e for e in fw.gpu_code if e.get("sass") or e.get("ptx")]
    out: List[Finding] = []
    for gpu in gpus:
        verdicts = [(e, runs_on(_code(e), known_cc(gpu))) for e in libs]
        missing = [e for e, where in verdicts if where is None]
        main = libs[0]
        evidence = {"framework": fw.name, "version": fw.version, "gpu": gpu.name, "cc": gpu.compute_capability,
                    "libraries": [{"library": e["library"], "sass": e["sass"], "ptx": e["ptx"]} for e in libs],
                    "source": ".nv_fatbin"}
        if missing:
            lib = missing[0]
            out.append(finding(
                ERROR, "%s has no kernels for %s" % (framework_label(facts, fw), gpu_label(gpu)),
                detail="%s carries %s only (read from its .nv_fatbin section); every CUDA kernel in it fails with "
                       "'no kernel image is available for execution on the device'." % (lib["library"],
                                                                                      _describe(lib)),
                remedy=_fix(facts, compat, fw, gpu), evidence=evidence, catalogue=["B1"]))
            continue
        where = next(w for _, w in verdicts if w is not None)  # none is missing: every library runs on it
        out.append(finding(
            INFO, "%s has %s: %s runs %s" % (framework_label(facts, fw), _describe(main), gpu_label(gpu),
                                                        _how(where)),
            detail="Read from the .nv_fatbin section%s of %s." % (
                "s" if len(libs) > 1 else "", ", ".join(e["library"] for e in libs)),
            evidence=evidence, catalogue=["B1"]))
    return out
