"""The loader simulation against glibc's real ld.so on this machine (read-only; any Linux will do)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.live

SONAMES = ("libz.so.1", "libm.so.6", "libcudart.so.13", "libcudart.so.12", "libcudnn.so.9")


def _really_loaded(soname: str, env) -> str:
    code = ("import ctypes, os; ctypes.CDLL(%r); "
            "print([l.split()[-1] for l in open('/proc/self/maps') if %r.split('.so')[0] + '.so' in l][0])"
            % (soname, soname))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    return os.path.realpath(proc.stdout.strip()) if proc.returncode == 0 else ""


@pytest.mark.parametrize("soname", SONAMES)
def test_simulation_matches_the_real_loader(soname):
    from cudnn_doctor.host import Host
    from cudnn_doctor.probes.loader import LoaderView

    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD",)}
    view = LoaderView(Host("/", env=env))
    res = view.resolve(soname)
    real = _really_loaded(soname, env)
    if not real and res.path is None:
        pytest.skip("%s is not on this machine" % soname)
    assert res.realpath and os.path.realpath(res.realpath) == real


@pytest.mark.parametrize("kind", ["empty", "garbage", "truncated", "elfclass32"])
def test_broken_first_candidate_matches_glibc(tmp_path, kind):
    """glibc skips another ELF class but fails on a broken file: the simulation must say the same."""
    import shutil
    import subprocess as sp

    from cudnn_doctor.host import Host
    from cudnn_doctor.probes.loader import LoaderView
    from kit import build_lib, have_gcc

    if not have_gcc():
        pytest.skip("needs gcc")
    good, bad = tmp_path / "good", tmp_path / "bad"
    good.mkdir()
    bad.mkdir()
    shutil.copyfile(build_lib("cuda", soname="libfoo.so.1"), good / "libfoo.so.1")
    data = (good / "libfoo.so.1").read_bytes()
    blob = {"empty": b"", "garbage": b"\x13\x37" * 1000, "truncated": data[:100],
            "elfclass32": data[:4] + b"\x01" + data[5:]}[kind]
    (bad / "libfoo.so.1").write_bytes(blob)
    env = dict(os.environ, LD_LIBRARY_PATH="%s:%s" % (bad, good))
    code = ("import ctypes\ntry:\n    ctypes.CDLL('libfoo.so.1'); print('LOADED')\n"
            "except OSError as e:\n    print('ERROR', e)")
    real = sp.run([sys.executable, "-c", code], capture_output=True, text=True, env=env).stdout.strip()
    res = LoaderView(Host("/", env=env)).resolve("libfoo.so.1")
    if real == "LOADED":
        assert res.path == str(good / "libfoo.so.1") and res.error is None
    else:
        assert res.path == str(bad / "libfoo.so.1") and res.error and res.error in real
