"""`pick cudnn`'s installer line names a CUDA toolkit home of the chosen build's CUDA: never torch's pip wheel folder
(.../site-packages/nvidia/cu13, which `check` reports as a toolkit of kind pip) nor a conda environment, whose own
channel installs cuDNN (the pip line stays). Before, the newest toolkit's path was the --cuda-home, whatever it was."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from facts_factory import toolkit  # noqa: E402
from pick_nodes import node_facts  # noqa: E402

from cudnn_doctor.pick.answer import answer  # noqa: E402
from cudnn_doctor.pick.cudnn import pick_cudnn  # noqa: E402
from cudnn_doctor.pick.machine import from_facts, from_report  # noqa: E402
from hermetic import shipped_compat  # noqa: E402

COMPAT = shipped_compat()
WHEEL = "/home/u/venv/lib/python3.12/site-packages/nvidia/cu13"
H100 = ("580.95.05", "13.0", [("NVIDIA H100 80GB HBM3", "9.0")])


def _install(toolkits, via_report=False):
    facts = node_facts(*H100)
    facts.toolkits = toolkits
    if via_report:
        from pick_nodes import collect_report, dumps, exit_code_for, report_json

        report = collect_report(facts=facts)
        machine = from_report(dumps(report_json(report, exit_code_for(report, False))), "node.json", COMPAT)
    else:
        machine = from_facts(facts, COMPAT)
    pick = pick_cudnn(COMPAT, "", machine)
    assert pick.chosen is not None, pick.why_none
    return pick.chosen.build, answer(COMPAT, pick)["install"]


@pytest.mark.parametrize("via_report", [False, True], ids=["this-machine", "against-node"])
def test_a_pip_wheel_folder_is_no_cuda_home(via_report):
    build, install = _install([toolkit("13.0.2", path=WHEEL, kind="pip")], via_report)
    assert build.cuda.startswith("13")
    assert "cudnn-doctor" not in install, install  # no home for CUDA 13: the wheel is the way
    assert install["pip"].startswith("pip install nvidia-cudnn-cu13=="), install
    assert WHEEL not in repr(install)


@pytest.mark.parametrize("via_report", [False, True], ids=["this-machine", "against-node"])
def test_the_system_toolkit_of_the_builds_cuda_is_the_home(via_report):
    build, install = _install([toolkit("13.0.2", path=WHEEL, kind="pip"),
                               toolkit("13.0.1", path="/usr/local/cuda-13.0", kind="system"),
                               toolkit("12.8.1", path="/usr/local/cuda-12.8", kind="system")], via_report)
    assert install["cudnn-doctor"].endswith("--cuda 13 --cuda-home /usr/local/cuda-13.0"), install


def test_a_home_of_another_cuda_major_is_not_named():
    build, install = _install([toolkit("13.0.2", path=WHEEL, kind="pip"),
                               toolkit("12.8.1", path="/usr/local/cuda-12.8", kind="system")])
    assert build.cuda.startswith("13") and "cudnn-doctor" not in install, install
