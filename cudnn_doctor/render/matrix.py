"""matrix's answers for a terminal: the lookups as tables, the pair question as a verdict with its reasons; every
source shown once, as a numbered note (sources are long and hold [brackets])."""
from __future__ import annotations

from typing import Any, Dict, List


def _table(con, title: str, columns: List[str], rows: List[List[Any]]) -> None:
    """Print a table; a 'source' column becomes [n] references listed once below it (sources are long)."""
    from rich.markup import escape
    from rich.table import Table

    notes: List[str] = []
    if "source" in columns:
        at = columns.index("source")
        rows = [list(r) for r in rows]
        for r in rows:
            text = "" if r[at] is None else str(r[at])
            if text and text not in notes:
                notes.append(text)
            r[at] = "[%d]" % (notes.index(text) + 1) if text else ""
    t = Table(title=escape(title), title_justify="left", show_lines=False)
    for c in columns:
        t.add_column(escape(c), overflow="fold")
    for r in rows:
        t.add_row(*[escape("" if v is None else str(v)) for v in r])
    con.print(t)
    for n, text in enumerate(notes, 1):
        con.print("  [%d] %s" % (n, text), markup=False, highlight=False)


def render_matrix(kind: str, data: Dict[str, Any], con: Any) -> None:
    """A lookup's answer as tables ("cuda", "cudnn", "driver" or "for"), each source once as a numbered note."""
    say = lambda text: con.print(text, markup=False)  # noqa: E731  (sources contain [brackets])
    if kind == "cuda":
        q = data["query"]["cuda"]
        _table(con, "Drivers for CUDA %s" % q, ["platform", "driver", "how", "status", "source"],
               [[d["platform"], d["driver"], d["how"], d["status"], d["source"]] for d in data["drivers"]])
        _table(con, "cuDNN builds for CUDA %s" % q,
               ["cuDNN", "build", "CUDA", "driver", "min CC", "status", "source"],
               [[b["cudnn"], b["variant"], _cuda_text(b["cuda"]), b["driver"], b["min_cc"], b["status"],
                 b["source"]] for b in data["cudnn_builds"]])
        if data.get("cudnn_builds_minor_compat"):
            _table(con, "cuDNN builds for older CUDA %s.x minors (run on %s through minor-version compatibility)"
                   % (q.split(".")[0], q), ["cuDNN", "build", "CUDA", "driver", "min CC", "status", "source"],
                   [[b["cudnn"], b["variant"], _cuda_text(b["cuda"]), b["driver"], b["min_cc"], b["status"],
                     b["source"]] for b in data["cudnn_builds_minor_compat"]])
        for fam in data["cudnn_by_family"]:
            say("Also: cuDNN %s%s %s builds (%s) [%s: %s]" % (
                fam["from"] or "", ("-" + fam["to"]) if fam["to"] else " and later", fam["variant"], fam["note"],
                fam["status"], fam["source"]))
        if data["min_cc"]:
            say("GPUs: compute capability %s or newer [%s]" % (data["min_cc"]["cc"], data["min_cc"]["source"]))
    elif kind == "cudnn":
        q = data["query"]["cudnn"]
        if data["builds"]:
            _table(con, "cuDNN %s builds and requirements" % q,
                   ["build", "CUDA", "static linking", "driver", "min CC", "status", "source"],
                   [[b["variant"], _cuda_text(b["cuda"]), _cuda_text(b["static_link"]) or "?", b["driver"],
                     b["min_cc"], b["status"], b["source"]] for b in data["builds"]])
        else:
            say("cuDNN %s: no support-matrix row in compat." % q)
        for v in data["likely_variants"]:
            say("Likely build: %s [%s: %s]" % (v["variant"], v["status"], v["source"]))
        if data["note"]:
            say(data["note"])
        if data["min_cc"]:
            say("Minimum compute capability: %s [%s: %s]" % (
                data["min_cc"]["cc"], data["min_cc"]["status"], data["min_cc"]["source"]))
        for b in data["known_bad"]:
            say("Known bad: %s (fixed in %s) [%s]" % (b["problem"], b["fixed_in"], b["source"]))
    elif kind == "driver":
        q = data["query"]["driver"]
        branch = data["query"].get("branch")
        title = ("CUDA releases a driver of branch R%s can run" % branch if branch else
                 "CUDA releases driver %s can run" % q)
        _table(con, "%s (newest by itself: CUDA %s)" % (title, data["max_cuda"] or "?"),
               ["CUDA", "runs", "how", "toolkit driver", "source"],
               [[r["cuda"], "yes" if r["runs"] else "no",
                 r["how"] + (" (%s)" % r["branch_releases"] if r.get("branch_releases") else ""), r["needs"],
                 r["source"]] for r in data["cuda"]])
    else:
        for name, table in data["tables"].items():
            rows = table["rows"]
            if not rows:
                continue
            columns = [k for k in rows[0] if k not in ("source", "status")] + ["status", "source"]
            # Rows without a source of their own carry the table's.
            _table(con, name, columns,
                   [[_fmt(r.get(c)) if c != "source" else (r.get("source") or table["source"]) for c in columns]
                    for r in rows])


def _cuda_text(minors: List[str]) -> str:
    """'12.0-12.4' for a build that lists every minor from the first to the last, else the list."""
    return "%s-%s" % (minors[0], minors[-1]) if len(minors) > 2 else ", ".join(minors)


def _fmt(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


def render_pair(data: Dict[str, Any], con: Any) -> None:
    """The pair question's verdict, its reasons and their sources."""
    say = lambda text: con.print(text, markup=False, highlight=False)  # noqa: E731  (sources hold [brackets])
    q = data["query"]
    extra = "".join(", %s %s" % (k, q[k]) for k in ("driver", "gpu", "cc") if q.get(k))
    what = ("cuDNN %s with CUDA %s" % (q["cudnn"], q["cuda"])) if q["cudnn"] else "CUDA %s" % q["cuda"]
    say("%s%s (%s): %s" % (what, extra, q["platform"], data["verdict"].upper()))
    notes: List[str] = []
    for r in data["reasons"]:
        mark = {True: "ok", False: "NO", None: "??"}[r["ok"]]
        ref = ""
        if r["source"]:
            if r["source"] not in notes:
                notes.append(r["source"])
            ref = " [%d]" % (notes.index(r["source"]) + 1)
        say("  %s  %s%s" % (mark, r["text"], ref))
    for n, text in enumerate(notes, 1):
        say("  [%d] %s" % (n, text))
    say("Knowledge dated %s (%s); `cudnn-doctor update` refreshes it." % (data["knowledge"]["date"] or "?",
                                                                          data["knowledge"]["origin"]))


def render_gpu(data: Dict[str, Any], con: Any) -> None:
    """A one-GPU question's verdict, its reasons, and the newest CUDA and cuDNN per CUDA major that fit the GPU."""
    say = lambda text: con.print(text, markup=False, highlight=False)  # noqa: E731  (sources hold [brackets])
    q = data["query"]
    named = ("%s (compute capability %s, %s)" % (q["gpu"], q["cc"], q["architecture"]) if q.get("gpu") else
             "compute capability %s (%s)" % (q["cc"], q["architecture"]))
    asked = ["%s %s" % (label, q[key]) for key, label in (("driver", "driver"), ("cuda", "CUDA"), ("cudnn", "cuDNN"))
             if q.get(key)]
    extra = " with " + ", ".join(asked) if asked else ""
    say("%s%s (%s): %s" % (named, extra, q["platform"], data["verdict"].upper()))
    notes: List[str] = []

    def ref(source: str) -> str:
        if not source:
            return ""
        if source not in notes:
            notes.append(source)
        return " [%d]" % (notes.index(source) + 1)

    for r in data["reasons"]:
        say("  %s  %s%s" % ({True: "ok", False: "NO", None: "??"}[r["ok"]], r["text"], ref(r["source"])))
    if data["fits"]:
        say("Newest per CUDA major for this GPU%s:" % (" on driver %s" % q["driver"] if q.get("driver") else ""))
        for row in data["fits"]:
            say("  CUDA %s (%s %s)%s, cuDNN %s%s" % (row["cuda"], row["how"], row["driver"], ref(row["source"]),
                                                    row["cudnn"] or "none", ref(row["cudnn_source"])))
    for n, text in enumerate(notes, 1):
        say("  [%d] %s" % (n, text))
    say("Knowledge dated %s (%s); `cudnn-doctor update` refreshes it." % (data["knowledge"]["date"] or "?",
                                                                          data["knowledge"]["origin"]))
