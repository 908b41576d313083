"""CD226: a finite locked-memory limit on a machine with InfiniBand devices (NCCL pins its buffers under it), read
from /proc/self/limits through the host seam and judged by compat/checks.toml's row; the kernel is the oracle of
the parser (its own /proc/self/limits against getrlimit, at the default limit and a lowered one)."""
from __future__ import annotations

import resource
import subprocess

import pytest

from cudnn_doctor.host import Host
from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.model import Facts, HostFacts
from cudnn_doctor.probes.hostinfo import rdma_memlock_bytes
from cudnn_doctor.rules import RuleContext, evaluate

LIMITS = ("Limit                     Soft Limit           Hard Limit           Units     \n"
          "Max locked memory         %s %s bytes     \n")


def _cd226(facts: Facts):
    return [f for f in evaluate(facts, RuleContext(compat=load_compat()))[0] if f.id == "CD226"]


@pytest.mark.parametrize("limit, found", [(65536, True), (8 << 20, True), (None, False)])
def test_a_finite_limit_where_rdma_devices_exist_is_a_warning(limit, found):
    got = _cd226(Facts(host=HostFacts(rdma_memlock_bytes=limit)))
    assert bool(got) == found
    if found:
        assert got[0].severity.value == "warning" and "--ulimit memlock=-1" in got[0].remedy.text
        assert got[0].remedy.commands == []  # the limit is set where the job starts: words, no command here


def test_check_reads_the_limit_only_where_infiniband_devices_exist(machine, check_json):
    machine.driver()
    machine.file("/proc/self/limits", LIMITS % ("65536", "65536"))
    _, doc = check_json(machine)
    assert doc["facts"]["host"].get("rdma_memlock_bytes") is None and not [
        f for f in doc["findings"] if f["id"] == "CD226"]
    machine.file("/dev/infiniband/uverbs0")
    _, doc = check_json(machine)
    assert doc["facts"]["host"]["rdma_memlock_bytes"] == 65536
    assert [f["title"] for f in doc["findings"] if f["id"] == "CD226"] == [
        "Locked memory is limited to 64 KiB on a machine with InfiniBand devices"]


def _kernels_limits(tmp_path, lowered=None) -> Host:
    """A root holding this kernel's own /proc/self/limits (of a child whose soft limit is ``lowered``) and one
    InfiniBand device node."""
    def lower():
        if lowered is not None:
            resource.setrlimit(resource.RLIMIT_MEMLOCK, (lowered, resource.getrlimit(resource.RLIMIT_MEMLOCK)[1]))

    text = subprocess.run(["cat", "/proc/self/limits"], capture_output=True, text=True, check=True,
                          preexec_fn=lower).stdout
    (tmp_path / "proc" / "self").mkdir(parents=True)
    (tmp_path / "proc" / "self" / "limits").write_text(text)
    (tmp_path / "dev" / "infiniband").mkdir(parents=True)
    (tmp_path / "dev" / "infiniband" / "uverbs0").write_text("")
    return Host(str(tmp_path))


def test_the_parser_reads_what_the_kernel_writes(tmp_path):
    soft = resource.getrlimit(resource.RLIMIT_MEMLOCK)[0]
    expected = None if soft == resource.RLIM_INFINITY else soft
    assert rdma_memlock_bytes(_kernels_limits(tmp_path)) == expected


def test_a_lowered_limit_is_read_as_the_kernel_states_it(tmp_path):
    hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)[1]
    lowered = 65536 if hard == resource.RLIM_INFINITY or hard >= 65536 else hard
    assert rdma_memlock_bytes(_kernels_limits(tmp_path, lowered)) == lowered
