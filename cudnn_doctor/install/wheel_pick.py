"""Which of PyPI's nvidia-cudnn-cuNN wheel files `install --version V --cuda N` takes for its target: the file
names parsed by `packaging.utils.parse_wheel_filename` and matched against the target's tags as pip would
(`packaging.tags`), so every manylinux tag NVIDIA uses (manylinux1, manylinux2014, manylinux_2_27, manylinux_2_28)
fits where the target's glibc meets its floor, on x86_64 and aarch64 (NVIDIA's sbsa), and win_amd64 on Windows.
Pure: it is handed PyPI's file list (the simple API's JSON, PEP 691) and reads nothing itself."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Tuple
from urllib.parse import urljoin

from packaging.tags import Tag, compatible_tags
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import Version

Glibc = Tuple[int, int]

# NVIDIA's platform words (the redist manifests' keys) -> the machine a wheel tag names.
_WHEEL_ARCH = {"linux-x86_64": "x86_64", "linux-sbsa": "aarch64", "linux-aarch64": "aarch64"}
# The legacy manylinux names and the glibc each stands for (PEP 600: manylinux1 = 2.5, 2010 = 2.12, 2014 = 2.17).
_LEGACY = {(2, 5): "manylinux1", (2, 12): "manylinux2010", (2, 17): "manylinux2014"}
# The lowest glibc a manylinux wheel of each machine can name (manylinux1 for x86_64, manylinux2014 for aarch64).
_LOWEST = {"x86_64": 5, "aarch64": 17}
_ANY_GLIBC = 99  # a target whose glibc is not known: any manylinux floor is accepted (and said in the answer)


@dataclass(frozen=True)
class WheelFile:
    """One wheel file of the project as PyPI lists it."""

    filename: str
    version: Version
    tags: FrozenSet[Tag]
    sha256: str
    size: Optional[int]
    url: str
    yanked: bool

    def glibc_floor(self) -> Optional[Glibc]:
        """The lowest glibc any of its manylinux tags needs; None for a wheel that names none."""
        floors = [g for g in (manylinux_glibc(t.platform) for t in self.tags) if g is not None]
        return min(floors) if floors else None


def manylinux_glibc(platform: str) -> Optional[Glibc]:
    """'manylinux_2_27_x86_64' -> (2, 27); 'manylinux2014_aarch64' -> (2, 17); None for other tags."""
    if platform.startswith("manylinux_"):
        parts = platform.split("_")
        if len(parts) >= 4 and parts[1].isdigit() and parts[2].isdigit():
            return int(parts[1]), int(parts[2])
        return None
    return next((g for g, name in _LEGACY.items() if platform.startswith(name + "_")), None)


def platform_tags(platform: str, glibc: Optional[Glibc]) -> List[str]:
    """The wheel platform tags a target takes, best first (as pip orders them: the highest glibc floor first):
    manylinux_2_M for every M from the target's glibc down to the lowest, with the legacy names beside their
    floors; win_amd64 for Windows; [] for a platform NVIDIA ships no wheel for."""
    if platform.startswith("windows"):
        return ["win_amd64"] if platform.endswith("x86_64") else []
    arch = _WHEEL_ARCH.get(platform)
    if arch is None:
        return []
    top = glibc[1] if glibc and glibc[0] == 2 else _ANY_GLIBC
    out: List[str] = []
    for minor in range(top, _LOWEST[arch] - 1, -1):
        out.append("manylinux_2_%d_%s" % (minor, arch))
        legacy = _LEGACY.get((2, minor))
        if legacy:
            out.append("%s_%s" % (legacy, arch))
    return out


def supported_tags(platform: str, glibc: Optional[Glibc]) -> List[Tag]:
    """Every (python, abi, platform) tag the target takes, best first; the cuDNN wheels are py3-none-<platform>
    (their files are copied, never imported, so any Python 3 tag fits)."""
    return list(compatible_tags((3, 13), None, platform_tags(platform, glibc)))


def wheel_files(listed: Iterable[Mapping[str, Any]], base_url: str = "") -> List[WheelFile]:
    """The wheels of a PEP 691 file list (sdists and names packaging cannot parse are left out)."""
    out = []
    for f in listed:
        name = str(f.get("filename", ""))
        if not name.endswith(".whl"):
            continue
        try:
            _, version, _, tags = parse_wheel_filename(name)
        except InvalidWheelFilename:
            continue
        hashes = f.get("hashes") if isinstance(f.get("hashes"), dict) else {}
        size = f.get("size")
        out.append(WheelFile(name, version, frozenset(tags), str((hashes or {}).get("sha256", "")).lower(),
                             size if isinstance(size, int) else None, urljoin(base_url, str(f.get("url", name))),
                             bool(f.get("yanked"))))
    return out


def _asked(version: str) -> Optional[Tuple[int, ...]]:
    try:
        return Version(version).release
    except ValueError:
        return None


def release_matches(wheel: WheelFile, version: str) -> bool:
    """'9.28.1' is any 9.28.1.x final release (9.0.0 is also 9.0.0.312.post1, where NVIDIA put the aarch64 wheel);
    a full label ('9.28.1.4', '9.28.0.42.dev76646929') asks for that release only. Development and pre-releases
    count only when asked by their full label."""
    asked = _asked(version)
    if asked is None:
        return False
    label = Version(version)
    if label.is_prerelease or label.is_devrelease or label.is_postrelease or label.local:
        return wheel.version == label
    if wheel.version.is_prerelease or wheel.version.is_devrelease:
        return False
    if len(asked) >= 4:
        return wheel.version.release == asked
    return wheel.version.release[:len(asked)] == asked


@dataclass
class Choice:
    """The file taken, or why none was: `why` is a clause ('PyPI lists no 9.28.1 release of nvidia-cudnn-cu12')."""

    wheel: Optional[WheelFile]
    why: str = ""
    glibc_note: str = ""  # set when the target's glibc was not known and the wheel names a floor


def pick_wheel(files: Sequence[WheelFile], project: str, version: str, platform: str,
               glibc: Optional[Glibc]) -> Choice:
    """The newest release matching `version` that has a wheel for the target, and its best-fitting file."""
    ranks: Dict[Tag, int] = {tag: i for i, tag in enumerate(supported_tags(platform, glibc))}

    def rank(w: WheelFile) -> Optional[int]:
        found = [ranks[t] for t in w.tags if t in ranks]
        return min(found) if found else None

    matching = [w for w in files if release_matches(w, version) and not w.yanked]
    fitting = [w for w in matching if rank(w) is not None]
    if fitting:
        newest = max(w.version for w in fitting)
        best = min((w for w in fitting if w.version == newest), key=lambda w: rank(w) or 0)
        floor = best.glibc_floor()
        note = "" if glibc or floor is None else "the target's glibc is not known; this wheel needs %d.%d or newer" \
            % floor
        return Choice(best, glibc_note=note)
    return Choice(None, _why_none(files, matching, project, version, platform, glibc))


def _why_none(files: Sequence[WheelFile], matching: Sequence[WheelFile], project: str, version: str, platform: str,
              glibc: Optional[Glibc]) -> str:
    if _asked(version) is None:
        return "%r is not a release label such as 9.28.1" % version
    if not matching:
        finals = sorted({w.version for w in files if not (w.version.is_prerelease or w.version.is_devrelease)})
        older = [v for v in finals if v.release < (_asked(version) or ())]
        return "PyPI lists no %s release of cuDNN %s (newest: %s%s)" % (
            project, version, finals[-1] if finals else "none",
            ", newest before it: %s" % older[-1] if older and older[-1] != finals[-1] else "")
    arch_tags = set(platform_tags(platform, None))
    same_arch = [w for w in matching if any(t.platform in arch_tags for t in w.tags)]
    if same_arch and glibc:
        floor = min(w.glibc_floor() or (2, 0) for w in same_arch)
        return "PyPI's %s wheels of cuDNN %s need glibc %d.%d or newer; this machine has %d.%d" % (
            project, version, floor[0], floor[1], glibc[0], glibc[1])
    have = sorted({t.platform for w in matching for t in w.tags})
    return "PyPI has no %s wheel of cuDNN %s for %s (it has %s)" % (project, version, platform, ", ".join(have))
