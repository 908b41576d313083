"""CD4xx: cuDNN files on disk: presence, sub-libraries, versions, links, modes, integrity, headers."""
from __future__ import annotations

import os
import re
from typing import Dict, List, Set

from ..versions import major_of, release3, release3_of
from ..model import CudnnCopy, Facts, Finding, Fix, LibFile
from ..remedies import header_fix, readable_fix, reinstall_fix, relink_fix
from ..remedies.environments import whole_environment_fix
from ..remedies.frameworks import cudnn_package_reinstall_fix
from ..remedies.cudnn_files import (corrupt_files_fix, cudnn_missing_fix, mixed_releases_fix, stray_sublibraries_fix,
                                    unloadable_copy_fix)
from . import LINUX, RuleContext, rule
from ..queries import (has_driver, is_pip_dir, is_used, ld_entry_for, machine_cuda, missing_sublibraries,
                       own_cudnn_wheel_dir, owning_environment, primary_toolkit)
from .common import ERROR, INFO, WARNING, compat_of, finding

_SHORT_SONAME = re.compile(r"^(lib\w+\.so\.\d+)$")


@rule("CD401", "cudnn-not-found", "No cuDNN installed", section="cudnn")
def not_found(facts: Facts, ctx: RuleContext) -> List[Finding]:
    if facts.cudnn or any(i["kind"] != "missing-soname-link" for i in facts.cudnn_leftovers):
        return []  # CD410 names the leftovers and the version they say
    compat = compat_of(ctx)
    wants = [fw for fw in facts.python.frameworks if fw.cuda_build]
    # The CUDA the cuDNN must be built for: the frameworks' build where they agree on its major (they are what
    # loads it: a new user's onnxruntime-gpu for CUDA 12 was offered CUDA 13's beside a CUDA 13 toolkit), else the
    # toolkit programs use, else the driver's.
    tk = primary_toolkit(facts)
    built = [fw.cuda_version for fw in wants if fw.cuda_version]
    agreed = built[0] if built and len({major_of(c) for c in built}) == 1 else None
    cuda = agreed or (tk.version if tk else None) or (built[0] if built else None) or machine_cuda(facts, compat)
    severity = ERROR if wants or ctx.target else (WARNING if has_driver(facts) else INFO)
    # The places the cuDNN probe looked (not every file another probe read that happens to name cuDNN).
    places = list(dict.fromkeys(facts.searched.get("cudnn", [])))
    where = places[:12] + (["... and %d more (`cudnn-doctor check -vv` lists them)" % (len(places) - 12)]
                           if len(places) > 12 else [])
    return [finding(
        severity, "No cuDNN library was found on this machine",
        detail="cuDNN is not part of the CUDA toolkit or the driver; programs that need it fail with "
               "'libcudnn.so.N: cannot open shared object file'%s." % (
                   " (installed: %s)" % ", ".join("%s %s" % (f.name, f.version) for f in wants) if wants else ""),
        remedy=cudnn_missing_fix(facts, compat, cuda),
        evidence={"searched": where, "cuda": cuda, "has_driver": has_driver(facts)},
        catalogue=["D1"])]


@rule("CD402", "cudnn-sublibraries-missing", "cuDNN sub-libraries missing", platforms=LINUX, section="cudnn")
def sublibraries(facts: Facts, ctx: RuleContext) -> List[Finding]:
    out: List[Finding] = []
    for copy in facts.cudnn:
        if (copy.major or 0) < 8:
            continue
        missing = missing_sublibraries(compat_of(ctx), copy)
        if not missing:
            continue
        main = "libcudnn.so.%s" % copy.major
        if not os.path.basename(copy.path).startswith(main):
            # stray sub-libraries of a release, without its shim (a new user's trial, draw 20261201-10): completing
            # the folder, as for a damaged install, would make a second copy where CD709 says to drop this one
            on_path = ld_entry_for(facts, copy.path) is not None
            out.append(finding(
                WARNING, "%s holds %s of cuDNN %s without %s" % (
                    copy.directory, ", ".join(sorted({f.name for f in copy.files}) or [os.path.basename(copy.path)]),
                    copy.version or copy.major, main),
                detail="They are no install: no program loads them by themselves, but %s hands them to any cuDNN "
                       "shim of that major whose own folder comes later, which then runs parts of two releases "
                       "(CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH, or an abort)." % (
                           "LD_LIBRARY_PATH" if on_path else "a search path that lists this folder"),
                remedy=stray_sublibraries_fix(facts, copy, on_path),
                evidence={"directory": copy.directory, "missing": missing}, catalogue=["D2"]))
            continue
        out.append(finding(
            ERROR if is_used(facts, copy) else WARNING,
            "cuDNN %s at %s lacks %d of its sub-libraries" % (copy.version or copy.major, copy.directory, len(missing)),
            detail="Since cuDNN 8 libcudnn.so is a shim that loads its sub-libraries at first use; a missing one "
                   "fails with 'Could not load library %s' / 'Unable to load any of {%s...}' and often aborts the "
                   "process." % (missing[0], missing[0]),
            remedy=_in_its_site(facts, ctx, copy, reinstall_fix(compat_of(ctx), copy, facts)),
            evidence={"directory": copy.directory, "missing": missing}, catalogue=["D2"]))
    return out


def _in_its_site(facts: Facts, ctx: RuleContext, copy: CudnnCopy, fix: Fix) -> Fix:
    """A cuDNN wheel in a site whose frameworks share it: the reinstall is the one CD709 gives the framework that
    loads it (at a release its pin admits), through the whole environment's fix, so it installs the release they
    all accept (draw 20261203-17: TensorFlow's CD503 installed 9.3.0.75 and this reinstall 9.1.0.70 in one pip line,
    which pip cannot resolve; draw 20261206-1: CD709 reinstalled TensorFlow's pin 9.3.0.75, this 9.5.1.17)."""
    lib = os.path.normpath(copy.directory)
    fw = next((f for f in facts.python.frameworks if own_cudnn_wheel_dir(f) == lib), None)
    if fw is None:
        return fix
    return whole_environment_fix(facts, compat_of(ctx), fw,
                                 cudnn_package_reinstall_fix(facts, compat_of(ctx), copy, copy.directory, fw))


@rule("CD403", "cudnn-mixed-versions", "cuDNN files of different versions mixed in one copy", section="cudnn")
def mixed(facts: Facts, ctx: RuleContext) -> List[Finding]:
    out: List[Finding] = []
    for copy in facts.cudnn:
        by_version: Dict[str, List[str]] = {}
        for f in copy.files:
            v = f.file_version or ""
            if v.count(".") >= 2 and not f.dangling:
                by_version.setdefault(str(release3(v)), []).append(f.name)
        if len(by_version) > 1:
            newest = max(by_version, key=release3_of)
            # After the reinstall (`cp -P`) the sonames (libcudnn_ops.so, .so.9) are the new release's links again:
            # only the full-version files of the other releases (libcudnn_ops.so.9.0.0) are left over to delete.
            current = set(by_version[newest])
            stale = sorted(n for v, names in by_version.items() if v != newest for n in names
                           if re.search(r"\.so\.\d+\.\d+", n) and n not in current)
            fix = mixed_releases_fix(facts, compat_of(ctx), copy, stale)
            out.append(finding(
                ERROR if is_used(facts, copy) else WARNING,
                "cuDNN files of versions %s are mixed in %s" % (", ".join(sorted(by_version, key=release3_of)),
                                                                copy.directory),
                detail="A partial upgrade or two installs copied over each other: the main library and its "
                       "sub-libraries must be one release, or loading fails with 'undefined symbol ... version "
                       "libcudnn_...' or CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH.",
                remedy=fix,
                evidence={"directory": copy.directory, "versions": by_version}, catalogue=["D3"]))
    return out


@rule("CD404", "cudnn-not-a-symlink", "cuDNN soname is a copied file, not a link", platforms=LINUX, section="cudnn")
def not_symlink(facts: Facts, ctx: RuleContext) -> List[Finding]:
    out: List[Finding] = []
    for copy in facts.cudnn:
        if copy.origin == "pip" or is_pip_dir(copy.directory):
            continue  # wheels ship plain .so.N files by design
        links = []
        names = []
        for f in copy.files:
            if f.is_link or f.dangling or not _SHORT_SONAME.match(f.name):
                continue
            full = sorted((g.name for g in copy.files if g.name.startswith(f.name + ".") and not g.is_link),
                          key=lambda n: len(n))
            if not full:
                continue
            names.append(f.name)
            links.append((full[-1], f.name))
        if not names:
            continue
        wsl = copy.directory.startswith("/usr/lib/wsl")
        out.append(finding(
            INFO if wsl else WARNING,
            "%s in %s %s regular file%s, not the symbolic link%s ldconfig expects" % (
                ", ".join(names), copy.directory, "is a" if len(names) == 1 else "are",
                "" if len(names) == 1 else "s", "" if len(names) == 1 else "s"),
            detail="The files were copied without `cp -P`; every ldconfig run prints '... is not a symbolic link' "
                   "and a later upgrade can leave an old copy answering to the soname." +
                   (" Under /usr/lib/wsl this is how WSL ships the driver and is harmless." if wsl else ""),
            remedy=relink_fix(copy.directory, links),
            evidence={"directory": copy.directory, "files": names}, catalogue=["D4", "H5"] if wsl else ["D4"]))
    return out


@rule("CD405", "cudnn-permission-denied", "cuDNN files not readable by other users", platforms=LINUX, section="cudnn")
def permissions(facts: Facts, ctx: RuleContext) -> List[Finding]:
    out: List[Finding] = []
    for copy in facts.cudnn:
        bad = [f for f in copy.files if f.readable is False]
        if not bad or _private_copy(facts, copy, bad):
            continue
        # The probe names what blocks each file: the file lacking o+r, or the outermost folder lacking o+x.
        files: Set[str] = set()
        folders: Set[str] = set()
        unknown: Set[str] = set()
        for f in bad:
            target = f.realpath or f.path
            blocker = f.read_blocker
            if blocker is None:
                # Facts without the probe's answer: the file's own mode still tells whether it lacks o+r.
                (unknown if f.mode and int(f.mode, 8) & 0o004 else files).add(target)
            elif os.path.normpath(blocker) == os.path.normpath(target):
                files.add(target)
            else:
                folders.add(blocker)
        out.append(finding(
            ERROR if is_used(facts, copy) else WARNING,
            "%d cuDNN file(s) in %s are not readable by other users" % (len(bad), copy.directory),
            detail="Programs not run as root fail with 'libcudnn...: cannot open shared object file: Permission "
                   "denied' (it works under sudo only).%s" % (
                       " Blocked by: %s." % ", ".join(sorted(files | folders)) if files or folders else ""),
            remedy=readable_fix(files, folders, unknown),  # unknown: readable files behind a folder not named
            evidence={"files": {f.name: f.mode for f in bad},
                      "blocked_by": {f.name: f.read_blocker for f in bad}}, catalogue=["D5"]))
    return out


def _private_copy(facts: Facts, copy: CudnnCopy, bad: List[LibFile]) -> bool:
    """Whether every blocker keeps the copy to its owner by design, so that no one it is meant for is refused: a path
    in the running user's home (Ubuntu makes homes 0750: a tarball unpacked there is theirs), or a folder at or above
    the Python or conda environment that holds the copy (other users cannot start that environment's Python either).
    Fix draws 301201-1, -11 and 301301-14 were healed, but this warning of an error kept `fix` at exit 1."""
    prefix = owning_environment(facts, copy.directory)
    home = facts.host.home if facts.host.home and os.path.normpath(facts.host.home) != "/" else None

    def owners_alone(blocker: str) -> bool:
        return bool(prefix and _at_or_above(blocker, prefix)) or bool(home and _at_or_above(home, blocker))
    return all(f.read_blocker is not None and owners_alone(f.read_blocker) for f in bad)


def _at_or_above(folder: str, path: str) -> bool:
    return (os.path.normpath(path) + "/").startswith(os.path.normpath(folder).rstrip("/") + "/")


@rule("CD406", "cudnn-file-corrupt", "cuDNN file empty, truncated or of the wrong architecture", platforms=LINUX,
      section="cudnn")
def corrupt(facts: Facts, ctx: RuleContext) -> List[Finding]:
    out: List[Finding] = []
    for copy in facts.cudnn:
        bad = [f for f in copy.files if f.elf and f.elf != "ok" and not f.dangling]
        if not bad:
            continue
        arch = [f for f in bad if f.elf in ("elfclass32", "wrong-machine")]
        out.append(finding(
            ERROR if is_used(facts, copy) or not arch else WARNING,
            "cuDNN file(s) in %s are unusable: %s" % (copy.directory, ", ".join(
                "%s (%s)" % (f.name, f.elf) for f in bad)),
            detail=("Files of another architecture are skipped by the loader ('wrong ELF class: ELFCLASS32')."
                    if arch and len(arch) == len(bad) else
                    "An interrupted download or extraction, a full disk or a placeholder left the file empty or "
                    "short; loading it fails with 'file too short' or 'cannot read file data'."),
            remedy=corrupt_files_fix(facts, compat_of(ctx), copy),
            evidence={"files": {f.name: f.elf for f in bad}}, catalogue=["D6", "F4"] if arch else ["D6"]))
    return out


@rule("CD407", "cudnn-header-mismatch", "cuDNN header and library versions differ", section="cudnn")
def header(facts: Facts, ctx: RuleContext) -> List[Finding]:
    out: List[Finding] = []
    for copy in facts.cudnn:
        if not copy.header_version or not copy.version:
            continue
        if release3(copy.header_version) == release3(copy.version):
            continue
        fix = header_fix(compat_of(ctx), facts, copy)
        out.append(finding(
            WARNING, "The cuDNN header %s says %s but the library at %s is %s" % (
                copy.header_path, copy.header_version, copy.directory, copy.version),
            detail="Software built against this header expects another cuDNN than the one that loads (Theano: "
                   "'Mixed dnn version'; CMake: 'Found cuDNN: v?'); cuDNN 8+ keeps the version in cudnn_version.h.",
            remedy=fix, evidence={"header": copy.header_path, "header_version": copy.header_version,
                               "library_version": copy.version}, catalogue=["D7"]))
    return out


@rule("CD408", "cudnn-dangling-link", "cuDNN symbolic link points nowhere", platforms=LINUX, section="cudnn")
def dangling(facts: Facts, ctx: RuleContext) -> List[Finding]:
    out: List[Finding] = []
    for copy in facts.cudnn:
        for f in copy.files:
            if not f.dangling:
                continue
            stem = f.name.split(".so")[0] + ".so"
            targets = sorted((g.name for g in copy.files if g.name.startswith(stem + ".") and not g.dangling
                              and not g.is_link), key=len)
            main = bool(_SHORT_SONAME.match(f.name))
            out.append(finding(
                ERROR if main else WARNING,
                "%s points to %s, which does not exist" % (f.path, f.link_chain[-1] if f.link_chain else "?"),
                detail="Loading by this name fails with 'cannot open shared object file: No such file or directory'"
                       + ("." if main else " (this unversioned link is used only when linking)."),
                remedy=relink_fix(copy.directory, [(targets[-1], f.name)]) if targets else
                    reinstall_fix(compat_of(ctx), copy, facts),
                evidence={"link": f.path, "chain": f.link_chain}, catalogue=["D4"]))
    return out


@rule("CD409", "cudnn-load-error", "cuDNN library failed to load", section="cudnn")
def load_error(facts: Facts, ctx: RuleContext) -> List[Finding]:
    out: List[Finding] = []
    for copy in facts.cudnn:
        if not copy.load_error:
            continue
        explained = any(f.readable is False or (f.elf and f.elf != "ok") or f.dangling for f in copy.files) or \
            missing_sublibraries(compat_of(ctx), copy)
        if explained:
            continue  # CD402/CD405/CD406/CD408 say why, with the fix
        out.append(finding(
            ERROR if is_used(facts, copy) else WARNING,
            "cuDNN at %s could not be loaded: %s" % (copy.path, copy.load_error),
            detail="A program that loads this copy will fail the same way.",
            remedy=unloadable_copy_fix(facts, compat_of(ctx), copy),
            evidence={"path": copy.path, "error": copy.load_error}, catalogue=["D1", "D6"]))
    return out
