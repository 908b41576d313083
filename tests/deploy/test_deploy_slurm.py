"""deploy/slurm against the real Slurm: slurmctld + slurmd + munge started here on loopback, a real sbatch/srun of
`check` then `fleet`, and the HealthCheckProgram draining (and resuming) the node, seen in `scontrol show node`."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
from engines import REPO, apt_tool, doctor_command
from kit import FakeMachine, Gpu, Health, have_gcc

MA = "/usr/lib/x86_64-linux-gnu"
NODE = "gpu001"  # Debian's Slurm is built without --enable-multiple-slurmd: one node, several steps
HEALTHCHECK = REPO / "deploy" / "slurm" / "cudnn-doctor-healthcheck"
SBATCH = REPO / "deploy" / "slurm" / "fleet-check.sbatch"

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="slurmd and munged must run as root")


def fake_node(root: Path, broken: bool) -> FakeMachine:
    """A healthy node, or one whose software is fine but whose GPU waits for a reset to remap a bad memory row."""
    m = FakeMachine(root)
    m.driver("580.95.05", cuda=13000, gpus=[Gpu()], health=[Health(remap_pending=1)] if broken else ())
    m.ld_conf("x86_64-linux-gnu.conf", [MA])
    m.toolkit("13.0.2", layout="deb")
    m.cudnn("9.14.0", MA, "/usr/include/x86_64-linux-gnu", cuda=13000, header_name="cudnn_version_v9.h")
    m.ld_cache()
    return m


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout: float, what: str):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError("timed out after %ds waiting for %s" % (timeout, what))


class Cluster:
    """A one-node Slurm cluster on 127.0.0.1 with its own munge socket, ports, state and config."""

    def __init__(self, base: Path):
        self.base = base
        self.procs = []
        self.conf = base / "slurm.conf"
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))
        for var in [k for k in self.env if k.startswith("SLURM_") and k != "SLURM_CONF"]:
            del self.env[var]

    def start_munge(self, munged: str) -> None:
        key = self.base / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        self.munge_socket = self.base / "munge.sock"
        self.daemon([munged, "-F", "--force", "--key-file", str(key), "--socket", str(self.munge_socket),
                     "--pid-file", str(self.base / "munged.pid"), "--log-file", str(self.base / "munged.log"),
                     "--seed-file", str(self.base / "munged.seed")], "munged")
        wait_for(self.munge_socket.exists, 20, "the munge socket")

    def write_conf(self, healthcheck: Path) -> None:
        for d in ("state", "spool"):
            (self.base / d).mkdir()
        self.conf.write_text("\n".join([
            "ClusterName=cdtest",
            "SlurmctldHost=%s(127.0.0.1)" % socket.gethostname().split(".")[0],
            "SlurmUser=root", "SlurmdUser=root",
            "SlurmctldPort=%d" % free_port(), "SlurmdPort=%d" % free_port(),
            "AuthType=auth/munge", "CredType=cred/munge", "AuthInfo=socket=%s" % self.munge_socket,
            "StateSaveLocation=%s/state" % self.base, "SlurmdSpoolDir=%s/spool" % self.base,
            "SlurmctldPidFile=%s/slurmctld.pid" % self.base, "SlurmdPidFile=%s/slurmd.pid" % self.base,
            "SlurmctldLogFile=%s/slurmctld.log" % self.base, "SlurmdLogFile=%s/slurmd.log" % self.base,
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "MpiDefault=none",
            "SchedulerType=sched/builtin", "SelectType=select/linear", "ReturnToService=2",
            "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
            "HealthCheckProgram=%s" % healthcheck, "HealthCheckInterval=3", "HealthCheckNodeState=ANY",
            "NodeName=%s NodeHostname=%s NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN"
            % (NODE, socket.gethostname().split(".")[0]),
            "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        ]) + "\n")

    def daemon(self, argv, name: str) -> None:
        log = open(self.base / ("%s.out" % name), "wb")
        self.procs.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=self.env))

    def run(self, *argv, timeout=120) -> subprocess.CompletedProcess:
        return subprocess.run(list(argv), env=self.env, capture_output=True, text=True, timeout=timeout)

    def node_line(self) -> str:
        return self.run("scontrol", "-o", "show", "node", NODE).stdout.strip()

    def logs(self) -> str:
        return "\n".join("== %s\n%s" % (p.name, p.read_text(errors="replace")[-3000:])
                         for p in sorted(self.base.glob("*.log")) + sorted(self.base.glob("*.out")))

    def stop(self) -> None:
        for p in reversed(self.procs):  # only the daemons this test started, by their own handles
            p.terminate()
        for p in reversed(self.procs):
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


@pytest.fixture
def cluster(tmp_path_factory):
    if not have_gcc():
        pytest.skip("gcc is needed to build the fake NVIDIA libraries")
    tools = {}
    for binary, packages in (("munged", ["munge"]), ("slurmctld", ["slurm-wlm"]), ("slurmd", ["slurm-wlm"]),
                             ("srun", ["slurm-client"]), ("scontrol", ["slurm-client"])):
        tools[binary], why = apt_tool(binary, packages)
        if tools[binary] is None:
            pytest.skip(why)
    # Short path: munge and slurm sockets live here (sun_path is 108 bytes).
    base = Path(tmp_path_factory.mktemp("slurm"))
    c = Cluster(base)
    try:
        c.start_munge(tools["munged"])
        c.hc_config = base / "cudnn-doctor.conf"
        c.reports = base / "reports"
        hc = base / "healthcheck.sh"
        # slurmd runs the health check with an almost empty environment: point it at this cluster and settings.
        hc.write_text("#!/bin/sh\nexport SLURM_CONF=%s CUDNN_DOCTOR_CONFIG=%s\nexec %s\n"
                      % (c.conf, c.hc_config, HEALTHCHECK))
        hc.chmod(0o755)
        c.write_conf(hc)
        c.daemon([tools["slurmctld"], "-D", "-c", "-f", str(c.conf)], "slurmctld")
        if not wait_for_or_none(lambda: c.run("scontrol", "ping").returncode == 0, 30):
            pytest.skip("slurmctld did not start here:\n" + c.logs())
        yield c
    finally:
        c.stop()


def wait_for_or_none(predicate, timeout):
    try:
        return wait_for(predicate, timeout, "")
    except AssertionError:
        return None


def set_root(c: Cluster, root: Path) -> None:
    c.hc_config.write_text('CUDNN_DOCTOR="%s"\nCUDNN_DOCTOR_REPORT_DIR=%s\nCUDNN_DOCTOR_ARGS="--root %s"\n'
                           % (doctor_command(), c.reports, root))


def test_srun_checks_every_node_then_fleet_merges_and_the_healthcheck_drains(cluster, tmp_path):
    c = cluster
    healthy, broken = fake_node(tmp_path / "healthy", False), fake_node(tmp_path / "broken", True)
    set_root(c, healthy.root)
    slurmd = shutil.which("slurmd")
    c.daemon([slurmd, "-D", "-f", str(c.conf), "-N", NODE], "slurmd")
    line = wait_for_or_none(lambda: "State=IDLE" in c.node_line() and c.node_line(), 60)
    if not line:
        pytest.skip("slurmd did not register here:\n" + c.node_line() + "\n" + c.logs())

    # 1. The sbatch recipe: srun runs `check` once per node, then `fleet` merges the reports.
    out = tmp_path / "fleet-job.out"
    job = c.run("sbatch", "--wait", "-o", str(out), "--chdir", str(tmp_path),
                "--export=ALL,CUDNN_DOCTOR=%s,CUDNN_DOCTOR_REPORT_DIR=%s,CUDNN_DOCTOR_ARGS=--root %s"
                % (doctor_command(), tmp_path / "job-reports", healthy.root), str(SBATCH), timeout=180)
    text = out.read_text() if out.exists() else ""
    print("$ sbatch --wait fleet-check.sbatch\n%s%s\n--- job output ---\n%s" % (job.stdout, job.stderr, text))
    assert job.returncode == 0, job.stderr + text + c.logs()
    # The healthy root may have warnings (which ones is the rules' business), never an error.
    assert "1 node: " in text and ", 0 error" in text and "Configuration groups" in text
    [report] = list((tmp_path / "job-reports").glob("*/%s.json" % NODE))
    assert '"host": "%s"' % NODE in report.read_text()

    # 2. The GPU breaks: the HealthCheckProgram drains the node, the finding id and what it means in the reason.
    set_root(c, broken.root)
    drained = wait_for(lambda: "cudnn-doctor: CD212" in c.node_line() and c.node_line(), 90, "the drain")
    show = c.run("scontrol", "show", "node", NODE).stdout
    print("$ scontrol show node %s\n%s" % (NODE, show))
    assert "DRAIN" in drained and "Reason=cudnn-doctor: CD212 GPU 0: a row remap is pending" in show
    assert (c.reports / ("%s.json" % NODE)).exists()

    # 3. Healthy again: it resumes the node it drained.
    set_root(c, healthy.root)
    line = wait_for(lambda: "DRAIN" not in c.node_line() and c.node_line(), 90, "the resume")
    print("after repair: %s" % line)
    assert "cudnn-doctor" not in line

    # 4. A node an admin drained stays drained, whatever cudnn-doctor finds.
    assert c.run("scontrol", "update", "NodeName=%s" % NODE, "State=DRAIN", "Reason=maintenance").returncode == 0
    before = (c.reports / ("%s.json" % NODE)).stat().st_mtime
    wait_for(lambda: (c.reports / ("%s.json" % NODE)).stat().st_mtime > before, 60, "another health check")
    set_root(c, broken.root)
    before = (c.reports / ("%s.json" % NODE)).stat().st_mtime
    wait_for(lambda: (c.reports / ("%s.json" % NODE)).stat().st_mtime > before, 60, "another health check")
    time.sleep(1)
    line = c.node_line()
    assert "Reason=maintenance" in line and "DRAIN" in line, line
