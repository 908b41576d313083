"""Regenerate compat/derived.json, the machine-derivable knowledge, from the recorded sources.

The recorded sources live in tests/data/knowledge (PyPI answers, wheel Requires-Dist lines, NVIDIA redistrib
manifests, what each cuDNN wheel's library reports); scripts/record_pypi.py and scripts/record_wheel_cudart.py
refresh them. Rows transcribed by hand from NVIDIA's documents stay in compat/*.toml; this script never edits them.
tests/knowledge/test_knowledge_refresh.py proves the shipped compat/derived.json is exactly what this script writes.

    python scripts/refresh_knowledge.py            # rewrite compat/derived.json
    python scripts/refresh_knowledge.py --check    # exit 1 when it would change
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cudnn_doctor.refresh import collect  # noqa: E402
from cudnn_doctor.refresh.build import derived_text  # noqa: E402


def main(argv) -> int:
    text = derived_text(collect.load_recorded(ROOT / "tests" / "data" / "knowledge"), ROOT / "compat",
                        "scripts/refresh_knowledge.py")
    target = ROOT / "compat" / "derived.json"
    if "--check" in argv:
        same = target.is_file() and target.read_text() == text
        print("compat/derived.json is %s" % ("up to date" if same else "stale: run scripts/refresh_knowledge.py"))
        return 0 if same else 1
    tmp = target.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(target)
    print("wrote %s" % target.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
