"""The choice: the newest build (within a version spec) that runs on every GPU of the machine, why newer ones do
not, and, where none does, the driver that would make one run."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from ..knowledge import Build, Compat
from ..versions import major_of
from .judge import Verdict, code_for, gpu_driver_floor, gpu_not_driven, judge
from .machine import Machine


class BadSpec(ValueError):
    """A version spec packaging cannot read."""


@dataclass
class Pick:
    framework: str
    spec: str
    machine: Machine
    chosen: Optional[Verdict] = None
    newer: List[Verdict] = field(default_factory=list)  # the newest release's builds, where it is not the choice
    why_none: List[str] = field(default_factory=list)  # where nothing fits: what stops the newest builds
    upgrade: str = ""  # the lowest driver branch on which some build would run on every GPU ("R570")
    unknown: List[Build] = field(default_factory=list)  # builds tried whose GPU code the knowledge lacks
    candidates: int = 0


def spec_set(spec: str) -> SpecifierSet:
    """'2.8', '==2.8.*', '>=2.6,<2.9': a bare version means that release series."""
    text = spec.strip()
    if text and text[0].isdigit():
        text = "==%s.*" % text if text.count(".") < 2 else "==%s" % text
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        raise BadSpec("%r is not a version spec (try 2.8, ==2.8.1 or '>=2.6,<2.9')" % spec)


def pick(compat: Compat, framework: str, spec: str, machine: Machine) -> Pick:
    wanted = spec_set(spec)
    builds = [b for b in compat.framework_builds(framework) if wanted.contains(b.release, prereleases=False)]
    out = Pick(framework, spec, machine, candidates=len(builds))
    if not builds:
        out.why_none = ["the knowledge holds no %s build%s with known GPU code (compat/framework_builds.toml)" % (
            framework, " within %s" % spec if spec else "")]
        return out
    if not machine.driver:
        out.why_none = ["%s shows no NVIDIA driver version: `cudnn-doctor check` says why" % machine.label]
        return out
    verdicts = []
    for build in builds:
        verdict = judge(compat, build, machine)
        verdicts.append(verdict)
        if verdict.ok is None:
            out.unknown.append(build)
        if verdict.ok:
            out.chosen = verdict
            break
    newest = [v for v in verdicts if builds and v.build.release == builds[0].release and v is not out.chosen]
    if out.chosen is None:
        out.why_none = _why_none(compat, machine, newest or verdicts)
        out.upgrade = driver_that_fits(compat, machine, builds)
    elif out.chosen.build.release != builds[0].release:
        out.newer = [v for v in newest if v.build.code_known]
    return out


def _why_none(compat: Compat, machine: Machine, verdicts: List[Verdict]) -> List[str]:
    lines = [line for gpu in machine.gpus for line in [gpu_not_driven(compat, machine, gpu)] if line]
    for verdict in verdicts[:3]:
        lines += ["%s %s (CUDA %s): %s" % (verdict.build.framework, verdict.build.release, verdict.build.cuda, w)
                  for w in verdict.why if w not in lines and "upgrade the driver" not in w]
    return list(dict.fromkeys(lines))


def driver_that_fits(compat: Compat, machine: Machine, builds: List[Build]) -> str:
    """The lowest driver branch on which some build with code for every GPU runs ('' where no build has code for
    them all, or no branch drives them all)."""
    needs = [_branch_needed(compat, b, machine) for b in builds if b.code_known and machine.gpus]
    found = [n for n in needs if n is not None]
    return "R%d" % min(found) if found else ""


def _branch_needed(compat: Compat, build: Build, machine: Machine) -> Optional[int]:
    hows = [code_for(build, gpu.cc) if gpu.cc else None for gpu in machine.gpus]
    if None in hows:
        return None
    ptx = any(h.startswith("compute_") for h in hows if h)
    if build.driver_branch:
        floor_branch = major_of(build.driver_branch)
    else:
        floor = compat.min_driver(build.cuda) if ptx else (compat.minor_compat_floor(str(major_of(build.cuda)))
                                                           or compat.min_driver(build.cuda))
        floor_branch = major_of(floor.branch or floor.version) if floor else None
    ccs = [g.cc for g in machine.gpus]
    known = [cc for cc in ccs if cc is not None]
    if len(known) < len(ccs):  # a GPU of unknown compute capability: no floor can be told for it
        return None
    floors = [floor_branch] + [major_of(gpu_driver_floor(compat, cc)[1]) for cc in known]
    branches = [f for f in floors if f is not None]
    if len(branches) < len(floors):
        return None
    need = max(branches)
    lasts = [gpu_driver_floor(compat, cc)[2] for cc in known]
    return None if any(last and need > int(last) for last in lasts) else need
