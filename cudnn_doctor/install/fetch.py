"""Sources: a local archive, a URL (streamed, checksummed), or NVIDIA's redistrib_<version>.json manifest."""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Mapping, Optional, Tuple
from urllib.parse import unquote, urljoin, urlparse

from ..bounded_io import what_is
from ..remedies.install_archive import (archive_path_fix, checksum_mismatch_fix, download_by_hand_fix,
                                         download_network_fix, download_status_fix, drop_sha256_fix,
                                         http_needs_sha256_fix, listed_cuda_majors_fix, manifest_release_fix,
                                         manifest_retry_fix, manifest_unreachable_fix, manifest_url_fix,
                                         only_cuda_major_fix, oversized_download_fix, pack_folder_fix,
                                         release_label_fix, sha256_value_fix, short_download_fix,
                                         supported_platform_fix, use_https_fix)
from .errors import Refusal

REDIST_BASE = "https://developer.download.nvidia.com/compute/cudnn/redist/"
REDIST_ENV = "CUDNN_DOCTOR_REDIST_URL"  # another base folder for redistrib_<version>.json (mirrors, tests)
MAX_DOWNLOAD = 16 << 30
MAX_MANIFEST = 4 << 20

Progress = Callable[[int, Optional[int]], None]  # (bytes so far, total or None)


@dataclass
class Source:
    """A local archive ready to read, and how it was obtained."""

    path: str
    kind: str  # file | url | manifest
    url: Optional[str] = None
    sha256: Optional[str] = None  # verified value, when one was checked
    manifest: dict = field(default_factory=dict)
    temp_dir: Optional[str] = None  # removed by cleanup()

    def cleanup(self) -> None:
        if self.temp_dir:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
            self.temp_dir = None

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"path": self.path, "kind": self.kind, "url": self.url, "sha256": self.sha256}
        if self.manifest:
            out["manifest"] = self.manifest
        return out


class Unreachable(Refusal):
    """NVIDIA's download host did not answer at all (a network error, not a reply): the release's wheel on PyPI is
    the other place the same files come from."""


def is_url(text: str) -> bool:
    return bool(re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", text))


def normal_sha(value: Optional[str]) -> Optional[str]:
    if value is None:
        return None
    value = value.strip().lower()
    if not re.fullmatch(r"[0-9a-f]{64}", value):
        raise Refusal("--sha256 %r is not a SHA-256 digest" % value, "it must be 64 hexadecimal digits",
                      sha256_value_fix(), code=2)
    return value


def sha256_of(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _mismatch(name: str, got: str, want: str, deleted: bool) -> Refusal:
    return Refusal("sha256 of %s is %s, expected %s%s" % (name, got, want, " (download deleted)" if deleted else ""),
                   "the file is not the one you meant: a damaged or tampered download",
                   checksum_mismatch_fix())


def local(path: str, sha256: Optional[str]) -> Source:
    """A file on disk; checked against --sha256 before anything is read from it."""
    want = normal_sha(sha256)
    if os.path.isdir(path):
        raise Refusal("%s is a folder, not an archive" % path, "install takes NVIDIA's archive file (.tar.xz, .tgz, "
                      ".zip) or an nvidia-cudnn-cuXX wheel, not an unpacked tree",
                      pack_folder_fix(path), code=2)
    if not os.path.isfile(path):
        kind = what_is(path)
        what = "no such archive: %s" % path if kind in ("missing", "dangling link") else \
            "%s is a %s, not an archive file" % (path, kind)
        raise Refusal(what, "SOURCE must be a cuDNN archive file, a URL, or omitted with --version/--cuda",
                      archive_path_fix(kind == "missing"), code=2)
    if want:
        got = sha256_of(path)
        if got != want:
            raise _mismatch(os.path.basename(path), got, want, deleted=False)
    return Source(path=os.path.abspath(path), kind="file", sha256=want)


def check_scheme(url: str, allow_http: bool, pinned: bool) -> None:
    """https always; plain http only with --allow-http *and* a checksum the user brought (``pinned``)."""
    scheme = urlparse(url).scheme.lower()
    if scheme == "https" or (scheme == "http" and allow_http and pinned):
        return
    if scheme == "http" and allow_http:
        raise Refusal("refusing to download over plain http without --sha256: %s" % url,
                      "anyone on the path could swap the archive, and only a checksum obtained elsewhere "
                      "proves it is the right file",
                      http_needs_sha256_fix(), code=2)
    if scheme == "http":
        raise Refusal("refusing to download over plain http: %s" % url,
                      "anyone on the path could swap the archive", use_https_fix(), code=2)
    raise Refusal("unsupported URL scheme %r in %s" % (scheme, url), "only https (and http with --allow-http "
                  "and --sha256) downloads are supported", download_by_hand_fix(), code=2)


def http_client():
    import requests  # why: about 170 ms, and plain local installs never need it

    return requests


def download(url: str, sha256: Optional[str], allow_http: bool, progress: Optional[Progress] = None,
             size: Optional[int] = None, kind: str = "url") -> Source:
    """Streams ``url`` into a private temp folder, hashing as it goes; a mismatch deletes the file."""
    want = normal_sha(sha256)
    check_scheme(url, allow_http, bool(want))
    requests = http_client()
    name = os.path.basename(unquote(urlparse(url).path)) or "cudnn-archive"
    temp_dir = tempfile.mkdtemp(prefix="cudnn-doctor-download-")
    path = os.path.join(temp_dir, name)
    source = Source(path=path, kind=kind, url=url, temp_dir=temp_dir)
    try:
        digest = hashlib.sha256()
        try:
            with requests.get(url, stream=True, timeout=(15, 120)) as resp:
                check_scheme(resp.url, allow_http, bool(want))  # a redirect must not downgrade to http
                if resp.status_code != 200:
                    raise Refusal("download of %s failed: HTTP %d" % (url, resp.status_code),
                                  "the server did not return the archive",
                                  download_status_fix())
                total = int(resp.headers.get("Content-Length") or 0) or size
                done = 0
                with open(path, "wb") as out:
                    for chunk in resp.iter_content(chunk_size=1 << 20):
                        done += len(chunk)
                        if done > MAX_DOWNLOAD or (size is not None and done > size):
                            raise Refusal("download of %s is larger than expected" % url,
                                          "the server sent more than %d bytes" % (size or MAX_DOWNLOAD),
                                          oversized_download_fix())
                        digest.update(chunk)
                        out.write(chunk)
                        if progress:
                            progress(done, total)
        except requests.RequestException as exc:
            raise Refusal("could not download %s (%s)" % (url, type(exc).__name__),
                          str(exc).splitlines()[0][:200] if str(exc) else "network error",
                          download_network_fix())
        got = digest.hexdigest()
        if size is not None and done != size:
            raise Refusal("download of %s is %d bytes, the manifest says %d" % (url, done, size),
                          "a cut-off or wrong file", short_download_fix())
        if want and got != want:
            raise _mismatch(name, got, want, deleted=True)
        source.sha256 = got if want else None
        return source
    except BaseException:
        source.cleanup()
        raise


def fetch_index(url: str, sha256: Optional[str], allow_http: bool, unreachable: Callable[[str], Refusal],
                headers: Optional[Mapping[str, str]] = None) -> Tuple[Any, Optional[str]]:
    """GET a small JSON index (NVIDIA's manifest, PyPI's project page): (the response, the user's sha256 pin). Over
    http the index itself could be forged (with a matching sha256), so http needs the user's own pin; a network
    error raises ``unreachable(its name)``."""
    want = normal_sha(sha256)
    check_scheme(url, allow_http, bool(want))
    requests = http_client()
    try:
        return requests.get(url, timeout=(15, 60), headers=dict(headers or {})), want
    except requests.RequestException as exc:
        raise unreachable(type(exc).__name__)


def manifest_url(version: str, override: Optional[str], env: Mapping[str, str]) -> str:
    """redistrib_<major.minor.patch>.json under NVIDIA's redist folder (or a mirror's)."""
    if override:
        return override
    label = ".".join(version.split(".")[:3])
    base = env.get(REDIST_ENV) or REDIST_BASE
    return urljoin(base if base.endswith("/") else base + "/", "redistrib_%s.json" % label)


def pick_from_manifest(data: dict, version: str, cuda: str, platform: str) -> dict:
    """relative_path/sha256/size for one platform and CUDA variant (NVIDIA's redistrib format)."""
    cudnn = data.get("cudnn") if isinstance(data, dict) else None
    if not isinstance(cudnn, dict):
        raise Refusal("the manifest has no \"cudnn\" entry", "it is not a cuDNN redistrib_<version>.json",
                      manifest_url_fix())
    found = str(cudnn.get("version", ""))
    if found and not (found == version or found.startswith(version + ".")):
        raise Refusal("the manifest describes cuDNN %s, not %s" % (found, version),
                      "installing it would give another release than asked", manifest_release_fix())
    per_platform = cudnn.get(platform)
    if not isinstance(per_platform, dict):
        platforms = sorted(k for k, v in cudnn.items() if isinstance(v, dict))
        raise Refusal("cuDNN %s has no %s build" % (version, platform), "available: %s" % ", ".join(platforms),
                      supported_platform_fix())
    variant = "cuda" + cuda.split(".")[0]
    if "relative_path" in per_platform:  # releases with a single CUDA variant list it directly
        chosen = per_platform
        named = re.search(r"_cuda(\d+)", str(per_platform["relative_path"]))
        if named and named.group(1) != cuda.split(".")[0]:
            raise Refusal("cuDNN %s for %s is only built for CUDA %s" % (version, platform, named.group(1)),
                          "a cuDNN built for another CUDA major does not work with your toolkit",
                          only_cuda_major_fix(named.group(1)))
    else:
        entry = per_platform.get(variant)
        if not isinstance(entry, dict):
            have = ", ".join(sorted(k[4:] for k in per_platform if k.startswith("cuda"))) or "none"
            raise Refusal("cuDNN %s has no build for CUDA %s on %s" % (version, cuda.split(".")[0], platform),
                          "the manifest lists CUDA %s" % have, listed_cuda_majors_fix(have))
        chosen = entry
    if not chosen.get("relative_path") or not chosen.get("sha256"):
        raise Refusal("the manifest entry for %s/%s lacks relative_path or sha256" % (platform, variant),
                      "without a checksum the download cannot be verified", manifest_url_fix())
    return {"relative_path": chosen["relative_path"], "sha256": str(chosen["sha256"]).lower(),
            "size": int(chosen["size"]) if str(chosen.get("size", "")).isdigit() else None,
            "version": found or version, "platform": platform, "variant": variant}


def from_manifest(version: str, cuda: str, platform: str, override: Optional[str], sha256: Optional[str],
                  allow_http: bool, env: Mapping[str, str], progress: Optional[Progress] = None) -> Source:
    """Resolves --version/--cuda through redistrib_<version>.json and downloads the archive it names."""
    url = manifest_url(version, override, env)
    resp, want = fetch_index(url, sha256, allow_http, lambda error: Unreachable(
        "could not fetch the cuDNN manifest %s (%s)" % (url, error), "it lists the archive, its size and its sha256",
        manifest_unreachable_fix()))
    if resp.status_code == 404:
        raise Refusal("NVIDIA lists no cuDNN release %s (%s: HTTP 404)" % (version, url),
                      "the version must be a release label like 9.1.0",
                      release_label_fix(env.get(REDIST_ENV) or REDIST_BASE))
    if resp.status_code != 200 or len(resp.content) > MAX_MANIFEST:
        raise Refusal("could not fetch the cuDNN manifest %s (HTTP %d)" % (url, resp.status_code),
                      "it lists the archive, its size and its sha256", manifest_retry_fix())
    try:
        data = resp.json()
    except ValueError:
        raise Refusal("the cuDNN manifest %s is not JSON" % url, "it cannot say which file to download",
                      manifest_url_fix())
    chosen = pick_from_manifest(data, version, cuda, platform)
    if want and want != chosen["sha256"]:
        raise Refusal("--sha256 %s disagrees with the manifest's %s" % (want, chosen["sha256"]),
                      "one of them is not for this file", drop_sha256_fix(), code=2)
    source = download(urljoin(resp.url or url, chosen["relative_path"]), chosen["sha256"], allow_http, progress,
                      size=chosen["size"], kind="manifest")
    source.manifest = dict(chosen, url=url)
    return source
