"""The one resolver: the newest release within a spec whose wheel exists for the node's Python, processor and glibc,
whose dependencies resolve there (every nvidia-* and framework pin the wheel index knows has a wheel for the node),
and that the caller's own judgement (the driver runs its CUDA, its code covers every GPU) accepts. Where nothing
fits it says why, per kind (MISS_KINDS: python, processor, glibc, dependency, driver, gpu, ...), and what would fit.

API (pure; used by `pick`, the PyPI route of `install --version` and the shared-environment fix):

    from cudnn_doctor.knowledge.resolve import newest, release_wheel
    from cudnn_doctor.knowledge.wheel_index import Miss, Node, load_wheel_index

    index = load_wheel_index()
    node = Node(python="3.10", machine="x86_64", glibc="2.28")
    res = newest(index, "torch", ">=2.6", node)                       # -> Resolution
    res = newest(index, "jax", "", node, extras=("cuda12",),
                 accept=lambda version: None if ok(version) else Miss("driver", "..."))
    res.version        # "2.14.1", or None where nothing fits
    res.misses         # [(version, Miss)]: the newer releases within the spec, newest first, and why each does not fit
    res.why_none()     # where nothing fits: one line per kind that stopped the releases, the newest example of each
    res.would_fit()    # what would make the newest release fit ("torch 2.15.0 installs on Python 3.11, ...")
    res.kinds()        # the kinds of misses seen, in MISS_KINDS order

    release_wheel(index, "nvidia-cudnn-cu13", "9.28.1", node)
        # -> ("9.28.1.5", ["nvidia_cudnn_cu13-9.28.1.5-py3-none-manylinux_2_27_x86_64.whl"]) or (None, [])

`accept` is called only for releases that install on the node, newest first, until one passes; it returns None for
a release it accepts or a Miss (kind "driver" or "gpu") that says why not."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import parse_tag
from packaging.version import Version

from .wheel_index import MISS_KINDS, Miss, Node, WheelIndex

Accept = Callable[[str], Optional[Miss]]


@dataclass
class Resolution:
    project: str
    spec: str
    node: Node
    extras: Tuple[str, ...] = ()
    version: Optional[str] = None
    misses: List[Tuple[str, Miss]] = field(default_factory=list)
    candidates: int = 0  # releases within the spec the index holds
    index: Optional[WheelIndex] = None

    def kinds(self) -> List[str]:
        seen = {m.kind for _, m in self.misses}
        return [k for k in MISS_KINDS if k in seen]

    def why_none(self) -> List[str]:
        """Where nothing fits: for each kind that stopped a release, the newest release it stopped and why."""
        if self.version is not None:
            return []
        if not self.candidates:
            return ["PyPI has no %s release%s" % (self.project, " within %s" % self.spec if self.spec else "")]
        first: Dict[str, Miss] = {}
        for _, miss in self.misses:
            first.setdefault(miss.kind, miss)
        return [first[k].text for k in MISS_KINDS if k in first]

    def would_fit(self) -> List[str]:
        """What would make the newest release within the spec fit: the Pythons and processors it has wheels for."""
        if self.index is None or not self.misses:
            return []
        version, miss = self.misses[0]
        if miss.kind in ("python", "processor", "glibc", "platform"):
            return [where_it_installs(self.index, self.project, version)]
        return []


def spec_of(spec: str) -> SpecifierSet:
    """'2.8' (that series), '==2.8.1', '>=2.6,<2.9', '' (any). Raises ValueError for text packaging cannot read."""
    text = spec.strip()
    if text and text[0].isdigit():
        text = "==%s.*" % text if text.count(".") < 2 else "==%s" % text
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        raise ValueError("%r is not a version spec (try 2.8, ==2.8.1 or '>=2.6,<2.9')" % spec)


def newest(index: WheelIndex, project: str, spec: str, node: Node, extras: Sequence[str] = (),
           accept: Optional[Accept] = None, versions: Optional[Sequence[str]] = None) -> Resolution:
    """The newest release of `project` within `spec` that installs on `node` with its dependencies and that
    `accept` passes. `versions` limits the releases tried (newest first), e.g. to those the knowledge has builds of;
    by default every release the index holds."""
    wanted = spec_of(spec)
    pool = list(versions) if versions is not None else index.versions(project)
    pool = sorted((v for v in pool if wanted.contains(v, prereleases=False)), key=Version, reverse=True)
    out = Resolution(project, spec, node, tuple(extras), candidates=len(pool), index=index)
    for version in pool:
        miss = index.resolves(project, version, node, extras) if index.has_project(project) else None
        if miss is None and accept is not None:
            miss = accept(version)
        if miss is None:
            out.version = version
            return out
        out.misses.append((version, miss))
    return out


def where_it_installs(index: WheelIndex, project: str, version: str) -> str:
    """'torch 2.15.0 has wheels for Python 3.11-3.15 on x86_64 (glibc 2.28 or newer), aarch64 (glibc 2.28 or newer)'."""
    pys, floors = set(), {}  # type: ignore[var-annotated]
    for name in index.wheels(project, version, Node()):
        for tag in parse_tag("-".join(name[:-4].split("-")[-3:])):
            if tag.interpreter.startswith("cp") and not tag.abi.endswith("t") and tag.interpreter[3:].isdigit():
                pys.add(int(tag.interpreter[3:]))
            for arch in ("x86_64", "aarch64"):
                if tag.platform.endswith(arch) and tag.platform.startswith("manylinux"):
                    floors.setdefault(arch, set()).add(_glibc_floor(tag.platform))
            if tag.platform == "any":
                floors.setdefault("any platform", set())
    py_text = ("Python 3.%d-3.%d" % (min(pys), max(pys))) if pys else "any Python 3"
    where = ["%s (glibc %d.%d or newer)" % ((arch,) + min(f)) if f else arch for arch, f in sorted(floors.items())]
    return "%s %s has wheels for %s on %s" % (project, version, py_text, ", ".join(where) or "no Linux")


def _glibc_floor(platform: str) -> Tuple[int, int]:
    legacy = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}
    head = platform.split("_")
    if head[0] in legacy:
        return legacy[head[0]]
    return int(head[1]), int(head[2])


def release_wheel(index: WheelIndex, project: str, release: str, node: Node) -> Tuple[Optional[str], List[str]]:
    """The newest version of `project` that is `release` or a finer one ('9.28.1' -> '9.28.1.5'), with the file
    names that install on the node; (None, []) where none does."""
    prefix = Version(release).release
    for version in index.versions(project):
        if Version(version).release[:len(prefix)] == prefix and index.installable(project, version, node) is None:
            return version, index.wheels(project, version, node)
    return None, []
