"""The install plan: every file and where it goes, what it replaces, what retires, and whether to refuse."""
from __future__ import annotations

import filecmp
import os
import re
import stat
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ..knowledge import load_compat
from ..remedies.install import move_folder_fix, write_access_fix
from ..versions import major_minor
from .errors import Refusal
from .extract import Entry, Listing
from .inspect import ArchiveInfo
from .layout import same_arch, stale_files
from .target import Target


@dataclass
class Action:
    """One destination path and what happens to it."""

    role: str
    rel: str
    dest: str
    action: str  # new | replace | retire
    kind: str  # file | symlink (what the archive puts there; for retire, what is there now)
    linkname: str = ""
    reason: str = ""
    synthesized: bool = False

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"dest": self.dest, "action": self.action, "kind": self.kind, "role": self.role}
        if self.action != "retire" and not self.synthesized:
            out["from_archive"] = "%s/%s" % (self.role, self.rel)
        if self.linkname:
            out["link_to"] = self.linkname
        if self.reason:
            out["reason"] = self.reason
        if self.synthesized:
            out["synthesized"] = True
        return out


@dataclass
class Plan:
    target: Target
    info: ArchiveInfo
    dest_dirs: Dict[str, str]
    actions: List[Action] = field(default_factory=list)
    dirs: List[dict] = field(default_factory=list)  # journal form: path, existed, mode, new_mode
    compatible: Optional[bool] = None
    compat_reason: str = ""
    mismatch: List[str] = field(default_factory=list)  # OS/arch problems (refused unless --force)
    skipped: List[str] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)

    def counts(self) -> Dict[str, int]:
        out = {"new": 0, "replace": 0, "retire": 0}
        for a in self.actions:
            out[a.action] += 1
        return out

    def already_in_place(self, staging: str) -> bool:
        """Whether the target already holds exactly what the archive (unpacked in ``staging``) would put there: every
        file the same bytes and readable, every link the same target, nothing new or retired, no folder to create or
        open up. Then installing changes nothing, and keeps no backup and no history entry."""
        if not self.actions or any(a.action != "replace" for a in self.actions) or \
                any(not d["existed"] or d["new_mode"] is not None for d in self.dirs):
            return False
        for a in self.actions:
            staged = os.path.join(staging, a.role, *a.rel.split("/"))
            if a.kind == "symlink":
                if not os.path.islink(a.dest) or os.readlink(a.dest) != os.readlink(staged):
                    return False
            elif os.path.islink(a.dest) or not os.path.isfile(a.dest) or \
                    stat.S_IMODE(os.stat(a.dest).st_mode) & 0o444 != 0o444 or \
                    not filecmp.cmp(staged, a.dest, shallow=False):
                return False
        return True

    def to_dict(self) -> dict:
        return {"target": {"root": self.target.root, "kind": self.target.kind, "given": self.target.given,
                           "system": self.target.system, "arch": self.target.arch,
                           "cuda_version": self.target.cuda_version,
                           "cuda_version_source": self.target.cuda_version_source},
                "archive": self.info.to_dict(), "dest_dirs": self.dest_dirs,
                "compatibility": {"compatible": self.compatible, "reason": self.compat_reason},
                "mismatch": self.mismatch, "files": [a.to_dict() for a in self.actions],
                "counts": self.counts(), "skipped": self.skipped, "notes": self.target.notes + self.notes}


def compat_verdict(cudnn_version: str, built_for_cuda: Optional[str], toolkit_cuda: str) -> Tuple[Optional[bool], str]:
    """The project's compatibility table decides (cudnn_doctor.knowledge); None when it cannot say."""
    return load_compat().cudnn_cuda_verdict(cudnn_version, built_for_cuda, toolkit_cuda)


def wheel_dev_links(listing: Listing) -> List[Entry]:
    """Wheels ship only libX.so.N; a toolkit also wants the libX.so dev link that `-lX` finds."""
    if not listing.wheel:
        return []
    libs = listing.names("lib")
    out = []
    for rel, entry in sorted(libs.items()):
        m = re.match(r"^(libcudnn\w*)\.so\.\d+$", rel)
        if m and entry.kind == "file" and "%s.so" % m.group(1) not in libs:
            out.append(Entry("lib", "%s.so" % m.group(1), "symlink", linkname=rel, synthesized=True))
    return out


def _dir_records(paths: List[str], stop: str) -> List[dict]:
    """Journal records for every destination folder, missing parents first (up to ``stop``)."""
    records: List[dict] = []
    seen = set()
    for path in paths:
        chain = []
        p = path
        while p not in seen and p != stop and not os.path.isdir(p) and p != os.path.dirname(p):
            chain.append(p)
            p = os.path.dirname(p)
        for missing in reversed(chain):
            records.append({"path": missing, "existed": False, "mode": None, "new_mode": 0o755})
            seen.add(missing)
        if path not in seen:
            mode = stat.S_IMODE(os.stat(path).st_mode)
            wanted = mode | 0o555  # the `a+rx` rule for folders (failure D5)
            records.append({"path": path, "existed": True, "mode": mode,
                            "new_mode": wanted if wanted != mode else None})
            seen.add(path)
    return records


def make_plan(target: Target, info: ArchiveInfo, listing: Listing, extra: List[Entry]) -> Plan:
    """Pure decision from facts already gathered; touches nothing."""
    entries = listing.entries + extra
    roles = sorted({e.role for e in entries})
    all_dirs = target.dest_dirs(info.system)
    dest_dirs = {r: all_dirs[r] for r in roles if r in all_dirs}
    plan = Plan(target=target, info=info, dest_dirs=dest_dirs, skipped=list(listing.skipped))
    missing_roles = [r for r in roles if r not in all_dirs]
    if missing_roles:
        plan.mismatch.append("a %s toolkit has no place for the archive's %s files"
                             % (target.system, "/".join(missing_roles)))
    # Real files first, then links (never dangling), headers last: a program that starts
    # mid-install sees a library set before it sees the header that describes it.
    order = sorted((e for e in entries if e.role in dest_dirs),
                   key=lambda e: (e.role == "include", e.kind == "symlink"))
    incoming: Dict[str, set] = {}
    for e in order:
        dest = os.path.join(dest_dirs[e.role], *e.rel.split("/"))
        if os.path.isdir(dest) and not os.path.islink(dest):
            raise Refusal("%s is a folder where the archive puts a file" % dest,
                          "replacing a folder with a file would lose what is in it",
                          move_folder_fix())
        plan.actions.append(Action(e.role, e.rel, dest, "replace" if os.path.lexists(dest) else "new",
                                   e.kind, e.linkname, synthesized=e.synthesized))
        if "/" not in e.rel:
            incoming.setdefault(dest_dirs[e.role], set()).add(e.rel)
    for folder in sorted(set(dest_dirs.values())):
        try:
            existing = [n for n in os.listdir(folder) if not os.path.isdir(os.path.join(folder, n))
                        or os.path.islink(os.path.join(folder, n))]
        except OSError:
            continue
        role = next(r for r, d in dest_dirs.items() if d == folder)
        for name, why in stale_files(existing, incoming.get(folder, set()), info.major):
            path = os.path.join(folder, name)
            plan.actions.append(Action(role, name, path, "retire", "symlink" if os.path.islink(path) else "file",
                                       os.readlink(path) if os.path.islink(path) else "", reason=why))
    plan.dirs = _dir_records(sorted(set(os.path.dirname(a.dest) for a in plan.actions) | set(dest_dirs.values())),
                             os.path.dirname(target.root))
    _check_writable(plan)
    _check_fit(plan)
    return plan


def _check_writable(plan: Plan) -> None:
    for d in plan.dirs:
        path = d["path"]
        while not os.path.isdir(path):
            path = os.path.dirname(path)
        if not os.access(path, os.W_OK):
            raise Refusal("no permission to write into %s" % path, "installing cuDNN there needs write access",
                          write_access_fix())


def _check_fit(plan: Plan) -> None:
    """OS, architecture and CUDA match between the archive and a toolkit (not for --prefix)."""
    target, info = plan.target, plan.info
    if target.kind != "toolkit":
        plan.compat_reason = "installing into a plain folder: no toolkit to match the CUDA build against"
        return
    if info.system != target.system:
        plan.mismatch.append("the archive is for %s but the toolkit at %s is laid out for %s"
                             % (info.system, target.root, target.system))
    elif info.system == "linux" and info.arch and target.arch and not same_arch(info.arch, target.arch):
        plan.mismatch.append("the archive is built for linux-%s but the toolkit targets linux-%s"
                             % (info.arch, target.arch))
    if not target.cuda_version:
        plan.compat_reason = "the toolkit's CUDA version is unknown, so the CUDA match was not checked"
        return
    toolkit = major_minor(target.cuda_version) or target.cuda_version
    plan.compatible, plan.compat_reason = compat_verdict(info.cudnn_version, info.built_for_cuda, toolkit)
