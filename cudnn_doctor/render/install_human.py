"""The installer's and rollback's human output: the plan, the result and the check as plain lines."""
from __future__ import annotations

import os
from typing import List, Optional

from ..run_results import InstallResult


def human_bytes(n: int) -> str:
    """1234567 -> '1.2 MB' (decimal units, like df -H)."""
    size = float(n)
    for unit in ("bytes", "kB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            return "%d %s" % (size, unit) if unit == "bytes" else "%.1f %s" % (size, unit)
        size /= 1000.0
    return "%d bytes" % size


_MARK = {"new": "+", "replace": "~", "retire": "-"}
_SEVERITY = {"error": "x", "warning": "!", "info": "i"}


def _where(path: str, root: str) -> str:
    return os.path.relpath(path, root) if path == root or path.startswith(root.rstrip("/") + "/") else path


def plan_lines(plan: dict, dry_run: bool) -> List[str]:
    info, target = plan["archive"], plan["target"]
    lines = []
    built = info.get("built_for_cuda")
    lines.append("cuDNN %s%s (%s%s) from %s" % (
        info["cudnn_version"], " for CUDA %s" % built if built else "", info["system"],
        "-" + info["arch"] if info.get("arch") else "", os.path.basename(info["archive"])))
    if info.get("library_version"):
        lines.append("  its library loads here and reports %s, built with CUDA %s"
                     % (info["library_version"], info.get("library_cudart") or "?"))
    if target["kind"] == "toolkit":
        lines.append("Target: CUDA %s toolkit at %s" % (target.get("cuda_version") or "(version unknown)",
                                                         target["root"]))
    else:
        lines.append("Target: folder %s" % target["root"])
    compat = plan["compatibility"]
    verdict = {True: "compatible", False: "NOT compatible", None: "not checked"}[compat["compatible"]]
    lines.append("CUDA match: %s%s" % (verdict, " (%s)" % compat["reason"] if compat["reason"] else ""))
    for problem in plan["mismatch"]:
        lines.append("Platform: %s" % problem)
    counts = plan["counts"]
    lines.append("Files%s: %d new, %d replaced, %d retired to the backup" % (
        " it would change" if dry_run else "", counts["new"], counts["replace"], counts["retire"]))
    for f in plan["files"]:
        dest = _where(f["dest"], target["root"])
        text = "  %s %s" % (_MARK[f["action"]], dest)
        if f.get("link_to"):
            text += " -> %s" % f["link_to"]
        if f["action"] == "replace":
            text += "  (replaces the existing one)"
        if f.get("reason"):
            text += "  (%s)" % f["reason"]
        if f.get("synthesized"):
            text += "  (dev link added: wheels ship none)"
        lines.append(text)
    if plan["skipped"]:
        lines.append("Not installed (not cuDNN library/header files): %s" % ", ".join(plan["skipped"][:8])
                     + (" and %d more" % (len(plan["skipped"]) - 8) if len(plan["skipped"]) > 8 else ""))
    for note in list(info.get("notes") or []) + list(plan.get("notes") or []):
        lines.append("Note: %s" % note)
    return lines


def _check_lines(check: dict) -> List[str]:
    if not check.get("ran"):
        return ["Check: %s" % check.get("note")] if check.get("note") else []
    seen = ", ".join("%s=%s" % kv for kv in sorted((check.get("seen_with") or {}).items()))
    lines = ["Check: verdict %s (`cudnn-doctor check` with %s)" % (check["verdict"], seen)]
    for f in check["findings"]:
        lines.append("  %s %s  %s%s" % (_SEVERITY.get(f["severity"], "?"), f["id"], f["title"],
                                        "" if f["about_install"] else "  (not tied to the installed folders)"))
        if f.get("fix") and f["severity"] != "info":
            lines.append("      fix: %s" % f["fix"])
    if not check["findings"]:
        lines.append("  nothing found about the installed cuDNN")
    if check.get("other_findings"):
        lines.append("  %d more finding(s) about the rest of this machine: run `cudnn-doctor check`"
                     % check["other_findings"])
    return lines


def _backup_line(backup: dict) -> Optional[str]:
    if backup.get("bytes") is None:
        return None
    recorded = "%d install%s recorded, %s in all" % (backup["entries"], "" if backup["entries"] == 1 else "s",
                                                     human_bytes(backup["total_bytes"]))
    if not backup["bytes"]:
        return "Backup: nothing was replaced, so nothing was kept (%s)" % recorded
    return "Backup: %s of replaced files kept in %s for rollback (%s; `%s` drops older ones)" % (
        human_bytes(backup["bytes"]), backup["entry"], recorded, backup["prune_hint"])


def result_lines(result: InstallResult) -> List[str]:
    report = result.to_dict()
    lines = ["Repaired first: %s" % note for note in report.get("recovered", [])]
    plan, source = report["plan"], report.get("source") or {}
    if source.get("kind") == "pypi":
        got = source.get("manifest") or {}
        lines.append("Source: %s, so NVIDIA's wheel %s came from PyPI instead (sha256 from PyPI, %s files checked "
                     "against its RECORD)" % (got.get("why") or "NVIDIA's download host could not be reached",
                                              got.get("wheel"), got.get("record_checked")))
    if plan.get("unchanged"):
        lines.append("cuDNN %s is already installed in %s, file for file the same as %s: nothing was changed (no "
                     "backup, no history entry)." % (plan["archive"]["cudnn_version"], plan["target"]["root"],
                                                     os.path.basename(plan["archive"]["archive"])))
    else:
        lines += plan_lines(plan, dry_run=False)
    verify = report.get("verify") or {}
    if verify.get("checked") and verify.get("ok"):
        lines.append("Verified: %s loads and reports cuDNN %s" % (os.path.basename(verify["library"]),
                                                                 verify.get("version")))
    elif verify.get("checked"):
        lines.append("Load check: FAILED (%s); kept only because of --force" % verify.get("error"))
    elif verify:
        lines.append("Load check: skipped (%s)" % verify.get("reason"))
    if report.get("loader_cache"):
        lines.append("Loader cache: %s" % report["loader_cache"])
    backup = _backup_line(report.get("backup") or {})
    if backup:
        lines.append(backup)
    lines += _check_lines(report.get("check") or {})
    smoke = report.get("smoke") or {}
    if smoke.get("ok") is False:
        # Policy: a smoke failure is reported, not undone, and exits 0. The load check proved the
        # files; the smoke test exercises the GPU and driver, which an install cannot fix.
        lines.append("Installed; smoke test failed: %s (exit 0: the files are in place; fix the driver/GPU and "
                     "run `cudnn-doctor smoke`)" % (smoke.get("summary") or "no summary"))
        if smoke.get("fix"):
            lines.append("  fix: %s" % smoke["fix"])
        lines.append("Undo with: %s" % report["rollback_hint"])
        return lines
    if smoke:
        state = {True: "passed: ", None: ""}[smoke.get("ok")]
        lines.append("Smoke test: %s%s" % (state, smoke.get("summary") or ""))
    lines.append("Nothing changed." if plan.get("unchanged") else "Installed. Undo with: %s" % report["rollback_hint"])
    return lines



def rollback_lines(report: dict) -> List[str]:
    if report.get("nothing"):
        return ["Nothing to roll back in %s: %s." % (report["target"], report["nothing"])]
    lines = ["Repaired: %s" % note for note in report["recovered"]]
    if "pruned" in report:
        freed = sum(d["backup_bytes"] for d in report["pruned"])
        lines.append("Pruned %d history entr%s, freed %s; kept %d (%s) that can still be rolled back."
                     % (len(report["pruned"]), "y" if len(report["pruned"]) == 1 else "ies", human_bytes(freed),
                        report["kept"], human_bytes(report["kept_bytes"])))
        for d in report["pruned"]:
            lines.append("  dropped cuDNN %s installed %s" % (d.get("cudnn_version"), d.get("committed")))
        return lines
    done = report.get("rolled_back")
    removed = ["Removed the folder %s, which the install had created." % report["removed_prefix"]] \
        if report.get("removed_prefix") else []
    if not done:
        return lines + ["The interrupted install was undone; nothing else was rolled back."] + removed
    lines.append("Rolled back cuDNN %s (installed %s from %s): removed %d files, restored %d."
                 % (done.get("cudnn_version"), done.get("committed"), done.get("source"),
                    len(done.get("removed") or []), len(done.get("restored") or [])))
    for moved in done.get("set_aside") or []:
        lines.append("  set aside %s -> %s (changed since the install)" % (moved["path"], moved["moved_to"]))
    lines += ["  restored %s" % path for path in done.get("restored") or []]
    lines += ["  removed  %s" % path for path in done.get("removed") or []]
    lines.append("Earlier installs left to roll back: %d" % done.get("left", 0))
    lines += ["Loader cache: %s" % note for note in report.get("loader_cache") or []]
    return lines + removed
