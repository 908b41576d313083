"""End to end over fake machines: kit root -> real probes (dlopen, NVML fakes) -> rules -> `check --json` verdict."""
from __future__ import annotations

import os
from typing import Callable, Dict, List, Tuple

import pytest

from kit import Gpu, build_ld_cache

MA = "/usr/lib/x86_64-linux-gnu"
SITE = "/opt/venv/lib/python3.11/site-packages"
V100 = Gpu(name="Tesla V100-SXM2-16GB", cc="7.0", memory_mib=16160)
A100 = Gpu(name="NVIDIA A100-SXM4-80GB", cc="8.0")


def system_ld(m) -> None:
    m.ld_conf("x86_64-linux-gnu.conf", [MA])


def dl4j_pair(toolkit: str, cudnn: str, driver: str, cuda_code: int):
    def build(m):
        system_ld(m)
        m.driver(driver, cuda=cuda_code, gpus=[V100])
        prefix = m.toolkit(toolkit, layout="txt" if toolkit.startswith(("9.", "10.")) else "runfile")
        m.cudnn(cudnn, prefix + "/lib64", prefix + "/include", cuda=cuda_code)
        m.ld_conf("cuda.conf", [prefix + "/lib64"])
        m.file("/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n")
        system_ld(m)
        m.ld_conf("cuda.conf", [prefix + "/lib64"])
        build_ld_cache(m)
    return build


def cuda12_cudnn9(m):
    system_ld(m)
    m.driver("550.54.15", cuda=12040, gpus=[A100])
    m.toolkit("12.4.1")
    m.file("/etc/ld.so.conf.d/cuda-12-4.conf", "/usr/local/cuda-12.4/lib64\n")
    m.cudnn("9.1.0", MA, "/usr/include/x86_64-linux-gnu", cuda=12040, header_name="cudnn_version_v9.h")
    build_ld_cache(m)


def cuda13_cudnn9_cc90(m):
    system_ld(m)
    m.driver("580.95.05", cuda=13000, gpus=[Gpu()])
    m.toolkit("13.0.2", layout="deb")
    m.file("/etc/ld.so.conf.d/000_cuda.conf", "/usr/local/cuda/targets/x86_64-linux/lib\n")
    m.cudnn("9.14.0", MA, "/usr/include/x86_64-linux-gnu", cuda=13000, header_name="cudnn_version_v9.h")
    build_ld_cache(m)


def cuda11_cudnn8(m):
    """CUDA 11's runtime answers to libcudart.so.11.0, not .so.11: a healthy 11.8 stack must stay clean."""
    system_ld(m)
    m.driver("520.61.05", cuda=11080, gpus=[A100])
    m.toolkit("11.8.0")
    m.file("/etc/ld.so.conf.d/cuda-11-8.conf", "/usr/local/cuda-11.8/lib64\n")
    m.cudnn("8.9.7", "/usr/local/cuda-11.8/lib64", "/usr/local/cuda-11.8/include", cuda=11080)
    m.lib("/usr/local/cuda-11.8/lib64/libnvrtc.so.11.8.89", "cudart", soname="libnvrtc.so.11.2")
    m.link("/usr/local/cuda-11.8/lib64/libnvrtc.so", "libnvrtc.so.11.8.89")
    m.link(MA + "/libcuda.so", "libcuda.so.1")
    build_ld_cache(m)


PASSING: Dict[str, Tuple[Callable, List[str]]] = {
    "cuda11.8-cudnn8.9-a100": (cuda11_cudnn8, []),
    "dl4j-beta6-cuda9.2-cudnn7.2": (dl4j_pair("9.2.148", "7.2.1", "396.37", 9020), ["--for", "dl4j==1.0.0-beta6"]),
    "dl4j-beta6-cuda10.0-cudnn7.4": (dl4j_pair("10.0.130", "7.4.2", "410.48", 10000), ["--for", "dl4j==1.0.0-beta6"]),
    "dl4j-beta6-cuda10.1-cudnn7.6": (dl4j_pair("10.1.243", "7.6.5", "418.39", 10010), ["--for", "dl4j==1.0.0-beta6"]),
    "dl4j-beta6-cuda10.2-cudnn7.6": (dl4j_pair("10.2.89", "7.6.5", "440.33", 10020), ["--for", "dl4j==1.0.0-beta6"]),
    "cuda12.4-cudnn9.1-a100": (cuda12_cudnn9, []),
    "cuda13.0-cudnn9.14-h100": (cuda13_cudnn9_cc90, ["--require", "cudnn>=9,<10", "--require", "cc>=9.0"]),
}


@pytest.mark.parametrize("name", sorted(PASSING))
def test_healthy_machines_pass(machine, check_json, name):
    build, args = PASSING[name]
    build(machine)
    code, doc = check_json(machine, *args)
    bad = [(f["id"], f["title"]) for f in doc["findings"] if f["severity"] != "info"]
    assert code == 0 and doc["verdict"] == "ok", bad


# --- failing machines: (builder, env, args, expected id, severity, text the fix must contain) -----------------------


def a1_module_missing(m):
    m.driver("550.90.07", cuda=12040, kernel_module=None)
    m.file("/proc/modules", "ext4 1 0 - Live 0x0\n")
    dev = "/sys/bus/pci/devices/0000:01:00.0"
    m.file(dev + "/vendor", "0x10de\n")
    m.file(dev + "/class", "0x030200\n")
    m.file("/proc/sys/kernel/osrelease", "6.8.0-49-generic\n")


def a3_nouveau(m):
    dev = "/sys/bus/pci/devices/0000:01:00.0"
    m.file(dev + "/vendor", "0x10de\n")
    m.file(dev + "/class", "0x030000\n")
    m.link(dev + "/driver", "../../../bus/pci/drivers/nouveau")
    m.file("/proc/modules", "nouveau 2211840 3 - Live 0x0\n")


def a4_mismatch(m):
    system_ld(m)
    m.driver("550.144.03", cuda=12040, kernel_module="550.90.07", nvml_init_rc=18)


def b2_gpu_too_old(m):
    system_ld(m)
    m.driver("470.82.01", cuda=11040, gpus=[Gpu(name="NVIDIA GeForce GTX 780", cc="3.5", memory_mib=3072)])
    m.toolkit("11.4.4")
    m.cudnn("8.9.5", "/usr/local/cuda-11.4/lib64", "/usr/local/cuda-11.4/include", cuda=11080)


def b3_exclusive(m):
    m.driver(gpus=[Gpu(compute_mode=3, processes=1)])


def b4_mig_without_instances(m):
    m.driver(gpus=[Gpu(mig=1)])


def c1_driver_too_old(m):
    system_ld(m)
    m.driver("470.82.01", cuda=11040, gpus=[A100])
    m.toolkit("12.4.1")


def c2_forward_compat_on_geforce(m):
    system_ld(m)
    m.driver("535.104.05", cuda=12020, gpus=[Gpu(name="NVIDIA GeForce RTX 3090", cc="8.6", memory_mib=24576)])
    compat = "/usr/local/cuda-12.4/compat"
    m.lib(compat + "/libcuda.so.550.54.15", "cuda", soname="libcuda.so.1", DRV=12040)
    m.link(compat + "/libcuda.so.1", "libcuda.so.550.54.15")


def c3_stub(m):
    m.driver(libcuda=False)
    m.lib("/usr/local/cuda/lib64/stubs/libcuda.so", "cuda", soname="libcuda.so.1", DRV=12040)
    m.link("/usr/local/cuda/lib64/stubs/libcuda.so.1", "libcuda.so")


def d2_sublibs_missing(m):
    system_ld(m)
    m.driver()
    m.cudnn("9.14.0", MA, None, cuda=13000, subs=["graph", "ops"])


def d3_mixed(m):
    system_ld(m)
    m.driver()
    m.cudnn("9.14.0", MA, None, cuda=13000)
    os.unlink(m.p(MA + "/libcudnn_ops.so.9"))
    m.lib(MA + "/libcudnn_ops.so.9.1.0", "cudnn", soname="libcudnn_ops.so.9", CUDNN_V=90100, CUDART_V=12040)
    m.link(MA + "/libcudnn_ops.so.9", "libcudnn_ops.so.9.1.0")


def d4_plain_copy(m):
    system_ld(m)
    m.driver()
    m.cudnn("9.14.0", MA, None, cuda=13000)
    os.unlink(m.p(MA + "/libcudnn_cnn.so.9"))
    m.lib(MA + "/libcudnn_cnn.so.9", "cudnn", soname="libcudnn_cnn.so.9", CUDNN_V=91400, CUDART_V=13000)


def d4_dangling(m):
    system_ld(m)
    m.driver()
    m.cudnn("9.14.0", MA, None, cuda=13000)
    m.link(MA + "/libcudnn_adv.so.9", "libcudnn_adv.so.9.9.9")


def d5_unreadable(m):
    system_ld(m)
    m.driver()
    m.cudnn("9.14.0", MA, None, cuda=13000)
    os.chmod(m.p(MA + "/libcudnn_graph.so.9.14.0"), 0o600)


def d6_truncated(m):
    system_ld(m)
    m.driver()
    m.cudnn("9.14.0", MA, None, cuda=13000)
    m.file(MA + "/libcudnn_heuristic.so.9.14.0", b"")


def d7_header(m):
    system_ld(m)
    m.driver("550.54.15", cuda=12040)
    m.toolkit("12.4.1")
    m.cudnn("8.9.2", "/usr/local/cuda-12.4/lib64", "/usr/local/cuda-12.4/include", cuda=12020,
            header_version="8.5.0")


def e2_shadowed(m):
    system_ld(m)
    m.driver()
    m.pip_cudnn(SITE, "9.19.0.56", cuda_major=13, cudart=13010)
    m.dist(SITE, "torch", "2.11.0+cu130", requires=["nvidia-cudnn-cu13==9.19.0.56"],
           files={"torch/version.py": "cuda = '13.0'\n"})
    m.consumer(SITE + "/torch/lib/libtorch_cuda.so", ["libcudnn.so.9"], runpath="$ORIGIN/../../nvidia/cudnn/lib")
    # An HPC module's cuDNN: compatible today, but not the copy torch was tested with.
    m.cudnn("9.20.0", "/opt/cudnn/lib64", "/opt/cudnn/include", cuda=13000)


def e1_tf_older_runtime(m):
    system_ld(m)
    m.driver("550.54.15", cuda=12040)
    m.cudnn("8.7.0", MA, None, cuda=11080)
    m.dist(SITE, "tensorflow", "2.15.0", files={"tensorflow/python/platform/build_info.py":
           "build_info = {'cuda_version': '12.2', 'cudnn_version': '8.9', 'is_cuda_build': True}\n"})
    build_ld_cache(m)


def f1_stale_cache(m):
    system_ld(m)
    m.driver()
    build_ld_cache(m)
    m.cudnn("9.14.0", MA, None, cuda=13000)


def f2_nvrtc(m):
    system_ld(m)
    m.driver("550.54.15", cuda=12040)
    m.cudnn("8.9.7", MA, None, cuda=12020)
    build_ld_cache(m)


def f4_wrong_class(m):
    m.driver()
    lib = "/usr/lib/i386-linux-gnu"
    m.lib(lib + "/libcuda.so.1", "cuda", soname="libcuda.so.1")
    data = bytearray(m.p(lib + "/libcuda.so.1").read_bytes())
    data[4] = 1
    m.file(lib + "/libcuda.so.1", bytes(data))


def g1_cpu_torch(m):
    m.driver()
    m.dist(SITE, "torch", "2.3.0+cpu", files={"torch/version.py": "cuda = None\n"})


def g4_pins(m):
    m.driver()
    m.pip_cudnn(SITE, "9.3.0.75", cuda_major=12, cudart=12040)
    # Another major than the pin: a newer minor of the pinned major loads fine (tests/realworld_cases.py proves it).
    m.dist(SITE, "torch", "2.3.1", requires=["nvidia-cudnn-cu12==8.9.2.26; platform_system == \"Linux\""],
           files={"torch/version.py": "cuda = '12.1'\n"})


def g7_javacpp(m):
    system_ld(m)
    m.driver("550.54.15", cuda=12040)
    m.mkdir("/root/.m2/repository/org/bytedeco/cuda/10.2-7.6-1.5.3")
    m.cudnn("8.9.7", MA, None, cuda=12020)


def h1_container(m):
    m.file("/.dockerenv")
    m.mkdir("/usr/lib")


def h4_wsl_native_driver(m):
    m.file("/proc/sys/kernel/osrelease", "5.15.133.1-microsoft-standard-WSL2\n")
    m.file("/dev/dxg")
    m.ld_conf("ld.wsl.conf", ["/usr/lib/wsl/lib"])
    m.lib("/usr/lib/wsl/lib/libcuda.so.1", "cuda", soname="libcuda.so.1", DRV=12040)
    m.lib(MA + "/libcuda.so.535.54.03", "cuda", soname="libcuda.so.1", DRV=12020)
    m.link(MA + "/libcuda.so.1", "libcuda.so.535.54.03")
    m.file("/etc/ld.so.conf.d/x86_64-linux-gnu.conf", MA + "\n")
    build_ld_cache(m)


def i1_conda(m):
    prefix = "/opt/conda"
    m.driver()
    m.cudnn("8.9.7", prefix + "/lib", prefix + "/include", cuda=12020)
    m.file(prefix + "/conda-meta/cudnn-8.9.7.29-h092f7fd_0.json",
           '{"name": "cudnn", "version": "8.9.7.29", "build": "h092f7fd_0"}')
    m.file(prefix + "/conda-meta/jaxlib-0.4.31-cuda120py311.json",
           '{"name": "jaxlib", "version": "0.4.31", "build": "cuda120py311h0123456_200", '
           '"depends": ["cudnn >=9.1.1.17,<10.0a0", "python >=3.11,<3.12.0a0"]}')


def d6_broken_first(m):
    system_ld(m)
    m.driver()
    m.cudnn("9.14.0", MA, None, cuda=13000)
    m.file("/opt/stale/libcudnn.so.9", b"")  # an interrupted copy, first on LD_LIBRARY_PATH
    build_ld_cache(m)


FAILING = {
    "D6-broken-file-first-on-path": (d6_broken_first, {"LD_LIBRARY_PATH": "/opt/stale"}, [], "CD610", "error",
                                     "out of LD_LIBRARY_PATH"),
    "F1-ld-library-path-stray-colon": (lambda m: m.driver(), {"LD_LIBRARY_PATH": "/opt/cudnn/lib64:"}, [], "CD609",
                                       "warning", "export LD_LIBRARY_PATH=/opt/cudnn/lib64"),
    # name: (builder, env, args, expected id, severity, fix must contain)
    "A1-module-not-built": (a1_module_missing, {}, [], "CD102", "error", "dkms autoinstall"),
    "A3-nouveau": (a3_nouveau, {}, [], "CD103", "error", "blacklist nouveau"),
    "A4-driver-library-mismatch": (a4_mismatch, {}, [], "CD104", "error", "reboot"),
    "B2-gpu-too-old-for-cudnn": (b2_gpu_too_old, {}, [], "CD202", "error", ""),
    "B3-exclusive-process": (b3_exclusive, {}, [], "CD205", "error", "sudo nvidia-smi -i 0 -c DEFAULT"),
    "B4-mig-no-instances": (b4_mig_without_instances, {}, [], "CD206", "error", "nvidia-smi mig"),
    "C1-driver-too-old": (c1_driver_too_old, {}, [], "CD301", "error", "ubuntu-drivers install"),
    "C2-forward-compat-geforce": (c2_forward_compat_on_geforce, {"LD_LIBRARY_PATH": "/usr/local/cuda-12.4/compat"},
                                 [], "CD303", "error", "LD_LIBRARY_PATH"),
    "C3-stub-libcuda": (c3_stub, {"LD_LIBRARY_PATH": "/usr/local/cuda/lib64/stubs"}, [], "CD304", "error",
                        "stubs"),
    "D2-sublibraries-missing": (d2_sublibs_missing, {}, [], "CD402", "error", ""),
    "D3-mixed-versions": (d3_mixed, {}, [], "CD403", "error", ""),
    "D4-copied-without-P": (d4_plain_copy, {}, [], "CD404", "warning", "ln -sf"),
    "D4-dangling-link": (d4_dangling, {}, [], "CD408", "error", ""),
    "D5-permission-denied": (d5_unreadable, {}, [], "CD405", "error", "chmod a+r"),
    "D6-truncated-library": (d6_truncated, {}, [], "CD406", "error", ""),
    "D7-header-mismatch": (d7_header, {}, [], "CD407", "warning", ""),
    "E1-tf-built-with-newer-cudnn": (e1_tf_older_runtime, {}, [], "CD503", "error", ""),
    "E2-ld-library-path-shadows-torch": (e2_shadowed, {"LD_LIBRARY_PATH": "/opt/cudnn/lib64"}, [], "CD504",
                                         "warning", "LD_LIBRARY_PATH"),
    "F1-stale-ld-cache": (f1_stale_cache, {}, [], "CD608", "warning", "sudo ldconfig"),
    "F2-no-unversioned-nvrtc": (f2_nvrtc, {}, [], "CD602", "warning", "libnvrtc.so"),
    "F4-32bit-libcuda-on-path": (f4_wrong_class, {"LD_LIBRARY_PATH": "/usr/lib/i386-linux-gnu"}, [], "CD604",
                                 "warning", "LD_LIBRARY_PATH"),
    "F5-visible-devices-hides-all": (lambda m: m.driver(), {"CUDA_VISIBLE_DEVICES": "-1"}, [], "CD605", "error",
                                     "CUDA_VISIBLE_DEVICES"),
    "G1-cpu-only-torch": (g1_cpu_torch, {}, [], "CD701", "warning", "pip"),
    "G1-cpu-onnxruntime-is-info": (lambda m: (m.driver(), m.dist(SITE, "onnxruntime", "1.30.0")), {}, [], "CD701",
                                   "info", "onnxruntime-gpu"),
    "G4-conflicting-pins": (g4_pins, {}, [], "CD702", "error", "pip"),
    "G7-javacpp-preset-needs-cudnn7": (g7_javacpp, {}, [], "CD705", "error", "cuda-platform-redist"),
    "H1-container-without-gpu": (h1_container, {}, [], "CD801", "error", "--gpus all"),
    "H4-wsl-native-driver-shadowed": (h4_wsl_native_driver, {}, [], "CD802", "warning", "apt remove"),
    "H4-wsl-native-driver-wins": (h4_wsl_native_driver, {"LD_LIBRARY_PATH": MA}, [], "CD802", "error",
                                  "apt remove"),
    "I1-conda-cudnn-too-old": (i1_conda, {"CONDA_PREFIX": "/opt/conda"}, [], "CD901", "error", "conda install"),
    "policy-require-unmet": (cuda12_cudnn9, {}, ["--require", "cudnn>=9.5"], "CD910", "error", ""),
}


@pytest.mark.parametrize("name", sorted(FAILING))
def test_failure_is_diagnosed_with_its_fix(machine, check_json, name):
    build, env, args, rule_id, severity, fix_text = FAILING[name]
    build(machine)
    code, doc = check_json(machine, *args, env=env)
    hits = [f for f in doc["findings"] if f["id"] == rule_id and f["severity"] == severity]
    assert hits, [(f["id"], f["severity"], f["title"]) for f in doc["findings"]]
    assert fix_text in hits[0]["fix"], hits[0]["fix"]
    assert code == (1 if any(f["severity"] == "error" for f in doc["findings"]) else 0)
    for f in doc["findings"]:
        if f["severity"] in ("error", "warning"):
            assert f["fix"].strip(), "%s has no fix" % f["id"]


def test_an_ld_library_path_empty_as_a_whole_is_no_current_folder(machine, check_json):
    # glibc ignores an empty LD_LIBRARY_PATH (_dl_init_paths), and fix's filtered line can leave one (a new user's
    # trial: fix's own result was then warned of, with `unset LD_LIBRARY_PATH` as its fix)
    machine.driver()
    _, doc = check_json(machine, env={"LD_LIBRARY_PATH": ""})
    assert "CD609" not in [f["id"] for f in doc["findings"]]


def test_no_gpu_no_driver_machine_exits_1_and_says_so(machine, check_json):
    machine.mkdir("/usr/lib/x86_64-linux-gnu")
    code, doc = check_json(machine)
    assert code == 1
    [f] = [f for f in doc["findings"] if f["id"] == "CD101"]
    assert "No NVIDIA driver" in f["title"] and f["fix"]


# --- a driver that cannot run anything is not "No problems found" -------------------------------------------------


def _bare_metal_cuda12(m, **driver_kw):
    system_ld(m)
    m.driver("550.54.15", cuda=12040, **driver_kw)
    m.toolkit("12.4.1")
    m.file("/etc/ld.so.conf.d/cuda-12-4.conf", "/usr/local/cuda-12.4/lib64\n")
    m.cudnn("9.1.0", MA, "/usr/include/x86_64-linux-gnu", cuda=12040, header_name="cudnn_version_v9.h")
    build_ld_cache(m)


def test_kernel_module_without_libcuda_is_an_error(machine, check_json):
    _bare_metal_cuda12(machine, libcuda=False)
    code, doc = check_json(machine)
    hit = [f for f in doc["findings"] if f["id"] == "CD106"]
    assert code != 0 and hit and hit[0]["severity"] == "error"
    assert "libnvidia-compute-550" in hit[0]["fix"]


@pytest.mark.parametrize("kw", [{"gpus": []}, {"nvml_all_fail": True}], ids=["no-gpus", "nvml-fails"])
def test_driver_without_gpus_is_an_error(machine, check_json, kw):
    _bare_metal_cuda12(machine, **kw)
    code, doc = check_json(machine)
    hit = [f for f in doc["findings"] if f["id"] == "CD107"]
    assert code != 0 and hit and hit[0]["severity"] == "error"
    assert "dmesg" in hit[0]["fix"]


def test_kepler_is_never_told_to_upgrade_past_r470(machine, check_json):
    system_ld(machine)
    machine.driver("470.256.02", cuda=11040, gpus=[Gpu(name="Tesla K80", cc="3.7")])
    build_ld_cache(machine)
    for args in (["--for", "torch==2.5.1"], ["--for", "torch"], ["--for", "tensorflow==2.15.0"]):
        code, doc = check_json(machine, *args)
        cd920 = [f for f in doc["findings"] if f["id"] == "CD920"][0]
        assert cd920["severity"] == "error", (args, cd920["title"])
        assert "upgrade the NVIDIA driver" not in cd920["fix"], (args, cd920["fix"])
    cd401 = [f for f in doc["findings"] if f["id"] == "CD401"][0]
    assert "cu11==9" not in cd401["fix"] and "libcudnn9" not in cd401["fix"]


# --- a private environment's cuDNN is nobody else's concern -----------------------------------------------------------

HOME_SITE = "/home/ana/venv/lib/python3.11/site-packages"


@pytest.mark.parametrize("private,flagged", [("/home/ana", False), (HOME_SITE + "/nvidia/cudnn", True)],
                         ids=["home-0700", "cudnn-folder-0700"])
def test_a_venv_in_a_private_home_is_not_unreadable_cudnn(machine, check_json, private, flagged):
    # fix draws 301201-1 and -11: a venv under /root (0700) was healed, yet CD405 called its cuDNN an error, so `fix`
    # ended at exit 1. Other users cannot start that venv's Python either; only a blocker inside it breaks anyone.
    system_ld(machine)
    machine.driver()
    machine.pip_cudnn(HOME_SITE, "9.19.0.56", cuda_major=13, cudart=13010)
    os.chmod(machine.p(private), 0o700)
    _, doc = check_json(machine, env={"VIRTUAL_ENV": "/home/ana/venv"})
    hits = [f for f in doc["findings"] if f["id"] == "CD405"]
    assert bool(hits) is flagged, [(f["id"], f["title"]) for f in doc["findings"]]
    if flagged:
        assert hits[0]["fix"].endswith("chmod o+x %s" % machine.p(private))
