"""The `matrix` subcommand: look up the compatibility data (CUDA, cuDNN, driver, framework) without probing."""
from __future__ import annotations

import sys
from typing import Any, Dict, List, Optional

import typer

from ..ui import EXIT_OK, error_exit

FRAMEWORK_TABLES = {
    "dl4j": ["dl4j"], "deeplearning4j": ["dl4j"],
    "tensorflow": ["tensorflow_linux", "tensorflow_windows"], "tf": ["tensorflow_linux", "tensorflow_windows"],
    "torch": ["pytorch", "pytorch_arch"], "pytorch": ["pytorch", "pytorch_arch"],
    "jax": ["jax"],
}


def _build_row(compat, b, platform: str) -> Dict[str, Any]:
    floor = None
    if not (b.driver_linux if platform == "linux" else b.driver_windows):
        # The matrix gives a branch or nothing: the CUDA table says what the lowest listed CUDA needs.
        first = b.cuda[0] if b.cuda else None
        major = int(first.split(".")[0]) if first else 0
        floor = (compat.minor_compat_floor(str(major), platform) if compat.has_minor_compat(major) else None) or (
            compat.min_driver(first, platform) if first else None)
    return {
        "cudnn": b.releases_text(), "variant": b.variant, "cuda": b.cuda,
        "driver": b.driver_text(platform) if (b.driver_linux or b.driver_windows or not floor) else floor.text(),
        "driver_source": b.source if (b.driver_linux or b.driver_windows) else (floor.source if floor else ""),
        "min_cc": (b.min_cc.low if b.min_cc and b.min_cc.known else
                   ("%s-%s (unconfirmed)" % (b.min_cc.low, b.min_cc.high) if b.min_cc else None)),
        "status": b.status, "source": b.source, "note": b.note,
    }


def query_cuda(compat, cuda: str, platform: str) -> Dict[str, Any]:
    from ..versions import major_of, mm, mm_text

    if mm(cuda) is None:
        raise ValueError("--cuda wants a CUDA version such as 12.4, not %r" % cuda)
    want = mm_text(cuda)
    if want not in compat.cuda_releases():
        raise ValueError("CUDA %s is not in compat/cuda_driver.toml (known: %s)" % (
            want, ", ".join(compat.cuda_releases())))
    major = major_of(want)
    drivers = []
    for plat in ("linux", "windows"):
        floor = compat.min_driver(want, plat)
        if floor:
            drivers.append({"platform": plat, "driver": floor.text(), "how": floor.how,
                            "status": floor.status, "source": floor.source})
        mvc = compat.minor_compat_floor(str(major), plat) if compat.has_minor_compat(major) else None
        if mvc:
            drivers.append({"platform": plat, "driver": mvc.text(), "how": "minor-version compatibility (CUDA %d.x)"
                            % major, "status": mvc.status, "source": mvc.source})
    builds = [_build_row(compat, b, platform) for b in compat.cudnn_builds_for_cuda(want)]
    later = []
    if compat.has_minor_compat(major):
        era = compat.variant_era(major)
        if era:
            later.append({"variant": "cuda%d" % major, "from": era.get("first", ""), "to": era.get("last", ""),
                          "status": era.get("status"), "source": era.get("source"),
                          "note": "releases without a support-matrix row in compat: one build per CUDA major "
                                  "(build family rule)"})
    floor_cc = compat.cuda_min_cc(major)
    gpus = [{"arch": a.name, "ccs": a.ccs, "first_cuda": a.first_cuda, "last_cuda": a.last_cuda or "current"}
            for a in compat.architectures()
            if floor_cc and mm(a.ccs[-1]) >= mm(floor_cc.low) and mm(a.first_cuda) <= mm(want)]
    return {"query": {"cuda": want, "platform": platform}, "drivers": drivers, "cudnn_builds": builds,
            "cudnn_by_family": later, "min_cc": {"cc": floor_cc.low, "source": floor_cc.source} if floor_cc else None,
            "architectures": gpus}


def query_cudnn(compat, cudnn: str, platform: str) -> Dict[str, Any]:
    from ..versions import release3

    if release3(cudnn) is None:
        raise ValueError("--cudnn wants a cuDNN version such as 8.9.7, not %r" % cudnn)
    req = compat.cudnn_requirements(cudnn)
    if not req["known_release"] and not req["builds"]:
        major = release3(cudnn).release[0]
        raise ValueError("cuDNN %s is not a release compat knows (known %d.x: %s)" % (
            cudnn, major, ", ".join(compat.cudnn_releases(major)) or "none"))
    floor = req["min_cc"]
    return {
        "query": {"cudnn": str(release3(cudnn)), "platform": platform},
        "builds": [_build_row(compat, b, platform) for b in req["builds"]],
        "likely_variants": req.get("likely_variants", []),
        "min_cc": ({"cc": floor.low if floor.known else "%s-%s" % (floor.low, floor.high), "status": floor.status,
                    "source": floor.source} if floor else None),
        "known_bad": [{"problem": b["problem"], "fixed_in": b.get("fixed_in"), "source": b["source"]}
                      for b in req["known_bad"]],
        "note": "" if req["builds"] else "No support-matrix row for this release in compat: variants come from "
                                         "the release eras (secondary) and the build family rule.",
    }


def query_driver(compat, driver: str, platform: str) -> Dict[str, Any]:
    from ..versions import ver

    if ver(driver) is None:
        raise ValueError("--driver wants a driver version such as 535.104.05, not %r" % driver)
    # A bare branch number (580) means "a driver of branch 580": judge the branch's newest release and say from
    # which release of the branch each CUDA runs (580 alone is not the release 580.0).
    branch = driver.strip() if driver.strip().isdigit() else None
    probe = "%s.9999.9999" % branch if branch else driver
    runnable = {r.cuda: r for r in compat.cuda_runnable(probe, platform)}
    rows = []
    for cuda in compat.cuda_releases():
        floor = compat.min_driver(cuda, platform)
        run = runnable.get(cuda)
        rows.append({
            "cuda": cuda, "runs": bool(run), "how": run.how if run else "driver too old",
            "needs": floor.text() if floor else "unknown",
            "floor_used": run.floor.text() if run else None,
            "status": (run.floor if run else floor).status if (run or floor) else "unknown",
            "source": (run.floor if run else floor).source if (run or floor) else "",
            "note": run.note if run else "",
        })
        if branch:
            rows[-1]["branch_releases"] = _branch_releases(run.floor, branch) if run else None
    query: Dict[str, Any] = {"driver": driver, "platform": platform}
    if branch:
        query["branch"] = branch
    return {"query": query, "max_cuda": compat.max_cuda_for_driver(probe, platform), "cuda": rows}


def _branch_releases(floor, branch: str) -> str:
    """Which releases of driver branch `branch` clear `floor`: 'R580: 580.65.06 or later', or every one."""
    from ..versions import ver

    need = ver(floor.version) if floor.version else None
    if need is not None and need.release[0] == int(branch):
        return "R%s: %s or later" % (branch, floor.version)
    return "R%s: any release" % branch


def _rows_for_version(compat, table: str, version: str) -> List[Dict[str, Any]]:
    """The rows of a framework table that describe one release (all rows for tables without versions)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    from ..versions import mm_text, ver

    rows = compat.framework_rows(table)
    plain = version.split("+")[0]
    if table == "pytorch":
        return [r for r in rows if r["torch"] == mm_text(plain)]
    if table == "pytorch_arch":
        out = []
        for r in rows:
            try:
                if ver(plain) is not None and ver(plain) in SpecifierSet(r["torch"]):
                    out.append(r)
            except InvalidSpecifier:
                continue
        return out
    if table.startswith("tensorflow"):
        from ..rules.policy import _tf_row

        row = _tf_row(compat, plain, "windows" if table.endswith("windows") else "linux")
        return [row] if row else []
    if table == "dl4j":
        return [r for r in rows if str(r["dl4j"]).lower() == plain.lower()]
    return rows


def query_framework(compat, name: str) -> Dict[str, Any]:
    text = name.strip()
    version = None
    if "==" in text:
        text, version = (part.strip() for part in text.split("==", 1))
        if not version:
            raise ValueError("--for wants FRAMEWORK or FRAMEWORK==VERSION, not %r" % name)
    tables = FRAMEWORK_TABLES.get(text.lower())
    if tables is None:
        raise ValueError("--for wants one of dl4j, tensorflow, torch, jax (optionally ==VERSION), not %r" % name)
    query: Dict[str, Any] = {"for": text.lower()}
    if version:
        query["version"] = version
    out: Dict[str, Any] = {"query": query, "tables": {}}
    for table in tables:
        meta = compat.framework_table(table)
        rows = _rows_for_version(compat, table, version) if version else compat.framework_rows(table)
        out["tables"][table] = {"source": meta.get("source", ""), "status": meta.get("status", ""), "rows": rows}
    if version and not out["tables"][tables[0]]["rows"]:
        raise ValueError("no compat data for %s %s (`cudnn-doctor matrix --for %s` lists the known releases)" % (
            text.lower(), version, text.lower()))
    return out


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
               [[b["cudnn"], b["variant"], ", ".join(b["cuda"]), b["driver"], b["min_cc"], b["status"],
                 b["source"]] for b in data["cudnn_builds"]])
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
                   ["build", "CUDA", "driver", "min CC", "status", "source"],
                   [[b["variant"], ", ".join(b["cuda"]), b["driver"], b["min_cc"], b["status"],
                     b["source"]] for b in data["builds"]])
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


def _fmt(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


def register(app: typer.Typer) -> None:
    @app.command(
        "matrix",
        help=(
            "Look up the compatibility data, without probing this machine. Every row names its source.\n\n"
            "Examples:\n\n"
            "  cudnn-doctor matrix --cuda 10.1        # cuDNN builds for CUDA 10.1 and the drivers it needs\n\n"
            "  cudnn-doctor matrix --cudnn 8.9.7      # its CUDA builds, driver and GPU requirements\n\n"
            "  cudnn-doctor matrix --driver 418.39    # which CUDA releases that driver can run\n\n"
            "  cudnn-doctor matrix --for dl4j --json  # Deeplearning4j's CUDA/cuDNN pairs"
        ),
    )
    def matrix(
        cuda: Optional[str] = typer.Option(None, "--cuda", metavar="X.Y", help="A CUDA release, e.g. 12.4."),
        cudnn: Optional[str] = typer.Option(None, "--cudnn", metavar="X.Y.Z", help="A cuDNN release, e.g. 8.9.7."),
        driver: Optional[str] = typer.Option(None, "--driver", metavar="VERSION",
                                             help="A driver, e.g. 535.104.05, or a branch, e.g. 580."),
        framework: Optional[str] = typer.Option(None, "--for", metavar="FRAMEWORK[==VERSION]",
                                                help="dl4j, tensorflow, torch or jax, optionally ==VERSION."),
        platform: str = typer.Option("linux", "--platform", metavar="linux|windows",
                                     help="Which driver column to use (default linux)."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object (schema_version 1)."),
    ) -> None:
        asked = [(k, v) for k, v in (("cuda", cuda), ("cudnn", cudnn), ("driver", driver), ("for", framework)) if v]
        if len(asked) != 1:
            error_exit("give exactly one of --cuda, --cudnn, --driver or --for")
        if platform not in ("linux", "windows"):
            error_exit("--platform must be linux or windows, not %r" % platform)
        from ..knowledge import load_compat

        compat = load_compat()
        kind, value = asked[0]
        try:
            if kind == "cuda":
                data = query_cuda(compat, value, platform)
            elif kind == "cudnn":
                data = query_cudnn(compat, value, platform)
            elif kind == "driver":
                data = query_driver(compat, value, platform)
            else:
                data = query_framework(compat, value)
        except ValueError as exc:
            error_exit(str(exc))
        if as_json:
            from ..render.envelope import dumps, envelope

            sys.stdout.write(dumps(envelope("matrix", EXIT_OK, **data)) + "\n")
        else:
            _render("for" if kind == "for" else kind, data)
        raise typer.Exit(EXIT_OK)
