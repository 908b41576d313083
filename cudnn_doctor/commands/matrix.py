"""The `matrix` subcommand: the knowledge's answers (CUDA, cuDNN, driver, framework, or a cuDNN x CUDA pair) without
probing; the questions themselves live in cudnn_doctor/knowledge (lookup.py, pair.py)."""
from __future__ import annotations

import sys
from typing import Any, Dict, List, Optional

import typer

from ..ui import EXIT_PROBLEMS, EXIT_OK, error_exit

# --- rendering -------------------------------------------------------------------


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


def _render(kind: str, data: Dict[str, Any]) -> None:
    from ..ui import console

    con = console()
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


def _render_pair(data: Dict[str, Any]) -> None:
    from ..ui import console

    con = console()
    say = lambda text: con.print(text, markup=False, highlight=False)  # noqa: E731  (sources hold [brackets])
    q = data["query"]
    extra = "".join(", %s %s" % (k, q[k]) for k in ("driver", "gpu", "cc") if q.get(k))
    say("cuDNN %s with CUDA %s%s (%s): %s" % (q["cudnn"], q["cuda"], extra, q["platform"], data["verdict"].upper()))
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


def pair_answer(compat, cuda: str, cudnn: str, driver: Optional[str], platform: str,
                gpu: Optional[str], cc: Optional[str]) -> Dict[str, Any]:
    """The pair question's answer as matrix prints it (the verdict itself is compat.pair_verdict)."""
    from ..versions import mm, release3

    if mm(cuda) is None:
        raise ValueError("--cuda wants a CUDA version such as 12.4, not %r" % cuda)
    if release3(cudnn) is None:
        raise ValueError("--cudnn wants a cuDNN version such as 9.1.0, not %r" % cudnn)
    if driver is not None and not (driver.strip().isdigit() or compat_version_ok(driver)):
        raise ValueError("--driver wants a driver version such as 535.104.05 or a branch such as 580, not %r" % driver)
    if gpu and cc:
        raise ValueError("give --gpu or --cc, not both")
    if cc is not None and mm(cc) is None:
        raise ValueError("--cc wants a compute capability such as 8.0, not %r" % cc)
    if gpu:
        cc = compat.cc_for_gpu(gpu)
        if cc is None:
            raise ValueError("--gpu %r is not a GPU the knowledge knows; give its compute capability with --cc "
                             "(nvidia-smi --query-gpu=compute_cap --format=csv)" % gpu)
    verdict = compat.pair_verdict(cuda, cudnn, driver=driver, platform=platform, cc=cc)
    query: Dict[str, Any] = {"cuda": verdict.cuda, "cudnn": verdict.cudnn, "platform": platform}
    for key, value in (("driver", driver), ("gpu", gpu), ("cc", cc)):
        if value:
            query[key] = value
    return dict(verdict.to_dict(), query=query,
                knowledge={"date": compat.knowledge_date(), "origin": compat.knowledge_origin()})


def compat_version_ok(text: str) -> bool:
    from ..versions import ver

    return ver(text) is not None


def register(app: typer.Typer) -> None:
    @app.command(
        "matrix",
        help=(
            "Look up the compatibility knowledge, without probing this machine. Every row names its source.\n\n"
            "Exit codes: 0 answered (a pair that does not work exits 1), 2 bad input.\n\n"
            "Examples:\n\n"
            "  cudnn-doctor matrix --cuda 12.4                    # cuDNN builds for CUDA 12.4 and its drivers\n\n"
            "  cudnn-doctor matrix --cudnn 9.1.0                  # its CUDA builds, driver and GPU needs\n\n"
            "  cudnn-doctor matrix --cuda 12.4 --cudnn 9.1.0      # does this pair work? (add --driver, --gpu, --cc)\n\n"
            "  cudnn-doctor matrix --driver 418.39                # which CUDA releases that driver can run\n\n"
            "  cudnn-doctor matrix --for dl4j --json              # Deeplearning4j's CUDA/cuDNN pairs"
        ),
    )
    def matrix(
        cuda: Optional[str] = typer.Option(None, "--cuda", metavar="X.Y", help="A CUDA release, e.g. 12.4."),
        cudnn: Optional[str] = typer.Option(None, "--cudnn", metavar="X.Y.Z", help="A cuDNN release, e.g. 9.1.0."),
        driver: Optional[str] = typer.Option(None, "--driver", metavar="VERSION",
                                             help="A driver, e.g. 535.104.05, or a branch, e.g. 580."),
        gpu: Optional[str] = typer.Option(None, "--gpu", metavar="NAME",
                                          help="With --cuda and --cudnn: a GPU by name, e.g. 'H100'."),
        cc: Optional[str] = typer.Option(None, "--cc", metavar="N.M",
                                         help="With --cuda and --cudnn: a GPU's compute capability, e.g. 8.6."),
        framework: Optional[str] = typer.Option(None, "--for", metavar="FRAMEWORK[==VERSION]",
                                                help="dl4j, tensorflow, torch or jax, optionally ==VERSION."),
        platform: str = typer.Option("linux", "--platform", metavar="linux|windows",
                                     help="Which driver column to use (default linux)."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object (schema_version 1)."),
    ) -> None:
        pair = bool(cuda and cudnn)
        asked = [(k, v) for k, v in (("cuda", cuda), ("cudnn", cudnn), ("driver", driver), ("for", framework)) if v]
        if pair and framework:
            error_exit("--for cannot be combined with --cuda and --cudnn")
        if not pair and len(asked) != 1:
            error_exit("give one of --cuda, --cudnn, --driver or --for, or --cuda with --cudnn (a pair question)")
        if not pair and (gpu or cc):
            error_exit("--gpu and --cc go with a pair question: --cuda X --cudnn Y")
        if platform not in ("linux", "windows"):
            error_exit("--platform must be linux or windows, not %r" % platform)
        from ..knowledge import load_compat

        compat = load_compat()
        kind, value = ("pair", "") if pair else asked[0]
        try:
            if pair:
                data = pair_answer(compat, cuda, cudnn, driver, platform, gpu, cc)
            elif kind == "cuda":
                data = compat.cuda_lookup(value, platform)
            elif kind == "cudnn":
                data = compat.cudnn_lookup(value, platform)
            elif kind == "driver":
                data = compat.driver_lookup(value, platform)
            else:
                data = compat.framework_lookup(value)
        except ValueError as exc:
            error_exit(str(exc))
        code = EXIT_PROBLEMS if pair and data["ok"] is False else EXIT_OK
        if as_json:
            from ..render.envelope import dumps, envelope

            sys.stdout.write(dumps(envelope("matrix", code, **data)) + "\n")
        elif pair:
            _render_pair(data)
        else:
            _render("for" if kind == "for" else kind, data)
        raise typer.Exit(code)
