"""What a pick must install on, beside the driver and GPUs: the Python of the environment that will hold the
framework, the processor and the glibc (facts.python.pythons, facts.host.machine and .glibc; or the same keys of a
node's saved report), as the wheel index's Node; and which of a framework's builds PyPI has a wheel of there."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from packaging.requirements import InvalidRequirement, Requirement

from ..knowledge import Build, Compat
from ..knowledge.wheel_index import Miss, Node, WheelIndex


def _python(pythons: Sequence[Dict[str, Any]], framework_sites: Sequence[str]) -> Tuple[str, str]:
    """(version, where it was read) of the environment a pick is for: the one that already holds a framework, else
    the first found; ('', '') where none says."""
    rows = [p for p in pythons if isinstance(p, dict) and p.get("version")]
    holding = [p for p in rows if p.get("site") in framework_sites]
    if not rows:
        return "", ""
    chosen = (holding or rows)[0]
    return str(chosen["version"]), str(chosen.get("source") or chosen.get("site") or "")


def node_of(python_facts: Dict[str, Any], host_facts: Dict[str, Any], platform: str) -> Tuple[Node, str]:
    """The Node (and where its Python was read) from the facts' python and host parts, as dicts."""
    sites = [str(f.get("location") or "") for f in python_facts.get("frameworks") or [] if isinstance(f, dict)]
    version, source = _python(python_facts.get("pythons") or [], sites)
    return Node(version, str(host_facts.get("machine") or ""), str(host_facts.get("glibc") or ""),
                "win32" if platform.startswith("win") else "linux"), source


def requirement_of(compat: Compat, build: Build) -> Optional[Requirement]:
    """What pip installs for the build, as a requirement ('tensorflow[and-cuda]', 'jax[cuda12]', 'cupy-cuda12x')."""
    try:
        return Requirement(compat.build_pip_project(build))
    except InvalidRequirement:
        return None


def wheel_miss(compat: Compat, index: WheelIndex, build: Build, node: Node) -> Optional[Miss]:
    """Why PyPI has no wheel of the build for the node (with its dependencies), or None. A build from the
    framework's own index (PyTorch's cuXXX) is judged by the same release's PyPI wheels: the Pythons and processors
    (its dependencies come from that index, so they are not judged)."""
    req = requirement_of(compat, build)
    if req is None or not index.has_project(req.name):
        return None
    if not build.default:
        return index.installable(req.name, build.release, node)
    extras = tuple(sorted(req.extras))
    miss = index.resolves(req.name, build.release, node, extras)
    if miss is None and _cuda_deps(index, req.name, build.release, _x86(node), extras) and not _cuda_deps(
            index, req.name, build.release, node, extras):
        # the wheel installs, but it is not this build: PyPI's wheel for the node pulls in no CUDA (a CPU build)
        return Miss("processor", "PyPI's %s %s wheel for %s is a CPU build (its Requires-Dist names no NVIDIA "
                                 "wheel there)" % (req.name, build.release, node.machine or node.platform))
    return miss


def _x86(node: Node) -> Node:
    return Node(node.python, "x86_64", node.glibc, node.platform)


def _cuda_deps(index: WheelIndex, project: str, version: str, node: Node, extras: Tuple[str, ...]) -> bool:
    return any(r.name.lower().startswith(("nvidia-", "cuda-", "jax-cuda"))
               for r in index.requirements(project, version, node, extras))


def kind_of(why: List[str]) -> str:
    """A judge's verdict as a resolver miss kind: the driver's (it cannot run the build's CUDA), else the GPUs'."""
    return "driver" if any(w.startswith(("driver ", "cannot tell whether driver")) for w in why) else "gpu"
