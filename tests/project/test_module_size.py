"""Short modules: none of the package's modules is over 400 lines (a longer one is split by what its parts are
about, as host/, queries/ and native/child_*.py were), and each opens with a docstring that says what it holds."""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "cudnn_doctor"
MOST_LINES = 400


def test_no_module_is_over_400_lines():
    counts = {str(p.relative_to(REPO)): len(p.read_text().splitlines()) for p in PACKAGE.rglob("*.py")}
    assert len(counts) > 100  # the walk found the package
    assert {path: n for path, n in counts.items() if n > MOST_LINES} == {}


def test_every_module_has_a_docstring():
    missing = [str(p.relative_to(REPO)) for p in sorted(PACKAGE.rglob("*.py"))
               if p.read_text().strip() and ast.get_docstring(ast.parse(p.read_text())) is None]
    assert missing == []
