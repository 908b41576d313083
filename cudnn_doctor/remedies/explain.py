"""Fixes for what a pasted error text asks for: a library the loader did not find, a cuDNN release older than the
one a program was built with. `explain` picks one of these for the machine it diagnosed."""
from __future__ import annotations

import os
from typing import List, Optional

from packaging.version import Version

from ..knowledge import Compat
from ..model import CudnnCopy, Facts, Fix
from ..queries import (driver_place, framework_kind, machine_cuda, platform_of, primary_toolkit)
from ..versions import major_of, reaches, release3, soname_major, split_soname, ver
from .cudnn import cudnn_install_fix, machine_cudnn_fix, reinstall_fix, with_doctor
from .acting import at, doctor, ldconfig, pip, system
from .shell import advice, cudnn_dir_fix, ld_library_path_without, q, relink_fix, run, said, say
from .driver import missing_driver_fix
from .software import toolkit_install_fix


def _fits(copy: CudnnCopy, major: int, at_least: Optional[str]) -> bool:
    if copy.major != major:
        return False
    return at_least is None or reaches(copy.version, at_least)


def tensorflow_and_cuda(compat: Compat, facts: Facts) -> Optional[Fix]:
    """For an installed TensorFlow with NVIDIA's [and-cuda] wheels (Linux, per compat), the pinned reinstall that
    brings the cuDNN it was built with."""
    fw = next((f for f in facts.python.frameworks if framework_kind(f) == "tensorflow"), None)
    if fw is None or platform_of(facts) != "linux":
        return None
    version = fw.version.split("+")[0]
    since, release = compat.tensorflow_pip_wheels_from(), ver(version)
    if since is None or release is None or release < since:
        return None
    command = pip('install "tensorflow[and-cuda]==%s"' % version)
    return run(command, text='%s   (TensorFlow %s with the cuDNN and CUDA wheels it was built with)' % (command, version))


def _cuda_with_build(compat: Compat, major: int, at_least: Optional[str]) -> Optional[str]:
    """The newest CUDA (a family's major where minor versions are compatible) with a cuDNN `major` build not older
    than `at_least`."""
    for cuda in reversed(compat.cuda_releases()):
        cm = major_of(cuda)
        key = str(cm) if compat.has_minor_compat(cm) else cuda
        newest = compat.newest_cudnn_build(key, major)
        if newest and (at_least is None or reaches(newest, at_least)):
            return key
    return None


def _doctor_into_toolkit(compat: Compat, facts: Facts, release: Optional[str], cuda: str, manual: Fix) -> Fix:
    """`cudnn-doctor install` of `release` into the toolkit programs use, where NVIDIA publishes its manifest."""
    from .cudnn import doctor_install

    tk = primary_toolkit(facts)
    if tk is None or tk.kind != "system" or platform_of(facts) != "linux" or major_of(tk.version) != major_of(cuda) \
            or not compat.installer_fetches(release):
        return manual
    return with_doctor(doctor_install(release, cuda, tk.path, compat), manual)


def cudnn_for_program(compat: Compat, facts: Facts, major: int, at_least: Optional[str] = None) -> Fix:
    """Give a program the cuDNN `major` (not older than `at_least`) it was built for, on this machine."""
    here = machine_cuda(facts, compat)
    fitting = [c for c in facts.cudnn if _fits(c, major, at_least)]
    if fitting:
        copy = fitting[0]
        return say("cuDNN %s is already installed at %s, but not where the loader looks first: %s",
                   copy.version or major, copy.directory, cudnn_dir_fix(copy.directory))
    tf = tensorflow_and_cuda(compat, facts)
    if tf is not None:
        return tf
    key = str(major_of(here)) if here and compat.has_minor_compat(major_of(here)) else here
    release = compat.newest_cudnn_build(key, major) if key else None
    if here and release and (at_least is None or reaches(release, at_least)):
        manual = machine_cudnn_fix(facts, compat, here, major, at_least)
        # The release named must exist for this CUDA: the one the program was built with where NVIDIA made it
        # for this CUDA, else the newest of its major that was (the knowledge's validator picks).
        named = compat.cudnn_release_to_name(key, str(release3(at_least)), major) if at_least else release
        return _doctor_into_toolkit(compat, facts, named, here, manual)
    other = _cuda_with_build(compat, major, at_least)
    if other is None:
        # cuDNN 5, 6 (or a release newer than any build on record): no download fits any CUDA of today.
        known = next((c for c in facts.cudnn if c.version), None)
        wanted = "cuDNN %d%s" % (major, (" (%s or later)" % at_least) if at_least else "")
        if known is not None:
            return advice("%s has no build for a CUDA release this machine can run: rebuild the program against "
                          "the cuDNN %s at %s, or install a build of it made for cuDNN %s" % (
                              wanted, known.version, known.directory, known.major))
        return say("%s has no build for a CUDA release this machine can run: rebuild the program against a current "
                   "cuDNN; %s", wanted, machine_cudnn_fix(facts, compat, here))
    pip = cudnn_install_fix(compat, other, major, str(release3(at_least)) if at_least else None, origin="pip")
    if not here:
        return pip
    own = major_of(compat.newest_cudnn_build(key)) if key else None
    return say("This machine's CUDA %s has no cuDNN %d build (NVIDIA built cuDNN %d up to CUDA %s). In the failing "
               "program's Python environment: %s%s", here, major, major, other, pip,
               ("   (or install the program's build for cuDNN %d, which CUDA %s has)" % (own, here)) if own else "")


def library_fix(compat: Compat, facts: Facts, name: str) -> Fix:
    """The fix for a library the loader does not find, by what the library is."""
    stem, version = split_soname(name)
    major = soname_major(name)
    if stem.startswith("libcudnn"):
        if major is None:
            here = machine_cuda(facts, compat)
            return say("install cuDNN for CUDA %s: %s", here or "?", machine_cudnn_fix(facts, compat, here))
        same = [c for c in facts.cudnn if c.major == major]
        if same and stem != "libcudnn":
            return say("the cuDNN %s copy at %s lacks %s: %s", same[0].version or major, same[0].directory, name,
                       reinstall_fix(compat, same[0], facts))
        return cudnn_for_program(compat, facts, major)
    if stem == "libcuda":
        if not version and facts.driver.libcuda_path:
            # The driver is here; only the unversioned link cuDNN opens is missing (catalogue F3).
            folder = os.path.dirname(facts.driver.libcuda_path)
            return say("the driver's libcuda.so.1 is at %s, but the unversioned link libcuda.so is missing: %s",
                       facts.driver.libcuda_path, relink_fix(folder, [("libcuda.so.1", "libcuda.so")]))
        return missing_driver_fix(driver_place(facts))
    if is_toolkit_library(stem):
        cuda = cuda_for_soname(compat, facts, stem, version)
        if cuda:
            other = [t.version for t in facts.toolkits if t.version and not t.dangling and t.kind != "pip"]
            return say("install the CUDA %s runtime it was built for (%s)%s", cuda,
                       toolkit_install_fix(facts, compat, cuda),
                       (", or install the failing program's build for the installed CUDA %s" % ", ".join(other))
                       if other else "")
    find = "find %s -name %s 2>/dev/null" % (q(at("/")), q(name + "*"))
    conf = at("/etc/ld.so.conf.d/%s.conf" % (stem.replace("lib", "", 1) or "extra"))
    return said("find the file with `%s`, write the folder it prints into " + conf.replace("%", "%%") + " and run "
                "`%s`; or install the package that provides it", find, ldconfig())


def is_toolkit_library(stem: str) -> bool:
    """A library the CUDA toolkit ships (libcudart, libcublas, libnvrtc...), not the driver's or cuDNN's."""
    return (stem.startswith("libcu") or stem.startswith("libnv")) and stem not in ("libcuda", "libnvidia-ml") and \
        not stem.startswith("libcudnn") and not stem.startswith("libnvidia")


def cuda_for_soname(compat: Compat, facts: Facts, stem: str, version: str) -> Optional[str]:
    """The newest CUDA release whose toolkit ships this soname (compat/sonames.toml: libcufft.so.11 is CUDA 12's),
    preferring one this driver runs; None for a name the table does not date (libnvinfer.so.7 is TensorRT's, not
    CUDA 7's)."""
    from ..queries import driver_version

    shipped = compat.shipped_by("%s.so.%s" % (stem, version)) if version else None
    if shipped is None or shipped.product != "CUDA":
        return None
    low, high = ver(shipped.low), ver(shipped.high)
    if low is None or high is None:
        return None
    want = [c for c in compat.cuda_releases() if _within(ver(c), low, high)]
    runs = [c for c in want if compat.driver_runs_cuda(driver_version(facts) or "", c, platform_of(facts),
                                                         facts.driver.cuda_version)[0] is not False]
    found = runs or want
    return found[-1] if found else None


def _within(release: Optional[Version], low: Version, high: Version) -> bool:
    """A parsed release between the bounds; one that does not parse is no answer."""
    return release is not None and low <= release <= high


def cudnn_version_fix(compat: Compat, facts: Facts, runtime: Optional[str], compiled: Optional[str]) -> Fix:
    """A program built with cuDNN `compiled` loaded the older (or other-major) `runtime`: give it one that fits."""
    major = major_of(compiled)
    if major is None:
        return said("run `%s` in the failing program's own environment to see which cuDNN it loads", doctor("check"))
    # An older copy that LD_LIBRARY_PATH puts first (an HPC module, /usr/local/cuda/lib64) beats the program's own.
    entries = {os.path.normpath(e) for e in facts.loader.ld_library_path}
    older = [c.directory for c in facts.cudnn if c.major == major and os.path.normpath(c.directory) in entries
             and c.version and ver(c.version) is not None and not reaches(c.version, compiled)]
    fitting = [c for c in facts.cudnn if _fits(c, major, compiled)]
    if older and fitting:
        return say("LD_LIBRARY_PATH puts the older cuDNN in %s first: %s", ", ".join(older),
                   ld_library_path_without(facts, older))
    return cudnn_for_program(compat, facts, major, compiled)


def windows_dll_fix(name: str) -> Fix:
    """A DLL named in a Windows error: Windows finds it next to the program or on PATH."""
    return said("put the bin folder of the CUDA/cuDNN release that ships %s on PATH (`%%s` in cmd shows whether one "
                "is found)" % name, "where %s" % name)


def broken_file_fix(path: str) -> Fix:
    """A library the loader finds but cannot load: the package that owns it puts it back."""
    owner = system("dpkg -S %s" % q(path), privileged=False)
    return run(owner, text="replace the broken file %s (reinstall the package that owns it: `%s` names it)"
               % (at(path), owner))


def in_program_environment(nothing_found: bool = False) -> Fix:
    """Nothing here stands in the way: look where the failing program runs (``nothing_found``: this machine shows no
    cause at all, so say what only a run of the program itself can show)."""
    why = (" (same LD_LIBRARY_PATH): out-of-memory errors and crashes need the GPU at work to show"
           if nothing_found else "")
    return said("run `%s` in the failing program's own shell, venv or container" + why.replace("%", "%%"),
                doctor("check"))
