"""Bad input at the edge and ASCII-only terminals: one line and exit 2 for an option no command can use, a readable
report (exit 0/1, ASCII marks) where the stream cannot encode the usual ones, and `bench --json` always an envelope."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fuzz_support import budget
from hypothesis import given
from hypothesis import strategies as st

import archive_factory as af
from kit import FAKELIBS, build_lib, have_gcc

REPO = Path(__file__).resolve().parents[2]
ASCII_ENVS = [{"PYTHONIOENCODING": "ascii"}, {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0",
                                              "PYTHONCOERCECLOCALE": "0"}]


def run(*args, env=None, stdin=None, timeout=120):
    full = dict(os.environ, PYTHONPATH=str(REPO), CUDNN_DOCTOR_TEST_MACHINE_ROOT="/nonexistent/cudnn-doctor-test")
    full.pop("PYTHONIOENCODING", None)
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "cudnn_doctor", *map(str, args)], cwd=str(REPO), env=full,
                          input=stdin, capture_output=True, timeout=timeout)


def one_usage_line(proc, *words):
    err = proc.stderr.decode("ascii", "replace")
    assert proc.returncode == 2, (proc.returncode, err)
    assert err.count("\n") == 1 and err.startswith("cudnn-doctor: error: ") and "Traceback" not in err, err
    for word in words:
        assert word in err, err
    return err


# --- option values -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["inf", "-inf", "1e308", "nan", "0", "-1"])
@pytest.mark.parametrize("command", [["check"], ["smoke"], ["bench"]])
def test_timeout_must_be_finite_and_positive(command, value):
    one_usage_line(run(*command, "--timeout", value), "--timeout")


@pytest.mark.parametrize("value", ["inf", "nan", "-1"])
@pytest.mark.parametrize("command", ["install", "rollback"])
def test_lock_wait_must_be_finite(command, value, tmp_path):
    one_usage_line(run(command, "--prefix", tmp_path, "--lock-wait", value), "--lock-wait")


@pytest.fixture
def odd_paths(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(str(fifo))
    (tmp_path / "file").write_text("x")
    os.symlink(str(tmp_path / "gone"), str(tmp_path / "dangling"))
    return {"missing": tmp_path / "nope", "fifo": fifo, "file": tmp_path / "file", "dangling": tmp_path / "dangling",
            "folder": tmp_path}


@pytest.mark.parametrize("kind, reason", [("missing", "does not exist"), ("fifo", "named pipe (FIFO)"),
                                          ("file", "regular file"), ("dangling", "does not exist")])
def test_root_and_cuda_home_say_what_they_are_instead(odd_paths, kind, reason):
    one_usage_line(run("check", "--root", odd_paths[kind]), "--root", reason)
    one_usage_line(run("explain", "--root", odd_paths[kind], "--no-check", "x"), "--root", reason)
    one_usage_line(run("install", odd_paths["file"], "--cuda-home", odd_paths[kind]), "--cuda-home", reason)
    one_usage_line(run("rollback", "--cuda-home", odd_paths[kind]), "--cuda-home", reason)


@pytest.mark.parametrize("kind, reason", [("missing", "no such archive"), ("fifo", "named pipe (FIFO), not an archive"),
                                          ("folder", "is a folder, not an archive")])
def test_archive_says_what_it_is_instead(odd_paths, kind, reason, tmp_path):
    one_usage_line(run("install", odd_paths[kind], "--prefix", tmp_path / "p"), reason)


def test_smoke_library_that_is_a_fifo_is_refused_not_opened(odd_paths):
    one_usage_line(run("smoke", "--library", odd_paths["fifo"], timeout=30), "named pipe (FIFO)")


@given(value=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(["1e400", "-0", "0x10"])))
@budget(15)
def test_any_timeout_is_used_or_refused_in_one_line(value):
    from clirunner import CliRunner

    from cudnn_doctor.cli import app

    result = CliRunner().invoke(app, ["check", "--timeout", str(value), "--list-checks"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code in (0, 2)
    if result.exit_code == 2:
        assert len(result.stderr.strip().splitlines()) <= 4 and "Traceback" not in result.stderr


# --- bench --json ------------------------------------------------------------------------------------------

def test_bench_json_without_a_gpu_prints_an_envelope(tmp_path):
    proc = run("bench", "--json", "--library", tmp_path / "libcudnn.so.9")
    doc = json.loads(proc.stdout)
    assert proc.returncode == 2 and doc["command"] == "bench" and doc["exit_code"] == 2 and "--library" in doc["error"]
    if not have_gcc():
        return
    from test_bench_fake import fake_cuda, fake_cudnn

    proc = run("bench", "--json", "--quick", "--no-cpu", "--library", fake_cudnn(), "--driver-library",
               fake_cuda(NDEV=0, INITRC=100))  # CUDA_ERROR_NO_DEVICE: what a machine without a GPU answers
    doc = json.loads(proc.stdout)
    assert proc.returncode == 1 and doc["command"] == "bench" and doc["exit_code"] == 1 and doc.get("error"), proc


# --- ASCII-only streams ------------------------------------------------------------------------------------

def _readable(proc):
    out, err = proc.stdout, proc.stderr
    assert proc.returncode in (0, 1), (proc.returncode, err.decode("ascii", "replace"))
    assert b"Traceback" not in err and b"UnicodeEncodeError" not in err
    assert all(b < 128 for b in out + err), "non-ASCII bytes on an ASCII stream"
    return out.decode("ascii")


@pytest.mark.parametrize("env", ASCII_ENVS, ids=["PYTHONIOENCODING=ascii", "LC_ALL=C"])
def test_check_on_an_ascii_stream_has_ascii_marks(env, machine):
    machine.driver("580.95.05")
    text = _readable(run("check", "--root", machine.root, env=env))
    assert "[x]" in text or "[ok]" in text or "[!]" in text


@pytest.mark.parametrize("env", ASCII_ENVS, ids=["PYTHONIOENCODING=ascii", "LC_ALL=C"])
def test_every_command_reads_on_an_ascii_stream(env, tmp_path):
    _readable(run("explain", "--no-check", "CUDNN_STATUS_NOT_INITIALIZED", env=env))
    assert "12.4" in _readable(run("matrix", "--cuda", "12.4", env=env))
    report = run("check", "--root", tmp_path, "--json")
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "a.json").write_bytes(report.stdout)
    assert "node" in _readable(run("fleet", tmp_path / "reports", env=env))
    if not have_gcc():
        return
    cuda = build_lib("smoke_cuda", source=FAKELIBS / "fake_cuda_mem.c")
    lib = build_lib("smoke_cudnn", source=FAKELIBS / "fake_cudnn_conv.c")
    _readable(run("smoke", "--library", lib, "--driver-library", cuda, env=env))
    archive = af.make("linux-xz", tmp_path / "dl")
    _readable(run("install", archive, "--prefix", tmp_path / "p", "--no-smoke", "--force", env=env))
    _readable(run("rollback", "--prefix", tmp_path / "p", env=env))


@pytest.mark.skipif(not have_gcc(), reason="gcc is needed to build the fake NVIDIA libraries")
@pytest.mark.parametrize("env", ASCII_ENVS, ids=["PYTHONIOENCODING=ascii", "LC_ALL=C"])
def test_bench_tables_on_an_ascii_stream(env):
    from test_bench_fake import SHAPE, fake_cuda, fake_cudnn

    text = _readable(run("bench", "--library", fake_cudnn(), "--driver-library", fake_cuda(), "--no-cpu",
                         "--seed-batch", "1", "--shape", SHAPE, "--dtype", "fp32", env=env))
    assert "+--" in text or "|" in text  # rich drew its tables in ASCII


@given(text=st.text(), encoding=st.sampled_from(["ascii", "latin-1", "cp1252"]))
@budget(60)
def test_any_text_through_the_ascii_stream_is_encodable(text, encoding):
    import io

    from cudnn_doctor.ui import AsciiSafeStream

    raw = io.TextIOWrapper(io.BytesIO(), encoding=encoding, errors="strict")
    stream = AsciiSafeStream(raw)
    assert stream.write(text) == len(text)
    stream.flush()
    raw.buffer.getvalue().decode(encoding)  # it wrote only what the encoding holds
    with pytest.raises(TypeError):
        stream.write(b"bytes")  # click's probe for a binary stream must see a text one
