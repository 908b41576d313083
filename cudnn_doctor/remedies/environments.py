"""Fixes solved for a whole Python environment: every framework installed in one site-packages folder shares its one
nvidia/cudnn folder, so a cuDNN change for one is a change for all. solve() finds the set of cuDNN libraries every
framework accepts at run time (remedies/environment_layout.py); where none does, one framework's release built for
the others' CUDA (remedies/environment_rebuild.py), and only where none is, separate_environments_fix() gives one
environment per framework, each with the framework's own pins (read from its metadata, never assumed)."""
from __future__ import annotations

import dataclasses
import os
import re
import shlex
from typing import TYPE_CHECKING, Dict, List, Mapping, NamedTuple, Optional, Sequence, Set, Tuple

from packaging.requirements import InvalidRequirement, Requirement

from ..knowledge import Compat
from ..model import PRELOADED, Facts, Fix, FrameworkFacts
from ..queries import framework_kind, own_cudnn_wheel_dir, site_wheels
from ..versions import canonical_name
from .acting import at, pip, system, under_root
from .environment_layout import Layout, layout_fix, solve_layout
from .environment_rebuild import Rebuild, rebuild_fix, rebuilt_layout
from .onnxruntime import cuda_library_wheels
from .environment_needs import Need as Need, applying_requirements as applying_requirements, need_of as need_of
from .shell import (drop_ld_path_line, dropped_entries, dropped_ld_entries, drops_ld_path, drops_preload, or_else,
                    q, run, then)
from .software import torch_source

if TYPE_CHECKING:
    from packaging.requirements import Requirement

# The extra whose nvidia-* pins install a framework's CUDA and cuDNN wheels, per kind (its metadata's own names).
_GPU_EXTRA = {"tensorflow": ("and-cuda",), "onnxruntime": ("cuda", "cudnn")}


def exact_pin(req: "Requirement") -> Optional[str]:
    """'name==version' where the requirement names one release, else None."""
    same = [s.version for s in req.specifier if s.operator in ("==", "===") and "*" not in s.version]
    return "%s==%s" % (canonical_name(req.name), same[0]) if same else None


def missing_pins(facts: Facts, fw: FrameworkFacts, projects: Sequence[str]) -> List[str]:
    """The framework's exact pins of `projects` that its environment does not hold at the pinned release."""
    installed = site_wheels(facts, fw.location)
    wanted = set(projects)
    out = []
    for req in applying_requirements(fw):
        pin = exact_pin(req)
        if pin and canonical_name(req.name) in wanted and installed.get(canonical_name(req.name)) != pin.split("==")[1]:
            out.append(pin)
    return out


class SiteCudnn(NamedTuple):
    """What serves one site's frameworks: their needs, the set of cuDNN libraries that serves them as built (else
    None and why), and where none does, one framework's other build with the set that serves them then."""
    needs: List[Need]
    layout: Optional[Layout]
    why: str
    rebuilt: Optional[Tuple[Layout, Rebuild]]


def solve(facts: Facts, compat: Compat, site: str) -> SiteCudnn:
    """Every cuDNN need of the frameworks in one site-packages folder, and the one set of cuDNN libraries that serves
    them all by what each accepts at run time (environment_layout), or None and why none does; then, once, the other
    build that would let them share (environment_rebuild: it reads the wheel index)."""
    needs: List[Need] = []
    seen = set()
    for fw in facts.python.frameworks:
        need = need_of(compat, fw) if fw.location == site else None
        if need is not None and (fw.consumer_library or fw.name) not in seen:
            seen.add(fw.consumer_library or fw.name)
            needs.append(need)
    if len(needs) < 2:
        return SiteCudnn(needs, None, "", None)
    layout, why = solve_layout(facts, compat, site, needs)
    return SiteCudnn(needs, layout, why, rebuilt_layout(facts, compat, site, needs) if layout is None else None)


def install_line(compat: Compat, fw: FrameworkFacts) -> str:
    """What installs this framework release with the CUDA and cuDNN wheels it pins (its GPU extra where it has one;
    a JAX plugin through jax's cudaNN extra)."""
    kind = framework_kind(fw)
    version = fw.version.split("+")[0]
    if kind == "jax" and fw.name.startswith("jax-cuda"):
        return '"jax[cuda%s]==%s"' % (fw.name[len("jax-cuda"):].split("-")[0], version)
    if kind == "torch" and "+cu" in fw.version and fw.cuda_version:  # a build from PyTorch's own index
        return torch_source(compat, version, fw.cuda_version, quoted=True)
    extras = [e for e in _GPU_EXTRA.get(kind or "", ()) if e in fw.extras]
    return '"%s%s==%s"' % (fw.name, "[%s]" % ",".join(extras) if extras else "", version)


def separate_environments_fix(compat: Compat, needs: Sequence[Need], facts: Optional[Facts] = None) -> Fix:
    """One virtual environment per framework, each installing the framework with its own pins; a framework whose
    metadata pins no cuDNN wheel gets the wheel of its need beside it (its release's pin from compat, else the
    newest of its build's major: `==N.*`), and the wheels of the CUDA libraries ``facts`` saw it miss (an ONNX
    Runtime built for CUDA 11 pins none), for its build's CUDA major; where it dlopens the unversioned libcudnn.so
    (Paddle) that link is made in the wheel's folder, and where its library searches no nvidia folder (no RPATH into
    it: ONNX Runtime, CuPy 13, Paddle) those folders go first on LD_LIBRARY_PATH in the new environment's activate
    script: set in the shell that runs the line, it would reach every other environment started from that shell."""
    steps = []
    # The shell's LD_LIBRARY_PATH folders that hold a cuDNN: a new environment made and used from that shell would
    # load it ahead of its own wheel's (draw 20261201-40: TensorFlow's new environment took a CUDA 11 cuDNN 8.9.6)
    held = {os.path.normpath(c.directory) for c in facts.cudnn} if facts is not None else set()
    shadowing = [e for e in facts.loader.ld_library_path if os.path.normpath(e) in held] if facts is not None else []
    # NVIDIA's wheels in a PYTHONPATH folder (`pip install --target`): the new environment's pip would count them
    # installed and leave out the framework's own cuDNN pin (draw 20261205-40: JAX's new environment had none)
    quiet = "PYTHONPATH= " if facts is not None and any(w.get("via") == "PYTHONPATH"
                                                        for w in facts.python.nvidia_wheels) else ""
    for need in needs:
        fw = need.framework
        folder = "~/venvs/%s-%s" % (fw.name, fw.version.split("+")[0])
        line = install_line(compat, fw)
        if not any(canonical_name(r.name).startswith("nvidia-cudnn-") for r in applying_requirements(fw)):
            line += ' "%s"' % need.wants
        wheels = _missing_cuda_wheels(compat, facts, fw) if facts is not None else []
        line += "".join(' "%s"' % w for w, _ in wheels)
        # --upgrade-deps: the pip venv bundles may be too old for the framework's metadata (pip 23.2 does not read
        # jax's `jax-cuda12-plugin[with_cuda]` as the plugin's `with-cuda` extra: draw 20261204-2 got no cuDNN)
        step = "%s -m venv --upgrade-deps %s && %s%s/bin/pip install %s" % (_python_of(fw), folder, quiet, folder, line)
        site = "%s/lib/python3*/site-packages" % folder
        wheel_folder = "$(echo %s/nvidia/cudnn/lib)" % site
        asked = fw.resolved_cudnn.name if fw.resolved_cudnn is not None else None
        if asked and not asked[-1:].isdigit():  # Paddle dlopens the unversioned name, which NVIDIA's wheel lacks
            step += " && ln -sf libcudnn.so.%d %s/%s" % (need.major, wheel_folder, asked)
        searched = fw.library_search_path
        if searched is not None and not any(d.endswith("nvidia/cudnn/lib") for d in searched):
            folders = [wheel_folder] + ["$(echo %s/%s)" % (site, f) for _, f in wheels]
            step += " && echo 'export LD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}' >> %s/bin/activate" % (
                ":".join(folders), folder)
        if shadowing:  # searched before any RUNPATH: the new environment's activate takes them off again
            step += " && printf '%%s\\n' %s >> %s/bin/activate" % (shlex.quote(drop_ld_path_line(shadowing)), folder)
        steps.append(system(step, privileged=False))
    return run(*steps)


def _python_of(fw: FrameworkFacts) -> str:
    """The interpreter a framework's new environment is made with: its site's Python minor (`python3.11`), so that
    the release it pins has a wheel there (python3 may be another minor: TensorFlow 2.15 has no wheel for 3.12)."""
    m = re.search(r"/python(3\.\d+)/site-packages", fw.location or "")
    return "python%s" % m.group(1) if m else "python3"


def shared_or_separate_fix(facts: Facts, compat: Compat, solved: SiteCudnn) -> Fix:
    """Where no set of cuDNN libraries serves the frameworks as they are built: one framework moved to its release's
    build for the other frameworks' CUDA (environment_rebuild), where PyPI has one that this node installs and the
    machine runs; else one environment per framework."""
    if solved.rebuilt is not None:  # (its caller's beside_framework makes it a user site's fix where it is one)
        return rebuild_fix(facts, compat, *solved.rebuilt)
    return separate_environments_fix(compat, solved.needs, facts)


def _missing_cuda_wheels(compat: Compat, facts: Facts, fw: FrameworkFacts) -> List[Tuple[str, str]]:
    """(wheel, site-packages folder) of each CUDA library the framework could not load, for its build's CUDA
    major."""
    libs = (facts.machine_state.get("framework_libraries") or {}).get("%s %s" % (fw.name, fw.version)) or {}
    major = str(fw.cuda_version or "").split(".")[0]
    missing = sorted(n for n, path in libs.items() if path is None)
    return cuda_library_wheels(compat, missing, major) if major.isdigit() else []


# A command that changes the site's cuDNN: a cuDNN wheel, or a framework (re)installed with the pins that bring one
# (JAX's CD503 fix `pip install -U "jax[cuda12]"`, TensorFlow's [and-cuda], a torch release).
_CHANGES_CUDNN = re.compile(r'nvidia-cudnn-|"jax\[cuda\d+\]|"tensorflow\[and-cuda\]|"torch==')


def whole_environment_fix(facts: Facts, compat: Compat, fw: FrameworkFacts, own: Fix) -> Fix:
    """A framework's own fix, unless other frameworks share its environment's one nvidia/cudnn folder and that fix
    would install a cuDNN wheel there: then the fix installs the set of cuDNN libraries every one of them accepts at
    run time (a release of the major in the site, the other major beside it; words to leave it where it is in
    place); only where no set serves them all, one environment per framework. A fix that installs no cuDNN (an
    LD_LIBRARY_PATH entry dropped) stands: it changes nothing the others load from the site."""
    changes = any(_CHANGES_CUDNN.search(c) for c in own.commands) or _strands_another(facts, fw, own)
    if not changes and sum(other.location == fw.location for other in facts.python.frameworks) < 2:
        return beside_framework(facts, fw, own)
    solved = solve(facts, compat, fw.location)
    needs, layout = solved.needs, solved.layout
    if len(needs) < 2 or not any(n.framework is fw for n in needs):
        return beside_framework(facts, fw, own)
    if layout is None and solved.rebuilt is None:
        # No set serves them all here: every error's fix is the one plan. A framework's own fix in place would
        # change the environment the frameworks leave, and its shell lines would reach the new environments made
        # from that shell (draw 20261201-190: Paddle's LD_LIBRARY_PATH line gave the new TensorFlow a CUDA 11 cuDNN).
        return beside_framework(facts, fw, shared_or_separate_fix(facts, compat, solved), whole_site=True)
    # A preload taken away hands every framework of the site back to the site's own copy: where no one set of
    # libraries serves them there, the plan comes with it, not a round later (draw 2621880-32: jax-cuda13 then loaded
    # the CUDA 12 cuDNN that ONNX Runtime's wheel had put in the site).
    if not changes and not (layout is None and any(drops_preload(c) for c in own.commands)):
        return beside_framework(facts, fw, own)
    if layout is None:
        whole = shared_or_separate_fix(facts, compat, solved)
    else:
        whole = layout_fix(facts, compat, layout)
    # What the framework's own fix changes beside the site's packages stays: an LD_LIBRARY_PATH entry that hands it an
    # older copy ahead of the site (draw 20261129-32: a conda prefix's cuDNN 9.1 kept beating the 9.3 installed). The
    # site's own nvidia/cudnn folder is not one of those: the plan makes its copy the one every framework there runs
    # with, and a framework whose library searches only the plain path (ONNX Runtime) finds it only through that
    # entry (draw 131314756-58: JAX's own CD501 fix dropped it, then the plan moved JAX to CUDA 12 and kept the site's
    # copy, and ONNX Runtime found no libcudnn.so.9).
    beside = [c for c in (_keeping_folder(c, own_cudnn_wheel_dir(fw)) for c in own.commands)
              if c and (drops_ld_path(c) or drops_preload(c)) and c not in whole.commands]
    return beside_framework(facts, fw, then(whole, run(*beside)) if beside and whole.commands else whole,
                            whole_site=True)


def _keeping_folder(command: str, folder: str) -> str:
    """The command, but where it is a line that takes entries off LD_LIBRARY_PATH, without ``folder`` among them
    (nothing where that was its only entry)."""
    if not drops_ld_path(command) or "grep -vxF" not in command:
        return command
    entries = dropped_entries(command)
    kept = [e for e in entries if os.path.normpath(e) != folder]
    if len(kept) == len(entries):
        return command
    return drop_ld_path_line(kept) if kept else ""


def _strands_another(facts: Facts, fw: FrameworkFacts, own: Fix) -> bool:
    """Whether the fix takes off LD_LIBRARY_PATH a folder another framework of the site loads its cuDNN from: that one
    would fall back to the site's copy, which may be another CUDA's build (draw 20261126-20: CD501's fix for JAX and
    ONNX Runtime, CUDA 12, dropped the CUDA 13 folder torch 2.14.1 ran on)."""
    dropped = dropped_ld_entries(own)
    everything = "unset LD_LIBRARY_PATH" in own.commands
    for other in facts.python.frameworks:
        res = other.resolved_cudnn
        if res is not None and res.via in PRELOADED:  # the fix's preload drop hands it what its own search finds
            res = other.cudnn_without_preload
        if other is fw or other.location != fw.location or res is None or not res.path or res.via != "LD_LIBRARY_PATH":
            continue
        if everything or os.path.normpath(os.path.dirname(res.path)) in dropped:
            return True
    return False


def with_pip_option(fix: Fix, plain: str, option: str) -> Fix:
    """The fix's `pip install`s given ``option`` (`--user` for a framework in a user site, where a plain install
    into the active environment changes nothing it loads; `--ignore-installed` where a .pth folder's copy makes pip
    answer "Requirement already satisfied" for a wheel the framework's library never searches)."""
    given = plain + option + " "
    # A `pip install --target DIR` fills that folder, not a site: pip refuses it with --user (draw 101-14).
    changed = {c: given + c[len(plain):] for c in fix.commands if c.startswith(plain) and not c.startswith(given)
               and not (option == "--user" and re.search(r"\s(--target|-t)[\s=]", c))}
    text = fix.text
    for old, new in changed.items():
        text = text.replace(old, new)
    return dataclasses.replace(fix, commands=[changed.get(c, c) for c in fix.commands], text=text)


def for_user_site(facts: Facts, site: str, fix: Fix) -> Fix:
    """A fix for a user site (`pip install --user`): its installs get --user, and where a --system-site-packages venv
    is active, the interpreter that owns the site uninstalls there: pip in the venv never removes a package there
    ("Not uninstalling ... outside environment"), neither one the fix uninstalls (draw 20261130-1: JAX's CUDA 12
    build stayed) nor the release its own --user install replaces (draw 20261201-123: the old release's dist-info
    stayed beside the new one's), so that release is uninstalled by the owner first. The install itself stays the
    venv's pip: it writes the user site of the venv's own Python, where the owner found from pyvenv.cfg may be
    another minor or refuse to install (an externally managed Python)."""
    if site not in facts.python.user_sites or under_root():
        return fix
    fix = with_pip_option(fix, pip("install "), "--user")
    owner, plain = facts.python.user_site_owner, pip("uninstall ")
    if not owner:
        return fix
    # An externally managed owner (Debian 12's /usr/bin/python3) refuses any change without the option, the user
    # site's too ("error: externally-managed-environment"); the --user install stays the venv's pip, which it allows.
    uninstall = "%s -m pip uninstall %s" % (q(owner), "--break-system-packages " if
                                             facts.python.user_site_owner_managed else "")
    if any(c.startswith(plain) for c in fix.commands):
        fix = _started_otherwise(fix, plain, uninstall)
    held = {canonical_name(w["name"]) for w in facts.python.nvidia_wheels if w.get("location") == site} | \
        {canonical_name(f.name) for f in facts.python.frameworks if f.location == site}
    return _replaced_first(fix, pip("install --user "), held, uninstall + "-y")


def _project(requirement: str) -> str:
    try:
        return canonical_name(Requirement(requirement).name)
    except InvalidRequirement:
        return ""


def _replaced_first(fix: Fix, install: str, held: Set[str], uninstall: str) -> Fix:
    """Before each ``install`` command, ``uninstall`` of the projects it names that the site already holds."""
    commands: List[str] = []
    added: List[str] = []
    for c in fix.commands:
        named = [w.strip('"') for w in shlex.split(c[len(install):])] if c.startswith(install) else []
        replaced = [n for n in (_project(w) for w in named if not w.startswith("-")) if n in held]
        line = "%s %s" % (uninstall, " ".join(replaced))
        if replaced:
            commands.append(line)
            added.append(line)
        commands.append(c)
    if not added:
        return fix
    return dataclasses.replace(fix, commands=commands, text="%s; %s" % ("; ".join("`%s`" % a for a in added),
                                                                         fix.text))


def _started_otherwise(fix: Fix, plain: str, instead: str) -> Fix:
    """The fix with each command that starts with ``plain`` (and its words) started with ``instead``."""
    return dataclasses.replace(fix, commands=[instead + c[len(plain):] if c.startswith(plain) else c
                                              for c in fix.commands],
                               text=re.sub(r"(?<![\w/=-])%s" % re.escape(plain), instead.replace("\\", "\\\\"),
                                           fix.text))


def beside_framework(facts: Facts, fw: FrameworkFacts, fix: Fix, whole_site: bool = False) -> Fix:
    """The fix with its `pip install`s run without PYTHONPATH where NVIDIA's wheels sit in a PYTHONPATH folder
    (`pip install --target`): pip counts them as installed in every environment and says "Requirement already
    satisfied", yet the framework's library searches only its own site-packages' nvidia folders. Where the
    framework's own Python side loads its cuDNN from such a folder (torch 2.14's best-effort preload, JAX 0.6+'s
    nvidia.cudnn import: sys.path puts PYTHONPATH first), that wheel's files go first, or it keeps loading them;
    with ``whole_site`` (the fix is the plan for every framework of the site), so do those of every other framework
    there (draw 2621880-34: JAX moved to its CUDA 12 build kept importing a PYTHONPATH folder's CUDA 13 cuDNN)."""
    plain = pip("install ")
    fix = for_user_site(facts, fw.location, fix)
    if not under_root() and any(w.get("via") == ".pth" and w.get("location") != fw.location
                                for w in facts.python.nvidia_wheels):
        fix = with_pip_option(fix, plain, "--ignore-installed")
    elsewhere = [w for w in facts.python.nvidia_wheels if w.get("via") == "PYTHONPATH" and
                 w.get("location") != fw.location]
    if under_root() or not any(c.startswith(plain) for c in fix.commands):
        return fix
    if elsewhere:
        fix = _started_otherwise(fix, plain, "PYTHONPATH= " + plain)
    # A cuDNN the fix installs, or (a plan for the whole site) any install, as there is one here: a framework moved to
    # its release's other CUDA build brings its cuDNN through its own pins (`"jax-cuda13-plugin[with-cuda]==0.7.2"`),
    # and then imports the shadowing copy all the same
    if not whole_site and not any("nvidia-cudnn-" in c for c in fix.commands):
        return fix
    judged = [fw] + [o for o in facts.python.frameworks if whole_site and o is not fw and o.location == fw.location]
    shadows = {s["location"]: s for s in (_shadow_of(facts, o) for o in judged) if s and s["location"] != fw.location}
    for shadow in shadows.values():
        removed = pythonpath_cudnn_removal(shadow, fix)
        if removed.commands[0] not in fix.commands:  # not taken away first already (CD503 for JAX)
            fix = removed
    return fix


def _shadow_of(facts: Facts, fw: FrameworkFacts) -> Optional[Dict[str, str]]:
    """The PYTHONPATH or .pth folder's cuDNN wheel the framework loads, or None."""
    res = fw.resolved_cudnn
    return pythonpath_cudnn(facts, (res.realpath or res.path or "") if res is not None else "")


def pythonpath_cudnn(facts: Facts, path: str) -> Optional[Dict[str, str]]:
    """The cuDNN wheel of a folder on sys.path beside the site (`pip install --target`, named by PYTHONPATH or a .pth
    file) that holds ``path``, or None. A .pth folder's old wheel ships nvidia/__init__.py, which makes `nvidia` a
    regular package there: JAX's `import nvidia.cudnn` finds that copy, not the site's (fix draw 301202-17)."""
    return next((w for w in facts.python.nvidia_wheels if w.get("via") in ("PYTHONPATH", ".pth")
                 and canonical_name(w["name"]).startswith("nvidia-cudnn-")
                 and path.startswith(w["location"].rstrip("/") + "/nvidia/cudnn/")), None)


def pythonpath_cudnn_removal(folder_wheel: Mapping[str, str], then_fix: Optional[Fix] = None) -> Fix:
    """Remove a PYTHONPATH folder's cuDNN wheel (pip cannot uninstall a `pip install --target`: its folder and record
    go; `fix` keeps them in its journal), then ``then_fix``; or take that folder off PYTHONPATH."""
    where = at(folder_wheel["location"].rstrip("/"))
    remove = run("rm -rf %s %s" % (q(where + "/nvidia/cudnn"), q(where) + "/%s-*.dist-info"
                                   % canonical_name(folder_wheel["name"]).replace("-", "_")))
    instead = ("or take %s off PYTHONPATH" if folder_wheel.get("via") == "PYTHONPATH" else
               "or delete the .pth file line that puts %s on sys.path")
    return or_else(then(remove, then_fix) if then_fix is not None else remove, instead % folder_wheel["location"],
                   "%s   (%s)")


def force_reinstall_fix(facts: Facts, fw: Optional[FrameworkFacts], project: str, wheel_version: str) -> Fix:
    """An NVIDIA wheel one of whose files another release's replaced: reinstalled whole at its own release (it exists:
    pip installed it from there). A plain `pip install` says "Requirement already satisfied" and changes nothing."""
    fix = run(pip('install --force-reinstall --no-deps "%s==%s"' % (canonical_name(project), wheel_version)))
    return beside_framework(facts, fw, fix) if fw is not None else fix
