"""The one native child of a `check` run: every native call through a single interpreter, started before the
probes; a library that crashes or hangs marks only its own task and the others still get answers."""
from __future__ import annotations

import subprocess

import pytest

from kit import build_lib, have_gcc

pytestmark = pytest.mark.skipif(not have_gcc(), reason="gcc is needed to build the fake NVIDIA libraries")


def _cudnn(code: int, **flags) -> dict:
    lib = build_lib("cudnn", soname="libcudnn.so.9", CUDNN_V=code, CUDART_V=12040, **flags)
    return {"op": "cudnn", "lib": str(lib), "search_dir": str(lib.parent)}


@pytest.fixture
def spawned(monkeypatch):
    """Count the interpreters the session starts."""
    starts = []
    real = subprocess.Popen

    def popen(*args, **kwargs):
        if "--stream" in args[0]:
            starts.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", popen)
    return starts


def test_all_tasks_share_one_child(spawned):
    from cudnn_doctor.native.session import NativeSession

    session = NativeSession(env={"PATH": "/bin"}, task_timeout=5.0)
    session.start()
    first = session.submit([_cudnn(90100)])
    later = session.submit([_cudnn(81000), {"op": "cudart", "lib": "/nonexistent/libcudart.so.12"}])
    results = session.collect(10.0)
    assert len(spawned) == 1
    assert results[first[0]]["version"] == 90100 and results[later[0]]["version"] == 81000
    assert results[later[1]]["loaded"] is False and "nonexistent" in results[later[1]]["error"]


@pytest.mark.parametrize("flavour,expect", [("CRASH_ON_LOAD", {"crashed": "SIGSEGV"}), ("HANG_ON_LOAD", "timeout")])
def test_a_hostile_copy_marks_only_its_task(spawned, flavour, expect):
    from cudnn_doctor.native.session import NativeSession

    session = NativeSession(env={"PATH": "/bin"}, task_timeout=1.0)
    session.start()
    ids = session.submit([_cudnn(90100), _cudnn(90200, **{flavour: True}), _cudnn(90300)])
    results = session.collect(8.0)
    assert results[ids[0]]["version"] == 90100 and results[ids[2]]["version"] == 90300
    assert results[ids[1]] == (expect if isinstance(expect, dict) else {"timeout": 1.0})
    assert len(spawned) == 1  # the crash or hang was its own fork's; the child went on with the others


def test_tasks_run_side_by_side():
    """A slow task (NVML's init on a real GPU) does not hold up the copies queued after it."""
    import time

    from cudnn_doctor.native.session import NativeSession

    session = NativeSession(env={"PATH": "/bin"}, task_timeout=1.5)
    session.start()
    start = time.monotonic()
    ids = session.submit([_cudnn(90200, HANG_ON_LOAD=True), _cudnn(90100, HANG_ON_LOAD=True), _cudnn(90300)])
    results = session.collect(8.0)
    assert [results[i] for i in ids[:2]] == [{"timeout": 1.5}, {"timeout": 1.5}]
    assert results[ids[2]]["version"] == 90300
    assert time.monotonic() - start < 2 * 1.5  # both hangs were waited for at the same time


def test_a_child_that_dies_is_replaced_for_the_unanswered_tasks(spawned, monkeypatch):
    from cudnn_doctor.native import session as session_mod

    session = session_mod.NativeSession(env={"PATH": "/bin"}, task_timeout=5.0)
    session.start()
    ids = session.submit([_cudnn(90100)])
    session.child.proc.kill()  # the child itself dies (OOM killer, say) before answering
    results = session.collect(8.0)
    assert results[ids[0]]["version"] == 90100
    assert len(spawned) == 2


def test_a_child_that_cannot_start_gives_errors_not_a_hang():
    from cudnn_doctor.native.session import NativeSession

    session = NativeSession(env={"PATH": "/bin"}, script="/nonexistent/child.py")
    ids = session.submit([_cudnn(90100), _cudnn(90200)])
    results = session.collect(5.0)
    assert [set(results[i]) for i in ids] == [{"error"}, {"error"}]


def _libcuda_in(folder, drv: int) -> str:
    """A fake libcuda.so.1 reporting ``drv``, copied into ``folder`` under its soname."""
    import shutil

    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(build_lib("cuda", soname="libcuda.so.1", DRV=drv), folder / "libcuda.so.1")
    return str(folder / "libcuda.so.1")


def test_a_speculative_task_answers_the_probe_task_that_names_the_file_it_loaded(tmp_path):
    from cudnn_doctor.native.session import NativeSession

    path = _libcuda_in(tmp_path / "lib", 12040)
    (tmp_path / "link").symlink_to(tmp_path / "lib")  # the speculative call finds it under another name
    session = NativeSession(env={"PATH": "/bin"}, task_timeout=5.0)
    session.start()
    session.speculate([{"op": "nvml", "lib": None},
                       {"op": "cuda_driver", "lib": str(tmp_path / "link" / "libcuda.so.1")}])
    [later, nvml] = session.submit([{"op": "cuda_driver", "lib": path}, {"op": "nvml", "lib": None}])
    results = session.collect(10.0)
    assert later not in session.sent and nvml not in session.sent  # answered by the speculative calls
    assert results[later] == {"loaded": True, "status": 0, "version": 12040}  # loaded_from stays inside
    direct = NativeSession(env={"PATH": "/bin"}, task_timeout=5.0)
    direct.submit([{"op": "cuda_driver", "lib": path}, {"op": "nvml", "lib": None}])
    assert direct.collect(10.0) == [results[later], results[nvml]]


def test_a_probe_task_naming_another_file_runs_itself(tmp_path):
    from cudnn_doctor.native.session import NativeSession

    first = _libcuda_in(tmp_path / "first", 12040)
    other = _libcuda_in(tmp_path / "second", 13000)
    session = NativeSession(env={"PATH": "/bin"}, task_timeout=5.0)
    session.start()
    session.speculate([{"op": "cuda_driver", "lib": first}])
    [later] = session.submit([{"op": "cuda_driver", "lib": other}])
    results = session.collect(10.0)
    assert later in session.sent and results[later] == {"loaded": True, "status": 0, "version": 13000}


@pytest.mark.parametrize("op", ["nvml", "gpu_health"])  # the driver probe's NVML task and the node probe's
@pytest.mark.parametrize("flavour,expect", [("HANG_IN_INIT", {"timeout": 1.0}),
                                           ("CRASH_IN_INIT", {"crashed": "SIGSEGV"})])
def test_a_speculative_call_that_hangs_or_crashes_after_loading_answers_for_that_file(tmp_path, flavour, expect, op):
    """A wedged driver is met once, not twice: the note of the file it loaded comes before the call that hangs."""
    import shutil

    from cudnn_doctor.native.session import NativeSession

    (tmp_path / "lib").mkdir()
    path = tmp_path / "lib" / "libnvidia-ml.so.1"
    shutil.copy(build_lib("nvml", soname="libnvidia-ml.so.1", **{flavour: True}), path)
    (tmp_path / "link").symlink_to(tmp_path / "lib")
    session = NativeSession(env={"PATH": "/bin"}, task_timeout=1.0)
    session.start()
    session.speculate([{"op": op, "lib": str(tmp_path / "link" / "libnvidia-ml.so.1")}])
    [later] = session.submit([{"op": op, "lib": str(path)}])
    results = session.collect(10.0)
    assert later not in session.sent and results[later] == expect


def test_the_speculative_readiness_answers_only_a_task_for_the_same_gpus(tmp_path):
    """check --ready starts the kernels before its imports (cli._early_native): the probe's task for the same GPUs
    takes that answer, though it names libcuda by another path; a task for another set of GPUs runs itself."""
    import shutil

    from cudnn_doctor.host import ready_task
    from cudnn_doctor.native.session import NativeSession

    (tmp_path / "lib").mkdir()
    path = tmp_path / "lib" / "libcuda.so.1"
    shutil.copy(build_lib("cuda", soname="libcuda.so.1", NDEV=2), path)
    (tmp_path / "link").symlink_to(tmp_path / "lib")
    gpus = [("0000:%02x:00.0" % (0x10 * (i + 1)), "GPU-%08d-0000-4000-8000-000000000000" % i) for i in range(2)]
    session = NativeSession(env={"PATH": "/bin"}, task_timeout=5.0)
    session.start()
    session.speculate([ready_task(str(tmp_path / "link" / "libcuda.so.1"), gpus)])
    ids = session.submit([ready_task(str(path), gpus[1:]), ready_task(str(path), gpus)])
    results = session.collect(10.0)
    assert ids[0] in session.sent and ids[1] not in session.sent  # only the same GPUs' task took the early answer
    assert [(r["index"], r["bus_id"], r["ok"]) for r in results[ids[1]]["gpus"]] == [
        (0, gpus[0][0], True), (1, gpus[1][0], True)]
    assert [(r["bus_id"], r["ok"]) for r in results[ids[0]]["gpus"]] == [(gpus[1][0], True)]


def test_collect_returns_once_every_task_is_answered_not_when_the_child_ends(tmp_path):
    """The child's own end (its select round, its interpreter's teardown: about 5 ms of every `check`) is not
    waited for: a child that answers and then lingers is killed, its answers kept."""
    import os
    import time

    from cudnn_doctor.native.session import NativeSession

    lingering = tmp_path / "lingering_child.py"
    lingering.write_text(
        "import json, sys, time\n"
        "for line in sys.stdin:\n"
        "    task = json.loads(line)\n"
        "    print(json.dumps({'task': task['id'], 'result': {'answered': task['op']}}), flush=True)\n"
        "time.sleep(30)  # after its input closes: a slow exit\n")
    session = NativeSession(env={"PATH": "/bin", "PYTHONPATH": os.environ.get("PYTHONPATH", "")},
                            script=str(lingering))
    session.start()
    ids = session.submit([{"op": "first"}, {"op": "second"}])
    start = time.monotonic()
    results = session.collect(20.0)
    assert [results[i] for i in ids] == [{"answered": "first"}, {"answered": "second"}]
    assert time.monotonic() - start < 10
    assert session.child is None  # killed with its process group, not left behind
