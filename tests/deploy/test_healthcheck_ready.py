"""deploy/slurm/cudnn-doctor-healthcheck's choice of check --ready: by default only where no job can be using the
GPUs (the node IDLE, or a Prolog before its job starts), as CUDNN_DOCTOR_READY=1/0 force it on or off; run with a
fake scontrol and a fake cudnn-doctor that records its arguments."""
from __future__ import annotations

import json
import subprocess

import pytest
from engines import REPO

HEALTHCHECK = REPO / "deploy" / "slurm" / "cudnn-doctor-healthcheck"


@pytest.mark.parametrize("state, job, setting, ready", [
    ("IDLE", None, None, True),
    ("IDLE+DRAIN", None, None, True),  # a drained, idle node: proving it ready is what resuming it needs
    ("MIXED", None, None, False),  # jobs hold some GPUs: a context would cost them memory
    ("ALLOCATED", "42", None, True),  # a Prolog: this job has not started on its GPUs yet
    ("IDLE", None, "0", False),
    ("ALLOCATED", None, "1", True),
])
def test_ready_runs_only_where_no_job_can_be_using_the_gpus(tmp_path, state, job, setting, ready):
    bin_dir, reports = tmp_path / "bin", tmp_path / "reports"
    bin_dir.mkdir()
    (bin_dir / "scontrol").write_text(
        "#!/bin/sh\n[ \"$1\" = -o ] && echo 'NodeName=gpu001 Arch=x86_64 State=%s Reason=' || true\n" % state)
    args = tmp_path / "args"
    report = {"command": "check", "findings": [], "exit_code": 0}
    (bin_dir / "fake-doctor").write_text(
        "#!/bin/sh\necho \"$@\" > %s\nwhile [ $# -gt 0 ]; do [ \"$1\" = --output-file ] && echo '%s' > \"$2\"; shift; "
        "done\nexit 0\n" % (args, json.dumps(report)))
    for tool in ("scontrol", "fake-doctor"):
        (bin_dir / tool).chmod(0o755)
    script = tmp_path / "healthcheck"  # the script puts the system's folders first on PATH: ours go before them
    script.write_text(HEALTHCHECK.read_text().replace("\nPATH=", "\nPATH=%s:" % bin_dir, 1))
    env = {"PATH": "/usr/bin:/bin", "SLURMD_NODENAME": "gpu001", "CUDNN_DOCTOR": str(bin_dir / "fake-doctor"),
           "CUDNN_DOCTOR_REPORT_DIR": str(reports), "CUDNN_DOCTOR_CONFIG": str(tmp_path / "none")}
    env.update({"SLURM_JOB_ID": job} if job else {})
    env.update({"CUDNN_DOCTOR_READY": setting} if setting else {})
    done = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert ("--ready" in args.read_text().split()) == ready
