"""CD6xx: the dynamic loader and the environment: search paths, unversioned names, bad candidates, visibility."""
from __future__ import annotations

import os
import re
from typing import List

from ..model import PRELOADED, CudnnCopy, Facts, Finding
from ..queries import package_channel
from ..versions import canonical_name, major_of
from . import LINUX, RuleContext, rule
from ..queries import is_pip_dir, machine_cuda, visible_gpus
from ..remedies import cudnn_dir_fix
from ..remedies.gpu import cuda_visible_devices_fix, unhide_gpus_fix
from ..remedies.loader import (cudnn_for_other_programs_fix, ld_preload_fix, libcuda_link_fix, missing_nvrtc_fix,
                               nvrtc_link_fix, off_search_path_fix, rebuild_loader_cache_fix)
from .common import ERROR, INFO, WARNING, compat_of, finding

_SKIPPED = re.compile(r"^(?P<path>\S+) \((?P<via>[^)]*)\) skipped: (?P<why>\S+)")


@rule("CD601", "lib-not-on-search-path", "cuDNN installed where the loader does not look", platforms=LINUX,
      section="loader")
def off_path(facts: Facts, ctx: RuleContext) -> List[Finding]:
    out: List[Finding] = []
    for major in sorted({c.major for c in facts.cudnn if c.major}, reverse=True):
        name = "libcudnn.so.%d" % major
        res = facts.loader.resolved.get(name)
        if res is None or res.path:
            continue
        copies = [c for c in facts.cudnn if c.major == major]
        # Only a folder that holds the library itself and that nothing reaches: a stray sub-library in a folder on
        # LD_LIBRARY_PATH (draw 20261201-10) is searched, and a preloaded copy is loaded (draw 20261202-1);
        # registering such a folder would hand the copy to every program.
        searched = {os.path.normpath(e) for e in facts.loader.ld_library_path}
        loose = [c for c in copies if c.origin not in ("pip", "conda") and not is_pip_dir(c.directory)
                 and os.path.basename(c.path).startswith(name) and os.path.normpath(c.directory) not in searched
                 and not set(c.found_via) & set(PRELOADED)]
        # A folder the loader is configured for (or whose files the cache merely lacks) is CD608's: `sudo ldconfig`.
        registered = {os.path.normpath(d) for d in facts.loader.conf_dirs}
        stale_dirs = {os.path.normpath(os.path.dirname(p)) for p in facts.loader.stale_cache}
        loose = [c for c in loose if os.path.normpath(c.directory) not in registered | stale_dirs]
        if loose:
            c = loose[0]
            out.append(finding(
                WARNING, "%s is installed in %s, but the loader does not search there" % (name, c.directory),
                detail="Programs that need it fail with '%s: cannot open shared object file' although the file "
                       "exists: the folder is in neither LD_LIBRARY_PATH, /etc/ld.so.conf.d nor the default paths "
                       "(or ldconfig was not re-run after installing)." % name,
                remedy=cudnn_dir_fix(c.directory), evidence={"soname": name, "found_in": [x.directory for x in copies],
                                                          "LD_LIBRARY_PATH": facts.loader.ld_library_path},
                catalogue=["F1", "D1"]))
        elif all(c.origin in ("pip", "conda") or is_pip_dir(c.directory) for c in copies):
            c = copies[0]
            out.append(finding(
                INFO, "%s exists only inside Python/conda environments (%s)" % (name, c.directory),
                detail="Frameworks find their wheel's cuDNN through their own RUNPATH; programs outside them "
                       "(C/C++ builds, Paddle, ONNX Runtime without torch) do not.",
                remedy=cudnn_for_other_programs_fix(c.directory),
                evidence={"soname": name, "found_in": [x.directory for x in copies]},
                catalogue=["F1"]))
    return out


def _cudnn8_in_use(facts: Facts) -> bool:
    return any(c.major == 8 for c in facts.cudnn)


@rule("CD602", "nvrtc-unversioned-missing", "cuDNN 8 cannot find the unversioned libnvrtc.so", platforms=LINUX,
      section="loader")
def nvrtc(facts: Facts, ctx: RuleContext) -> List[Finding]:
    res = facts.loader.resolved.get("libnvrtc.so")
    if not _cudnn8_in_use(facts) or res is None or res.path:
        return []
    compat = compat_of(ctx)
    copy = next(c for c in facts.cudnn if c.major == 8)
    # NVRTC of the CUDA this cuDNN 8 was built for: a cuDNN 8 for CUDA 11 beside a site's CUDA 12 NVRTC wheel would
    # get a link to libnvrtc.so.12 (both wheels write nvidia/cuda_nvrtc/lib)
    cuda = major_of(copy.cuda_version or "")
    wanted = compat.nvrtc_packages().get("pip", {}).get(str(cuda)) if cuda is not None else None
    found = [w for w in facts.python.nvidia_wheels if canonical_name(w["name"]).startswith("nvidia-cuda-nvrtc")]
    dirs = [w["location"].rstrip("/") + "/nvidia/cuda_nvrtc/lib" for w in found
            if wanted is None or canonical_name(w["name"]) == wanted]
    if dirs:
        fix = nvrtc_link_fix(dirs[0], cuda if wanted is not None else None)
    else:
        # No NVRTC of its CUDA anywhere: install it first, with the package manager that installed this cuDNN 8.
        fix = missing_nvrtc_fix(facts, compat, copy.cuda_version or machine_cuda(facts, compat),
                                package_channel(facts, copy), _prefix_of(facts, copy), other_cuda=bool(found))
    return [finding(
        WARNING, "cuDNN 8 is installed but nothing provides the unversioned libnvrtc.so",
        detail="cuDNN 8's convolution library dlopens 'libnvrtc.so' by that exact name; pip wheels ship only "
               "libnvrtc.so.X.Y, so convolutions fail with 'Could not load library libcudnn_cnn_infer.so.8. Error: "
               "libnvrtc.so: cannot open shared object file' and the process aborts.",
        remedy=fix, evidence={"candidates": dirs, "searched": res.shadowed}, catalogue=["F2"])]


def _prefix_of(facts: Facts, copy: CudnnCopy) -> str:
    """The site-packages folder (pip) or environment (conda) a cuDNN copy lives in; "" for other copies."""
    folder = copy.directory.rstrip("/") + "/"
    for mark in ("/site-packages/", "/dist-packages/"):
        if mark in folder:
            return folder.split(mark)[0] + mark.rstrip("/")
    return next((p for p in facts.python.conda_prefixes if folder.startswith(p.rstrip("/") + "/")), "")


@rule("CD603", "libcuda-unversioned-missing", "cuDNN 8 cannot find the unversioned libcuda.so", platforms=LINUX,
      section="loader")
def libcuda_unversioned(facts: Facts, ctx: RuleContext) -> List[Finding]:
    res = facts.loader.resolved.get("libcuda.so")
    real = facts.loader.resolved.get("libcuda.so.1")
    if not _cudnn8_in_use(facts) or res is None or res.path or real is None or not real.path:
        return []
    return [finding(
        WARNING, "cuDNN 8 is installed but only libcuda.so.1, not libcuda.so, is on the search path",
        detail="cuDNN 8 dlopens the unversioned 'libcuda.so'; without it convolutions fail with 'Error: libcuda.so: "
               "cannot open shared object file'.",
        remedy=libcuda_link_fix(real.path, bool(facts.host.wsl)), evidence={"libcuda.so.1": real.path},
        catalogue=["F3"])]


@rule("CD604", "wrong-elf-class-on-path", "A library of the wrong architecture sits on the search path",
      platforms=LINUX, section="loader")
def wrong_class(facts: Facts, ctx: RuleContext) -> List[Finding]:
    out: List[Finding] = []
    for name, res in sorted(facts.loader.resolved.items()):
        for problem in res.problems:
            m = _SKIPPED.match(problem)
            if not m or m.group("why") not in ("elfclass32", "wrong-machine"):
                continue
            folder = os.path.dirname(m.group("path"))
            from_ld = m.group("via") == "LD_LIBRARY_PATH"
            out.append(finding(
                WARNING, "%s on the search path for %s is %s" % (m.group("path"), name, m.group("why")),
                detail="The loader skips it, but programs that load it by path fail with 'wrong ELF class: "
                       "ELFCLASS32', and it is a sign that a 32-bit or foreign folder is on the path.",
                remedy=off_search_path_fix(facts, folder if from_ld else None, folder),
                evidence={"soname": name, "candidate": m.group("path"), "via": m.group("via")}, catalogue=["F4"]))
    return out


@rule("CD605", "cuda-visible-devices-hides-gpus", "CUDA_VISIBLE_DEVICES hides GPUs", section="loader")
def visibility(facts: Facts, ctx: RuleContext) -> List[Finding]:
    vis = facts.visibility
    if vis.cuda_visible_devices is None or not facts.gpus:
        return []
    visible = visible_gpus(facts)
    if not visible:
        return [finding(
            ERROR, "CUDA_VISIBLE_DEVICES=%r hides every GPU" % vis.cuda_visible_devices,
            detail="CUDA reports 'no CUDA-capable device is detected' (CUDA_ERROR_NO_DEVICE) although nvidia-smi "
                   "shows %d GPU(s). %s" % (len(facts.gpus), "; ".join(vis.problems)),
            remedy=unhide_gpus_fix(),
            evidence={"CUDA_VISIBLE_DEVICES": vis.cuda_visible_devices, "gpus": len(facts.gpus),
                      "problems": vis.problems}, catalogue=["F5"])]
    if vis.problems:
        return [finding(
            WARNING, "CUDA_VISIBLE_DEVICES=%r is partly invalid: %s" % (
                vis.cuda_visible_devices, "; ".join(vis.problems)),
            detail="CUDA stops reading the list at the first bad entry, so fewer GPUs are visible than intended.",
            # Keep the user's order: CUDA numbers devices in the order the variable lists them.
            remedy=cuda_visible_devices_fix(",".join(str(i) for i in _visible_order(facts))),
            evidence={"CUDA_VISIBLE_DEVICES": vis.cuda_visible_devices, "visible": [g.index for g in visible]},
            catalogue=["F5"])]
    return []


def _visible_order(facts: Facts) -> List[int]:
    """The visible GPU indices in the order CUDA_VISIBLE_DEVICES lists them (each once)."""
    order = [i for i in (facts.visibility.visible_indices or []) if any(g.index == i for g in visible_gpus(facts))]
    order = list(dict.fromkeys(order))
    return order + [g.index for g in visible_gpus(facts) if g.index not in order]


@rule("CD606", "ld-preload-cuda", "LD_PRELOAD forces a CUDA/cuDNN library", platforms=LINUX, section="loader")
def preload(facts: Facts, ctx: RuleContext) -> List[Finding]:
    hits = [p for p in facts.loader.ld_preload if re.search(r"lib(cudnn|cuda|cudart|cublas)", os.path.basename(p))]
    if not hits:
        return []
    keep = [p for p in facts.loader.ld_preload if p not in hits]
    return [finding(
        WARNING, "LD_PRELOAD forces %s into every process" % ", ".join(hits),
        detail="A preloaded library wins over every search path, so frameworks get it instead of their own copy.",
        remedy=ld_preload_fix(keep),
        evidence={"LD_PRELOAD": facts.loader.ld_preload}, catalogue=["E2"])]


@rule("CD607", "loader-cache-unreadable", "ld.so.cache could not be read", platforms=LINUX, section="loader")
def cache(facts: Facts, ctx: RuleContext) -> List[Finding]:
    if not facts.loader.cache_error:
        return []
    return [finding(
        WARNING, "The loader cache could not be read: %s" % facts.loader.cache_error,
        detail="Which library a program gets was worked out without the cache, so it may differ from what "
               "ld.so does; a missing or stale cache also hides newly installed libraries.",
        remedy=rebuild_loader_cache_fix(), evidence={"cache": facts.loader.cache_path}, catalogue=["F1"])]


@rule("CD608", "ld-cache-stale", "ld.so.cache is older than the CUDA/cuDNN libraries in its folders", platforms=LINUX,
      section="loader")
def stale_cache(facts: Facts, ctx: RuleContext) -> List[Finding]:
    stale = facts.loader.stale_cache
    if not stale:
        return []
    return [finding(
        WARNING, "ld.so.cache does not list %d CUDA/cuDNN librar%s in the loader's folders (e.g. %s)" % (
            len(stale), "y" if len(stale) == 1 else "ies", stale[0]),
        detail="The loader looks names up in /etc/ld.so.cache, not in the folders themselves: a library installed "
               "without re-running ldconfig 'cannot open shared object file' although it is in a listed folder.",
        remedy=rebuild_loader_cache_fix(), evidence={"not_in_cache": stale[:20]}, catalogue=["F1"])]
