"""One set of cuDNN libraries for every framework of one Python environment, judged by what each framework accepts at
run time (compat [cudnn_acceptance]), not by its pin. pip keeps one nvidia-cudnn-cuNN release in site-packages'
nvidia/cudnn folder; a framework built with cuDNN 9.3 runs with 9.10 (XLA's rule), and cuDNN 8 and 9 are other
sonames (libcudnn.so.8, libcudnn.so.9), so the other major can live in a folder beside the environment, its files
linked into the site's folder that the frameworks search (or, for one that searches none, that folder on
LD_LIBRARY_PATH), without touching the other framework. Only where no such set exists (two CUDA
builds of one major: the same soname) do the frameworks need separate environments."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Container, Dict, List, NamedTuple, Optional, Sequence, Tuple

from packaging.version import Version

from ..knowledge import Compat
from ..model import Facts, Fix
from ..queries import (compiled_cudnn, cudnn_runs_on_cc, environment_prefix, framework_kind, gpus_with_cc, known_cc,
                       missing_sublibraries, platform_of, same_file)
from ..versions import canonical_name, major_of, release3, ver
from .acting import pip
from .environment_needs import Need, applying_requirements
from .shell import advice, noted, prepend_ld_path, q, run

# Frameworks whose own Python side loads cuDNN from site-packages' nvidia/cudnn folder (torch's preload of the wheels
# on sys.path, the JAX plugin's nvidia.cudnn import): their major stays in the site, the other goes beside it.
_PRELOADS_FROM_SITE = ("torch", "jax")


class Placement(NamedTuple):
    """One cuDNN release for the frameworks that load this major: in the site (pip's own folder) or beside it."""

    project: str
    release: str  # a pinned release (9.10.2.21), or `M.*` where no framework pins one (pip takes the newest)
    needs: Tuple[Need, ...]
    folder: Optional[str] = None  # None: the site's nvidia/cudnn; else the `pip --target` folder beside it
    files: Tuple[str, ...] = ()  # beside: its major's library files (libcudnn.so.8 and its sub-libraries)

    @property
    def requirement(self) -> str:
        return "%s==%s" % (self.project, self.release)

    @property
    def lib(self) -> Optional[str]:
        return self.folder + "/nvidia/cudnn/lib" if self.folder else None


@dataclass(frozen=True)
class Layout:
    """What serves every framework of one site: the site's release and, for another major, a folder beside it."""

    site: str
    placements: Tuple[Placement, ...]
    why: Dict[str, str] = field(default_factory=dict)  # framework label -> why it runs with its placement


def _built(need: Need) -> Optional[str]:
    """The cuDNN the framework was built with when its major is the one it asks for (its build record, else its
    pin's floor)."""
    built = compiled_cudnn(need.framework)
    return built if built and major_of(built) == need.major and "." in built else None


def _candidates(compat: Compat, facts: Facts, site: str, needs: Sequence[Need]) -> List[str]:
    """The release installed in the site now (nothing to change where every framework accepts it), the releases the
    frameworks' own pins name exactly (newest first), then the newest release with a wheel (`M.m.p.*`). A lower bound
    (`>=9.8`) names no release: `==9.8` would match no wheel (9.8.0.87)."""
    named = {s.version for n in needs if n.requirement is not None for s in n.requirement.specifier
             if s.operator in ("==", "===") and "*" not in s.version}
    ordered = sorted(named, key=lambda r: ver(r) or Version("0"), reverse=True)
    have = _site_release(facts, site, needs[0].project)
    first = [have] if have and major_of(have) == needs[0].major else []
    # a release whose wheel is broken as built (9.20.0.48's cu13 wheel lacks an engine) is no answer, pinned or not
    return [r for r in first + ordered if compat.bad_wheel(needs[0].project, r) is None] + \
        [_newest(compat, facts, needs[0])]


def _newest(compat: Compat, facts: Facts, need: Need) -> str:
    """`M.m.p.*`: the newest release of the need's major PyPI has a wheel of, of its project for this processor and
    the machine's glibc (pip takes that release's one wheel), else `M.*`."""
    newest = compat.exists.newest_cudnn_wheel(need.project, need.major, platform_of(facts), facts.host.machine,
                                              facts.host.glibc)
    return "%s.*" % newest if newest else "%d.*" % need.major


def _accepted(compat: Compat, facts: Facts, need: Need, release: str) -> bool:
    ccs = [known_cc(g) for g in gpus_with_cc(facts)]
    plain = release.rstrip(".*") if release.endswith(".*") else release
    cuda = need.framework.cuda_version or ""
    if "." in plain and not all(cudnn_runs_on_cc(compat, plain, cuda, cc) for cc in ccs):
        return False  # no kernels for one of the GPUs (cuDNN 9.11+ below Turing)
    return compat.acceptance.accepts(framework_kind(need.framework), _built(need), plain, ccs).accepts


def _placement(compat: Compat, facts: Facts, site: str, needs: Sequence[Need]) -> Optional[Placement]:
    for release in _candidates(compat, facts, site, needs):
        if all(_accepted(compat, facts, n, release) for n in needs):
            return Placement(needs[0].project, release, tuple(needs))
    return None


def solve_layout(facts: Facts, compat: Compat, site: str, needs: Sequence[Need]) -> Tuple[Optional[Layout], str]:
    """The one set of cuDNN libraries that serves every need of one site, or None and why none does."""
    groups: Dict[int, List[Need]] = {}
    for need in needs:
        groups.setdefault(need.major, []).append(need)
    for major, group in groups.items():
        projects = sorted({n.project for n in group})
        if len(projects) > 1:  # one soname, two CUDA builds: a process can load only one libcudnn.so.N
            return None, "%s and %s both ship libcudnn.so.%d, and a process loads one" % (
                projects[0], projects[1], major)
    if len(groups) > 2:
        return None, "three cuDNN majors cannot share one environment's search path"
    placed = []
    for major, group in sorted(groups.items()):
        placement = _placement(compat, facts, site, group)
        if placement is None:
            return None, "no cuDNN %d release is accepted by %s" % (major, " and ".join(n.label for n in group))
        placed.append(placement)
    if len(placed) == 2:
        home = _home(facts, site, placed)
        other = placed[1 - home]
        major = other.needs[0].major
        files = ("libcudnn.so.%d" % major,) + tuple(compat.cudnn_layout(major).get("linux_sublibraries", []))
        placed[1 - home] = Placement(other.project, other.release, other.needs, "%s/cudnn%d" % (environment_prefix(site), major),
                                     files)
    why = {}
    for p in placed:
        for n in p.needs:
            pinned = n.requirement is not None and not p.release.endswith("*") and \
                n.requirement.specifier.contains(p.release, prereleases=True)
            why[n.label] = ("loads libcudnn.so.%d from %s" % (n.major, p.lib) if p.folder
                            else "runs with cuDNN %s" % p.release.replace(".*", "")) + (
                "" if pinned else _reason(compat, n))
    return Layout(site, tuple(placed), why), ""


def _reason(compat: Compat, need: Need) -> str:
    """Why a framework runs with a release other than its pin: its own run-time rule, and where it was read."""
    built = _built(need)
    row = compat.acceptance.acceptance_rule(framework_kind(need.framework))
    if row is None:
        return ""
    url = str(row["source"]).split(" ")[0]
    if row["rule"] == "same-major-newer-minor" and built:
        return ", which its own check accepts (a newer minor than its build's %s; %s)" % (built, url)
    return ", which it takes: it asks for libcudnn.so.%d and checks no minor (%s)" % (need.major, url)


def _home(facts: Facts, site: str, placed: Sequence[Placement]) -> int:
    """Which placement keeps the site's own folder: the one a framework's Python side loads from it, else the one
    installed there now, else the newer major."""
    for i, p in enumerate(placed):
        if any(framework_kind(n.framework) in _PRELOADS_FROM_SITE for n in p.needs):
            return i
    installed = {canonical_name(w["name"]): major_of(w.get("version")) for w in facts.python.nvidia_wheels
                 if same_file(w.get("location"), site)}
    for i, p in enumerate(placed):
        if installed.get(p.project) == p.needs[0].major:
            return i
    return 1


def _site_release(facts: Facts, site: str, project: str) -> Optional[str]:
    return next((w.get("version") for w in facts.python.nvidia_wheels
                 if same_file(w.get("location"), site) and canonical_name(w["name"]) == project), None)


def _holds(facts: Facts, placement: Placement) -> bool:
    """Whether the folder beside the site already holds this major (a copy the probe found there)."""
    return any(same_file(c.directory, placement.lib) and c.major == placement.needs[0].major for c in facts.cudnn)


def layout_fix(facts: Facts, compat: Compat, layout: Layout, removed: Sequence[str] = ()) -> Fix:
    """The commands that install the layout (the site's release with pip; the other major with `pip install
    --target` into its folder, its files linked into the site's folder where its frameworks search that, else the
    folder first on LD_LIBRARY_PATH), and the pins pip will warn about, said with why each framework still runs.
    Nothing to install: words that say to leave it. ``removed``: wheels a step before it already uninstalls. The
    site's release kept where its copy lacks sub-libraries is reinstalled whole, on every route to this layout (draw
    301202-0: a JAX rebuild for CUDA 12 kept 9.10.2, whose missing libcudnn_ops killed torch and JAX after fix)."""
    commands: List[str] = []
    damaged = kept_but_damaged(facts, compat, layout)
    site_lib = layout.site.rstrip("/") + "/nvidia/cudnn/lib"
    linked = {p.needs[0].major for p in layout.placements if p.folder and p.files
              and all(_searches(n, site_lib) for n in p.needs)}
    for p in sorted(layout.placements, key=lambda p: p.folder is not None):  # the site's own release first
        if p.folder is None:
            changes = _site_release(facts, layout.site, p.project) != p.release
            # Out first: another CUDA's wheel of this major writes the same files (uninstalled after, it would delete
            # the new ones); a wheel of the major linked in from beside would have its own files replaced by the links
            # (draw 913377-43: nvidia-cudnn-cu11 8.9.6's libcudnn.so.8 became a link, and pip's record of it false).
            majors = linked | ({p.needs[0].major} if changes else set())
            stale = [name for name in other_cudnn_wheels(facts, layout.site, p.project, majors) if name not in removed]
            commands += [pip("uninstall -y %s" % name) for name in stale]
            if changes:
                commands.append(pip('install "%s"' % p.requirement))
            elif stale or damaged == p.requirement:
                # the wheels share nvidia/cudnn's own files (its __init__.py, the headers): the kept one whole
                commands.append(pip('install --force-reinstall --no-deps "%s"' % p.requirement))
            commands += _unversioned_links(p, site_lib)
            # a framework whose library searches no nvidia/cudnn folder (ONNX Runtime, CuPy 13) finds the site's
            # copy only on LD_LIBRARY_PATH, behind the other major's folder (another soname: it does not shadow it)
            if any(_plain_path_only(n) for n in p.needs) and not any(
                    same_file(e, site_lib) for e in facts.loader.ld_library_path):
                commands.append(prepend_ld_path(site_lib))
            continue
        if not _holds(facts, p):
            commands.append(pip('install --no-deps --target %s "%s"' % (q(p.folder), p.requirement)))
        commands += _unversioned_links(p, p.lib or "")
        if p.files and all(_searches(n, site_lib) for n in p.needs):
            # Every framework of that major searches the site's own folder (its RUNPATH, its preload): each file
            # linked there serves it with no variable, so a shell that never activates the environment (one
            # started from PATH, a service) gets it too (draws 291129-16, -31). The other major's files have other
            # names: nothing of the site's own is replaced.
            commands += ["ln -sf %s %s" % (q("%s/%s" % (p.lib, name)), q(site_lib + "/" + name)) for name in p.files]
        elif not any(same_file(e, p.lib) for e in facts.loader.ld_library_path):
            commands.append(prepend_ld_path(p.lib or ""))
    stray = _stray_release_folders(facts, layout, site_lib)
    first = prepend_ld_path(site_lib)
    if stray and not _comes_first(facts.loader.ld_library_path, site_lib, stray) and first not in commands:
        # The site's own folder ahead of them: their other libraries (a conda prefix's cuBLAS, a toolkit's runtime)
        # stay where the environment's other programs find them. Behind the other major's folder, which must win
        # for its own soname's sub-libraries (draw 422601-1: Paddle's cuDNN 8 took parts from the site): each
        # export goes in front, so the site's line comes before that folder's.
        exports = [i for i, c in enumerate(commands) if c.startswith("export LD_LIBRARY_PATH=")]
        commands.insert(exports[0] if exports else len(commands), first)
    warned = _pin_warnings(layout)
    runs = "; ".join("%s %s" % (label, why) for label, why in sorted(layout.why.items()))
    if not commands:
        if warned:  # pip's check not run: it exits 1 on the very pins this leaves (draw 20261201-151)
            return advice("leave the environment's cuDNN as it is: %s; pip's own check keeps reporting %s"
                          % (runs, ", ".join(warned)))
        return advice("leave the environment's cuDNN as it is: %s" % runs)
    note = ("   (pip will warn that %s; they run all the same: %s)" % (" and ".join(warned), runs) if warned
            else "   (%s)" % runs)
    return noted(run(*commands), note)


def _comes_first(entries: List[str], folder: str, others: List[str]) -> bool:
    """Whether `folder` is on LD_LIBRARY_PATH ahead of every one of `others`."""
    at = next((i for i, e in enumerate(entries) if same_file(e, folder)), None)
    return at is not None and all(not same_file(e, o) for e in entries[:at] for o in others)


def _stray_release_folders(facts: Facts, layout: Layout, site_lib: str) -> List[str]:
    """LD_LIBRARY_PATH entries holding another release of a major the layout keeps in the site: libcudnn_graph
    dlopens its engines searching LD_LIBRARY_PATH before its RUNPATH, so that folder's engines would pair with the
    site's graph unless the site's folder comes first (draws 422601-1, -12, -22: JAX given 9.28 in the site took
    9.8's engines from ~/conda/lib and found no engine). A release written `M.*` (pip's newest) differs from every
    copy."""
    out = []
    for p in layout.placements:
        if p.folder is not None:
            continue
        plain = p.release[:-2] if p.release.endswith(".*") else p.release
        want = release3(plain) if plain.count(".") >= 2 else None
        out += [entry for entry in facts.loader.ld_library_path if not same_file(entry, site_lib) and any(
            same_file(c.directory, entry) and c.major == p.needs[0].major and (want is None or release3(c.version) != want)
            for c in facts.cudnn)]
    return list(dict.fromkeys(out))


def kept_but_damaged(facts: Facts, compat: Compat, layout: Layout) -> Optional[str]:
    """The requirement of the site's release the layout keeps where its copy there lacks sub-libraries: the layout
    installs nothing in the site, so that copy must be reinstalled whole (draws 913377-70, 20261204-17: TensorFlow
    still lacked libcudnn_engines_precompiled after the fix)."""
    site_lib = layout.site.rstrip("/") + "/nvidia/cudnn/lib"
    for p in layout.placements:
        if p.folder is None and _site_release(facts, layout.site, p.project) == p.release and any(
                same_file(c.directory, site_lib) and c.major == p.needs[0].major and missing_sublibraries(compat, c)
                for c in facts.cudnn):
            return p.requirement
    return None


def other_cudnn_wheels(facts: Facts, site: str, project: str, majors: Container[Optional[int]]) -> List[str]:
    """The site's cuDNN wheels of these majors other than ``project`` (another CUDA's build: the same files)."""
    return [canonical_name(w["name"]) for w in facts.python.nvidia_wheels
            if same_file(w.get("location"), site) and canonical_name(w["name"]).startswith("nvidia-cudnn-")
            and canonical_name(w["name"]) != project and major_of(w.get("version")) in majors]


def _unversioned_links(placement: Placement, lib: str) -> List[str]:
    """PaddlePaddle dlopens the unversioned libcudnn.so, which NVIDIA's wheel lacks: the link beside its major."""
    asked = {n.framework.resolved_cudnn.name for n in placement.needs if n.framework.resolved_cudnn is not None}
    return ["ln -sf libcudnn.so.%d %s" % (placement.needs[0].major, q(lib + "/" + name))
            for name in sorted(asked) if not name[-1:].isdigit()]


def _searches(need: Need, folder: str) -> bool:
    """Whether the framework's library searches ``folder`` (its RUNPATH or RPATH), or its Python side loads from the
    site's nvidia/cudnn folder (torch's preload, the JAX plugin's nvidia.cudnn import)."""
    searched = need.framework.library_search_path
    return framework_kind(need.framework) in _PRELOADS_FROM_SITE or (
        searched is not None and any(same_file(d, folder) for d in searched))


def _plain_path_only(need: Need) -> bool:
    searched = need.framework.library_search_path
    return searched is not None and not any(d.rstrip("/").endswith("nvidia/cudnn/lib") for d in searched) and \
        framework_kind(need.framework) not in _PRELOADS_FROM_SITE


def _pin_warnings(layout: Layout) -> List[str]:
    """'tensorflow 2.19.0 requires nvidia-cudnn-cu12==9.3.0.75' for every pin the site's release does not meet."""
    site = next((p for p in layout.placements if p.folder is None), None)
    out = []
    for p in layout.placements:
        for n in p.needs:
            req = n.requirement
            own = any(canonical_name(r.name).startswith("nvidia-cudnn-") for r in applying_requirements(n.framework))
            if req is None or site is None or not own or canonical_name(req.name) != site.project:
                continue  # a need compat names (ONNX Runtime's) is no pin pip knows
            # `M.*`: pip takes the newest of the major, which a pin of one release does not name
            release = site.release.replace("*", "9999")
            if not req.specifier.contains(release, prereleases=True):
                out.append("%s requires %s%s" % (n.label, canonical_name(req.name), req.specifier))
    return out
