"""cli._leave: a plain `check` ends without the interpreter's teardown, yet as sys.exit would end it."""
import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _python(code: str, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=REPO)
    env.pop("PYTHONUNBUFFERED", None)  # the output must wait in the buffer, as it does for a user
    return subprocess.run([sys.executable, "-c", code], stdout=stdout, stderr=subprocess.PIPE, text=True, env=env,
                          timeout=60)


def test_the_exit_code_buffered_output_threads_and_atexit_all_survive():
    done = _python(
        "import atexit, sys, threading, time\n"
        "from cudnn_doctor.cli import _leave\n"
        "atexit.register(lambda: sys.stdout.write('atexit ran\\n'))\n"
        "def late():\n"
        "    time.sleep(0.2)\n"
        "    sys.stdout.write('thread finished\\n')\n"
        "threading.Thread(target=late).start()\n"
        "sys.stdout.write('x' * 100000 + '\\n')  # still in the buffer when _leave is called\n"
        "_leave(4)\n"
        "sys.stdout.write('never\\n')\n")
    assert done.returncode == 4
    lines = done.stdout.splitlines()
    assert lines == ["x" * 100000, "thread finished", "atexit ran"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (a file every write to fails)")
def test_a_failing_flush_returns_so_sys_exit_reports_it_as_before():
    with open("/dev/full", "w") as full:
        done = _python("import sys\nfrom cudnn_doctor.cli import _leave\nsys.stdout.write('y' * 100)  # buffered: the write succeeds, the flush fails\n"
                       "_leave(0)\nsys.stderr.write('returned\\n')\nsys.exit(0)\n", stdout=full)
    assert "returned" in done.stderr
    assert done.returncode == 120  # what Python itself answers when stdout cannot be flushed at exit


def test_a_whole_check_process_prints_its_whole_report_with_its_code(tmp_path):
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    env = dict(os.environ, PYTHONPATH=REPO, CUDNN_DOCTOR_CACHE_DIR="off")
    done = subprocess.run([sys.executable, "-m", "cudnn_doctor", "check", "--json", "--root", str(root)],
                          capture_output=True, text=True, env=env, timeout=120)
    report = json.loads(done.stdout)
    assert report["command"] == "check" and done.returncode == report["exit_code"]
