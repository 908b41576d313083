"""Says whether two `check --json` reports describe the machine identically (timings and new fields aside).

    python3 benchmarks/same_report.py BEFORE.json AFTER.json

Used to prove a speed change lost no fact or finding: prints each difference and exits 1 if there is one.
"""
from __future__ import annotations

import json
import sys
from typing import Any, Iterator, Tuple

# Differ between any two runs, or were added by the change being checked.
IGNORED = {"timings_ms", "duration_s", "started_at", "incomplete", "blocked", "fingerprint",
           "ms"}  # how long one library's fat-binary scan took


def walk(a: Any, b: Any, path: str = "") -> Iterator[Tuple[str, Any, Any]]:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key in IGNORED:
                continue
            if key not in a or key not in b:
                if key in b and path == "" or key in b and path == ".facts":
                    continue  # a field the newer version adds
                yield path + "." + key, a.get(key, "<absent>"), b.get(key, "<absent>")
                continue
            yield from walk(a[key], b[key], path + "." + key)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            yield from walk(x, y, "%s[%d]" % (path, i))
    elif a != b:
        yield path, a, b


def main() -> None:
    with open(sys.argv[1]) as fa, open(sys.argv[2]) as fb:
        before, after = json.load(fa), json.load(fb)
    # Rules the newer version adds run too; the ones both have must run in the same order.
    added = set(after.get("rules_run", [])) - set(before.get("rules_run", []))
    after["rules_run"] = [r for r in after.get("rules_run", []) if r not in added]
    diffs = list(walk(before, after))
    for path, a, b in diffs:
        print("DIFF %s: %s -> %s" % (path, json.dumps(a)[:200], json.dumps(b)[:200]))
    print("reports identical (timings aside)" if not diffs else "%d differences" % len(diffs))
    sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
