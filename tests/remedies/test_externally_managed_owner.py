"""A --system-site-packages venv made from an externally managed Python (PEP 668: Debian 12's /usr/bin/python3,
whose standard library folder holds EXTERNALLY-MANAGED) sees the user site, and that Python's own pip refuses every
change there without --break-system-packages ("error: externally-managed-environment"), its uninstall too. check
reads the marker, prints the owner's uninstall with the option, and fix runs it so; the real Debian pip is the judge
(skipped where this machine has no externally managed Python with pip)."""
from __future__ import annotations

import glob
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from cudnn_doctor.host import Host
from cudnn_doctor.probes.python_places import active_venv, owner_managed, user_site_owner

MARKER = next(iter(sorted(glob.glob("/usr/lib/python3.*/EXTERNALLY-MANAGED"))), None)
DEBIAN = "/usr/bin/python%s" % Path(MARKER).parent.name[len("python"):] if MARKER else ""

pytestmark = [pytest.mark.live, pytest.mark.skipif(
    not DEBIAN or not os.access(DEBIAN, os.X_OK) or subprocess.run(
        [DEBIAN or "false", "-m", "pip", "--version"], capture_output=True).returncode != 0,
    reason="no externally managed Python with pip here (Debian 12's python3 and python3-pip)")]


def _wheel(folder: Path) -> Path:
    """A one-module wheel, made here (no index): what pip installs into the user site."""
    path = folder / "tinypkg-1.0-py3-none-any.whl"
    files = {"tinypkg.py": "X = 1\n",
             "tinypkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
             "tinypkg-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                            "Tag: py3-none-any\n"}
    record = "".join("%s,,\n" % name for name in files) + "tinypkg-1.0.dist-info/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in {**files, "tinypkg-1.0.dist-info/RECORD": record}.items():
            zf.writestr(name, text)
    return path


def test_the_owners_uninstall_is_printed_and_run_as_pep_668_allows(tmp_path):
    from cudnn_doctor.diagnose import fixes_here
    from cudnn_doctor.fixing.environment import find_environment
    from cudnn_doctor.model import Facts, PythonEnvFacts
    from cudnn_doctor.remedies.environments import for_user_site
    from cudnn_doctor.remedies.shell import run

    env = dict(os.environ, HOME=str(tmp_path / "home"), PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    subprocess.run([DEBIAN, "-m", "pip", "install", "-q", "--user", "--break-system-packages", str(_wheel(tmp_path))],
                   env=env, check=True)
    venv = tmp_path / "venv"
    subprocess.run([DEBIAN, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], env=env, check=True)
    cfg = active_venv(Host(env={"VIRTUAL_ENV": str(venv)}))[1]
    owner = user_site_owner(cfg)
    assert owner is not None and owner_managed(Host(), cfg)
    plain = tmp_path / "plain"  # this interpreter's venv (pyenv's, or the CI's own): not externally managed
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(plain)], check=True)
    assert owner_managed(Host(), active_venv(Host(env={"VIRTUAL_ENV": str(plain)}))[1]) is (
        os.path.isfile(os.path.join(sys.base_prefix, "lib", "python%d.%d" % sys.version_info[:2], "EXTERNALLY-MANAGED")))

    user = subprocess.run([str(venv / "bin" / "python"), "-c", "import site; print(site.getusersitepackages())"],
                          env=env, capture_output=True, text=True, check=True).stdout.strip()
    facts = Facts(python=PythonEnvFacts(site_dirs=[user], user_sites=[user], user_site_owner=owner,
                                        user_site_owner_managed=True))
    with fixes_here():
        printed = for_user_site(facts, user, run("pip uninstall -y tinypkg")).commands
    assert printed == ["%s -m pip uninstall --break-system-packages -y tinypkg" % owner]
    # the oracle: the owner's pip refuses the line without the option and runs the printed one
    refused = subprocess.run([owner, "-m", "pip", "uninstall", "-y", "tinypkg"], env=env, capture_output=True,
                             text=True)
    assert refused.returncode != 0 and "externally-managed-environment" in refused.stdout + refused.stderr
    assert subprocess.run(["bash", "-c", printed[0]], env=env, capture_output=True).returncode == 0
    assert not glob.glob(os.path.join(user, "tinypkg*"))

    # fix finds the same: the environment's owner is managed, and its pip steps carry the option
    found = find_environment(dict(env, VIRTUAL_ENV=str(venv)), [])
    assert found is not None and found.base_managed and found.user_pip("uninstall")[-2:] == [
        "uninstall", "--break-system-packages"]
