"""Installing, reinstalling and repairing cuDNN: the channel the copy came from, or `cudnn-doctor install` with
the manual way after it."""
from __future__ import annotations

import os
from typing import Any, Optional

from ..knowledge import Compat
from ..versions import cuda_label, major_of, mm_text, release3
from ..model import WINDOWS_SHELL, CudnnCopy, Facts, Fix
from ..queries import (cudnn_build_exists, cudnn_release_for, cudnn_runs_on_cc, lowest_cc, machine_cuda, platform_of,
                       primary_toolkit, toolkit_owning)
from .acting import at, doctor, ldconfig, sudo, system, under_root
from .shell import advice, folder_arg, or_else, q, run, said
from .shells import command_fix


def cudnn_wheel_for(compat: Compat, *cudas: Any) -> Optional[str]:
    """The nvidia-cudnn-cuN wheel for the first of `cudas` (most specific first) that NVIDIA builds wheels for."""
    for cuda in cudas:
        if cuda in (None, ""):
            continue
        name = compat.cudnn_wheel(major_of(cuda_label(cuda)))
        if name:
            return name
    return None


def copy_wheel(compat: Compat, copy: CudnnCopy, *fallback_cudas: Any) -> Optional[str]:
    """The pip project a cuDNN copy came from, else the wheel for the CUDA it (or the machine) was built for."""
    wheel = copy.pip_wheel()
    if wheel and wheel[0].startswith("nvidia-cudnn"):
        return wheel[0]
    return cudnn_wheel_for(compat, copy.cuda_version, *fallback_cudas)


def _major_has_wheel(compat: Compat, cuda: str, major: Optional[int], platform: str, machine: Optional[str]) -> bool:
    """Whether some release of cuDNN `major` for `cuda` has a wheel for this platform (or the knowledge cannot tell)."""
    return any(compat.cudnn_build_exists_on(r, cuda, platform, machine).exists is not False
               for r in reversed(compat.cudnn_releases(major)))  # newest first: most have one


def cudnn_install_fix(compat: Compat, cuda: Any, cudnn_major: Optional[int] = None, version: Optional[str] = None,
                      origin: str = "system", platform: str = "linux", machine: Optional[str] = "x86_64",
                      min_cc: Optional[str] = None) -> Fix:
    """The command that installs a cuDNN for a CUDA release (or major), in the channel the user already uses.
    Without `cudnn_major`, the newest cuDNN major compat has a build of for that CUDA. A `version` NVIDIA never
    built for this CUDA is replaced by the newest release that has a build (of its major when one exists); with
    `min_cc`, only releases that still support that GPU are named."""
    cuda_text = mm_text(cuda) or (cuda_label(cuda) if cuda not in (None, "") else None)
    cm = major_of(cuda_text) if cuda_text else None
    if cuda_text is None or cm is None:
        return said("install the NVIDIA driver first (cuDNN is built per CUDA release), then run `%s` again: it "
                    "names the cuDNN build for the CUDA the driver runs", doctor("check"))
    family = compat.has_minor_compat(cm)
    key = cuda_text if not family else str(cm)
    # Whether NVIDIA's wheel of that release is on PyPI for this platform (9.18.0 has no Windows wheel, cuDNN 8 no
    # aarch64 one); None: the knowledge cannot tell, and the release stands.
    no_wheel = bool(version) and compat.cudnn_build_exists_on(str(version), key, platform, machine).exists is False
    wheel_only = family and (origin == "pip" or platform == "windows")  # the fix is the wheel line
    if version and (cudnn_build_exists(compat, version, key) is False
                    or not cudnn_runs_on_cc(compat, version, key, min_cc, strict=False) or (no_wheel and wheel_only)):
        # No such build (cuDNN 7.6.5 for CUDA 11.8, 9.1.0 for CUDA 13), none for this GPU, or (where the fix is the
        # wheel) no wheel of it for this platform: name one that exists.
        if cudnn_major is None:
            cudnn_major = major_of(version)
        version = None
        if cudnn_release_for(compat, key, cudnn_major, min_cc) is None or (
                wheel_only and not _major_has_wheel(compat, key, cudnn_major, platform, machine)):
            cudnn_major = None  # cuDNN 8 has no aarch64 wheel: the newest major's
    if cudnn_major is not None and version is None and cudnn_release_for(compat, key, cudnn_major, min_cc) is None \
            and min_cc and cudnn_release_for(compat, key, None, min_cc) is not None:
        cudnn_major = None  # this major has no build for the GPU: offer the one that does
    if cudnn_major is None:
        cudnn_major = major_of(version or cudnn_release_for(compat, key, None, min_cc))
        if cudnn_major is None:
            if min_cc and compat.newest_cudnn_build(key):
                return said("compat knows no cuDNN build for CUDA %s that supports compute capability %s: install "
                            "a CUDA release that still supports this GPU (`%%s` lists the cuDNN builds of each CUDA "
                            "release)" % (cuda_text, min_cc), doctor("matrix"))
            return said("compat knows no cuDNN build for CUDA %s: install a CUDA release that cuDNN supports "
                        "(`%%s` lists the cuDNN builds of each CUDA release)" % cuda_text, doctor("matrix"))
    release = version or cudnn_release_for(compat, key, cudnn_major, min_cc)
    archive = compat.cudnn_archive_name(release, cuda_text if not family else str(cm), platform,
                                        machine or "x86_64") if release else None
    archive_text = archive or "the cuDNN %s build for CUDA %s" % (release or cudnn_major, cuda_text)
    wheel = compat.cudnn_wheel(cm)
    if wheel and not _major_has_wheel(compat, key, cudnn_major, platform, machine):
        wheel = None  # none of this major for this platform (nvidia-cudnn-cu11 has no aarch64 wheel at all)
    # Always pin: an unpinned nvidia-cudnn-cuNN installs the newest major, whatever major was asked for. Where the
    # newest release of the major no longer runs on the GPU, pin the release chosen for it.
    if version:
        pin = "==%s.*" % version
    elif min_cc and release and release != compat.newest_cudnn_build(key, cudnn_major):
        pin = "==%s.*" % release
    else:
        pin = "==%d.*" % cudnn_major
    windows_manual = "download %s from NVIDIA and copy its bin, include and lib folders into the CUDA %s folder" % (
        archive_text, cuda_text)
    if not family and platform == "windows":
        return advice(windows_manual)  # one build per CUDA minor: its archive only (no apt, no pip wheel)
    if not family:
        # One runtime per CUDA minor: NVIDIA's per-minor debs or archives only (and no pip wheels).
        deb_version = (version or release or str(cudnn_major)) + ".*"
        deb = "libcudnn%d=%s-1+cuda%s" % (cudnn_major, deb_version, cuda_text)
        manual = "download %s from NVIDIA's cuDNN archive and copy it with cp -P (links kept) into %s" % (
            archive_text, at("/usr/local/cuda-%s" % cuda_text))
        apt = system("apt install %s %s" % (deb, deb.replace("libcudnn%d=" % cudnn_major,
                                                             "libcudnn%d-dev=" % cudnn_major)))
        return run(apt, text="%s, or `%s`" % (manual, apt), manual=manual)
    if origin == "pip" and wheel:
        # pip's command line reads the same in every shell; on Windows it is typed into PowerShell, not sh.
        if platform == "windows":
            return run('pip install "%s%s"' % (wheel, pin), shell=WINDOWS_SHELL)
        return run(system('pip install "%s%s"' % (wheel, pin), privileged=False))
    if origin == "conda":
        return run(system('conda install -c conda-forge "cudnn%s"' % (("=" + version) if version else
                                                                      "=%d" % cudnn_major), privileged=False))
    if platform == "windows":
        if not wheel:
            return advice(windows_manual)
        pip = 'pip install "%s%s"' % (wheel, pin)
        return run(pip, text="%s, or `%s`" % (windows_manual, pip), manual=windows_manual, shell=WINDOWS_SHELL)
    apt_row = next((r for r in compat.cudnn_channels() if r.get("channel") == "apt-v%d" % cudnn_major), None)
    if apt_row and "<cuda_major>" in str(apt_row.get("install", "")):
        apt = system(str(apt_row["install"]).replace("<cuda_major>", str(cm)))
    else:
        apt = system("apt install libcudnn%d libcudnn%d-dev" % (cudnn_major, cudnn_major))
    pinned_missing = bool(version) and compat.cudnn_build_exists_on(str(version), key, platform, machine).exists is False
    wheel_line = system('pip install "%s%s"' % (wheel, pin), privileged=False) if wheel and not pinned_missing else ""
    archive_words = "the archive %s" % archive_text
    other = said("`%s`, or " + archive_words.replace("%", "%%"), wheel_line) if wheel_line else advice(archive_words)
    return or_else(run(apt, text=apt + " (NVIDIA's apt repository)"), other, "%s, or %s")


def machine_cudnn_fix(facts: Facts, compat: Compat, cuda: Any, cudnn_major: Optional[int] = None,
                      version: Optional[str] = None,
                      origin: str = "system") -> Fix:
    """cudnn_install_fix for this machine's platform and processor."""
    return cudnn_install_fix(compat, cuda, cudnn_major, version, origin, platform_of(facts),
                             facts.host.machine or "x86_64", lowest_cc(facts))


def reinstall_fix(compat: Compat, copy: CudnnCopy, facts: Optional[Facts] = None) -> Fix:
    """Reinstall the package a cuDNN copy came from, so its files are whole and of one version again."""
    pkg = copy.package or ""
    if copy.origin == "pip" or pkg.startswith("nvidia-cudnn"):
        name_ver = pkg.split()
        name = copy_wheel(compat, copy, *((machine_cuda(facts, compat),) if facts is not None else ()))
        if len(name_ver) == 2:
            spec = "%s==%s" % (name_ver[0], name_ver[1])
        elif name:
            spec = "%s==%s.*" % (name, copy.version) if copy.version else name
        else:
            return advice("reinstall, with --force-reinstall --no-deps, the nvidia-cudnn-cuN wheel that provides %s "
                          "(pip show -f names it)" % copy.directory)
        # A wheel in the user site is pip --user's: a plain install puts a second copy in the active environment
        # and leaves the damaged one first on the user's path (draw 291129-66).
        site = os.path.dirname(os.path.dirname(os.path.dirname(os.path.normpath(copy.directory))))
        user = "--user " if facts is not None and site in facts.python.user_sites and not under_root() else ""
        return run(system('pip install %s--force-reinstall --no-deps "%s"' % (user, spec), privileged=False))
    if pkg.startswith("deb "):
        return run(system("apt install --reinstall %s" % pkg.split()[1]))
    if copy.origin == "conda" or pkg.startswith("conda"):
        return run(system("conda install --force-reinstall cudnn", privileged=False))
    archive = None
    if copy.version and copy.cuda_version:
        archive = compat.cudnn_archive_name(copy.version, copy.cuda_version, platform_of(facts) if facts else "linux",
                                            (facts.host.machine if facts else None) or "x86_64")
    if archive and (facts is None or platform_of(facts) == "linux"):
        lib = archive[:-len(".tar.xz")] + "/lib" if archive.endswith(".tar.xz") else "cuda/lib64"
        untar = "tar -xf %s" % q(archive)
        copy_back = sudo("cp -P %s/libcudnn* %s" % (q(lib), q(folder_arg(at(copy.directory)))))
        fix = said("download %s from NVIDIA's cuDNN archive, `%%s` and copy its libraries back keeping the links: "
                   "%%s && %%s" % archive.replace("%", "%%"), untar, copy_back, ldconfig())
    else:
        copy_back = sudo("cp -P lib/libcudnn* %s" % q(folder_arg(at(copy.directory))))
        fix = said("re-extract the cuDNN %s archive you installed from and copy its libraries back keeping the "
                   "links (`%%s`, in the folder it extracts to), then `%%s`" % (copy.version or ""), copy_back,
                   ldconfig())
    return doctor_reinstall(facts, copy, fix, compat) if facts is not None else fix


# cudnn-doctor fetches releases through NVIDIA's redistrib_<version>.json manifests: every cuDNN 9 release and
# the cuDNN 8 releases compat/cudnn_redist.toml lists; the others keep the manual way only.
_DOCTOR_FETCHES_FROM = 9


def doctor_install(release: Optional[str], cuda: Any, cuda_home: str, compat: Optional[Compat] = None
                   ) -> Optional[str]:
    """`cudnn-doctor install` fetching `release` built for `cuda` into the toolkit at `cuda_home`, where it can."""
    major, cuda_major = major_of(release), major_of(cuda_label(cuda) if cuda not in (None, "") else None)
    fetches = compat.installer_fetches(release) if compat is not None else (major or 0) >= _DOCTOR_FETCHES_FROM
    if major is None or not fetches or cuda_major is None or release3(release) is None:
        return None
    if compat is not None and compat.cudnn_build_exists(str(release), cuda_major) is False:
        return None  # NVIDIA never built it for this CUDA (9.1.0 for CUDA 13): no command may name it
    return doctor("install --version %s --cuda %d --cuda-home %s" % (release3(release), cuda_major,
                                                                    q(at(cuda_home))), privileged=True)


def with_doctor(command: Optional[str], manual: Fix, lead: str = "") -> Fix:
    """The cudnn-doctor command that makes the repair, the manual way after it; `manual` alone without one."""
    if not command:
        return manual
    return or_else(command_fix([command], text=lead + command, doctor=command), manual, "%s   (or by hand: %s)")


def doctor_reinstall(facts: Facts, copy: CudnnCopy, manual: Fix, compat: Optional[Compat] = None) -> Fix:
    """Put the same cuDNN release back into the toolkit that holds this copy, through cudnn-doctor (cuDNN 8 too,
    where NVIDIA publishes the release's manifest)."""
    tk = toolkit_owning(facts, copy.directory)
    if tk is not None and tk.kind != "pip" and platform_of(facts) == "linux" and copy.major == 7 and compat:
        # The toolkit's real folder: /usr/local/cuda is a link whose absolute target means the root's own folder.
        command, lead = archive_reinstall(facts, copy, tk.realpath or tk.path, copy.cuda_version or tk.version,
                                          compat)
        return with_doctor(command, manual, lead)
    if tk is None or tk.kind == "pip" or platform_of(facts) != "linux" or not copy.cuda_version:
        return manual
    release = copy.version
    if compat is not None and not compat.installer_fetches(release) and copy.major is not None:
        # No manifest for this exact release (cuDNN 8.9.2, say): the newest fetchable one of its major that is not
        # older replaces the whole set, and programs built with the old one still run on it.
        release = compat.newest_fetchable(copy.major, copy.version) or release
    return with_doctor(doctor_install(release, copy.cuda_version, tk.path, compat), manual)


def archive_reinstall(facts: Facts, copy: CudnnCopy, cuda_home: str, cuda: Optional[str], compat: Compat
                      ) -> "tuple[Optional[str], str]":
    """(command, lead) that puts a cuDNN 7 release back through `cudnn-doctor install ARCHIVE`: NVIDIA published
    cuDNN 7 neither on PyPI (nvidia-cudnn holds placeholders only) nor with redist manifests, so the archive comes
    from NVIDIA's cuDNN archive by hand and the installer checks and places it; (None, "") without its name."""
    archive = compat.cudnn_archive_name(copy.version, cuda, "linux", facts.host.machine or "x86_64") \
        if copy.version and cuda else None
    if not archive:
        return None, ""
    # The name keeps the build number open (7.6.5.*): the shell finds the downloaded file, so it stays unquoted.
    return (doctor("install %s --cuda-home %s" % (archive, q(at(cuda_home))), privileged=True),
            "download %s from NVIDIA's cuDNN archive, then in its folder: " % archive)


def cudnn_into_toolkit(facts: Facts, compat: Compat, cuda: Any, manual: Fix) -> Fix:
    """The cudnn-doctor command that installs the newest fitting cuDNN into the toolkit programs use, the manual
    way after it (only `manual` where no toolkit takes it or cudnn-doctor cannot fetch the release)."""
    tk = primary_toolkit(facts)
    cm = major_of(cuda_label(cuda)) if cuda not in (None, "") else None
    if tk is None or tk.kind != "system" or platform_of(facts) != "linux" or cm is None \
            or not compat.has_minor_compat(cm):
        return manual
    release = cudnn_release_for(compat, str(cm), None, lowest_cc(facts))
    return with_doctor(doctor_install(release, cm, tk.path, compat), manual)


def header_fix(compat: Compat, facts: Facts, copy: CudnnCopy) -> Fix:
    """Make a cuDNN copy's header the library's release again, through the channel that installed it."""
    pkg = (copy.package or "").split()
    if pkg and pkg[0] == "deb":
        dev = pkg[1].replace("libcudnn9-", "libcudnn9-dev-").replace("libcudnn8", "libcudnn8-dev")
        # Without a recorded version, ask dpkg for the library package's own: the pair must match exactly.
        version = pkg[2] if len(pkg) > 2 else "\"$(dpkg-query -W -f='${Version}' %s)\"" % pkg[1]
        command = system("apt install %s=%s" % (dev, version))
        return run(command, text=command + "   (the dev package of the same version as the library)")
    if copy.origin in ("pip", "conda") or (pkg and pkg[0].startswith("nvidia-cudnn")):
        return reinstall_fix(compat, copy, facts)
    folder = folder_arg(os.path.dirname(copy.header_path or copy.directory))
    archive = compat.cudnn_archive_name(copy.version, copy.cuda_version, platform_of(facts),
                                        facts.host.machine or "x86_64") if copy.version and copy.cuda_version else None
    if archive and archive.endswith(".tar.xz"):
        untar = "tar -xf %s" % q(archive)
        put = sudo("cp %s/include/cudnn*.h %s" % (archive[:-len(".tar.xz")], q(at(folder))))
        manual = said("Replace %s with the header of the same cuDNN %s archive: download %s, `%%s` and %%s; or "
                      "delete the stale header" % (at(copy.header_path), copy.version, archive), untar, put)
    else:
        put = sudo("cp include/cudnn*.h %s" % q(at(folder)))
        manual = said("Replace %s with the header from the same cuDNN %s archive (`%%s`, in the folder it extracts "
                      "to), or delete the stale header" % (at(copy.header_path), copy.version), put)
    return doctor_reinstall(facts, copy, manual, compat)



def interrupted_install_fix(target: str, target_kind: str, needs_root: bool) -> Fix:
    """`cudnn-doctor rollback` for a toolkit or prefix holding an interrupted install: it undoes what the journal
    says was changed, removes the staging folder (and a prefix the install had created)."""
    flag = "--prefix" if target_kind == "prefix" else "--cuda-home"
    command = doctor("rollback %s %s" % (flag, q(at(target))), privileged=needs_root)
    return command_fix([command], text="%s   (it undoes the unfinished install and removes its staged files; "
                       "nothing else is rolled back)" % command, doctor=command)
