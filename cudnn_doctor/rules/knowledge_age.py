"""CD004: something on this machine is newer than the knowledge, so its answers about it may be out of date."""
from __future__ import annotations

from typing import List, Tuple

from ..knowledge import Compat
from ..model import Facts, Finding
from ..queries import driver_version
from ..remedies.software import knowledge_update_fix
from ..versions import major_of
from . import RuleContext, rule
from .common import INFO, compat_of, finding

# Framework distributions whose releases the knowledge tracks (Requires-Dist of their wheels).
_FRAMEWORKS = {"torch": "torch", "tensorflow": "tensorflow", "jax-cuda12-plugin": "jax", "jax-cuda13-plugin": "jax"}


def _newer(facts: Facts, compat: Compat) -> List[Tuple[str, str, str]]:
    """(what, version on the machine, the newest the knowledge knows) for each thing newer than the knowledge."""
    out = []
    for copy in facts.cudnn:
        if copy.version and compat.is_newer_than_knowledge("cudnn", copy.version):
            out.append(("cuDNN %s at %s" % (copy.version, copy.directory), copy.version,
                        "cuDNN %s" % compat.newest_cudnn_release()))
    driver = driver_version(facts)
    newest_driver = compat.newest_known_driver()
    branch, newest_branch = major_of(driver), major_of(newest_driver)
    if driver and branch is not None and newest_branch is not None and branch > newest_branch:
        out.append(("driver %s" % driver, driver, "driver branch R%s" % newest_branch))
    if facts.driver.cuda_version and compat.is_newer_than_knowledge("cuda", facts.driver.cuda_version):
        out.append(("the driver's CUDA %s" % facts.driver.cuda_version, facts.driver.cuda_version,
                    "CUDA %s" % compat.newest_cuda_release()))
    for fw in facts.python.frameworks:
        name = _FRAMEWORKS.get(fw.name.lower())
        if name and compat.is_newer_than_knowledge(name, fw.version.split("+")[0]):
            out.append(("%s %s" % (fw.name, fw.version), fw.version,
                        "%s %s" % (fw.name, compat.newest_framework_release(name))))
    return out


@rule("CD004", "knowledge-older-than-machine", "Something on this machine is newer than the knowledge",
      section="doctor")
def knowledge_older_than_machine(facts: Facts, ctx: RuleContext) -> List[Finding]:
    compat = compat_of(ctx)
    newer = _newer(facts, compat)
    if not newer:
        return []
    what = "; ".join("%s (newest known: %s)" % (label, known) for label, _, known in newer)
    return [finding(
        INFO, "%s newer than what cudnn-doctor knows" % ("These are" if len(newer) > 1 else "This is"),
        detail="%s. The knowledge is dated %s (%s), so its answers about these may be out of date." % (
            what, compat.knowledge_date() or "?", compat.knowledge_origin()),
        remedy=knowledge_update_fix(compat.knowledge_date()),
        evidence={"newer": [label for label, _, _ in newer], "knowledge_date": compat.knowledge_date(),
                  "newest_cudnn": compat.newest_cudnn_release()})]
