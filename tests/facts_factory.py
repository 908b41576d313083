"""Facts objects built in Python for rule tests: the real GPU machine by default, with pieces to swap in."""
from __future__ import annotations

import copy as _copy
import os
from typing import Dict, List, Optional, Sequence

from cudnn_doctor.model import (CudnnCopy, DriverFacts, Facts, FrameworkFacts, GpuFacts, HostFacts, LibFile,
                                LoaderFacts, PythonEnvFacts, Resolution, ToolkitFacts, VisibilityFacts)
from cudnn_doctor.run_results import BenchResult

SYSLIB = "/usr/lib/x86_64-linux-gnu"
TORCH_SITE = "/opt/torch/.venv/lib/python3.12/site-packages"
PIP_CUDNN = TORCH_SITE + "/nvidia/cudnn/lib"

SUBLIBS = {
    7: [],
    8: ["ops_infer", "ops_train", "cnn_infer", "cnn_train", "adv_infer", "adv_train"],
    9: ["graph", "engines_precompiled", "engines_runtime_compiled", "heuristic", "ops", "cnn", "adv"],
}


def lib_files(directory: str, version: str, links: bool = True, sublibs: Optional[Sequence[str]] = None,
              **overrides) -> List[LibFile]:
    """The files of one cuDNN install: soname links to full-version files (deb/tarball), or plain .so.N (wheel)."""
    major = int(version.split(".")[0])
    names = ["libcudnn"] + ["libcudnn_%s" % s for s in (SUBLIBS[major] if sublibs is None else sublibs)]
    out: List[LibFile] = []
    for stem in names:
        short = "%s.so.%d" % (stem, major)
        full = "%s.so.%s" % (stem, version)
        if links:
            out.append(LibFile(name=short, path="%s/%s" % (directory, short), realpath="%s/%s" % (directory, full),
                               file_version=version, is_link=True, link_chain=["%s/%s" % (directory, short),
                                                                                "%s/%s" % (directory, full)],
                               readable=True, mode="0644", elf="ok"))
            out.append(LibFile(name=full, path="%s/%s" % (directory, full), realpath="%s/%s" % (directory, full),
                               file_version=version, readable=True, mode="0644", elf="ok"))
        else:
            out.append(LibFile(name=short, path="%s/%s" % (directory, short), realpath="%s/%s" % (directory, short),
                               file_version=str(major), readable=True, mode="0644", elf="ok"))
    for f in out:
        for key, value in overrides.items():
            setattr(f, key, value)
    return out


def cudnn_copy(directory: str, version: str, cuda: Optional[str], origin: str = "system", links: bool = True,
               header: Optional[str] = None, header_version: Optional[str] = None, package: Optional[str] = None,
               max_sm: Optional[str] = None, sublibs: Optional[Sequence[str]] = None, **fields) -> CudnnCopy:
    major = int(version.split(".")[0])
    c = CudnnCopy(path="%s/libcudnn.so.%d" % (directory, major), directory=directory, major=major, version=version,
                  version_source="cudnnGetVersion", cuda_version=cuda,
                  cuda_version_source="cudnnGetCudartVersion" if cuda else None, header_path=header,
                  header_version=header_version or (version if header else None), header_max_sm=max_sm,
                  origin=origin, package=package, found_via=["test"],
                  files=lib_files(directory, version, links=links, sublibs=sublibs))
    for key, value in fields.items():
        setattr(c, key, value)
    return c


def resolution(name: str, path: Optional[str], via: Optional[str] = "ld.so.cache",
               realpath: Optional[str] = None, **fields) -> Resolution:
    r = Resolution(name=name, path=path, realpath=realpath or path, via=via if path else None)
    for key, value in fields.items():
        setattr(r, key, value)
    return r


def toolkit(version: str, path: str = "/usr/local/cuda", realpath: Optional[str] = None, **fields) -> ToolkitFacts:
    mm = ".".join(version.split(".")[:2])
    from cudnn_doctor.knowledge import load_compat

    real = realpath or "/usr/local/cuda-%s" % mm
    soname = load_compat().cudart_soname(mm)
    t = ToolkitFacts(path=path, realpath=real, version=version,
                     version_source="nvcc --version", found_via=["/usr/local/cuda"],
                     cudart_version=mm, kind="system", cudart_path="%s/lib64/%s" % (path, soname),
                     cudart_soname=soname)
    for key, value in fields.items():
        setattr(t, key, value)
    return t


def gpu(index: int = 0, name: str = "NVIDIA H100 80GB HBM3", cc: str = "9.0", **fields) -> GpuFacts:
    g = GpuFacts(index=index, name=name, uuid="GPU-%08d" % index, compute_capability=cc, memory_total_mib=81559,
                 memory_free_mib=80000, mig_mode=False, compute_mode="default", running_processes=0, visible=True,
                 source="nvml:test")
    for key, value in fields.items():
        setattr(g, key, value)
    return g


def driver(version: str = "580.159.04", cuda: Optional[str] = "13.0", **fields) -> DriverFacts:
    d = DriverFacts(version=version, version_source="nvml:test", cuda_version=cuda,
                    cuda_version_source="nvml:test" if cuda else None, kernel_module_version=version,
                    kernel_module_source="/proc/driver/nvidia/version", kernel_module_loaded=True,
                    libcuda_path=SYSLIB + "/libcuda.so.1", libcuda_file_version=version,
                    libnvml_path=SYSLIB + "/libnvidia-ml.so.1", libnvml_file_version=version,
                    nvidia_pci_devices=[{"address": "0000:01:00.0", "class": "0x030200", "device": "0x2330",
                                         "driver": "nvidia"}],
                    loaded_modules=["nvidia", "nvidia_uvm", "nvidia_modeset", "nvidia_drm"], modules_listed=True)
    for key, value in fields.items():
        setattr(d, key, value)
    return d


def framework(name: str, version: str, location: str = TORCH_SITE, **fields) -> FrameworkFacts:
    fw = FrameworkFacts(name=name, version=version, location=location, cuda_build=True, source="test")
    for key, value in fields.items():
        setattr(fw, key, value)
    return fw


def real_machine() -> Facts:
    """The GPU machine the project measured: H100, driver 580.159.04, CUDA 13.0 debs, system cuDNN 9.14, torch with
    the nvidia-cudnn-cu13 9.19 wheel. It must produce no errors."""
    system = cudnn_copy(SYSLIB, "9.14.0", "13.0", origin="system",
                        header="/usr/include/x86_64-linux-gnu/cudnn_version_v9.h", max_sm="12.1",
                        package="deb libcudnn9-cuda-13 9.14.0.64-1")
    pip = cudnn_copy(PIP_CUDNN, "9.19.0", "13.1", origin="pip", links=False,
                     header=TORCH_SITE + "/nvidia/cudnn/include/cudnn_version.h", max_sm="12.1",
                     package="nvidia-cudnn-cu13 9.19.0.56")
    torch = framework("torch", "2.11.0+cu130", cuda_version="13.0",
                      requires=['nvidia-cudnn-cu13==9.19.0.56; platform_system == "Linux"',
                                'nvidia-cuda-runtime==13.0.96; platform_system == "Linux"'],
                      consumer_library=TORCH_SITE + "/torch/lib/libtorch_cuda.so",
                      resolved_cudnn=resolution("libcudnn.so.9", PIP_CUDNN + "/libcudnn.so.9", via="RUNPATH"))
    facts = Facts(
        host=HostFacts(root="/", platform="linux", machine="x86_64", kernel_release="6.8.0-88-generic",
                       in_container=False, wsl=False, python="3.12.3",
                       dev_nodes=["/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-uvm"]),
        driver=driver(),
        gpus=[gpu()],
        toolkits=[toolkit("13.0", nvcc_path="/usr/local/cuda-13.0/bin/nvcc", nvcc_version="13.0.88",
                          cudart_path="/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcudart.so.13")],
        cudnn=[system, pip],
        loader=LoaderFacts(
            ld_library_path=[], conf_dirs=["/usr/local/cuda/targets/x86_64-linux/lib", SYSLIB],
            cache_path="/etc/ld.so.cache", cache_entries=900, default_dirs=["/lib", "/usr/lib"],
            resolved={
                "libcudnn.so.9": resolution("libcudnn.so.9", SYSLIB + "/libcudnn.so.9",
                                            realpath=SYSLIB + "/libcudnn.so.9.14.0"),
                "libcuda.so.1": resolution("libcuda.so.1", SYSLIB + "/libcuda.so.1",
                                           realpath=SYSLIB + "/libcuda.so.580.159.04"),
                "libnvidia-ml.so.1": resolution("libnvidia-ml.so.1", SYSLIB + "/libnvidia-ml.so.1"),
                "libcudart.so.13": resolution("libcudart.so.13",
                                              "/usr/local/cuda/targets/x86_64-linux/lib/libcudart.so.13"),
                "libcuda.so": resolution("libcuda.so", SYSLIB + "/libcuda.so"),
            }),
        python=PythonEnvFacts(site_dirs=[TORCH_SITE], frameworks=[torch],
                              nvidia_wheels=[{"name": "nvidia-cudnn-cu13", "version": "9.19.0.56",
                                              "location": TORCH_SITE},
                                             {"name": "nvidia-cuda-runtime", "version": "13.0.96",
                                              "location": TORCH_SITE}]),
        visibility=VisibilityFacts(),
    )
    return facts


def make_facts(**overrides) -> Facts:
    """The real machine with top-level fields replaced: make_facts(gpus=[...], cudnn=[...])."""
    facts = real_machine()
    for key, value in overrides.items():
        setattr(facts, key, value)
    return facts


def dl4j_machine(cuda: str, cudnn: str, driver_version: str, gpu_name: str = "NVIDIA GeForce GTX 1080",
                 cc: str = "6.1") -> Facts:
    """A DL4J-era box: one toolkit under /usr/local/cuda-X.Y, cuDNN 7 copied into it with links, no Python."""
    mm = ".".join(cuda.split(".")[:2])
    home = "/usr/local/cuda-%s" % mm
    lib = home + "/lib64"
    copy = cudnn_copy(lib, cudnn, mm, origin="toolkit", header=home + "/include/cudnn.h")
    d = driver(driver_version, None)
    return Facts(
        host=HostFacts(platform="linux", machine="x86_64", kernel_release="4.15.0-76-generic", in_container=False,
                       wsl=False, dev_nodes=["/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-uvm"]),
        driver=d, gpus=[gpu(name=gpu_name, cc=cc, memory_total_mib=8119, memory_free_mib=8000)],
        toolkits=[toolkit(cuda, path="/usr/local/cuda", realpath=home)],
        cudnn=[copy],
        loader=LoaderFacts(conf_dirs=[lib, SYSLIB], default_dirs=["/lib", "/usr/lib"], resolved={
            "libcudnn.so.7": resolution("libcudnn.so.7", lib + "/libcudnn.so.7", realpath=lib + "/libcudnn.so." + cudnn),
            "libcuda.so.1": resolution("libcuda.so.1", SYSLIB + "/libcuda.so.1"),
        }),
        python=PythonEnvFacts(),
    )


def clone(facts: Facts) -> Facts:
    return _copy.deepcopy(facts)


def no_gpu_machine() -> Facts:
    """A machine with nothing NVIDIA on it."""
    return Facts(host=HostFacts(platform="linux", machine="x86_64", kernel_release="6.8.0", in_container=False,
                                wsl=False), driver=DriverFacts(kernel_module_loaded=False))


def bench_result(**measured) -> BenchResult:
    """A bench run for the CD95x rules with only the fields a test names (gpu, peak, nvml, layers, ...); the others
    empty, as a run that measured nothing of them reports."""
    empty = {"gpu": {}, "cudnn": {}, "driver_cuda_version": None, "nvml": {}, "peak": None, "seed": [], "seed_raw": {},
             "seed_source": "", "layers": [], "totals": [], "workspace_limit": None, "timing": "",
             "nvrtc_library": None, "plan": {}, "duration_s": 0.0, "child_timings_ms": {}}
    return BenchResult(**dict(empty, **measured))
