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
