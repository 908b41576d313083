"""Fixes for the NVIDIA driver itself: Secure Boot refusing its module, a known-bad release, missing libcuda."""
from __future__ import annotations

from ..model import Fix
from .shell import stated


def secure_boot_fix() -> Fix:
    return stated("Sign the module and enroll the key: `sudo mokutil --import /var/lib/dkms/mok.pub` (or the key "
                  "your distribution's signed driver package uses), reboot and complete the MOK enrollment screen; "
                  "or disable Secure Boot in the firmware settings.")


def known_bad_driver_fix(fixed_in: str) -> Fix:
    return stated("Upgrade the driver to %s or newer if you rely on it." % fixed_in)


def reinstall_driver_fix() -> Fix:
    """The driver's user-space libraries are gone while its kernel module runs, and its branch is not known."""
    return stated("Reinstall the NVIDIA driver (Ubuntu: `sudo ubuntu-drivers install`, or NVIDIA's installer), "
                  "then `sudo ldconfig` and check with `nvidia-smi`")
