"""Fixes for the dynamic loader and the environment it reads: LD_LIBRARY_PATH, LD_PRELOAD, ld.so.conf.d and its
cache, the unversioned names cuDNN 8 dlopens, and broken files the search reaches first."""
from __future__ import annotations

import os
from typing import Any, Iterable, Optional, Sequence

from ..knowledge import Compat
from ..model import Facts, Fix
from ..versions import major_of
from .acting import at, ldconfig, sudo, system, under_root
from .shell import (export_path_line, ld_library_path_without, or_else, prepend_ld_path, q, run, say,
                    unregister_fix)
from .software import nvrtc_install_fix


def off_ld_library_path_fix(facts: Facts, entries: Iterable[str]) -> Fix:
    """LD_LIBRARY_PATH set again without ``entries`` (unset when nothing is left)."""
    return ld_library_path_without(facts, entries)


def off_search_path_fix(facts: Facts, ld_entry: Optional[str], folder: str) -> Fix:
    """Take a folder off the loader's search path: out of LD_LIBRARY_PATH when an entry of it hands the folder out
    (``ld_entry``), else out of the loader's configuration."""
    return ld_library_path_without(facts, [ld_entry]) if ld_entry else unregister_fix(folder)


def absolute_ld_library_path_fix(facts: Facts) -> Fix:
    """LD_LIBRARY_PATH with only its absolute entries, so no program searches the folder it starts in."""
    return run(export_path_line([p for p in facts.loader.ld_library_path if p.startswith("/")]))


def broken_library_fix(path: str, via_ld_library_path: bool) -> Fix:
    """A truncated or non-ELF file the search reaches first: reinstall its package (or take its folder off
    LD_LIBRARY_PATH when that is how the search reaches it)."""
    dpkg, rpm = system("dpkg -S %s" % q(path), privileged=False), system("rpm -qf %s" % q(path), privileged=False)
    fix = run(dpkg, alternatives=[rpm], text="Replace the file: reinstall the package that owns it (`%s` or `%s` "
              "names it)" % (dpkg, rpm))
    if via_ld_library_path:
        fix = or_else(fix, say("take %s out of LD_LIBRARY_PATH", os.path.dirname(path)), "%s, or %s")
    return fix


def ld_preload_fix(keep: Sequence[str]) -> Fix:
    """LD_PRELOAD without the CUDA/cuDNN libraries it forced (``keep`` is what stays)."""
    return run(("export LD_PRELOAD=%s" % q(" ".join(keep))) if keep else "unset LD_PRELOAD")


def rebuild_loader_cache_fix() -> Fix:
    return run(ldconfig())


def cudnn_for_other_programs_fix(directory: str) -> Fix:
    """cuDNN lives only inside Python environments: how a program outside them finds it."""
    return say("If such a program needs it: %s", run(prepend_ld_path(directory)))


def nvrtc_link_fix(lib: str, cuda: Any = None) -> Fix:
    """Give a pip NVRTC wheel's folder the unversioned libnvrtc.so link cuDNN 8 dlopens, to the NVRTC of ``cuda``'s
    major where given (the folder is every CUDA's NVRTC wheel's), and put it on the path."""
    major = major_of(str(cuda)) if cuda is not None else None
    files = "libnvrtc.so.%d*" % major if major is not None else "libnvrtc.so.*"
    return or_else(run("cd %s" % q(at(lib)), 'ln -s "$(ls %s | head -n1)" libnvrtc.so' % files, prepend_ld_path(lib)),
                   "put a CUDA toolkit lib64, which has libnvrtc.so, on the path")


def missing_nvrtc_fix(facts: Facts, compat: Compat, cuda: Any, channel: str, prefix: str = "",
                      other_cuda: bool = False) -> Fix:
    """Nothing provides NVRTC (``other_cuda``: only another CUDA's NVRTC wheel is there): install it with the package
    manager that installed this cuDNN 8."""
    if other_cuda:
        return say("Install NVRTC for CUDA %s (the NVRTC here is another CUDA's): %s", str(cuda or "?"),
                   nvrtc_install_fix(facts, compat, cuda, channel, prefix))
    return say("Install NVRTC, which nothing on this machine provides: %s",
               nvrtc_install_fix(facts, compat, cuda, channel, prefix))


def libcuda_link_fix(libcuda: str, wsl: bool) -> Fix:
    """Let cuDNN 8 find the unversioned libcuda.so: WSL's driver share, else a link of the user's own to libcuda.so.1."""
    if wsl:
        return run(prepend_ld_path("/usr/lib/wsl/lib"))
    if under_root():  # a home of the doctor's user is not the root's: the link goes into the root's own tree
        folder = "/usr/local/lib/cuda-link"
        link = run(sudo("mkdir -p %s" % q(at(folder))), sudo("ln -sf %s %s" % (q(libcuda), q(at(folder + "/libcuda.so")))),
                   prepend_ld_path(folder))
    else:
        link = run("mkdir -p ~/.local/lib/cuda-link", "ln -sf %s ~/.local/lib/cuda-link/libcuda.so" % q(libcuda),
                   "export LD_LIBRARY_PATH=~/.local/lib/cuda-link${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
    return or_else(link, "install the driver's development package, which ships the libcuda.so link")
