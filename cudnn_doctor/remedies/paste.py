"""Fixes read from a pasted error text alone (explain): the library or release it names, the loader failure, the
framework check it failed. Each builder takes the decoded values and the platform the text came from; the same
paste gets the same fix on any machine."""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from packaging.version import Version

from ..knowledge import Compat, Shipped
from ..model import WINDOWS_SHELL, Fix
from ..versions import major_of, mm_text, ver
from .shell import advice, or_else, q, run, said, say, stated
from .shells import command_fix
from .software import TOOLKIT_ARCHIVE, driver_upgrade_fix

CUDNN_ARCHIVE = "https://developer.nvidia.com/rdp/cudnn-archive"


def _released(text: Optional[str]) -> Version:
    """A release as a Version; one that does not parse sorts first."""
    return ver(text) or Version("0")


def cudnn_choice(compat: Compat, major: int, at_least: Optional[str] = None,
                 same_minor: bool = False, cuda_major: Optional[int] = None) -> Optional[Tuple[str, List[str]]]:
    """The one place explain picks a cuDNN release: the newest of `major` not older than `at_least` (of its very
    major.minor with `same_minor`; built for `cuda_major` where given), with the CUDA releases NVIDIA built it for;
    None when the knowledge has none."""
    floor = _released(at_least) if at_least else None
    fits = [r for r in compat.cudnn_releases(major) if (floor is None or _released(r) >= floor)
            and (not same_minor or mm_text(r) == mm_text(at_least))
            and (cuda_major is None or any(major_of(c) == cuda_major for b in compat.cudnn_builds(r) for c in b.cuda))]
    if not fits:
        return None
    release = max(fits, key=_released)
    cudas = sorted({c for b in compat.cudnn_builds(release) for c in b.cuda}, key=_released)
    return release, cudas


def _pip(line: str, note: str, shell: str = "") -> Fix:
    return run(line, text="%s   (%s)" % (line, note), shell=shell)


def cudnn_release_fix(compat: Compat, major: int, at_least: Optional[str] = None, same_minor: bool = False,
                      cuda: Optional[str] = None) -> Fix:
    """Install a cuDNN `major` (not older than `at_least`; its same minor with `same_minor`) for `cuda` when
    known: the pip wheel where NVIDIA publishes one, else the archive download."""
    # the newest built for the paste's CUDA (cuDNN 9.28 has no CUDA 12 build, 9.20 has), else the newest at all
    choice = (cudnn_choice(compat, major, at_least, same_minor, major_of(cuda)) if cuda else None) or \
        cudnn_choice(compat, major, at_least, same_minor)
    if choice is None:
        return advice("install a cuDNN %d release%s from %s" % (major, (" not older than %s" % at_least)
                                                                  if at_least else "", CUDNN_ARCHIVE))
    release, cudas = choice
    majors = [m for m in dict.fromkeys(major_of(c) for c in cudas) if m is not None and m >= 11]
    want = major_of(cuda) if cuda else (majors[-1] if majors else None)
    wheel = compat.cudnn_wheel(want) if want in majors else None
    if wheel and not same_minor:
        spec = ">=%s,<%d" % (at_least, major + 1) if at_least else "==%d.*" % major
        return _pip('pip install "%s%s"' % (wheel, spec), "cuDNN %s is the newest %d.x NVIDIA built for CUDA %s"
                    % (release, major, ", ".join(c for c in cudas if major_of(c) == want)))
    return advice("install cuDNN %s (NVIDIA built it for CUDA %s) from %s, into the CUDA folder the program uses"
                  % (release, ", ".join(cudas), CUDNN_ARCHIVE))


def cudnn_for_builds_fix(compat: Compat, major: int, program: str, newest: Dict[str, str]) -> Fix:
    """A missing cuDNN of a program whose builds come for several CUDA majors ({CUDA major: its newest release}) and
    the paste says which of them is not: the wheel for the two newest majors, the installed build deciding."""
    (one, release_one), (other, release_other) = sorted(newest.items(), key=lambda kv: int(kv[0]))[-2:]
    return or_else(say("for a %s build for CUDA %s (such as %s): %%s" % (program, one, release_one),
                       cudnn_release_fix(compat, major, cuda=one)),
                   say("for one built for CUDA %s (such as %s): %%s; the installed build's CUDA decides" % (
                       other, release_other), cudnn_release_fix(compat, major, cuda=other)))


def cudnn_for_either_cuda_fix(compat: Compat, major: int) -> Fix:
    """A missing cuDNN `major` of a program whose CUDA nothing says: the wheel for each CUDA major NVIDIA builds that
    cuDNN for (as a pip wheel), the program's CUDA deciding (never a guess of one)."""
    cudas = sorted({m for r in compat.cudnn_releases(major) for b in compat.cudnn_builds(r)
                    for m in (major_of(c) for c in b.cuda) if m is not None})
    wheels = [c for c in cudas if compat.cudnn_wheel(c) and cudnn_choice(compat, major, cuda_major=c)]
    if len(wheels) < 2:
        return cudnn_release_fix(compat, major)
    fix = say("for a program built for CUDA %d: %%s" % wheels[0], cudnn_release_fix(compat, major, cuda=str(wheels[0])))
    for cuda in wheels[1:]:
        fix = or_else(fix, say("for one built for CUDA %d: %%s" % cuda, cudnn_release_fix(compat, major,
                                                                                      cuda=str(cuda))), "%s; %s")
    return say("%s; the program's CUDA decides", fix)


def toolkit_library_fix(compat: Compat, shipped: Shipped, stem: str) -> Fix:
    """A missing CUDA library: the wheel (CUDA 11 on) or the toolkit release that ships it. A DLL's is said for
    Windows, where the toolkit's installer puts its bin folder on PATH (no LD_LIBRARY_PATH, no ldconfig there)."""
    cuda_major = major_of(shipped.high) or 0
    project = compat.pip_project(stem, cuda_major) if cuda_major else None
    windows = shipped.name.lower().endswith(".dll")
    folder = "bin folder on PATH (its installer puts it there)" if windows else "lib64 on LD_LIBRARY_PATH"
    if project is not None and shipped.low != shipped.high:  # one release only: its toolkit, below
        pin = '"%s==%s.*"' % (project, cuda_major) if project.endswith("cu%d" % cuda_major) else project
        return say("install the CUDA %s library it was built for: %s, or a %s toolkit with its %s; or install the "
                   "program's build for the CUDA you have", cuda_major,
                   _pip("pip install %s" % pin, "ships %s" % shipped.name, WINDOWS_SHELL if windows else "sh"),
                   shipped.label, folder)
    rebuild = ("or reinstall the program's build for the CUDA you have (the package's pip variant for it, or rebuild "
               "it from source against that CUDA; %s is %s only)" % (shipped.name, shipped.label))
    if windows:
        return advice("install the %s toolkit (%s; its installer puts its bin folder, which holds %s, on PATH: open "
                      "a new shell after it); %s" % (shipped.label, TOOLKIT_ARCHIVE, shipped.name, rebuild))
    return run("sudo ldconfig", text="install the %s toolkit (%s) and put its lib64 folder on LD_LIBRARY_PATH (or "
               "in /etc/ld.so.conf.d, then `sudo ldconfig`); %s" % (shipped.label, TOOLKIT_ARCHIVE, rebuild))


def toolkit_release_fix(compat: Compat, release: str, platform: str) -> Fix:
    """A program built for CUDA `release` needs that CUDA major's runtime (and a driver that runs it)."""
    major = major_of(release) or 0
    project = compat.pip_project("libcudart", major) if major else None
    floor = compat.min_driver(release, platform) if release.count(".") else None
    driver = (", with a driver %s or newer" % floor.version) if floor is not None else ""
    if project is None:
        return advice("install the CUDA %s toolkit (%s)%s" % (release, TOOLKIT_ARCHIVE, driver))
    line = 'pip install "%s==%s.*"' % (project, major) if project.endswith("cu%d" % major) else "pip install %s" % project
    return _pip(line, "the CUDA %s runtime%s; or the CUDA %s toolkit" % (major, driver, release))


def shadowed_library_fix(node: str, newer_than: Optional[str], platform: str) -> Fix:
    """An older copy of `node` shadows the one the caller needs: find it on the search path, drop it."""
    want = (" %s or newer" % newer_than) if newer_than else " matching"
    if platform == "windows":
        return command_fix(["Get-Command %s -All" % node], shell=WINDOWS_SHELL,
                           text="find every %s Windows can load (`Get-Command %s -All`) and take the older one's "
                                "folder off PATH, so the%s copy is found first" % (node, node, want))
    return run("echo $LD_LIBRARY_PATH", "ldconfig -p | grep %s" % q(node.split(".so")[0]),
               text="an older %s is found first: take its folder out of LD_LIBRARY_PATH (`echo $LD_LIBRARY_PATH`; "
                    "often /usr/local/cuda/lib64) or remove it from ld.so.conf (`ldconfig -p | grep %s`), so the"
                    "%s copy beside the caller (pip's nvidia/*/lib) is loaded" % (node, node.split(".so")[0], want))


def or_newest_release_fix(shadowed: Fix, cudnn_major: int, newest: str) -> Fix:
    """An older cuDNN copy found first, or, where it is the only copy, too old a release: its major's newest."""
    return say("%s; where it is the only copy, it is too old a release: install cuDNN %d's newest, %s (%s)", shadowed,
               cudnn_major, newest, CUDNN_ARCHIVE)


def unknown_symbol_fix(symbol: str) -> Fix:
    """An undefined symbol no table dates: which library loads for it, then the release the caller was built with."""
    return said("see which copy of each library loads (`%%s`, then look for %s in the one that should define it) and "
                "put the release the program was built with first, or reinstall the program built for what is "
                "installed" % symbol, "LD_DEBUG=libs python -c 'import your_module' 2>&1 | grep 'calling init'")


def libstdcxx_fix(node: str, platform: str) -> Fix:
    """The system libstdc++ is older than a library needs (GLIBCXX_x)."""
    return run("conda install -c conda-forge 'libstdcxx-ng>=12'",
               text="the libstdc++.so.6 that loads lacks %s: in a conda environment `conda install -c conda-forge "
                    "'libstdcxx-ng>=12'` and put $CONDA_PREFIX/lib first on LD_LIBRARY_PATH; outside conda, upgrade "
                    "the system's libstdc++6 (a newer GCC runtime)" % node)


def wrong_class_fix(library: str) -> Fix:
    """A 32-bit (or other-architecture) copy comes first on the path."""
    look = "file -L $(ldconfig -p | grep %s | awk '{print $NF}')" % q(library.split(".so")[0])
    return run(look, text="a 32-bit or foreign-architecture %s comes first: look at each copy (`%s`) and take the "
               "wrong one's folder off LD_LIBRARY_PATH" % (library, look))


def harmless() -> Fix:
    """A log line that is not an error."""
    return stated("nothing to fix: the line is harmless; look for the first real error above or below it")


def driver_fix(floor: Optional[str], platform: str) -> Fix:
    """Install or upgrade the NVIDIA driver (to `floor` when the text says which CUDA it must run)."""
    return driver_upgrade_fix(floor or "the newest release for this GPU", platform)


def windows_missing_dll_fix(dll: str, installer: str = "") -> Fix:
    """A DLL (or one of its imports) is nowhere on the DLL search path. ``installer``: the folder NVIDIA's cuDNN 9
    installer puts a cuDNN DLL in (one per CUDA release, below the bin folder it puts on PATH: faster-whisper#1230;
    cuDNN 8 for Windows came as a zip)."""
    look = "Get-Command %s -All" % (dll or "cudnn64_*.dll")
    return command_fix([look], shell=WINDOWS_SHELL,
                       text="put the folder that holds %s on PATH (`%s` shows what Windows finds; pip's wheels keep "
                            "it in site-packages\\nvidia\\<library>\\bin%s); Python 3.8+ also needs "
                            "os.add_dll_directory(<that folder>) before the import" % (
                                dll or "the DLL", look, ("; NVIDIA's cuDNN installer in %s, the CUDA release's own "
                                                         "folder, not the bin folder above it" % installer)
                                if installer and dll.lower().startswith("cudnn") and dll.lower().endswith("64_9.dll") else ""))


def on_windows_path(install: Fix, dll: str, installer: str = "") -> Fix:
    """An install on Windows, then the DLL's folder where Windows and Python look for it."""
    return say("%s; then %s", install, windows_missing_dll_fix(dll, installer))


def shadow_or_install(shadow: Fix, install: Fix) -> Fix:
    """Take the shadowing copy away, or else install the release the program wants."""
    return say("%s; or %s", shadow, install)


def cudnn_for_cuda_fix(compat: Compat, cuda: str, platform: str) -> Fix:
    """The newest cuDNN NVIDIA built for CUDA `cuda`, from the archive (on PATH on Windows)."""
    builds = [r for r in compat.cudnn_releases() if any(cuda in b.cuda for b in compat.cudnn_builds(r))]
    if not builds:
        return advice("install the cuDNN built for CUDA %s from %s" % (cuda, CUDNN_ARCHIVE))
    release = max(builds, key=_released)
    where = "its bin folder on PATH" if platform == "windows" else "its lib64 folder on LD_LIBRARY_PATH"
    return advice("install cuDNN %s for CUDA %s (%s) with %s" % (release, cuda, CUDNN_ARCHIVE, where))


def find_library_fix(name: str) -> Fix:
    """A library no table dates: find the file and put its folder where the loader looks."""
    stem = name.split(".so")[0]
    return run("find / -name %s 2>/dev/null" % q(stem + ".so*"), "sudo ldconfig",
               text="find it (`find / -name %s 2>/dev/null`), then put its folder on LD_LIBRARY_PATH or in "
                    "/etc/ld.so.conf.d/%s.conf and run `sudo ldconfig`; if it is nowhere, install the package that "
                    "ships it" % (q(stem + ".so*"), stem.replace("lib", "", 1) or "extra"))


def conda_cudatoolkit_fix(name: str) -> Fix:
    """A CUDA library from the environment's own lib folder (a conda cudatoolkit package) mixed with another build:
    see which package put it there and the CUDA PyTorch was built for, then reinstall that cudatoolkit release whole
    (removing it would break a conda PyTorch, which depends on it)."""
    return said("see which package put %s in the environment's lib folder (`%s`) and the CUDA PyTorch was built for "
                "(`%s`), then have conda reinstall the one cudatoolkit release of that CUDA "
                "(cudatoolkit=11.3 for 11.3), so its libraries come from one build", name, "conda list cudatoolkit",
                "python -c 'import torch; print(torch.version.cuda)'")


def conda_or_shadow_fix(name: str, sibling: str) -> Fix:
    """The environment's cudatoolkit copy of `name` beside a `sibling` of another build: one cudatoolkit release
    whole, or, where the other copy comes first from LD_LIBRARY_PATH, that folder dropped."""
    return or_else(conda_cudatoolkit_fix(name), shadowed_library_fix(sibling, None, "linux"),
                   "%s; or, where the other copy comes first: %s")


def older_copy_fix(stem: str, newest: Optional[str]) -> Fix:
    """An older copy of an NVIDIA library is loaded: list the copies the loader and pip know, drop a wheel of the
    other CUDA major, and put the newest copy's folder first where the text names it."""
    look = ["ldconfig -p | grep %s" % q(stem + ".so"), "pip list 2>/dev/null | grep -i nvidia-"]
    first = ["export LD_LIBRARY_PATH=%s:$LD_LIBRARY_PATH" % q(newest)] if newest else []
    return run(*look, *first, text="see which copies there are (`%s`; pip's: `%s`); where wheels of two CUDA "
               "majors sit side by side, uninstall the duplicate for the CUDA the program is not built for "
               "(nvidia-*-cu11 beside -cu12); then make the newest copy the one found first%s, or reinstall the program so the copy it "
               "pins comes back" % (
                   look[0], look[1], (": `%s`" % first[0]) if first else " (its folder first on LD_LIBRARY_PATH)"))


def jetson_image_files_fix(name: str) -> Fix:
    """On Jetson the runtime mounts the host's L4T driver files its CSV lists; an image of another L4T release that
    carries them collides: the toolkit's current release, and an image of the host's L4T release."""
    return run("cat /etc/nv_tegra_release", "sudo apt-get install --only-upgrade nvidia-container-toolkit",
               text="on Jetson the runtime mounts the host's driver files (%s among them) that its CSV lists "
                    "(/etc/nvidia-container-runtime/host-files-for-container.d): see the host's L4T release (`cat "
                    "/etc/nv_tegra_release`), base the image on the l4t image of that release instead of copying the "
                    "files in, and upgrade the NVIDIA container toolkit (`sudo apt-get install --only-upgrade "
                    "nvidia-container-toolkit`)" % name)



def arm_image_files_fix(name: str, other_hosts: Fix) -> Fix:
    """A driver file in an image on an aarch64 host: Jetson's L4T collision first, else (Grace and other Arm servers)
    the driver installed into the image (`other_hosts`)."""
    return or_else(jetson_image_files_fix(name), other_hosts, "%s; on other Arm hosts: %s")


def libcuda_link_fix(platform: str) -> Fix:
    """The unversioned libcuda.so is missing next to the driver's libcuda.so.1 (WSL, minimal driver installs)."""
    if platform == "windows":
        return advice("reinstall the NVIDIA driver for Windows (it provides nvcuda.dll) and restart")
    folder = "$(dirname $(ldconfig -p | grep -m1 'libcuda.so.1 ' | awk '{print $NF}'))"
    return run("cd %s" % folder, "sudo ln -sf libcuda.so.1 libcuda.so", "sudo ldconfig",
               text="make the link next to the driver's libcuda.so.1: `cd %s && sudo ln -sf libcuda.so.1 libcuda.so "
                    "&& sudo ldconfig` (on WSL the folder is /usr/lib/wsl/lib: add it to /etc/ld.so.conf.d)" % folder)


def or_libcuda_link_fix(sublibrary_fix: Fix, platform: str) -> Fix:
    """A sub-library that would not load, with the other way its load fails: the unversioned libcuda.so it opens is
    missing (WSL keeps it only in /usr/lib/wsl/lib)."""
    return or_else(sublibrary_fix, libcuda_link_fix(platform), "%s; if its error names libcuda.so: %s")
