"""Fixes for the remains of a cuDNN: leftovers to remove or restore, soname links, headers of another release."""
from __future__ import annotations

import os
from typing import Dict, Optional, Sequence

from ..knowledge import Compat
from ..model import Facts, Fix
from ..queries import cudnn_build_exists, machine_cuda, primary_toolkit, toolkit_owning
from ..versions import major_of
from .acting import at, doctor, ldconfig, sudo
from .shell import or_else, prepend_ld_path, q, qs, run, said


def install_command(facts: Facts, compat: Compat, version: str, directory: Optional[str] = None) -> Optional[str]:
    """`cudnn-doctor install` for this release into the toolkit that owns `directory` (else the main toolkit)."""
    tk = (toolkit_owning(facts, directory) if directory else None) or primary_toolkit(facts)
    cuda = (tk.version if tk else None) or machine_cuda(facts, compat)
    cuda_major = major_of(cuda) if cuda else None
    if version.count(".") < 2 or cuda_major is None or cudnn_build_exists(compat, version, cuda_major) is False:
        return None  # NVIDIA made no such build for this CUDA: the install would fail
    home = " --cuda-home %s" % q(at(tk.path.rstrip("/"))) if tk else ""
    return doctor("install --version %s --cuda %s%s" % (version, cuda_major, home), privileged=True)


def leftovers_fix(paths: Sequence[str], version: Optional[str], restore: Optional[str], another_copy: bool,
                  inside_toolkit: bool) -> Fix:
    """Remove the leftovers at `paths` or restore their release: restoring first when they sit in the toolkit it
    goes back into, removing first when another cuDNN is installed (they most likely belong to one it replaced)."""
    remove = sudo("rm -f %s" % qs(at(p) for p in sorted(paths)))
    if not restore:
        return said("Remove the leftovers: %s, then install cuDNN again.", remove)
    if another_copy:
        return run(remove, alternatives=[restore],
                   text="Remove the leftovers: %s   (or restore cuDNN %s: %s)" % (remove, version, restore))
    if inside_toolkit:
        return run(restore, alternatives=[remove],
                   text="Restore cuDNN %s: %s   (or remove the leftovers: %s)" % (version, restore, remove))
    return run(remove, restore, text="Remove the leftovers and install cuDNN %s into the toolkit: %s && %s"
               % (version, remove, restore))


def soname_links_fix(directory: str, items: Sequence[Dict[str, str]], ldconfig_manages: bool) -> Fix:
    """The soname links the loader asks for, pointing at the files that are there (ldconfig makes them where it
    manages the folder)."""
    by_hand = ["cd %s" % q(at(directory))] + [sudo("ln -sfn %s %s" % (q(os.path.basename(i["path"])),
                                                                      q(i["soname"]))) for i in items]
    if ldconfig_manages:
        return run(ldconfig(), alternatives=by_hand, text="%s   (it creates the soname links in folders it manages; "
                   "by hand: %s)" % (ldconfig(), " && ".join(by_hand)))
    return run(*by_hand)


def header_mismatch_fix(unset: Optional[Fix], matching_dir: Optional[str], install: Optional[str], header: str,
                        loaded_version: str) -> Fix:
    """Builds see other cuDNN headers than programs load: drop the LD_LIBRARY_PATH entry that picks the library
    (``unset``), else load the copy the headers belong to (``matching_dir``), else bring both to one release."""
    remove = sudo("rm -f %s" % q(at(header)))
    if unset is not None:
        if matching_dir is not None:
            return unset
        return or_else(unset, said("bring the headers to %s: %%s" % loaded_version, install) if install else
                       said("remove the header no library matches: %s", remove), "%s   (or %s)")
    if matching_dir is not None:
        return run(prepend_ld_path(matching_dir))
    if install:
        return or_else(run(install), said("remove the header no library matches: %s", remove), "%s   (or %s)")
    return run(remove)
