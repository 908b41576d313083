"""The choice: the newest build (within a version spec) that runs on every GPU of the machine, why newer ones do
not, and, where none does, the driver that would make one run."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

from packaging.specifiers import SpecifierSet

from ..knowledge import Build, Compat
from ..knowledge.resolve import Resolution, newest, spec_of, where_it_installs
from ..knowledge.wheel_index import Miss, WheelIndex, load_wheel_index
from ..versions import major_of
from .judge import Verdict, code_for, gpu_driver_floor, gpu_not_driven, judge
from .machine import Machine
from .node import kind_of, requirement_of, wheel_miss


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
    would_fit: List[str] = field(default_factory=list)  # where nothing installs on the node: where it would
    resolution: Optional[Resolution] = None


def spec_set(spec: str) -> SpecifierSet:
    """'2.8', '==2.8.*', '>=2.6,<2.9': a bare version means that release series (the resolver's reading)."""
    try:
        return spec_of(spec)
    except ValueError as e:
        raise BadSpec(str(e)) from None


def pick(compat: Compat, framework: str, spec: str, machine: Machine, index: Optional[WheelIndex] = None) -> Pick:
    """The newest build within the spec that installs on the machine's node (knowledge/resolve.newest: its Python,
    processor and glibc, with its dependencies, from the wheel index) and runs there (the judge: the driver runs its
    CUDA, its code covers every GPU)."""
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
    index = index if index is not None else load_wheel_index()
    releases: Dict[str, List[Build]] = {}
    for build in builds:
        releases.setdefault(build.release, []).append(build)
    verdicts: List[Verdict] = []

    def accept(release: str) -> Optional[Miss]:
        misses = []
        for build in releases[release]:
            miss = wheel_miss(compat, index, build, machine.node)
            if miss is not None:
                misses.append(miss)
                verdicts.append(Verdict(build, False, why=[miss.text]))
                continue
            verdict = judge(compat, build, machine)
            verdicts.append(verdict)
            if verdict.ok is None:
                out.unknown.append(build)
            if verdict.ok:
                out.chosen = verdict
                return None
            misses.append(Miss(kind_of(verdict.why) if verdict.ok is False else "unknown", "; ".join(verdict.why)))
        return misses[0]

    out.resolution = newest(index, "", spec, machine.node, accept=accept, versions=list(releases))
    newest_release = builds[0].release
    newest_verdicts = [v for v in verdicts if v.build.release == newest_release and v is not out.chosen]
    if out.chosen is None:
        why = _why_none(compat, machine, newest_verdicts or verdicts)
        # one line per kind that stopped a release (Python, processor, glibc, driver, GPU), newest example first
        out.why_none = list(dict.fromkeys(why + [t for t in out.resolution.why_none() if t not in " ".join(why)]))
        if out.resolution.kinds() and set(out.resolution.kinds()) <= NODE_KINDS:
            out.would_fit = [where_it_installs(index, _project(compat, builds[0]), newest_release)]
        else:
            out.upgrade = driver_that_fits(compat, machine, [b for b in builds if wheel_miss(
                compat, index, b, machine.node) is None])
    elif out.chosen.build.release != newest_release:
        out.newer = [v for v in newest_verdicts if v.build.code_known or v.why]
    return out


NODE_KINDS = {"python", "platform", "processor", "glibc", "dependency"}


def _project(compat: Compat, build: Build) -> str:
    req = requirement_of(compat, build)
    return req.name if req is not None else build.framework


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
