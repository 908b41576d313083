"""CD611: the cuDNN a plain process loads differs from the one the headers a build compiles against describe."""
from __future__ import annotations

import os
from typing import List

from ..versions import release3
from ..model import Facts, Finding, Resolution
from . import RuleContext, rule
from ..queries import copy_for_path, describe_copy, ld_entry_for, plain_resolutions
from ..remedies.leftovers import header_mismatch_fix, install_command
from ..remedies.loader import off_ld_library_path_fix
from .common import WARNING, compat_of, finding


def why_it_wins(facts: Facts, res: Resolution) -> str:
    """Which search-path entry hands out this copy, in the loader's own terms."""
    if res.path is None:
        return "%s finds it first" % (res.via or "the loader")
    if res.via == "LD_LIBRARY_PATH":
        return "LD_LIBRARY_PATH entry %s is searched first" % (ld_entry_for(facts, res.path) or
                                                                os.path.dirname(res.path))
    if res.via == "ld.so.cache":
        folder = os.path.dirname(res.path)
        listed = [d for d in facts.loader.conf_dirs if os.path.normpath(d) == os.path.normpath(folder)]
        return ("ld.so.cache lists %s first (its folder comes earlier in /etc/ld.so.conf.d)" % res.path
                if listed else "ld.so.cache lists %s first" % res.path)
    return "%s finds it first" % (res.via or "the loader")


@rule("CD611", "cudnn-headers-differ-from-loaded", "Programs load another cuDNN than the headers builds compile with",
      section="loader")
def headers_vs_loaded(facts: Facts, ctx: RuleContext) -> List[Finding]:
    out: List[Finding] = []
    if not facts.cudnn_headers:
        return out
    for name, res in plain_resolutions(facts):
        major = int(name.rsplit(".", 1)[1])
        header = next((h for h in facts.cudnn_headers if int(h["version"].split(".")[0]) == major), None)
        loaded = copy_for_path(facts, res.path, res.realpath) if res.path else None
        if header is None or loaded is None or not loaded.version:
            continue
        if release3(loaded.version) == release3(header["version"]):
            continue
        # The copy the header belongs to, when it is on this machine: the one a build expects at run time.
        matching = next((c for c in facts.cudnn if c is not loaded and c.version and
                         release3(c.version) == release3(header["version"])), None)
        entry = ld_entry_for(facts, res.path) if res.via == "LD_LIBRARY_PATH" else None
        install = install_command(facts, compat_of(ctx), loaded.version, os.path.dirname(header["path"]))
        unset = off_ld_library_path_fix(facts, [entry]) if entry else None
        fix = header_mismatch_fix(unset, matching.directory if matching is not None else None, install,
                                  header["path"], loaded.version)
        out.append(finding(
            WARNING,
            "Programs load cuDNN %s but builds compile against cuDNN %s headers" % (loaded.version, header["version"]),
            detail="A plain process asking for %s gets %s because %s; %s (the header nvcc and gcc find first) says "
                   "%s%s. Code built here is compiled for one version and runs with another: TensorFlow-style "
                   "'Loaded runtime CuDNN library: %s but source was compiled with: %s', or "
                   "CUDNN_STATUS_VERSION_MISMATCH." % (
                       name, describe_copy(loaded), why_it_wins(facts, res), header["path"], header["version"],
                       (", which is %s" % describe_copy(matching)) if matching else "",
                       loaded.version, header["version"]),
            remedy=fix,
            evidence={"soname": name, "loads": res.path, "via": res.via, "header": header["path"],
                      "header_version": header["version"], "loaded_version": loaded.version,
                      "shadowed": [s["path"] for s in res.shadowed]},
            catalogue=["E1", "E2", "D7"]))
    return out
