"""Reading what the sources say: PyPI release lists, wheel Requires-Dist pins, NVIDIA redistrib manifests."""
from __future__ import annotations

import re
from email.parser import Parser
from typing import Any, Dict, List, Optional, Tuple

from packaging.markers import InvalidMarker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

# The machine a pin is read for: the pip wheels NVIDIA and the frameworks ship are Linux x86_64 first.
LINUX_X86_64 = {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64",
                "os_name": "posix", "platform_python_implementation": "CPython",
                "implementation_name": "cpython", "python_version": "3.11", "python_full_version": "3.11.9"}


def _version(text: str) -> Optional[Version]:
    try:
        return Version(text)
    except InvalidVersion:
        return None


def pypi_releases(project: Dict[str, Any]) -> List[Tuple[str, str]]:
    """(version, first upload date) of every final release that has a file not yanked, oldest first."""
    out = []
    for version, files in (project.get("releases") or {}).items():
        v = _version(version)
        live = [f for f in files if not f.get("yanked")]
        if v is None or v.is_prerelease or v.is_devrelease or not live:
            continue
        dates = sorted(str(f.get("upload_time") or "")[:10] for f in live)
        out.append((version, dates[0] if dates else ""))
    return sorted(out, key=lambda r: Version(r[0]))


def linux_wheel(project: Dict[str, Any], version: str, python_tag: str = "") -> Optional[Dict[str, Any]]:
    """The manylinux x86_64 wheel of a release (of that Python tag when given), or None."""
    for f in (project.get("releases") or {}).get(version, []):
        name = str(f.get("filename") or "")
        if name.endswith(".whl") and "manylinux" in name and "x86_64" in name and python_tag in name:
            return f
    return None


def requires(metadata: str, extras: Tuple[str, ...] = ()) -> Dict[str, str]:
    """{canonical project name: specifier} of the Requires-Dist lines that apply on Linux x86_64 (with extras)."""
    message = Parser().parsestr(metadata, headersonly=True)
    out: Dict[str, str] = {}
    for line in message.get_all("Requires-Dist") or []:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        marker = req.marker
        applies = marker is None
        if marker is not None:
            try:
                applies = any(marker.evaluate(dict(LINUX_X86_64, extra=e)) for e in ("",) + extras)
            except (InvalidMarker, KeyError):
                applies = False
        if applies:
            out[canonicalize_name(req.name)] = str(req.specifier)
    return out


def pinned(spec: str) -> Optional[str]:
    """The version of an exact pin ('==9.1.0.70'), else None."""
    m = re.fullmatch(r"===?\s*([0-9][0-9A-Za-z.]*)", spec.strip())
    return m.group(1) if m else None


def cudnn_manifest(doc: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """What a cuDNN redistrib_<label>.json says: its release, full version, date and CUDA majors built for."""
    entry = doc.get("cudnn")
    if not isinstance(entry, dict) or not doc.get("release_label"):
        return None
    majors = set(str(v) for v in entry.get("cuda_variant") or [])
    for key, value in entry.items():
        # Platforms hold one archive per variant ("cuda12"); older manifests name no cuda_variant list.
        if isinstance(value, dict):
            majors.update(k[4:] for k in value if re.fullmatch(r"cuda\d+", k))
    return {"release": str(doc["release_label"]), "version": str(entry.get("version", "")),
            "date": str(doc.get("release_date", "")), "cuda_majors": sorted(majors, key=int)}


def cuda_manifest(doc: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """What a CUDA redistrib_<label>.json says about the driver: cuda_compat is the driver packaged with it."""
    compat = doc.get("cuda_compat")
    if not isinstance(compat, dict) or not doc.get("release_label") or not compat.get("version"):
        return None
    return {"cuda": str(doc["release_label"]), "driver_linux": str(compat["version"]),
            "date": str(doc.get("release_date", ""))}
