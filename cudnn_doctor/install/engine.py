"""The install and rollback procedures, start to finish; returns plain reports, raises Refusal."""
from __future__ import annotations

import os
import platform
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import Callable, List, Mapping, Optional

from ..versions import decode_cudnn
from . import hooks
from .errors import Refusal
from .extract import stream_into
from .fetch import Progress, Source, download, from_manifest, is_url, local
from .inspect import inspect, keep_for_inspection
from .journal import StateLock, discard, write_journal
from .layout import host_arch
from .plan import Plan, make_plan, wheel_dev_links
from .target import Target, resolve
from .transaction import apply, commit, new_txn, recover, rollback_newest, undo
from .verify import load_cudnn, refresh_loader_cache, smoke

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


def _platform_of(target: Target) -> str:
    """NVIDIA's manifest key for the target: linux-x86_64, linux-sbsa, linux-aarch64, windows-x86_64."""
    if target.system == "windows":
        return "windows-x86_64"
    return "linux-%s" % (target.arch or host_arch(platform.machine()))


def obtain(req: Request, target: Target, progress: Optional[Progress]) -> Source:
    if req.version:
        if not req.cuda:
            raise Refusal("--version needs --cuda", "NVIDIA builds each cuDNN release per CUDA major",
                          "add --cuda 12 (or the major of your toolkit)", code=2)
        return from_manifest(req.version, req.cuda, _platform_of(target), req.manifest_url, req.sha256,
                             req.allow_http, req.env, progress)
    if not req.source:
        raise Refusal("nothing to install", "give an archive, a URL, or --version X --cuda N",
                      "e.g. cudnn-doctor install cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz", code=2)
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
                       "use the cuDNN archive for this platform, or pass --force if this is deliberate")
    if plan.compatible is False:
        major = (target.cuda_version or "").split(".")[0]
        return Refusal("cuDNN %s built for CUDA %s does not fit the CUDA %s toolkit at %s (%s)"
                       % (info.cudnn_version, info.built_for_cuda or "?", target.cuda_version, target.root,
                          plan.compat_reason),
                       "frameworks would fail to load or run its kernels",
                       "install the cuDNN build for CUDA %s (e.g. --version %s --cuda %s), or pass --force"
                       % (major, info.cudnn_version, major))
    if info.load_error:
        return Refusal("the archive's %s does not load on this machine: %s" % (info.main_lib, info.load_error),
                       "an install that cannot load would break every program using this toolkit",
                       "install what the loader says is missing, or pass --force to install anyway")
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


def run_install(req: Request, progress: Optional[Progress] = None, load: Loader = load_cudnn,
                smoke_fn: Smoke = smoke) -> dict:
    """Plan, stage, apply, verify, commit; any failure before commit leaves the target as it was."""
    target = resolve(req.cuda_home, req.prefix, req.env)
    source = obtain(req, target, progress)
    try:
        if req.dry_run:
            return _dry_run(req, target, source, load)
        return _install(req, target, source, load, smoke_fn)
    finally:
        source.cleanup()


def _dry_run(req: Request, target: Target, source: Source, load: Loader) -> dict:
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
    return {"dry_run": True, "installed": False, "source": source.to_dict(), "plan": plan.to_dict(),
            "refusal": str(refusal) if refusal else None, "refusal_code": refusal.code if refusal else 0}


def _install(req: Request, target: Target, source: Source, load: Loader, smoke_fn: Smoke) -> dict:
    root_created = False
    if target.kind == "prefix" and not os.path.isdir(target.root):
        os.mkdir(target.root, 0o755)
        root_created = True
    report: dict = {"dry_run": False, "installed": False, "source": source.to_dict()}
    lock = StateLock(target.state_dir, req.lock_wait)
    try:
        with lock:
            report["recovered"] = recover(target.state_dir)
            hooks.point("after-lock")
            report.update(_transaction(req, target, source, load, root_created))
            report["loader_cache"] = refresh_loader_cache(report["plan"]["dest_dirs"].get("lib", target.root))
    finally:
        if root_created and not report["installed"]:
            try:
                os.rmdir(target.root)
            except OSError:
                pass
    main = report.pop("_main_lib", None)
    if req.smoke and main:
        report["smoke"] = smoke_fn(main)
    elif req.smoke:
        report["smoke"] = {"available": False, "ok": None, "summary": "not run: the library is not for this machine"}
    else:
        report["smoke"] = {"available": None, "ok": None, "summary": "skipped (--no-smoke)"}
    report["rollback_hint"] = "cudnn-doctor rollback %s %s" % (
        "--prefix" if target.kind == "prefix" else "--cuda-home", target.given or target.root)
    return report


def _transaction(req: Request, target: Target, source: Source, load: Loader, root_created: bool) -> dict:
    folder, journal = new_txn(target.state_dir, {"source": source.url or source.path, "target": target.root,
                                                 "root_created": root_created})
    staging = os.path.join(folder, "staging")
    applying = False
    try:
        listing = stream_into(source.path, staging, lambda entry: True)
        info = inspect(listing, staging, load)
        extra = wheel_dev_links(listing)
        plan = make_plan(target, info, listing, extra)
        refusal = _refusals(plan, req.force)
        if refusal:
            raise refusal
        for link in extra:
            os.symlink(link.linkname, os.path.join(staging, link.role, link.rel))
        journal.update(status="applying", cudnn_version=info.cudnn_version, built_for_cuda=info.built_for_cuda,
                       dirs=plan.dirs, ops=_journal_ops(plan))
        write_journal(folder, journal)
        applying = True
        hooks.point("after-journal")
        apply(folder, journal)
        verified = _verify_installed(plan, load)
        if verified["checked"] and not verified["ok"] and not req.force:
            raise Refusal("the installed %s failed its load check (%s); the install was undone"
                          % (info.main_lib, verified["error"]),
                          "a cuDNN that does not load or reports another version would break every user",
                          "download the archive again; pass --force to keep such an install anyway")
        hooks.point("before-commit")
        entry = commit(target.state_dir, folder, journal)
        applying = False
    except BaseException:
        if applying:
            undo(folder, journal)
        if os.path.isdir(folder):
            discard(target.state_dir, folder)
        raise
    main = os.path.join(plan.dest_dirs["lib"], info.main_lib) if verified["checked"] else None
    return {"installed": True, "plan": plan.to_dict(), "verify": verified, "history_entry": entry,
            "_main_lib": main}


def run_rollback(cuda_home: Optional[str], prefix: Optional[str], env: Mapping[str, str],
                 lock_wait: float = 0.0) -> dict:
    """Undoes the newest install (or first repairs an interrupted one, and stops there)."""
    target = resolve(cuda_home, prefix, env)
    if not os.path.isdir(target.state_dir):
        raise Refusal("nothing to roll back in %s" % target.root,
                      "cudnn-doctor has no record of an install there (it only undoes its own installs)",
                      "nothing to do; a cuDNN copied by hand has to be removed by hand")
    report: dict = {"target": target.root, "recovered": [], "rolled_back": None}
    with StateLock(target.state_dir, lock_wait):
        report["recovered"] = recover(target.state_dir)
        if not report["recovered"]:
            done = rollback_newest(target.state_dir)
            if done is None:
                raise Refusal("nothing to roll back in %s" % target.root, "every recorded install was already "
                              "rolled back", "nothing to do")
            report["rolled_back"] = {k: done.get(k) for k in ("id", "source", "cudnn_version", "committed",
                                                               "restored", "removed", "left", "root_created")}
            libdirs = {d["path"] for d in done.get("dirs", []) if os.path.isdir(d["path"])}
            report["loader_cache"] = [n for n in (refresh_loader_cache(d) for d in sorted(libdirs)) if n]
    rolled = report["rolled_back"] or {}
    if rolled.get("root_created"):
        try:
            os.rmdir(target.root)
        except OSError:
            pass
    return report
