"""`pick` proven on generated machines: a driver (any release the knowledge names, every branch from R450) and one
to four GPUs of any architecture the knowledge lists, mixed generations included. For every framework and cuDNN,
the pick is checked by an oracle written here from the knowledge alone: the build's CUDA runs on the driver (its
own toolkit driver, or minor-version compatibility where no PTX must be JIT-compiled), the driver drives every GPU
(at or past the first CUDA release of its architecture, not past its last branch), and the build's binaries have
code for every GPU (a cubin of its family, or PTX); and no newer release would pass the same oracle."""
from __future__ import annotations

import functools
from typing import List, Optional

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from cudnn_doctor.knowledge import Build
from cudnn_doctor.pick.choose import pick
from cudnn_doctor.pick.cudnn import pick_cudnn
from cudnn_doctor.pick.machine import Gpu, Machine
from cudnn_doctor.readers.fatbin import GpuCode, runs_on
from cudnn_doctor.versions import major_of, mm, ver
from hermetic import shipped_compat

COMPAT = shipped_compat()
FRAMEWORKS = ("torch", "tensorflow", "jax", "onnxruntime", "cupy", "paddlepaddle")
# Every compute capability the knowledge lists an architecture for, and every driver it names.
CCS = sorted({cc for arch in COMPAT.architectures() for cc in arch.ccs if ver(arch.first_cuda) >= ver("9.0")},
             key=ver)
DRIVERS = sorted({str(r["linux"]) for r in COMPAT.toolkit_rows() if r.get("linux") and ver(str(r["linux"]))
                  and ver(str(r["linux"])) >= ver("450")}, key=ver)

machines = st.builds(
    lambda driver, ccs: Machine("generated", driver, None, [Gpu("GPU %d (sm %s)" % (i, cc), cc)
                                                            for i, cc in enumerate(ccs)]),
    st.sampled_from(DRIVERS), st.lists(st.sampled_from(CCS), min_size=1, max_size=4))


def _branch(driver: str) -> int:
    return ver(driver).release[0]


@functools.lru_cache(maxsize=None)
def driver_drives(driver: str, cc: str) -> bool:
    """At or past the branch of the first CUDA release that knows the architecture, not past its last branch."""
    arch = COMPAT.arch_for_cc(cc)
    floor = COMPAT.min_driver(arch.first_cuda_for(cc))
    if floor is None or _branch(driver) < _first_branch(floor):
        return False
    return not arch.last_driver_branch or _branch(driver) <= int(arch.last_driver_branch)


def _first_branch(floor) -> int:
    return ver(floor.branch).release[0] if floor.branch else ver(floor.version).release[0]


def oracle(build: Build, machine: Machine) -> bool:
    """Whether the knowledge says this build runs on every GPU of the machine."""
    if not all(driver_drives(machine.driver, g.cc) for g in machine.gpus):
        return False
    needs_jit = False
    for g in machine.gpus:
        if build.min_cc:
            if mm(g.cc) < mm(build.min_cc):
                return False
            continue
        how = runs_on(GpuCode(sass=list(build.sass), ptx=list(build.ptx)), g.cc)
        if how is None:
            return False
        needs_jit |= how.startswith("compute_")
    if build.driver_branch:
        return _branch(machine.driver) >= int(build.driver_branch)
    own = COMPAT.min_driver(build.cuda)
    exact = own is not None and own.version is not None and ver(machine.driver) >= ver(own.version)
    if needs_jit:
        return exact and "." in build.cuda
    family = COMPAT.minor_compat_floor(str(major_of(build.cuda)))
    return exact or (family is not None and ver(machine.driver) >= ver(family.version))


@functools.lru_cache(maxsize=None)
def _known(framework: str) -> List[Build]:
    return [b for b in COMPAT.framework_builds(framework) if b.code_known]


@pytest.mark.parametrize("framework", FRAMEWORKS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(machine=machines)
def test_each_pick_runs_everywhere_and_nothing_newer_would(framework, machine):
    result = pick(COMPAT, framework, "", machine)
    fitting = [b for b in _known(framework) if oracle(b, machine)]
    if result.chosen is None:
        assert not fitting, "pick found nothing, the oracle finds %s" % [(b.release, b.cuda) for b in fitting]
        assert result.why_none or not _known(framework)
        return
    chosen = result.chosen.build
    assert oracle(chosen, machine), (chosen.release, chosen.cuda, result.chosen.why)
    newer = [b for b in fitting if ver(b.release) > ver(chosen.release)]
    assert not newer, "%s %s was picked but %s fits" % (framework, chosen.release, [(b.release, b.cuda) for b in newer])


@settings(max_examples=60, deadline=None, derandomize=True)
@given(machine=machines)
def test_a_driver_upgrade_named_where_nothing_fits_makes_a_build_fit(machine):
    result = pick(COMPAT, "torch", "", machine)
    if result.chosen is not None or not result.upgrade:
        return
    branch = result.upgrade.lstrip("R")
    upgraded = Machine("upgraded", _newest_of_branch(branch), None, machine.gpus)
    assert any(oracle(b, upgraded) for b in _known("torch")), (result.upgrade, [g.cc for g in machine.gpus])


def _newest_of_branch(branch: str) -> str:
    """A driver of that branch new enough for any release of it (the toolkit table's newest, else .999)."""
    known = [d for d in DRIVERS if d.split(".")[0] == branch]
    return known[-1] if known else "%s.999.99" % branch


def cudnn_oracle(release: str, cuda: str, machine: Machine) -> Optional[bool]:
    if not all(driver_drives(machine.driver, g.cc) for g in machine.gpus):
        return False
    return all(COMPAT.pair_verdict(cuda, release, machine.driver, "linux", g.cc).ok for g in machine.gpus)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(machine=machines)
def test_cudnn_pick_passes_the_pair_verdict_on_every_gpu(machine):
    result = pick_cudnn(COMPAT, "", machine)
    if result.chosen is None:
        return
    build = result.chosen.build
    assert cudnn_oracle(build.release, build.cuda, machine)
    major = str(major_of(build.cuda))
    newer = [r["release"] for r in COMPAT.derived_cudnn_releases() if major in r["cuda_majors"]
             and ver(r["release"]) > ver(build.release) and cudnn_oracle(r["release"], build.cuda, machine)]
    assert not newer, (build.release, build.cuda, newer)
