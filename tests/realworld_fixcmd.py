"""`cudnn-doctor fix` itself proven on a failing draw (issue 45), as a user runs it: in a copy of the environment, the
command run as a program (`fix --dry-run`, `fix --yes`, `fix --undo --yes`), the copy judged after each by the same
oracle and doctor as a printed fix (realworld_run.judge_all): healed? (every framework loads a cuDNN it accepts, in a
new shell of the environment), undo exact? (every file of the copy as before, by hash), failure back? (the oracle
sees the same failure again); and --dry-run changes nothing (hashes)."""
from __future__ import annotations

import functools
import hashlib
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import pip as runner_pip
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import realworld_stacks as stacks
import realworld_wheels as wheels

# The checkout judged: this one (or REALWORLD_DOCTOR's, as realworld_run). It goes on the doctor's own sys.path, not
# into PYTHONPATH: the doctor reads PYTHONPATH as the inspected environment's (a case's --target folder is there), and
# the environment's python it probes would see the checkout too.
CHECKOUT = os.environ.get("REALWORLD_DOCTOR") or str(Path(__file__).resolve().parent.parent)
SCRATCH = wheels.CACHE / "fix-tmp" / str(os.getpid())  # this process's fix children's TMPDIR
BOOT = ("import runpy, sys; sys.path.insert(0, %r); runpy.run_module('cudnn_doctor', run_name='__main__', "
        "alter_sys=True)" % CHECKOUT)
# What a new shell keeps of the environment (apply_fix's list), once its activate script has run.
SHELL_KEEPS = ("PATH", "VIRTUAL_ENV", "LD_LIBRARY_PATH", "CONDA_PREFIX", "PYTHONPATH")
# Not the environment's state: the oracle's work folder, bytecode any import writes, a user home's caches.
NOT_STATE = ("oracle", "home/.cache")
Judged = List[Tuple[str, object, object]]  # (framework, oracle verdict, doctor verdict): realworld_run.judge_all


@dataclass
class FixRun:
    """One failing draw's `fix` run: None where the step was not reached."""

    case: str
    skipped: str = ""  # why the draw's fix is not provable by a subprocess
    healed: Optional[bool] = None  # the oracle: every framework works after fix --yes, in a new shell
    doctor_agrees: Optional[bool] = None  # the doctor then reports no error for any of them either
    undo_exact: Optional[bool] = None  # every file as before (pip's own install records apart)
    records_exact: Optional[bool] = None  # pip's records (INSTALLER, REQUESTED, RECORD) as before too
    back: Optional[bool] = None  # the oracle sees the same failure after --undo
    dry_exact: Optional[bool] = None
    codes: Dict[str, int] = field(default_factory=dict)  # exit status of dry-run, fix, undo
    killed: str = ""  # a SIGKILL at a random moment of fix --yes: "old", "new", "undone" (interrupted, then
    #                   fix --undo put it back exactly); anything else is the mix the journal must never leave
    why: List[str] = field(default_factory=list)  # what went wrong, in words
    seconds: float = 0.0


def skip_reason(case: stacks.Case) -> str:
    if case.system is not None and not own_etc_works():
        return "a system folder: its ld.so.cache is the case's own, and without a private mount namespace (root, " \
               "unshare --mount) a program run here reads /etc's"
    return ""


@functools.lru_cache(maxsize=1)
def own_etc_works() -> bool:
    """Whether fix can run in a mount namespace of its own here (root, and unshare allowed: a container without
    CAP_SYS_ADMIN refuses it), where the case's /etc stands in for this machine's."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    # the bind mount itself, not only the namespace: Docker with SYS_ADMIN under AppArmor allows unshare, not mount
    with tempfile.TemporaryDirectory() as empty:
        return subprocess.run(["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", _IN_OWN_ETC, "sh",
                               empty, "true"], capture_output=True).returncode == 0


def give_etc(moved: stacks.Stack) -> Optional[Path]:
    """A draw with a system folder: the case's own /etc, this machine's copied under the case's ld.so.conf and
    ld.so.cache, which fix (and the doctor it runs, and ldconfig where a step runs it) sees as /etc in a private mount
    namespace; part of the case, so it is hashed with it. None for other draws."""
    if moved.case.system is None:
        return None
    etc = moved.root / "etc"
    whole = moved.root / "etc-whole"
    # this machine's /etc copied whole, then the case's two loader files over it (cp --no-clobber would say the same,
    # but exits 1 for every file it skips from coreutils 9.2 on)
    subprocess.run(["cp", "-a", "/etc/.", str(whole)], check=True, capture_output=True)
    for name in ("ld.so.conf", "ld.so.cache"):
        (whole / name).unlink(missing_ok=True)
        shutil.copy2(etc / name, whole / name)
    shutil.rmtree(etc)
    whole.rename(etc)
    return etc


# In a private mount namespace, the case's /etc bound over this machine's, then the command itself (exec: the same
# process, so a SIGKILL to its group reaches it as before).
_IN_OWN_ETC = 'mount --bind "$1" /etc && shift && exec "$@"'


def doctor_argv(etc: Optional[Path], *args: str) -> List[str]:
    """`cudnn-doctor fix ARGS` as a user runs it, inside the case's own /etc where the case has one."""
    argv = [sys.executable, "-c", BOOT, "fix", *args]
    if etc is None:
        return argv
    return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", _IN_OWN_ETC, "sh", str(etc), *argv]


_DIGESTS: Dict[Tuple[int, int, int, int], str] = {}  # by inode: a case's files are hard links into shared trees


def _digest(path: str, st: os.stat_result) -> str:
    key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    if key not in _DIGESTS:
        with open(path, "rb") as fh:
            _DIGESTS[key] = hashlib.file_digest(fh, "sha256").hexdigest()
    return _DIGESTS[key]


def state(root: Path) -> Dict[str, str]:
    """Every file and link under the case folder (the venv whole: site-packages, bin/activate, fix's journal; the
    user site, folders on the paths, the conda prefix): path -> mode and sha256, or the link's target."""
    out: Dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        dirs[:] = [d for d in dirs if d != "__pycache__" and os.path.normpath(os.path.join(rel, d)) not in NOT_STATE]
        for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            path = os.path.join(folder, name)
            st = os.lstat(path)
            key = os.path.normpath(os.path.join(rel, name))
            out[key] = ("-> " + os.readlink(path)) if os.path.islink(path) else "%o %s" % (
                st.st_mode, _digest(path, st))
    return out


def differences(before: Dict[str, str], after: Dict[str, str], most: int = 4) -> str:
    gone = sorted(set(before) - set(after))
    new = sorted(set(after) - set(before))
    changed = sorted(k for k in set(before) & set(after) if before[k] != after[k])
    parts = ["%s %d: %s" % (what, len(keys), ", ".join(keys[:most])) for what, keys in
             (("missing", gone), ("added", new), ("changed", changed)) if keys]
    return "; ".join(parts)


def give_pip(moved: stacks.Stack) -> None:
    """The harness's venvs have no pip (bin/pip is the runner's pip pointed at them); fix runs `python -m pip` of the
    environment, so the copy's site-packages gets a link to the runner's pip package: importable there, and without
    a dist-info it is no distribution of the environment (pip list, the doctor and fix's package set never see
    it). The link is there before the first hash and never changes."""
    link = moved.root / stacks.SITE / "pip"
    if not link.exists():
        link.symlink_to(os.path.dirname(runner_pip.__file__))


def doctor_env(env: Dict[str, str], index: bool = False) -> Dict[str, str]:
    """The environment fix runs in: the stack's own, with pip offline on the wheel cache and no dependencies (as
    apply_fix: what the oracle loads is named; fetch_pins fills the cache first), no pip cache written, and its
    temporary files in a folder that prove removes: a pip killed by SIGKILL leaves its unpacked wheel (a cuDNN wheel
    unpacks to gigabytes) in TMPDIR, and a few of those filled CI's disk until a later install failed."""
    SCRATCH.mkdir(parents=True, exist_ok=True)
    offline = {} if index else {"PIP_NO_DEPS": "1", "PIP_NO_INDEX": "1"}
    return dict(env, PIP_FIND_LINKS=str(wheels.FOR_PIP), PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
                PIP_NO_INPUT="1", PIP_COMPILE="0", TMPDIR=str(SCRATCH), **offline)


# A plan that makes new environments (fix's step "N. python3.X -m venv ..."): their pip resolves the framework's own
# dependencies, as it does for the user, from PyPI, taking a wheel of the cache where it has the same file (pip
# lists --find-links files before the index's and keeps the first of equal candidates).
_MAKES_ENVIRONMENTS = re.compile(r"^\s+\d+\. python3(?:\.\d+)? -m venv ", re.M)


def made_stacks(moved: stacks.Stack, before: Dict[str, str]) -> List[stacks.Stack]:
    """Each venv fix made under the case's HOME (~/venvs/NAME), as a new shell that activates it sees it: the
    frameworks of the case it holds, judged there (the shell's LD_PRELOAD and LD_LIBRARY_PATH inherited)."""
    out = []
    folder = moved.root / "home" / "venvs"
    for venv in sorted(folder.iterdir()) if folder.is_dir() else []:
        if any(k.startswith(str(venv.relative_to(moved.root)) + "/") for k in before):
            continue  # there before fix
        # what the user's shell has (a --target folder on PYTHONPATH too: a framework's Python side imports
        # nvidia.cudnn from it first), then the made environment's activate
        shell = {k: v for k, v in moved.env.items() if k in ("HOME", "LD_PRELOAD", "LD_LIBRARY_PATH", "PYTHONPATH")}
        proc = subprocess.run(["bash", "-c", '. "$1/bin/activate" && env -0', "bash", str(venv)],
                              env=dict(shell, PATH="/usr/bin:/bin"), capture_output=True, text=True, check=True)
        env = {k: v for k, v in (i.split("=", 1) for i in proc.stdout.split("\0") if "=" in i)
               if k in ("HOME", "PATH", "VIRTUAL_ENV", "LD_PRELOAD", "LD_LIBRARY_PATH", "PYTHONPATH")}
        # made without --system-site-packages: its python sees no user site (the oracle runs it so), and neither does
        # the doctor's view of it (the case's own user site holds frameworks of the same names)
        env["PYTHONUSERBASE"] = str(venv / "no-user-site")
        site = next(venv.glob("lib/python3*/site-packages"))
        held = [w for w in (moved.case.framework, *moved.case.judged)
                if any(site.glob("%s-%s.dist-info" % (canonicalize_name(w[0]).replace("-", "_"), w[1])))]
        if held:
            case = replace(moved.case, framework=held[0], judged=held[1:], user_site=False, activated=True)
            out.append(stacks.Stack(case, moved.root, env, venv=venv))
    return out


def fetch_pins(plan: str) -> List[str]:
    """Each requirement of the plan's pip installs in the wheel cache, at the release pip with an index would pick
    (wheels.fetch), and each one pip said it found no distribution for (a dependency an extra pins: draw 1201301-4,
    TensorFlow 2.18's [and-cuda] nvidia-cublas-cu12==12.5.3.2); the ones it could not get."""
    missing = [m.group(1).rstrip(":.,;") for m in re.finditer(r"No matching distribution found for (\S+)", plan)]
    return wheels.fetch(list(dict.fromkeys(wheels.requirements_in(plan) + missing)))


def fetch_removed(plan: str, site: Path) -> List[str]:
    """The wheel of each project the plan uninstalls, at the release the site holds, fetched into the wheel cache:
    `fix --undo` puts it back with pip from there (a framework moved to its release's other CUDA build: draw
    112930-17); the ones it could not get."""
    missing = []
    for name in uninstalled(plan):
        record = next(site.glob("%s-*.dist-info" % name.replace("-", "_")), None)
        version = record.name[len(name) + 1:-len(".dist-info")] if record else ""
        if version and wheels.wheel_file(name, version) is None:
            missing.append("%s==%s" % (name, version))
    return missing


def uninstalled(plan: str) -> List[str]:
    """The projects the plan's `pip uninstall -y` lines name."""
    return [name for m in re.finditer(r" -m pip uninstall -y (.+)$", plan, re.M) for name in m.group(1).split()]


def reinstalled(plan: str, site: Path) -> List[str]:
    """What the plan's pip lines install, and what `fix --undo` puts back: each project they install or uninstall at
    the release the site holds now (wheels.for_pip stores these uncompressed before fix runs)."""
    named = wheels.requirements_in(plan)
    projects = {canonicalize_name(Requirement(r).name) for r in named}
    projects.update(canonicalize_name(name) for name in uninstalled(plan))
    for record in site.glob("*.dist-info"):
        name, _, version = record.name[:-len(".dist-info")].partition("-")
        if canonicalize_name(name) in projects:
            named.append("%s==%s" % (name, version))
    return named


def fix(env: Dict[str, str], *args: str, index: bool = False, etc: Optional[Path] = None) -> Tuple[int, str]:
    # The cache folder of the runner's (a test session's own, tests/hermetic.py): no `cudnn-doctor update` copy of a
    # developer's knowledge is read by the child either.
    xdg = {"XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"]} if os.environ.get("XDG_CACHE_HOME") else {}
    proc = subprocess.run(doctor_argv(etc, *args), env=dict(doctor_env(env, index), **xdg),
                          capture_output=True, text=True, errors="replace", stdin=subprocess.DEVNULL, timeout=1800)
    return proc.returncode, proc.stdout + proc.stderr


def rc_file(moved: stacks.Stack) -> Path:
    """The shell rc file of the case's user (under the case: the harness's HOME may be the runner's own)."""
    return moved.root / "home" / ".bashrc"


def asked(moved: stacks.Stack) -> List[str]:
    """What the user adds to fix, following its words: an environment used from PATH never runs its activate
    script, so its variables go where every new shell reads them (`--rc ~/.bashrc`)."""
    return [] if moved.case.activated else ["--rc", str(rc_file(moved))]


def new_shell(moved: stacks.Stack) -> Dict[str, str]:
    """What a new shell of the environment has: an activated one sources bin/activate (fix's variables are there);
    one only on PATH does not, and reads the user's rc file (where `fix --rc` wrote them)."""
    if not moved.case.activated and not rc_file(moved).exists():
        return dict(moved.env)
    script = '. "$VIRTUAL_ENV/bin/activate" && env -0' if moved.case.activated else '. "$1" && env -0'
    proc = subprocess.run(["bash", "-c", script, "bash", str(rc_file(moved))], env=moved.env,
                          capture_output=True, text=True, check=True)
    after = dict(item.split("=", 1) for item in proc.stdout.split("\0") if "=" in item)
    keep = set(moved.env) | set(SHELL_KEEPS)
    return {k: after[k] for k in keep if k in after}


def _said(text: str) -> str:
    """fix's words on why it did not heal: its stop (or pip's problem before anything changed), and each finding it
    left for the user with why (the commands are the report's)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    said = [line[:300] for line in lines if any(key in line for key in (
        "fix stopped", "nothing was changed", "which environment", "Error", "still"))][-1:]
    if "Left for you:" in lines:
        left = lines[lines.index("Left for you:") + 1:]
        ids = [re.sub(r"^(CD\d+)\s+.*?\s\s\((.*)\)$", r"\1 (\2)", line) for line in left
               if re.match(r"CD\d+\s", line) and " -> " not in line]  # not the before/after lines
        said += ["left " + "; ".join(dict.fromkeys(i for i in ids if not i.endswith("(left for you)")))]
    return " / ".join(said) or (lines[-1][:300] if lines else "no output")


# What pip writes of an install besides the wheel's own files: the harness's trees are unpacked wheels, not pip's
# installs, so a package fix --undo reinstalls with pip gains INSTALLER and REQUESTED and another RECORD. Compared
# apart from the files (a reinstall also marks a package a dependency had pulled in as REQUESTED).
INSTALLER_RECORDS = ("INSTALLER", "REQUESTED", "RECORD", "direct_url.json")


def _installer_record(key: str) -> bool:
    folder, _, name = key.rpartition("/")
    return folder.endswith(".dist-info") and name in INSTALLER_RECORDS


def killed_at_random(moved: stacks.Stack, fixed: Dict[str, str], seconds: float, rng: random.Random,
                     index: bool = False, etc: Optional[Path] = None) -> str:
    """fix --yes started in the copy (back as before, by an exact undo) and killed with SIGKILL, with every child
    (pip), at a moment drawn between its start and the time a whole run took. What it leaves must be the old state,
    the new one, or an interrupted journal that the next fix refuses to run over and fix --undo puts back exactly.
    Compared by the environment's files (pip's own install records and fix's journal apart)."""
    root = moved.root
    before = _files(state(root))
    xdg = {"XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"]} if os.environ.get("XDG_CACHE_HOME") else {}
    at = rng.uniform(0.0, seconds)
    proc = subprocess.Popen(doctor_argv(etc, "--yes", *asked(moved)),
                            env=dict(doctor_env(moved.env, index), **xdg),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        proc.wait(timeout=at)
        ended = "ended before the kill at %.1f s" % at
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        ended = "killed at %.1f s of %.1f" % (at, seconds)
    now = _files(state(root))
    if now == before:
        return "old"
    if now == fixed:
        return "new"
    code, text = fix(moved.env, "--yes", *asked(moved), index=index, etc=etc)
    if code == 0 or "interrupted" not in text:
        return "a mix, and fix ran over it (%s; exit %d): %s" % (ended, code, differences(before, now))
    code, text = fix(moved.env, "--undo", "--yes", etc=etc)
    if _files(state(root)) == before and code == 0:
        return "undone"
    return "a mix that fix --undo did not put back (%s; undo exit %d): %s" % (
        ended, code, differences(before, _files(state(root))))


def _files(hashes: Dict[str, str]) -> Dict[str, str]:
    """The environment's own files: fix's journal (its entry names carry a time and a process id) and pip's install
    records left out."""
    return {k: v for k, v in split(hashes)[0].items() if ".cudnn-doctor" not in k.split("/")}


def split(hashes: Dict[str, str]) -> Tuple[Dict[str, str], Dict[str, str]]:
    """(the files, pip's own records of each install)."""
    records = {k: v for k, v in hashes.items() if _installer_record(k)}
    return {k: v for k, v in hashes.items() if k not in records}, records


def prove(stack: stacks.Stack, root: Path, judge_all: Callable[[stacks.Stack], Tuple[Judged, object]],
          failing: Judged, kill: Optional[random.Random] = None) -> FixRun:
    """fix --dry-run, fix --yes, the judgement, fix --undo --yes and the judgement again, in a copy at ``root``;
    with ``kill``, then a fix --yes killed (SIGKILL, its whole process group) at a moment drawn from it."""
    start = time.perf_counter()
    run = FixRun(stack.case.name, skipped=skip_reason(stack.case))
    if run.skipped:
        return run
    moved = stacks.copy(stack, root)
    # the user's home is the case's own: a new environment fix makes (~/venvs/NAME) is in the copy, hashed with it
    moved.env["HOME"] = str(root / "home")
    try:
        give_pip(moved)
        etc = give_etc(moved)
        rc_file(moved).parent.mkdir(exist_ok=True)  # the user's home, where --rc writes
        wheels.for_pip()  # the dry run's pip finds the cache's wheels there too
        before = state(root)
        run.codes["dry-run"], text = fix(moved.env, "--dry-run", *asked(moved), etc=etc)
        run.dry_exact = state(root) == before
        # a pin the cache lacks: fetched, then the dry run again, until pip finds all (each run names one more)
        for _ in range(6):
            if run.codes["dry-run"] == 0 or "No matching distribution" not in text:
                break
            unavailable = fetch_pins(text)
            if unavailable:
                run.why.append("not in the wheel cache nor on the index: %s" % ", ".join(unavailable))
                break
            wheels.for_pip()  # the fetched wheels where the dry run's pip looks (PIP_FIND_LINKS)
            run.codes["dry-run"], text = fix(moved.env, "--dry-run", *asked(moved), etc=etc)
            run.dry_exact = run.dry_exact and state(root) == before
        unavailable = fetch_removed(text, moved.site)
        if unavailable:
            run.why.append("what undo puts back is not in the wheel cache nor on the index: %s" % ", ".join(unavailable))
        if not run.dry_exact:
            run.why.append("--dry-run changed files: " + differences(before, state(root)))
        wheels.for_pip(reinstalled(text, moved.site))
        index = bool(_MAKES_ENVIRONMENTS.search(text))
        t_fix = time.perf_counter()
        run.codes["fix"], fixed_text = fix(moved.env, "--yes", *asked(moved), index=index, etc=etc)
        fix_seconds = time.perf_counter() - t_fix
        fixed_state = _files(state(root))
        healed = stacks.Stack(moved.case, root, new_shell(moved))
        # where fix made an environment per framework, the frameworks run from those: each is judged there
        made = made_stacks(moved, before)
        after = [v for judged in (made or [healed]) for v in judge_all(judged)[0]]
        held = [s.case.framework for s in made] + [w for s in made for w in s.case.judged]
        left_out = [w for w in (moved.case.framework, *moved.case.judged) if made and w not in held]
        run.healed = all(seen.works for _, seen, _ in after) and not left_out
        run.doctor_agrees = all(said.works == seen.works for _, seen, said in after)
        if left_out:
            run.why.append("no new environment holds %s" % ", ".join("%s %s" % w for w in left_out))
        if not run.healed:
            run.why.append("not healed (fix exit %d: %s); after: %s" % (
                run.codes["fix"], _said(fixed_text), "; ".join("%s: %s" % (fw, seen.summary)
                                                               for fw, seen, _ in after if not seen.works)))
        elif not run.doctor_agrees:
            run.why.append("healed, but the doctor disagrees after: " + "; ".join(
                "%s: oracle %s, doctor %s" % (fw, seen.summary, said.summary) for fw, seen, said in after
                if said.works != seen.works))
        if state(root) == before:  # fix changed nothing (it left every step, or stopped first): nothing to undo
            run.codes["undo"] = -1
        else:
            run.codes["undo"], text = fix(healed.env, "--undo", "--yes", etc=etc)
            if run.codes["undo"] != 0:
                run.why.append("undo exit %d: %s" % (run.codes["undo"], _said(text)))
            (files, records), (files_then, records_then) = split(state(root)), split(before)
            run.undo_exact = files == files_then
            run.records_exact = records == records_then
            if not run.undo_exact:
                run.why.append("undo not exact: " + differences(files_then, files))
        again, _ = judge_all(stacks.Stack(moved.case, root, new_shell(moved)))
        was = [(fw, seen.summary) for fw, seen, _ in failing]
        now = [(fw, seen.summary) for fw, seen, _ in again]
        run.back = now == was
        if not run.back:
            run.why.append("after undo the oracle sees %s, before fix %s" % (now, was))
        if kill is not None and run.undo_exact and fixed_state != _files(before):
            run.killed = killed_at_random(moved, fixed_state, fix_seconds, kill, index, etc)
            if run.killed not in ("old", "new", "undone"):
                run.why.append("killed fix: " + run.killed)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(SCRATCH, ignore_errors=True)
    run.seconds = round(time.perf_counter() - start, 1)
    return run


def mark(value: Optional[bool]) -> str:
    return "-" if value is None else ("yes" if value else "NO")


def run_all(wanted: List[stacks.Case], judge_all: Callable[[stacks.Stack], Tuple[Judged, object]], work: Path,
            again: Callable[[str], str], kills: int = 0, seed: int = 0) -> int:
    """Each case built and judged; each failing one's fix proven by the command: a line each, a tally at the end.
    ``again``: the case's name -> the command line that reproduces it alone."""
    from realworld_cases import FIX_WHEELS

    for name, version in FIX_WHEELS:  # what fixes install, offline: in the cache first
        wheels.wheel_file(name, version)
    print("%-24s | %-50s | %-9s | %-6s | %-10s | %-8s | %-7s | %s" % (
        "case", "oracle before (real glibc loader)", "exit d/f/u", "healed", "undo exact", "back", "dry-run", "s"))
    runs: List[FixRun] = []
    start = time.perf_counter()
    try:
        for case in wanted:
            missing = stacks.missing_wheels(case)
            if missing:
                print("%-24s | wheels not available: %s" % (case.name, missing))
                continue
            t0 = time.perf_counter()
            stack = stacks.build(case, work / case.name)
            try:
                failing, _ = judge_all(stack)
                if all(seen.works for _, seen, _ in failing):
                    continue
                trial = random.Random("%d %s" % (seed, case.name)) if kills > sum(bool(r.killed) for r in runs) \
                    else None
                run = prove(stack, work / (case.name + "-fix"), judge_all, failing, trial)
            finally:
                shutil.rmtree(stack.root, ignore_errors=True)
            run.seconds = round(time.perf_counter() - t0, 1)
            runs.append(run)
            oracle = " / ".join(seen.summary for _, seen, _ in failing if not seen.works)
            if run.skipped:
                print("%-24s | %-50s | skipped: %s" % (case.name, oracle[:50], run.skipped))
                continue
            codes = "/".join(str(run.codes[k]) if run.codes.get(k, -1) >= 0 else "-"
                             for k in ("dry-run", "fix", "undo"))
            print("%-24s | %-50s | %-9s | %-6s | %-10s | %-8s | %-7s | %.0f" % (
                case.name, oracle[:50], codes, mark(run.healed), mark(run.undo_exact) + (
                    "" if run.records_exact is not False else " (rec)"), mark(run.back),
                "same" if run.dry_exact else "CHANGED", run.seconds), flush=True)
            for why in run.why:
                print("    " + why)
            if run.why:
                print("    reproduce: " + again(case.name))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    done = [r for r in runs if not r.skipped]
    undone = [r for r in done if r.undo_exact is not None]
    seconds = time.perf_counter() - start
    healed = [r for r in done if r.healed]
    print("fix-command: %d draws, %d failing, %d skipped (system folder), %d run: healed %d (fix said so, exit 0: %d), "
          "doctor agrees after %d, dry-run unchanged %d; fix changed something in %d: undo exact %d (pip's install "
          "records too: %d), failure back %d of %d; %.0f s (%.0f s a failing draw run)" % (
              len(wanted), len(runs), len(runs) - len(done), len(done), len(healed),
              sum(r.codes.get("fix") == 0 for r in healed),
              sum(bool(r.doctor_agrees) for r in done), sum(bool(r.dry_exact) for r in done), len(undone),
              sum(bool(r.undo_exact) for r in undone), sum(bool(r.records_exact) for r in undone),
              sum(bool(r.back) for r in done), len(done), seconds, sum(r.seconds for r in done) / max(len(done), 1)))
    killed = [r.killed for r in done if r.killed]
    if kills:
        print("SIGKILL at a random moment of fix --yes, %d draws: old %d, new %d, interrupted and undone exactly %d, "
              "a mix %d" % (len(killed), killed.count("old"), killed.count("new"), killed.count("undone"),
                            sum(k not in ("old", "new", "undone") for k in killed)))
    return 0 if all(r.healed and r.undo_exact is not False and r.back and r.dry_exact and r.killed in (
        "", "old", "new", "undone") for r in done) else 1
