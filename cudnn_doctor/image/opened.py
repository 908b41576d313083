"""An image opened for the probes: its layers applied into a temporary folder (removed on close) and its config's
environment, which is what every probe and native call of the run sees."""
from __future__ import annotations

import glob
import hashlib
import io
import os
import re
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Dict, Iterator, List

from ..model_image import ImageFacts
from ..readers.nvidia_require import disables_require, requirements_from_env
from .errors import ImageError
from .reference import parse_reference
from .source import Layer, Source, resolve
from .unpack import LayerStats, Limits, Tree, _Budget, apply_layer, remove

__all__ = ["Limits", "OpenedImage", "open_image"]

_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_COMPAT_LIB = re.compile(r"^libcuda\.so\.(\d+(?:\.\d+)+)$")
_SHOWN_WHITEOUTS = 20  # a report names this many removed paths per layer; the count is always whole


@dataclass
class OpenedImage:
    root: str  # the doctor's folder holding the image's file system
    env: Dict[str, str]  # the image config's Env
    facts: ImageFacts


def _config_env(config: dict) -> Dict[str, str]:
    env: Dict[str, str] = {}
    for item in ((config.get("config") or {}).get("Env") or []):
        if isinstance(item, str) and "=" in item:
            name, _, value = item.partition("=")
            env[name] = value
    return env


class _Digested(io.RawIOBase):
    """A blob read through SHA-256, so a layer that does not match the digest its manifest names is refused."""

    def __init__(self, fh, label: str, digest: str) -> None:
        super().__init__()
        self.fh, self.label, self.digest = fh, label, digest
        self.hash = hashlib.sha256()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self.fh.read(len(buffer))
        self.hash.update(data)
        buffer[:len(data)] = data
        return len(data)

    def verify(self) -> None:
        while True:  # a tar reader may stop before the blob ends (end-of-archive padding, compression trailers)
            data = self.fh.read(1 << 20)
            if not data:
                break
            self.hash.update(data)
        if self.hash.hexdigest() != self.digest.split(":", 1)[1]:
            raise ImageError("%s does not match its digest %s (damaged or altered)" % (self.label, self.digest))

    def close(self) -> None:
        self.fh.close()
        super().close()


def _layer_stream(source: Source, layer: Layer, label: str):
    raw = source.open(layer.name)
    head = raw.read(4)
    raw.seek(0)
    digested = _Digested(raw, label, layer.digest) if layer.digest.startswith("sha256:") else None
    fh = digested or raw
    if head == _ZSTD_MAGIC:
        try:
            import zstandard  # why: an optional package, only zstd-compressed layers need it
        except ImportError:
            fh.close()
            raise ImageError("%s is zstd-compressed: `python3 -m pip install zstandard` to read it" % label)
        return zstandard.ZstdDecompressor().stream_reader(fh, closefd=True), digested
    return fh, digested


def compat_copies(root: str) -> List[Dict[str, str]]:
    """cuda-compat's libcuda files (the forward-compatibility driver) under the image's /usr/local/cuda*/compat."""
    found = []
    for path in sorted(glob.glob(os.path.join(root, "usr/local/cuda*/compat/libcuda.so.*"))):
        m = _COMPAT_LIB.match(os.path.basename(path))
        if m and os.path.isfile(path) and not os.path.islink(path):
            found.append({"path": "/" + os.path.relpath(path, root), "version": m.group(1)})
    return found


def _unpack(ref_text: str, workdir: str, limits: Limits) -> OpenedImage:
    ref = parse_reference(ref_text)
    root = os.path.join(workdir, "rootfs")
    vetting = os.path.join(workdir, "vet")
    os.mkdir(root, 0o755)
    os.mkdir(vetting, 0o700)
    source = Source(ref)
    try:
        resolved = resolve(source)
        if resolved.config.get("os") not in (None, "linux"):
            raise ImageError("--image %s is a %s image: only Linux images are read" % (ref, resolved.config["os"]))
        tree, budget = Tree(root, vetting), _Budget(limits, root)
        layers = []
        for number, layer in enumerate(resolved.layers, 1):
            label = "--image %s: layer %d (%s)" % (ref, number, layer.digest[:19])
            stats = LayerStats(layer.digest)
            stream, digested = _layer_stream(source, layer, label)
            try:
                apply_layer(tree, stream, stats, budget, label)
                if digested is not None:  # OCI blobs are named by their SHA-256: what was read must match
                    digested.verify()
            finally:
                stream.close()
            layers.append({"digest": layer.digest, "entries": stats.entries, "bytes": stats.bytes,
                           "whiteouts": len(stats.whiteouts), "removed": stats.whiteouts[:_SHOWN_WHITEOUTS],
                           "opaque": stats.opaque[:_SHOWN_WHITEOUTS]})
    finally:
        source.close()
    env = _config_env(resolved.config)
    requirements, error = requirements_from_env(env)
    facts = ImageFacts(reference=str(ref), digest=resolved.digest, tags=list(resolved.tags),
                       architecture=resolved.config.get("architecture"), layers=layers, env=env,
                       requirements=requirements, requirement_error=error, disable_require=disables_require(env),
                       compat_libcuda=compat_copies(root))
    return OpenedImage(root, env, facts)


@contextmanager
def open_image(ref_text: str, limits: Limits = Limits()) -> Iterator[OpenedImage]:
    """The image under a fresh temporary folder for the duration of the block; ImageError (one line) when it
    cannot be read or is refused. Nothing is written anywhere else, and the folder goes away in every case."""
    workdir = tempfile.mkdtemp(prefix="cudnn-doctor-image-")
    try:
        try:
            opened = _unpack(ref_text, workdir, limits)
        except (OSError, ValueError, KeyError, TypeError, AttributeError, EOFError) as exc:
            raise ImageError("--image %s cannot be read: %s" % (ref_text, exc))
        yield opened
    finally:
        remove(workdir)
