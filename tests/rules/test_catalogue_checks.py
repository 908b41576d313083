"""Catalogue entries seen from files and the environment (A5 A6 E5 G3 G5 G6 G8 H2 H3 I2 I3), on fake machines."""
from __future__ import annotations

import os
import time

import pytest

from kit import Gpu, build_ld_cache

MA = "/usr/lib/x86_64-linux-gnu"
SITE = "/opt/venv/lib/python3.11/site-packages"


def _base(m, **driver):
    m.ld_conf("x86_64-linux-gnu.conf", [MA])
    m.driver(**driver)


def _hits(doc, rule_id, severity=None):
    hits = [f for f in doc["findings"] if f["id"] == rule_id and (severity is None or f["severity"] == severity)]
    assert hits, [(f["id"], f["severity"], f["title"]) for f in doc["findings"]]
    return hits


def _none(doc, rule_id):
    assert not [f for f in doc["findings"] if f["id"] == rule_id], doc["findings"]


# --- A5 nvidia_uvm ---------------------------------------------------------------------------------------------------

def test_a5_uvm_module_and_node_missing(machine, check_json):
    _base(machine)
    machine.file("/proc/modules", "nvidia 2 0 - Live 0x0\n")
    os.unlink(machine.p("/dev/nvidia-uvm"))
    build_ld_cache(machine)
    _, doc = check_json(machine)
    [hit] = _hits(doc, "CD108", "error")
    assert "nvidia_uvm module and /dev/nvidia-uvm are missing" in hit["title"]
    assert hit["fix"].startswith("sudo modprobe nvidia_uvm && sudo mknod -m 666 /dev/nvidia-uvm c")


def test_a5_nvidia_modprobe_loads_it_on_first_use(machine, check_json):
    _base(machine)
    machine.file("/proc/modules", "nvidia 2 0 - Live 0x0\n")
    machine.file("/usr/bin/nvidia-modprobe", "#!/bin/sh\n", mode=0o4755)
    _, doc = check_json(machine)
    assert _hits(doc, "CD108", "info")


def test_a5_healthy_driver_is_quiet(machine, check_json):
    _base(machine)
    _, doc = check_json(machine)
    _none(doc, "CD108")


# --- A6 NVSwitch without Fabric Manager ------------------------------------------------------------------------------

def test_a6_nvswitch_without_fabric_manager(machine, check_json):
    _base(machine, version="550.54.15", cuda=12040)
    machine.file("/proc/driver/nvidia-nvswitch/devices/0000:07:00.0", "")
    _, doc = check_json(machine)
    [hit] = _hits(doc, "CD109", "error")
    assert "no nvidia-fabricmanager is installed" in hit["title"]
    # Under --root the package goes into the root (chroot); the service runs on this machine's kernel.
    assert hit["fix"] == ("sudo chroot %s apt install 'nvidia-fabricmanager-550=550.54.15*' && "
                          "sudo systemctl enable --now nvidia-fabricmanager" % machine.root)


def test_a6_fabric_manager_of_another_version(machine, check_json):
    _base(machine, version="550.54.15", cuda=12040)
    machine.file("/proc/driver/nvidia-nvswitch/devices/0000:07:00.0", "")
    machine.file("/var/lib/dpkg/status", "Package: nvidia-fabricmanager-550\nStatus: install ok installed\n"
                                         "Version: 550.40.07-1\n\n")
    _, doc = check_json(machine)
    [hit] = _hits(doc, "CD109", "error")
    assert "nvidia-fabricmanager-550 550.40.07-1 does not match driver 550.54.15" in hit["title"]


# --- E5 workspace hint ------------------------------------------------------------------------------------------------

def test_e5_small_gpu_gets_the_workspace_hint(machine, check_json):
    _base(machine, gpus=[Gpu(name="NVIDIA GeForce RTX 3060 Laptop GPU", cc="8.6", memory_mib=6144)])
    machine.dist(SITE, "torch", "2.5.1+cu124", files={"torch/version.py": "cuda = '12.4'\n"})
    _, doc = check_json(machine)
    [hit] = _hits(doc, "CD208", "info")
    assert "6144 MiB" in hit["title"] and "NO_WORKSPACE" in hit["fix"] and "FLAGS_conv_workspace_size_limit" in hit["fix"]


# --- G3 / G6: CUDA libraries a framework loads -----------------------------------------------------------------------

def test_g3_tensorflow_lists_every_missing_library(machine, check_json):
    _base(machine)
    machine.lib(MA + "/libcudart.so.12", "cudart", soname="libcudart.so.12")
    machine.dist(SITE, "tensorflow", "2.15.0", files={
        "tensorflow/python/platform/build_info.py":
            "build_info = {'cuda_version': '12.2', 'cudnn_version': '8', 'is_cuda_build': True}\n"})
    machine.consumer(SITE + "/tensorflow/libtensorflow_framework.so.2", [], runpath="$ORIGIN/../nvidia/cublas/lib")
    build_ld_cache(machine)
    _, doc = check_json(machine)
    [hit] = _hits(doc, "CD706", "error")
    assert "libcublas.so.12" in hit["title"] and "libcusparse.so.12" in hit["title"]
    assert "libcudart.so.12" not in hit["title"]
    assert hit["fix"] == 'sudo chroot %s pip install "tensorflow[and-cuda]==2.15.0"' % machine.root
    assert hit["catalogue"] == ["G3"]


def test_g6_onnxruntime_provider_needs_a_missing_library(machine, check_json):
    _base(machine)
    machine.cudnn("9.1.0", MA, None, cuda=12040)
    machine.dist(SITE, "onnxruntime-gpu", "1.20.1")
    machine.consumer(SITE + "/onnxruntime/capi/libonnxruntime_providers_cuda.so",
                     ["libcublasLt.so.12", "libcudnn.so.9"], runpath="$ORIGIN")
    build_ld_cache(machine)
    _, doc = check_json(machine)
    [hit] = _hits(doc, "CD706", "error")
    assert "cannot load 1 CUDA library: libcublasLt.so.12" in hit["title"] and hit["catalogue"] == ["G6"]
    # 1.20.1 has neither the [cuda,cudnn] extras nor preload_dlls() (both from 1.21.0): the fix installs cuBLAS.
    assert "onnxruntime-gpu[cuda,cudnn]==1.20.1" not in hit["fix"] and '"nvidia-cublas-cu12"' in hit["fix"]


def test_g6_onnxruntime_with_its_wheels_beside_it_is_told_to_put_them_on_its_path_not_to_install_them(
        machine, check_json):
    """onnxruntime-gpu 1.22 installed with its [cuda,cudnn] extras: the wheels are there, its library has no RPATH to
    them (a new user's trial, round 17: the fixes said `pip install` of what it had). The real wheels' case, proven by
    the real loader: tests/realworld_cases.py ort122-cuda-cudnn-extras."""
    _base(machine)
    wheel = SITE + "/nvidia/cudnn/lib"
    machine.cudnn("9.3.0", wheel, None, cuda=12060)
    machine.dist(SITE, "nvidia-cudnn-cu12", "9.3.0.75")
    machine.dist(SITE, "nvidia-cublas-cu12", "12.3.4.1", files={"nvidia/cublas/lib/libcublasLt.so.12": ""})
    machine.dist(SITE, "onnxruntime-gpu", "1.22.0")
    machine.consumer(SITE + "/onnxruntime/capi/libonnxruntime_providers_cuda.so",
                     ["libcublasLt.so.12", "libcudnn.so.9"])
    build_ld_cache(machine)
    _, doc = check_json(machine)
    [cudnn] = _hits(doc, "CD704", "error")
    [cublas] = _hits(doc, "CD706", "error")
    assert "The copy installed beside it" in cudnn["detail"] and "onnxruntime.preload_dlls()" in cudnn["detail"]
    for hit in (cudnn, cublas):
        assert "pip install" not in hit["fix"] and "export LD_LIBRARY_PATH=" in hit["fix"], hit["fix"]
        assert "or call onnxruntime.preload_dlls() before creating the session" in hit["fix"]


def test_g6_onnxruntime_beside_a_cudnn_wheel_for_cuda_13_gets_its_own_after_that_one_is_uninstalled(
        machine, check_json):
    """cuDNN for CUDA 13 (torch's, say) where ONNX Runtime's CUDA 12 build would look: that copy is not the one to put
    on its path, and the cu12 wheel writes the same files, so the cu13 one goes first (round 17's trial, E3). Proven
    with the real wheels by the real loader: tests/realworld_cases.py ort122-cu13-wheel."""
    _base(machine)
    wheel = SITE + "/nvidia/cudnn/lib"
    machine.cudnn("9.24.0", wheel, None, cuda=13030)
    machine.dist(SITE, "nvidia-cudnn-cu13", "9.24.0.43")
    machine.dist(SITE, "onnxruntime-gpu", "1.22.0")
    # the real provider's DT_NEEDED libcudart.so.12 says its CUDA
    machine.consumer(SITE + "/onnxruntime/capi/libonnxruntime_providers_cuda.so", ["libcudart.so.12", "libcudnn.so.9"])
    build_ld_cache(machine)
    _, doc = check_json(machine)
    [hit] = _hits(doc, "CD704", "error")
    assert "The copy installed beside it (nvidia-cudnn-cu13 9.24.0.43) is built for CUDA 13" in hit["detail"]
    assert "pip uninstall -y nvidia-cudnn-cu13 && " in hit["fix"] and 'pip install "nvidia-cudnn-cu12==9.*"' in hit["fix"]
    assert hit["fix"].index("uninstall") < hit["fix"].index('"nvidia-cudnn-cu12')


# --- G5 PaddlePaddle ------------------------------------------------------------------------------------------------

def test_g5_paddle_cudnn_off_the_search_path(machine, check_json):
    _base(machine)
    machine.cudnn("8.9.1", "/opt/cudnn8/lib64", None, cuda=12000)
    machine.dist(SITE, "paddlepaddle-gpu", "2.6.1", files={
        "paddle/version/__init__.py": "cuda_version = '12.0'\ncudnn_version = '8.9.1'\n"})
    build_ld_cache(machine)
    _, doc = check_json(machine)
    [hit] = _hits(doc, "CD707", "error")
    # Paddle 2.6 dlopens the unversioned libcudnn.so (compat/framework_features.toml). The copy in /opt is outside its
    # environment (a link there is no change fix can make or undo in it: realworld draw 291129-39), so its own CUDA's
    # wheel goes into its site, whose folder gets the link and goes first on the path.
    wheel = SITE + "/nvidia/cudnn/lib"
    assert 'pip install "nvidia-cudnn-cu12==8.' in hit["fix"] and "/opt/cudnn8" not in hit["fix"]
    assert " && ln -sf libcudnn.so.8 " in hit["fix"] and "%s/libcudnn.so && " % wheel in hit["fix"]  # (under --root)
    assert hit["fix"].endswith("export LD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" % wheel)


# --- G8 CuPy installed twice -------------------------------------------------------------------------------------------

def test_g8_two_cupy_packages(machine, check_json):
    _base(machine)
    machine.dist(SITE, "cupy-cuda12x", "13.3.0")
    machine.dist(SITE, "cupy-cuda11x", "13.3.0")
    _, doc = check_json(machine)
    [hit] = _hits(doc, "CD708", "error")
    inside = "sudo chroot %s " % machine.root
    assert hit["fix"] == ("%spython3 -m pip uninstall -y cupy-cuda11x cupy-cuda12x && "
                          "%spython3 -m pip install cupy-cuda13x" % (inside, inside))


# --- H2 image requirement ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["environment", "/proc/1/environ"])
def test_h2_image_needs_newer_cuda(machine, check_json, where):
    _base(machine, version="550.54.15", cuda=12040)
    value = "cuda>=12.8 brand=tesla,driver>=470,driver<471"
    env = {}
    if where == "environment":
        env["NVIDIA_REQUIRE_CUDA"] = value
    else:
        machine.file("/proc/1/environ", b"PATH=/usr/bin\0NVIDIA_REQUIRE_CUDA=" + value.encode() + b"\0")
    _, doc = check_json(machine, env=env)
    [hit] = _hits(doc, "CD805", "error")
    assert "needs CUDA 12.8 but the host driver 550.54.15 supports CUDA 12.4" in hit["title"]
    assert where in hit["detail"]


def test_h2_satisfied_requirement_is_quiet(machine, check_json):
    _base(machine)
    _, doc = check_json(machine, env={"NVIDIA_REQUIRE_CUDA": "cuda>=12.4"})
    _none(doc, "CD805")


# --- H3 /dev/char ------------------------------------------------------------------------------------------------------

def test_h3_dev_char_without_nvidia_links(machine, check_json):
    _base(machine)
    for tool in ("/usr/bin/dockerd", "/usr/bin/nvidia-container-cli", "/usr/bin/nvidia-ctk"):
        machine.file(tool, "#!/bin/sh\n", mode=0o755)
    machine.file("/etc/docker/daemon.json", '{"exec-opts": ["native.cgroupdriver=systemd"]}\n')
    machine.link("/dev/char/1:3", "../null")
    _, doc = check_json(machine)
    [hit] = _hits(doc, "CD806", "warning")
    assert hit["fix"] == "sudo %s/usr/bin/nvidia-ctk system create-dev-char-symlinks --create-all" % machine.root
    machine.link("/dev/char/195:0", "../nvidia0")
    _, doc = check_json(machine)
    _none(doc, "CD806")


# --- I2 local repo ------------------------------------------------------------------------------------------------------

def test_i2_local_repo_without_packages(machine, check_json):
    _base(machine)
    repo = "/var/cudnn-local-repo-ubuntu2204-8.9.7.29"
    machine.file(repo + "/cudnn-local-08A7D361-keyring.gpg", b"key")
    for deb in ("libcudnn8_8.9.7.29-1+cuda12.2_amd64.deb", "libcudnn8-dev_8.9.7.29-1+cuda12.2_amd64.deb",
                "libcudnn8-samples_8.9.7.29-1+cuda12.2_amd64.deb"):
        machine.file("%s/%s" % (repo, deb), b"deb")
    machine.file("/var/lib/dpkg/status", "")
    _, doc = check_json(machine)
    [hit] = _hits(doc, "CD902", "error")
    r = machine.root  # the key is copied from outside into the root; apt runs inside it
    assert hit["fix"] == ("sudo cp %s%s/cudnn-local-08A7D361-keyring.gpg %s/usr/share/keyrings/ && sudo chroot %s apt "
                          "update && sudo chroot %s apt install libcudnn8 libcudnn8-dev" % (r, repo, r, r, r))


# --- I3 driver upgraded since boot ----------------------------------------------------------------------------------------

def test_i3_driver_upgraded_after_boot(machine, check_json):
    _base(machine, version="550.54.15", cuda=12040)
    now = time.time()
    machine.file("/proc/stat", "cpu 1 2 3\nbtime %d\n" % int(now - 7200))
    when = time.strftime("%Y-%m-%d  %H:%M:%S", time.localtime(now - 600))
    machine.file("/var/log/apt/history.log",
                 "\nStart-Date: 2020-01-01  06:00:00\nUpgrade: libnvidia-compute-550:amd64 (550.40.07-0ubuntu1, "
                 "550.54.15-0ubuntu1)\nEnd-Date: 2020-01-01  06:01:00\n\n"
                 "Start-Date: %s\nCommandline: /usr/bin/unattended-upgrade\nUpgrade: libnvidia-compute-550:amd64 "
                 "(550.54.15-0ubuntu1, 550.67-0ubuntu1), nvidia-utils-550:amd64 (550.54.15-0ubuntu1, 550.67-0ubuntu1)"
                 ", tzdata:amd64 (2024a-1, 2024b-1)\nEnd-Date: %s\n" % (when, when))
    _, doc = check_json(machine)
    [hit] = _hits(doc, "CD903", "warning")
    assert hit["fix"] == "sudo reboot   (then keep them from moving unattended: sudo chroot %s apt-mark hold " \
                         "libnvidia-compute-550 nvidia-utils-550)" % machine.root


# --- explain routes ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text,rule_id", [
    ("Failed to load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.12: cannot open shared "
     "object file: No such file or directory", "CD706"),
    ("AttributeError: module 'cupy.cuda' has no attribute 'cudnn'", "CD708"),
    ("RuntimeError: CUDNN_STATUS_ALLOC_FAILED", "CD208"),
    ("cuda driver library init failure: 802. system not yet initialized", "CD109"),
    ("RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment", "CD108"),
    ("nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please update your driver", "CD805"),
    ("Failed to initialize NVML: Unknown Error", "CD806"),
    ("W gpu_device.cc:1956] Cannot dlopen some GPU libraries.", "CD706"),
    ("Cannot load cudnn shared library. Cannot invoke method cudnnGetVersion", "CD707"),
    ("Failed to initialize NVML: Driver/library version mismatch", "CD903"),
    ("Could not load dynamic library 'libcudnn.so.8'", "CD902"),
])
def test_explain_routes_the_catalogue_checks(text, rule_id):
    from cudnn_doctor.explain import match_symptoms, routed_rules
    from cudnn_doctor.knowledge import load_compat

    assert rule_id in routed_rules(match_symptoms(text, load_compat()))
