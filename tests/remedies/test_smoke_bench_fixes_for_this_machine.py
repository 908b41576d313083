"""smoke's and bench's fixes are built for the machine they run on, as the user who started them, like check's: a
zipapp or venv cudnn-doctor is named by its absolute start words, root types no sudo, and a user whose run sudo
started types sudo again back in their own shell. Before, which_cudnn and the CD95x findings used the default
target (`sudo cudnn-doctor install`, which sudo's secure_path cannot find, and `sudo` for root)."""
from __future__ import annotations

import json
import os

import pytest
from clirunner import CliRunner

from cudnn_doctor import which_cudnn
from cudnn_doctor.cli import app
from cudnn_doctor.host import Host
from cudnn_doctor.model import CudnnCopy, Facts, Resolution

ZIPAPP = ("/usr/bin/python3", "-I", "/home/u/cudnn-doctor.pyz")
WORDS = " ".join(ZIPAPP)


@pytest.fixture
def started(monkeypatch):
    """This cudnn-doctor started from a zipapp by the user ``euid`` (through sudo by ``sudo_uid``)."""
    def start(euid: int, sudo_uid=None) -> None:
        monkeypatch.setattr(Host, "doctor_start", staticmethod(lambda: (ZIPAPP, False)))
        monkeypatch.setattr(os, "geteuid", lambda: euid)
        if sudo_uid is None:
            monkeypatch.delenv("SUDO_UID", raising=False)
        else:
            monkeypatch.setenv("SUDO_UID", str(sudo_uid))
    return start


def _facts(copies=()) -> Facts:
    facts = Facts()
    facts.loader.resolved["libcuda.so.1"] = Resolution(name="libcuda.so.1", path="/usr/lib/x86_64-linux-gnu/libcuda.so.1")
    facts.cudnn = [CudnnCopy(path=p, directory=os.path.dirname(p)) for p in copies]
    return facts


@pytest.mark.parametrize("euid,sudo_uid,expect", [
    (1000, None, "install one with `sudo %s install`" % WORDS),
    (0, None, "install one with `%s install`" % WORDS),
    (0, 1000, "install one with `sudo %s install`" % WORDS),  # `sudo cudnn-doctor smoke` by a user
])
def test_no_cudnn_names_this_doctor_for_this_user(started, euid, sudo_uid, expect):
    started(euid, sudo_uid)
    assert expect in which_cudnn.find_libraries(False, facts=_facts()).problem


def test_copies_off_the_loader_path_name_this_doctor(started):
    started(1000)
    problem = which_cudnn.find_libraries(False, facts=_facts(["/opt/x/libcudnn.so.9"])).problem
    assert "`%s smoke --all`" % WORDS in problem and "`cudnn-doctor smoke" not in problem


def test_no_driver_names_this_doctor(started):
    started(1000)
    facts = _facts()
    facts.loader.resolved["libcuda.so.1"] = Resolution(name="libcuda.so.1", path=None)
    choice = which_cudnn.find_libraries(False, facts=facts)
    assert "`%s check`" % WORDS in choice.problem


def _bench_json(monkeypatch, raw):
    from cudnn_doctor.bench import run

    monkeypatch.setattr(which_cudnn, "bench_libraries", lambda library, nvrtc: ("/x/libcudnn.so.9", None, None))
    monkeypatch.setattr(run, "run_bench", lambda *a, **k: raw)
    result = CliRunner().invoke(app, ["bench", "--json", "--no-cpu"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return {f["id"]: f["fix"] for f in json.loads(result.stdout)["findings"]}


WRONG = {"device": {"name": "NVIDIA H100 80GB HBM3", "cc": "9.0"},
         "seed": {"batch": 1, "cudnn": {"step_ms": 1.0, "ok": False,
                                        "checks": [{"op": "conv_fwd", "ok": False, "worst": 1.0}]}}}
SLOW = {"device": {"name": "NVIDIA H100 80GB HBM3", "cc": "9.0"},
        "nvml": {"throttle_reasons": ["sw_power_cap"], "power_limit_w": 300.0, "power_default_limit_w": 700.0}}


@pytest.mark.parametrize("euid", [0, 1000])
def test_bench_findings_are_built_for_this_machine(started, monkeypatch, euid):
    started(euid)
    fixes = _bench_json(monkeypatch, WRONG)
    assert fixes["CD950"].startswith("%s check  # then `%s smoke --all`" % (WORDS, WORDS)), fixes


def test_bench_power_cap_fix_has_no_sudo_for_root(monkeypatch):
    """The CD951 power-limit fix through the rules, for root and for a user (no Facts: the target in effect)."""
    from cudnn_doctor.bench.verdicts import judge
    from cudnn_doctor.model import Target
    from cudnn_doctor.remedies.acting import building_for

    from cudnn_doctor.bench import peaks
    from facts_factory import bench_result

    total = {"dtype": "fp16", "direction": "fwd", "tflops": 30.0, "peak_tflops": 989.5, "peak_fraction": 30 / 989.5}
    nvml = dict(SLOW["nvml"], sm_clock_mhz=800, sm_clock_max_mhz=1980)
    report = bench_result(gpu={"name": "NVIDIA H100 80GB HBM3", "cc": "9.0", "sm_count": 132, "memory_free": 80 << 30},
                          peak=peaks.find_peak("NVIDIA H100 80GB HBM3").to_dict(), nvml=nvml, totals=[total])
    for as_root, expect in ((True, "nvidia-smi -pl 700"), (False, "sudo nvidia-smi -pl 700")):
        with building_for(Target(as_root=as_root, doctor=ZIPAPP, doctor_on_path=False)):
            slow = next(f for f in judge(report) if f.id == "CD951")
        assert slow.fix.startswith(expect), slow.fix
