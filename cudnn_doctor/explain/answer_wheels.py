"""A cuDNN wheel broken as built (compat/known_bad.toml [cudnn] rows with `wheels`: the 9.20.0.48 wheels
lack libcudnn_engines_tensor_ir.so.9), read where a paste shows the status it causes: the wheel release the paste
names, the one its PyTorch release pins (PyPI's wheel index, compat/wheels.json), or, where it names neither, the
known case said as the likely one. A paste that names another release of the wheel, or a PyTorch pinning another,
is left to the other answers."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from packaging.version import Version

from ..knowledge import Compat
from ..remedies import paste_tools as tools
from ..versions import canonical_name, release3, ver
from .answered import Answer
from .evidence import Evidence


def from_wheels(ev: Evidence, compat: Compat) -> Optional[Answer]:
    statuses = {s.code.name for s in ev.statuses}
    for row in compat.bad_wheels():
        if row.get("status_code") not in statuses:
            continue
        found = _release_said(ev, compat, row)
        if found is None:
            continue
        wheel, release, how = found
        lacks = row.get("lacks", "a file")
        if release:
            return Answer("%s %s%s: %s; %s from %s on has it (%s)" % (
                wheel, release, how, row["problem"], wheel, row["fixed_in"], _first(row["source"])),
                tools.incomplete_wheel_fix(wheel, release, lacks, row["fixed_in"]))
        pins = _torch_pinning(compat, row)
        wheel = _wheel_of_build(ev, compat, row) or (pins[0][1] if pins else row["wheels"][-1])
        pinned = " (PyTorch %s pin them)" % _span([r for r, _ in pins]) if pins else ""
        return Answer("%s: cuDNN's sub-libraries came from two releases; the known case is cuDNN %s's pip wheels%s: "
                      "%s (%s)" % (
            row["status_code"], row["version"].lstrip("="), pinned, row["problem"], _first(row["source"])),
            tools.incomplete_wheel_fix(wheel, None, lacks, row["fixed_in"]))
    return None


def _release_said(ev: Evidence, compat: Compat,
                  row: Dict[str, Any]) -> Optional[Tuple[str, Optional[str], str]]:
    """(wheel, its release, how the paste says it) where the row applies; (wheel, None, "") where the paste names
    neither a wheel's release nor a PyTorch release; None where it names another."""
    listed = [p for p in ev.facts.packages if canonical_name(p.name) in row["wheels"]]
    if listed:
        bad = compat.bad_wheel(listed[0].name, listed[0].release)
        return (canonical_name(listed[0].name), listed[0].release, " (listed in the paste)") if bad else None
    if not _could_be_the_row(ev, row):
        return None
    torch = ev.facts.program("PyTorch")
    if torch is not None and torch.release and not ev.facts.build_cuda():  # PyPI's own build: its pin is known
        for wheel in row["wheels"]:
            pin = _pin(wheel, torch.release)
            if pin:
                return (wheel, pin, " (PyTorch %s pins it)" % torch.release) if compat.bad_wheel(wheel, pin) else None
        return None
    return "", None, ""


def _could_be_the_row(ev: Evidence, row: Dict[str, Any]) -> bool:
    """Whether nothing the paste says rules the row's release out: another framework than PyTorch (the one that
    pins these wheels), another cuDNN major's library, or a cuDNN version other than the row's."""
    if any(p.name != "PyTorch" for p in ev.facts.programs):
        return False
    if any(lib.product == "cuDNN" and lib.low != "9" for lib in ev.libraries):
        return False
    said = [s.value for s in (ev.facts.cudnn_loaded, ev.facts.cudnn_compiled) if s is not None]
    return all(release3(v) is not None and "==" + str(release3(v)) == row["version"] for v in said)


def _wheel_of_build(ev: Evidence, compat: Compat, row: Dict[str, Any]) -> Optional[str]:
    """The row's wheel for the CUDA the paste's build names (+cu126: nvidia-cudnn-cu12), where it names one."""
    cuda = ev.facts.build_cuda()
    wheel = compat.cudnn_wheel(cuda) if cuda else None
    return wheel if wheel in row["wheels"] else None


def _pin(wheel: str, torch_release: str) -> Optional[str]:
    """The release of `wheel` a PyTorch release pins on Linux (PyPI's wheel index), or None."""
    return _pins(torch_release).get(wheel)


def _pins(torch_release: str) -> Dict[str, str]:
    """Each project a PyTorch release's Linux wheels pin to one release, and that release (PyPI's wheel index)."""
    from ..knowledge.wheel_index import Node, load_wheel_index  # why: the index loads in 0.9 s; only this needs it

    index = load_wheel_index()
    if torch_release not in index.versions("torch"):
        return {}
    out = {}
    for req in index.requirements("torch", torch_release, Node(machine="x86_64", platform="linux")):
        exact = [s.version for s in req.specifier if s.operator in ("==", "===")]
        if exact:
            out[canonical_name(req.name)] = exact[0]
    return out


def _torch_pinning(compat: Compat, row: Dict[str, Any]) -> List[Tuple[str, str]]:
    """(PyTorch release, wheel) for each PyTorch release on PyPI whose Linux wheels pin a release of one of the row's
    wheels that the row is about."""
    from ..knowledge.wheel_index import load_wheel_index  # why: as above

    out = []
    for release in load_wheel_index().versions("torch"):
        pins = _pins(release)
        out += [(release, wheel) for wheel in row["wheels"]
                if wheel in pins and compat.bad_wheel(wheel, pins[wheel]) is not None]
    return out


def _span(releases: List[str]) -> str:
    ordered = sorted(releases, key=lambda r: ver(r) or Version("0"))
    return ordered[0] if len(ordered) == 1 else "%s to %s" % (ordered[0], ordered[-1])


def _first(source: str) -> str:
    return source.split(" ")[0].rstrip(";")
