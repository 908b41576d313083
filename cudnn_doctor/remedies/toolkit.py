"""Fixes for CUDA toolkits and CUDA builds against the driver: a newer driver or an older build, the runtime a
framework needs, forward-compatibility and stub libcuda on the path, a toolkit link that points nowhere."""
from __future__ import annotations

from typing import Optional

from ..knowledge import Compat, DriverFloor
from ..model import Facts, FrameworkFacts, Fix
from ..queries import platform_of
from ..versions import ver
from .loader import off_search_path_fix
from .acting import at, doctor, sudo, system
from .shell import capitalized, noted, or_else, q, run, say
from .software import arch_driver_limit, driver_upgrade_fix, toolkit_install_fix, torch_install


def _floor_text(floor: Optional[DriverFloor]) -> str:
    return floor.text() if floor else "a newer release"


def driver_for_toolkit_fix(facts: Facts, compat: Compat, floor: Optional[DriverFloor], driver_cuda: Optional[str]
                           ) -> Fix:
    """The driver an installed toolkit needs, or the toolkit of the CUDA the driver runs (and a note when the GPU's
    architecture has no driver that new)."""
    older = say("use the CUDA %s toolkit this driver supports: %s.", driver_cuda,
                toolkit_install_fix(facts, compat, driver_cuda)) if driver_cuda else \
        "use an older CUDA toolkit that this driver supports."
    return noted(or_else(driver_upgrade_fix(_floor_text(floor), platform_of(facts)), older, "%s; or %s"),
                 arch_driver_limit(facts, compat, floor.branch if floor else None))


def driver_for_framework_fix(facts: Facts, compat: Compat, floor: Optional[DriverFloor], torch_version: str = "",
                             torch_cuda: Optional[str] = None) -> Fix:
    """The driver a framework's CUDA build needs, or (PyTorch) the build for a CUDA the driver runs."""
    fix = driver_upgrade_fix(_floor_text(floor), platform_of(facts))
    if torch_cuda:
        fix = or_else(fix, say("install the build for CUDA %s: %s", torch_cuda, torch_install(compat, torch_version, torch_cuda)),
                      "%s; or %s")
    return noted(fix, arch_driver_limit(facts, compat, floor.branch if floor else None))


def exact_driver_for_ptx_fix(floor: Optional[DriverFloor], platform: str) -> Fix:
    """The driver that runs a toolkit without minor-version compatibility, so its PTX JIT-compiles."""
    wanted = floor.text() if floor else "the toolkit's own driver release"  # knowledge without a floor: say so
    return or_else(driver_upgrade_fix(wanted, platform), "compile for the real GPU architecture (SASS) instead "
                                                                "of PTX.", "%s; or %s")


def drop_compat_libcuda_fix(facts: Facts, ld_entry: Optional[str], folder: str) -> Fix:
    """A cuda-compat libcuda on a GPU without forward compatibility: off the path, then the driver or another image."""
    return say("%s; then upgrade the host driver to what the application's CUDA needs, or use an image built for the "
               "host driver's CUDA.", off_search_path_fix(facts, ld_entry, folder))


def drop_compat_libcuda_on_804_fix(facts: Facts, ld_entry: Optional[str], folder: str) -> Fix:
    """A cuda-compat libcuda on a GPU that may lack forward compatibility: what to do if CUDA says so."""
    return say("If CUDA reports error 804: %s, and upgrade the host driver instead.",
               off_search_path_fix(facts, ld_entry, folder))


def drop_stub_libcuda_fix(facts: Facts, ld_entry: Optional[str], folder: str) -> Fix:
    """The toolkit's link-time stub libcuda found at run time: its folder off the search path."""
    return say("%s   (use -L.../stubs only when linking)", off_search_path_fix(facts, ld_entry, folder))


def tensorflow_cuda_runtime_fix(facts: Facts, compat: Compat, fw: FrameworkFacts) -> Fix:
    """The [and-cuda] wheels where this TensorFlow has them (Linux, from compat's release), else its tested CUDA."""
    version = fw.version.split("+")[0]
    toolkit = say("install the CUDA %s toolkit (%s) and the cuDNN of TensorFlow %s's tested build (`%s`)",
                  fw.cuda_version, toolkit_install_fix(facts, compat, fw.cuda_version), version,
                  run(doctor("matrix --for tensorflow")))
    wheels_from = compat.tensorflow_pip_wheels_from()
    release = ver(version)
    if platform_of(facts) == "linux" and wheels_from is not None and release is not None and release >= wheels_from:
        return or_else(run(system('pip install "tensorflow[and-cuda]==%s"' % version, privileged=False)), toolkit,
                       "%s   (NVIDIA's CUDA wheels), or %s")
    return capitalized(toolkit)


def relink_toolkit_fix(target: str, link: str) -> Fix:
    """Point a dangling toolkit link at an installed toolkit."""
    return run(sudo("ln -sfn %s %s" % (q(target), q(at(link)))))


def reinstall_toolkit_fix(facts: Facts, compat: Compat, cuda: Optional[str], link: str) -> Fix:
    """No toolkit left to point a dangling link at: install the release it named (or the driver's), or drop it."""
    return or_else(say("Reinstall the CUDA toolkit (%s)", toolkit_install_fix(facts, compat, cuda)),
                   run(sudo("rm %s" % q(at(link)))), "%s or remove the link: %s")
