"""Plain data passed between the stages: facts the probes saw, findings the rules made."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple, TypedDict

from .model_fix import WINDOWS_SHELL as WINDOWS_SHELL, Fix as Fix, Target as Target
from .model_node import NodeFacts
from .model_theano import TheanoFacts

if TYPE_CHECKING:  # made only on Windows (probes/windows) and by check --image: a plain check never builds them
    from .model_image import ImageFacts
    from .model_windows import WindowsFacts


def to_plain(obj: Any) -> Any:
    """Turn nested dataclasses, enums and lists into JSON-ready values."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        plain = {f.name: to_plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
        plain.update((name, to_plain(getattr(obj, name))) for name in getattr(obj, "DERIVED", ()))
        return plain
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, dict):
        return {str(k): to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v) for v in obj]
    return obj


# The directions of a convolution bench times and checks: forward, gradient of the data, gradient of the filter.
BENCH_DIRECTIONS = ("fwd", "bwd_data", "bwd_filter")


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"info": 0, "warning": 1, "error": 2}[self.value]


@dataclass
class Finding:
    """One diagnosis: what is wrong, the evidence, why it matters and the exact fix."""

    id: str  # stable code, e.g. "CD301"
    severity: Severity
    title: str
    detail: str = ""  # why it matters
    evidence: Dict[str, Any] = field(default_factory=dict)
    alias: str = ""  # kebab-case name, e.g. "cudnn-header-mismatch"
    catalogue: List[str] = field(default_factory=list)  # failure-catalogue ids, e.g. ["D7"]
    remedy: Optional[Fix] = None  # the fix as a value (from cudnn_doctor.remedies); required for errors and warnings

    # Written into the JSON beside the fields: the remedy's one line, for readers that want only the words.
    DERIVED = ("fix",)

    def __post_init__(self) -> None:
        if self.remedy is not None and not isinstance(self.remedy, Fix):
            raise TypeError("Finding.remedy must be a Fix built by cudnn_doctor.remedies, not %r" % (self.remedy,))

    @property
    def fix(self) -> str:
        """The remedy's one line ("" when there is none)."""
        return self.remedy.text if self.remedy else ""


# --- facts ---------------------------------------------------------------


@dataclass
class DriverFacts:
    """The NVIDIA driver: user-space release, the CUDA it supports, and the kernel module."""

    version: Optional[str] = None  # driver release, e.g. "580.159.04"
    version_source: Optional[str] = None  # e.g. "nvml:/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"
    cuda_version: Optional[str] = None  # max CUDA the driver supports, e.g. "13.0"
    cuda_version_source: Optional[str] = None
    kernel_module_version: Optional[str] = None  # from /proc/driver/nvidia/version
    kernel_module_source: Optional[str] = None
    kernel_module_loaded: Optional[bool] = None
    libcuda_path: Optional[str] = None  # what libcuda.so.1 resolves to
    libcuda_file_version: Optional[str] = None  # from libcuda.so.<ver>
    libnvml_path: Optional[str] = None
    libnvml_file_version: Optional[str] = None
    nvml_error: Optional[str] = None  # NVML's own error text, e.g. "RM has detected an NVML/RM version mismatch."
    nvml_error_code: Optional[int] = None  # nvmlReturn_t, e.g. 18 = NVML_ERROR_LIB_RM_VERSION_MISMATCH, 9 = not loaded
    libcuda_error: Optional[str] = None
    nvidia_pci_devices: List[Dict[str, Any]] = field(default_factory=list)
    loaded_modules: List[str] = field(default_factory=list)  # nvidia*, nouveau, nova_core
    modules_listed: bool = False  # /proc/modules was read (else loaded_modules says nothing about absence)
    module_files: List[str] = field(default_factory=list)  # nvidia*.ko* under /lib/modules/<running kernel>
    secure_boot: Optional[bool] = None  # UEFI SecureBoot variable, None when not readable
    notes: List[str] = field(default_factory=list)


@dataclass
class GpuFacts:
    """One GPU as NVML sees it: name, compute capability, memory, MIG, and whether CUDA may use it."""

    index: int
    name: Optional[str] = None
    uuid: Optional[str] = None
    compute_capability: Optional[str] = None  # "9.0"
    memory_total_mib: Optional[int] = None
    memory_free_mib: Optional[int] = None
    mig_mode: Optional[bool] = None
    mig_devices: List[str] = field(default_factory=list)
    compute_mode: Optional[str] = None  # default, exclusive_thread, prohibited, exclusive_process
    running_processes: Optional[int] = None
    visible: Optional[bool] = None  # after CUDA_VISIBLE_DEVICES
    source: Optional[str] = None


@dataclass
class VisibilityFacts:
    """CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES and what they leave visible."""

    cuda_visible_devices: Optional[str] = None  # raw value, None when unset
    nvidia_visible_devices: Optional[str] = None
    visible_indices: Optional[List[int]] = None  # None when unset (all visible)
    problems: List[str] = field(default_factory=list)


@dataclass
class ToolkitFacts:
    """One CUDA toolkit found on the machine: where, which version, and how it was found."""

    path: str  # as found, e.g. "/usr/local/cuda"
    realpath: Optional[str] = None
    version: Optional[str] = None  # "13.0.2" or "13.0"
    version_source: Optional[str] = None  # "version.json", "version.txt", "cuda.h", "libcudart file name", ...
    found_via: List[str] = field(default_factory=list)  # "CUDA_HOME", "/usr/local/cuda-*", "nvcc on PATH", ...
    link_chain: List[str] = field(default_factory=list)
    dangling: bool = False
    nvcc_path: Optional[str] = None
    nvcc_version: Optional[str] = None  # nvcc component version, e.g. "13.0.88"
    cudart_path: Optional[str] = None
    cudart_soname: Optional[str] = None  # DT_SONAME of that file, e.g. "libcudart.so.11.0" for CUDA 11
    cudart_version: Optional[str] = None  # cudaRuntimeGetVersion decoded, e.g. "13.0"
    bundled_driver: Optional[str] = None  # version.json nvidia_driver
    kind: str = "system"  # system, conda, pip
    error: Optional[str] = None


@dataclass
class LibFile:
    """One file of a cuDNN copy (main library or sub-library)."""

    name: str  # file name as found, e.g. "libcudnn_ops.so.9"
    path: str
    realpath: Optional[str] = None
    file_version: Optional[str] = None  # from the resolved file name, e.g. "9.14.0"
    is_link: bool = False
    link_chain: List[str] = field(default_factory=list)
    dangling: bool = False
    readable: Optional[bool] = None  # world-readable (o+r) all along the chain
    read_blocker: Optional[str] = None  # the file lacking o+r, or the folder above it lacking o+x
    mode: Optional[str] = None  # "0644"
    elf: Optional[str] = None  # "ok", "not-elf", "truncated", "elfclass32", "wrong-machine", "empty"


@dataclass
class CudnnCopy:
    """One copy of the cuDNN library: its files, version, the CUDA it was built for, and who owns it."""

    path: str  # the main library, e.g. "/usr/lib/x86_64-linux-gnu/libcudnn.so.9"
    directory: str
    major: Optional[int] = None
    version: Optional[str] = None  # what the library reports (cudnnGetVersion), e.g. "9.14.0"
    version_source: Optional[str] = None  # "cudnnGetVersion", "file name", "package", "header"
    cuda_version: Optional[str] = None  # cudnnGetCudartVersion decoded: the CUDA it was built for
    cuda_version_source: Optional[str] = None
    header_path: Optional[str] = None
    header_version: Optional[str] = None
    header_max_sm: Optional[str] = None  # CUDNN_MAX_SM_MAJOR/MINOR_NUMBER, e.g. "12.1"
    origin: str = "other"  # toolkit, system, pip, conda, ld_library_path, other
    package: Optional[str] = None  # "nvidia-cudnn-cu13 9.19.0.56", "deb libcudnn9-cuda-13 9.14.0.64-1"
    found_via: List[str] = field(default_factory=list)
    files: List[LibFile] = field(default_factory=list)  # main + sub-libraries
    sublibraries_missing: List[str] = field(default_factory=list)
    load_error: Optional[str] = None  # dlopen / call failure, crash or hang of the child process

    def pip_wheel(self) -> Optional[Tuple[str, str]]:
        """The pip project and release this copy came from ("nvidia-cudnn-cu13", "9.20.0.48"), when pip owns it."""
        parts = (self.package or "").split()
        return (parts[0], parts[1]) if self.origin == "pip" and len(parts) == 2 else None


ETC_PRELOAD = "/etc/ld.so.preload"
PRELOADED = ("LD_PRELOAD", ETC_PRELOAD)  # a Resolution's `via` where a preload answered the request


@dataclass
class Resolution:
    """Where the dynamic loader would find one soname, and what it passed over."""

    name: str  # soname, e.g. "libcudnn.so.9"
    path: Optional[str] = None
    realpath: Optional[str] = None
    via: Optional[str] = None  # "LD_LIBRARY_PATH", "ld.so.cache", "default path", "RUNPATH"
    shadowed: List[Dict[str, str]] = field(default_factory=list)  # [{"path", "via"}] later candidates
    problems: List[str] = field(default_factory=list)  # e.g. "wrong ELF class" of a skipped candidate
    error: Optional[str] = None  # the loader stops at ``path`` and fails: "file too short", "invalid ELF header"


@dataclass
class LoaderFacts:
    """What the dynamic loader does: LD_LIBRARY_PATH, ld.so.conf and its cache, and what each soname resolves to."""

    ld_library_path: List[str] = field(default_factory=list)
    ld_library_path_cwd: bool = False  # an empty or relative entry: each program searches its current folder
    ld_preload: List[str] = field(default_factory=list)
    conf_dirs: List[str] = field(default_factory=list)  # from /etc/ld.so.conf(.d)
    cache_path: Optional[str] = None
    cache_entries: Optional[int] = None
    cache_error: Optional[str] = None
    cache_mtime: Optional[float] = None
    stale_cache: List[str] = field(default_factory=list)  # libraries in ld.so.conf folders the cache does not list
    default_dirs: List[str] = field(default_factory=list)
    resolved: Dict[str, Resolution] = field(default_factory=dict)


@dataclass
class FrameworkFacts:
    """One installed deep-learning framework (or CUDA wheel): its version, build and the libraries it brings."""

    name: str  # distribution name: torch, tensorflow, jaxlib, jax-cuda13-plugin, cupy-cuda13x, ...
    version: str
    location: str  # site-packages folder
    cuda_build: Optional[bool] = None  # False for CPU-only builds
    cuda_version: Optional[str] = None  # the CUDA it was built for
    cudnn_version: Optional[str] = None  # the cuDNN it was built for, when recorded
    requires: List[str] = field(default_factory=list)  # nvidia-* requirements (Requires-Dist)
    source: Optional[str] = None  # where the build info came from
    consumer_library: Optional[str] = None  # e.g. torch/lib/libtorch_cuda.so
    resolved_cudnn: Optional[Resolution] = None  # the cuDNN this framework's library would load
    # where a preload answers it: what its own search would find were the preload gone (a fix that drops the
    # preload hands it that copy)
    cudnn_without_preload: Optional[Resolution] = None
    cudnn_soname_source: Optional[str] = None  # where the cuDNN soname it asks for was read (DT_NEEDED, build record..)
    resolved_cudnn_parts: Dict[str, Resolution] = field(default_factory=dict)  # sub-libraries libcudnn.so.N dlopens
    library_search_path: Optional[List[str]] = None  # its library's RPATH/RUNPATH, $ORIGIN expanded; None: unread
    extras: List[str] = field(default_factory=list)  # Provides-Extra of its METADATA (markers name them)
    requires_source: Optional[str] = None  # the METADATA `requires` came from (a JAX plugin's, for its PJRT part)
    gpu_code: List[Dict[str, Any]] = field(default_factory=list)  # per CUDA library: {library, sass, ptx, ...}


@dataclass
class PythonEnvFacts:
    """The Python environments read: their site folders and the frameworks installed in them."""

    site_dirs: List[str] = field(default_factory=list)
    frameworks: List[FrameworkFacts] = field(default_factory=list)
    nvidia_wheels: List[Dict[str, str]] = field(default_factory=list)  # {name, version, location}
    conda_prefixes: List[str] = field(default_factory=list)
    conda_packages: List[Dict[str, str]] = field(default_factory=list)  # {name, version, build, prefix}
    # The Python of each environment found, for the wheels it can install: {site, version "3.10", source (pyvenv.cfg,
    # the interpreter bin/python3.X, or the site folder lib/python3.X)}.
    pythons: List[Dict[str, str]] = field(default_factory=list)
    user_sites: List[str] = field(default_factory=list)  # the user sites among site_dirs (pip install --user)
    # The active environment's package tool where it is not its own pip: "uv pip" for a venv uv made without pip (a
    # plain `pip` there is another Python's); None: pip.
    package_tool: Optional[str] = None
    # The interpreter that owns the user sites the active --system-site-packages venv sees: it uninstalls there (pip
    # in the venv never does). None: no such venv.
    user_site_owner: Optional[str] = None
    # That owner is an externally managed Python (PEP 668: EXTERNALLY-MANAGED in its standard library folder, as
    # Debian 12's and Ubuntu 23.04's are): its pip refuses to change the user site without --break-system-packages.
    user_site_owner_managed: bool = False


@dataclass
class JavaFacts:
    """JavaCPP/Deeplearning4j artifacts in Maven/Gradle caches: they name the exact CUDA and cuDNN they need."""

    javacpp_presets: List[Dict[str, str]] = field(default_factory=list)  # {artifact, version "10.2-7.6-1.5.3", path}
    nd4j_backends: List[Dict[str, str]] = field(default_factory=list)  # {artifact "nd4j-cuda-10.2", version, path}
    redist: List[Dict[str, str]] = field(default_factory=list)  # cuda-platform-redist: bundles cuDNN itself


@dataclass
class HostFacts:
    """The machine itself: the root read, its platform, name, kernel, container and who runs the doctor."""

    root: str = "/"
    platform: str = "linux"
    hostname: Optional[str] = None  # the node's name (the root's /etc/hostname under --root)
    machine: Optional[str] = None  # the processor (uname machine: x86_64, aarch64)
    glibc: Optional[str] = None  # the root's C library (glibc "2.35"): the manylinux wheels it can install
    kernel_release: Optional[str] = None
    in_container: Optional[bool] = None
    wsl: Optional[bool] = None
    python: Optional[str] = None
    dev_nodes: List[str] = field(default_factory=list)  # /dev/nvidia*, /dev/dxg present
    package_manager: Optional[str] = None  # "apt", "dnf", "yum", "zypper": the first found in the root's /usr/bin
    euid: Optional[int] = None  # who runs the doctor on a live machine (0: root, fixes need no sudo); None: unknown
    home: Optional[str] = None  # that user's home folder (HOME) on a live machine: what is in it is theirs alone
    shm_bytes: Optional[int] = None  # a container's /dev/shm size (/proc/mounts); None: not one, or not stated
    rdma_memlock_bytes: Optional[int] = None  # the locked-memory limit where RDMA devices exist; None: none, or unlimited


@dataclass
class ProbeError:
    """A probe that raised: which one and the error (the report's CD001)."""

    probe: str
    error: str


@dataclass
class BlockedPath:
    """A place a probe could not read: not a regular file (CD003), or it stalled past its deadline (CD002)."""

    probe: str
    path: Optional[str]  # inside path; None when the probe never started (the run's budget was spent)
    reason: str  # "not-a-regular-file", "timed-out" or "not-run"
    kind: Optional[str] = None  # "named pipe (FIFO)", "socket", ... for not-a-regular-file
    seconds: Optional[float] = None  # the budget it overran
    resolved: Optional[str] = None  # what ``path`` (as the probe was given it) resolved to, when links led elsewhere


class MachineState(TypedDict, total=False):
    """What probes/machine_state.py observes for the catalogue rules (keys absent when that probe did not run)."""

    nvidia_modprobe: bool  # /usr/bin/nvidia-modprobe exists
    nvswitches: List[str]  # NVSwitch devices seen
    fabric_manager: Dict[str, Any]  # {packages: {name: version}, binary: bool, enabled: bool}, with NVSwitches only
    require_cuda: Optional[Dict[str, Any]]  # an image's NVIDIA_REQUIRE_CUDA: {value, source}
    devices: Dict[str, Any]  # /dev/char links, the container toolkit, docker, systemd's cgroup driver
    cudnn_local_repos: List[Dict[str, Any]]  # cuDNN local apt repositories left configured
    cudnn_packages: List[str]  # installed libcudnn*/cudnn* packages
    driver_upgrades_since_boot: List[Dict[str, Any]]  # apt upgrades of the driver since the last boot
    framework_libraries: Dict[str, Dict[str, Optional[str]]]  # "name version" -> soname -> resolved path or None


# Environment variables that change how CUDA runs every program started from this environment; facts.environment
# holds those that are set. A check that judges another one adds its name here: probes/environment.py reads every
# name listed, on Linux and Windows alike.
CUDA_ENVIRONMENT = (
    "CUDA_LAUNCH_BLOCKING",  # 1: every kernel launch waits for the kernel to finish (a debugging aid)
    "CUDA_MODULE_LOADING",  # EAGER: every kernel of every library is loaded when a program starts
    "CUDA_CACHE_DISABLE",  # 1: the driver's JIT cache is off, PTX is compiled again in every process
)


@dataclass
class Facts:
    """Everything the probes observed on one machine; rules judge nothing else."""

    host: HostFacts = field(default_factory=HostFacts)
    driver: DriverFacts = field(default_factory=DriverFacts)
    gpus: List[GpuFacts] = field(default_factory=list)
    visibility: VisibilityFacts = field(default_factory=VisibilityFacts)
    toolkits: List[ToolkitFacts] = field(default_factory=list)
    cudnn: List[CudnnCopy] = field(default_factory=list)
    loader: LoaderFacts = field(default_factory=LoaderFacts)
    python: PythonEnvFacts = field(default_factory=PythonEnvFacts)
    java: JavaFacts = field(default_factory=JavaFacts)
    theano: TheanoFacts = field(default_factory=TheanoFacts)  # Theano/Keras installs and their cuDNN
    cudnn_headers: List[Dict[str, Any]] = field(default_factory=list)  # {path, version}: what a C/C++ build includes
    cudnn_leftovers: List[Dict[str, Any]] = field(default_factory=list)  # {kind, path, version, ...}: remains of copies
    machine_state: MachineState = field(default_factory=MachineState)  # catalogue observations
    environment: Dict[str, str] = field(default_factory=dict)  # the CUDA_ENVIRONMENT variables set, as set
    windows: Optional[WindowsFacts] = None  # when the machine is Windows (probes/windows)
    image: Optional[ImageFacts] = None  # check --image: the image whose layers are the root
    node: NodeFacts = field(default_factory=NodeFacts)  # GPU health, links, kernel events, container runtime
    searched: Dict[str, List[str]] = field(default_factory=dict)  # probe -> places looked at
    probe_errors: List[ProbeError] = field(default_factory=list)
    blocked: List[BlockedPath] = field(default_factory=list)  # what could not be checked (report incomplete)
    timings_ms: Dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> Dict[str, Any]:
        plain: Dict[str, Any] = to_plain(self)  # a dataclass becomes a dict
        return plain
