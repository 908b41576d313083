"""Fix texts found wrong in exploratory testing: each test pins the corrected command (facts-based, no filesystem)."""
from __future__ import annotations

import shlex
from typing import List

from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.versions import dl4j_key
from cudnn_doctor.model import Facts, Finding, LibFile, VisibilityFacts
from cudnn_doctor.rules import RuleContext, evaluate
from cudnn_doctor.queries import cudnn_build_exists
from cudnn_doctor.remedies import cudnn_install_fix, ld_conf_name
from facts_factory import (SYSLIB, TORCH_SITE, cudnn_copy, driver, framework, gpu, real_machine, resolution,
                           toolkit)
import pytest

# The fixes these tests build themselves are written for Target() (the live root, a user, sh).
pytestmark = pytest.mark.usefixtures("fix_target")


def run(facts: Facts, **kw) -> List[Finding]:
    findings, _ = evaluate(facts, RuleContext(compat=load_compat(), **kw))
    assert not [f for f in findings if "could not run" in f.title], [f.title for f in findings]
    return findings


def only(findings: List[Finding], rule_id: str) -> List[Finding]:
    return [f for f in findings if f.id == rule_id]


# --- 1. CD403 keeps the links the reinstall restores ----------------------------------------------------------------


def test_cd403_removes_only_the_other_releases_versioned_files():
    f = real_machine()
    lib = "/usr/local/cuda-12.4/lib64"
    f.toolkits = [toolkit("12.4", path="/usr/local/cuda", realpath="/usr/local/cuda-12.4")]
    copy = cudnn_copy(lib, "9.1.0", "12.4", origin="toolkit")
    # An older ops sub-library copied over the new one: its soname links and its full-version file are 9.0.0.
    for x in copy.files:
        if x.name.startswith("libcudnn_ops.so"):
            x.file_version = "9.0.0"
    copy.files.append(LibFile(name="libcudnn_ops.so", path=lib + "/libcudnn_ops.so", file_version="9.0.0",
                              is_link=True, readable=True, elf="ok"))
    copy.files.append(LibFile(name="libcudnn_ops.so.9.0.0", path=lib + "/libcudnn_ops.so.9.0.0",
                              file_version="9.0.0", readable=True, elf="ok"))
    f.cudnn = [copy]
    fix = only(run(f), "CD403")[0].fix
    tail = fix.split("then remove", 1)[1]
    assert "libcudnn_ops.so.9.0.0" in tail
    assert "libcudnn_ops.so " not in tail + " " and "libcudnn_ops.so.9 " not in tail + " "
    assert "sudo rm libcudnn_ops.so.9.0.0" in tail


# --- 2. ld.so.conf fixes never overwrite another file; paths are quoted ---------------------------------------------


def test_cd306_registers_the_folder_in_a_file_of_its_own():
    f = real_machine()
    f.loader.resolved["libcudart.so.13"] = resolution("libcudart.so.13", None)
    f.loader.conf_dirs = [SYSLIB]  # the toolkit's folder is not configured yet
    fix = only(run(f), "CD306")[0].fix
    assert "/etc/ld.so.conf.d/cuda.conf" not in fix
    assert ld_conf_name("/usr/local/cuda-13.0/targets/x86_64-linux/lib") in fix


def test_cd601_fix_quotes_a_folder_with_spaces_and_uses_its_own_conf_file():
    f = real_machine()
    odd = "/opt/my cudnn/lib"
    f.cudnn = [cudnn_copy(odd, "9.14.0", "13.0")]
    f.loader.resolved["libcudnn.so.9"] = resolution("libcudnn.so.9", None)
    fix = only(run(f), "CD601")[0].fix
    assert "echo '/opt/my cudnn/lib' | sudo tee /etc/ld.so.conf.d/cudnn-doctor-opt-my-cudnn-lib.conf" in fix
    assert "/etc/ld.so.conf.d/cudnn.conf" not in fix
    assert "export LD_LIBRARY_PATH='/opt/my cudnn/lib'${LD_LIBRARY_PATH" in fix


def test_cd609_export_is_quoted():
    f = real_machine()
    f.loader.ld_library_path = ["/opt/a b/lib", "."]
    f.loader.ld_library_path_cwd = True
    fix = only(run(f), "CD609")[0].fix
    assert shlex.split(fix) == ["export", "LD_LIBRARY_PATH=/opt/a b/lib"]


def test_cd405_chmod_quotes_paths():
    f = real_machine()
    copy = f.cudnn[0]
    copy.directory = "/opt/x y"
    for x in copy.files:
        x.path = "/opt/x y/" + x.name
        x.readable = False
        x.read_blocker = x.path
    fix = only(run(f), "CD405")[0].fix
    assert "sudo chmod o+x '/opt/x y/libcudnn.so.9'" in fix


# --- 3. a driver without libcuda.so.1 or without GPUs is an error ---------------------------------------------------


def test_cd106_kernel_module_without_libcuda():
    f = real_machine()
    f.driver = driver("550.54.15", "12.4", libcuda_path=None, libcuda_file_version=None)
    f.loader.resolved["libcuda.so.1"] = resolution("libcuda.so.1", None)
    hit = only(run(f), "CD106")
    assert hit and hit[0].severity.value == "error"
    assert "libnvidia-compute-550" in hit[0].fix


def test_cd107_driver_with_no_gpus():
    f = real_machine()
    f.gpus = []
    hit = only(run(f), "CD107")
    assert hit and hit[0].severity.value == "error"
    assert "nvidia-smi" in hit[0].fix and "dmesg" in hit[0].fix and "reboot" in hit[0].fix
    assert not only(run(f), "CD101")


def test_cd106_cd107_leave_containers_to_cd801():
    f = real_machine()
    f.host.in_container = True
    f.gpus = []
    f.driver.libcuda_path = None
    f.loader.resolved["libcuda.so.1"] = resolution("libcuda.so.1", None)
    ids = {x.id for x in run(f)}
    assert not {"CD106", "CD107"} & ids


def test_healthy_machine_has_no_cd106_cd107():
    ids = {x.id for x in run(real_machine())}
    assert not {"CD106", "CD107"} & ids


# --- 4./5. pinned majors, builds that exist --------------------------------------------------------------------------


def test_pip_fix_pins_the_requested_major():
    fix = cudnn_install_fix(load_compat(), "12.4", 8, origin="pip")
    assert fix.commands == ['pip install "nvidia-cudnn-cu12==8.*"'] and fix.text == fix.commands[0]
    fix = cudnn_install_fix(load_compat(), "12.4", 9)
    assert '"nvidia-cudnn-cu12==9.*"' in fix.text


def test_no_fix_names_a_build_that_does_not_exist():
    compat = load_compat()
    assert cudnn_build_exists(compat, "7.6.5", "11") is False
    assert cudnn_build_exists(compat, "9.1.0", "13") is False
    assert cudnn_build_exists(compat, "9.1.0", "12") is True
    fix = cudnn_install_fix(compat, "11.8", 7, "7.6.5", origin="pip")
    assert "7.6.5" not in fix.text and "nvidia-cudnn-cu11==" in fix.text
    fix = cudnn_install_fix(compat, "13.0", 9, "9.1.0")
    assert "9.1.0" not in fix.text and "cuda13" in fix.text


def test_cd501_for_a_jax_cuda13_plugin_names_an_existing_cuda13_build():
    f = real_machine()
    site = "/opt/venv/lib/python3.12/site-packages"
    old = cudnn_copy(site + "/nvidia/cudnn/lib", "9.1.0", "12.4", origin="pip", links=False,
                     package="nvidia-cudnn-cu12 9.1.0.70")
    jax = framework("jax-cuda13-plugin", "0.7.2", location=site, cuda_version="13.0",
                    resolved_cudnn=resolution("libcudnn.so.9", old.path, via="RUNPATH"))
    f.cudnn = [f.cudnn[0], old]
    f.python.frameworks = [jax]
    for hit in only(run(f), "CD501"):
        assert "9.1.0" not in hit.fix.split(":", 1)[1], hit.fix
        assert "cu13==9.1" not in hit.fix


# --- 6. recommendations respect the GPU's compute capability --------------------------------------------------------


def _k80() -> Facts:
    f = real_machine()
    f.driver = driver("470.256.02", "11.4")
    f.gpus = [gpu(name="Tesla K80", cc="3.7")]
    f.toolkits, f.cudnn, f.python.frameworks = [], [], []
    f.loader.resolved = {"libcuda.so.1": resolution("libcuda.so.1", SYSLIB + "/libcuda.so.1"),
                         "libcudnn.so.9": resolution("libcudnn.so.9", None)}
    return f


def test_cd401_on_kepler_names_a_cudnn_that_supports_it():
    fix = only(run(_k80()), "CD401")[0].fix
    assert "nvidia-cudnn-cu11==9" not in fix and "libcudnn9" not in fix
    assert "nvidia-cudnn-cu11==8." in fix


def test_for_torch_on_kepler_never_fits_through_cudnn9_nor_asks_for_a_driver_it_cannot_run():
    for target in ("torch==2.5.1", "torch"):
        hit = only(run(_k80(), target=target), "CD920")[0]
        assert hit.severity.value == "error", (target, hit.title)
        assert ">= 5" not in hit.fix and "upgrade the NVIDIA driver" not in hit.fix, hit.fix


def test_for_tensorflow_on_kepler_does_not_recommend_a_driver_upgrade():
    hit = only(run(_k80(), target="tensorflow==2.15.0"), "CD920")[0]
    assert "upgrade the NVIDIA driver" not in hit.fix
    assert "R470" in hit.fix


# --- 7. DL4J versions order by release history ---------------------------------------------------------------------


def test_dl4j_releases_newest_first_with_milestones_after_betas():
    assert dl4j_key("1.0.0-beta6") < dl4j_key("1.0.0-M1") < dl4j_key("1.0.0-M1.1") < dl4j_key("1.0.0-M2.1")
    assert dl4j_key("1.0.0-beta6") < dl4j_key("1.0.0-beta10")
    releases = load_compat().dl4j_releases()
    assert releases[0] == max(releases, key=dl4j_key) and "M" in releases[0]


def test_for_dl4j_without_version_judges_the_newest_release():
    hit = only(run(real_machine(), target="dl4j"), "CD920")[0]
    assert load_compat().dl4j_releases()[0] in hit.title


# --- 8. CD701 keeps the installed torch release --------------------------------------------------------------------


def test_cd701_reinstalls_the_same_torch_release():
    f = real_machine()
    f.python.frameworks = [framework("torch", "2.5.1+cpu", cuda_build=False)]
    f.driver = driver("550.54.15", "12.4")
    fix = only(run(f), "CD701")[0].fix
    assert "torch==2.5.1 " in fix and "torch==2.5 " not in fix


# --- 9./10. CUDA_VISIBLE_DEVICES -----------------------------------------------------------------------------------


def test_cd605_keeps_the_visible_order():
    f = real_machine()
    f.gpus = [gpu(0), gpu(1), gpu(2)]
    f.visibility = VisibilityFacts(cuda_visible_devices="2,1,abc", visible_indices=[2, 1],
                                   problems=["'abc' matches no GPU or MIG UUID on this machine"])
    f.gpus[0].visible = False
    assert only(run(f), "CD605")[0].fix == "export CUDA_VISIBLE_DEVICES=2,1"


def test_cd206_ignores_hidden_mig_gpus():
    f = real_machine()
    f.gpus = [gpu(0), gpu(1, mig_mode=True, mig_devices=[])]
    f.gpus[1].visible = False
    f.visibility = VisibilityFacts(cuda_visible_devices="0", visible_indices=[0])
    assert not only(run(f), "CD206")
    f.gpus[1].visible = True
    assert only(run(f), "CD206")


# --- 11. CD601 leaves a registered folder to CD608 ------------------------------------------------------------------


def test_cd601_silent_when_the_folder_is_registered_and_only_the_cache_is_stale():
    f = real_machine()
    lib = "/opt/cudnn/lib"
    f.cudnn = [cudnn_copy(lib, "9.14.0", "13.0")]
    f.loader.resolved["libcudnn.so.9"] = resolution("libcudnn.so.9", None)
    f.loader.conf_dirs.append(lib)
    f.loader.stale_cache = [lib + "/libcudnn.so.9"]
    ids = [x.id for x in run(f)]
    assert "CD601" not in ids and "CD608" in ids


def test_cd501_for_cudnn7_in_a_cuda11_toolkit_names_a_build_that_exists():
    f = real_machine()
    lib = "/usr/local/cuda-11.8/lib64"
    f.toolkits = [toolkit("11.8.0", path="/usr/local/cuda", realpath="/usr/local/cuda-11.8")]
    f.driver = driver("520.61.05", "11.8")
    f.cudnn = [cudnn_copy(lib, "7.6.5", "10.2", origin="toolkit")]
    f.python.frameworks = []
    fix = only(run(f), "CD501")[0].fix
    assert "7.6.5" not in fix and "cu11==7" not in fix
    assert "nvidia-cudnn-cu11==" in fix


def test_windows_with_a_cuda_minor_of_its_own_gets_the_archive_never_apt():
    """CUDA 10.2 has one cuDNN build per minor and no wheel: on Windows that is NVIDIA's archive, not `sudo apt`."""
    fix = cudnn_install_fix(load_compat(), "10.2", 7, platform="windows")
    assert not fix.commands and "apt" not in fix.text and "sudo" not in fix.text
    assert "copy its bin, include and lib folders into the CUDA 10.2 folder" in fix.text
    linux = cudnn_install_fix(load_compat(), "10.2", 7)
    assert linux.commands and linux.commands[0].startswith("sudo apt install libcudnn7=")
