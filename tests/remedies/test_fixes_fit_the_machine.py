"""Fix texts come from compat/ and fit the machine: CUDA majors, wheel names, archive builds, toolkit packages.

Every test runs rules over Facts from facts_factory; none touches the filesystem.
"""
from __future__ import annotations

import copy as _copy
import re
from typing import List

import pytest

from cudnn_doctor.knowledge import Compat, load_compat
from cudnn_doctor.versions import release3, ver
from cudnn_doctor.model import Facts, Finding, ToolkitFacts
from cudnn_doctor.rules import RuleContext, evaluate
from cudnn_doctor.queries import cudnn_older
from cudnn_doctor.remedies import reinstall_fix
from cudnn_doctor.rules.common import compat_of
from facts_factory import (PIP_CUDNN, SYSLIB, TORCH_SITE, cudnn_copy, dl4j_machine, driver, framework, gpu,
                           real_machine, resolution, toolkit)

# The fixes these tests build themselves are written for Target() (the live root, a user, sh).
pytestmark = pytest.mark.usefixtures("fix_target")


def run(facts: Facts, compat: Compat = None, **kw) -> List[Finding]:
    findings, _ = evaluate(facts, RuleContext(compat=compat or load_compat(), **kw))
    assert not [f for f in findings if "could not run" in f.title], [f.title for f in findings]
    return findings


def only(findings: List[Finding], rule_id: str, severity: str = None) -> List[Finding]:
    return [f for f in findings if f.id == rule_id and (severity is None or f.severity.value == severity)]


def compat_with(edit) -> Compat:
    """A knowledge base with one table changed, to show a rule follows the data rather than a constant."""
    data = _copy.deepcopy(load_compat().data)
    edit(data)
    return Compat(data, "test")


def archive_release(text: str, cuda_major: int) -> str:
    m = re.search(r"cudnn-linux-[a-z0-9_]+-(\d+\.\d+\.\d+)\.\*_cuda%d-archive\.tar\.xz" % cuda_major, text)
    assert m, text
    return m.group(1)


# --- rules get compat only from the context ------------------------------------------------------------------------


def test_compat_of_needs_the_context():
    with pytest.raises(RuntimeError):
        compat_of(RuleContext())
    assert compat_of(RuleContext(compat=load_compat())) is load_compat()


def test_rules_never_load_compat_themselves(monkeypatch):
    import cudnn_doctor.knowledge as compat_mod

    given = load_compat()
    f = real_machine()
    f.cudnn = []

    def forbidden():
        raise AssertionError("a rule read the knowledge base itself")

    monkeypatch.setattr(compat_mod, "load_compat", forbidden)
    findings = run(f, given, requires=["cudnn>=9", "toolkit>=12.8"], target="dl4j==1.0.0-beta6")
    assert only(findings, "CD401") and only(findings, "CD920")


def test_parse_target_accepts_the_callers_compat(monkeypatch):
    from cudnn_doctor.rules.policy import parse_target
    import cudnn_doctor.knowledge as compat_mod

    given = load_compat()
    monkeypatch.setattr(compat_mod, "load_compat", lambda: (_ for _ in ()).throw(AssertionError("loaded")))
    assert parse_target("dl4j==1.0.0-BETA6", given).version == "1.0.0-beta6"


# --- minor-version compatibility comes from cuda_driver.toml ------------------------------------------------------


def _tf_on_cuda_11_8() -> Facts:
    f = real_machine()
    f.driver = driver("535.104.05", "12.2")
    f.toolkits = [toolkit("11.8", realpath="/usr/local/cuda-11.8")]
    f.python.frameworks = [framework("tensorflow", "2.10.0", cuda_version="11.2", requires=[])]
    f.python.nvidia_wheels = []
    return f


def test_minor_compat_majors_drive_the_runtime_check():
    assert only(run(_tf_on_cuda_11_8()), "CD306") == []  # 11.8 serves an 11.2 build: same major, minor compat
    without_11 = compat_with(lambda d: d["cuda_driver"]["minor_version_compat"].update(
        rows=[r for r in d["cuda_driver"]["minor_version_compat"]["rows"] if r["major"] != "11"]))
    assert without_11.minor_compat_majors() == [12, 13]
    hits = only(run(_tf_on_cuda_11_8(), without_11), "CD306", "error")
    assert hits and "cuda-toolkit-11-2" in hits[0].fix


# --- CD401: the archive and packages for THIS machine's CUDA --------------------------------------------------------


def test_cd401_on_cuda13_names_a_cuda13_build_that_exists():
    f = real_machine()
    f.cudnn = []
    fix = only(run(f), "CD401")[0].fix
    release = archive_release(fix, 13)
    era = load_compat().variant_era(13)
    assert release3(release) >= release3(era["first"])  # CUDA 13 builds start at 9.13, never 9.0.0
    assert release == load_compat().newest_cudnn_build("13", 9)
    assert "libcudnn9-cuda-13" in fix and "nvidia-cudnn-cu13" in fix
    assert "cu12" not in fix and "cuda-12" not in fix and "cudnn-linux-x86_64-9.0.0" not in fix


def test_cd401_on_cuda12_machine_names_cuda12_packages():
    f = real_machine()
    f.cudnn = []
    f.driver = driver("550.54.15", "12.4")
    f.toolkits = [toolkit("12.4", realpath="/usr/local/cuda-12.4")]
    f.python.frameworks = []
    fix = only(run(f), "CD401")[0].fix
    assert "nvidia-cudnn-cu12" in fix and "libcudnn9-cuda-12" in fix and archive_release(fix, 12)
    assert "cu13" not in fix


def test_cd401_on_arm_server_names_the_sbsa_archive():
    f = real_machine()
    f.cudnn = []
    f.host.machine = "aarch64"
    fix = only(run(f), "CD401")[0].fix
    assert "cudnn-linux-sbsa-" in fix and "x86_64" not in fix


def test_cd401_before_minor_compat_uses_per_minor_builds_and_no_wheel():
    f = dl4j_machine("10.2.89", "7.6.5", "440.33")
    f.cudnn = []
    fix = only(run(f), "CD401")[0].fix
    newest = load_compat().newest_cudnn_build("10.2")  # the last release with a CUDA 10.2 build
    major = newest.split(".")[0]
    assert fix.startswith("Install cuDNN for CUDA 10.2: ")
    assert "cudnn-linux-x86_64-%s.*_cuda10.2-archive.tar.xz" % newest in fix
    assert "libcudnn%s=%s.*-1+cuda10.2" % (major, newest) in fix and "libcudnn9" not in fix
    assert "pip install" not in fix


# --- pip wheel names follow the machine's CUDA ------------------------------------------------------------------------


def test_cd704_wheel_follows_the_frameworks_cuda():
    f = real_machine()
    f.cudnn = []
    torch = f.python.frameworks[0]
    torch.version, torch.cuda_version = "2.8.0+cu126", "12.6"
    torch.resolved_cudnn = resolution("libcudnn.so.9", None)
    assert 'pip install "nvidia-cudnn-cu12==9.*"' in only(run(f), "CD704")[0].fix


def test_cd506_pip_copy_without_package_name_gets_its_builds_wheel():
    f = real_machine()
    pip = cudnn_copy(PIP_CUDNN, "9.10.0", "12.9", origin="pip", links=False)
    f.cudnn = [pip]
    f.python.frameworks = [framework("jaxlib", "0.6.2", location=TORCH_SITE, cuda_version="12.9",
                                     resolved_cudnn=resolution("libcudnn.so.9", PIP_CUDNN + "/libcudnn.so.9",
                                                               via="RUNPATH"))]
    hits = only(run(f), "CD506")
    assert hits and 'pip install -U "nvidia-cudnn-cu12>=9.10.1"' in hits[0].fix


def test_reinstall_fix_keeps_the_wheel_of_the_copy():
    compat = load_compat()
    named = cudnn_copy(PIP_CUDNN, "9.19.0", "13.1", origin="pip", links=False, package="nvidia-cudnn-cu13")
    assert reinstall_fix(compat, named).commands == [
        'pip install --force-reinstall --no-deps "nvidia-cudnn-cu13==9.19.0.*"']
    unnamed = cudnn_copy(PIP_CUDNN, "9.5.1", "12.6", origin="pip", links=False)
    assert "nvidia-cudnn-cu12==9.5.1.*" in reinstall_fix(compat, unnamed).text


def test_reinstall_fix_of_a_wheel_in_the_user_site_reinstalls_it_there():
    """realworld draw 291129-66: a damaged wheel in ~/.local; a plain install put a second copy in the active
    environment and the damaged one stayed first on the user's path."""
    facts = real_machine()
    user_site = "/home/u/.local/lib/python3.11/site-packages"
    facts.python.user_sites = [user_site]
    damaged = cudnn_copy(user_site + "/nvidia/cudnn/lib", "9.5.1", "12.6", origin="pip", links=False,
                         package="nvidia-cudnn-cu12 9.5.1.17")
    assert reinstall_fix(load_compat(), damaged, facts).commands == [
        'pip install --user --force-reinstall --no-deps "nvidia-cudnn-cu12==9.5.1.17"']
    in_the_venv = cudnn_copy(PIP_CUDNN, "9.5.1", "12.6", origin="pip", links=False, package="nvidia-cudnn-cu12 9.5.1.17")
    assert "--user" not in reinstall_fix(load_compat(), in_the_venv, facts).commands[0]


def test_reinstall_fix_for_a_copied_archive_names_the_file():
    compat = load_compat()
    copied = cudnn_copy("/usr/local/cuda-13.0/lib64", "9.14.0", "13.0", origin="toolkit")
    text = reinstall_fix(compat, copied).text
    assert "cudnn-linux-x86_64-9.14.0.*_cuda13-archive.tar.xz" in text and "<archive>" not in text


def test_require_cudnn_fix_uses_the_machines_wheel():
    fix = only(run(real_machine(), requires=["cudnn>=10"]), "CD910", "error")[0].fix
    assert 'pip install "nvidia-cudnn-cu13>=10"' in fix
    assert "cu12" not in fix and "libcudnn9" not in fix  # no cuDNN 9 package for a >=10 requirement


def test_require_toolkit_fix_is_a_real_package():
    fix = only(run(real_machine(), requires=["toolkit>=12.8,<13"]), "CD910", "error")[0].fix
    assert "sudo apt install cuda-toolkit-12-9" in fix and "X-Y" not in fix
    fix = only(run(real_machine(), requires=["toolkit>=99"]), "CD910", "error")[0].fix
    assert "No CUDA release in compat satisfies" in fix


# --- JAX extras from compat's JAX table -----------------------------------------------------------------------------


def _jax_machine(cc: str, cuda: str = "13.0") -> Facts:
    f = real_machine()
    f.gpus = [gpu(name="test GPU", cc=cc)]
    f.python.frameworks = [framework("jaxlib", "0.7.0", cuda_version=cuda)]
    return f


def test_cd201_jax_points_to_the_extra_that_supports_the_gpu():
    rows = {r["extra"]: r for r in load_compat().framework_rows("jax")}
    hits = only(run(_jax_machine("6.1")), "CD201", "error")
    assert hits and 'pip install -U "jax[cuda12]"' in hits[0].fix and rows["cuda12"]["min_cc"] in hits[0].fix


def test_cd201_jax_says_when_no_extra_supports_the_gpu():
    hits = only(run(_jax_machine("5.0")), "CD201", "error")
    assert hits and "No JAX CUDA build" in hits[0].fix and "jax[cuda12]" not in hits[0].fix


def test_cd503_jax_over_a_system_copy_installs_its_own_cudas_cudnn_wheel():
    f = real_machine()
    old = cudnn_copy("/opt/old/lib", "9.1.0", "12.4", origin="ld_library_path")
    f.cudnn.append(old)
    f.loader.ld_library_path = []
    f.python.frameworks = [framework("jaxlib", "0.7.0", cuda_version="12.3", cudnn_version="9.8.0",
                                     resolved_cudnn=resolution("libcudnn.so.9", "/opt/old/lib/libcudnn.so.9",
                                                               via="ld.so.cache"))]
    hits = only(run(f), "CD503")  # its wheel is found through its RPATH before ld.so.cache (draw 271127/273)
    # the site's cu13 wheel (no framework of it left) writes the same libcudnn.so.9 files: out first
    assert hits and hits[0].remedy.commands == ["pip uninstall -y nvidia-cudnn-cu13", 'pip install "nvidia-cudnn-cu12==9.*"']


# --- TensorFlow on Windows: the pair from compat ---------------------------------------------------------------------


def test_cd703_pairs_the_last_windows_release_with_its_tested_build():
    f = real_machine()
    f.host.platform = "windows"
    f.python.frameworks = [framework("tensorflow", "2.15.0", cuda_build=False)]
    table = load_compat().framework_table("tensorflow_windows")
    row = next(r for r in load_compat().framework_rows("tensorflow_windows")
               if ver(r["tensorflow"]) == ver(table["last_native_gpu"]))
    fix = only(run(f), "CD703")[0].fix
    assert '"tensorflow==2.10.*"' in fix and "CUDA %s and cuDNN %s" % (row["cuda"], row["cudnn"]) in fix


# --- toolkit package names from the machine ---------------------------------------------------------------------------


def _wsl(f: Facts) -> None:
    f.host.wsl = True
    f.host.dev_nodes = ["/dev/dxg"]
    f.driver.libcuda_path = SYSLIB + "/libcuda.so.1"


@pytest.mark.parametrize("toolkits,driver_cuda,package", [
    ([toolkit("13.0")], "13.0", "cuda-toolkit-13-0"),
    ([], "12.8", "cuda-toolkit-12-8"),
])
def test_cd802_wsl_toolkit_package_fits_the_machine(toolkits, driver_cuda, package):
    f = real_machine()
    _wsl(f)
    f.toolkits = toolkits
    f.driver.cuda_version = driver_cuda
    fix = only(run(f), "CD802", "error")[0].fix
    assert "sudo apt install %s " % package in fix and "12-6" not in fix


def test_cd307_reinstalls_the_release_the_link_pointed_to():
    f = real_machine()
    f.toolkits = [ToolkitFacts(path="/usr/local/cuda", realpath="/usr/local/cuda-12.2", dangling=True,
                               link_chain=["/usr/local/cuda", "/usr/local/cuda-12.2"])]
    fix = only(run(f), "CD307")[0].fix
    assert "sudo apt install cuda-toolkit-12-2" in fix


# --- CD508: Blackwell and the blackwell_cuda12 table ------------------------------------------------------------------


def _blackwell(driver_version: str, driver_cuda: str) -> Facts:
    f = real_machine()
    f.driver = driver(driver_version, driver_cuda)
    f.gpus = [gpu(name="NVIDIA B200", cc="10.0")]
    f.cudnn = [cudnn_copy(SYSLIB, "9.5.1", "12.4", package="deb libcudnn9-cuda-12 9.5.1.17-1", max_sm="12.1")]
    f.toolkits = []
    f.python.frameworks = []
    return f


def test_cd508_on_a_cuda13_driver_recommends_the_cuda13_build():
    fix = only(run(_blackwell("580.95.05", "13.0")), "CD508")[0].fix
    assert "built for CUDA 13.0" in fix and "libcudnn9-cuda-13" in fix and "upgrade the NVIDIA driver" not in fix


def test_cd508_on_a_cuda12_8_driver_stays_on_cuda12():
    fix = only(run(_blackwell("570.124.06", "12.8")), "CD508")[0].fix
    assert "libcudnn9-cuda-12" in fix and "cuda-13" not in fix and "upgrade the NVIDIA driver" not in fix


def test_cd508_below_the_tables_cuda_needs_the_tables_driver_first():
    bw = load_compat().blackwell_cuda12()
    hits = only(run(_blackwell("560.35.03", "12.6")), "CD508")
    assert hits and ">= %s" % bw["driver_linux"] in hits[0].fix and "CUDA %s" % bw["min_cuda"] in hits[0].fix


# --- CD405: exactly what blocks reading -------------------------------------------------------------------------------


def _blocked(f: Facts, blockers) -> None:
    system = f.cudnn[0]
    for lf in system.files:
        lf.readable, lf.read_blocker = True, None
    for lf, blocker in zip([x for x in system.files if not x.is_link], blockers):
        lf.readable, lf.read_blocker = False, blocker(lf)


def test_cd405_file_and_folder_blockers_in_one_command():
    f = real_machine()
    f.cudnn[0] = cudnn_copy("/opt/cudnn/lib", "9.14.0", "13.0")
    _blocked(f, [lambda lf: lf.realpath, lambda lf: "/opt/cudnn", lambda lf: "/opt/cudnn"])
    fix = only(run(f), "CD405")[0].fix
    assert fix == ("sudo chmod a+r /opt/cudnn/lib/libcudnn.so.9.14.0 && sudo chmod o+x /opt/cudnn")
    assert "a+rx" not in fix and " /opt " not in fix and "/opt/cudnn/lib " not in fix


@pytest.mark.parametrize("directory, blocker, home, flagged", [
    ("/home/ana/cudnn/lib", "/home/ana", "/home/ana", False),  # her own tarball in her 0750 home: hers alone
    ("/home/ana/cudnn/lib", "/home/ana/cudnn", "/home/ana", False),
    ("/home/ana/cudnn/lib", "/home/ana", "/home/bob", True),  # bob's programs are refused her copy
    ("/opt/cudnn/lib", "/opt/cudnn", "/root", True),  # sudo's umask 077: the D5 failure itself
    ("/opt/cudnn/lib", "/opt/cudnn", "/", True),  # a service user whose HOME is / keeps nothing private
    ("/home/ana/cudnn/lib", "/home/ana", None, True),  # not a live machine: whose home it is is unknown
])
def test_cd405_a_copy_in_the_running_users_home_is_theirs(directory, blocker, home, flagged):
    # fix draw 301301-14: a cuDNN unpacked under root's 0700 home, used by root's own environment, kept `fix` at exit 1
    f = real_machine()
    f.cudnn[0] = cudnn_copy(directory, "9.14.0", "13.0")
    f.host.home = home
    _blocked(f, [lambda lf: blocker] * 3)
    assert bool(only(run(f), "CD405")) is flagged


def test_cd405_without_blocker_facts_judges_by_mode():
    f = real_machine()
    for lf in f.cudnn[0].files:
        lf.readable, lf.mode, lf.read_blocker = False, "0600", None
    fix = only(run(f), "CD405")[0].fix
    assert fix.startswith("sudo chmod a+r ") and "o+x" not in fix and "namei" not in fix


# --- one helper for cuDNN's "same major, minor not older" rule --------------------------------------------------------


@pytest.mark.parametrize("runtime,compiled,bad", [
    ("9.14.0", "9.8.0", False), ("9.8.0", "9.8.0", False), ("9.7.1", "9.8.0", True), ("8.9.7", "9.1.0", True),
    ("10.0.0", "9.1.0", True), ("9", "9.1", False), ("garbage", "9.1", False),
])
def test_cudnn_older(runtime, compiled, bad):
    assert cudnn_older(runtime, compiled)[0] is bad


def test_pins_match_wheel_names_however_spelled():
    f = real_machine()
    f.python.nvidia_wheels[0]["name"] = "nvidia_cudnn_cu13"
    f.python.nvidia_wheels[0]["version"] = "9.14.0.64"
    hits = only(run(f), "CD702", "error")
    assert hits and 'pip install "nvidia-cudnn-cu13==9.19.0.56"' in hits[0].fix
