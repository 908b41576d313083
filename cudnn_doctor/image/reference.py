"""Image references in the transports skopeo and podman use: oci:DIR[:TAG], oci-archive:FILE[:TAG],
docker-archive:FILE[:NAME:TAG]."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

from .errors import ImageError

TRANSPORTS = ("oci", "oci-archive", "docker-archive")


@dataclass(frozen=True)
class ImageRef:
    transport: str
    path: str
    tag: Optional[str] = None  # oci: the ref.name annotation; docker-archive: one of the RepoTags

    def __str__(self) -> str:
        return "%s:%s%s" % (self.transport, self.path, ":" + self.tag if self.tag else "")


def parse_reference(text: str) -> ImageRef:
    """Split REF into transport, path and tag; the path is the longest prefix that exists (a path may hold ':')."""
    transport, sep, rest = text.partition(":")
    if not sep or transport not in TRANSPORTS or not rest:
        raise ImageError("--image %r: expected oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE[:NAME:TAG]"
                         % text)
    want_dir = transport == "oci"
    cut = len(rest)
    while cut > 0:
        path, tag = rest[:cut], rest[cut + 1:] or None
        if (os.path.isdir(path) if want_dir else os.path.isfile(path)):
            return ImageRef(transport, path, tag)
        cut = rest.rfind(":", 0, cut)
    raise ImageError("--image %s: no %s %s" % (text, "folder" if want_dir else "file", rest.split(":")[0]))
