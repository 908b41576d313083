"""Another CUDA build of a framework's own release, where two frameworks of one site need two CUDA builds of one cuDNN
major (one soname: a process loads one libcudnn.so.9). JAX 0.7.2 built for CUDA 12 beside torch 2.14 built for
CUDA 13 runs as JAX 0.7.2's CUDA 13 build, whose cuDNN wheel is torch's: the same release and the same code, only
the CUDA libraries change, so the user's programs keep working in the environment they already use.

What a PyPI build installs is read from PyPI's own metadata (the wheel index), starting from the framework's install
recipe in compat ('jax[cuda<M>]', 'cupy-cuda<M>x'); it must have wheels for the node's Python, processor and glibc.
PyPI's builds are tried first; then a torch release's builds on PyTorch's own index (compat's release matrix names
each, with the cuDNN it pins): torch 2.14.1 for CUDA 13 beside TensorFlow for CUDA 12 becomes its cu126 build. Either
way the driver (where one was read) must run the build's CUDA and every GPU must be one it has code for."""
from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING, Dict, List, NamedTuple, Optional, Sequence, Tuple

from ..knowledge import Build, Compat
from ..model import Facts, Fix, FrameworkFacts
from ..queries import cc_below, driver_cuda, driver_version, framework_kind, gpus_with_cc, known_cc, platform_of
from ..readers.fatbin import GpuCode, runs_on
from ..versions import canonical_name, major_of, requirements
from .acting import pip
from .environment_layout import Layout, layout_fix, other_cudnn_wheels, solve_layout
from .environment_needs import Need, need_of
from .shell import noted, run, then
from .software import torch_variant_tag

if TYPE_CHECKING:
    from packaging.requirements import Requirement

    from ..knowledge.wheel_index import Node, WheelIndex


class Rebuild(NamedTuple):
    """One framework moved to its release's build for another CUDA major."""

    need: Need  # the framework as that build: its own cuDNN pin
    removes: Tuple[str, ...]  # the installed build's projects in the site (jax-cuda12-plugin, jax-cuda12-pjrt)
    # pip's words for the other build: '"jax-cuda13-pjrt==0.7.2" ...', '"torch==2.14.1+cu126" --index-url ...'
    installs: str
    cuda: str  # the other build's CUDA ("13", "12.6")
    where: str = "PyPI"  # where the build comes from: PyPI, or PyTorch's own index


def rebuilt_layout(facts: Facts, compat: Compat, site: str, needs: Sequence[Need]
                   ) -> Optional[Tuple[Layout, Rebuild]]:
    """The first other build of one framework with which one set of cuDNN libraries serves every need of the site,
    and that set; None where no build does (or the index cannot tell)."""
    # why: the index module and packaging.requirements cost about 14 ms at start, and only a site whose frameworks
    # cannot share one cuDNN asks them
    from ..knowledge.wheel_index import Node, load_wheel_index

    index = load_wheel_index()
    for pypi in (True, False):  # PyPI's own builds first: no other index, and what they install is read, not assumed
        for i, need in enumerate(needs):
            node = Node(*_node_fields(facts, need.framework))
            for rebuild in rebuilds(compat, facts, index, need, node, pypi):
                trial = list(needs)
                trial[i] = rebuild.need
                layout, _ = solve_layout(facts, compat, site, trial)
                if layout is not None:
                    return layout, rebuild
    return None


def rebuild_fix(facts: Facts, compat: Compat, layout: Layout, rebuild: Rebuild) -> Fix:
    """The installed build's projects out, the other build's in, then the cuDNN set that serves them all; said with
    why the framework still runs the user's programs."""
    fw = rebuild.need.framework
    # Another CUDA's cuDNN wheel of the same major writes the files the new build's wheel brings: out first (taken
    # out after, its record would delete them)
    other = other_cudnn_wheels(facts, layout.site, rebuild.need.project, {rebuild.need.major})
    removes = list(rebuild.removes) + other
    swap = run(*([pip("uninstall -y %s" % " ".join(removes))] if removes else []), pip("install %s" % rebuild.installs))
    build = "%s %s's build for CUDA %s from %s: the same release, with the other frameworks' CUDA libraries" % (
        framework_kind(fw) or fw.name, fw.version.split("+")[0], rebuild.cuda, rebuild.where)
    rest = layout_fix(facts, compat, layout, other)
    if rest.commands:
        return then(noted(swap, "   (%s)" % build), rest, joint="; then ")
    # the site's cuDNN already serves them all: why each runs, beside the swap
    return noted(swap, "   (%s; %s)" % (build, "; ".join("%s %s" % kv for kv in sorted(layout.why.items()))))


def rebuilds(compat: Compat, facts: Facts, index: "WheelIndex", need: Need, node: "Node", pypi: bool = True
             ) -> List[Rebuild]:
    """The framework's release built for each other CUDA major that the machine runs: PyPI's builds that install on
    the node (the framework environment's Python, the processor and glibc), or (``pypi`` False) a torch release's
    builds on PyTorch's own index."""
    fw = need.framework
    kind = framework_kind(fw) or ""
    have, release = major_of(fw.cuda_version), fw.version.split("+")[0]
    out = []
    for build in compat.framework_builds(kind):
        other = major_of(build.cuda)
        if build.release != release or build.default != pypi or other is None or other == have or \
                not _machine_runs(compat, facts, build):
            continue
        found = _pypi_rebuild(compat, facts, index, need, node, build) if pypi else \
            _torch_index_rebuild(compat, need, build) if kind == "torch" else None
        if found is not None and found.need.major == need.major:
            out.append(found)
    return out


def _pypi_rebuild(compat: Compat, facts: Facts, index: "WheelIndex", need: Need, node: "Node", build: Build
                  ) -> Optional[Rebuild]:
    fw = need.framework
    own = _own_projects(index, compat, build, node)
    old = [b for b in compat.framework_builds(build.framework) if b.release == build.release and b.default
           and major_of(b.cuda) == major_of(fw.cuda_version)]
    mine = _own_projects(index, compat, old[0], node) if old else {}
    new = {name: req for name, req in own.items() if name not in mine}
    if not new or any(index.installable(name, build.release, node) is not None for name in new):
        return None
    installed = {canonical_name(f.name) for f in facts.python.frameworks
                 if f.location == fw.location and f.consumer_library and f.consumer_library == fw.consumer_library}
    removes = tuple(sorted(n for n in installed | {canonical_name(fw.name)} if n not in own))
    requires = [str(r) for r in _cuda_requirements(index, own, build.release, node)]
    rebuilt = need_of(compat, dataclasses.replace(fw, name=_counterpart(fw.name, sorted(new)), cuda_version=build.cuda,
                                                  cudnn_version=None, requires=requires))
    return Rebuild(rebuilt, removes, " ".join('"%s"' % new[n] for n in sorted(new)), build.cuda) \
        if rebuilt is not None else None


def _torch_index_rebuild(compat: Compat, need: Need, build: Build) -> Optional[Rebuild]:
    """torch's build for another CUDA from PyTorch's own index, with the cuDNN wheel its release matrix names, named
    by its local version (torch==2.14.1+cu126): pip replaces the installed build, which `torch==2.14.1` would leave
    ("Requirement already satisfied"), and no other page's torch 2.14.1 can answer for it."""
    wheel, index = compat.cudnn_wheel(build.cuda), compat.install_recipe("torch").get("index")
    if not build.cudnn or not wheel or not index:
        return None
    tag = torch_variant_tag(build.cuda)
    rebuilt = need_of(compat, dataclasses.replace(
        need.framework, version="%s+%s" % (build.release, tag), cuda_version=build.cuda, cudnn_version=build.cudnn,
        requires=["%s==%s" % (wheel, build.cudnn)]))
    words = '"torch==%s+%s" --index-url %s' % (build.release, tag, str(index).replace("<MM>", tag[2:]))
    return Rebuild(rebuilt, (), words, build.cuda, "PyTorch's own index") if rebuilt is not None else None


def _counterpart(name: str, projects: Sequence[str]) -> str:
    """The other build's project that stands where `name` stood (jax-cuda12-pjrt -> jax-cuda13-pjrt): the same name
    but for its digits."""
    shape = re.sub(r"\d+", "", canonical_name(name))
    return next((p for p in sorted(projects) if re.sub(r"\d+", "", p) == shape), sorted(projects)[0])


def _own_projects(index: "WheelIndex", compat: Compat, build: Build, node: "Node") -> Dict[str, str]:
    """The projects a build installs at exactly its release: its recipe's (cupy-cuda13x, jax[cuda13]) and what that
    pins to the release in turn (jaxlib, jax-cuda13-plugin[with-cuda] -> jax-cuda13-pjrt), each as the requirement to
    print. Those every build shares (jax, jaxlib) drop out when two builds are compared."""
    out: Dict[str, str] = {}
    todo = [req for _, req in requirements([compat.build_pip_project(build)])]
    while todo:
        req = todo.pop()
        name = canonical_name(req.name)
        if name.startswith("nvidia-") or not index.has_project(name) or name in out:
            continue
        out[name] = "%s%s==%s" % (name, "[%s]" % ",".join(sorted(req.extras)) if req.extras else "", build.release)
        for dep in index.requirements(name, build.release, node, tuple(sorted(req.extras))):
            if dep.specifier.contains(build.release, prereleases=True) and _pins_one(dep):
                todo.append(dep)
    return out


def _pins_one(req: "Requirement") -> bool:
    """Whether the requirement names one release: `==V`, or `<=V,>=V` as jax writes it."""
    specs = list(req.specifier)
    return (len(specs) == 1 and specs[0].operator in ("==", "===") and "*" not in specs[0].version) or (
        len(specs) == 2 and {s.operator for s in specs} == {"<=", ">="} and len({s.version for s in specs}) == 1)


def _cuda_requirements(index: "WheelIndex", own: Dict[str, str], release: str, node: "Node") -> List["Requirement"]:
    """The nvidia-* requirements of the build's own projects (under the extras it installs them with)."""
    out = []
    for _, req in requirements(list(own.values())):
        out += [r for r in index.requirements(canonical_name(req.name), release, node, tuple(sorted(req.extras)))
                if canonical_name(r.name).startswith("nvidia-")]
    return out


def _machine_runs(compat: Compat, facts: Facts, build: Build) -> bool:
    """Whether the driver (where read) runs the build's CUDA and every GPU with a known capability is one the build
    runs on (a documented floor: JAX's CUDA 13 build needs 7.5; else its cubins and PTX, where compat has them)."""
    version = driver_version(facts)
    if version:
        branch = major_of(build.driver_branch) if build.driver_branch else None
        runs = driver_cuda(facts, compat)
        if (branch is not None and (major_of(version) or 0) < branch) or (
                runs is not None and (major_of(runs) or 0) < (major_of(build.cuda) or 0)):
            return False
    ccs = [known_cc(g) for g in gpus_with_cc(facts)]
    if build.min_cc:
        return not any(cc_below(cc, build.min_cc) for cc in ccs)
    code = GpuCode(sass=list(build.sass), ptx=list(build.ptx))
    return not (build.sass or build.ptx) or all(runs_on(code, cc) is not None for cc in ccs)


def _node_fields(facts: Facts, fw: FrameworkFacts) -> Tuple[str, str, str, str]:
    """The wheel index's Node of the framework's environment: its Python, the processor, glibc and platform."""
    python = next((str(p.get("version")) for p in facts.python.pythons if p.get("site") == fw.location
                   and p.get("version")), "")
    return python, facts.host.machine or "", facts.host.glibc or "", "win32" if platform_of(facts) == "windows" \
        else "linux"
