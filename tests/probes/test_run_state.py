"""A run's own state (deadline, native child, its time limit) lives in the probes' Run, not in the Host the caller
passed: the same Host observes twice alike, and a short deadline cuts only that run's native time limit."""
from __future__ import annotations

from cudnn_doctor.host import Host
from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.probes import Context, collect
from cudnn_doctor.probes.executor import Deadline
from cudnn_doctor.probes.run import Run


def test_collect_leaves_the_callers_host_as_it_was(machine):
    machine.driver("580.95.05", cuda=13000)
    host = Host(str(machine.root), env={"PATH": "/bin"}, native_timeout=8.0)
    first = collect(host, timeout=2.0, compat=load_compat())
    assert host.native_timeout == 8.0  # the 2-second deadline cut that run's limit, never the host's
    again = collect(host, compat=load_compat())
    assert first.driver.version == again.driver.version == "580.95.05"


def test_a_fifo_met_in_one_run_is_that_runs_alone(machine):
    """Host.not_regular once gathered every run's FIFOs on the caller's Host: a second run reported the first's FIFO
    after it had become a file again."""
    import os

    machine.driver("580.95.05", cuda=13000)
    place = machine.p("/etc/ld.so.conf")
    place.parent.mkdir(parents=True, exist_ok=True)
    place.unlink(missing_ok=True)
    os.mkfifo(place)
    host = Host(str(machine.root), env={"PATH": "/bin"})
    runs = [collect(host, timeout=5.0, compat=load_compat())]
    place.unlink()
    place.write_text("include /etc/ld.so.conf.d/*.conf\n")
    runs.append(collect(host, timeout=5.0, compat=load_compat()))
    assert [[b.path for b in facts.blocked if b.reason == "not-a-regular-file"] for facts in runs] == [
        ["/etc/ld.so.conf"], []]
    assert host.not_regular == []


def test_the_native_limit_is_what_the_deadline_leaves_less_the_reserve(machine):
    host = Host(str(machine.root), env={"PATH": "/bin"}, native_timeout=8.0)
    run = Run(host, Deadline(2.0))
    assert run.native_timeout == 8.0 and run.session is None  # the child starts on first use only
    run.leave_for_after_native()
    assert 0.2 <= run.native_timeout <= 2.0 - run.deadline.reserve()
    assert Context(host).run.deadline is not run.deadline  # a Context outside collect gets a run of its own
