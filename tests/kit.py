"""Fake-machine kit: temporary roots laid out like real installs, with gcc-built fake NVIDIA libraries."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence

FAKELIBS = Path(__file__).parent / "fakelibs"
_CACHE = Path(tempfile.gettempdir()) / ("cudnn-doctor-fakelibs-%d" % os.getuid())

SOURCES = {"cudnn": "fake_cudnn.c", "cudart": "fake_cudart.c", "cuda": "fake_cuda.c", "nvml": "fake_nvml.c"}


def have_gcc() -> bool:
    return shutil.which("gcc") is not None


def build_lib(kind: str, soname: Optional[str] = None, source: Optional[Path] = None, **defines: object) -> Path:
    """Compile a fake library once per (source, defines) and return the cached .so path.

    ``defines`` become -D flags: ``CUDNN_V=8907`` or ``CRASH_ON_LOAD=True``.
    """
    src = Path(source) if source else FAKELIBS / SOURCES[kind]
    flags: List[str] = []
    for key, value in sorted(defines.items()):
        flags.append("-D%s" % key if value is True else "-D%s=%s" % (key, value))
    if soname:
        flags.append("-Wl,-soname,%s" % soname)
    key = hashlib.sha256(src.read_bytes() + "\0".join(flags).encode()).hexdigest()[:16]
    out = _CACHE / ("%s-%s.so" % (kind, key))
    if not out.exists():
        _CACHE.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp%d" % os.getpid())
        subprocess.run(["gcc", "-shared", "-fPIC", "-O0", "-o", str(tmp), str(src)] + flags, check=True)
        os.replace(tmp, out)
    return out


@dataclass
class Health:
    """One GPU's health as the fake NVML reports it (fake_nvml.c fake_health); the defaults are a healthy H100."""

    persist: int = 1
    ecc: int = 1
    ecc_pending: int = 1
    ecc_uncorrected: int = 0
    remap_pending: int = 0
    remap_failed: int = 0
    remap_correctable: int = 0
    remap_uncorrectable: int = 0
    clock_events: int = 0  # nvml.h clock event reason bits
    gen: int = 5
    gen_max: int = 5
    width: int = 16
    width_max: int = 16
    nvlinks: int = 0
    nvlinks_down: int = 0  # the first this many links are down
    nvlink_replay: int = 0
    lost: int = 0
    no_remap: int = 0  # a GPU before Ampere: row remapping is not supported
    retired_pending: int = 0

    def c_initializer(self) -> str:
        from dataclasses import astuple

        return "{%s}" % ",".join("%dULL" % v if isinstance(v, int) and i in (3, 8, 15) else str(v)
                                 for i, v in enumerate(astuple(self)))


@dataclass
class Gpu:
    name: str = "NVIDIA H100 80GB HBM3"
    cc: str = "9.0"
    memory_mib: int = 81559
    mig: int = 0
    compute_mode: int = 0  # 0 default, 2 prohibited, 3 exclusive process
    processes: int = 0
    uuid: str = "GPU-8c3a3b7e-0000-4000-8000-000000000000"

    def c_initializer(self) -> str:
        major, minor = self.cc.split(".")
        return '{"%s",%s,%s,%dULL,%d,%d,%d,"%s"}' % (
            self.name, major, minor, self.memory_mib, self.mig, self.compute_mode, self.processes, self.uuid)


class FakeMachine:
    """A temporary root folder that looks like a Linux machine with NVIDIA software on it."""

    MULTIARCH = "/usr/lib/x86_64-linux-gnu"

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.env: Dict[str, str] = {"PATH": "/usr/bin:/bin"}

    # --- primitives ------------------------------------------------------

    def p(self, inside: str) -> Path:
        return self.root / inside.lstrip("/")

    def file(self, inside: str, content: "str | bytes" = b"", mode: int = 0o644) -> Path:
        path = self.p(inside)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink() or path.exists():
            path.unlink()
        path.write_bytes(content.encode() if isinstance(content, str) else content)
        os.chmod(path, mode)
        return path

    def link(self, inside: str, target: str) -> Path:
        path = self.p(inside)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink() or path.exists():
            path.unlink()
        os.symlink(target, path)
        return path

    def mkdir(self, inside: str) -> Path:
        path = self.p(inside)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def lib(self, inside: str, kind: str, soname: Optional[str] = None, mode: int = 0o755, **defines: object) -> Path:
        built = build_lib(kind, soname=soname, **defines)
        path = self.p(inside)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink() or path.exists():
            path.unlink()
        shutil.copyfile(built, path)
        os.chmod(path, mode)
        return path

    def versioned_lib(self, directory: str, stem: str, version: str, kind: str, links: bool = True,
                      major: Optional[str] = None, **defines: object) -> str:
        """stem.so.X.Y.Z plus the soname link stem.so.X and dev link stem.so (as `cp -P` keeps them)."""
        major = major or version.split(".")[0]
        real = "%s/%s.so.%s" % (directory, stem, version)
        self.lib(real, kind, soname="%s.so.%s" % (stem, major), **defines)
        if links:
            self.link("%s/%s.so.%s" % (directory, stem, major), "%s.so.%s" % (stem, version))
            self.link("%s/%s.so" % (directory, stem), "%s.so.%s" % (stem, major))
        return "%s/%s.so.%s" % (directory, stem, major)

    # --- NVIDIA pieces ----------------------------------------------------

    def ld_conf(self, name: str, dirs: Sequence[str]) -> None:
        self.file("/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n")
        self.file("/etc/ld.so.conf.d/%s" % name, "".join(d + "\n" for d in dirs))

    def driver(self, version: str = "580.95.05", cuda: int = 13000, gpus: Iterable[Gpu] = (Gpu(),),
               kernel_module: Optional[str] = "same", libdir: str = MULTIARCH, nvml_init_rc: int = 0,
               nvml_all_fail: bool = False, nvml: bool = True, libcuda: bool = True,
               nvml_misbehave: Optional[str] = None, health: Sequence[Health] = (),
               nvml_defines: Optional[Dict[str, object]] = None, cuda_defines: Optional[Dict[str, object]] = None
               ) -> None:
        """User-space driver libraries, /proc/driver/nvidia/version, and device nodes. ``health``: each GPU's
        (healthy when left out); ``nvml_defines``/``cuda_defines``: more -D flags for the fake libraries
        (FAKE_P2P, FAKE_TOPO, FAKE_FABRIC; CTX_RC, WRONG_RESULT, HANG_IN_LAUNCH, ...)."""
        gpus = list(gpus)
        if kernel_module:
            kmod = version if kernel_module == "same" else kernel_module
            self.file("/proc/driver/nvidia/version",
                      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  %s  Release Build  (dvs-builder@U16)\n"
                      "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n" % kmod)
            self.file("/proc/modules", "nvidia_uvm 1 0 - Live 0x0\nnvidia 2 1 nvidia_uvm, Live 0x0\n")
            for node in ("nvidiactl", "nvidia-uvm") + tuple("nvidia%d" % i for i in range(len(gpus))):
                self.file("/dev/%s" % node)
        if nvml:
            defines: Dict[str, object] = {"FAKE_DRIVER": '"%s"' % version, "FAKE_CUDA": cuda,
                                          "FAKE_INIT_RC": nvml_init_rc}
            if gpus:
                defines["FAKE_GPUS"] = ",".join(g.c_initializer() for g in gpus)
            if nvml_all_fail:
                defines["FAKE_ALL_FAIL"] = True
            if nvml_misbehave:  # "CRASH_IN_INIT" or "HANG_IN_INIT"
                defines[nvml_misbehave] = True
            if health:
                defines["FAKE_HEALTH"] = ",".join(h.c_initializer() for h in health)
            defines.update(nvml_defines or {})
            self.lib("%s/libnvidia-ml.so.%s" % (libdir, version), "nvml", soname="libnvidia-ml.so.1", **defines)
            self.link("%s/libnvidia-ml.so.1" % libdir, "libnvidia-ml.so.%s" % version)
        if libcuda:
            self.lib("%s/libcuda.so.%s" % (libdir, version), "cuda", soname="libcuda.so.1", DRV=cuda,
                     **dict({"NDEV": len(gpus)} if len(gpus) != 1 else {}, **(cuda_defines or {})))
            self.link("%s/libcuda.so.1" % libdir, "libcuda.so.%s" % version)

    def toolkit(self, version: str, prefix: Optional[str] = None, layout: str = "runfile",
                link_as: Optional[str] = "/usr/local/cuda", bundled_driver: Optional[str] = None) -> str:
        """A CUDA toolkit. layout: runfile (version.json), txt (version.txt, <= 10.2), deb (neither)."""
        major, minor = version.split(".")[:2]
        prefix = prefix or "/usr/local/cuda-%s.%s" % (major, minor)
        code = int(major) * 1000 + int(minor) * 10
        target = "targets/x86_64-linux"
        if layout == "deb":
            self.mkdir("%s/%s/include" % (prefix, target))
            self.link("%s/include" % prefix, "%s/include" % target)
            self.link("%s/lib64" % prefix, "%s/lib" % target)
            libdir = "%s/%s/lib" % (prefix, target)
        else:
            libdir = "%s/lib64" % prefix
        self.file("%s/include/cuda.h" % prefix, "#define CUDA_VERSION %d\n" % code)
        self.file("%s/include/cuda_runtime_api.h" % prefix, "#define CUDART_VERSION %d\n" % code)
        if layout == "runfile":
            data = {"cuda": {"name": "CUDA SDK", "version": version},
                    "cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": version},
                    "cuda_nvcc": {"name": "CUDA NVCC", "version": "%s.%s.89" % (major, minor)}}
            if bundled_driver:
                data["nvidia_driver"] = {"name": "NVIDIA Linux Driver", "version": bundled_driver}
            self.file("%s/version.json" % prefix, json.dumps(data, indent=3))
        elif layout == "txt":
            self.file("%s/version.txt" % prefix, "CUDA Version %s\n" % version)
        cudart_file_version = "%s.%s.%s" % (major, minor, "89")
        # The runtime's soname: libcudart.so.13 / .so.12, libcudart.so.11.0 for CUDA 11, .so.10.2 before that.
        soname_version = major if int(major) >= 12 else ("11.0" if major == "11" else "%s.%s" % (major, minor))
        self.versioned_lib(libdir, "libcudart", cudart_file_version, "cudart", major=soname_version,
                           CUDART_V=code)
        self.file("%s/bin/nvcc" % prefix, "#!/bin/sh\necho 'Cuda compilation tools, release %s.%s, V%s'\n"
                  % (major, minor, cudart_file_version), mode=0o755)
        if link_as:
            self.link(link_as, prefix)
        return prefix

    def cudnn(self, version: str, libdir: str, incdir: Optional[str], cuda: int = 12000,
              subs: Optional[Sequence[str]] = None, header_version: Optional[str] = None,
              versioned_names: bool = True, header_name: Optional[str] = None, **defines: object) -> str:
        """A cuDNN copy: main library, sub-libraries for its major, and the version header."""
        major = int(version.split(".")[0])
        code = _cudnn_code(version)
        if subs is None:
            subs = SUBLIBS.get(major, [])
        for stem in ["libcudnn"] + ["libcudnn_%s" % s for s in subs]:
            if versioned_names:
                self.versioned_lib(libdir, stem, version, "cudnn", CUDNN_V=code, CUDART_V=cuda, **defines)
            else:  # pip wheels ship only the soname file
                self.lib("%s/%s.so.%d" % (libdir, stem, major), "cudnn", soname="%s.so.%d" % (stem, major),
                         CUDNN_V=code, CUDART_V=cuda, **defines)
        if incdir:
            hv = header_version or version
            name = header_name or ("cudnn.h" if major <= 7 else "cudnn_version.h")
            self.file("%s/%s" % (incdir, name), cudnn_header(hv))
        return "%s/libcudnn.so.%d" % (libdir, major)

    def pip_cudnn(self, site: str, version: str, cuda_major: int = 12, cudart: int = 12080) -> str:
        """nvidia-cudnn-cuXX wheel layout: site-packages/nvidia/cudnn/{lib,include} plus dist-info."""
        base = "%s/nvidia/cudnn" % site
        dist = "nvidia_cudnn_cu%d-%s.dist-info" % (cuda_major, version)
        self.file("%s/%s/METADATA" % (site, dist),
                  "Metadata-Version: 2.1\nName: nvidia-cudnn-cu%d\nVersion: %s\n" % (cuda_major, version))
        self.file("%s/%s/RECORD" % (site, dist), "nvidia/cudnn/lib/libcudnn.so.9,,\n")
        self.file("%s/__init__.py" % base, "")
        short = ".".join(version.split(".")[:3])
        return self.cudnn(short, "%s/lib" % base, "%s/include" % base, cuda=cudart, versioned_names=False)

    def consumer(self, inside: str, needed: Sequence[str], rpath: Optional[str] = None,
                 runpath: Optional[str] = None) -> Path:
        built = build_consumer(needed, rpath=rpath, runpath=runpath)
        path = self.p(inside)
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, path)
        return path

    def ld_cache(self) -> bool:
        return build_ld_cache(self)

    def dist(self, site: str, name: str, version: str, requires: Sequence[str] = (),
             files: Optional[Dict[str, str]] = None) -> None:
        """An installed Python distribution (dist-info with METADATA) and optional package files."""
        norm = name.replace("-", "_")
        meta = "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version)
        meta += "".join("Requires-Dist: %s\n" % r for r in requires)
        self.file("%s/%s-%s.dist-info/METADATA" % (site, norm, version), meta)
        for rel, content in (files or {}).items():
            self.file("%s/%s" % (site, rel), content)


SUBLIBS = {
    8: ["ops_infer", "ops_train", "cnn_infer", "cnn_train", "adv_infer", "adv_train"],
    9: ["graph", "engines_precompiled", "engines_runtime_compiled", "heuristic", "ops", "cnn", "adv"],
}


def _cudnn_code(version: str) -> int:
    major, minor, patch = (int(x) for x in version.split(".")[:3])
    return major * 10000 + minor * 100 + patch if major >= 9 else major * 1000 + minor * 100 + patch


def cudnn_header(version: str, max_sm: Optional[str] = None) -> str:
    major, minor, patch = version.split(".")[:3]
    mult = "10000" if int(major) >= 9 else "1000"
    text = ("#ifndef CUDNN_VERSION_H_\n#define CUDNN_VERSION_H_\n"
            "#define CUDNN_MAJOR %s\n#define CUDNN_MINOR %s\n#define CUDNN_PATCHLEVEL %s\n"
            "#define CUDNN_VERSION (CUDNN_MAJOR * %s + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n"
            % (major, minor, patch, mult))
    if max_sm or int(major) >= 9:
        sm = (max_sm or "12.1").split(".")
        text += "#define CUDNN_MAX_SM_MAJOR_NUMBER %s\n#define CUDNN_MAX_SM_MINOR_NUMBER %s\n" % tuple(sm)
    return text + "#endif\n"


def build_consumer(needed: Sequence[str], rpath: Optional[str] = None, runpath: Optional[str] = None) -> Path:
    """A tiny library whose DT_NEEDED/RPATH/RUNPATH look like a framework's (libtorch_cuda.so, a JAX plugin)."""
    src = _CACHE / "consumer.c"
    _CACHE.mkdir(parents=True, exist_ok=True)
    if not src.exists():  # written aside and renamed: another run sharing the folder never compiles half a file
        part = src.with_name("consumer.c.tmp%d" % os.getpid())
        part.write_text("int consumer_marker(void) { return 1; }\n")
        os.replace(part, src)
    key = hashlib.sha256(repr((sorted(needed), rpath, runpath)).encode()).hexdigest()[:16]
    out = _CACHE / ("consumer-%s.so" % key)
    if out.exists():
        return out
    # Link-time stubs in a folder of this process (removed after the link): a run sharing the cache never links
    # against a stub another one is still copying.
    stubs = _CACHE / ("stubs-%s-%d" % (key, os.getpid()))
    stubs.mkdir(parents=True, exist_ok=True)
    flags = ["-L%s" % stubs, "-Wl,--no-as-needed"]
    for soname in needed:
        stub = build_lib("cudnn", soname=soname)
        shutil.copyfile(stub, stubs / soname)
        flags.append("-l:%s" % soname)
    if rpath:
        flags += ["-Wl,--disable-new-dtags", "-Wl,-rpath,%s" % rpath]
    if runpath:
        flags += ["-Wl,--enable-new-dtags", "-Wl,-rpath,%s" % runpath]
    tmp = out.with_suffix(".tmp%d" % os.getpid())
    try:
        subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(tmp), str(src)] + flags, check=True)
    finally:
        shutil.rmtree(stubs, ignore_errors=True)
    os.replace(tmp, out)
    return out


def ldconfig_available() -> bool:
    return os.geteuid() == 0 and shutil.which("ldconfig") is not None


def build_ld_cache(machine: "FakeMachine") -> bool:
    """Write a real /etc/ld.so.cache for the fake root with glibc's ldconfig (-X: leave links alone)."""
    if not ldconfig_available():
        return False
    if not machine.p("/etc/ld.so.conf").exists():
        machine.file("/etc/ld.so.conf", "")
    proc = subprocess.run(["ldconfig", "-X", "-r", str(machine.root)], capture_output=True, text=True)
    return proc.returncode == 0


# A fake machine with no files: smoke, bench and the installer's load check read nothing through their Host, they only
# run the native child (on libraries given by absolute path) with its environment.
NATIVE_ONLY_ROOT = "/nonexistent/cudnn-doctor-native-only"


def native_host():
    """The Host a test hands smoke, bench or the load check: the live one ("/") is refused in unmarked tests."""
    from cudnn_doctor.host import Host

    return Host(NATIVE_ONLY_ROOT)


def commands_run_native_here(monkeypatch) -> None:
    """`smoke` and `bench` invoked in this process run their child through native_host(), as the command would through
    the live machine's Host."""
    import functools

    from cudnn_doctor import smoke as smoke_pkg
    from cudnn_doctor.bench import run as bench_run

    monkeypatch.setattr(smoke_pkg, "run_smoke", functools.partial(smoke_pkg.run_smoke, host=native_host()))
    monkeypatch.setattr(bench_run, "run_bench", functools.partial(bench_run.run_bench, host=native_host()))


# The start form every test's fixes are built for (tests/conftest.py fixes Host.doctor_start to it). It lives here,
# not in conftest, because tests/probes has a conftest of its own that `from conftest import` would find first.
FIXED_DOCTOR = ("/opt/cudnn-doctor/bin/cudnn-doctor",)
