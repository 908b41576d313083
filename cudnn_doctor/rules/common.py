"""Small helpers the rule modules share: finding construction, fact lookups, fix-command builders."""
from __future__ import annotations

import os
import re
import shlex
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from ..knowledge import Compat
from ..versions import cuda_label, major_of, mm, mm_text, release3, ver
from ..model import CudnnCopy, Facts, FrameworkFacts, Finding, GpuFacts, Resolution, Severity, ToolkitFacts

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO


def finding(rule_id: str, severity: Severity, title: str, detail: str = "", fix: str = "",
            evidence: Optional[Dict[str, Any]] = None, catalogue: Sequence[str] = ()) -> Finding:
    return Finding(id=rule_id, severity=severity, title=title, detail=detail, fix=fix,
                   evidence=dict(evidence or {}), catalogue=list(catalogue))


def compat_of(ctx) -> Compat:
    """The knowledge base the caller handed in (RuleContext.compat); rules never read files themselves."""
    compat = getattr(ctx, "compat", None)
    if compat is None:
        raise RuntimeError("RuleContext.compat is not set: pass load_compat() when evaluating rules")
    return compat


# --- driver and GPUs -------------------------------------------------------


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


class _NoFloor:
    low = "0.0"


_NO_FLOOR = _NoFloor()


def visible_gpus(facts: Facts) -> List[GpuFacts]:
    return [g for g in facts.gpus if g.visible is not False]


def gpus_with_cc(facts: Facts) -> List[GpuFacts]:
    return [g for g in visible_gpus(facts) if mm(g.compute_capability)]


def cc_below(cc: str, floor: str) -> bool:
    a, b = mm(cc), mm(floor)
    return bool(a and b and a < b)


def gpu_label(gpu: GpuFacts) -> str:
    return "GPU %d (%s, compute capability %s)" % (gpu.index, gpu.name or "unknown model", gpu.compute_capability)


def driver_upgrade_fix(floor_text: str) -> str:
    return ("Install or upgrade the NVIDIA driver to %s (Ubuntu: `sudo ubuntu-drivers install`, or NVIDIA's "
            "installer from https://www.nvidia.com/Download/index.aspx), then reboot (`sudo reboot`)" % floor_text)


def arch_driver_limit(facts: Facts, compat: Compat, branch: Optional[str]) -> str:
    """A sentence when a GPU's architecture has no driver at `branch` or later (so upgrading cannot help)."""
    if not branch or ver(branch) is None:
        return ""
    for gpu in gpus_with_cc(facts):
        arch = compat.arch_for_cc(gpu.compute_capability)
        if arch and arch.last_driver_branch and ver(arch.last_driver_branch) < ver(branch):
            return (" Note: %s is a %s GPU, whose last driver branch is R%s, so no driver that new exists for it "
                    "[%s]." % (gpu_label(gpu), arch.name, arch.last_driver_branch, arch.source))
    return ""


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


# --- cuDNN copies and the loader --------------------------------------------


def same_file(a: Optional[str], b: Optional[str]) -> bool:
    return bool(a and b and os.path.normpath(a) == os.path.normpath(b))


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


def consumers(facts: Facts) -> List[Tuple[str, Optional[CudnnCopy], Resolution]]:
    """Who loads which cuDNN copy: ('a plain process (libcudnn.so.9)', copy, resolution), then each framework."""
    out: List[Tuple[str, Optional[CudnnCopy], Resolution]] = []
    for name, res in plain_resolutions(facts):
        if res.path:
            out.append(("a plain process asking for %s" % name, copy_for_path(facts, res.path, res.realpath), res))
    for fw in facts.python.frameworks:
        res = fw.resolved_cudnn
        if res is not None and res.path:
            out.append(("%s %s" % (fw.name, fw.version), copy_for_path(facts, res.path, res.realpath), res))
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


def q(path: Any) -> str:
    """A path (or any word) quoted for a POSIX shell, so fixes survive spaces and metacharacters."""
    return shlex.quote(str(path))


def qs(paths: Iterable[Any]) -> str:
    """Several paths, each quoted, separated by spaces."""
    return " ".join(q(p) for p in paths)


def export_path_line(entries: Sequence[str]) -> str:
    """`export LD_LIBRARY_PATH=...` with the value quoted (or `unset` when nothing is left)."""
    if not entries:
        return "unset LD_LIBRARY_PATH"
    return "export LD_LIBRARY_PATH=%s" % q(":".join(entries))


def prepend_ld_path(directory: str) -> str:
    """The export line that puts `directory` first on LD_LIBRARY_PATH, keeping what is there."""
    return "export LD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" % q(directory)


def ld_conf_name(directory: str) -> str:
    """A /etc/ld.so.conf.d file name of this folder's own, so registering it never overwrites another file."""
    slug = re.sub(r"[^A-Za-z0-9_.]+", "-", directory).strip("-.") or "root"
    return "/etc/ld.so.conf.d/cudnn-doctor-%s.conf" % slug


def ld_conf_fix(directory: str) -> str:
    """Register a folder with the loader in a file named after it, then rebuild the cache."""
    return "echo %s | sudo tee %s > /dev/null && sudo ldconfig" % (q(directory), q(ld_conf_name(directory)))


def ld_library_path_without(facts: Facts, entries: Iterable[str]) -> str:
    """The exact `export` line that drops `entries` from LD_LIBRARY_PATH (or `unset` when nothing is left)."""
    drop = {os.path.normpath(e) for e in entries}
    keep = [d for d in facts.loader.ld_library_path if os.path.normpath(d) not in drop]
    return export_path_line(keep)


def ld_entry_for(facts: Facts, path: Optional[str]) -> Optional[str]:
    """The LD_LIBRARY_PATH entry a resolved file came from."""
    if not path:
        return None
    folder = os.path.normpath(os.path.dirname(path))
    for entry in facts.loader.ld_library_path:
        if os.path.normpath(entry) == folder:
            return entry
    return None


def cudnn_dir_fix(directory: str) -> str:
    return "%s   (or, for one shell: %s)" % (ld_conf_fix(directory), prepend_ld_path(directory))


# --- toolkits ----------------------------------------------------------------


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


# --- frameworks ----------------------------------------------------------------


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


def local_tag(version: str) -> str:
    return version.split("+", 1)[1] if "+" in version else ""


def torch_variant_tag(cuda: str) -> str:
    """'13.0' -> 'cu130' (PyTorch wheel index names)."""
    pair = mm(cuda)
    return "cu%d%d" % pair if pair else "cu?"


def torch_install(version: Optional[str], cuda: str) -> str:
    pin = "torch==%s" % version.split("+")[0] if version else "torch"
    return "pip install --force-reinstall %s --index-url https://download.pytorch.org/whl/%s" % (
        pin, torch_variant_tag(cuda))


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
    return max(fitting, key=lambda r: (ver(r["torch"]), ver(r["cuda"])))


def machine_cuda(facts: Facts, compat: Compat) -> Optional[str]:
    """The CUDA new installs should be built for: the toolkit programs use, else the newest the driver runs."""
    tk = primary_toolkit(facts)
    return (tk.version if tk else None) or driver_cuda(facts, compat)


def cudnn_wheel_for(compat: Compat, *cudas: Any) -> Optional[str]:
    """The nvidia-cudnn-cuN wheel for the first of `cudas` (most specific first) that NVIDIA builds wheels for."""
    for cuda in cudas:
        if cuda in (None, ""):
            continue
        name = compat.cudnn_wheel(major_of(cuda_label(cuda)))
        if name:
            return name
    return None


def copy_wheel(compat: Compat, copy: CudnnCopy, *fallback_cudas: Any) -> Optional[str]:
    """The pip project a cuDNN copy came from, else the wheel for the CUDA it (or the machine) was built for."""
    pkg = (copy.package or "").split()
    if pkg and pkg[0].startswith("nvidia-cudnn"):
        return pkg[0]
    return cudnn_wheel_for(compat, copy.cuda_version, *fallback_cudas)


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
    ccs = [g.compute_capability for g in gpus_with_cc(facts)]
    return min(ccs, key=lambda c: mm(c)) if ccs else None


def cudnn_build_exists(compat: Compat, release: str, cuda: Any) -> Optional[bool]:
    """Whether NVIDIA made a build of cuDNN `release` for `cuda` ('13' = any build of that major where the major has
    minor-version compatibility, '10.2' = that exact minor before it); None when compat knows nothing of the release."""
    label = cuda_label(cuda)
    cm = major_of(label) if label else None
    r = release3(release)
    if cm is None or r is None:
        return None
    family = compat.has_minor_compat(cm)
    exact = mm_text(label) if "." in str(label) else None
    builds = compat.cudnn_builds(str(r))
    if any((b.cuda_major == cm) if (family or exact is None) else (exact in b.cuda) for b in builds):
        return True
    era = compat.variant_era(cm) if family else None
    if era:
        first, last = release3(era.get("first")), release3(era.get("last"))
        if (first is None or r >= first) and (last is None or r <= last) and compat.cudnn_release_known(str(r)):
            return True
    return False if (builds or compat.cudnn_release_known(str(r))) else None


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
            return str(max(release3(r) for r in releases))
    return None


def cudnn_install_fix(compat: Compat, cuda: Any, cudnn_major: Optional[int] = None, version: Optional[str] = None,
                      origin: str = "system", platform: str = "linux", machine: Optional[str] = "x86_64",
                      min_cc: Optional[str] = None) -> str:
    """The command that installs a cuDNN for a CUDA release (or major), in the channel the user already uses.
    Without `cudnn_major`, the newest cuDNN major compat has a build of for that CUDA. A `version` NVIDIA never
    built for this CUDA is replaced by the newest release that has a build (of its major when one exists); with
    `min_cc`, only releases that still support that GPU are named."""
    cuda_text = mm_text(cuda) or (cuda_label(cuda) if cuda not in (None, "") else None)
    cm = major_of(cuda_text) if cuda_text else None
    if cm is None:
        return ("install the NVIDIA driver first (cuDNN is built per CUDA release), then the cuDNN build for the "
                "CUDA the driver runs (`cudnn-doctor matrix --driver <driver version>` lists them)")
    family = compat.has_minor_compat(cm)
    key = cuda_text if not family else str(cm)
    if version and (cudnn_build_exists(compat, version, key) is False
                    or not cudnn_runs_on_cc(compat, version, key, min_cc, strict=False)):
        # No such build (cuDNN 7.6.5 for CUDA 11.8, 9.1.0 for CUDA 13) or none for this GPU: name one that exists.
        if cudnn_major is None:
            cudnn_major = major_of(version)
        version = None
        if cudnn_release_for(compat, key, cudnn_major, min_cc) is None:
            cudnn_major = None
    if cudnn_major is not None and version is None and cudnn_release_for(compat, key, cudnn_major, min_cc) is None \
            and min_cc and cudnn_release_for(compat, key, None, min_cc) is not None:
        cudnn_major = None  # this major has no build for the GPU: offer the one that does
    if cudnn_major is None:
        cudnn_major = major_of(version or cudnn_release_for(compat, key, None, min_cc))
        if cudnn_major is None:
            if min_cc and compat.newest_cudnn_build(key):
                return ("compat knows no cuDNN build for CUDA %s that supports compute capability %s: install a "
                        "CUDA release that still supports this GPU (`cudnn-doctor matrix --cuda <release>` lists "
                        "the builds of each)" % (cuda_text, min_cc))
            return ("compat knows no cuDNN build for CUDA %s: install a CUDA release that cuDNN supports "
                    "(`cudnn-doctor matrix --cuda <release>` lists the builds of each)" % cuda_text)
    release = version or cudnn_release_for(compat, key, cudnn_major, min_cc)
    archive = compat.cudnn_archive_name(release, cuda_text if not family else str(cm), platform,
                                        machine or "x86_64") if release else None
    archive_text = archive or "the cuDNN %s build for CUDA %s" % (release or cudnn_major, cuda_text)
    wheel = compat.cudnn_wheel(cm)
    # Always pin: an unpinned nvidia-cudnn-cuNN installs the newest major, whatever major was asked for. Where the
    # newest release of the major no longer runs on the GPU, pin the release chosen for it.
    if version:
        pin = "==%s.*" % version
    elif min_cc and release and release != compat.newest_cudnn_build(key, cudnn_major):
        pin = "==%s.*" % release
    else:
        pin = "==%d.*" % cudnn_major
    if not family:
        # One runtime per CUDA minor: NVIDIA's per-minor debs or archives only (and no pip wheels).
        deb_version = (version or release or str(cudnn_major)) + ".*"
        deb = "libcudnn%d=%s-1+cuda%s" % (cudnn_major, deb_version, cuda_text)
        return ("download %s from NVIDIA's cuDNN archive and copy it with `sudo cp -P` into /usr/local/cuda-%s, or "
                "`sudo apt install %s %s`" % (archive_text, cuda_text, deb,
                                              deb.replace("libcudnn%d=" % cudnn_major,
                                                          "libcudnn%d-dev=" % cudnn_major)))
    if origin == "pip" and wheel:
        return 'pip install "%s%s"' % (wheel, pin)
    if origin == "conda":
        return 'conda install -c conda-forge "cudnn%s"' % (("=" + version) if version else "=%d" % cudnn_major)
    if platform == "windows":
        return "download %s from NVIDIA and copy its bin, include and lib folders into the CUDA %s folder%s" % (
            archive_text, cuda_text, (', or `pip install "%s%s"`' % (wheel, pin)) if wheel else "")
    apt_row = next((r for r in compat.cudnn_channels() if r.get("channel") == "apt-v%d" % cudnn_major), None)
    if apt_row and "<cuda_major>" in str(apt_row.get("install", "")):
        apt = str(apt_row["install"]).replace("<cuda_major>", str(cm))
    else:
        apt = "sudo apt install libcudnn%d libcudnn%d-dev" % (cudnn_major, cudnn_major)
    alternatives = [apt + " (NVIDIA's apt repository)"]
    if wheel:
        alternatives.append('`pip install "%s%s"`' % (wheel, pin))
    alternatives.append("the archive %s" % archive_text)
    return ", or ".join(alternatives)


def machine_cudnn_fix(facts: Facts, compat: Compat, cuda: Any, cudnn_major: Optional[int] = None,
                      version: Optional[str] = None,
                      origin: str = "system") -> str:
    """cudnn_install_fix for this machine's platform and processor."""
    return cudnn_install_fix(compat, cuda, cudnn_major, version, origin, platform_of(facts),
                             facts.host.machine or "x86_64", lowest_cc(facts))


def toolkit_install_fix(facts: Facts, compat: Compat, cuda: Any = None) -> str:
    """The command that installs a CUDA toolkit (no driver) for `cuda`, else for the driver's newest CUDA."""
    target = cuda or driver_cuda(facts, compat)
    package = compat.toolkit_package(target) if target else None
    if package:
        return "sudo apt install %s" % package
    return ("install the CUDA toolkit matching the driver's CUDA version (the 'CUDA Version' nvidia-smi prints) "
            "from https://developer.nvidia.com/cuda-downloads")


def jax_choice(facts: Facts, compat: Compat, cuda_major: Any = None) -> Tuple[Optional[Dict[str, Any]], List[str]]:
    """The JAX CUDA extra for this machine: of `cuda_major` when given, else the newest whose driver branch and
    minimum GPU the machine meets. Returns (row, why-not reasons of the chosen row: empty when it fits)."""
    rows = sorted(compat.framework_rows("jax"), key=lambda r: ver(r.get("built_cuda")) or ver("0"), reverse=True)
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


def jax_install(facts: Facts, compat: Compat, cuda_major: Any = None) -> str:
    row, why = jax_choice(facts, compat, cuda_major)
    if row is None:
        return "install JAX's CUDA build (compat has no JAX table)"
    fix = 'pip install -U "jax[%s]"' % row["extra"]
    if any("driver" in w for w in why):
        fix = driver_upgrade_fix("the R%s branch or later" % row["driver_linux"]) + "; then " + fix
    return fix


def reinstall_fix(compat: Compat, copy: CudnnCopy, facts: Optional[Facts] = None) -> str:
    """Reinstall the package a cuDNN copy came from, so its files are whole and of one version again."""
    pkg = copy.package or ""
    if copy.origin == "pip" or pkg.startswith("nvidia-cudnn"):
        name_ver = pkg.split()
        name = copy_wheel(compat, copy, *((machine_cuda(facts, compat),) if facts is not None else ()))
        if len(name_ver) == 2:
            spec = "%s==%s" % (name_ver[0], name_ver[1])
        elif name:
            spec = "%s==%s.*" % (name, copy.version) if copy.version else name
        else:
            return ("reinstall the nvidia-cudnn-cuN wheel that provides %s (`pip show -f` names it) with "
                    "`pip install --force-reinstall --no-deps`" % copy.directory)
        return 'pip install --force-reinstall --no-deps "%s"' % spec
    if pkg.startswith("deb "):
        return "sudo apt install --reinstall %s" % pkg.split()[1]
    if copy.origin == "conda" or pkg.startswith("conda"):
        return "conda install --force-reinstall cudnn"
    archive = None
    if copy.version and copy.cuda_version:
        archive = compat.cudnn_archive_name(copy.version, copy.cuda_version, platform_of(facts) if facts else "linux",
                                            (facts.host.machine if facts else None) or "x86_64")
    if archive and (facts is None or platform_of(facts) == "linux"):
        lib = archive[:-len(".tar.xz")] + "/lib" if archive.endswith(".tar.xz") else "cuda/lib64"
        return ("download %s from NVIDIA's cuDNN archive, `tar -xf` it and copy its libraries back keeping the "
                "links: sudo cp -P %s/libcudnn* %s/ && sudo ldconfig" % (archive, q(lib), q(copy.directory + "/")))
    return ("re-extract the cuDNN %s archive you installed from and copy its libraries back keeping the links "
            "(`sudo cp -P` of its lib/libcudnn* into %s), then `sudo ldconfig`" % (copy.version or "",
                                                                                  q(copy.directory + "/")))


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

