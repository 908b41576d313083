"""CD910: --require KEY<op>VERSION policies, each compared with the facts it names."""
from __future__ import annotations

from typing import List, Tuple

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from ..knowledge import Compat
from ..model import Facts, Finding, Fix
from . import RuleContext, rule
from ..queries import (consumers, driver_cuda, driver_version, gpus_with_cc, has_driver, known_cc, machine_cuda,
                       platform_of)
from ..remedies.requirements import (requirement_cudnn_fix, requirement_driver_fix, requirement_gpu_fix,
                                     requirement_toolkit_fix)
from ..remedies.targets import requirement_syntax_fix
from .common import ERROR, INFO, WARNING, compat_of, finding
from .fit import driver_problem
from .policy import Requirement, parse_requirement
from ..require_keys import REQUIRE_KEYS


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
        vals = [(known_cc(g), "GPU %d (%s)" % (g.index, g.name)) for g in gpus_with_cc(facts)]
        return vals, "no GPU compute capability known"
    return [], "unknown key"


@rule("CD910", "require-policy", "A --require policy is not met", section="policy")
def requirements(facts: Facts, ctx: RuleContext) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    for expr in ctx.requires or []:
        try:
            req = parse_requirement(expr)
        except ValueError as exc:
            out.append(finding(ERROR, "--require %r cannot be read: %s" % (expr, exc),
                               remedy=requirement_syntax_fix()))
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
                WARNING if present else ERROR,
                ("Cannot tell whether %s holds: %s" % (req.text, why)) if present else
                "%s is not met: %s" % (req.text, why),
                detail="%s means %s." % (req.key, REQUIRE_KEYS[req.key]),
                remedy=_require_fix(req, facts, compat), evidence={"requirement": req.text}))
        elif bad:
            out.append(finding(
                ERROR, "%s is not met: %s" % (req.text, ", ".join("%s at %s" % (v, w) for v, w in bad)),
                detail="%s means %s." % (req.key, REQUIRE_KEYS[req.key]), remedy=_require_fix(req, facts, compat),
                evidence={"requirement": req.text, "values": [{"value": v, "where": w} for v, w in values]}))
        else:
            out.append(finding(
                INFO, "%s is met (%s)" % (req.text, ", ".join(v for v, _ in values)),
                evidence={"requirement": req.text, "values": [{"value": v, "where": w} for v, w in values]}))
    return out


def _ok(spec: SpecifierSet, value: str) -> bool:
    try:
        return spec.contains(Version(value), prereleases=True)
    except InvalidVersion:
        return False


def _require_fix(req: Requirement, facts: Facts, compat: Compat) -> Fix:
    if req.key in ("driver", "cuda"):
        return requirement_driver_fix(req.text, platform_of(facts))
    if req.key == "toolkit":
        # The newest CUDA release in compat that satisfies the requirement, preferring one this driver runs.
        wanted = [c for c in compat.cuda_releases() if _ok(req.spec, c)]
        runs = [c for c in wanted if driver_problem(facts, compat, c) is None]
        found = runs or wanted
        pick = found[-1] if found else None
        return requirement_toolkit_fix(facts, compat, req.text, pick, not runs and has_driver(facts))
    if req.key == "cudnn":
        # NVIDIA's apt-v9 channel carries cuDNN 9 only: it is a way only where a cuDNN 9 release satisfies it.
        return requirement_cudnn_fix(compat, req.text, req.spec, machine_cuda(facts, compat),
                                     any(_ok(req.spec, r) for r in compat.cudnn_releases(9)))
    return requirement_gpu_fix(req.text)
