"""The kernel log behind CD217 and CD225: every Xid code of the catalogue table is judged by its bucket, a code the
table lacks is still reported with its number and the catalogue's page, /dev/kmsg falls back to journalctl -k -b
(a real program run through the host seam, with a deadline), and a log neither gives is a blind spot (CD225), never
"no Xid"."""
from __future__ import annotations

import os
import time
from types import SimpleNamespace

import pytest

from node_kit import gpu_address, node
from test_gpu_health import judge

from cudnn_doctor.host import Host
from cudnn_doctor.model import Facts
from cudnn_doctor.model_node import GpuHealth, NodeFacts
from cudnn_doctor.probes.node import _kernel_log, read_journal
from cudnn_doctor.rules import RuleContext, evaluate
from hermetic import shipped_compat

COMPAT = shipped_compat()
ROWS = COMPAT.sourced_rows("node_health", "xid")
SEVERITY = {"reset_gpu": "error", "reboot": "error", "restart_app": "warning", "check_power": "warning",
            "note": "info"}


def test_the_table_holds_the_catalogues_common_codes_each_with_its_bucket_and_page():
    codes = [r["code"] for r in ROWS]
    assert len(codes) == len(set(codes)) and len(codes) >= 40
    assert {13, 31, 43, 45, 48, 63, 64, 74, 79, 92, 94, 95, 109, 119, 120, 140, 154} <= set(codes)
    for row in ROWS:
        assert row["action"] in SEVERITY and row["bucket"] and row["mnemonic"].isupper() and row["name"]
        assert row["source"] == "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html"


def _judged_xids(facts: Facts):
    return [f for f in evaluate(facts, RuleContext(compat=COMPAT))[0] if f.id == "CD217"]


def _xid_facts(code: int) -> Facts:
    facts = Facts()
    facts.node = NodeFacts(gpus=[GpuHealth(index=0, bus_id=gpu_address(0))], kernel_log="/dev/kmsg", xid_events=[
        {"kind": "Xid", "pci": gpu_address(0)[:10], "code": code, "count": 1, "text": "", "seconds_after_boot": 1.0}])
    return facts


@pytest.mark.parametrize("row", ROWS, ids=lambda r: "xid%d" % r["code"])
def test_each_code_is_judged_by_its_catalogue_bucket(row):
    [event] = _judged_xids(_xid_facts(row["code"]))
    assert event.severity.value == SEVERITY[row["action"]]
    assert row["name"] in event.title and row["mnemonic"] in event.title and row["bucket"] in event.detail
    assert (event.remedy is None) == (row["action"] == "note")
    if row["action"] == "reset_gpu":
        assert "sudo nvidia-smi --gpu-reset -i 0" in event.remedy.text


@pytest.mark.parametrize("code", [0, 1, 200, 9999])
def test_a_code_the_table_lacks_is_reported_with_its_number_and_the_catalogue(code):
    if COMPAT.xid(code):
        pytest.skip("in the table")
    [event] = _judged_xids(_xid_facts(code))
    assert event.severity.value == "warning" and "Xid %d on GPU 0" % code in event.title
    assert "https://docs.nvidia.com/deploy/xid-errors/" in event.title and event.evidence["code"] == code


def _facts_unread(root: str = "/", kernel_log=None) -> Facts:
    facts = Facts()
    facts.host.root = root
    facts.node = NodeFacts(gpus=[GpuHealth(index=0)], kernel_log=kernel_log)
    facts.searched["node"] = ["/dev/kmsg", "journalctl -k -b"]
    return facts


@pytest.mark.parametrize("facts, fires", [
    (_facts_unread(), True),
    (_facts_unread(kernel_log="journalctl -k -b"), False),  # read from the journal
    (_facts_unread(root="/mnt/image"), False),  # a tree under --root has no running kernel
])
def test_a_kernel_log_that_cannot_be_read_is_a_blind_spot_not_a_clean_bill(facts, fires):
    found = [f for f in evaluate(facts, RuleContext(compat=COMPAT))[0] if f.id == "CD225"]
    assert bool(found) == fires
    if fires:
        [note] = found
        assert note.severity.value == "info" and "/dev/kmsg, journalctl -k -b" in note.title
        assert "systemd-journal" in note.remedy.text and "check" in note.remedy.text


def test_a_fake_root_with_no_kernel_log_says_nothing_of_it(machine):
    facts, found = judge(node(machine, gpus=1))
    assert facts.node.kernel_log is None and "CD225" not in found and "CD217" not in found


LOG = ("[    5.123456] host kernel: Linux version 6.8.0\n"
       "[ 4321.500000] host kernel: NVRM: Xid (PCI:0000:10:00): 48, pid=9, name=python, An uncorrectable ECC error\n")


class _Host:
    is_live = True

    def __init__(self, kmsg, journal):
        self.kmsg, self.journal, self.calls = kmsg, journal, []

    def read_records(self, inside, limit):
        self.calls.append("kmsg")
        return None if self.kmsg is None else self.kmsg.encode()

    def run_program(self, name, args, timeout):
        self.calls.append("journal")
        return None if self.journal is None else (0, self.journal.encode())


@pytest.mark.parametrize("kmsg, journal, source", [
    ("6,1,100,-;Linux version 6.8.0\n", LOG, "/dev/kmsg"),
    (None, LOG, "journalctl -k -b"),
    (None, None, None),
])
def test_the_journal_is_read_only_where_kmsg_is_closed_and_the_source_is_named(kmsg, journal, source):
    host, node_facts, searched = _Host(kmsg, journal), NodeFacts(), []
    _kernel_log(SimpleNamespace(host=host, searched=lambda probe, place: searched.append(place)), node_facts)
    assert node_facts.kernel_log == source and host.calls == (["kmsg"] if kmsg else ["kmsg", "journal"])
    if source == "journalctl -k -b":
        [event] = node_facts.xid_events
        assert (event["code"], event["seconds_after_boot"]) == (48, 4321.5)


def _journalctl(folder, body: str) -> dict:
    """An environment whose PATH finds a fake journalctl running ``body``."""
    script = folder / "journalctl"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return {"PATH": str(folder)}


@pytest.mark.parametrize("body, expected", [
    ("printf '%s'\n" % LOG.replace("\n", "\\n"), LOG),
    ("echo '-- No entries --'\n", None),  # no right to see kernel messages
    ("echo 'Failed to open journal'; exit 1\n", None),
])
@pytest.mark.live  # the live host runs the fake journalctl its PATH finds; it reads nothing of the machine
def test_journalctl_runs_through_the_host_seam(tmp_path, body, expected):
    assert read_journal(Host(root="/", env=_journalctl(tmp_path, body))) == expected


@pytest.mark.live
def test_a_journalctl_that_hangs_is_stopped_at_its_deadline(tmp_path):
    host = Host(root="/", env=_journalctl(tmp_path, "exec sleep 30\n"))
    started = time.monotonic()
    assert read_journal(host, timeout=0.5) is None and time.monotonic() - started < 5


def test_no_journal_is_read_under_root(tmp_path):
    (tmp_path / "bin").mkdir()
    env = _journalctl(tmp_path / "bin", "echo x\n")
    assert os.access(tmp_path / "bin" / "journalctl", os.X_OK)
    assert read_journal(Host(root=str(tmp_path), env=env)) is None
