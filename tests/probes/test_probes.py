"""Probes over fake machines: real dlopen and NVML code paths against gcc-built fake libraries."""
from __future__ import annotations

import os

import pytest

from cudnn_doctor.diagnose import collect_facts
from kit import Gpu, build_ld_cache, ldconfig_available

MA = "/usr/lib/x86_64-linux-gnu"


def facts_of(m, **env):
    base = {"PATH": "/usr/bin:/bin"}
    base.update(env)
    return collect_facts(str(m.root), env=base)


def test_empty_machine_has_no_driver_no_gpu_no_cudnn(machine):
    machine.mkdir("/usr/lib/x86_64-linux-gnu")
    f = facts_of(machine)
    assert f.driver.version is None and f.driver.kernel_module_version is None
    assert f.gpus == [] and f.toolkits == [] and f.cudnn == []
    assert f.loader.resolved["libcudnn.so.9"].path is None
    assert f.probe_errors == []
    assert "cudnn" in f.searched and any(MA in s for s in f.searched["cudnn"])


def test_driver_and_gpu_through_fake_nvml(machine):
    machine.driver("580.95.05", cuda=13000, gpus=[Gpu(), Gpu(name="NVIDIA A100-SXM4-80GB", cc="8.0",
                                                              uuid="GPU-2222", mig=1)])
    machine.ld_conf("x86_64-linux-gnu.conf", [MA])
    f = facts_of(machine)
    d = f.driver
    assert d.version == "580.95.05" and d.version_source.startswith("nvml:")
    assert d.cuda_version == "13.0"
    assert d.kernel_module_version == "580.95.05" and d.kernel_module_loaded is True
    assert d.libcuda_file_version == "580.95.05" and d.libnvml_file_version == "580.95.05"
    assert [(g.index, g.name, g.compute_capability, g.memory_total_mib) for g in f.gpus] == [
        (0, "NVIDIA H100 80GB HBM3", "9.0", 81559), (1, "NVIDIA A100-SXM4-80GB", "8.0", 81559)]
    assert f.gpus[1].mig_mode is True and f.gpus[0].compute_mode == "default"
    assert all(g.visible for g in f.gpus)


def test_kernel_module_and_library_versions_kept_apart(machine):
    """A4: user space upgraded to 550.144.03 while the 550.90.07 module is still loaded."""
    machine.driver("550.144.03", cuda=12040, kernel_module="550.90.07", nvml_init_rc=18)
    f = facts_of(machine)
    assert f.driver.kernel_module_version == "550.90.07"
    assert f.driver.libcuda_file_version == "550.144.03"
    assert f.driver.nvml_error_code == 18 and "mismatch" in f.driver.nvml_error
    assert f.driver.cuda_version == "12.4"  # cuDriverGetVersion still answers without NVML


def test_nvml_that_fails_every_call_is_a_fact_not_a_crash(machine):
    machine.driver(nvml_all_fail=True)
    f = facts_of(machine)
    assert f.probe_errors == []
    assert f.driver.version == "580.95.05"  # from the file name, since NVML said nothing
    assert f.driver.version_source.startswith("file name:")
    assert f.gpus == []


@pytest.mark.parametrize("value,visible,problem", [
    (None, [0, 1], None),
    ("", [], None),
    ("1", [1], None),
    ("0,7", [0], "not a GPU index"),
    ("-1", [], "not a GPU index"),
    ("GPU-2222", [1], None),
    ("GPU-nope", [], "matches no GPU"),
])
def test_cuda_visible_devices(machine, value, visible, problem):
    machine.driver(gpus=[Gpu(uuid="GPU-1111"), Gpu(uuid="GPU-2222")])
    env = {} if value is None else {"CUDA_VISIBLE_DEVICES": value}
    f = facts_of(machine, **env)
    assert [g.index for g in f.gpus if g.visible] == visible
    if problem:
        assert any(problem in p for p in f.visibility.problems)
    else:
        assert f.visibility.problems == []


@pytest.mark.parametrize("version,layout,expect,source,nvcc", [
    ("9.2.148", "txt", "9.2.148", "version.txt", "9.2.148"),  # version.txt's number is nvcc's "V9.2.148"
    ("10.2.89", "txt", "10.2.89", "version.txt", "10.2.89"),
    ("11.8.20220929", "runfile", "11.8.20220929", "version.json", "11.8.89"),  # version.json's cuda_nvcc
    ("12.4.1", "runfile", "12.4.1", "version.json", "12.4.89"),
    ("13.0.2", "deb", "13.0", "include/cuda.h", None),  # deb installs have neither file
])
def test_toolkit_versions_and_sources(machine, version, layout, expect, source, nvcc):
    machine.toolkit(version, layout=layout)
    f = facts_of(machine)
    tk = next(t for t in f.toolkits if t.path == "/usr/local/cuda")
    assert tk.version == expect and tk.version_source.endswith(source)
    assert tk.realpath.startswith("/usr/local/cuda-")
    assert tk.cudart_version == ".".join(version.split(".")[:2])
    assert tk.nvcc_path == "/usr/local/cuda/bin/nvcc" and tk.nvcc_version == nvcc


def test_nvcc_version_needs_the_compiler(machine):
    """A toolkit whose version.json names nvcc but whose bin/ lacks it (a runtime-only install) has no nvcc."""
    prefix = machine.toolkit("12.4.1")
    machine.p("%s/bin/nvcc" % prefix).unlink()
    tk = next(t for t in facts_of(machine).toolkits if t.path == "/usr/local/cuda")
    assert tk.nvcc_path is None and tk.nvcc_version is None


def test_toolkit_links_resolve_inside_the_root(machine):
    """/usr/local/cuda -> /etc/alternatives/cuda -> /usr/local/cuda-13.0, absolute links kept inside --root."""
    machine.toolkit("13.0.2", layout="deb", link_as=None)
    machine.link("/etc/alternatives/cuda", "/usr/local/cuda-13.0")
    machine.link("/usr/local/cuda", "/etc/alternatives/cuda")
    f = facts_of(machine, CUDA_HOME="/usr/local/cuda")
    tk = f.toolkits[0]
    assert tk.path == "/usr/local/cuda" and tk.realpath == "/usr/local/cuda-13.0"
    assert tk.link_chain == ["/usr/local/cuda", "/etc/alternatives/cuda", "/usr/local/cuda-13.0"]
    assert "CUDA_HOME" in tk.found_via and "/usr/local/cuda" in tk.found_via


def test_dangling_cuda_link_is_reported(machine):
    machine.link("/usr/local/cuda", "/usr/local/cuda-12.4")
    f = facts_of(machine)
    assert f.toolkits[0].dangling and "does not exist" in f.toolkits[0].error
    assert f.probe_errors == []


def test_cudnn7_in_a_toolkit_reports_library_and_header(machine):
    machine.toolkit("10.2.89", layout="txt")
    machine.cudnn("7.6.5", "/usr/local/cuda-10.2/lib64", "/usr/local/cuda-10.2/include", cuda=10020)
    f = facts_of(machine)
    [c] = f.cudnn
    assert c.version == "7.6.5" and c.version_source == "cudnnGetVersion"
    assert c.cuda_version == "10.2" and c.origin == "toolkit"
    assert c.header_path == "/usr/local/cuda/include/cudnn.h" and c.header_version == "7.6.5"
    assert c.path.endswith("/libcudnn.so.7")


def test_cudnn8_sub_libraries_and_links(machine):
    machine.toolkit("11.8.0")
    machine.cudnn("8.9.7", "/usr/local/cuda-11.8/lib64", "/usr/local/cuda-11.8/include", cuda=11080)
    f = facts_of(machine)
    [c] = f.cudnn
    assert c.version == "8.9.7" and c.cuda_version == "11.8" and c.header_version == "8.9.7"
    names = {lf.name for lf in c.files}
    assert {"libcudnn_ops_infer.so.8", "libcudnn_cnn_train.so.8", "libcudnn.so.8.9.7", "libcudnn.so"} <= names
    soname = next(lf for lf in c.files if lf.name == "libcudnn.so.8")
    assert soname.is_link and soname.link_chain[-1].endswith("libcudnn.so.8.9.7") and soname.readable
    assert soname.file_version == "8.9.7" and soname.elf == "ok"


def test_header_disagreeing_with_library_is_visible(machine):
    """D7: header says 8.9.2, library says 8.5.0."""
    machine.toolkit("11.8.0")
    machine.cudnn("8.5.0", "/usr/local/cuda-11.8/lib64", "/usr/local/cuda-11.8/include", header_version="8.9.2")
    [c] = facts_of(machine).cudnn
    assert (c.version, c.header_version) == ("8.5.0", "8.9.2")


def test_debian_layout_with_package_owner(machine):
    machine.ld_conf("x86_64-linux-gnu.conf", [MA])
    main = machine.cudnn("9.14.0", MA, "/usr/include/x86_64-linux-gnu", cuda=13000,
                         header_name="cudnn_version_v9.h")
    machine.link("/usr/include/x86_64-linux-gnu/cudnn_version.h", "cudnn_version_v9.h")
    machine.file("/var/lib/dpkg/info/libcudnn9-cuda-13.list", "%s\n%s.14.0\n" % (main, main))
    machine.file("/var/lib/dpkg/status", "Package: libc6\nVersion: 2.39\n\nPackage: libcudnn9-cuda-13\n"
                 "Status: install ok installed\nVersion: 9.14.0.64-1\n\n")
    [c] = facts_of(machine).cudnn
    assert c.origin == "system" and c.version == "9.14.0" and c.cuda_version == "13.0"
    assert c.header_path == "/usr/include/x86_64-linux-gnu/cudnn_version_v9.h" and c.header_max_sm == "12.1"
    assert c.package == "deb libcudnn9-cuda-13 9.14.0.64-1"


def test_pip_and_system_copies_and_which_one_each_consumer_loads(machine):
    """The H200 case: system 9.14 for a plain process, pip 9.19 for torch (its RPATH wins)."""
    machine.driver()
    machine.ld_conf("x86_64-linux-gnu.conf", [MA])
    machine.cudnn("9.14.0", MA, "/usr/include/x86_64-linux-gnu", cuda=13000, header_name="cudnn_version_v9.h")
    site = "/opt/torch/.venv/lib/python3.12/site-packages"
    machine.pip_cudnn(site, "9.19.0.56", cuda_major=13, cudart=13010)
    machine.dist(site, "torch", "2.11.0+cu130", requires=["nvidia-cudnn-cu13==9.19.0.56; platform_system == \"Linux\""],
                 files={"torch/version.py": "__version__ = '2.11.0+cu130'\ncuda: Optional[str] = '13.0'\n"})
    machine.consumer(site + "/torch/lib/libtorch_cuda.so", ["libcudnn.so.9"], rpath="$ORIGIN/../../nvidia/cudnn/lib")
    assert build_ld_cache(machine) or not ldconfig_available()
    f = facts_of(machine, LD_LIBRARY_PATH="/usr/local/nvidia/lib64")
    by_origin = {c.origin: c for c in f.cudnn}
    assert by_origin["system"].version == "9.14.0" and by_origin["pip"].version == "9.19.0"
    assert by_origin["pip"].cuda_version == "13.1" and by_origin["pip"].package == "nvidia-cudnn-cu13 9.19.0.56"
    assert by_origin["pip"].header_version == "9.19.0"
    plain = f.loader.resolved["libcudnn.so.9"]
    assert plain.path.startswith(MA) and plain.via in ("ld.so.cache", "default path")
    [torch] = [fw for fw in f.python.frameworks if fw.name == "torch"]
    assert torch.cuda_version == "13.0" and torch.cuda_build is True
    assert torch.requires == ['nvidia-cudnn-cu13==9.19.0.56; platform_system == "Linux"']
    assert torch.resolved_cudnn.path == site + "/nvidia/cudnn/lib/libcudnn.so.9"
    assert torch.resolved_cudnn.via == "RPATH"
    assert any(s["path"].startswith(MA) for s in torch.resolved_cudnn.shadowed)


def test_ld_library_path_copy_shadows_the_others(machine):
    """E2: an HPC module's cuDNN on LD_LIBRARY_PATH is found before RUNPATH and the cache."""
    machine.ld_conf("x86_64-linux-gnu.conf", [MA])
    machine.cudnn("9.14.0", MA, None, cuda=13000)
    machine.cudnn("8.3.3", "/opt/cudnn/lib64", "/opt/cudnn/include", cuda=11050)
    machine.cudnn("9.1.0", "/opt/cudnn9/lib64", "/opt/cudnn9/include", cuda=12040)
    site = "/opt/venv/lib/python3.11/site-packages"
    machine.pip_cudnn(site, "9.19.0.56", cuda_major=13)
    machine.dist(site, "torch", "2.11.0", files={"torch/version.py": "cuda = '13.0'\n"})
    machine.consumer(site + "/torch/lib/libtorch_cuda.so", ["libcudnn.so.9"], runpath="$ORIGIN/../../nvidia/cudnn/lib")
    build_ld_cache(machine)
    f = facts_of(machine, LD_LIBRARY_PATH="/opt/cudnn9/lib64:/opt/cudnn/lib64")
    res = f.loader.resolved["libcudnn.so.9"]
    assert res.path == "/opt/cudnn9/lib64/libcudnn.so.9" and res.via == "LD_LIBRARY_PATH"
    assert any(s["path"].startswith(MA) for s in res.shadowed)
    assert f.loader.resolved["libcudnn.so.8"].path == "/opt/cudnn/lib64/libcudnn.so.8"
    torch = next(fw for fw in f.python.frameworks if fw.name == "torch")
    # RUNPATH comes after LD_LIBRARY_PATH, so torch also gets the module's 9.1.0 (catalogue E2).
    assert torch.resolved_cudnn.path == "/opt/cudnn9/lib64/libcudnn.so.9"
    assert torch.resolved_cudnn.via == "LD_LIBRARY_PATH"
    origins = {c.directory: c.origin for c in f.cudnn}
    assert origins["/opt/cudnn9/lib64"] == "ld_library_path"


def test_copies_made_without_cp_P_and_unreadable_files(machine):
    """D4 and D5: regular-file copies where links belong, and a file others cannot read."""
    lib = "/usr/local/cuda-12.4/lib64"
    machine.toolkit("12.4.1")
    machine.cudnn("9.1.0", lib, "/usr/local/cuda-12.4/include", cuda=12040)
    os.unlink(machine.p(lib + "/libcudnn.so.9"))
    machine.lib(lib + "/libcudnn.so.9", "cudnn", soname="libcudnn.so.9", CUDNN_V=90100, CUDART_V=12040)
    os.chmod(machine.p(lib + "/libcudnn_ops.so.9.1.0"), 0o600)
    [c] = facts_of(machine).cudnn
    files = {lf.name: lf for lf in c.files}
    assert files["libcudnn.so.9"].is_link is False and "libcudnn.so.9.1.0" in files
    assert files["libcudnn_ops.so.9"].readable is False
    assert files["libcudnn_ops.so.9.1.0"].mode == "0600"
    assert files["libcudnn_graph.so.9"].readable is True


def test_dangling_link_truncated_and_32bit_libraries(machine):
    lib = "/usr/local/cuda-12.4/lib64"
    machine.toolkit("12.4.1")
    machine.cudnn("9.1.0", lib, None, cuda=12040)
    machine.link(lib + "/libcudnn_adv.so.9", "libcudnn_adv.so.9.9.9")
    machine.file(lib + "/libcudnn_cnn.so.9.1.0", b"\x7fELF\x02\x01\x01" + b"\0" * 40)
    data = bytearray(machine.p(lib + "/libcudnn_ops.so.9.1.0").read_bytes())
    data[4] = 1
    machine.file(lib + "/libcudnn_ops.so.9.1.0", bytes(data))
    machine.file(lib + "/libcudnn_heuristic.so.9.1.0", "version https://git-lfs.github.com/spec/v1\n")
    [c] = facts_of(machine).cudnn
    files = {lf.name: lf for lf in c.files}
    assert files["libcudnn_adv.so.9"].dangling is True
    assert files["libcudnn_cnn.so.9.1.0"].elf == "truncated"
    assert files["libcudnn_ops.so.9.1.0"].elf == "elfclass32"
    assert files["libcudnn_heuristic.so.9.1.0"].elf == "not-elf"
    assert c.version == "9.1.0"


def test_garbage_header_and_non_elf_main_library(machine):
    lib = "/usr/local/cuda-12.4/lib64"
    machine.toolkit("12.4.1")
    machine.cudnn("9.1.0", lib, "/usr/local/cuda-12.4/include", cuda=12040)
    machine.file("/usr/local/cuda-12.4/include/cudnn_version.h", b"\x00\xff garbage #define CUDNN_MAJOR")
    machine.file(lib + "/libcudnn.so.9.1.0", b"not a library at all")
    f = facts_of(machine)
    [c] = f.cudnn
    assert c.header_version is None
    # glibc's own words for a 20-byte non-ELF file, with the path as seen inside the root.
    assert c.load_error == "/usr/local/cuda-12.4/lib64/libcudnn.so.9.1.0: file too short"
    assert c.version == "9.1.0" and c.version_source == "file name"
    assert f.probe_errors == []


@pytest.mark.parametrize("flavour,expect", [("CRASH_ON_LOAD", "crashed"), ("HANG_ON_LOAD", "did not finish")])
def test_library_that_crashes_or_hangs_cannot_take_the_doctor_down(machine, flavour, expect):
    from cudnn_doctor.host import Host
    from cudnn_doctor.knowledge import load_compat
    from cudnn_doctor.probes import collect

    machine.ld_conf("x86_64-linux-gnu.conf", [MA])
    machine.cudnn("9.14.0", MA, None, cuda=13000, **{flavour: True})
    machine.cudnn("8.9.7", "/opt/good/lib", "/opt/good/include", cuda=12020)
    host = Host(str(machine.root), env={"PATH": "/bin", "LD_LIBRARY_PATH": "/opt/good/lib"}, native_timeout=3.0)
    f = collect(host, compat=load_compat())
    bad = next(c for c in f.cudnn if c.major == 9)
    good = next(c for c in f.cudnn if c.major == 8)
    assert expect in bad.load_error and bad.version == "9.14.0" and bad.version_source == "file name"
    assert good.version == "8.9.7" and good.load_error is None


def test_conda_copy_and_package(machine):
    prefix = "/opt/conda"
    machine.cudnn("8.9.7", prefix + "/lib", prefix + "/include", cuda=12020)
    machine.file(prefix + "/conda-meta/cudnn-8.9.7.29-h092f7fd_0.json",
                 '{"name": "cudnn", "version": "8.9.7.29", "build": "h092f7fd_0"}')
    f = facts_of(machine, CONDA_PREFIX=prefix)
    [c] = f.cudnn
    assert c.origin == "conda" and c.package == "conda cudnn 8.9.7.29 (h092f7fd_0)"
    assert f.python.conda_packages[0]["name"] == "cudnn"


def test_cpu_only_and_cuda_framework_builds(machine):
    site = "/usr/local/lib/python3.11/site-packages"
    machine.dist(site, "torch", "2.3.0+cpu", files={"torch/version.py": "cuda = None\n"})
    machine.dist(site, "tensorflow", "2.15.0", files={"tensorflow/python/platform/build_info.py":
                 "build_info = {'cuda_version': '12.2', 'cudnn_version': '8', 'is_cuda_build': True}\n"})
    machine.dist(site, "jaxlib", "0.4.7+cuda11.cudnn86")
    machine.dist(site, "torchvision", "0.18.0")
    fws = {fw.name: fw for fw in facts_of(machine).python.frameworks}
    assert set(fws) == {"torch", "tensorflow", "jaxlib"}
    assert fws["torch"].cuda_build is False
    assert (fws["tensorflow"].cuda_version, fws["tensorflow"].cudnn_version) == ("12.2", "8")
    assert fws["jaxlib"].cudnn_version == "8.6" and fws["jaxlib"].cuda_version == "11"


def test_stub_libcuda_and_wsl_and_container_facts(machine):
    machine.file("/proc/sys/kernel/osrelease", "5.15.133.1-microsoft-standard-WSL2\n")
    machine.file("/dev/dxg")
    machine.file("/.dockerenv")
    machine.lib("/usr/local/cuda/lib64/stubs/libcuda.so", "cuda", soname="libcuda.so.1", DRV=12040)
    machine.link("/usr/local/cuda/lib64/stubs/libcuda.so.1", "libcuda.so")
    f = facts_of(machine, LD_LIBRARY_PATH="/usr/local/cuda/lib64/stubs")
    assert f.host.wsl is True and f.host.in_container is True and "/dev/dxg" in f.host.dev_nodes
    assert f.loader.resolved["libcuda.so.1"].path == "/usr/local/cuda/lib64/stubs/libcuda.so.1"
    assert f.driver.libcuda_file_version is None


def test_pci_device_without_driver_and_nouveau(machine):
    dev = "/sys/bus/pci/devices/0000:01:00.0"
    machine.file(dev + "/vendor", "0x10de\n")
    machine.file(dev + "/class", "0x030200\n")
    machine.file(dev + "/device", "0x2330\n")
    machine.file("/proc/modules", "nouveau 2211840 3 - Live 0x0\n")
    f = facts_of(machine)
    assert f.driver.nvidia_pci_devices == [{"address": "0000:01:00.0", "class": "0x030200", "device": "0x2330",
                                            "driver": None}]
    assert f.driver.loaded_modules == ["nouveau"] and f.driver.kernel_module_loaded is False


def test_garbage_ld_cache_is_recorded(machine):
    machine.file("/etc/ld.so.cache", b"glibc-ld.so.cache1.1" + b"\xff" * 10)
    f = facts_of(machine)
    assert f.loader.cache_error and f.probe_errors == []


def test_absolute_links_never_escape_the_root(machine):
    """/usr/local/cuda-13.0 exists on many real machines; under --root it must not be seen through a link."""
    machine.link("/usr/local/cuda", "/usr/local/cuda-13.0")
    machine.link("/usr/lib/x86_64-linux-gnu", "/usr/lib")
    f = facts_of(machine)
    assert f.toolkits[0].dangling is True and f.toolkits[0].version is None
    assert f.cudnn == []


@pytest.mark.parametrize("flavour,expect", [("CRASH_IN_INIT", "crashed (SIGSEGV)"), ("HANG_IN_INIT", "did not answer")])
def test_nvml_that_crashes_or_hangs_is_reported(machine, flavour, expect):
    from cudnn_doctor.host import Host
    from cudnn_doctor.knowledge import load_compat
    from cudnn_doctor.probes import collect

    machine.driver("580.95.05", cuda=13000, nvml_misbehave=flavour)
    f = collect(Host(str(machine.root), env={"PATH": "/bin"}, native_timeout=3.0), compat=load_compat())
    assert expect in f.driver.nvml_error
    # libcuda still answered in a fresh child after NVML's child died.
    assert f.driver.cuda_version == "13.0" and f.driver.version == "580.95.05"


def test_unreadable_folder_is_skipped_not_fatal(machine, monkeypatch):
    """As root chmod 000 is no obstacle, so the OS refusal is simulated at the one place folders are listed."""
    machine.toolkit("12.4.1")
    machine.cudnn("9.1.0", "/usr/local/cuda-12.4/lib64", None, cuda=12040)
    real_listdir = os.listdir

    def refuse(path):
        if str(path).endswith("lib64"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_listdir(path)

    monkeypatch.setattr(os, "listdir", refuse)
    f = facts_of(machine)
    assert f.cudnn == [] and f.probe_errors == []
    assert f.toolkits[0].version == "12.4.1"


def test_cudart_soname_is_read_from_the_file(machine):
    """CUDA 11's runtime is libcudart.so.11.0; the loader is asked for exactly that name."""
    machine.toolkit("11.8.0")
    machine.file("/etc/ld.so.conf", "/usr/local/cuda-11.8/lib64\n")
    build_ld_cache(machine)
    f = facts_of(machine)
    [tk] = f.toolkits
    assert tk.cudart_soname == "libcudart.so.11.0"
    assert f.loader.resolved["libcudart.so.11.0"].path == "/usr/local/cuda-11.8/lib64/libcudart.so.11.0"


def test_read_blocker_names_the_folder_to_fix(machine):
    lib = "/opt/cudnn/lib64"
    machine.cudnn("9.1.0", lib, None, cuda=12040)
    os.chmod(machine.p("/opt/cudnn"), 0o750)
    [c] = facts_of(machine, LD_LIBRARY_PATH=lib).cudnn
    main = next(f for f in c.files if f.name == "libcudnn.so.9")
    assert main.readable is False and main.read_blocker == "/opt/cudnn"


def _as_aarch64(path) -> None:
    """Rewrite e_machine to EM_AARCH64 (183): enough for the ELF and loader logic, which never run the code."""
    data = bytearray(path.read_bytes())
    data[18:20] = (183).to_bytes(2, "little")
    path.write_bytes(bytes(data))


def test_an_arm64_root_is_judged_as_arm64(machine):
    """An sbsa/Grace image inspected from an x86_64 host: aarch64 libraries are the right ones there."""
    lib = "/usr/lib/aarch64-linux-gnu"
    _as_aarch64(machine.lib("/bin/sh", "cuda"))
    machine.cudnn("9.14.0", lib, None, cuda=13000)
    for f in machine.p(lib).iterdir():
        if f.is_file() and not f.is_symlink():
            _as_aarch64(f)
    machine.lib("/usr/lib/x86_64-linux-gnu/libcudnn.so.9", "cudnn", soname="libcudnn.so.9")
    f = facts_of(machine)
    assert f.host.machine == "aarch64"
    arm = next(c for c in f.cudnn if c.directory == lib)
    assert all(lf.elf == "ok" for lf in arm.files if not lf.dangling)
    assert f.loader.resolved["libcudnn.so.9"].path == lib + "/libcudnn.so.9"
    assert lib in f.loader.default_dirs


def test_odd_files_are_facts_not_copies(machine):
    """A link loop is named as one; a folder called libcudnn.so.8 is no cuDNN copy; a broken conda record
    does not hide the Python environment; dlopen messages name paths as seen inside --root."""
    machine.link(MA + "/libcudnn.so.9", "libcudnn.so.9.1.0")
    machine.link(MA + "/libcudnn.so.9.1.0", "libcudnn.so.9")
    machine.mkdir("/usr/local/cuda/lib64/libcudnn.so.8")
    machine.file("/opt/conda/conda-meta/cudnn-9.json", '{"name": "cudnn", "depends": null}')
    machine.file("/opt/conda/conda-meta/libcudnn-9.json", "null")
    machine.dist("/usr/local/lib/python3.11/site-packages", "torch", "2.5.1", files={"torch/version.py": "cuda = '12.4'\n"})
    machine.file("/opt/bad/lib/libcudnn.so.8", b"not an elf file at all, just text")
    f = facts_of(machine, CONDA_PREFIX="/opt/conda", LD_LIBRARY_PATH="/opt/bad/lib")
    assert f.probe_errors == []
    assert [fw.name for fw in f.python.frameworks] == ["torch"]
    loop = next(c for c in f.cudnn if c.directory == MA)
    main = next(lf for lf in loop.files if lf.name == "libcudnn.so.9")
    assert main.link_chain[-1] == "(link loop)" and main.dangling
    assert not any(c.directory == "/usr/local/cuda/lib64" for c in f.cudnn)
    bad = next(c for c in f.cudnn if c.directory == "/opt/bad/lib")
    assert bad.load_error and str(machine.root) not in bad.load_error and "/opt/bad/lib/libcudnn.so.8" in bad.load_error


def test_wheels_in_a_pythonpath_folder_are_marked_as_seen_by_every_environment(machine):
    # `pip install --target /home/u/pydeps` + PYTHONPATH: every environment's pip counts these as installed.
    machine.mkdir("/home/u/pydeps/nvidia_cudnn_cu12-9.5.1.17.dist-info")
    machine.mkdir("/home/u/venv/lib/python3.11/site-packages/nvidia_cublas_cu12-12.3.4.1.dist-info")
    f = facts_of(machine, PYTHONPATH="/home/u/pydeps:relative", VIRTUAL_ENV="/home/u/venv")
    assert {w["name"]: w.get("via") for w in f.python.nvidia_wheels} == {
        "nvidia-cudnn-cu12": "PYTHONPATH", "nvidia-cublas-cu12": None}
