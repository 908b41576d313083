"""ONNX Runtime's CUDA provider finds CUDA and cuDNN only on the plain search path: the fix names what the installed
release really offers (its [cuda,cudnn] extras and preload_dlls() exist from one release on, compat says which)."""
from __future__ import annotations

import re
from typing import List, Mapping, Optional, Sequence, Tuple

from packaging.specifiers import SpecifierSet

from ..knowledge import Compat
from ..model import Fix
from ..versions import canonical_name
from .acting import pip
from .shell import ACTIVE_SITE, advice, noted, or_else, prepend_ld_path, run, said


def cuda_library_wheels(compat: Compat, sonames: Sequence[str], cuda_major: str) -> List[Tuple[str, str]]:
    """(wheel, site-packages folder) of each CUDA library named, cuDNN aside, for that CUDA major (compat
    [cuda_wheels]; libcublasLt: the cuBLAS wheel), each wheel once."""
    out: List[Tuple[str, str]] = []
    for soname in [n for n in sonames if not n.startswith("libcudnn")]:
        row = compat.cuda_wheel(soname, cuda_major)
        if row is not None and row["wheel"] not in [w for w, _ in out]:
            out.append((row["wheel"], row["folder"]))
    return out


def newer_with_extras(compat: Compat) -> str:
    """The releases a move to the [cuda,cudnn] extras and preload_dlls() names: from the first that has them up to the
    last CUDA 12 build, since a CUDA 13 build (compat's rows) needs an R580 driver the machine may not have."""
    since = compat.framework_feature_since("onnxruntime_gpu", "preload_dlls")
    cuda12 = next((str(r["releases"]) for r in compat.framework_builds_by_release("onnxruntime_gpu")
                   if str(r["cuda"]).split(".")[0] == "12"), "")
    below = re.search(r"<[\d.]+", cuda12)
    return ">=%s%s" % (since, "," + below.group(0) if below else "")


def _held(wheel: str, site_releases: Mapping[str, str]) -> bool:
    """Whether the site already holds this wheel ("name" or "name==pin") at a release the pin allows."""
    name, _, pin = wheel.partition("==")
    have = site_releases.get(canonical_name(name))
    return have is not None and (not pin or SpecifierSet("==" + pin).contains(have, prereleases=True))


def onnxruntime_cuda_fix(compat: Compat, version: str, site: Optional[str], missing: Sequence[str] = (),
                         reinstall: bool = False, site_releases: Optional[Mapping[str, str]] = None) -> Fix:
    """Install the wheels of the `missing` libraries (cuDNN when none is named) for the CUDA this release was built
    for and put their folders on LD_LIBRARY_PATH (works for every release); name the release's own extras and
    preload_dlls() only where it has them, else the newer onnxruntime-gpu that has them. `reinstall`: a damaged
    wheel is there, which pip would count installed and leave as it is. `site_releases` (name: release of the wheels in
    `site`): a wheel already there is not installed again, only its folder put on the path; where every one is there
    and the release has preload_dlls(), calling it is the other way (a new user's trial: a healthy
    onnxruntime-gpu[cuda,cudnn] was told to pip install what it had)."""
    source = compat.framework_features_source("onnxruntime_gpu")
    build = compat.framework_build("onnxruntime_gpu", version)
    release = version.split("+")[0]
    if build is None:
        return advice("install the CUDA and cuDNN libraries onnxruntime-gpu %s was built for and put their folder on "
                      "LD_LIBRARY_PATH [%s]" % (release, source))
    cuda_major = str(build["cuda"]).split(".")[0]
    found = cuda_library_wheels(compat, missing, cuda_major)
    wheels, folders = [w for w, _ in found], [f for _, f in found]
    if not missing or any(n.startswith("libcudnn") for n in missing):
        wheels.append("%s==%s" % (build["cudnn_wheel"], build["cudnn_pin"]))
        folders.append("nvidia/cudnn/lib")
    if not wheels:
        return advice("install %s of CUDA %s and put their folder on LD_LIBRARY_PATH [%s]" % (
            ", ".join(missing), build["cuda"], source))
    absent = wheels if reinstall else [w for w in wheels if not _held(w, site_releases or {})]
    commands = [pip("install %s%s" % ("--force-reinstall --no-deps " if reinstall else "",
                                      " ".join('"%s"' % w for w in absent)))] if absent else []
    if site:
        commands += [prepend_ld_path("%s/%s" % (site.rstrip("/"), f)) for f in reversed(folders)]
    fix = run(*commands)
    has_preload = compat.framework_feature("onnxruntime_gpu", "preload_dlls", release)
    if has_preload and not absent and site:
        other = said("or call onnxruntime.preload_dlls() before creating the session: it loads them from the nvidia "
                     "wheels beside it")
    elif has_preload:
        other = said('or `%s` and call onnxruntime.preload_dlls() before creating the session',
                     pip('install "onnxruntime-gpu[%s]==%s"' % (",".join(compat.framework_extras("onnxruntime_gpu")),
                                                                 release)))
    else:
        newer = compat.framework_feature_since("onnxruntime_gpu", "preload_dlls")
        newest = compat.framework_newest_cudnn_major("onnxruntime_gpu")
        other = said("onnxruntime-gpu %s has neither the [cuda,cudnn] extras nor onnxruntime.preload_dlls(), which "
                     "exist from %s; or move to one built for cuDNN %s: `%%s` and call onnxruntime.preload_dlls()"
                     % (release, newer, newest), pip('install "onnxruntime-gpu[cuda,cudnn]%s"' % newer_with_extras(compat)))
    return or_else(fix, noted(other, " [%s]" % source), "%s   (%s)")


def onnxruntime_release_fix(compat: Compat, release: str, missing: Sequence[str]) -> Fix:
    """The CUDA libraries a named onnxruntime-gpu release links, for a paste that names no environment: their
    folders under the site-packages of the Python the user runs, asked of it when the line runs."""
    return onnxruntime_cuda_fix(compat, release, ACTIVE_SITE, missing)


def onnxruntime_windows_dlls_fix(compat: Compat, release: Optional[str]) -> Fix:
    """onnxruntime_providers_cuda.dll is there but a DLL it imports is not (error 126): the CUDA and cuDNN of its
    build. Windows searches no site-packages folder, so pip's nvidia wheels count only through preload_dlls(), which
    the releases with the [cuda,cudnn] extras have; older ones need NVIDIA's installers with their bin folders on
    PATH. Without the release, each build's CUDA and cuDNN are said, the installed one deciding."""
    source = compat.framework_features_source("onnxruntime_gpu")
    since = compat.framework_feature_since("onnxruntime_gpu", "preload_dlls")
    extras = ",".join(compat.framework_extras("onnxruntime_gpu"))
    build = compat.framework_build("onnxruntime_gpu", release) if release else None
    if build is not None and release and compat.framework_feature("onnxruntime_gpu", "preload_dlls", release):
        line = pip('install "onnxruntime-gpu[%s]==%s"' % (extras, release.split("+")[0]))
        return noted(said("`%s` and call onnxruntime.preload_dlls() before creating the session: it loads the CUDA "
                          "%s and cuDNN %s DLLs of the nvidia wheels" % ("%s", build["cuda"], build["cudnn_major"]),
                          line), " [%s]" % source)
    if build is not None:
        mine = advice("install CUDA %s and cuDNN %s for it (NVIDIA's Windows installers) and put their bin folders on "
                      "PATH, or import a PyTorch built for the same CUDA and cuDNN major before onnxruntime"
                      % (build["cuda"], build["cudnn_major"]))
    else:
        mine = said("install the CUDA and cuDNN of its build (%s) and put their bin folders on PATH; `%%s` says which "
                    "it is" % "; ".join("onnxruntime-gpu %s: CUDA %s and cuDNN %s" % (
                        row["releases"], row["cuda"], row["cudnn_major"])
                        for row in compat.framework_builds_by_release("onnxruntime_gpu")),
                    'python -c "import onnxruntime; print(onnxruntime.__version__)"')
    newer = said('or `%s` and call onnxruntime.preload_dlls() before creating the session',
                 pip('install "onnxruntime-gpu[%s]%s"' % (extras, newer_with_extras(compat))))
    return or_else(mine, noted(newer, " [%s]" % source), "%s   (%s)")
