"""CD910: --require KEY<op>VERSION policies, each compared with the facts it names."""
from __future__ import annotations

from typing import List, Tuple

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from ..knowledge import Compat
from ..versions import major_of, mm_text
from ..model import Facts, Finding, Fix
from ..remedies import advice, capitalized, run, say, then
from . import rule
from ..queries import consumers, driver_cuda, driver_version, gpus_with_cc, has_driver, machine_cuda, platform_of
from ..remedies import cudnn_wheel_for, driver_upgrade_fix, toolkit_install_fix
from ..remedies.targets import requirement_syntax_fix
from .common import ERROR, INFO, WARNING, compat_of, finding
from .fit import driver_problem
from .policy import REQUIRE_KEYS, Requirement, parse_requirement


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
                "CD910", WARNING if present else ERROR,
                ("Cannot tell whether %s holds: %s" % (req.text, why)) if present else
                "%s is not met: %s" % (req.text, why),
                detail="%s means %s." % (req.key, REQUIRE_KEYS[req.key]),
                remedy=_require_fix(req, facts, compat), evidence={"requirement": req.text}))
        elif bad:
            out.append(finding(
                "CD910", ERROR, "%s is not met: %s" % (req.text, ", ".join("%s at %s" % (v, w) for v, w in bad)),
                detail="%s means %s." % (req.key, REQUIRE_KEYS[req.key]), remedy=_require_fix(req, facts, compat),
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


def _require_fix(req: Requirement, facts: Facts, compat: Compat) -> Fix:
    if req.key in ("driver", "cuda"):
        return driver_upgrade_fix("a release that satisfies %s" % req.text, platform_of(facts))
    if req.key == "toolkit":
        # The newest CUDA release in compat that satisfies the requirement, preferring one this driver runs.
        wanted = [c for c in compat.cuda_releases() if _ok(req.spec, c)]
        runs = [c for c in wanted if driver_problem(facts, compat, c) is None]
        pick = (runs or wanted or [None])[-1]
        if pick is None:
            return advice("No CUDA release in compat satisfies %s; check the expression" % req.text)
        fix = say("install CUDA %s, which satisfies %s: %s", pick, req.text, toolkit_install_fix(facts, compat, pick))
        if not runs and has_driver(facts):
            floor = compat.min_driver(pick, platform_of(facts))
            return then(driver_upgrade_fix(floor.text() if floor else "one for CUDA %s" % pick, platform_of(facts)), fix)
        return capitalized(fix)
    if req.key == "cudnn":
        cuda = machine_cuda(facts, compat)
        wheel = cudnn_wheel_for(compat, cuda)
        cm = major_of(cuda) if cuda else None
        apt = next((r for r in compat.cudnn_channels() if r.get("channel") == "apt-v9"), None)
        ways = []
        if wheel:
            ways.append('pip install "%s%s"' % (wheel, req.spec))
        if apt and cm is not None and compat.has_minor_compat(cm) and any(
                _ok(req.spec, r) for r in compat.cudnn_releases(9)):  # the apt-v9 channel carries cuDNN 9 only
            ways.append(str(apt["install"]).replace("<cuda_major>", str(cm)))
        if not ways:
            return advice("Install a cuDNN that satisfies %s built for this machine's CUDA %s (`cudnn-doctor matrix "
                          "--cuda %s` lists the builds) and make it the one programs load" % (
                              req.text, cuda or "?", mm_text(cuda) or "?"))
        return run(ways[0], text="Install a cuDNN that satisfies %s (%s) and make it the one programs load" % (
            req.text, " or ".join("`%s`" % way for way in ways)), manual=" or ".join(ways[1:]))
    return advice("Run on a GPU whose compute capability satisfies %s" % req.text)

