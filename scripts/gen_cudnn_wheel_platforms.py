"""Print compat/cudnn_layout.toml's [wheel_platforms] table: for each nvidia-cudnn-cuNN project on PyPI, the cuDNN
releases (major.minor.patch) that have a wheel for each platform, and on Linux the oldest glibc one of its wheels
installs on (the manylinux tag's floor: manylinux2014 is 2.17, manylinux_2_27 is 2.27), read from PyPI's JSON API
(the files of every release; development and yanked releases left out). knowledge/exists.py answers "is there a
wheel of 9.18.0 for Windows?" (no: 9.18.0.77 shipped Linux wheels only) and "the newest cuDNN 9 wheel a glibc 2.17
node installs" from it.

    python scripts/gen_cudnn_wheel_platforms.py           # print the table (paste it over the one in the file)
    python scripts/gen_cudnn_wheel_platforms.py --check   # exit 1 when the file's table differs from PyPI's
"""
from __future__ import annotations

import argparse
import json
import sys
import urllib.request
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

ROOT = Path(__file__).resolve().parents[1]
PROJECTS = ("nvidia-cudnn-cu11", "nvidia-cudnn-cu12", "nvidia-cudnn-cu13")


def platform_of(tag_platform: str) -> Optional[str]:
    """A wheel's platform tag as the knowledge names platforms (linux-x86_64, linux-aarch64, windows-x86_64, ...)."""
    if "linux" in tag_platform:  # manylinux1_x86_64, manylinux2014_aarch64, manylinux_2_27_x86_64, ...
        return next(("linux-" + arch for arch in ("x86_64", "aarch64", "ppc64le") if tag_platform.endswith(arch)),
                    None)
    return {"win_amd64": "windows-x86_64", "win_arm64": "windows-arm64"}.get(tag_platform)


_LEGACY = {"manylinux1": "2.5", "manylinux2010": "2.12", "manylinux2014": "2.17"}


def glibc_floor(tag_platform: str) -> Optional[str]:
    """The oldest glibc a manylinux wheel installs on ('2.27' for manylinux_2_27_x86_64); None off Linux."""
    parts = tag_platform.split("_")
    if parts[0] in _LEGACY:
        return _LEGACY[parts[0]]
    if parts[0] == "manylinux" and len(parts) > 2 and parts[1].isdigit() and parts[2].isdigit():
        return "%s.%s" % (parts[1], parts[2])
    return None


def read(project: str) -> Dict[Tuple[str, str], List[str]]:
    """{(platform, glibc floor or ''): releases}: a release's floor on a platform is its wheels' lowest."""
    with urllib.request.urlopen("https://pypi.org/pypi/%s/json" % project, timeout=60) as response:
        doc = json.load(response)
    floors: Dict[Tuple[str, str], Version] = {}  # (platform, release) -> the lowest glibc of its wheels there
    for text, files in doc["releases"].items():
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        if version.is_devrelease or version.is_prerelease or version.major == 0:
            continue
        release = "%d.%d.%d" % version.release[:3]
        for f in files:
            if f.get("yanked") or not f["filename"].endswith(".whl"):
                continue
            try:
                tags = parse_wheel_filename(f["filename"])[3]
            except InvalidWheelFilename:
                continue
            for tag in tags:
                where = platform_of(tag.platform)
                if where:
                    floor = Version(glibc_floor(tag.platform) or "0")
                    floors[(where, release)] = min(floor, floors.get((where, release), floor))
    found: Dict[Tuple[str, str], set] = {}
    for (where, release), floor in floors.items():
        found.setdefault((where, "" if floor == Version("0") else str(floor)), set()).add(release)
    return {k: sorted(v, key=Version) for k, v in sorted(found.items(), key=lambda kv: (kv[0][0], Version(kv[0][1] or "0")))}


def rows() -> List[Tuple[str, str, str, List[str]]]:
    return [(p, where, glibc, releases) for p in PROJECTS for (where, glibc), releases in read(p).items()]


def toml(table: List[Tuple[str, str, str, List[str]]]) -> str:
    lines = ["[wheel_platforms]",
             'source = "%s"' % ", ".join("https://pypi.org/pypi/%s/json" % p for p in PROJECTS),
             'status = "confirmed"',
             'generated_by = "scripts/gen_cudnn_wheel_platforms.py"',
             "rows = ["]
    for project, where, glibc, releases in table:
        lines.append('  { project = "%s", platform = "%s", %sreleases = [%s] },'
                     % (project, where, 'glibc = "%s", ' % glibc if glibc else "",
                        ", ".join('"%s"' % r for r in releases)))
    return "\n".join(lines + ["]"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    table = rows()
    if not args.check:
        print(toml(table))
        return 0
    import tomllib

    have = tomllib.loads((ROOT / "compat" / "cudnn_layout.toml").read_text())["wheel_platforms"]["rows"]
    stored = [(r["project"], r["platform"], r.get("glibc", ""), r["releases"]) for r in have]
    if stored != table:
        print("compat/cudnn_layout.toml [wheel_platforms] differs from PyPI: run this script and paste its output")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
