"""The install procedure, start to finish; returns a plain report, raises Refusal (also for OS errors)."""
from __future__ import annotations

import os
import platform
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import Callable, List, Mapping, Optional, Tuple

from ..diagnose import fixes_for_this_machine
from ..knowledge import load_compat
from ..model import Fix
from ..remedies.install import undo_command
from ..remedies.install import (add_cuda_major_fix, cuda_build_fix, failed_load_check_fix, finish_recording_fix,
                                finish_repair_fix, finish_undo_fix, missing_dependency_fix, name_a_source_fix,
                                platform_archive_fix, retry_install_fix)
from ..run_results import InstallResult
from ..versions import decode_cudnn
from . import hooks
from .after import finish
from .errors import Refusal
from .extract import stream_into
from .fetch import Progress, Source, Unreachable, download, from_manifest, is_url, local
from .history import record_placed
from .inspect import inspect, keep_for_inspection
from .journal import StateLock, discard, write_journal
from .layout import host_arch, same_arch
from .plan import Plan, make_plan, wheel_dev_links
from .pypi import from_pypi
from .signals import Interrupted
from .target import Target, resolve
from .transaction import apply, commit, new_txn, recover, undo
from .verify import load_cudnn, smoke

Loader = Callable[[str, str], dict]
Smoke = Callable[[str], dict]


@dataclass
class Request:
    """Everything `cudnn-doctor install` was asked to do."""

    source: Optional[str] = None
    version: Optional[str] = None
    cuda: Optional[str] = None
    manifest_url: Optional[str] = None
    cuda_home: Optional[str] = None
    prefix: Optional[str] = None
    sha256: Optional[str] = None
    force: bool = False
    dry_run: bool = False
    smoke: bool = True
    allow_http: bool = False
    lock_wait: float = 0.0
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    check: bool = True  # run `check` on the result (--no-check skips it)
    machine_root: Optional[str] = None  # the machine whose ld.so.conf and `check` judge it; None: "/" (see hooks)
    # Told what the install is doing, between downloading and finishing: (what, bytes unpacked so far).
    on_stage: Optional[Callable[[str, int], None]] = None

    def stage(self, what: str, done: int = 0) -> None:
        if self.on_stage is not None:
            self.on_stage(what, done)


def _platform_of(target: Target) -> str:
    """NVIDIA's manifest key for the target: linux-x86_64, linux-sbsa, linux-aarch64, windows-x86_64."""
    if target.system == "windows":
        return "windows-x86_64"
    return "linux-%s" % (target.arch or host_arch(platform.machine()))


def _target_glibc(target: Target) -> Optional[Tuple[int, int]]:
    """The glibc a Linux target's programs run on: this machine's, for a toolkit of this machine's processor (a
    toolkit of another processor is another machine's, whose glibc is not known here: None)."""
    here = host_arch(platform.machine())
    if target.system != "linux" or not same_arch(target.arch or here, here):
        return None
    try:
        text = os.confstr("CS_GNU_LIBC_VERSION") or ""  # "glibc 2.36"
    except (ValueError, OSError, AttributeError):  # not glibc (musl), or no confstr on this system
        return None
    parts = text.split()[-1].split(".") if text.startswith("glibc ") else []
    return (int(parts[0]), int(parts[1])) if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit() else None


def obtain(req: Request, target: Target, progress: Optional[Progress]) -> Source:
    if req.version:
        if not req.cuda:
            raise Refusal("--version needs --cuda", "NVIDIA builds each cuDNN release per CUDA major",
                          add_cuda_major_fix(), code=2)
        try:
            return from_manifest(req.version, req.cuda, _platform_of(target), req.manifest_url, req.sha256,
                                 req.allow_http, req.env, progress)
        except Unreachable as unreachable:
            project = load_compat().cudnn_wheel(req.cuda)
            if project is None:  # NVIDIA ships no wheels for this CUDA major
                raise
            source = from_pypi(project, req.version, _platform_of(target), req.sha256, req.allow_http, req.env,
                               progress, _target_glibc(target))
            source.manifest["why"] = unreachable.what
            return source
    if not req.source:
        raise Refusal("nothing to install", "give an archive, a URL, or --version X --cuda N",
                      name_a_source_fix(), code=2)
    if is_url(req.source):
        return download(req.source, req.sha256, req.allow_http, progress)
    return local(req.source, req.sha256)


def _refusals(plan: Plan, force: bool) -> Optional[Refusal]:
    """The reasons an install stops before touching anything; --force overrides all of them."""
    info, target = plan.info, plan.target
    if force:
        return None
    if plan.mismatch:
        return Refusal(plan.mismatch[0], "its files would not be usable from there",
                       platform_archive_fix())
    if plan.compatible is False:
        major = (target.cuda_version or "").split(".")[0]
        return Refusal("cuDNN %s built for CUDA %s does not fit the CUDA %s toolkit at %s (%s)"
                       % (info.cudnn_version, info.built_for_cuda or "?", target.cuda_version, target.root,
                          plan.compat_reason),
                       "frameworks would fail to load or run its kernels",
                       cuda_build_fix(load_compat(), major, info.cudnn_version))
    if info.load_error:
        return Refusal("the archive's %s does not load on this machine: %s" % (info.main_lib, info.load_error),
                       "an install that cannot load would break every program using this toolkit",
                       missing_dependency_fix())
    return None


def _journal_ops(plan: Plan) -> List[dict]:
    index = {d["path"]: i for i, d in enumerate(plan.dirs)}
    ops = []
    for a in plan.actions:
        op = {"dir": index[os.path.dirname(a.dest)], "rel": os.path.basename(a.dest), "action": a.action,
              "kind": a.kind, "role": a.role}
        if a.action != "retire":
            op["staged"] = "%s/%s" % (a.role, a.rel)
        ops.append(op)
    return ops


def _verify_installed(plan: Plan, load: Loader) -> dict:
    """Loads the installed libcudnn: cudnnGetVersion must equal the header's version."""
    info = plan.info
    if not (info.loadable_here and info.main_lib and "lib" in plan.dest_dirs):
        return {"checked": False, "reason": "the library is for %s%s, not this machine"
                % (info.system, "-" + info.arch if info.arch else "")}
    lib = os.path.join(plan.dest_dirs["lib"], info.main_lib)
    result = load(lib, plan.dest_dirs["lib"])
    version = decode_cudnn(int(result["version"])) if result.get("version") else None
    ok = version == info.cudnn_version
    return {"checked": True, "ok": ok, "library": lib, "version": version, "raw": result,
            "error": None if ok else (result.get("error") or result.get("crashed") or
                                      "reports %s, the header says %s" % (version, info.cudnn_version))}


@fixes_for_this_machine
def run_install(req: Request, progress: Optional[Progress] = None, load: Loader = load_cudnn,
                smoke_fn: Smoke = smoke) -> InstallResult:
    """Plan, stage, apply, verify, commit; then the loader cache, `check` and the smoke test."""
    target = resolve(req.cuda_home, req.prefix, req.env)
    source = obtain(req, target, progress)
    try:
        if req.dry_run:
            return _dry_run(req, target, source, load)
        return _install(req, target, source, load, smoke_fn)
    finally:
        source.cleanup()


def _dry_run(req: Request, target: Target, source: Source, load: Loader) -> InstallResult:
    temp = tempfile.mkdtemp(prefix="cudnn-doctor-inspect-")
    try:
        listing = stream_into(source.path, temp, keep_for_inspection)
        info = inspect(listing, temp, load)
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    if info.load_error:
        # A dry run unpacks only part of the library set, so a failed load here is not proof
        # of a broken archive; the real install repeats the check with every file staged.
        info.notes.append("the library could not be checked from a partial unpack (%s); the install "
                          "checks it again with every file" % info.load_error)
        info.load_error = None
    plan = make_plan(target, info, listing, wheel_dev_links(listing))
    if os.path.isdir(os.path.join(target.state_dir, "txn")):
        plan.notes.append("an unfinished install is recorded in %s (interrupted, or running now); the install "
                          "waits for the lock and undoes it first if it was interrupted" % target.state_dir)
    refusal = _refusals(plan, req.force)
    return InstallResult(dry_run=True, source=source.to_dict(), plan=plan.to_dict(),
                         refusal=str(refusal) if refusal else None, refusal_code=refusal.code if refusal else 0)


def rollback_command(target: Target) -> str:
    # What an install writes belongs to the user it ran as: root's files (sudo cudnn-doctor install) need root to undo.
    return undo_command(target.kind, target.given or target.root, hasattr(os, "geteuid") and os.geteuid() == 0)


def failed(exc: OSError, state: str, fix: Fix) -> Refusal:
    """An OS error part-way, as one line: the error, the exact state of the target, and what repairs it."""
    return Refusal("install failed: %s" % exc, state, fix)


def _install(req: Request, target: Target, source: Source, load: Loader, smoke_fn: Smoke) -> InstallResult:
    root_created = False
    report = InstallResult(dry_run=False, source=source.to_dict())
    main_lib: Optional[str] = None
    try:
        if target.kind == "prefix" and not os.path.isdir(target.root):
            os.mkdir(target.root, 0o755)
            root_created = True
        with StateLock(target.state_dir, req.lock_wait):
            try:
                report.recovered = recover(target.state_dir)
            except OSError as exc:
                raise failed(exc, "repairing an earlier interrupted install or rollback recorded in %s did not "
                             "finish, so its files may be part-way between two cuDNN releases" % target.state_dir,
                             finish_repair_fix(rollback_command(target)))
            hooks.point("after-lock")
            main_lib = _transaction(req, target, source, load, root_created, report)
    except OSError as exc:  # the transaction classifies its own errors; these came before it changed anything
        raise failed(exc, "no cuDNN file in %s was changed" % target.root, retry_install_fix())
    finally:
        if root_created and not report.installed:
            try:
                os.rmdir(target.root)
            except OSError:
                pass
    report.rollback_hint = rollback_command(target)
    machine = req.machine_root or hooks.machine_root()
    try:
        finish(target, report, main_lib, machine, req.env, smoke_fn if req.smoke else None, req.check)
    except Interrupted as exc:  # the install stands; only the checks after it were cut short
        exc.installed = True
        raise
    return report


def _transaction(req: Request, target: Target, source: Source, load: Loader, root_created: bool,
                 report: InstallResult) -> Optional[str]:
    """Stage, apply, verify and commit, filling ``report``; returns the installed main library when it loads here."""
    folder, journal = new_txn(target.state_dir, {"source": source.url or source.path, "target": target.root,
                                                 "root_created": root_created})
    staging = os.path.join(folder, "staging")
    applying = False
    try:
        listing = stream_into(source.path, staging, lambda entry: True,
                              on_member=lambda name, done: req.stage("unpacking %s" % name, done))
        req.stage("verifying that the unpacked library loads", listing.total_bytes)
        info = inspect(listing, staging, load)
        extra = wheel_dev_links(listing)
        plan = make_plan(target, info, listing, extra)
        refusal = _refusals(plan, req.force)
        if refusal:
            raise refusal
        for link in extra:
            os.symlink(link.linkname, os.path.join(staging, link.role, link.rel))
        if plan.already_in_place(staging):
            # The same release, byte for byte: nothing to replace, back up or record; say so and stop here.
            discard(target.state_dir, folder)
            verified = _verify_installed(plan, load)
            report.installed, report.plan, report.verify = True, dict(plan.to_dict(), unchanged=True), verified
            return os.path.join(plan.dest_dirs["lib"], info.main_lib) if verified["checked"] and info.main_lib else None
        journal.update(status="applying", cudnn_version=info.cudnn_version, built_for_cuda=info.built_for_cuda,
                       dirs=plan.dirs, ops=_journal_ops(plan))
        write_journal(folder, journal)
        applying = True
        hooks.point("after-journal")
        req.stage("installing files into %s" % target.root, listing.total_bytes)
        apply(folder, journal)
        req.stage("verifying the installed library", listing.total_bytes)
        verified = _verify_installed(plan, load)
        if verified["checked"] and not verified["ok"] and not req.force:
            raise Refusal("the installed %s failed its load check (%s); the install was undone"
                          % (info.main_lib, verified["error"]),
                          "a cuDNN that does not load or reports another version would break every user",
                          failed_load_check_fix())
        record_placed(journal)  # what rollback compares against, so it never destroys later files
        hooks.point("before-commit")
        entry = commit(target.state_dir, folder, journal)
        applying = False
    except BaseException as exc:
        _unwind(exc, target, folder, journal, applying)
        raise
    report.installed, report.plan, report.verify, report.history_entry = True, plan.to_dict(), verified, entry
    return os.path.join(plan.dest_dirs["lib"], info.main_lib) if verified["checked"] and info.main_lib else None


def _unwind(exc: BaseException, target: Target, folder: str, journal: dict, applying: bool) -> None:
    """Undoes a failed transaction; an OSError becomes a Refusal that says exactly what the target holds now."""
    version = journal.get("cudnn_version") or "the new cuDNN"
    if journal.get("status") == "committed":  # the commit mark is on disk: the install stands
        if isinstance(exc, Interrupted):
            exc.installed = True
        if isinstance(exc, OSError):
            raise Refusal("recording the finished install failed: %s" % exc,
                          "cuDNN %s is installed and verified, but its record did not reach the history" % version,
                          finish_recording_fix(rollback_command(target))) from exc
        return
    if applying:
        try:
            undo(folder, journal)
        except OSError as again:
            raise Refusal("install failed: %s" % (exc or type(exc).__name__),
                          "undoing it failed too (%s), so the files in %s are part-way between the old cuDNN and %s; "
                          "%s records every step" % (again, target.root, version, folder),
                          finish_undo_fix(rollback_command(target))) from exc
    try:
        if os.path.isdir(folder):
            discard(target.state_dir, folder)
    except OSError:
        pass  # the staging folder is left; the next run removes it (its journal says what, if anything, to undo)
    if isinstance(exc, OSError):
        state = ("the target was left as it was (the journal undid every change)" if applying
                 else "no cuDNN file in %s was changed" % target.root)
        raise failed(exc, state, retry_install_fix()) from exc
