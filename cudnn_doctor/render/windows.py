"""Lines for the human report on a Windows machine: what each consumer's LoadLibrary maps."""
from __future__ import annotations

import ntpath
from typing import List

from ..model import Facts


def loader_lines(facts: Facts, verbose: int) -> List[str]:
    win = facts.windows
    if win is None:  # not a Windows machine: the Linux lines speak
        return []
    lines: List[str] = []
    for load in win.loads:
        name = ntpath.basename(load.request)
        if load.path:
            line = "%s: %s -> %s (%s)" % (load.consumer, name, load.path, load.via)
            if load.shadowed:
                line += ", shadows %d other cop%s" % (len(load.shadowed), "y" if len(load.shadowed) == 1 else "ies")
        else:
            line = "%s: %s -> error %s (%s not found%s)" % (
                load.consumer, name, load.error, ntpath.basename(load.missing or name),
                ", a %s copy skipped" % load.skipped[0]["machine"] if load.skipped else "")
        lines.append(line)
        if verbose:
            lines += ["  also: %s (%s)" % (s["path"], s["via"]) for s in load.shadowed]
    if verbose:
        lines.append("PATH=%s" % ";".join(win.path))
        lines += ["%s=%s" % kv for kv in sorted(win.cuda_path_vars.items())]
        lines += ["GPU %s driver model %s" % kv for kv in sorted(win.driver_model.items())]
    return lines or ["no cuDNN or CUDA runtime DLL to load"]
