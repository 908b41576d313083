"""What each function-local import of the package would cost at start if it moved to the top of its module: the
modules a `check --json` run imports (python -X importtime) are its path; for every module a function imports that is
not on that path, the time to import it in a fresh interpreter that has imported the whole path first (min and median
of --runs). A function-local import stays only where that is over 5 ms on a path that does not use it; it says why on
its line (`# why:`).

    python benchmarks/import_costs.py [--runs 7] [--root EMPTY_FOLDER] [--json OUT]
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "cudnn_doctor"


def _modules() -> Dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _resolve(modules: Dict[str, Path], name: str) -> str:
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in modules:
            return ".".join(parts[:end])
    return name


def function_local_imports() -> List[dict]:
    """Every import inside a function of the package: module, line, what it imports, and whether it says why."""
    modules = _modules()
    rows, seen = [], set()
    for name, path in modules.items():
        lines = path.read_text().splitlines()
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for fn in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if not isinstance(node, (ast.Import, ast.ImportFrom)) or (name, node.lineno) in seen:
                    continue
                seen.add((name, node.lineno))
                if isinstance(node, ast.Import):
                    targets = [a.name for a in node.names]
                elif node.level:
                    base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                    targets = [_resolve(modules, target + "." + a.name) for a in node.names]
                else:
                    targets = [node.module or ""]
                if name.startswith(("cudnn_doctor.native.", "cudnn_doctor.smoke.", "cudnn_doctor.bench.")) and \
                        all(package + "." + t in modules for t in targets):
                    targets = [package + "." + t for t in targets]  # a child script's sibling, by bare name
                said = "\n".join(lines[max(0, node.lineno - 4):node.end_lineno])
                rows.append({"module": name, "line": node.lineno, "targets": sorted(set(targets)),
                             "why": "why:" in said})
    return rows


def _imported(args: List[str], env: Dict[str, str]) -> List[str]:
    proc = subprocess.run([sys.executable, "-X", "importtime"] + args, env=env, capture_output=True, text=True,
                          cwd=tempfile.gettempdir())
    return [m.group(1) for m in (re.match(r"import time:\s+\d+ \|\s+\d+ \| *(\S+)$", line)
                                 for line in proc.stderr.splitlines()) if m]


_PROBE = r"""
import importlib, sys, time
for name in %r:
    try:
        importlib.import_module(name)
    except BaseException:
        pass
start = time.perf_counter()
importlib.import_module(%r)
print(time.perf_counter() - start)
"""


def marginal_ms(path: List[str], target: str, runs: int, env: Dict[str, str]) -> Optional[List[float]]:
    times = []
    for _ in range(runs):
        proc = subprocess.run([sys.executable, "-c", _PROBE % (path, target)], env=env, capture_output=True,
                              text=True, cwd=tempfile.gettempdir())
        if proc.returncode:
            return None
        times.append(float(proc.stdout) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--root", help="the machine root check reads (an empty folder by default)")
    parser.add_argument("--json", help="write the rows here too")
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    root = args.root or tempfile.mkdtemp(prefix="import-costs-root-")
    path = _imported(["-m", "cudnn_doctor", "check", "--json", "--root", root], env)
    start = set(_imported(["-c", "import cudnn_doctor.cli"], env))
    on_path = set(path)
    rows = function_local_imports()
    costs: Dict[str, Optional[List[float]]] = {}
    for target in sorted({t for r in rows for t in r["targets"]} - on_path):
        costs[target] = marginal_ms(path, target, args.runs, env)
    print("%d modules on check --json's path (%d at `import cudnn_doctor.cli`); %d function-local imports, %d with "
          "a why" % (len(path), len(start), len(rows), sum(r["why"] for r in rows)))
    print("%-44s %-48s %9s %9s  %s" % ("where", "imports", "min ms", "median", "why"))
    for r in sorted(rows, key=lambda r: (r["module"], r["line"])):
        for target in r["targets"]:
            times = costs.get(target)
            cost = ("on path", "") if target in on_path else ("n/a", "") if times is None else (
                "%.2f" % min(times), "%.2f" % statistics.median(times))
            print("%-44s %-48s %9s %9s  %s" % ("%s:%d" % (r["module"], r["line"]), target, cost[0], cost[1],
                                              "yes" if r["why"] else ""))
            r.setdefault("costs", {})[target] = None if target in on_path else times
    if args.json:
        Path(args.json).write_text(json.dumps({"path": path, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
