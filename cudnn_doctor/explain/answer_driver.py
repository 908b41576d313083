"""The driver older than what a paste's program is built for: the floor of the CUDA the build names; where the paste
names only the CUDA the driver runs (PyTorch's "found version 11040", nvidia-smi's header), the builds that still
run there (PyTorch's per-CUDA builds, CTranslate2's last release for the driver's CUDA) and where they stop. Pure:
evidence and knowledge in, sentences and a Fix out."""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from ..knowledge import Compat
from ..remedies import paste, paste_python as py_fix, paste_runtime as rt
from ..remedies.paste_tools import ctranslate2_release_fix
from ..versions import major_of, version_key as _v
from .answered import Answer
from .evidence import Evidence


def _torch_cuda_for(compat: Compat, driver_cuda: str) -> Optional[str]:
    """The newest CUDA PyTorch builds for that a driver running `driver_cuda` runs (the same major where minor
    versions are compatible, else not newer)."""
    cudas = [str(r["cuda"]) for r in compat.framework_rows("pytorch")
             if major_of(str(r["cuda"])) == major_of(driver_cuda) and _runs_on(compat, str(r["cuda"]), driver_cuda)]
    return max(cudas, key=_v) if cudas else None


def _runs_on(compat: Compat, cuda: str, driver_cuda: str) -> bool:
    """Whether a build for `cuda` runs on a driver running `driver_cuda` (minor versions compatible, or not newer)."""
    same = major_of(cuda) == major_of(driver_cuda) and compat.has_minor_compat(major_of(cuda))
    return same or _v(cuda) <= _v(driver_cuda)


def _first_torch_beyond(compat: Compat, driver_cuda: str) -> Optional[Tuple[str, str]]:
    """The first PyTorch release none of whose builds runs on the driver, after the newest one that does, with the
    oldest CUDA it is built for: where the driver stops keeping up (CUDA 10.0: PyTorch 1.3, CUDA 10.1)."""
    cudas: Dict[str, List[str]] = {}
    for row in compat.framework_rows("pytorch"):
        if "variants not read" not in str(row.get("source", "")):  # a release only partly read proves no absence
            cudas.setdefault(str(row["torch"]), []).append(str(row["cuda"]))
    releases = sorted(cudas, key=_v)
    runs = [r for r in releases if any(_runs_on(compat, c, driver_cuda) for c in cudas[r])]
    later = [r for r in releases if runs and _v(r) > _v(runs[-1])]
    return (later[0], min(cudas[later[0]], key=_v)) if later else None


def _ctranslate2_beyond(ev: Evidence, compat: Compat, has: str, driver: Optional[str]) -> Optional[Answer]:
    """CTranslate2, its release unsaid, on a driver older than its current wheels' CUDA: the last release whose
    wheels load the CUDA the driver runs, or a driver for the current one."""
    ct2 = ev.facts.program("CTranslate2")
    if ct2 is None or ct2.release:
        return None
    rows = compat.framework_rows("ctranslate2")
    fits = [r for r in rows if r.get("last") and _runs_on(compat, str(r["cuda"]), has)]
    current = str(rows[-1]["cuda"])
    floor = compat.minor_compat_floor(current, ev.driver_floor_platform)
    if not fits or _runs_on(compat, current, has):
        return None
    needs = "%s or newer" % floor.version if floor and floor.version else "a newer one"
    return Answer("CTranslate2's current wheels are built for CUDA %s, which needs driver %s; the driver%s runs CUDA "
                  "%s. Its %s release is the last for CUDA %s" % (
                      current, needs, (" " + driver) if driver else "", has, fits[-1]["last"], fits[-1]["cuda"]),
                  rt.driver_or_build_fix(ctranslate2_release_fix(str(fits[-1]["last"]), str(fits[-1]["cuda"]),
                                                                 str(fits[-1]["cudnn"])),
                                         ev.driver_platform))


def driver_too_old(ev: Evidence, compat: Compat) -> Answer:
    """The driver is older than the build's CUDA: the floor for the CUDA the build names; where the paste names
    only the CUDA the driver runs (PyTorch's 'found version 11040'), that is what the driver has, not what it needs."""
    facts = ev.facts
    build, has = facts.build_cuda(), facts.cuda_driver.value if facts.cuda_driver else None
    driver = facts.driver.value if facts.driver else next(iter(ev.drivers), None)
    runs = " (it runs CUDA %s)" % has if has else ""
    if build:
        floor = compat.min_driver(build, ev.driver_floor_platform)
        need = ("CUDA %s needs driver %s or newer" % (build, floor.version)) if floor else \
            "CUDA %s needs a newer driver" % build
        return Answer("%s; the program is built for CUDA %s and the driver%s is older%s" % (
            need, build, (" " + driver) if driver else "", runs), paste.driver_fix(floor.version if floor else None,
                                                                                 ev.driver_platform))
    assert has is not None  # the caller asks only where the paste names one of the two
    ct2 = _ctranslate2_beyond(ev, compat, has, driver)
    if ct2 is not None:
        return ct2
    cuda = _torch_cuda_for(compat, has)
    said = " (the 'found version' PyTorch prints is the driver's CUDA, not what the program needs)" \
        if "found version" in ev.text else ""
    cause = "the driver runs CUDA %s%s; the program is built for a newer CUDA" % (has, said)
    beyond = _first_torch_beyond(compat, has) if ev.facts.runs("PyTorch") else None
    if beyond:
        cause += " (PyTorch %s and newer are built for CUDA %s or newer)" % beyond
    if cuda and ev.facts.runs("PyTorch"):
        release = py_fix.torch_release_fix(compat, None, cuda, "runs on this driver", ev.platform, ev.python)
        return Answer(cause, rt.driver_or_build_fix(release, ev.driver_platform))
    return Answer(cause, paste.driver_fix(None, ev.driver_platform))
