"""The one native driver (native/driver.py) on a stand-in child speaking the line protocol: results arrive, a crash or
a hang ends only its own task, and both drivers (run_native's groups, NativeSession's stream) give the same answers."""
from __future__ import annotations

import textwrap

import pytest

from cudnn_doctor.native.runner import run_native
from cudnn_doctor.native.session import NativeSession

# Batch mode: a JSON list of tasks on stdin; each task {"do": "ok"|"crash"|"hang"|"exit", "n": ...}.
CHILD = textwrap.dedent('''
    import json, os, signal, sys, time
    stream = "--stream" in sys.argv
    def answer(i, task):
        print(json.dumps({"task": i, "state": "start"}), flush=True)
        if task["do"] == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        if task["do"] == "hang":
            time.sleep(60)
        if task["do"] == "exit":
            sys.exit(3)
        print("a library writing to stdout", flush=True)
        print(json.dumps({"task": i, "result": {"n": task["n"]}}), flush=True)
    if stream:
        for line in sys.stdin:
            task = json.loads(line)
            answer(task["id"], task)
    else:
        for i, task in enumerate(json.load(sys.stdin)):
            answer(i, task)
''')


@pytest.fixture
def child(tmp_path):
    path = tmp_path / "child.py"
    path.write_text(CHILD)
    return str(path)


def test_groups_run_side_by_side_and_a_crash_or_hang_ends_only_its_task(child):
    groups = [[{"do": "ok", "n": 1}, {"do": "crash"}, {"do": "ok", "n": 3}],
              [{"do": "hang"}, {"do": "ok", "n": 5}],
              [{"do": "exit"}, {"do": "ok", "n": 7}]]
    results = run_native(groups, timeout=20.0, task_timeout=1.0, env={"PATH": "/usr/bin:/bin"}, script=child)
    assert results[0] == [{"n": 1}, {"crashed": "SIGSEGV"}, {"n": 3}]
    assert results[1] == [{"timeout": 1.0}, {"n": 5}]
    assert results[2] == [{"crashed": "exit status 3"}, {"n": 7}]


def test_the_deadline_stops_every_child(child):
    results = run_native([[{"do": "hang"}, {"do": "ok", "n": 2}]], timeout=1.0, task_timeout=30.0,
                         env={"PATH": "/usr/bin:/bin"}, script=child)
    assert results == [[{"timeout": 1.0}, {"error": "no result"}]]


def test_the_streaming_session_gives_the_same_answers(child):
    session = NativeSession(env={"PATH": "/usr/bin:/bin"}, task_timeout=1.0, script=child)
    session.start()
    ids = session.submit([{"do": "ok", "n": 1}, {"do": "crash"}, {"do": "ok", "n": 3}, {"do": "hang"},
                          {"do": "ok", "n": 5}])
    results = session.collect(timeout=20.0)
    assert len(ids) == 5
    assert results == [{"n": 1}, {"crashed": "SIGSEGV"}, {"n": 3}, {"timeout": 1.0}, {"n": 5}]
