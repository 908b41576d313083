"""Fixes that put a release into a Python environment, from what a pasted text says: the environment's Python
when the release has no wheel for the paste's, and the source (PyPI, PyTorch's index or its find-links page) that
serves the build the paste names."""
from __future__ import annotations

from typing import Any, List, Optional, Tuple

from ..knowledge import Compat
from ..model import WINDOWS_SHELL, Fix
from ..versions import tag_cuda, version_of
from .shell import advice, or_else, q, run, say
from .software import newest_torch_before_indexes, torch_install, torch_source


def other_python_fix(python: str, why: str, use: Optional[str], release: Optional[str], platform: str) -> Fix:
    """Nothing the package index holds installs on the paste's Python: an environment with ``use``, the Python
    nearest it that PyTorch's newest ``release`` installs on (None: the index has none)."""
    said_why = "no PyTorch release with kernels for this GPU installs on Python %s (%s)" % (python, why)
    if use is None or release is None:
        return advice("%s, nor does its newest release on another Python the wheel index knows" % said_why)
    return say("%s: %s" % (said_why.replace("%", "%%"), "%s"),
               supported_python_fix(use, q("torch==%s" % release), platform))


def release_install_words(compat: Compat, project: str, version: Any, platform: str) -> str:
    """What follows `pip install` for this release: a PyTorch CUDA build (`+cu102`) with the page that serves it
    (PyPI has none of them), anything else as pinned."""
    cuda = tag_cuda(getattr(version, "local", None))
    if project == "torch" and cuda:
        return torch_source(compat, str(version), cuda, quoted=True, platform=platform)
    return q("%s==%s" % (project, version))


def supported_python_fix(python: str, install: str, platform: str) -> Fix:
    """A release with no wheel for the paste's Python: an environment with a Python it has wheels for, made and
    activated the way that platform does it (the `py` launcher on Windows), then `pip install` + ``install`` (the
    release's own source: a PyTorch CUDA build names its page)."""
    folder = ".venv-py%s" % python.replace(".", "")
    if platform == "windows":
        make, activate = "py -%s -m venv %s" % (python, folder), "%s\\Scripts\\activate" % folder
    else:
        make, activate = "python%s -m venv %s" % (python, folder), ". %s/bin/activate" % folder
    commands = (make, activate, "pip install %s" % install)
    return run(*commands, shell=WINDOWS_SHELL if platform == "windows" else "sh",
               text="create an environment with Python %s, which the release has wheels for, and install there: `%s`, "
                    "`%s`, then `%s`" % ((python,) + commands))


def torch_release_fix(compat: Compat, release: Optional[str], cuda: str, why: str, platform: str = "linux",
                      python: Optional[str] = None) -> Fix:
    """A PyTorch release known to fix (or to serve) what the paste shows; None: the newest for `cuda`. Where that
    release has wheels only for Pythons older than any today's PyTorch runs on, the environment it needs comes with
    it: made with its newest Python where the paste's (``python``) is not one of them, offered beside the plain
    install where the paste does not say its Python."""
    fix = say("install PyTorch %s (%s): %s" % (release or "for CUDA %s" % cuda, why, "%s"),
              torch_install(compat, release, cuda, platform))
    pinned = release or newest_torch_before_indexes(compat, cuda)
    every = _old_pythons(pinned, platform) if pinned else []  # Python 2 too: a paste's 2.7 may be one of them
    pythons = [p for p in every if not p.startswith("2.")]
    if not pinned or not pythons:
        return fix
    other = supported_python_fix(pythons[-1], torch_source(compat, pinned, cuda, quoted=True, platform=platform),
                                 platform)
    said_python = ".".join((python or "").split(".")[:2])
    if said_python:
        return fix if said_python in every else say(
            "install PyTorch %s (%s), which has no wheel for Python %s: %s" % (pinned, why, said_python, "%s"), other)
    span = pythons[0] if len(pythons) == 1 else "%s to %s" % (pythons[0], pythons[-1])
    return or_else(fix, other, "%%s   (PyTorch %s has wheels for Python %s only: on a newer Python, %%s)" % (
        pinned.split("+")[0], span))


def _old_pythons(release: str, platform: str) -> List[str]:
    """The Python releases (2.x too) PyTorch ``release`` has wheels for (PyPI's files), where none of them is one the
    newest PyTorch release has wheels for; else [] (a Python of today installs it, or the index does not know it).
    Where PyPI held no Windows wheel of a release (1.5 and older: PyTorch's own page served them, for the same
    Pythons), its Linux wheels say."""
    from ..knowledge.wheel_index import Node, load_wheel_index  # why: loaded once, for an old release named only

    index = load_wheel_index()
    linux = Node(machine="x86_64")
    node = Node(platform="win32", machine="AMD64") if platform == "windows" else linux
    have = index.pythons("torch", release.split("+")[0], node) or index.pythons("torch", release.split("+")[0], linux)
    newest = next(iter(index.versions("torch")), None)
    today = index.pythons("torch", newest, node) if newest else []
    if not have or not today or version_of(have[-1]) >= version_of(today[0]):
        return []
    return have


def jax_extra_fix(compat: Compat, cuda_major: int) -> Fix:
    """JAX's CUDA build as its install recipe names it (compat: the jax[cuda<M>] extra, whose plugin wheels bring
    CUDA and cuDNN), for jaxlib pins of the old local CUDA builds that only JAX's own page held."""
    project = str(compat.install_recipe("jax").get("pip", "jax[cuda<M>]")).replace("<M>", str(cuda_major))
    return run('pip install -U "%s"' % project,
               text="install JAX's CUDA %d build the way JAX installs it now: `pip install -U \"%s\"` (its plugin "
                    "wheels bring CUDA and cuDNN), with no jaxlib pin and no find-links page" % (cuda_major, project))


def onnxruntime_for_cuda_fix(release: str, cuda_major: int, extras: bool, toolkit: Fix) -> Fix:
    """The onnxruntime-gpu release whose PyPI build is for the CUDA major the machine has, with its [cuda,cudnn]
    extras where it has them (the CUDA and cuDNN wheels it links); or that build's CUDA."""
    wanted = "onnxruntime-gpu%s==%s" % ("[cuda,cudnn]" if extras else "", release)
    return say("%s; or %s", run('pip install "%s"' % wanted,
                                text="install onnxruntime-gpu %s, whose PyPI build is for CUDA %d: `pip install \"%s\"`"
                                     % (release, cuda_major, wanted)), toolkit)


def one_cudnn_major_fix(compat: Compat, onnxruntime: Optional[str], torch: Optional[Tuple[str, str]], cuda: str,
                        have_major: int, want_major: int, platform: str) -> Fix:
    """onnxruntime-gpu and PyTorch on one cuDNN major: the onnxruntime-gpu release whose PyPI build links the major
    (and CUDA major) PyTorch brings, first (it changes one framework), or the PyTorch release whose build pins the
    major ONNX Runtime needs, for the CUDA major it links; words alone where neither is known."""
    fixes = []
    if onnxruntime:
        fixes.append(run("pip install onnxruntime-gpu==%s" % onnxruntime,
                         text="install onnxruntime-gpu %s (its PyPI build links cuDNN %d and CUDA %s, as PyTorch's "
                              "do): `pip install onnxruntime-gpu==%s`" % (onnxruntime, have_major, cuda.split(".")[0],
                                                                          onnxruntime)))
    if torch:
        release, its_cuda = torch
        fixes.append(torch_release_fix(compat, release, its_cuda, "its CUDA %s build pins cuDNN %d, which ONNX Runtime "
                                       "accepts too" % (its_cuda, want_major), platform))
    if not fixes:
        return advice("install releases of ONNX Runtime and PyTorch built on one cuDNN major (cuDNN %d for both, or "
                      "%d for both)" % (have_major, want_major))
    return fixes[0] if len(fixes) == 1 else say("%s; or %s", fixes[0], fixes[1])