"""The wheel index: every release of the frameworks and NVIDIA's nvidia-* wheels on PyPI, each wheel file's tags,
Requires-Python and Requires-Dist (compat/wheels.json, recorded by `scripts/record_pypi.py --wheels`; `cudnn-doctor
update` keeps a newer copy in the user's cache). Loaded lazily, once per process, only by what names a version.

API (pure; the resolver in knowledge/resolve.py builds on it):

    from cudnn_doctor.knowledge.wheel_index import Node, Miss, load_wheel_index

    node = Node(python="3.10", machine="x86_64", glibc="2.28")   # platform="linux"; "" = unknown, not judged
    index = load_wheel_index()                 # the cached or shipped index; WheelIndex({}) when neither is there
    index.versions("torch")                    # every final release with a wheel, newest first
    index.installable("torch", "2.15.0", node) # None, or a Miss(kind, text): kind is one of MISS_KINDS
    index.wheels("nvidia-cudnn-cu13", "9.28.1.5", node)   # the file names that install on the node, best first
    index.requirements("torch", "2.14.1", node, extras=())  # the Requires-Dist that apply on the node
    index.resolves("jax", "0.6.2", node, extras=("cuda12",))  # None, or the Miss of the first dependency that fails
    index.pythons("torch", "1.2.0", node)      # the CPython releases it has wheels for there: ["2.7", "3.5", ...]

A Node names what pip matches a wheel against: the Python (major.minor), the processor (uname machine: x86_64,
aarch64; AMD64 on Windows), the platform and the C library (glibc major.minor, the manylinux floor). Wheel tags are
matched with packaging.tags (what pip uses), Requires-Python with packaging.specifiers, markers with
packaging.markers."""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag, compatible_tags, cpython_tags, parse_tag
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from .load import compat_dir, updated_path

WHEELS_NAME = "wheels.json"
# Why a release does not fit a node, most basic first (the order a "why not" names them in).
MISS_KINDS = ("unknown", "python", "platform", "processor", "glibc", "dependency", "driver", "gpu")
_DEPTH = 6  # dependency chains deeper than this are taken on trust (jax -> jaxlib -> plugin -> pjrt -> nvidia-*)


@dataclass(frozen=True)
class Node:
    """The machine a wheel must install on. Empty fields are not judged (a report that did not say)."""

    python: str = ""  # "3.10"
    machine: str = ""  # "x86_64", "aarch64" (uname); "AMD64" on Windows
    glibc: str = ""  # "2.28"
    platform: str = "linux"  # sys.platform: "linux", "win32"

    def describe(self) -> str:
        parts = ["Python %s" % self.python if self.python else "", self.machine,
                 "glibc %s" % self.glibc if self.glibc else ""]
        return ", ".join(p for p in parts if p) or "an unknown node"


@dataclass(frozen=True)
class Miss:
    """Why a release does not fit: `kind` (one of MISS_KINDS) and one line that says it."""

    kind: str
    text: str


def _pyver(text: str) -> Optional[Tuple[int, int]]:
    parts = text.split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (ValueError, IndexError):
        return None


def _arch(node: Node) -> str:
    m = node.machine.lower()
    return {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64"}.get(m, m)


def _platforms(node: Node, arch: str, glibc: Optional[Tuple[int, int]]) -> List[str]:
    if node.platform.startswith("win"):
        return ["win_amd64" if arch == "x86_64" else "win_arm64"]
    top = glibc or (2, 99)  # unknown glibc: every manylinux floor (not judged)
    out = ["manylinux_%d_%d_%s" % (top[0], minor, arch) for minor in range(top[1], 4, -1)]
    legacy = {(2, 17): "manylinux2014", (2, 12): "manylinux2010", (2, 5): "manylinux1"}
    out += ["%s_%s" % (name, arch) for floor, name in legacy.items() if floor <= top]
    return out + ["linux_%s" % arch]


@lru_cache(maxsize=64)
def supported_tags(node: Node) -> FrozenSet[Tag]:
    """The wheel tags pip accepts on the node (packaging.tags, as pip builds them for --python-version and
    --platform); every platform's when the processor is unknown."""
    py = _pyver(node.python)
    arches = [_arch(node)] if node.machine else ["x86_64", "aarch64"]
    glibc = _pyver(node.glibc)
    platforms = [p for a in arches for p in _platforms(node, a, glibc)]
    if py is None:
        return frozenset()
    interp = "cp%d%d" % py
    abis = [interp + "m", interp] if py < (3, 8) else [interp]  # CPython <= 3.7 wheels are cp37m (pymalloc)
    return frozenset(list(cpython_tags(py, abis=abis, platforms=platforms))
                     + list(compatible_tags(py, interp, platforms)))


class WheelIndex:
    """The index as loaded: projects by canonical name, each release's file tags, Requires-Python and lines."""

    def __init__(self, doc: Dict[str, Any], origin: str = "") -> None:
        self.doc, self.origin = doc, origin
        self.date = str(doc.get("date", ""))
        self._tags: List[str] = list(doc.get("tags", []))
        self._lines: List[str] = list(doc.get("requires", []))
        self._projects: Dict[str, Any] = doc.get("projects", {})
        self._parsed: Dict[int, FrozenSet[Tag]] = {}
        self._reqs: Dict[int, Requirement] = {}
        self._resolved: Dict[Tuple[str, str, Tuple[str, ...], Node], Optional[Miss]] = {}

    def has_project(self, project: str) -> bool:
        return canonicalize_name(project) in self._projects

    def source(self, project: str) -> str:
        return str(self._projects.get(canonicalize_name(project), {}).get("source", ""))

    def versions(self, project: str) -> List[str]:
        """Every release with a wheel, newest first."""
        rels = self._projects.get(canonicalize_name(project), {}).get("releases", {})
        return sorted(rels, key=Version, reverse=True)

    def _release(self, project: str, version: str) -> Optional[Dict[str, Any]]:
        rels: Dict[str, Dict[str, Any]] = self._projects.get(canonicalize_name(project), {}).get("releases", {})
        if version in rels:
            return rels[version]
        try:
            want = Version(version)
        except InvalidVersion:
            return None
        return next((row for v, row in rels.items() if Version(v) == want), None)

    def _file_tags(self, i: int) -> FrozenSet[Tag]:
        if i not in self._parsed:
            text = self._tags[i]
            parts = text.split("-")
            self._parsed[i] = parse_tag("-".join(parts[-3:]))
        return self._parsed[i]

    def wheels(self, project: str, version: str, node: Node) -> List[str]:
        """The wheel file names of the release that install on the node (a name as PyPI lists it: the project's
        name with '_', the build tag where the file has one)."""
        row = self._release(project, version)
        if row is None:
            return []
        ok = supported_tags(node)
        stem = canonicalize_name(project).replace("-", "_")
        return ["%s-%s-%s.whl" % (stem, version, self._tags[i]) for i in row.get("f", [])
                if not ok or self._file_tags(i) & ok]

    def installable(self, project: str, version: str, node: Node) -> Optional[Miss]:
        """None when a wheel of the release installs on the node; else why not (python, platform, processor,
        glibc, or unknown: the index does not hold the release)."""
        row = self._release(project, version)
        if row is None:
            return Miss("unknown", "PyPI has no wheel of %s %s" % (project, version))
        py = _pyver(node.python)
        needs = str(row.get("p", ""))
        if py and needs and not any(SpecifierSet(needs).contains(v % py, prereleases=True)  # a patch of it fits
                                    for v in ("%d.%d", "%d.%d.99")):
            return Miss("python", "%s %s needs Python %s; the node has %s" % (project, version, needs, node.python))
        files = [self._file_tags(i) for i in row.get("f", [])]
        plats = {t.platform for f in files for t in f}
        arch_files = [f for f in files if any(_platform_fits(t.platform, node) for t in f)]
        if not arch_files:
            return self._platform_miss(project, version, plats, node)
        if not node.python:  # the Python is unknown: the platform alone is judged (and the glibc where known)
            return None if not node.glibc or any(f & _any_python(node) for f in arch_files) else Miss(
                "glibc", "%s %s needs a newer glibc than %s" % (project, version, node.glibc))
        if any(f & supported_tags(node) for f in arch_files):
            return None
        if node.glibc and any(f & supported_tags(replace(node, glibc="")) for f in arch_files):
            floors = sorted({t.platform for f in arch_files for t in f if t.platform.startswith("manylinux")})
            return Miss("glibc", "%s %s needs a newer glibc than %s (its wheels for %s: %s)" % (
                project, version, node.glibc, _arch(node) or node.platform, ", ".join(floors)))
        pys = sorted({t.interpreter for f in arch_files for t in f}, key=_py_order)
        return Miss("python", "%s %s has no wheel for Python %s on %s (it has %s)" % (
            project, version, node.python, _arch(node) or node.platform, ", ".join(pys)))

    def pythons(self, project: str, version: str, node: Node) -> List[str]:
        """The CPython releases ("3.7") the release has wheels for on the node's platform and processor, oldest
        first, whatever the node's own Python; empty where a wheel takes any Python (py3) or none is known."""
        row = self._release(project, version)
        files = [self._file_tags(i) for i in (row or {}).get("f", [])]
        interps = {t.interpreter for f in files for t in f if _platform_fits(t.platform, node)}
        if not interps or any(not i.startswith("cp") for i in interps):
            return []
        return ["%s.%s" % (i[2], i[3:]) for i in sorted(interps, key=_py_order)]

    def _platform_miss(self, project: str, version: str, plats: Set[str], node: Node) -> Miss:
        if node.platform.startswith("win"):
            return Miss("platform", "%s %s has no Windows wheel" % (project, version))
        return Miss("processor", "%s %s has no wheel for %s (only %s)" % (
            project, version, _arch(node), ", ".join(sorted(plats)) or "none"))

    def requirements(self, project: str, version: str, node: Node, extras: Sequence[str] = ()) -> List[Requirement]:
        """The release's Requires-Dist lines that apply on the node with these extras (markers evaluated as pip
        does; the wheel read for the node's processor, else the x86_64 one)."""
        row = self._release(project, version)
        if row is None:
            return []
        table: Dict[str, List[int]] = row.get("r", {})
        arch = _arch(node)
        ids = table.get(arch) or table.get("any") or table.get("x86_64") or next(iter(table.values()), [])
        env = _environment(node)
        out = []
        for i in ids:
            req = self._req(i)
            if req.marker is None or any(req.marker.evaluate(dict(env, extra=e)) for e in ("",) + tuple(extras)):
                out.append(req)
        return out

    def _req(self, i: int) -> Requirement:
        if i not in self._reqs:
            self._reqs[i] = Requirement(self._lines[i])
        return self._reqs[i]

    def resolves(self, project: str, version: str, node: Node, extras: Sequence[str] = (), depth: int = 0
                 ) -> Optional[Miss]:
        """None when the release and every dependency the index knows (recursively) has a wheel for the node
        within its specifier; else the first that does not. Projects the index does not hold are taken on trust."""
        key = (canonicalize_name(project), version, tuple(sorted(extras)), node)
        if key not in self._resolved:
            self._resolved[key] = None  # a dependency cycle is taken as resolving (pip would see it once)
            self._resolved[key] = self._resolve(project, version, node, extras, depth)
        return self._resolved[key]

    def _resolve(self, project: str, version: str, node: Node, extras: Sequence[str], depth: int) -> Optional[Miss]:
        miss = self.installable(project, version, node)
        if miss is not None or depth >= _DEPTH:
            return miss
        for req in self.requirements(project, version, node, extras):
            if not self.has_project(req.name):
                continue
            if self._some_fit(req, node, depth) is None:
                return Miss("dependency", "%s %s needs %s, which has no wheel for %s" % (
                    project, version, req, node.describe()))
        return None

    def _some_fit(self, req: Requirement, node: Node, depth: int) -> Optional[str]:
        for v in self.versions(req.name):
            if req.specifier.contains(v, prereleases=True) and self.resolves(
                    req.name, v, node, tuple(req.extras), depth + 1) is None:
                return v
        return None


def _any_python(node: Node) -> FrozenSet[Tag]:
    """The platform tags a wheel of any Python may carry on the node (its glibc judged)."""
    return frozenset(t for minor in range(6, 20) for t in supported_tags(Node("3.%d" % minor, node.machine,
                                                                             node.glibc, node.platform)))


def _py_order(interp: str) -> Tuple[int, str]:
    digits = "".join(c for c in interp if c.isdigit())
    return (int(digits) if digits else 0, interp)


def _platform_fits(plat: str, node: Node) -> bool:
    if plat == "any":
        return True
    arch = _arch(node)
    if node.platform.startswith("win"):
        return plat.startswith("win")
    return plat.endswith("_" + arch) and not plat.startswith("win") if arch else not plat.startswith("win")


def _environment(node: Node) -> Dict[str, str]:
    py = node.python or "3.12"
    win = node.platform.startswith("win")
    return {"python_version": py, "python_full_version": py + ".0", "implementation_name": "cpython",
            "platform_python_implementation": "CPython", "os_name": "nt" if win else "posix",
            "sys_platform": "win32" if win else "linux", "platform_system": "Windows" if win else "Linux",
            "platform_machine": "AMD64" if win else (_arch(node) or "x86_64"), "platform_release": "",
            "platform_version": "", "implementation_version": py + ".0"}


def shipped_path() -> Path:
    return compat_dir() / WHEELS_NAME


def updated_wheels_path() -> Path:
    return updated_path().with_name(WHEELS_NAME)


_LOADED: List[WheelIndex] = []


def load_wheel_index() -> WheelIndex:
    """The index, read once per process: `cudnn-doctor update`'s copy where it is valid and not older, else the
    shipped one (an empty index where neither can be read)."""
    if _LOADED:
        return _LOADED[0]
    best: Optional[WheelIndex] = None
    for path, origin in ((shipped_path(), "shipped"), (updated_wheels_path(), "")):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and isinstance(doc.get("projects"), dict) and (
                best is None or str(doc.get("date", "")) >= best.date):
            best = WheelIndex(doc, origin or str(path))
    _LOADED.append(best or WheelIndex({}, "none"))
    return _LOADED[0]
