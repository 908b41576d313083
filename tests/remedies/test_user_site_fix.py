"""Where a fix's pip install lands. A framework installed with `pip install --user` is fixed in its user site (`pip
install --user`): a plain install lands in the active environment and changes nothing the framework loads
(tests/realworld_cases.py's torch291-user-site-cudnn95 shows the load with the real loader). A wheel in a folder a
.pth file adds makes pip answer "Requirement already satisfied": the fix installs with --ignore-installed
(regression draw 404-24). The pin is the real torch 2.9.1 wheel's."""
from __future__ import annotations

import pytest

from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.model import Facts, FrameworkFacts, PythonEnvFacts
from cudnn_doctor.rules import RuleContext, evaluate

USER = "/home/u/.local/lib/python3.11/site-packages"
VENV = "/home/u/venv/lib/python3.11/site-packages"
PIN = 'nvidia-cudnn-cu12==9.10.2.21; platform_system == "Linux" and platform_machine == "x86_64"'


@pytest.mark.parametrize("site, user", [(USER, True), (VENV, False)])
def test_the_pip_install_goes_where_the_framework_is(site, user):
    fw = FrameworkFacts(name="torch", version="2.9.1", location=site, cuda_build=True, cudnn_version="9.8.0",
                        requires=[PIN])
    facts = Facts(python=PythonEnvFacts(
        site_dirs=[VENV, USER], frameworks=[fw], user_sites=[USER],
        nvidia_wheels=[{"name": "nvidia-cudnn-cu12", "version": "9.5.1.17", "location": site}]))
    found = [f for f in evaluate(facts, RuleContext(compat=load_compat()))[0] if f.id == "CD702"]
    assert len(found) == 1
    installs = [c for c in found[0].remedy.commands if "install" in c]
    assert installs and all(c.startswith("pip install --user " if user else "pip install \"") for c in installs), \
        installs
    assert ("pip install --user" in found[0].remedy.text) == user


def test_a_wheel_a_pth_folder_holds_does_not_satisfy_the_fix():
    pth = "/home/u/extra"
    fw = FrameworkFacts(name="torch", version="2.9.1", location=VENV, cuda_build=True, cudnn_version="9.8.0",
                        requires=[PIN])
    facts = Facts(python=PythonEnvFacts(
        site_dirs=[VENV, pth], frameworks=[fw],
        nvidia_wheels=[{"name": "nvidia-cudnn-cu12", "version": "9.5.1.17", "location": VENV},
                       {"name": "nvidia-cudnn-cu12", "version": "9.5.1.17", "location": pth, "via": ".pth"}]))
    found = [f for f in evaluate(facts, RuleContext(compat=load_compat()))[0] if f.id == "CD702"]
    installs = [c for f in found for c in f.remedy.commands if "install" in c]
    assert installs and all(c.startswith("pip install --ignore-installed ") for c in installs), installs


def test_an_uninstall_in_the_user_site_a_venv_sees_is_run_by_the_sites_owner():
    # draw 20261130-1: JAX's CUDA 12 build in the user site a --system-site-packages venv sees; `pip uninstall` in the
    # venv says "Not uninstalling ... outside environment", so the move to JAX's CUDA 13 build left both in place
    from cudnn_doctor.diagnose import fixes_here
    from cudnn_doctor.remedies.environments import for_user_site
    from cudnn_doctor.remedies.shell import run

    owner = "/usr/local/bin/python3.11"
    facts = Facts(python=PythonEnvFacts(site_dirs=[VENV, USER], user_sites=[USER], user_site_owner=owner))
    with fixes_here():
        fix = for_user_site(facts, USER, run("pip uninstall -y jax-cuda12-plugin", 'pip install "jax-cuda13-pjrt"'))
        assert fix.commands == [owner + " -m pip uninstall -y jax-cuda12-plugin", 'pip install --user "jax-cuda13-pjrt"']
        # a release the --user install replaces is uninstalled by the owner first (draw 20261201-123: pip in the
        # venv left the old release's dist-info beside the new one's); the install stays the venv's pip, which
        # writes the user site of its own Python
        facts.python.nvidia_wheels = [{"name": "nvidia-cudnn-cu12", "version": "9.3.0.75", "location": USER}]
        fix = for_user_site(facts, USER, run('pip install "nvidia-cudnn-cu12==9.10.2.21" "nvidia-nccl-cu12"'))
        assert fix.commands == [owner + " -m pip uninstall -y nvidia-cudnn-cu12",
                                'pip install --user "nvidia-cudnn-cu12==9.10.2.21" "nvidia-nccl-cu12"'], fix.commands
        # Debian 12's python3 is externally managed (PEP 668): its pip changes the user site only when told to
        facts.python.user_site_owner_managed = True
        fix = for_user_site(facts, USER, run('pip install "nvidia-cudnn-cu12==9.10.2.21"', "pip uninstall -y x"))
        assert fix.commands == [owner + " -m pip uninstall --break-system-packages -y nvidia-cudnn-cu12",
                                'pip install --user "nvidia-cudnn-cu12==9.10.2.21"',
                                owner + " -m pip uninstall --break-system-packages -y x"], fix.commands
        facts.python.user_site_owner = None  # no venv active: pip itself removes from the user site
        assert for_user_site(facts, USER, run("pip uninstall -y x")).commands == ["pip uninstall -y x"]
        assert for_user_site(facts, VENV, run("pip uninstall -y x")).commands == ["pip uninstall -y x"]
