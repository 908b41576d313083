"""Answers pip's "No matching distribution found for torch==1.6.0": the wheel index (knowledge/wheel_index, what
PyPI holds) says which Pythons the release has wheels for, so the paste's Python (or, where it says none, the
Pythons either side of that range) is the cause; a local build tag (+cu117) that names no index is PyTorch's own
index, not PyPI. Pure: evidence and knowledge in, sentences and a Fix out; the index loads only when pip said so."""
from __future__ import annotations

import re
from typing import List, Optional

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from ..knowledge import Compat
from ..remedies import paste_python as py_fix
from ..versions import tag_cuda
from .answered import Answer
from .evidence import Evidence

# pip's own words for "no release of this requirement installs here" (pip 9 to 24); the requirement is one token.
_NO_DIST = re.compile("No matching distribution found for ([A-Za-z0-9][^\\s(),;`'\"]*)")
# pip's words where the requirement's own index (PyTorch's) was given: -f/--find-links or --index-url.
_OWN_INDEX = ("download.pytorch.org", "--find-links", "-f http", "--index-url", "--extra-index-url")


def _pinned(text: str) -> Optional[Requirement]:
    """The first requirement pip found no distribution for that pins one release (name==version)."""
    for m in _NO_DIST.finditer(text):
        try:
            req = Requirement(m.group(1))
        except InvalidRequirement:
            continue
        specs = list(req.specifier)
        if len(specs) == 1 and specs[0].operator in ("==", "==="):
            return req
    return None


def _pythons(project: str, release: str) -> List[int]:
    """The CPython 3 minors the release has wheels for (any platform), from the shipped or cached wheel index."""
    from ..knowledge.wheel_index import Node, load_wheel_index  # why: 0.9 s to load; only a pip failure asks

    out = set()
    for name in load_wheel_index().wheels(project, release, Node()):
        m = re.search(r"-cp3(\d{1,2})-", name)
        if m:
            out.add(int(m.group(1)))
    return sorted(out)


def _python_of(ev: Evidence) -> Optional[int]:
    said = ev.python or ""
    m = re.fullmatch(r"3\.(\d{1,2})", said)
    return int(m.group(1)) if m else None


# pip's other words for the same ("Could not find a version that satisfies the requirement jaxlib==0.4.29+cuda12.cudnn88")
_JAXLIB_LOCAL = re.compile(r"requirement (jaxlib==[\d.]+\+cuda(\d{2})\S*)")


def _jaxlib_local(ev: Evidence, compat: Compat) -> Optional[Answer]:
    """jaxlib's local CUDA builds (+cuda12.cudnn89) were never on PyPI: only JAX's own find-links page held them,
    and JAX now brings CUDA through the jax[cudaN] extra's plugin wheels (jax-22522)."""
    m = _JAXLIB_LOCAL.search(ev.text)
    extras = {str(r.get("extra")) for r in compat.framework_rows("jax")}
    if m is None or "cuda%s" % m.group(2) not in extras:  # no jax[cuda11] today: the answer would be a CPU jax
        return None
    return Answer("%s is one of jaxlib's local CUDA builds, which were never on PyPI (only JAX's own find-links "
                  "page held them), so pip finds no such wheel on the index it was given; JAX now installs CUDA "
                  "through the jax[cuda%s] extra's plugin wheels" % (m.group(1), m.group(2)),
                  py_fix.jax_extra_fix(compat, int(m.group(2))))


def from_pip(ev: Evidence, compat: Compat) -> Optional[Answer]:
    """pip found no wheel for a pinned release: the Python it runs on, or the index it was not pointed at."""
    local = _jaxlib_local(ev, compat) if "jaxlib==" in ev.text else None
    if local is not None or "No matching distribution" not in ev.text:
        return local
    req = _pinned(ev.text)
    if req is None:
        return None
    pin = next(iter(req.specifier)).version
    try:
        version = Version(pin)
    except InvalidVersion:
        return None
    release = version.public
    pys = _pythons(req.name, release)
    if not pys:
        return None
    span = "Python 3.%d-3.%d" % (pys[0], pys[-1]) if len(pys) > 1 else "Python 3.%d" % pys[0]
    has = "%s %s has wheels for %s only" % (req.name, release, span)
    python = _python_of(ev)
    install = py_fix.release_install_words(compat, req.name, version, ev.platform)
    if python is not None and python not in pys:
        use = pys[-1] if python > pys[-1] else pys[0]
        return Answer("%s, and this pip runs on Python 3.%d: no %s wheel installs there" % (has, python, req.name),
                      py_fix.supported_python_fix("3.%d" % use, install, ev.platform))
    if version.local and not any(w in ev.text for w in _OWN_INDEX):
        cpu = "; the torch installed instead is a CPU-only build ('not compiled with CUDA')" \
            if re.search(r"not compiled with CUDA", ev.text, re.I) else ""
        cuda = tag_cuda(version.local)
        if cuda and req.name == "torch":
            return Answer("%s==%s is a build on PyTorch's own index (download.pytorch.org), not on PyPI, so pip "
                          "without --index-url finds none (%s)%s" % (req.name, pin, has, cpu),
                          py_fix.torch_release_fix(compat, release, cuda, "from PyTorch's index"))
    if python is None:
        return Answer("%s: on Python 3.%d or newer (or 3.%d or older) pip finds none" % (has, pys[-1] + 1, pys[0] - 1),
                      py_fix.supported_python_fix("3.%d" % pys[-1], install, ev.platform))
    return None
