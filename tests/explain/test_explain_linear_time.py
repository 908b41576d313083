"""explain reads any paste in linear time (issue 44, item 4): a giant token, a 10 MB log or binary junk is cut by
explain.bounded to what the patterns can match, and that cut changes no answer: a corpus paste reads the same alone,
at the end of a large log and in its middle. Times are measured by benchmarks/explain_bench.py, not asserted here."""
from __future__ import annotations

import json
import random
from functools import lru_cache
from pathlib import Path
from typing import List, Tuple

import pytest
from hypothesis import given, settings, strategies as st

from cudnn_doctor.explain import explain
from cudnn_doctor.explain.bounded import _LINE_MAX, _TOKEN_MAX, _WHOLE_MAX, bounded_paste
from cudnn_doctor.explain.decode_loader import decode_loader

CORPUS = Path(__file__).resolve().parents[1] / "data" / "explain_corpus"


@lru_cache(maxsize=None)
def _cases() -> Tuple[Tuple[str, str], ...]:
    out: List[Tuple[str, str]] = []
    for split in ("dev", "heldout"):
        out += [(c["id"], c["text"]) for c in json.loads((CORPUS / ("%s.json" % split)).read_text())["cases"]]
    return tuple(out)


def _junk(n_bytes: int, seed: int) -> str:
    """A training log's ordinary lines (none names the stack), `n_bytes` long."""
    r = random.Random(seed)
    lines, size = [], 0
    while size < n_bytes:
        line = "2026-11-28 12:%02d:%02d I trainer/loop.py:%d] epoch %d step %d loss=%.5f lr=%.2e /data/shard-%05d" % (
            r.randrange(60), r.randrange(60), r.randrange(999), size // 9999, size, r.random(), r.random(),
            r.randrange(99999))
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def _reading(text: str) -> tuple:
    ex = explain(text, check=False).explanation
    return (ex.answer.cause if ex.answer else None, ex.fix.text if ex.fix else None, [m.id for m in ex.matches],
            ex.sonames, ex.versions, ex.problem)


def test_a_short_paste_is_read_as_it_is():
    for _, text in _cases():
        if len(text) <= _WHOLE_MAX and max(map(len, text.split() or [""])) <= _TOKEN_MAX:
            assert bounded_paste(text) == text


# Each explain here reads a 200 KB log (about a second): five seeded pastes in the quick tier, sixty in the slow
# tier (all 238 passed once, 2026-11-29).
@pytest.mark.parametrize("where", ["end", "middle"])
def test_a_paste_inside_a_large_log_reads_as_the_paste_alone(where):
    junk = _junk(_WHOLE_MAX + 40_000, seed=44)
    cut = junk.find("\n", len(junk) // 2)
    for _, text in random.Random(4404).sample(_cases(), 5):
        big = junk + "\n" + text if where == "end" else junk[:cut] + "\n" + text + junk[cut:]
        assert _reading(big) == _reading(text)


@pytest.mark.slow
def test_sixty_corpus_pastes_read_the_same_in_the_middle_of_a_large_log():
    junk = _junk(_WHOLE_MAX + 40_000, seed=45)
    cut = junk.find("\n", len(junk) // 2)
    wrong = [case for case, text in random.Random(4405).sample(_cases(), 60) if _reading(junk[:cut] + "\n" + text + junk[cut:]) != _reading(text)]
    assert not wrong


def test_a_giant_token_keeps_the_library_name_at_its_end():
    token = "/opt/" + "x" * 120_000 + "/lib/libcudnn_ops_infer.so.8"
    failures = decode_loader(bounded_paste(token + ": cannot open shared object file: No such file or directory"))
    assert [(f.kind, f.library) for f in failures] == [("missing", "libcudnn_ops_infer.so.8")]


_LINES = st.one_of(
    st.text(max_size=300),
    st.binary(max_size=400).map(lambda b: b.decode("latin-1")),
    st.integers(1000, 150_000).map(lambda n: "libcudnn" * (n // 8)),
    st.integers(1000, 150_000).map(lambda n: "a/" * (n // 2) + "libcudnn.so.9"),
    st.sampled_from(["Could not load dynamic library 'libcudnn.so.8'", "CUDNN_STATUS_NOT_INITIALIZED",
                     "undefined symbol: cudnnGetVersion", "\x00\x01\x02 \t\r", ""]),
)


@settings(max_examples=25, deadline=None)
@given(st.lists(_LINES, max_size=40), st.integers(0, 3))
def test_any_paste_is_cut_to_a_bounded_size(lines, repeat):
    text = "\n".join(lines)
    if len(text) < 50_000:  # many short lines: a log past the size read whole
        text = "\n".join([text] * (1 + repeat * 200))
    cut = bounded_paste(text)
    assert len(cut) <= _WHOLE_MAX + 2 * _LINE_MAX
    assert all(len(line) <= _LINE_MAX for line in cut.split("\n"))
    assert all(len(token) <= _TOKEN_MAX for token in cut.split())


def test_hostile_pastes_get_an_answer():
    junk = random.Random(7).randbytes(300_000).decode("latin-1")
    log = _junk(10_000_000, seed=46)
    for text in ("A" * 120_000, junk, log[: len(log) // 2] + "\nCould not load dynamic library 'libcudnn.so.8'\n" +
                 log[len(log) // 2:]):
        explain(text, check=False)  # never an exception
    assert "libcudnn.so.8" in explain(text, check=False).explanation.sonames
