"""Questions about the cuDNN copies: which copy a resolved path belongs to, which copies a plain process and each
framework load, where a copy lives and what it lacks."""
from __future__ import annotations

import functools
import os
import re
from typing import Dict, List, Optional, Tuple

from ..knowledge import Compat
from ..model import CudnnCopy, Facts, FrameworkFacts, Resolution
from ..versions import canonical_name, major_of


def site_wheels(facts: Facts, site: Optional[str]) -> Dict[str, str]:
    """The NVIDIA wheels installed in one site-packages folder: canonical name -> release."""
    return {canonical_name(w["name"]): w.get("version") or "" for w in facts.python.nvidia_wheels
            if same_file(w.get("location"), site)}


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


def built_cuda_major(copy: CudnnCopy) -> Optional[int]:
    """The CUDA major a copy was built for: what the library said, else its pip wheel's name (nvidia-cudnn-cu12),
    for a copy that could not be loaded (draw 486637-59: a cu12 8.9.7 lacking libcudnn_ops_infer aborted the probe,
    and Paddle for CUDA 11.8 was sent to it)."""
    if copy.cuda_version:
        return major_of(copy.cuda_version)
    wheel = copy.pip_wheel()
    m = re.fullmatch(r"nvidia-cudnn-cu(\d+)", canonical_name(wheel[0])) if wheel else None
    return int(m.group(1)) if m else None


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


def environment_prefix(site: str) -> str:
    """The environment's own folder: /venv for /venv/lib/python3.11/site-packages."""
    return site.split("/lib/python")[0] if "/lib/python" in site else site.rstrip("/").rsplit("/", 1)[0]


def owning_environment(facts: Facts, directory: str) -> Optional[str]:
    """The prefix of the Python or conda environment a library folder belongs to (None: a system folder)."""
    path = os.path.normpath(directory)
    for marker in ("/site-packages/", "/dist-packages/"):
        if marker in path + "/":
            return environment_prefix((path + "/").split(marker)[0] + marker.rstrip("/"))
    # ... or a folder inside an environment's prefix beside its site (`pip install --target <venv>/cudnn8`, the folder
    # fix installs a second cuDNN major into: fix draw 1201281-4); never a system prefix such as /usr
    venvs = {environment_prefix(os.path.normpath(site)) for site in facts.python.site_dirs
             if "/lib/python" in site}  # an environment's own site, not a PYTHONPATH or .pth folder
    prefixes = list(facts.python.conda_prefixes) + [p for p in venvs if p not in _SYSTEM_PREFIXES]
    inside = [p for p in prefixes if path.startswith(os.path.normpath(p).rstrip("/") + "/")]
    return max(inside, key=len) if inside else None


_SYSTEM_PREFIXES = frozenset({"", "/", "/usr", "/usr/local", "/opt"})


def in_environment_of(site: Optional[str], directory: str) -> bool:
    """Whether ``directory`` is inside the environment whose site-packages is ``site`` (anywhere under its prefix,
    a `pip install --target` folder beside the site too)."""
    if not site:
        return False
    return os.path.normpath(directory).startswith(environment_prefix(os.path.normpath(site)).rstrip("/") + "/")


def distro_lib_dir(directory: str) -> bool:
    """Whether a folder is one the distribution's packages install libraries into (apt's or dnf's build of a
    library replaces a copy there in place)."""
    return bool(_DISTRO_LIB_DIR.match(os.path.normpath(directory)))


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


def _present(copy: CudnnCopy, soname: str) -> bool:
    return any((f.name == soname or f.name.startswith(soname + ".")) and not f.dangling for f in copy.files)


def missing_sublibraries(compat: Compat, copy: CudnnCopy) -> List[str]:
    """The sub-libraries of its major's layout (compat/cudnn_layout.toml) a cuDNN copy lacks."""
    expected = list(compat.cudnn_layout(copy.major or 0).get("linux_sublibraries", []))
    found = set(copy.sublibraries_missing)
    if copy.files:
        found |= {name for name in expected if not _present(copy, name)}
    return sorted(found)
