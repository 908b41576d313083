"""Where an image's manifests, config and layer blobs come from: an OCI layout folder, or a tar of one or of
`docker save` (manifest.json), each read in place: nothing is unpacked here."""
from __future__ import annotations

import json
import os
import platform
import re
import tarfile
from dataclasses import dataclass
from typing import Any, BinaryIO, Dict, List, Optional, Tuple

from .errors import ImageError
from .reference import ImageRef

_DIGEST = re.compile(r"^(sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128})$")
_REF_NAME = "org.opencontainers.image.ref.name"
_INDEX_TYPES = ("application/vnd.oci.image.index.v1+json", "application/vnd.docker.distribution.manifest.list.v2+json")
MAX_JSON = 16 << 20  # manifests and configs are kilobytes; a bigger one is not a manifest


@dataclass(frozen=True)
class Layer:
    name: str  # the blob's path in the layout or archive
    digest: str
    size: Optional[int]


@dataclass(frozen=True)
class Resolved:
    config: Dict[str, Any]
    layers: List[Layer]
    digest: str  # the manifest's (OCI) or the config's (docker-archive)
    tags: Tuple[str, ...] = ()


class Source:
    """Read-only access to the named files of a layout folder or a tar archive."""

    def __init__(self, ref: ImageRef) -> None:
        self.ref = ref
        self._tar: Optional[tarfile.TarFile] = None
        self._members: Dict[str, tarfile.TarInfo] = {}
        if ref.transport != "oci":
            try:
                self._tar = tarfile.open(ref.path, "r:")  # image archives are plain tars (their layers may not be)
                for member in self._tar:
                    self._members[os.path.normpath(member.name).lstrip("/")] = member
            except (tarfile.TarError, OSError, EOFError) as exc:
                raise ImageError("--image %s: not a readable tar archive (%s)" % (ref, exc))

    def close(self) -> None:
        if self._tar is not None:
            self._tar.close()

    def size(self, name: str) -> Optional[int]:
        if self._tar is None:
            try:
                return os.lstat(os.path.join(self.ref.path, name)).st_size
            except OSError:
                return None
        member = self._members.get(os.path.normpath(name))
        return member.size if member is not None else None

    def open(self, name: str) -> BinaryIO:
        if self._tar is None:
            path = os.path.join(self.ref.path, name)
            if os.path.islink(path) or not os.path.isfile(path):
                raise ImageError("--image %s: %s is missing or not a regular file" % (self.ref, name))
            return open(path, "rb")
        member = self._members.get(os.path.normpath(name))
        # docker save may store a layer once and link to it from a second name: tarfile follows such links inside
        # the archive only
        usable = member if member is not None and (member.isfile() or member.issym() or member.islnk()) else None
        try:
            handle = self._tar.extractfile(usable) if usable is not None else None
        except (KeyError, tarfile.TarError):
            handle = None
        if handle is None:
            raise ImageError("--image %s: the archive has no file %s" % (self.ref, name))
        return handle  # type: ignore[return-value]  # tarfile's ExFileObject: a BufferedReader, typed IO[bytes]

    def json(self, name: str) -> Any:
        size = self.size(name)
        if size is None:
            raise ImageError("--image %s: %s is missing" % (self.ref, name))
        if size > MAX_JSON:
            raise ImageError("--image %s: %s is %d bytes, too big for a manifest or config" % (self.ref, name, size))
        with self.open(name) as fh:
            try:
                return json.loads(fh.read(MAX_JSON))
            except (ValueError, RecursionError) as exc:
                raise ImageError("--image %s: %s is not JSON (%s)" % (self.ref, name, exc))


def _blob(digest: Any) -> str:
    if not isinstance(digest, str) or not _DIGEST.match(digest):
        raise ImageError("a manifest names a blob by %r, which is not a sha256/sha512 digest" % (digest,))
    algorithm, hexdigest = digest.split(":")
    return "blobs/%s/%s" % (algorithm, hexdigest)


def _platform_arch() -> str:
    machine = platform.machine().lower()
    return {"x86_64": "amd64", "aarch64": "arm64"}.get(machine, machine)


def _pick(entries: List[Dict[str, Any]], tag: Optional[str], ref: ImageRef) -> Dict[str, Any]:
    if tag:
        named = [e for e in entries if (e.get("annotations") or {}).get(_REF_NAME) == tag]
        if not named:
            have = sorted({str((e.get("annotations") or {}).get(_REF_NAME)) for e in entries})
            raise ImageError("--image %s: no image tagged %s (tags: %s)" % (ref, tag, ", ".join(have) or "none"))
        return named[0]
    if len(entries) == 1:
        return entries[0]
    platforms = [e for e in entries if (e.get("platform") or {}).get("architecture") == _platform_arch()]
    if entries and all(e.get("platform") for e in entries) and len(platforms) == 1:
        return platforms[0]
    tags = sorted({str((e.get("annotations") or {}).get(_REF_NAME)) for e in entries})
    raise ImageError("--image %s holds %d images: name one with :TAG (tags: %s)" % (ref, len(entries), ", ".join(tags)))


def _oci(source: Source, ref: ImageRef) -> Resolved:
    layout = source.json("oci-layout") if source.size("oci-layout") is not None else None
    if not isinstance(layout, dict):
        raise ImageError("--image %s: no oci-layout file: not an OCI image layout" % ref)
    index = source.json("index.json")
    entry = _pick(list((index or {}).get("manifests") or []), ref.tag, ref)
    for _ in range(4):  # an index may point at a per-platform index
        manifest = source.json(_blob(entry.get("digest")))
        if manifest.get("mediaType") in _INDEX_TYPES or "manifests" in manifest:
            entry = _pick(list(manifest.get("manifests") or []), None, ref)
            continue
        config = source.json(_blob((manifest.get("config") or {}).get("digest")))
        layers = [Layer(_blob(layer.get("digest")), layer["digest"], layer.get("size"))
                  for layer in manifest.get("layers") or []]
        tag = (entry.get("annotations") or {}).get(_REF_NAME)
        return Resolved(config, layers, str(entry.get("digest")), (tag,) if tag else ())
    raise ImageError("--image %s: image indexes nest too deeply" % ref)


def _docker(source: Source, ref: ImageRef) -> Resolved:
    manifest = source.json("manifest.json")
    if not isinstance(manifest, list) or not manifest:
        raise ImageError("--image %s: manifest.json lists no image" % ref)
    if ref.tag:
        # docker save writes names fully qualified: cuda/test:v2 is docker.io/cuda/test:v2, ubuntu is library/ubuntu
        wanted = {ref.tag, "docker.io/" + ref.tag, "docker.io/library/" + ref.tag}
        picked = [m for m in manifest if wanted & set(m.get("RepoTags") or [])]
        if not picked:
            have = sorted(t for m in manifest for t in m.get("RepoTags") or [])
            raise ImageError("--image %s: no image tagged %s (tags: %s)" % (ref, ref.tag, ", ".join(have) or "none"))
        entry = picked[0]
    elif len(manifest) == 1:
        entry = manifest[0]
    else:
        raise ImageError("--image %s holds %d images: name one with :NAME:TAG" % (ref, len(manifest)))
    config_name = str(entry.get("Config") or "")
    config = source.json(config_name)
    layers = [Layer(str(name), _content_digest(str(name)), source.size(str(name)))
              for name in entry.get("Layers") or []]
    digest = "sha256:" + os.path.basename(config_name).split(".")[0]
    return Resolved(config, layers, digest, tuple(entry.get("RepoTags") or ()))


_CONTENT_NAME = re.compile(r"^(?:blobs/sha256/)?([0-9a-f]{64})(?:\.tar)?$")


def _content_digest(name: str) -> str:
    """skopeo and docker 25+ name layers by their SHA-256 (checked as they are read); older `docker save` names
    them by a layer id, which is no digest (kept as the name, not checked)."""
    m = _CONTENT_NAME.match(name)
    return "sha256:" + m.group(1) if m else name


def resolve(source: Source) -> Resolved:
    """The manifest the reference names: its config and its layers, bottom first."""
    ref = source.ref
    resolved = _docker(source, ref) if ref.transport == "docker-archive" else _oci(source, ref)
    if not isinstance(resolved.config, dict):
        raise ImageError("--image %s: the image config is not a JSON object" % ref)
    return resolved
