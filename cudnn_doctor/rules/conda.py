"""CD901: a conda environment's cuDNN against what the frameworks and packages in it were built with."""
from __future__ import annotations

import re
from typing import List

from ..versions import ver
from ..model import Facts, Finding
from ..remedies.runtime import conda_cudnn_upgrade_fix
from . import RuleContext, rule
from ..queries import cudnn_older
from .common import ERROR, finding


@rule("CD901", "conda-cudnn-mismatch", "A conda environment's cuDNN does not fit its frameworks", section="policy")
def conda(facts: Facts, ctx: RuleContext) -> List[Finding]:
    out: List[Finding] = []
    pkgs = facts.python.conda_packages
    for cud in [p for p in pkgs if p.get("name") in ("cudnn", "libcudnn")]:
        prefix = cud.get("prefix", "")
        needs = []
        for p in pkgs:
            if p.get("prefix") != prefix or p.get("name") in ("cudnn", "libcudnn"):
                continue
            m = re.search(r"cudnn(\d+(?:\.\d+)+)", p.get("build", ""))
            # conda-meta "depends": 'cudnn >=9.1.1.17,<10.0a0' names the floor the package was built against.
            dep = re.search(r"(?:lib)?cudnn\s*>=\s*(\d+(?:\.\d+)+)", p.get("cudnn_depends", ""))
            if m:
                needs.append(("%s %s (conda build %s)" % (p["name"], p["version"], p["build"]), m.group(1)))
            elif dep:
                needs.append(("%s %s (depends %s)" % (p["name"], p["version"], p["cudnn_depends"]),
                              ".".join(dep.group(1).split(".")[:2])))
        for fw in facts.python.frameworks:
            if prefix and fw.location.startswith(prefix.rstrip("/") + "/") and fw.cudnn_version:
                needs.append(("%s %s" % (fw.name, fw.version), fw.cudnn_version))
        for who, compiled in needs:
            want = ver(compiled)
            if ver(cud.get("version")) is None or want is None or not cudnn_older(cud.get("version"), compiled)[0]:
                continue
            out.append(finding(
                ERROR, "The conda environment %s has cuDNN %s, but %s needs cuDNN %s" % (
                    prefix, cud.get("version"), who, compiled),
                detail="The environment resolved a cuDNN older than (or of another major than) the one the "
                       "framework was built with: 'Outdated cuDNN installation found' / 'Loaded runtime CuDNN "
                       "library: X but source was compiled with: Y'.",
                remedy=conda_cudnn_upgrade_fix(prefix, compiled, want.release[0]),
                evidence={"prefix": prefix, "cudnn": cud.get("version"), "consumer": who, "needs": compiled},
                catalogue=["I1"]))
    return out

