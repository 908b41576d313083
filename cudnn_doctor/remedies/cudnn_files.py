"""Fixes for a cuDNN copy's own files: none installed, files of two releases mixed, files corrupt or unloadable."""
from __future__ import annotations

import os
from typing import Any, Sequence

from ..knowledge import Compat
from ..model import CudnnCopy, Facts, Fix
from ..versions import major_of, mm_text
from .cudnn import cudnn_into_toolkit, machine_cudnn_fix, reinstall_fix
from .acting import at
from .shell import ld_library_path_without, q, remove_files_fix, run, said, say, then


def cudnn_missing_fix(facts: Facts, compat: Compat, cuda: Any) -> Fix:
    """Install cuDNN for the CUDA programs use (through cudnn-doctor into the toolkit where it can); without a
    CUDA, what to install first."""
    cuda_major = major_of(cuda) if cuda else None
    if not cuda_major:
        return machine_cudnn_fix(facts, compat, None)
    return say("Install cuDNN for CUDA %s: %s", cuda_major if compat.has_minor_compat(cuda_major) else mm_text(cuda),
               cudnn_into_toolkit(facts, compat, cuda, machine_cudnn_fix(facts, compat, cuda)))


def mixed_releases_fix(facts: Facts, compat: Compat, copy: CudnnCopy, stale: Sequence[str]) -> Fix:
    """Reinstall the copy, then delete the full-version files of the other releases the reinstall leaves behind."""
    fix = reinstall_fix(compat, copy, facts)
    if stale:
        fix = then(fix, remove_files_fix(copy.directory, stale), joint="; then remove the other release's files: ")
    return fix


def corrupt_files_fix(facts: Facts, compat: Compat, copy: CudnnCopy) -> Fix:
    """Reinstall a copy whose files are empty, short or of another architecture (a full disk is a common cause)."""
    return say("%s; check free space first with `%s`", reinstall_fix(compat, copy, facts),
               run("df -h %s" % q(at(copy.directory))))


def unloadable_copy_fix(facts: Facts, compat: Compat, copy: CudnnCopy) -> Fix:
    """Reinstall a copy that fails to load, and how to see the loader's own message."""
    return say("%s; to see the loader's own message: %s", reinstall_fix(compat, copy, facts),
               run("LD_DEBUG=libs python3 -c 'import ctypes; ctypes.CDLL(\"%s\")'" % copy.path))


def stray_sublibraries_fix(facts: Facts, copy: CudnnCopy, on_path: bool) -> Fix:
    """A folder with sub-libraries of a cuDNN release and no libcudnn.so.N is no install to complete: it hands its
    files to another copy's shim. Off LD_LIBRARY_PATH it goes (what CD709 says too); else its files are named to
    delete (nothing loads them while the folder is on no path, so deleting is yours to decide)."""
    if on_path:
        return ld_library_path_without(facts, [copy.directory])
    names = sorted({f.name for f in copy.files}) or [os.path.basename(copy.path)]
    return said("they belong to no complete copy; if nothing of yours needs them, remove them: `%s`",
                remove_files_fix(copy.directory, names).commands[0])
