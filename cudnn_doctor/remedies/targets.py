"""Fixes when a machine does not fit a framework, a --for target or a GPU: another release, build, or machine."""
from __future__ import annotations

from typing import Any, Dict, Optional

from ..knowledge import Compat
from ..model import Facts, Fix
from ..queries import platform_of
from .acting import at, doctor, on_machine, pip, set_variable, system, target_shell
from .shell import advice, or_else, run, said, say, stated, then
from .software import TOOLKIT_ARCHIVE, arch_driver_limit, driver_upgrade_fix, toolkit_install_fix, torch_install


def matrix_fix(framework: str) -> Fix:
    return said("See `%s`.", doctor("matrix --for %s" % framework))


def dl4j_matrix_fix() -> Fix:
    return said("See `%s` for the releases compat knows.", doctor("matrix --for dl4j"))


def target_syntax_fix() -> Fix:
    return said("Use torch, tensorflow, jax or dl4j, optionally ==VERSION (see `%s`)", doctor("matrix --for dl4j"))


def requirement_syntax_fix() -> Fix:
    return stated("Write it as a key and a version comparison, e.g. --require 'cudnn>=8.9,<10'")


def tensorflow_on_windows_fix(version: str, last_native: str) -> Fix:
    """TensorFlow after its last native-Windows GPU release: WSL2, or that release."""
    return or_else(said("Use WSL2 with `%s`", 'pip install "tensorflow[and-cuda]==%s"' % version),
                   said("TensorFlow %s (`%%s`)" % last_native, 'pip install "tensorflow==%s.*"' % last_native),
                   "%s, or %s")


def dl4j_for_this_gpu_fix(newer_row: Optional[Dict[str, Any]], newest_row: Dict[str, Any]) -> Fix:
    """The DL4J release whose CUDA backend drives this GPU, or where none does, another GPU or the CPU."""
    if newer_row:
        return stated("Use DL4J %s (CUDA %s backend %s), whose CUDA supports this GPU." % (
            newer_row["dl4j"], newer_row["cuda"], newer_row["backend"]))
    return stated("No DL4J release in compat has a CUDA backend for this GPU (newest backend: CUDA %s in DL4J %s); "
                  "run DL4J on a GPU that CUDA %s supports, or on CPU with the nd4j-native backend." % (
                      newest_row["cuda"], newest_row["dl4j"], newest_row["cuda"]))


def torch_from_source_fix(cc: str) -> Fix:
    return stated("Build PyTorch from source with TORCH_CUDA_ARCH_LIST=%s, or use a GPU the wheel has code for." % cc)


def framework_upgrade_for_cc_fix(name: str, cc: str) -> Fix:
    upgrade = system("python3 -m pip install -U %s" % name, privileged=False)
    return run(upgrade, text="%s   (a release built for compute capability %s)" % (upgrade, cc))


def tensorflow_cpu_or_newer_gpu_fix(floor: str) -> Fix:
    return stated("Run TensorFlow on CPU or on a GPU of compute capability %s or newer." % floor)


def older_cudnn_for_gpu_fix(older: Optional[str], cc: str) -> Fix:
    if older:
        return stated("Install cuDNN %s or older (the newest release in compat that still supports compute "
                      "capability %s), run on CPU, or use a newer GPU." % (older, cc))
    return stated("Use a cuDNN release that supports compute capability %s, or a newer GPU." % cc)


def older_toolkit_for_gpu_fix(cc: str) -> Fix:
    return stated("Install an older CUDA toolkit that still supports compute capability %s." % cc)


def free_gpu_memory_fix() -> Fix:
    smi, tf, jax = (on_machine("nvidia-smi", privileged=False), set_variable("TF_FORCE_GPU_ALLOW_GROWTH", "true"),
                    set_variable("XLA_PYTHON_CLIENT_PREALLOCATE", "false"))
    return run(smi, tf, jax, shell=target_shell(), text="Free the GPU (`%s` lists the processes holding it) or pick "
               "another one; stop frameworks from grabbing all memory: %s (TensorFlow), %s (JAX)." % (smi, tf, jax))


def no_driver_for_gpu_fix(cuda: str, limit: str, driver: Optional[str]) -> Fix:
    """A build whose CUDA needs a driver newer than the GPU's last driver branch: another build, or another GPU."""
    matrix = doctor("matrix" + (" --driver %s" % driver if driver else ""))
    return said("This build cannot run on this GPU: no driver for CUDA %s exists for it.%s Use a release built "
                "for a CUDA the installed driver runs (`%%s`), or a newer GPU." % (cuda, limit.replace("%", "%%")),
                matrix)


def cuda_driver_fix(facts: Facts, compat: Compat, cuda: str, floor_text: Optional[str] = None) -> Fix:
    """The driver upgrade CUDA `cuda` needs (at least `floor_text` where given, else compat's floor)."""
    floor = compat.min_driver(cuda, platform_of(facts))
    return driver_upgrade_fix(floor_text or (floor.text() if floor else "one for CUDA %s" % cuda), platform_of(facts))


def driver_first_fix(facts: Facts, compat: Compat, cuda: str, fix: Fix, floor_text: Optional[str] = None) -> Fix:
    """`fix`, after the driver upgrade CUDA `cuda` needs."""
    return then(cuda_driver_fix(facts, compat, cuda, floor_text), fix)


def tensorflow_tested_build_fix(version: str, cuda: str, cudnn: str) -> Fix:
    """TensorFlow without CUDA wheels: the toolkit and cuDNN of its tested build, then TensorFlow itself."""
    return say("install CUDA %s and cuDNN %s for CUDA %s (TensorFlow's tested build), then %s", cuda, cudnn, cuda,
               run(pip("install tensorflow==%s" % version)))


def torch_build_for_gpu_fix(compat: Compat, torch: str, cuda: str) -> Fix:
    """The newest PyTorch build that still runs on this GPU, where the one asked for cannot."""
    return say("This build cannot run on this GPU; the newest PyTorch build that does (with this driver) is %s for "
               "CUDA %s: %s", torch, cuda, torch_install(compat, torch, cuda))


def jax_build_fix(facts: Facts, compat: Compat, row: Dict[str, Any], driver_too_old: bool) -> Fix:
    """JAX's CUDA build of a compat row, after the driver branch it needs (or why no such driver exists)."""
    fix = run(pip('install -U "jax[%s]"' % row["extra"]))
    if not driver_too_old:
        return fix
    limit = arch_driver_limit(facts, compat, str(row["driver_linux"]).split(".")[0])
    if limit:
        return advice("No driver of the R%s branch exists for this GPU.%s JAX's current CUDA builds cannot run here."
                      % (row["driver_linux"], limit))
    return then(driver_upgrade_fix("the R%s branch" % row["driver_linux"], platform_of(facts)), fix)


def dl4j_pair_fix(facts: Facts, compat: Compat, row: Dict[str, Any], release: str, newest: Optional[str],
                  driver: Optional[Fix] = None, needs_toolkit: bool = False, needs_cudnn: bool = False) -> Fix:
    """The steps to one CUDA/cuDNN pair a DL4J release has a backend for: the driver, toolkit and cuDNN it lacks,
    then the backend artifacts (or the redist artifact that bundles CUDA and cuDNN)."""
    cuda, cudnn = row["cuda"], row["cudnn"]
    steps = [driver] if driver is not None else []
    if needs_toolkit:
        steps.append(say("install the CUDA %s toolkit (%s; apt: %s)", cuda, TOOLKIT_ARCHIVE,
                         toolkit_install_fix(facts, compat, cuda)))
    if needs_cudnn:
        archive = compat.cudnn_archive_name(newest, cuda, platform_of(facts),
                                            facts.host.machine or "x86_64") if newest else None
        steps.append(advice("install cuDNN %s for CUDA %s%s" % (
            newest or cudnn, cuda, (" (%s, then copy its files with cp -P (links kept) into %s)" % (
                archive, at("/usr/local/cuda-%s" % cuda))) if archive else "")))
    steps.append(advice("use the %s backend (and deeplearning4j-cuda-%s for cuDNN) at version %s" % (
        row["backend"], cuda, release)))
    if row.get("redist"):
        steps.append(advice("or add %s, which bundles CUDA and cuDNN, instead of installing them" % row["redist"]))
    return then(*steps, joint="; ")
