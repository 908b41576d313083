"""Fixes for the GPUs themselves: builds and toolkits that lack code for them, compute mode, MIG, visibility."""
from __future__ import annotations

from typing import Any, Dict, Optional

from ..knowledge import Compat
from ..model import Facts, Fix
from .acting import on_machine, on_windows, set_variable, system, target_shell, unset_variable
from .shells import command_fix
from .shell import advice, or_else, run, said, say, then
from .software import driver_upgrade_fix, toolkit_install_fix


def torch_source_build_fix(cc: str, first: str, last: str) -> Fix:
    """No PyTorch wheel has kernels for this GPU: build it for the GPU, or use a GPU within the wheel's range."""
    return advice("Build PyTorch from source with TORCH_CUDA_ARCH_LIST=%s, or use a GPU of compute capability %s-%s."
                  % (cc, first, last))


def jax_build_for_gpu_fix(row: Dict[str, Any], needs_driver: bool, platform: str) -> Fix:
    """Install JAX's CUDA extra whose minimum GPU this one meets (``row`` of compat's JAX table), after a driver
    upgrade when that extra needs a newer driver."""
    fix = or_else(run(system('pip install -U "jax[%s]"' % row["extra"], privileged=False)), "JAX's %s wheels support SM %s+" % (
        row["extra"], row["min_cc"]), "%s   (%s)")
    if needs_driver:
        fix = then(driver_upgrade_fix("the R%s branch or later" % row["driver_linux"], platform), fix)
    return fix


def jax_on_cpu_fix(cc: str, min_cc: str) -> Fix:
    """No JAX CUDA build supports this GPU: the CPU build, or a newer GPU."""
    return said("No JAX CUDA build in compat supports compute capability %s: run JAX on CPU (%%s) or on a GPU of "
                "compute capability %s or newer" % (cc, min_cc), system("pip install -U jax", privileged=False))


def last_toolkit_for_gpu_fix(facts: Facts, compat: Compat, cuda: str, arch: str) -> Fix:
    """The last CUDA release for an architecture newer toolkits dropped, made the default toolkit."""
    return say("Install CUDA %s (the last release for %s GPUs), e.g. `%s`, and point /usr/local/cuda at it.", cuda,
               arch, toolkit_install_fix(facts, compat, cuda))


def newer_toolkit_for_gpu_fix(facts: Facts, compat: Compat, first: str, install: str) -> Fix:
    """A toolkit from ``first`` on, the GPU's first CUDA (the example installs ``install``)."""
    return say("Install CUDA %s or newer (e.g. `%s`).", first, toolkit_install_fix(facts, compat, install))


def exclusive_gpu_fix(index: int, free: Optional[int]) -> Fix:
    """A GPU in exclusive (or prohibited) compute mode: another free GPU, else stop its holder, else (as root) reset
    the mode."""
    reset = on_machine("nvidia-smi -i %d -c DEFAULT" % index)
    use = set_variable("CUDA_VISIBLE_DEVICES", free) if free is not None else ""
    other = ("Use another GPU (%s), stop" % use) if use else "Stop"
    smi = on_machine("nvidia-smi", privileged=False)
    admin = "from an Administrator PowerShell" if on_windows() else "as root"
    return command_fix([reset], shell=target_shell(), root=True, text="%s the process holding it (`%s` lists it), or, "
                       "%s: %s" % (other, smi, admin, reset), manual="%s the process holding it (`%s` lists it)" % (
                           other, smi), alternatives=[c for c in (use, smi) if c])


def create_mig_instance_fix(index: int) -> Fix:
    """MIG on with no instance: create the whole-GPU one, or turn MIG off."""
    # Profile 0 is the whole-GPU instance on every MIG-capable GPU (7g on A100/H100, 4g on A30).
    create = on_machine("nvidia-smi mig -i %d -cgi 0 -C" % index)
    profiles = on_machine("nvidia-smi mig -i %d -lgip" % index)
    return or_else(run(create, profiles, text="Create an instance: `%s` (profile 0 spans the whole GPU; `%s` lists "
                       "the smaller ones)" % (create, profiles)),
                   run(on_machine("nvidia-smi -i %d -mig 0" % index)), "%s, or turn MIG off: %s")


def cuda_visible_devices_fix(devices: str) -> Fix:
    """CUDA_VISIBLE_DEVICES set to ``devices`` (indices or MIG UUIDs, comma-separated)."""
    return run(set_variable("CUDA_VISIBLE_DEVICES", devices), shell=target_shell())


def unhide_gpus_fix() -> Fix:
    """CUDA_VISIBLE_DEVICES hides every GPU: drop it, or name the first GPU."""
    return or_else(run(unset_variable("CUDA_VISIBLE_DEVICES"), shell=target_shell()),
                   run(set_variable("CUDA_VISIBLE_DEVICES", 0), shell=target_shell()))
