"""Rules over Facts built in Python: healthy machines stay clean, each catalogue failure gets its finding and fix."""
from __future__ import annotations

from typing import Callable, Dict, List

import pytest

from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.model import Facts, Finding, LibFile, Resolution, ToolkitFacts
from cudnn_doctor.rules import RuleContext, evaluate
from facts_factory import (PIP_CUDNN, SYSLIB, TORCH_SITE, clone, cudnn_copy, dl4j_machine, driver, framework,
                           gpu, lib_files, no_gpu_machine, real_machine, resolution, toolkit)

ALL_FINDINGS: List[Finding] = []


def run(facts: Facts, requires=(), target=None) -> List[Finding]:
    findings, ran = evaluate(facts, RuleContext(compat=load_compat(), requires=list(requires), target=target))
    ALL_FINDINGS.extend(findings)
    assert not [f for f in findings if "could not run" in f.title], [f.title for f in findings]
    return findings


def errors(findings):
    return [f for f in findings if f.severity.value == "error"]


# --- machines that work ------------------------------------------------------------------------------------------


def modern_cuda12() -> Facts:
    f = real_machine()
    f.driver = driver("550.54.15", "12.4")
    f.gpus = [gpu(name="NVIDIA A100-SXM4-80GB", cc="8.0")]
    f.toolkits = [toolkit("12.4", realpath="/usr/local/cuda-12.4")]
    f.cudnn = [cudnn_copy(SYSLIB, "9.1.0", "12.4", header="/usr/include/x86_64-linux-gnu/cudnn_version_v9.h",
                          max_sm="9.0", package="deb libcudnn9-cuda-12 9.1.0.70-1")]
    f.loader.resolved["libcudnn.so.9"] = resolution("libcudnn.so.9", SYSLIB + "/libcudnn.so.9")
    f.loader.resolved["libcudart.so.12"] = resolution("libcudart.so.12", "/usr/local/cuda/lib64/libcudart.so.12")
    del f.loader.resolved["libcudart.so.13"]
    f.python.frameworks = []
    f.python.nvidia_wheels = []
    return f


def cuda13_stack() -> Facts:
    f = real_machine()
    f.driver = driver("580.95.05", "13.0")
    f.toolkits = [toolkit("13.0.2")]
    f.cudnn = [cudnn_copy(SYSLIB, "9.17.0", "13.0", header="/usr/include/x86_64-linux-gnu/cudnn_version_v9.h",
                          max_sm="12.1", package="deb libcudnn9-cuda-13 9.17.0.29-1")]
    f.python.frameworks = []
    f.python.nvidia_wheels = []
    return f


@pytest.mark.parametrize("make", [modern_cuda12, cuda13_stack], ids=["cuda12-cudnn9", "cuda13-cudnn9-cc90"])
def test_healthy_stacks_are_clean(make):
    findings = run(make())
    assert [f.id for f in findings if f.severity.value != "info"] == []


def test_real_gpu_machine_has_no_errors_and_names_both_copies():
    findings = run(real_machine())
    assert errors(findings) == []
    two = [f for f in findings if f.id == "CD505"]
    assert len(two) == 1 and two[0].severity.value in ("warning", "info")
    text = two[0].title
    assert SYSLIB in text and PIP_CUDNN in text and "torch 2.11.0+cu130" in text and "a plain process" in text
    assert "9.14.0" in text and "9.19.0" in text


@pytest.mark.parametrize("cuda,cudnn,drv", [
    ("9.2.148", "7.2.1", "396.37"), ("10.0.130", "7.4.2", "410.48"),
    ("10.1.243", "7.6.5", "418.39"), ("10.2.89", "7.6.5", "440.33"),
])
def test_dl4j_beta6_pairs_fit(cuda, cudnn, drv):
    findings = run(dl4j_machine(cuda, cudnn, drv), target="dl4j==1.0.0-beta6")
    assert errors(findings) == []
    verdict = [f for f in findings if f.id == "CD920"]
    assert verdict and verdict[0].severity.value == "info"
    assert "CUDA %s" % ".".join(cuda.split(".")[:2]) in verdict[0].title


# --- machines that fail: (scenario, rule id, severity, text the fix must contain) ---------------------------------


def _kernel_module_missing(f):
    f.driver.kernel_module_loaded = False
    f.driver.kernel_module_version = None
    f.driver.version = None
    f.driver.cuda_version = None
    f.driver.loaded_modules = []
    f.driver.nvml_error = "Driver Not Loaded"
    f.gpus = []


def _nouveau(f):
    _kernel_module_missing(f)
    f.driver.loaded_modules = ["nouveau"]
    f.driver.nvidia_pci_devices[0]["driver"] = "nouveau"


def _mismatch(f):
    f.driver.kernel_module_version = "580.95.05"
    f.driver.nvml_error = "Driver/library version mismatch"


def _torch(f, version, cuda):
    fw = f.python.frameworks[0]
    fw.version, fw.cuda_version = version, cuda


def _blackwell_on_old_torch(f):
    f.gpus = [gpu(name="NVIDIA GeForce RTX 5090", cc="12.0")]
    _torch(f, "2.12.0+cu126", "12.6")


def _pascal(f, cudnn="9.17.0", cuda="12.9"):
    f.gpus = [gpu(name="NVIDIA GeForce GTX 1080", cc="6.1")]
    f.cudnn = [cudnn_copy(SYSLIB, cudnn, cuda, package="deb libcudnn9-cuda-12 %s.1-1" % cudnn)]
    f.python.frameworks = []


def _old_driver(f):
    f.driver = driver("535.104.05", "12.2")


def _forward_compat_on_geforce(f):
    compat_dir = "/usr/local/cuda-13.0/compat"
    f.driver = driver("535.104.05", "13.0", libcuda_path=compat_dir + "/libcuda.so.1",
                      libcuda_file_version="580.95.05")
    f.gpus = [gpu(name="NVIDIA GeForce RTX 3090", cc="8.6")]
    f.loader.ld_library_path = [compat_dir]
    f.loader.resolved["libcuda.so.1"] = resolution("libcuda.so.1", compat_dir + "/libcuda.so.1", via="LD_LIBRARY_PATH",
                                                   realpath=compat_dir + "/libcuda.so.580.95.05")


def _stub(f):
    stubs = "/usr/local/cuda/lib64/stubs"
    f.loader.ld_library_path = [stubs, "/opt/other/lib"]
    f.loader.resolved["libcuda.so.1"] = resolution("libcuda.so.1", stubs + "/libcuda.so.1", via="LD_LIBRARY_PATH")


def _tf_without_cuda(f):
    f.python.frameworks = [framework("tensorflow", "2.10.0", cuda_version="11.2", cudnn_version="8")]


def _no_cudnn(f):
    f.cudnn = []
    f.loader.resolved["libcudnn.so.9"] = resolution("libcudnn.so.9", None)
    f.python.frameworks[0].resolved_cudnn = resolution("libcudnn.so.9", None)


def _no_cudnn_cuda12_framework(f):
    """A new user's trial: onnxruntime-gpu built for CUDA 12 beside a CUDA 13 toolkit was offered CUDA 13's cuDNN."""
    _no_cudnn(f)
    f.python.frameworks = [framework("onnxruntime-gpu", "1.19.0", cuda_version="12", cudnn_version="9")]


def _system(f) -> "object":
    return f.cudnn[0]


def _sublibs_missing(f):
    _system(f).files = lib_files(SYSLIB, "9.14.0", sublibs=["graph", "ops"])


def _mixed(f):
    stale = lib_files(SYSLIB, "9.1.0", sublibs=["ops"])[2:]  # libcudnn_ops.so.9 -> .so.9.1.0
    copy = _system(f)
    copy.files = [x for x in copy.files if not x.name.startswith("libcudnn_ops")] + stale


def _copied_without_p():
    f = dl4j_machine("10.2.89", "7.6.5", "440.33")
    lib = f.cudnn[0].directory
    f.cudnn[0].files = [LibFile(name=n, path="%s/%s" % (lib, n), realpath="%s/%s" % (lib, n),
                                file_version="7.6.5" if n.count(".") > 2 else "7", readable=True, elf="ok")
                        for n in ("libcudnn.so.7", "libcudnn.so.7.6.5")]
    return f


def _dangling(f):
    copy = _system(f)
    link = copy.files[0]
    link.dangling, link.realpath, link.elf, link.readable = True, None, None, None
    link.link_chain = [link.path, SYSLIB + "/libcudnn.so.9.13.0"]


def _unreadable(f):
    for x in _system(f).files:
        x.readable, x.mode = False, "0600"


def _truncated(f):
    _system(f).files[1].elf = "truncated"


def _header_mismatch(f):
    _system(f).header_version = "9.10.0"


def _runtime_older(f):
    f.loader.ld_library_path = [SYSLIB]
    f.python.frameworks[0].resolved_cudnn = resolution("libcudnn.so.9", SYSLIB + "/libcudnn.so.9",
                                                       via="LD_LIBRARY_PATH", realpath=SYSLIB + "/libcudnn.so.9.14.0")


def _shadowed_compatible(f):
    other = "/opt/cudnn-9.20/lib"
    f.cudnn.append(cudnn_copy(other, "9.20.0", "13.0", origin="ld_library_path"))
    f.loader.ld_library_path = [other, "/opt/tools/lib"]
    f.python.frameworks[0].resolved_cudnn = resolution("libcudnn.so.9", other + "/libcudnn.so.9", via="LD_LIBRARY_PATH")


def _off_path(f):
    f.cudnn = [cudnn_copy("/opt/cudnn/lib", "9.14.0", "13.0", origin="other"), f.cudnn[1]]
    f.loader.resolved["libcudnn.so.9"] = resolution("libcudnn.so.9", None)


def _cudnn8_machine(f):
    f.cudnn.append(cudnn_copy(SYSLIB, "8.9.7", "12.2", package="deb libcudnn8 8.9.7.29-1+cuda12.2"))


def _nvrtc(f):
    _cudnn8_machine(f)
    f.loader.resolved["libnvrtc.so"] = resolution("libnvrtc.so", None)
    f.python.nvidia_wheels.append({"name": "nvidia-cuda-nvrtc-cu12", "version": "12.2.140", "location": TORCH_SITE})


def _libcuda_unversioned(f):
    _cudnn8_machine(f)
    f.loader.resolved["libcuda.so"] = resolution("libcuda.so", None)


def _wrong_class(f):
    f.loader.ld_library_path = ["/usr/lib/i386-linux-gnu"]
    f.loader.resolved["libcuda.so.1"].problems = [
        "/usr/lib/i386-linux-gnu/libcuda.so.1 (LD_LIBRARY_PATH) skipped: elfclass32"]


def _hidden(f):
    f.visibility.cuda_visible_devices = ""
    f.visibility.visible_indices = []
    f.gpus[0].visible = False


def _cpu_torch(f):
    fw = f.python.frameworks[0]
    fw.version, fw.cuda_version, fw.cuda_build, fw.resolved_cudnn, fw.requires = "2.11.0+cpu", None, False, None, []


def _pin_conflict(f):
    f.python.nvidia_wheels[0]["version"] = "9.13.0.50"


def _container(f):
    f.host.in_container = True
    f.host.dev_nodes = []
    f.driver = driver(None, None, kernel_module_version=None, kernel_module_loaded=None, libcuda_path=None,
                      libcuda_file_version=None, libnvml_path=None, libnvml_file_version=None, nvidia_pci_devices=[],
                      loaded_modules=[])
    f.gpus = []
    f.loader.resolved["libcuda.so.1"] = resolution("libcuda.so.1", None)


def _wsl_linux_driver(f):
    f.host.wsl = True
    f.host.dev_nodes = ["/dev/dxg"]


def _wsl_no_dxg(f):
    f.host.wsl = True
    f.host.dev_nodes = []


def _conda(f):
    f.python.conda_prefixes = ["/opt/conda"]
    f.python.conda_packages = [
        {"name": "cudnn", "version": "8.9.7.29", "build": "h092f7fd_0", "prefix": "/opt/conda"},
        {"name": "pytorch", "version": "2.4.0", "build": "py3.11_cuda12.1_cudnn9.1.0_0", "prefix": "/opt/conda"}]


def _cudnn_wrong_cuda():
    f = dl4j_machine("10.2.89", "7.6.5", "440.33")
    f.cudnn[0].cuda_version = "10.1"
    return f


def _cudnn_needs_driver(f):
    _old_driver(f)
    f.toolkits = []
    f.python.frameworks = []


def _jax_bad_cudnn(f):
    f.cudnn[1].version = "9.10.0"
    f.python.frameworks.append(framework("jax-cuda13-plugin", "0.6.0", cuda_version="13",
                                         resolved_cudnn=resolution("libcudnn.so.9", PIP_CUDNN + "/libcudnn.so.9")))


def _jax_for_cuda_12_beside_torch_for_13(f):
    # JAX 0.7.2's CUDA 12 plugin in torch's site (nvidia-cudnn-cu13 9.19): two CUDA builds of libcudnn.so.9
    pins = ['nvidia-cudnn-cu12<10.0,>=9.8; sys_platform == "linux" and extra == "with-cuda"']
    for name in ("jax-cuda12-pjrt", "jax-cuda12-plugin"):
        f.python.frameworks.append(framework(
            name, "0.7.2", cuda_version="12", requires=pins, extras=["with-cuda"],
            consumer_library=TORCH_SITE + "/jax_plugins/xla_cuda12/xla_cuda_plugin.so",
            resolved_cudnn=resolution("libcudnn.so.9", PIP_CUDNN + "/libcudnn.so.9") if name.endswith("pjrt") else None))


def _new_gpu_old_cudnn(f):
    f.gpus = [gpu(name="NVIDIA GeForce RTX 5090", cc="12.0")]
    _system(f).header_max_sm = "9.0"
    f.python.frameworks = []


def _memory(f):
    f.gpus[0].memory_free_mib = 2000
    f.gpus[0].running_processes = 2


def _new_gpu_old_toolkit(f):
    f.gpus = [gpu(name="NVIDIA GeForce RTX 5090", cc="12.0")]
    f.toolkits = [toolkit("12.4", realpath="/usr/local/cuda-12.4")]
    f.python.frameworks = []
    f.cudnn = []


def _dangling_toolkit(f):
    f.toolkits = [toolkit("13.0"), ToolkitFacts(path="/usr/local/cuda-12", realpath="/usr/local/cuda-12.2",
                                               dangling=True, link_chain=["/usr/local/cuda-12", "/usr/local/cuda-12.2"])]


def _preload(f):
    f.loader.ld_preload = [SYSLIB + "/libcudnn.so.9"]


def _cache(f):
    f.loader.cache_error = "not a valid ld.so.cache"


def _runtime_missing(f):
    f.loader.resolved["libcudart.so.13"] = resolution("libcudart.so.13", None)


def _mig(f):
    f.gpus[0].mig_mode = True


def _exclusive(f):
    f.gpus[0].compute_mode, f.gpus[0].running_processes = "exclusive_process", 1


def _load_error(f):
    _system(f).load_error = "libcudnn.so.9: undefined symbol: cudnnGetVersion_v9"


def _tf_on_windows(f):
    f.host.platform = "windows"
    f.python.frameworks = [framework("tensorflow", "2.15.0", cuda_build=False)]


def _stray_sublibrary(f):
    stray = cudnn_copy("/home/u/extra/f", "8.9.7", "12.2", origin="ld_library_path")
    stray.path = "/home/u/extra/f/libcudnn_ops_infer.so.8"
    stray.files = [x for x in stray.files if x.name.startswith("libcudnn_ops_infer.so.8")]
    f.cudnn.append(stray)
    f.loader.ld_library_path = ["/home/u/extra/f"]


def _old_wheel_on_pythonpath(f):
    # torch 2.11 (built with cuDNN 9.12) imports an old nvidia-cudnn-cu13 from a `pip install --target` folder on
    # PYTHONPATH ahead of its site's 9.19 wheel: that copy goes, nothing is installed
    pylibs = "/home/u/pylibs"
    [torch] = [fw for fw in f.python.frameworks if fw.name == "torch"]
    torch.resolved_cudnn = resolution("libcudnn.so.9", pylibs + "/nvidia/cudnn/lib/libcudnn.so.9",
                                      via="sys.path (torch's _preload_cuda_deps)")
    f.cudnn.append(cudnn_copy(pylibs + "/nvidia/cudnn/lib", "9.1.0", "13.0", origin="pip", links=False,
                              package="nvidia-cudnn-cu13 9.1.0.70"))
    f.python.nvidia_wheels.append({"name": "nvidia-cudnn-cu13", "version": "9.1.0.70", "location": pylibs,
                                   "via": "PYTHONPATH"})


def _pins_with_no_shared_release(f):
    # TensorFlow 2.19's [and-cuda] pin and the JAX 0.7.2 plugin's [with-cuda] floor, as PyPI's metadata has them
    f.python.frameworks = [
        framework("tensorflow", "2.19.0", TORCH_SITE, requires=['nvidia-cuda-nvcc-cu12==12.5.82; extra == "and-cuda"']),
        framework("jax-cuda12-plugin", "0.7.2", TORCH_SITE, requires=[
            'nvidia-cuda-nvcc-cu12>=12.6.85; sys_platform == "linux" and extra == "with-cuda"'])]
    f.python.nvidia_wheels = [{"name": "nvidia-cuda-nvcc-cu12", "version": "12.9.86", "location": TORCH_SITE}]


def mutate(fn: Callable) -> Callable[[], Facts]:
    def build() -> Facts:
        f = real_machine()
        fn(f)
        return f
    return build


SCENARIOS: Dict[str, tuple] = {
    # catalogue: (facts builder, rule, severity, fix must contain, run options)
    "baseline-no-driver": (no_gpu_machine, "CD101", "error", "ubuntu-drivers install", {}),
    "A1": (mutate(_kernel_module_missing), "CD102", "error", "dkms autoinstall", {}),
    "A3": (mutate(_nouveau), "CD103", "error", "blacklist nouveau", {}),
    "A4": (mutate(_mismatch), "CD104", "error", "sudo reboot", {}),
    "B1": (mutate(_blackwell_on_old_torch), "CD201", "error", "download.pytorch.org/whl/cu13", {}),
    "B2-cudnn": (mutate(_pascal), "CD202", "error", "9.10.2", {}),
    "B2-toolkit": (mutate(_pascal), "CD203", "error", "cuda-toolkit-12-9", {}),
    "B1-toolkit": (mutate(_new_gpu_old_toolkit), "CD204", "warning", "cuda-toolkit-13-0", {}),
    "B3": (mutate(_exclusive), "CD205", "error", "nvidia-smi -i 0 -c DEFAULT", {}),
    "B4": (mutate(_mig), "CD206", "error", "nvidia-smi mig", {}),
    "B5": (mutate(_memory), "CD207", "warning", "TF_FORCE_GPU_ALLOW_GROWTH=true", {}),
    "C1-toolkit": (mutate(_old_driver), "CD301", "error", ">= 580.65.06", {}),
    "C1-framework": (mutate(_old_driver), "CD302", "error", "whl/cu128", {}),
    "C2": (mutate(_forward_compat_on_geforce), "CD303", "error", "grep -vxF -e /usr/local/cuda-13.0/compat |", {}),
    "C3": (mutate(_stub), "CD304", "error", "grep -vxF -e /usr/local/cuda/lib64/stubs |", {}),
    "C4": (mutate(lambda f: (_old_driver(f), setattr(f, "toolkits", [toolkit("12.4")]))), "CD305", "warning",
           ">= 550.54.14", {}),
    "C5-framework": (mutate(_tf_without_cuda), "CD306", "error", "sudo apt install cuda-toolkit-11-2", {}),
    # The folder is already in /etc/ld.so.conf.d (through the /usr/local/cuda link): only the cache is stale.
    "C5-path": (mutate(_runtime_missing), "CD306", "warning", "sudo ldconfig   (the loader's configuration already", {}),
    "C5-toolkit-link": (mutate(_dangling_toolkit), "CD307", "error", "sudo ln -sfn /usr/local/cuda-13.0", {}),
    "C5-cudnn-build": (_cudnn_wrong_cuda, "CD501", "error", "cudnn-10.2-linux-x64-v7.6.5", {}),
    "C1-cudnn": (mutate(_cudnn_needs_driver), "CD502", "error", "ubuntu-drivers install", {}),
    "D1": (mutate(_no_cudnn), "CD401", "error", "libcudnn9-cuda-13", {}),
    "D1-framework": (mutate(_no_cudnn), "CD704", "error", "nvidia-cudnn-cu13", {}),
    "D1-framework-cuda": (mutate(_no_cudnn_cuda12_framework), "CD401", "error", "libcudnn9-cuda-12", {}),
    "D2": (mutate(_sublibs_missing), "CD402", "error", "sudo apt install --reinstall libcudnn9-cuda-13", {}),
    "D3": (mutate(_mixed), "CD403", "error", "libcudnn_ops.so.9.1.0", {}),
    "D4": (_copied_without_p, "CD404", "warning", "sudo ln -sf libcudnn.so.7.6.5 libcudnn.so.7", {}),
    "D4-dangling": (mutate(_dangling), "CD408", "error", "sudo ln -sf libcudnn.so.9.14.0 libcudnn.so.9", {}),
    "D5": (mutate(_unreadable), "CD405", "error", "sudo chmod a+r", {}),
    "D6": (mutate(_truncated), "CD406", "error", "apt install --reinstall libcudnn9-cuda-13", {}),
    "D-load": (mutate(_load_error), "CD409", "error", "apt install --reinstall libcudnn9-cuda-13", {}),
    "G2": (mutate(_tf_on_windows), "CD703", "warning", "WSL2", {}),
    "D7": (mutate(_header_mismatch), "CD407", "warning", "libcudnn9-dev-cuda-13=9.14.0.64-1", {}),
    "E1": (mutate(_runtime_older), "CD503", "error", "grep -vxF -e /usr/lib/x86_64-linux-gnu |", {}),
    "E2": (mutate(_shadowed_compatible), "CD504", "warning", "grep -vxF -e /opt/cudnn-9.20/lib |", {}),
    "E1-known-bad": (mutate(_jax_bad_cudnn), "CD506", "error", ">=9.10.1", {}),
    "B1-cudnn": (mutate(_new_gpu_old_cudnn), "CD508", "warning", "libcudnn9-cuda-13", {}),
    "D2-stray": (mutate(_stray_sublibrary), "CD402", "warning", "grep -vxF -e /home/u/extra/f |", {}),
    "G5-pythonpath-copy": (mutate(_old_wheel_on_pythonpath), "CD503", "error",
                           "rm -rf /home/u/pylibs/nvidia/cudnn /home/u/pylibs/nvidia_cudnn_cu13-*.dist-info", {}),
    "G4-no-shared-release": (mutate(_pins_with_no_shared_release), "CD702", "warning",
                             "leave nvidia-cuda-nvcc-cu12 12.9.86 as it is", {}),
    "F1": (mutate(_off_path), "CD601", "warning", "/etc/ld.so.conf.d/cudnn-doctor-opt-cudnn-lib.conf", {}),
    "F2": (mutate(_nvrtc), "CD602", "warning", "ln -s", {}),
    "F3": (mutate(_libcuda_unversioned), "CD603", "warning", "ln -sf %s/libcuda.so.1" % SYSLIB, {}),
    "F4": (mutate(_wrong_class), "CD604", "warning", "grep -vxF -e /usr/lib/i386-linux-gnu |", {}),
    "F5": (mutate(_hidden), "CD605", "error", "unset CUDA_VISIBLE_DEVICES", {}),
    "F-preload": (mutate(_preload), "CD606", "warning", "unset LD_PRELOAD", {}),
    "F-cache": (mutate(_cache), "CD607", "warning", "sudo ldconfig", {}),
    "G1": (mutate(_cpu_torch), "CD701", "warning", "download.pytorch.org/whl/cu130", {}),
    "G4": (mutate(_pin_conflict), "CD702", "error", 'pip install "nvidia-cudnn-cu13==9.19.0.56"', {}),
    "G4-rebuild": (mutate(_jax_for_cuda_12_beside_torch_for_13), "CD710", "warning",
                   '"jax-cuda13-pjrt==0.7.2" "jax-cuda13-plugin[with-cuda]==0.7.2"', {}),
    "G7": (lambda: _no_cudnn_dl4j(), "CD920", "error", "cudnn-10.2-linux-x64-v7.6.5", {"target": "dl4j==1.0.0-beta6"}),
    "H1": (mutate(_container), "CD801", "error", "--gpus all", {}),
    "H4": (mutate(_wsl_linux_driver), "CD802", "error", "apt remove --purge", {}),
    "H4-no-driver": (mutate(_wsl_no_dxg), "CD804", "error", "wsl --shutdown", {}),
    "I1": (mutate(_conda), "CD901", "error", 'conda install -p /opt/conda -c conda-forge "cudnn>=9.1.0,<10"', {}),
}


def _no_cudnn_dl4j() -> Facts:
    f = dl4j_machine("10.2.89", "7.6.5", "440.33")
    f.cudnn = []
    f.loader.resolved = {"libcuda.so.1": resolution("libcuda.so.1", SYSLIB + "/libcuda.so.1")}
    return f


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_failure_scenario(name):
    build, rule_id, severity, fix_text, options = SCENARIOS[name]
    findings = run(build(), **options)
    hits = [f for f in findings if f.id == rule_id and f.severity.value == severity]
    assert hits, "%s: expected %s %s, got %s" % (name, severity, rule_id,
                                                [(f.id, f.severity.value, f.title) for f in findings])
    assert any(fix_text in f.fix for f in hits), [f.fix for f in hits]
    assert all(f.catalogue or rule_id == "CD101" for f in hits)


def test_a_stray_sub_library_on_ld_library_path_is_not_called_off_the_search_path():
    """Draw 20261201-10: a folder on LD_LIBRARY_PATH holding only libcudnn_ops_infer.so.8 of another release; the
    loader searches it (CD709 names the mix), and libcudnn.so.8 is not there to be found."""
    f = modern_cuda12()
    stray = cudnn_copy("/home/u/extra/f", "8.9.7", "12.2", origin="ld_library_path")
    stray.path = "/home/u/extra/f/libcudnn_ops_infer.so.8"
    stray.files = [x for x in stray.files if x.name.startswith("libcudnn_ops_infer.so.8")]
    f.cudnn.append(stray)
    f.loader.ld_library_path = ["/home/u/extra/f"]
    f.loader.resolved["libcudnn.so.8"] = resolution("libcudnn.so.8", None)
    assert not [x for x in run(f) if x.id == "CD601" and x.severity.value == "warning"]
    # no install to complete (a new user's trial): CD402 says what the folder holds and drops it, as CD709 would
    [stray_402] = [x for x in run(f) if x.id == "CD402"]
    assert "without libcudnn.so.8" in stray_402.title, stray_402.title
    assert stray_402.remedy.commands[0].startswith('export LD_LIBRARY_PATH="$(printf'), stray_402.remedy.commands
    assert "/home/u/extra/f" in stray_402.remedy.commands[0] and "cp -P" not in stray_402.remedy.text
    whole = cudnn_copy("/home/u/extra/g", "8.9.7", "12.2", origin="other")
    f.cudnn.append(whole)
    assert [x.title for x in run(f) if x.id == "CD601"] == [
        "libcudnn.so.8 is installed in /home/u/extra/g, but the loader does not search there"]


def test_wsl_share_is_info_only():
    f = real_machine()
    f.host.wsl = True
    f.host.dev_nodes = ["/dev/dxg"]
    f.driver.libcuda_path = "/usr/lib/wsl/lib/libcuda.so.1"
    f.loader.resolved["libcuda.so.1"] = resolution("libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1")
    findings = run(f)
    assert [x.severity.value for x in findings if x.id == "CD803"] == ["info"]
    assert not [x for x in findings if x.id in ("CD802", "CD804")]


def test_forward_compat_on_datacenter_gpu_is_info():
    f = real_machine()
    _forward_compat_on_geforce(f)
    f.gpus = [gpu()]
    findings = run(f)
    assert [x.severity.value for x in findings if x.id == "CD303"] == ["info"]
    assert not [x for x in findings if x.id == "CD104"]  # a compat libcuda is not a version mismatch


def test_no_driver_is_not_reported_twice_in_a_container():
    f = real_machine()
    _container(f)
    ids = [x.id for x in run(f)]
    assert "CD801" in ids and "CD101" not in ids


def test_unknown_facts_say_cannot_tell():
    f = real_machine()
    f.cudnn[0].version = None
    f.toolkits[0].version = None
    f.driver.version = None
    f.driver.kernel_module_version = None
    f.driver.libcuda_file_version = None
    findings = run(f)
    infos = {x.id for x in findings if x.severity.value == "info"}
    assert {"CD507", "CD308", "CD105"} <= infos
    assert errors(findings) == []


def test_rules_are_pure():
    """Rules never change the facts they read."""
    f = real_machine()
    before = clone(f).to_dict()
    run(f, requires=["cudnn>=9"], target="torch")
    assert f.to_dict() == before


def test_every_error_and_warning_has_a_fix():
    for name in SCENARIOS:
        build, _, _, _, options = SCENARIOS[name]
        run(build(), **options)
    run(real_machine(), requires=["cuda>=14", "cudnn>=10", "driver>=999", "cc>=10", "toolkit>=14"],
        target="dl4j==1.0.0-beta6")
    assert ALL_FINDINGS
    missing = [(f.id, f.title) for f in ALL_FINDINGS if f.severity.value != "info" and not f.fix.strip()]
    assert missing == []
    assert all(f.id.startswith("CD") and f.title for f in ALL_FINDINGS)


def test_catalogue_coverage():
    """Every catalogue entry the brief lists is produced by at least one scenario."""
    wanted = {"A1", "A3", "A4", "B1", "B2", "B3", "B4", "C1", "C2", "C3", "C5", "D1", "D2", "D3", "D4", "D5", "D6",
              "D7", "E1", "E2", "F1", "F2", "F3", "F4", "F5", "G1", "G4", "G7", "H1", "H4", "H5", "I1"}
    seen = set()
    for name in SCENARIOS:
        build, _, _, _, options = SCENARIOS[name]
        for f in run(build(), **options):
            seen |= set(f.catalogue)
    f = real_machine()
    f.host.wsl, f.host.dev_nodes = True, ["/dev/dxg"]
    f.loader.resolved["libcuda.so.1"] = resolution("libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1")
    for x in run(f):
        seen |= set(x.catalogue)
    assert wanted - seen == set()


def test_cudnn_cuda_known_by_major_only_on_blackwell():
    """A cuDNN copy whose CUDA is known only by its major (Windows reads "12" from a cu12 wheel's name) on a
    Blackwell GPU: CD508 cannot tell whether that build is new enough and says nothing; it crashed comparing None with
    a version until mypy found the comparison."""
    f = modern_cuda12()
    f.gpus = [gpu(name="NVIDIA GeForce RTX 5090", cc="12.0")]
    _system(f).cuda_version, _system(f).header_max_sm = "12", "12.0"
    assert [x.id for x in run(f) if x.id == "CD508"] == []
