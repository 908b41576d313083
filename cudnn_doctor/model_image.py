"""The facts of a container image read from its layers (check --image), apart so a plain check never builds them."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


@dataclass
class ImageFacts:
    """A container image read from its layers (check --image): what the runtime will be told, and by whom judged."""

    reference: str  # as given: oci:DIR:TAG, oci-archive:FILE, docker-archive:FILE
    digest: Optional[str] = None  # the manifest's digest (OCI) or the config's (docker-archive)
    tags: List[str] = field(default_factory=list)
    architecture: Optional[str] = None  # the config's, e.g. "amd64"
    layers: List[Dict[str, Any]] = field(default_factory=list)  # {digest, entries, bytes, whiteouts, opaque}
    env: Dict[str, str] = field(default_factory=dict)  # the config's Env (what every probe was given)
    requirements: List[str] = field(default_factory=list)  # what nvidia-container-cli gets as --require
    requirement_error: Optional[str] = None  # the toolkit cannot even form them (a bad legacy CUDA_VERSION)
    disable_require: bool = False  # NVIDIA_DISABLE_REQUIRE is a true boolean: requirements are not checked
    compat_libcuda: List[Dict[str, str]] = field(default_factory=list)  # cuda-compat copies: {path, version}
    node: Optional[str] = None  # the node whose report the image is judged against (--against); None: no node
    node_source: Optional[str] = None  # that report's file
