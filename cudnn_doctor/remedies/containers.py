"""Fixes for an image judged against a node: the node's driver, the image's environment, or another image."""
from __future__ import annotations

from typing import Optional

from ..model import Fix
from .shell import advice, say
from .software import driver_upgrade_fix


def image_on_node_fix(node: Optional[str], floor_text: str, image_cuda: Optional[str],
                      node_cuda: Optional[str]) -> Fix:
    """Upgrade the node's driver (on that node), or run an image built for the CUDA the node's driver has."""
    older = ("or use an image built for CUDA %s or older" % node_cuda) if node_cuda else \
        "or use an image built for an older CUDA"
    where = "on %s: " % node if node else ""
    return say("%s%s; %s (this one needs CUDA %s)", where, driver_upgrade_fix(floor_text), older, image_cuda or "?")


def capabilities_fix(missing: str) -> Fix:
    """Ask for the driver capability the image needs, at run time and for good in the image."""
    return advice("Start it with `-e NVIDIA_DRIVER_CAPABILITIES=%s,utility` (docker/podman run; a Kubernetes pod's "
                  "env), or set `ENV NVIDIA_DRIVER_CAPABILITIES=%s,utility` in the image's Dockerfile and rebuild"
                  % (missing, missing))


def visible_devices_fix() -> Fix:
    return advice("Start it with the GPUs it should get: `docker run --gpus all ...`, `podman run --device "
                  "nvidia.com/gpu=all ...`, or a Kubernetes `nvidia.com/gpu` resource limit; or drop "
                  "NVIDIA_VISIBLE_DEVICES=void/none from the image")


def forward_compat_gpu_fix(node: Optional[str], floor_text: str) -> Fix:
    """Forward compatibility cannot work on this GPU: only a driver new enough for the image's CUDA helps."""
    where = "on %s: " % node if node else ""
    return say("%s%s; or run the image on data-center GPUs, where its cuda-compat libcuda works", where,
               driver_upgrade_fix(floor_text))


def compat_older_fix() -> Fix:
    return advice("Keep the image's /usr/local/cuda/compat off LD_LIBRARY_PATH and /etc/ld.so.conf.d on this node "
                  "(the node's driver is newer than the compat libcuda), or rebuild the image without cuda-compat")
