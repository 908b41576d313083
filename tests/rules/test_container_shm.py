"""CD807: a container's /dev/shm under 1 GiB (Docker's default is 64 MiB), read from /proc/mounts through the host
seam, judged by the check compat/checks.toml declares (rules/declared.py), and the kernel's own answer (statvfs) as the oracle."""
from __future__ import annotations

import os

import pytest

from cudnn_doctor.host import Host
from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.model import Facts, HostFacts
from cudnn_doctor.probes.hostinfo import in_container, shm_bytes
from cudnn_doctor.rules import RuleContext, evaluate

DOCKER = "shm /dev/shm tmpfs rw,nosuid,nodev,noexec,relatime,size=65536k 0 0\n"


def _cd807(facts: Facts):
    return [f for f in evaluate(facts, RuleContext(compat=load_compat()))[0] if f.id == "CD807"]


@pytest.mark.parametrize("size, in_a_container, found", [
    (64 << 20, True, True),  # docker run without --shm-size
    ((1 << 30) - 4096, True, True),
    (1 << 30, True, False),  # --shm-size=1g
    (8 << 30, True, False),
    (None, True, False),  # --ipc=host: tmpfs's default, no size stated
    (64 << 20, False, False),  # not a container: the machine's own /dev/shm is not judged
])
def test_a_container_shm_under_1_gib_is_a_warning(size, in_a_container, found):
    facts = Facts(host=HostFacts(in_container=in_a_container, shm_bytes=size))
    got = _cd807(facts)
    assert bool(got) == found
    if found:
        assert got[0].severity.value == "warning" and "--shm-size=8g" in got[0].remedy.text
        assert "--ipc=host" in got[0].remedy.text and "medium: Memory" in got[0].remedy.text


def test_check_reads_the_size_from_proc_mounts_in_a_container_only(machine, check_json):
    machine.driver()
    machine.file("/proc/mounts", "overlay / overlay rw 0 0\n" + DOCKER)
    _, doc = check_json(machine)
    assert "shm_bytes" not in doc["facts"]["host"] or doc["facts"]["host"]["shm_bytes"] is None
    machine.file("/.dockerenv")
    _, doc = check_json(machine)
    assert doc["facts"]["host"]["shm_bytes"] == 64 << 20
    assert [f["title"] for f in doc["findings"] if f["id"] == "CD807"] == [
        "This container's /dev/shm is 64 MiB, under the 1 GiB PyTorch's DataLoader workers and NCCL need"]


@pytest.mark.parametrize("options, size", [
    ("rw,size=8388608k", 8 << 30), ("rw,size=2g", 2 << 30), ("rw,nosuid,nodev", None), ("rw,size=50%", None)])
def test_the_size_option_is_read_as_the_kernel_writes_it(tmp_path, options, size):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "mounts").write_text("tmpfs /dev/shm tmpfs rw,size=1k 0 0\nshm /dev/shm tmpfs %s 0 0\n"
                                              % options)
    assert shm_bytes(Host(str(tmp_path))) == size  # the last mount on /dev/shm is the one a process sees


@pytest.mark.live  # reads this machine's /proc/mounts and statvfs(/dev/shm), nothing else
def test_the_live_size_is_what_the_kernel_says():
    """The oracle is the kernel: in a container with a sized /dev/shm, statvfs gives the size /proc/mounts states."""
    host = Host("/")
    size = shm_bytes(host)
    if not in_container(host) or size is None:
        pytest.skip("not a container with a sized /dev/shm")
    stat = os.statvfs("/dev/shm")
    assert size == stat.f_blocks * stat.f_frsize
