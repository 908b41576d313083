"""The `update` subcommand: refresh the knowledge from PyPI and NVIDIA's manifests into the user's cache."""
from __future__ import annotations

import sys
from typing import Any, Dict

import typer

from ..ui import EXIT_OK, EXIT_PROBLEMS, error_exit


def _summary(before: Dict[str, Any], after: Dict[str, Any]) -> Dict[str, Any]:
    old = {e["release"] for e in before.get("cudnn_releases", [])}
    new = [e["release"] for e in after.get("cudnn_releases", []) if e["release"] not in old]
    newest = after["cudnn_releases"][-1]["release"] if after.get("cudnn_releases") else None
    return {"date": after["date"], "new_cudnn_releases": new, "newest_cudnn": newest,
            "newest_cuda": after["cuda_releases"][-1]["cuda"] if after.get("cuda_releases") else None,
            "errors": after.get("errors", []), "sources": after.get("sources", [])}


def register(app: typer.Typer) -> None:
    @app.command(
        "update",
        help=(
            "Refresh the knowledge (cuDNN and CUDA releases, framework pins) from PyPI's JSON API and NVIDIA's "
            "redistrib manifests into $XDG_CACHE_HOME/cudnn-doctor/knowledge.json. The copy shipped with "
            "cudnn-doctor stays the offline fallback.\n\n"
            "Exit codes: 0 updated, 1 no source could be read (nothing written), 2 bad input.\n\n"
            "Examples:\n\n"
            "  cudnn-doctor update\n\n"
            "  cudnn-doctor update --timeout 20 --json"
        ),
    )
    def update(
        timeout: float = typer.Option(60.0, "--timeout", metavar="SECONDS", help="Time allowed for every source "
                                      "together (default 60)."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object (schema_version 1)."),
    ) -> None:
        if not 1 <= timeout <= 3600:
            error_exit("--timeout wants 1 to 3600 seconds, not %s" % timeout)
        from ..knowledge import load_compat
        from ..knowledge.load import updated_path
        from ..refresh.update import UpdateFailed, run_update

        compat = load_compat()
        current = dict(compat.derived())
        toolkits = [str(r["cuda"]) for r in compat.toolkit_rows()]
        def say(line: str) -> None:
            if not as_json:
                sys.stderr.write(line + "\n")

        try:
            doc = run_update(current, seconds=timeout, log=say, known_toolkits=toolkits)
        except UpdateFailed as exc:
            error_exit(str(exc), EXIT_PROBLEMS)
        except OSError as exc:
            error_exit("could not write %s: %s" % (updated_path(), exc.strerror or exc), EXIT_PROBLEMS)
        summary = _summary(current, doc)
        summary["written_to"] = str(updated_path())
        if as_json:
            from ..render.envelope import dumps, envelope

            sys.stdout.write(dumps(envelope("update", EXIT_OK, **summary)) + "\n")
        else:
            new = summary["new_cudnn_releases"]
            print("Knowledge updated (dated %s): newest cuDNN %s, CUDA %s; %s." % (
                summary["date"], summary["newest_cudnn"], summary["newest_cuda"],
                "new cuDNN releases: %s" % ", ".join(new) if new else "no new cuDNN release"))
            if summary["errors"]:
                print("Not read (the rest was): %s" % "; ".join(summary["errors"]))
            print("Written to %s" % summary["written_to"])
        raise typer.Exit(EXIT_OK)
