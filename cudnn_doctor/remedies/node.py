"""Fixes for the node's own faults: GPUs to drain and reset, the persistence daemon, ECC, the IOMMU and PCIe ACS
between GPUs, and the NVIDIA Container Toolkit's runtime configuration and CDI spec."""
from __future__ import annotations

from typing import Sequence

from ..model import Fix
from .acting import doctor, on_machine
from .shell import advice, or_else, run, said, say, then

CDI_SPEC = "/etc/cdi/nvidia.yaml"


def _ids(indices: Sequence[int]) -> str:
    return ",".join(str(i) for i in indices)


def drain_and_reset_fix(indices: Sequence[int]) -> Fix:
    """Take the node's jobs off the GPUs, then reset them (a reboot does the same)."""
    reset = run(*[on_machine("nvidia-smi --gpu-reset -i %d" % i) for i in indices])
    return then(advice("drain the node (no process may use GPU %s)" % _ids(indices)),
                or_else(reset, run(on_machine("reboot"))))


def drain_and_reboot_fix(indices: Sequence[int]) -> Fix:
    """A GPU no reset reaches (off the bus): take the node's jobs off, then reboot it."""
    return then(advice("drain the node (no process may use GPU %s)" % _ids(indices)), run(on_machine("reboot")))


def kernel_log_access_fix() -> Fix:
    """The kernel log for this check: run it as root, or let the user read the journal (a new login takes it)."""
    return or_else(run(doctor("check", privileged=True)),
                   run(on_machine("usermod -aG systemd-journal \"$USER\"")))


def pending_remap_fix(indices: Sequence[int]) -> Fix:
    """A row remap (or page retirement) waits for the GPU's next reset: drain, then reset or reboot."""
    return say("%s, so the pending remap takes effect", drain_and_reset_fix(indices))


def replace_gpu_fix(indices: Sequence[int]) -> Fix:
    """Remapping failed, or errors keep coming: the GPU needs replacing."""
    return advice("drain GPU %s and take it out of service: row remapping has run out of spare rows or failed, "
                  "which NVIDIA's field diagnostic confirms before a replacement (RMA)" % _ids(indices))


def persistence_daemon_fix() -> Fix:
    return run("sudo systemctl enable --now nvidia-persistenced")


def ecc_on_fix(indices: Sequence[int]) -> Fix:
    return then(run(*["sudo nvidia-smi -i %d -e 1" % i for i in indices]), drain_and_reset_fix(indices))


def cooling_fix(indices: Sequence[int]) -> Fix:
    return said("check GPU %s's cooling and power delivery (fans, airflow, power cables, the PSU); %%s shows the "
                "reason as it happens" % _ids(indices),
                on_machine("nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER -i %s" % _ids(indices), privileged=False))


def reseat_fix(indices: Sequence[int]) -> Fix:
    return said("power the node off and reseat GPU %s (or its riser) in a slot wired for its full width; "
                "%%s shows the link" % _ids(indices), on_machine("nvidia-smi -q -d PCIE -i %s" % _ids(indices),
                                                                 privileged=False))


def restart_job_fix() -> Fix:
    return advice("restart the job that was running; the GPU stays usable (look at the program if it recurs)")


def iommu_passthrough_fix() -> Fix:
    """DMA between GPUs untranslated: iommu=pt on the kernel command line, then a reboot."""
    grubby, grub, reboot = (on_machine("grubby --update-kernel=ALL --args=iommu=pt"), on_machine("update-grub"),
                            on_machine("reboot"))
    return run(grubby, reboot, alternatives=[grub], text="add iommu=pt to the kernel command line: %s (RHEL, Fedora), "
               "or add it to GRUB_CMDLINE_LINUX in /etc/default/grub and run %s (Debian, Ubuntu); then %s"
               % (grubby, grub, reboot))


def acs_off_fix(bridges: Sequence[str]) -> Fix:
    """ACS redirection off on the PCIe switches between the GPUs (until the next boot; the BIOS keeps it off)."""
    fix = run(*["sudo setpci -s %s ECAP_ACS+0x6.w=0000" % b for b in bridges])
    return say("%s   (until the next boot: switch PCIe ACS off in the BIOS to keep it off)", fix)


def runtime_configure_fix(runtime: str) -> Fix:
    """The NVIDIA runtime registered with docker or containerd, and the daemon restarted. No `systemctl
    daemon-reload`: nvidia-ctk writes the runtime's own config (daemon.json, config.toml), and a reload takes GPU access
    away from running containers under the systemd cgroup driver (CD806)."""
    return run(on_machine("nvidia-ctk runtime configure --runtime=%s" % runtime),
               on_machine("systemctl restart %s" % runtime))


def cdi_generate_fix() -> Fix:
    return run("sudo nvidia-ctk cdi generate --output=%s" % CDI_SPEC)



def on_demand_nodes_fix(uvm: bool, modeset: bool, regenerate: bool = False) -> Fix:
    """Create the device nodes the driver makes on demand (nvidia-uvm's with its module, nvidia-modeset's), then, where
    a CDI spec lacks them, generate it again."""
    made = [on_machine("nvidia-modprobe -u -c=0")] if uvm else []
    made += [on_machine("nvidia-modprobe -m")] if modeset else []
    if not regenerate:
        return run(*made)
    return then(run(*made), cdi_generate_fix()) if made else cdi_generate_fix()
