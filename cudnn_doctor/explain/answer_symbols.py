"""Answers for an undefined symbol without a version node, before any message class: the C++ standard library's
(an older libstdc++ first), an NVIDIA library's own function (whose API it is, compat/sonames.toml [symbol_owners],
and the first release that defines it, compat/symbols_since.json) with the folder, the two wheels or the copies an
`ls -l` shows that shadow the right one. Pure: evidence and knowledge in, sentences and a Fix out."""
from __future__ import annotations

import re
from typing import List, Optional, Tuple

from ..knowledge import Compat
from ..remedies import paste, paste_runtime as rt
from ..remedies.paste_answers import needs_release_fix
from ..versions import major_of, version_key as _v
from .answered import Answer
from .evidence import Evidence, LoaderFailure
from .paste_facts import PasteFacts

# `ls -l` of a soname link: "/usr/lib/x86_64-linux-gnu/libnccl.so.2 -> libnccl.so.2.23.4" (folder, soname, release)
_LINK = re.compile(r"(?<![\w.+/-])(/[\w.+/-]+)/(lib\w+)\.so\.(\d+) -> (?:[\w.+/-]*/)?\2\.so\.(\3(?:\.\d+)+)")
_CUDA_DIR = re.compile(r"cuda-(\d{1,2}\.\d)")


def _older_cuda_folder(facts: PasteFacts) -> Optional[str]:
    """The LD_LIBRARY_PATH entry of the oldest CUDA, where the path names more than one."""
    named = [(_v(m.group(1)), d.value) for d in facts.library_dirs for m in [_CUDA_DIR.search(d.value)] if m]
    if len({v for v, _ in named}) < 2:
        return None
    return min(named, key=lambda pair: pair[0])[1]


# The C++ standard library's own symbols, mangled (std::runtime_error's constructor: _ZNSt13runtime_errorC2EPKc).
_CXX_STD = ("_ZNSt", "_ZNKSt", "_ZSt", "_ZTVSt", "_ZTISt", "_ZTSSt")


def _listed_copies(text: str, stem: str) -> List[Tuple[str, str]]:
    """(release, folder) of each copy of `stem` an `ls -l` in the text shows, newest first."""
    found = {(m.group(4), m.group(1)) for m in _LINK.finditer(text) if m.group(2) == stem}
    return sorted(found, key=lambda c: _v(c[0]), reverse=True)


def _undefined(f: LoaderFailure, ev: Evidence, compat: Compat) -> Optional[Answer]:
    facts, platform = ev.facts, ev.platform
    if f.symbol.startswith(_CXX_STD):  # fresh paste pytorch_geometric-506 had been answered with nothing at all
        return Answer("%s needs %s, a symbol of the C++ standard library that the libstdc++.so.6 loaded first lacks: "
                      "it was built with a newer GCC than that libstdc++" % (f.caller or "a library", f.symbol),
                      paste.libstdcxx_fix(f.symbol, platform))
    owner = compat.symbol_owner(f.symbol)  # whose API the symbol is (compat/sonames.toml [symbol_owners])
    if owner is None:
        return None
    stem = str(owner["stem"])
    since = compat.symbol_since(f.symbol)  # the first release that has it, from the real wheels or NVIDIA's guides
    dated = "; %s first came with %s %s, so the %s found is older than that" % (
        f.symbol, since["named"], since["release"], stem) if since else ""
    if stem == "libnccl":
        wheels = facts.package("nvidia-nccl-")
        if len(wheels) > 1:
            build = major_of(facts.build_cuda() or "")
            kept = next((w for w in wheels if build and w.name.endswith("cu%d" % build)), wheels[-1])
            extra = [w for w in wheels if w is not kept]
            return Answer("two NCCL wheels are installed (%s): %s needs %s, which the NCCL found first lacks" % (
                ", ".join("%s %s" % (w.name, w.release) for w in wheels), f.caller or "the program", f.symbol),
                rt.duplicate_wheel_fix(" ".join(w.name for w in extra), kept.name))
    copies = _listed_copies(ev.text, stem)
    if len(copies) > 1:  # nccl#1784: a build's own NCCL 2.27 and the system's 2.23, which the loader found first
        return Answer("%s is %s's own function, and the text lists %s: the older copy is found first, not the one "
                      "the program was built with%s" % (f.symbol, owner["product"], " and ".join(
                          "%s %s (%s)" % (owner["product"], release, folder) for release, folder in copies), dated),
                      paste.older_copy_fix(stem, copies[0][1]))
    caller_dir, _, caller = f.caller.rpartition("/")
    caller_dir = caller_dir or f.folder
    folder = caller_dir if caller.startswith(stem) else (facts.folder_of_stem(stem) or _older_cuda_folder(facts))
    if folder:
        return Answer("%s needs %s, which the %s in %s (found first) lacks: an older copy there shadows the one the "
                      "program was built with%s" % (caller if folder != caller_dir else "the program", f.symbol, stem,
                                                     folder, dated), rt.drop_folder_fix(folder, "its older %s" % stem))
    if stem == "libcudnn":
        return Answer("%s needs %s, which the libcudnn loaded first lacks: an older cuDNN shadows the one it was built "
                      "with" % (caller or "the program", f.symbol), paste.shadowed_library_fix("libcudnn.so", None,
                                                                                              "linux"))
    # CodeJudge#2: ncclCommRegister alone; the copies are two NCCL wheels, a system library or a build of one's own
    fix = paste.older_copy_fix(stem, None)
    if since:  # what the copy found first must reach, where the text names no folder
        fix = needs_release_fix(fix, since["named"], since["release"])
    return Answer("%s is %s's own function: the %s loaded is older than the one the program was built with (two "
                  "copies: a system library, a build of your own, or pip wheels of another CUDA major beside each "
                  "other)%s" % (f.symbol, owner["product"], stem, dated), fix)


def from_loader(ev: Evidence, compat: Compat) -> Optional[Answer]:
    """An undefined symbol without a version node: the folder or wheel whose older copy is found first."""
    for f in ev.loader:
        if f.kind == "undefined-symbol" and not f.node:
            found = _undefined(f, ev, compat)
            if found is not None:
                return found
    return None
