"""Picking cuDNN: the newest release built for the CUDA the machine's toolkit (else its driver) runs that the
knowledge's pair verdict (cuDNN x CUDA x driver x GPU) passes for every GPU."""
from __future__ import annotations

from typing import Dict, List, Optional

from ..knowledge import Build, Compat
from ..versions import major_of, mm_text, ver, version_key
from .choose import Pick, spec_set
from .judge import Verdict, driver_cuda, gpu_not_driven
from .machine import Gpu, Machine


def target_cudas(compat: Compat, machine: Machine) -> List[str]:
    """The CUDA cuDNN must fit: the newest toolkit found; without one, the newest CUDA of each major the driver
    runs (its own first), since the pip wheels bring their CUDA libraries."""
    if machine.toolkits:
        return [mm_text(machine.toolkits[0][0]) or machine.toolkits[0][0]]
    own = driver_cuda(compat, machine)
    newest: Dict[int, str] = {}
    for run in compat.cuda_runnable(machine.driver, machine.platform) if machine.driver else []:
        run_major = major_of(run.cuda)
        if run_major is not None:
            newest[run_major] = run.cuda
    own_major = major_of(own) if own else None
    if own and own_major is not None:
        newest[own_major] = own
    return [newest[m] for m in sorted(newest, reverse=True)]


def pick_cudnn(compat: Compat, spec: str, machine: Machine) -> Pick:
    wanted = spec_set(spec)
    out = Pick("cudnn", spec, machine)
    cudas = target_cudas(compat, machine)
    if not cudas:
        out.why_none = ["%s has neither a CUDA toolkit nor a driver version to fit cuDNN to" % machine.label]
        return out
    first = None
    for cuda in cudas:
        major = str(major_of(cuda))
        releases = [r for r in compat.derived_cudnn_releases()
                    if major in r.get("cuda_majors", {}) and wanted.contains(r["release"], prereleases=False)]
        releases.sort(key=lambda r: version_key(r["release"]), reverse=True)
        out.candidates += len(releases)
        for row in releases:
            verdict = _wheel_verdict(compat, row, cuda, machine) or _judge(compat, row, cuda, machine)
            first = first or verdict
            if verdict.ok:
                out.chosen = verdict
                break
        if out.chosen:
            break
    if out.chosen is None:
        stops = [line for gpu in machine.gpus for line in [gpu_not_driven(compat, machine, gpu)] if line]
        out.why_none = stops + (first.why if first else ["the knowledge has no cuDNN release built for CUDA %s "
                                                          "within %r" % (", ".join(cudas), spec)])
    elif first is not out.chosen and first is not None:
        out.newer = [first]
    return out


def _wheel_verdict(compat: Compat, row: dict, cuda: str, machine: Machine) -> Optional[Verdict]:
    """A release whose NVIDIA wheel for this CUDA major has no file for the node's processor or glibc (the pip line
    would fail there), as a verdict that says so; None where it has one or the index does not know the project."""
    from ..knowledge.wheel_index import load_wheel_index

    project = compat.cudnn_wheel(cuda)
    version = str(row["cuda_majors"][str(major_of(cuda))])
    index = load_wheel_index()
    if not project or not index.has_project(project):
        return None
    miss = index.installable(project, version, machine.node)
    if miss is None:
        return None
    build = Build("cudnn", row["release"], cuda, True, code_source="compat/wheels.json", cudnn=version)
    return Verdict(build, False, why=[miss.text])


def _judge(compat: Compat, row: dict, cuda: str, machine: Machine) -> Verdict:
    major = str(major_of(cuda))
    build = Build("cudnn", row["release"], cuda, True, code_source="compat/cudnn.toml, compat/derived.json",
                  cudnn=str(row["cuda_majors"][major]))
    out = Verdict(build, True)
    gpus: List[Optional[Gpu]] = list(machine.gpus) or [None]
    for gpu in gpus:
        pair = compat.pair_verdict(cuda, row["release"], machine.driver, machine.platform, gpu.cc if gpu else None)
        stop = gpu_not_driven(compat, machine, gpu) if gpu is not None else None
        if stop:  # the pair verdict judges CUDA's driver, not whether the driver still drives this GPU
            out.ok = False
            out.why.append(stop)
        if gpu is not None:
            out.gpus.append((gpu, pair.verdict))
        if pair.ok is not True:
            out.ok = False if out.ok is not None and pair.ok is False else None
            out.why += ["cuDNN %s: %s" % (row["release"], r.text) for r in pair.reasons
                        if r.ok is not True and "cuDNN %s: %s" % (row["release"], r.text) not in out.why]
    return out
