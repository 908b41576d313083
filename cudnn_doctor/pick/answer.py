"""A pick as the plain answer both renderers print: the machine, the build chosen and how each GPU runs it, why
newer builds do not fit, and the install commands (built by remedies/pick.py)."""
from __future__ import annotations

from typing import Any, Dict, Optional

from ..knowledge import Compat
from ..model import Facts
from ..versions import major_of
from ..remedies.pick import (conda_fix, cudnn_fixes, cudnn_requirement, driver_fix, index_url, pip_fix, requirements_lines,
                             uv_fixes)
from .choose import Pick
from .judge import Verdict, driver_cuda


# Every key of the answer (scripts/write_schemas.py writes schema/pick-v1.json for exactly these).
ANSWER_FIELDS = ("framework", "spec", "ok", "machine", "pick", "install", "newer", "why_none", "driver_upgrade",
                 "unjudged", "candidates", "would_fit")


def _verdict(v: Verdict) -> Dict[str, Any]:
    return {"release": v.build.release, "cuda": v.build.cuda, "why": list(v.why)}


def _install(compat: Compat, pick: Pick) -> Dict[str, Any]:
    chosen = pick.chosen
    if chosen is None:
        return {}
    build, machine = chosen.build, pick.machine
    solve = driver_cuda(compat, machine) if machine.remote else None
    if build.framework == "cudnn":
        # A toolkit home of the build's CUDA major (the CUDA fitted may be a pip wheel folder's, which is no home).
        home = next((p for v, p in machine.homes if major_of(v) == major_of(build.cuda)), None)
        fixes = cudnn_fixes(compat, build.release, build.cudnn, build.cuda, home)
        out: Dict[str, Any] = {k: f.text for k, f in fixes.items()}
        out["requirements"] = [r for r in [cudnn_requirement(compat, build.cuda, build.cudnn)] if r]
    else:
        out = {"pip": pip_fix(compat, build).text, "uv": [f.text for f in uv_fixes(compat, build)],
               "requirements": requirements_lines(compat, build)}
    conda = conda_fix(compat, build.framework, build.cuda, solve)
    if conda is not None:
        out["conda"] = conda.text
    return out


def answer(compat: Compat, pick: Pick, facts: Optional[Facts] = None) -> Dict[str, Any]:
    """The pick as its JSON payload. For this machine (``facts``) the commands are built for its fix target, as
    check's are: `sudo` with this cudnn-doctor's absolute start words, none for root."""
    from ..remedies.acting import building_for

    if facts is None:  # a node's saved report: the commands are for a user's shell on that node
        from ..model import Target

        with building_for(Target()):
            return _answer(compat, pick)
    from ..diagnose import fix_target

    with building_for(fix_target(facts)):
        return _answer(compat, pick)


def _answer(compat: Compat, pick: Pick) -> Dict[str, Any]:
    machine, chosen = pick.machine, pick.chosen
    chosen_dict: Optional[Dict[str, Any]] = None
    if chosen is not None:
        build = chosen.build
        chosen_dict = {"release": build.release, "cuda": build.cuda, "default_build": build.default,
                       "index_url": index_url(compat, build) if build.framework != "cudnn" else "",
                       "cudnn": build.cudnn, "driver": chosen.driver_how, "code_source": build.code_source,
                       "sources": list(build.sources),
                       "gpus": [{"name": g.name, "cc": g.cc, "runs": how} for g, how in chosen.gpus]}
    upgrade = None
    if pick.upgrade:
        upgrade = {"branch": pick.upgrade, "fix": driver_fix(pick.upgrade, machine.platform).text}
    return {
        "framework": pick.framework, "spec": pick.spec, "ok": chosen is not None,
        "machine": {"label": machine.label, "driver": machine.driver, "driver_cuda": driver_cuda(compat, machine),
                    "gpus": [{"name": g.name, "cc": g.cc} for g in machine.gpus],
                    "toolkits": [v for v, _ in machine.toolkits], "from_report": machine.remote,
                    "python": machine.node.python or None, "python_source": machine.python_source or None,
                    "processor": machine.node.machine or None, "glibc": machine.node.glibc or None},
        "pick": chosen_dict, "install": _install(compat, pick),
        "newer": [_verdict(v) for v in pick.newer], "why_none": list(pick.why_none), "driver_upgrade": upgrade,
        "unjudged": [{"release": b.release, "cuda": b.cuda} for b in pick.unknown], "candidates": pick.candidates,
        "would_fit": list(pick.would_fit),
    }
