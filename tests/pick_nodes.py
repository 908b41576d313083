"""Saved `check --json` reports of fake compute nodes for pick's tests: the real rules and the real renderer
judge a real_machine() with the driver and GPUs replaced."""
from __future__ import annotations

import json
from typing import Optional, Sequence, Tuple

from facts_factory import driver, gpu, real_machine

from cudnn_doctor.commands.check_run import exit_code_for
from cudnn_doctor.diagnose import collect_report
from cudnn_doctor.render.envelope import dumps
from cudnn_doctor.render.json_report import report_json


def node_facts(driver_version: Optional[str], driver_cuda: Optional[str], gpus: Sequence[Tuple[str, str]],
               toolkit: bool = True, python: str = "", machine: str = "", glibc: str = ""):
    """python/machine/glibc: the node's environment Python ("3.10"), processor and glibc, where the test says."""
    facts = real_machine()
    if python:
        facts.python.pythons = [{"site": "/opt/venv/lib/python%s/site-packages" % python, "version": python,
                                 "source": "/opt/venv/pyvenv.cfg"}]
    facts.host.machine = machine or facts.host.machine
    facts.host.glibc = glibc or facts.host.glibc
    facts.driver = driver(driver_version, driver_cuda) if driver_version else facts.driver
    facts.gpus = [gpu(i, name=name, cc=cc) for i, (name, cc) in enumerate(gpus)]
    if not toolkit:
        facts.toolkits = []
    return facts


def node_report(driver_version: Optional[str], driver_cuda: Optional[str], gpus: Sequence[Tuple[str, str]],
                host: str = "node1", toolkit: bool = True, python: str = "", machine: str = "",
                glibc: str = "") -> str:
    """The text `cudnn-doctor check --json` would print on such a node."""
    report = collect_report(facts=node_facts(driver_version, driver_cuda, gpus, toolkit, python, machine, glibc))
    doc = report_json(report, exit_code_for(report, False))
    doc["host"] = host
    return dumps(doc)


if __name__ == "__main__":  # python tests/pick_nodes.py OUT.json DRIVER CUDA NAME=CC...
    import sys

    pairs = [tuple(a.split("=", 1)) for a in sys.argv[4:]]
    with open(sys.argv[1], "w") as fh:
        fh.write(node_report(sys.argv[2], sys.argv[3] or None, pairs, toolkit=False))  # type: ignore[arg-type]
    json.loads(open(sys.argv[1]).read())
