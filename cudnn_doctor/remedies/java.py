"""Fixes for a JavaCPP/Deeplearning4j CUDA preset: the exact CUDA and cuDNN its version names, or the redist
artifact that bundles them."""
from __future__ import annotations

from typing import Any, Sequence

from ..model import Fix
from .acting import doctor
from .shell import advice, said, then
from .software import driver_upgrade_fix


def preset_driver_fix(floor: Any, platform: str) -> Fix:
    """A driver new enough for the preset's CUDA."""
    return driver_upgrade_fix(floor.text() if floor else "a newer branch", platform)


def preset_cudnn_install_fix(cudnn: str, cuda: str) -> Fix:
    """The cuDNN release the preset was built with, for its CUDA, where the loader finds none."""
    return said("install cuDNN %s for CUDA %s (`%%s` lists the builds; give the downloaded archive to `%%s` to put "
                "it into the toolkit)" % (cudnn, cuda), doctor("matrix --cuda %s" % cuda),
                doctor("install", privileged=True))


def preset_cudnn_upgrade_fix(cudnn: str, cuda: str, major: int) -> Fix:
    """A cuDNN not older than the one the preset was built with, of the same major."""
    return advice("install cuDNN %s for CUDA %s or newer %s.x" % (cudnn, cuda, major))


def preset_cuda_runtime_fix(cuda: str) -> Fix:
    return advice("install the CUDA %s toolkit (or its runtime libraries)" % cuda)


def preset_redist_fix(preset: str) -> Fix:
    """The cuda-platform-redist artifact of the same version, which brings its own CUDA and cuDNN."""
    return advice("or add the dependency org.bytedeco:cuda-platform-redist:%s, which bundles CUDA and cuDNN" % preset)


def javacpp_preset_fix(steps: Sequence[Fix]) -> Fix:
    """Every step a preset needs, one after the other."""
    return then(*steps, joint="; ")
