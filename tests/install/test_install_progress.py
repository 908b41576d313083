"""`install` tells its progress bar what it is doing after the download: each file it unpacks (with the bytes so
far), the load check of the unpacked library, placing the files, and the check of the installed library."""
from __future__ import annotations

import io
import sys

import pytest

import archive_factory as af


@pytest.fixture
def world(machine, tmp_path):
    return af.toolkit_and_tarball(machine, tmp_path)


def test_unpacking_and_verifying_are_reported_in_order(world):
    from cudnn_doctor.install import Request, run_install

    seen = []
    req = Request(source=str(world["archive"]), cuda_home=str(world["home"]), smoke=False, check=False,
                  on_stage=lambda what, done: seen.append((what, done)))
    assert run_install(req).installed
    names = [what for what, _ in seen]
    unpacked = [n for n in names if n.startswith("unpacking ")]
    assert unpacked and any("libcudnn.so" in n for n in unpacked)
    after = names[len(unpacked):]
    assert after[0] == "verifying that the unpacked library loads"
    assert after[1].startswith("installing files into ") and after[2] == "verifying the installed library"
    counts = [done for _, done in seen]
    assert counts == sorted(counts) and counts[-1] > 0


def test_the_bar_on_a_terminal_shows_the_stages(monkeypatch):
    from cudnn_doctor.commands import install as cmd

    buf = io.StringIO()
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    monkeypatch.setattr(cmd, "console", lambda stderr=False, color=None: __import__("rich.console").console.Console(
        file=buf, force_terminal=True, width=120))
    download, stage, stop = cmd._progress_callback(True)
    assert download is not None and stage is not None
    stage("unpacking libcudnn_engines_precompiled.so.9.1.0", 1 << 20)
    stage("verifying the installed library", 2 << 20)
    stop()
    assert "verifying the installed library" in buf.getvalue()
