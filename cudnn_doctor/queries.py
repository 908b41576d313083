"""Questions about the facts (which copy a process loads, which GPUs count, which toolkit builds use); pure functions.

Knowledge (compat) is passed in by the caller where a question needs it; nothing here reads the machine."""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field, fields
import re
from typing import Any, Dict, List, Optional, Tuple

from packaging.version import Version

from .knowledge import Compat
from .versions import (canonical_name, cuda_label, major_of, mm, mm_before, mm_of, mm_text, release3_of,
                       requirements, ver, version_key, version_of)
from .model import CudnnCopy, Facts, FrameworkFacts, GpuFacts, Resolution, ToolkitFacts


def platform_of(facts: Facts) -> str:
    return "windows" if (facts.host.platform or "").lower().startswith("win") else "linux"


def driver_version(facts: Facts) -> Optional[str]:
    return facts.driver.version or facts.driver.kernel_module_version


def driver_cuda(facts: Facts, compat: Compat) -> Optional[str]:
    """The newest CUDA the driver supports: what it reports, else what its version implies."""
    if facts.driver.cuda_version:
        return facts.driver.cuda_version
    version = driver_version(facts)
    return compat.max_cuda_for_driver(version, platform_of(facts)) if version else None


def has_driver(facts: Facts) -> bool:
    d = facts.driver
    return bool(d.version or d.kernel_module_version or d.libcuda_path or d.libnvml_path or facts.gpus)


def driver_place(facts: Facts) -> str:
    """Where the machine's NVIDIA driver has to come from: 'container' (the host, through the container runtime),
    'wsl' (the Windows driver) or 'host' (installed here); the one answer check, smoke and install give."""
    return "container" if facts.host.in_container else "wsl" if facts.host.wsl else "host"


class _NoFloor:
    low = "0.0"


_NO_FLOOR = _NoFloor()


def visible_gpus(facts: Facts) -> List[GpuFacts]:
    return [g for g in facts.gpus if g.visible is not False]


def gpus_with_cc(facts: Facts) -> List[GpuFacts]:
    """The visible GPUs whose compute capability is known and reads as major.minor (known_cc answers for them)."""
    return [g for g in visible_gpus(facts) if mm(g.compute_capability)]


def known_cc(gpu: GpuFacts) -> str:
    """The compute capability of a GPU gpus_with_cc returned; a ValueError for any other GPU without one."""
    if gpu.compute_capability is None or mm(gpu.compute_capability) is None:
        raise ValueError("GPU %s has no readable compute capability" % gpu.index)
    return gpu.compute_capability


def cc_below(cc: Optional[str], floor: Optional[str]) -> bool:
    """Whether a GPU of compute capability `cc` is below `floor`; False when either is unknown."""
    return mm_before(cc, floor)


@dataclass
class GpuGroup(GpuFacts):
    """Identical GPUs (one model, one compute capability) judged once: the first of them, with every index."""

    indices: List[int] = field(default_factory=list)


def gpu_groups(facts: Facts) -> List[GpuFacts]:
    """The visible GPUs with a compute capability, one per group of identical ones, in index order: a rule about
    the model says it once for a node of eight of them."""
    groups: Dict[Tuple[Optional[str], Optional[str]], GpuGroup] = {}
    for gpu in gpus_with_cc(facts):
        key = (gpu.name, gpu.compute_capability)
        if key not in groups:
            groups[key] = GpuGroup(**{f.name: getattr(gpu, f.name) for f in fields(GpuFacts)}, indices=[])
        groups[key].indices.append(gpu.index)
    return list(groups.values())


def gpu_label(gpu: GpuFacts) -> str:
    indices = getattr(gpu, "indices", None) or [gpu.index]
    which = "GPU %d" % indices[0] if len(indices) == 1 else "GPUs %s and %d" % (
        ", ".join(str(i) for i in indices[:-1]), indices[-1])
    return "%s (%s, compute capability %s)" % (which, gpu.name or "unknown model", gpu.compute_capability)


def floor_branch(floor: Any) -> Optional[str]:
    """The driver branch of a DriverFloor ('580' of 580.65.06)."""
    if floor is None:
        return None
    return floor.branch or ((floor.version or "").split(".")[0] or None)


def gpu_cudnn_problems(facts: Facts, compat: Compat, cudnn: Any, cuda: Any) -> List[str]:
    """Why a cuDNN release's build for `cuda` cannot run on the visible GPUs (its minimum compute capability)."""
    if not cudnn or ver(str(cudnn)) is None:
        return []
    floor = compat.cudnn_min_cc(str(cudnn), mm_text(cuda) or cuda_label(cuda))
    if floor is None:
        return []
    return ["%s is below cuDNN %s's minimum compute capability %s" % (
        gpu_label(g), cudnn, floor.low if floor.low == floor.high else "%s-%s" % (floor.low, floor.high))
        for g in gpus_with_cc(facts) if cc_below(g.compute_capability, floor.high)]


def same_file(a: Optional[str], b: Optional[str]) -> bool:
    return bool(a and b and _normal(a) == _normal(b))


# Rules compare the same few dozen paths a few thousand times a run.
_normal = functools.lru_cache(maxsize=4096)(os.path.normpath)


def working_copy(facts: Facts, fw: FrameworkFacts) -> Optional[CudnnCopy]:
    """The cuDNN copy that does a framework's work: the shim's, unless every sub-library it finds comes from one other
    copy (LD_LIBRARY_PATH before its RUNPATH): the shim only forwards, and cudnnGetVersion() reports that copy."""
    res = fw.resolved_cudnn
    shim = copy_for_path(facts, res.path, res.realpath) if res is not None and res.path else None
    parts = [p for p in fw.resolved_cudnn_parts.values() if p.path]
    others = {id(c): c for c in (copy_for_path(facts, p.path, p.realpath) for p in parts)}
    other = next(iter(others.values())) if len(others) == 1 else None
    if shim is None or not parts or other is None:
        return shim
    return other if other is not shim and other.version and other.version != shim.version else shim


def copy_for_path(facts: Facts, path: Optional[str], realpath: Optional[str] = None) -> Optional[CudnnCopy]:
    """The cuDNN copy a resolved library path belongs to."""
    if not path and not realpath:
        return None
    for copy in facts.cudnn:
        for f in copy.files:
            if same_file(f.path, path) or same_file(f.realpath, realpath) or same_file(f.realpath, path):
                return copy
        if same_file(copy.path, path):
            return copy
    folder = os.path.dirname(path or realpath or "")
    for copy in facts.cudnn:
        if same_file(copy.directory, folder):
            return copy
    return None


def plain_resolutions(facts: Facts) -> List[Tuple[str, Resolution]]:
    """(soname, resolution) for every libcudnn.so.N the loader was asked about, newest major first."""
    out = [(name, res) for name, res in facts.loader.resolved.items() if re.fullmatch(r"libcudnn\.so\.\d+", name)]
    return sorted(out, key=lambda item: -int(item[0].rsplit(".", 1)[1]))


def loaded_cudnn(facts: Facts) -> Optional[Resolution]:
    """The cuDNN a plain process loads: the newest major (by number: .so.10 before .so.9) the loader finds."""
    return next((res for _, res in plain_resolutions(facts) if res.path), None)


def consumers(facts: Facts) -> List[Tuple[str, Optional[CudnnCopy], Resolution]]:
    """Who loads which cuDNN copy: ('a plain process (libcudnn.so.9)', copy, resolution), then each framework."""
    out: List[Tuple[str, Optional[CudnnCopy], Resolution]] = []
    for name, res in plain_resolutions(facts):
        if res.path:
            out.append(("a plain process asking for %s" % name, copy_for_path(facts, res.path, res.realpath), res))
    for fw in facts.python.frameworks:
        loaded = fw.resolved_cudnn
        if loaded is not None and loaded.path:
            out.append(("%s %s" % (fw.name, fw.version), copy_for_path(facts, loaded.path, loaded.realpath), loaded))
    return out


def used_copies(facts: Facts) -> List[CudnnCopy]:
    seen: List[CudnnCopy] = []
    for _, copy, _ in consumers(facts):
        if copy is not None and all(copy is not s for s in seen):
            seen.append(copy)
    return seen


def is_used(facts: Facts, copy: CudnnCopy) -> bool:
    return any(copy is c for c in used_copies(facts))


def is_pip_dir(path: str) -> bool:
    return "/site-packages/" in path or "/dist-packages/" in path


# The folders a distribution's packages put libraries in (Debian's multiarch, RHEL's lib64, plain lib).
_DISTRO_LIB_DIR = re.compile(r"^/(usr/)?lib(64)?(/[a-z0-9_]+-linux-gnu)?$")


def distro_lib_dir(directory: str) -> bool:
    """Whether a folder is one the distribution's packages install libraries into (apt's or dnf's build of a
    library replaces a copy there in place)."""
    return bool(_DISTRO_LIB_DIR.match(os.path.normpath(directory)))


def own_cudnn_wheel_dir(fw: FrameworkFacts) -> str:
    """The folder NVIDIA's cuDNN wheel installs into beside a framework (its site-packages' nvidia/cudnn/lib)."""
    return os.path.normpath(os.path.join(fw.location, "nvidia/cudnn/lib"))


def ld_entry_for(facts: Facts, path: Optional[str]) -> Optional[str]:
    """The LD_LIBRARY_PATH entry a resolved file came from."""
    if not path:
        return None
    folder = os.path.normpath(os.path.dirname(path))
    for entry in facts.loader.ld_library_path:
        if os.path.normpath(entry) == folder:
            return entry
    return None


def primary_toolkit(facts: Facts) -> Optional[ToolkitFacts]:
    """The toolkit builds and plain programs use: /usr/local/cuda, else CUDA_HOME/CUDA_PATH, else the only one."""
    system = [t for t in facts.toolkits if t.kind != "pip" and not t.dangling and t.version]
    for t in system:
        if t.path.rstrip("/") == "/usr/local/cuda":
            return t
    for t in system:
        if any(v in ("CUDA_HOME", "CUDA_PATH") for v in t.found_via):
            return t
    return system[0] if len(system) == 1 else None


def toolkit_owning(facts: Facts, directory: str) -> Optional[ToolkitFacts]:
    folder = os.path.normpath(directory)
    best = None
    for t in facts.toolkits:
        for root in filter(None, (t.path, t.realpath)):
            root = os.path.normpath(root)
            if folder == root or folder.startswith(root + "/"):
                if best is None or len(root) > len(best[1]):
                    best = (t, root)
    return best[0] if best else None


def framework_kind(fw: FrameworkFacts) -> Optional[str]:
    name = fw.name.lower()
    if name == "torch":
        return "torch"
    if name.startswith("tensorflow") or name == "tf-nightly":
        return "tensorflow"
    if name == "jaxlib" or name.startswith("jax-cuda"):
        return "jax"
    if name.startswith("paddlepaddle"):
        return "paddle"
    if name.startswith("onnxruntime"):
        return "onnxruntime"
    if name.startswith("cupy"):
        return "cupy"
    return None


def cudnn_pin_floor(fw: FrameworkFacts, major: Optional[int] = None) -> Optional[Version]:
    """The lowest cuDNN a framework's own nvidia-cudnn requirement admits (==9.3.0.75, >=9.1, ==8.9.*), of `major`
    when given; parsed with packaging, whatever the spacing or parentheses of the METADATA line."""
    for _, req in requirements(fw.requires):
        if not canonical_name(req.name).startswith("nvidia-cudnn-"):
            continue
        for spec in req.specifier:
            floor = ver(spec.version.replace(".*", "")) if spec.operator in ("==", ">=", "~=", "===") else None
            if floor is not None and (major is None or floor.release[0] == major):
                return floor
    return None


def best_torch_variant(facts: Facts, compat: Compat, torch_version: Optional[str]) -> Optional[Dict[str, Any]]:
    """The newest PyTorch CUDA variant (of this torch minor when known) the driver and GPUs can run."""
    rows = compat.framework_rows("pytorch")
    if torch_version:
        minor = mm_text(torch_version.split("+")[0])
        same = [r for r in rows if r["torch"] == minor]
        rows = same or rows
    driver = driver_version(facts)
    dcuda = driver_cuda(facts, compat)
    fitting = []
    for row in rows:
        ok, _, _ = compat.driver_runs_cuda(driver or "", row["cuda"], platform_of(facts), dcuda)
        if ok is False:
            continue
        arch = compat.pytorch_arch(row["torch"] + ".0", row["cuda"])
        if arch and any(not compat.sass_runs(arch["arch"], arch.get("ptx"), g.compute_capability)
                        for g in gpus_with_cc(facts)):
            continue
        if gpu_cudnn_problems(facts, compat, row.get("cudnn"), row["cuda"]):
            continue  # the bundled cuDNN no longer supports the GPU
        if gpus_with_cc(facts) and not arch and any(
                cc_below(g.compute_capability, (compat.cuda_min_cc(row["cuda"]) or _NO_FLOOR).low)
                for g in gpus_with_cc(facts)):
            continue  # the CUDA major dropped the GPU
        fitting.append(row)
    if not fitting:
        return None
    return max(fitting, key=lambda r: (version_of(r["torch"]), version_of(r["cuda"])))


def machine_cuda(facts: Facts, compat: Compat) -> Optional[str]:
    """The CUDA new installs should be built for: the toolkit programs use, else the newest the driver runs."""
    tk = primary_toolkit(facts)
    return (tk.version if tk else None) or driver_cuda(facts, compat)


def compiled_cudnn(fw: FrameworkFacts) -> Optional[str]:
    """The cuDNN a framework was compiled against: its build info when that names a minor, else the floor of its own
    cuDNN pin of that major (TensorFlow records only '9'; its [and-cuda] pin says 9.3.0.75)."""
    recorded = fw.cudnn_version
    if recorded and "." in recorded:
        return recorded
    floor = cudnn_pin_floor(fw, major_of(recorded) if recorded else None)
    return str(floor) if floor is not None else recorded


def cudnn_older(runtime: Any, compiled: Any) -> Tuple[bool, str]:
    """(incompatible, why) under cuDNN's rule: same major, and a runtime minor not older than the build's."""
    r, c = ver(runtime), ver(compiled)
    if r is None or c is None:
        return False, ""
    if r.release[0] != c.release[0]:
        return True, "another major version"
    if len(c.release) >= 2 and len(r.release) >= 2 and r.release[1] < c.release[1]:
        return True, "an older minor version"
    return False, ""


def lowest_cc(facts: Facts) -> Optional[str]:
    """The lowest compute capability among the visible GPUs (what every install must still run on)."""
    ccs = [known_cc(g) for g in gpus_with_cc(facts)]
    return min(ccs, key=mm_of) if ccs else None


def cudnn_build_exists(compat: Compat, release: str, cuda: Any) -> Optional[bool]:
    """Whether NVIDIA made a build of cuDNN `release` for `cuda` (the knowledge answers: Compat.cudnn_build_exists)."""
    return compat.cudnn_build_exists(release, cuda)


def cudnn_runs_on_cc(compat: Compat, release: str, cuda: Any, cc: Optional[str], strict: bool = True) -> bool:
    """Whether a cuDNN release's build for `cuda` supports a GPU of compute capability `cc` (strict: also where
    compat only knows the floor lies in a range, take its top)."""
    if not cc:
        return True
    floor = compat.cudnn_min_cc(release, mm_text(cuda) or cuda_label(cuda))
    if floor is None:
        return True
    return not cc_below(cc, floor.high if strict else floor.low)


def cudnn_release_for(compat: Compat, cuda: Any, cudnn_major: Optional[int] = None,
                      min_cc: Optional[str] = None) -> Optional[str]:
    """The newest cuDNN release (of `cudnn_major` when given) with a build for `cuda` that runs on `min_cc`."""
    newest = compat.newest_cudnn_build(cuda, cudnn_major)
    if not min_cc or newest is None:
        return newest
    for strict in (True, False):
        releases = [r for r in compat.cudnn_releases(cudnn_major) if cudnn_build_exists(compat, r, cuda)]
        releases = [r for r in releases if cudnn_runs_on_cc(compat, r, cuda, min_cc, strict)]
        if releases:
            return str(max(release3_of(r) for r in releases))
    return None


def jax_choice(facts: Facts, compat: Compat, cuda_major: Any = None) -> Tuple[Optional[Dict[str, Any]], List[str]]:
    """The JAX CUDA extra for this machine: of `cuda_major` when given, else the newest whose driver branch and
    minimum GPU the machine meets. Returns (row, why-not reasons of the chosen row: empty when it fits)."""
    rows = sorted(compat.framework_rows("jax"), key=lambda r: version_key(r.get("built_cuda")), reverse=True)
    if cuda_major is not None:
        same = [r for r in rows if major_of(r.get("built_cuda")) == major_of(cuda_major)]
        rows = same or rows
    driver = ver(driver_version(facts))
    judged = []
    for row in rows:
        why = []
        floor = ver(row.get("driver_linux"))
        if driver is not None and floor is not None and driver.release[0] < floor.release[0]:
            why.append("driver %s is older than the R%s branch jax[%s] needs" % (
                driver_version(facts), row["driver_linux"], row["extra"]))
        why += ["%s is below jax[%s]'s minimum compute capability %s" % (gpu_label(g), row["extra"], row["min_cc"])
                for g in gpus_with_cc(facts) if row.get("min_cc") and cc_below(g.compute_capability, row["min_cc"])]
        judged.append((row, why))
    for row, why in judged:
        if not why:
            return row, []
    return (judged[0] if judged else (None, []))


def describe_copy(copy: Optional[CudnnCopy]) -> str:
    if copy is None:
        return "an unknown copy"
    parts = ["cuDNN %s" % (copy.version or "?")]
    if copy.cuda_version:
        parts.append("for CUDA %s" % copy.cuda_version)
    parts.append("at %s" % copy.directory)
    if copy.package:
        parts.append("(%s)" % copy.package)
    return " ".join(parts)


def folder_aliases(facts: Facts, directory: str) -> List[str]:
    """A folder under each name a toolkit link gives it (/usr/local/cuda/lib64 is /usr/local/cuda-13.0/lib64)."""
    names = [os.path.normpath(directory)]
    for t in facts.toolkits:
        for a, b in ((t.path, t.realpath), (t.realpath, t.path)):
            if not a or not b:
                continue
            a, b = os.path.normpath(a), os.path.normpath(b)
            for name in list(names):
                if name == a or name.startswith(a + "/"):
                    names.append(b + name[len(a):])
    return list(dict.fromkeys(names))


def listed_in_ld_conf(facts: Facts, directory: str) -> Optional[str]:
    """The /etc/ld.so.conf(.d) entry that already names this folder (itself or through a toolkit link), if any."""
    listed = {os.path.normpath(d): d for d in facts.loader.conf_dirs}
    return next((listed[n] for n in folder_aliases(facts, directory) if n in listed), None)


def package_channel(facts: Facts, copy: Optional[CudnnCopy] = None) -> str:
    """How this machine installs CUDA pieces, from what installed them so far: "pip" or "conda" for a copy from
    there, "apt" where a Debian package is seen, else the package manager the root has ("dnf" for yum too);
    "" when nothing says."""
    if copy is not None and copy.origin in ("pip", "conda"):
        return copy.origin
    if any((c.package or "").startswith("deb ") for c in facts.cudnn):
        return "apt"
    return {"yum": "dnf"}.get(facts.host.package_manager or "", facts.host.package_manager or "")


def _present(copy: CudnnCopy, soname: str) -> bool:
    return any((f.name == soname or f.name.startswith(soname + ".")) and not f.dangling for f in copy.files)


def missing_sublibraries(compat: Compat, copy: CudnnCopy) -> List[str]:
    """The sub-libraries of its major's layout (compat/cudnn_layout.toml) a cuDNN copy lacks."""
    expected = list(compat.cudnn_layout(copy.major or 0).get("linux_sublibraries", []))
    found = set(copy.sublibraries_missing)
    if copy.files:
        found |= {name for name in expected if not _present(copy, name)}
    return sorted(found)
