"""How to install what `pick` chose: the pip, uv and conda/pixi commands for a framework build, the cuDNN wheel
and `cudnn-doctor install` for cuDNN, and the driver upgrade where nothing fits yet."""
from __future__ import annotations

from typing import Dict, List, Optional

from ..knowledge import Build, Compat
from ..model import Fix
from ..versions import major_of, mm
from .cudnn import doctor_install
from .shell import run
from .shells import sh_quote
from .software import driver_upgrade_fix


def _mm_tag(cuda: str) -> str:
    pair = mm(cuda)
    return "%d%d" % pair if pair else str(major_of(cuda))


def index_url(compat: Compat, build: Build) -> str:
    """The framework's own index for a build PyPI does not serve ('' for PyPI's default build)."""
    pattern = str(compat.install_recipe(build.framework).get("index", ""))
    return "" if build.default or not pattern else pattern.replace("<MM>", _mm_tag(build.cuda))


def _requirement(compat: Compat, build: Build) -> str:
    return "%s==%s" % (compat.build_pip_project(build), build.release)


def pip_fix(compat: Compat, build: Build) -> Fix:
    index = index_url(compat, build)
    words = ["pip", "install", sh_quote(_requirement(compat, build))] + (["--index-url", index] if index else [])
    return run(" ".join(words))


def uv_fixes(compat: Compat, build: Build) -> List[Fix]:
    """uv pip install, and for torch the same with UV_TORCH_BACKEND (uv picks the index from the backend)."""
    backend = str(compat.install_recipe(build.framework).get("uv_backend", "")).replace("<MM>", _mm_tag(build.cuda))
    want = sh_quote(_requirement(compat, build))
    if backend:
        return [run("uv pip install %s --torch-backend=%s" % (want, backend)),
                run("UV_TORCH_BACKEND=%s uv pip install %s" % (backend, want))]
    index = index_url(compat, build)
    return [run("uv pip install %s%s" % (want, " --index-url %s" % index if index else ""))]


def conda_fix(compat: Compat, framework: str, cuda: str, solve_cuda: Optional[str]) -> Optional[Fix]:
    """conda-forge's build for this CUDA (cuda-version pins it; the release is conda-forge's newest for it), with
    CONDA_OVERRIDE_CUDA where the solve runs on another machine than the one that will run it."""
    package = str(compat.install_recipe(framework).get("conda", ""))
    variable, channel = compat.conda_override()
    if not package or not channel:
        return None
    pair = mm(cuda)
    version = "%d.%d" % pair if pair else str(major_of(cuda))
    prefix = "%s=%s " % (variable, solve_cuda) if solve_cuda and variable else ""
    return run("%sconda install -c %s %s %s" % (prefix, channel, sh_quote(package),
                                                sh_quote("cuda-version=%s" % version)))


def requirements_lines(compat: Compat, build: Build) -> List[str]:
    index = index_url(compat, build)
    return (["--index-url %s" % index] if index else []) + [_requirement(compat, build)]


def cudnn_requirement(compat: Compat, cuda: str, wheel_version: str) -> Optional[str]:
    """'nvidia-cudnn-cu12==9.10.2.21': the cuDNN wheel of a release for a CUDA major, where NVIDIA ships one."""
    project = compat.cudnn_wheel(cuda)
    return "%s==%s" % (project, wheel_version) if project and wheel_version else None


def cudnn_fixes(compat: Compat, release: str, wheel_version: str, cuda: str, cuda_home: Optional[str]
                ) -> Dict[str, Fix]:
    """The cuDNN wheel for the CUDA major, and cudnn-doctor's installer into the toolkit where it fetches the
    release."""
    out: Dict[str, Fix] = {}
    wanted = cudnn_requirement(compat, cuda, wheel_version)
    if wanted:
        out["pip"] = run("pip install %s" % sh_quote(wanted))
        out["uv"] = run("uv pip install %s" % sh_quote(wanted))
    doctor = doctor_install(release, cuda, cuda_home, compat) if cuda_home else None
    if doctor:
        out["cudnn-doctor"] = run(doctor)
    return out


def driver_fix(branch: str, platform: str) -> Fix:
    """Where nothing fits on this driver: the branch that would run the newest build with code for every GPU."""
    return driver_upgrade_fix("R%s or newer" % branch.lstrip("R"), platform)
