"""A pasted text cut to what explain can read in linear time: long tokens shortened, very long lines cut, and a
very large log reduced to its head, its tail and the lines in between that name the stack.

Why: explain's patterns (the symptom table, the loader and version wordings) are Python regular expressions; on a
10 MB log or one unbroken token of 100,000 characters they take minutes (an unanchored character class retried at
every position is quadratic in the token, and a case-insensitive search over megabytes is slow per pattern). What
they look for is a few hundred characters on a line, so nothing they can match is lost by the cuts below; the
answer on a short paste is the same with or without this step (tests/explain/test_explain_linear_time.py holds
the two readings equal on the whole paste corpus)."""
from __future__ import annotations

import re
from typing import List

# A token (a run without white space) longer than this is no library path or message word: its head and tail stay,
# so a path keeps its folder and file name.
_TOKEN_MAX = 256
_TOKEN_KEEP = 112
# A line longer than this keeps its head and tail (a whole log on one line still shows its first and last words).
_LINE_MAX = 4096
_LINE_KEEP = 1536
# A text up to this size is read whole; a larger one keeps its head, its tail and the lines between that name the
# stack, each part bounded, so every later pattern reads at most about 96 KiB (each of about a hundred patterns costs
# some milliseconds per 100 KiB).
_WHOLE_MAX = 96 * 1024
_HEAD = 16 * 1024
_TAIL = 48 * 1024
_MIDDLE = 32 * 1024
_HITS_PER_WORD = 64  # lines kept per anchor word in the middle: bounds the work on a log that repeats one error
# Words that every message explain reads contains at least one of (lower case): the middle of a large log keeps only
# lines with one of them. A line without any can name no library, version, status code or device error.
_ANCHORS = ("cudnn", "cuda", "cublas", "cufft", "curand", "cusparse", "cusolver", "nvrtc", "nvjitlink", "nccl",
            "nvidia", "nvml", "driver", "gpu", ".so", ".dll", "libcu", "tensorrt", "xla", "status_", "error",
            "fail", "cannot", "could not", "unable", "undefined symbol", "not found", "version", "compute capability",
            "sm_", "xid", "segmentation", "core dumped", "modprobe", "secure boot", "container", "permission denied")
# Only at a token's start: tried at every position, a run of 200 characters would be read 200 times.
_LONG_TOKEN = re.compile(r"(?<!\S)\S{%d,}" % (_TOKEN_MAX + 1))


def _short_token(m: "re.Match[str]") -> str:
    token = m.group(0)
    return token[:_TOKEN_KEEP] + " … " + token[-_TOKEN_KEEP:]


def _short_line(line: str) -> str:
    return line if len(line) <= _LINE_MAX else line[:_LINE_KEEP] + " … " + line[-_LINE_KEEP:]


def _anchored_lines(middle: str) -> List[str]:
    """The lines of `middle` that contain an anchor word, in order, once each, at most _MIDDLE characters."""
    low = middle.lower()
    starts = set()
    for word in _ANCHORS:
        at, hits = 0, 0
        while hits < _HITS_PER_WORD:
            at = low.find(word, at)
            if at < 0:
                break
            start = low.rfind("\n", 0, at) + 1
            starts.add(start)
            end = low.find("\n", at)
            at = len(low) if end < 0 else end + 1
            hits += 1
    kept: List[str] = []
    size = 0
    for start in sorted(starts):
        end = middle.find("\n", start)
        line = middle[start:] if end < 0 else middle[start:end]
        if line in kept:
            continue
        size += len(line) + 1
        if size > _MIDDLE:
            break
        kept.append(line)
    return kept


# Typographic quotes and full-width punctuation, as word processors, chat tools and CJK input methods write the
# messages users retell ("couldn‘t communicate", "cuda：11.7"), read as the ASCII the programs print; one character for
# one, so every span stays where it was.
_PLAIN = {**{c: "'" for c in range(0x2018, 0x201C)}, 0x2032: "'", 0x201C: '"', 0x201D: '"', 0x201E: '"',
          **{c: chr(c - 0xFEE0) for c in range(0xFF01, 0xFF5F)}}


def plain_punctuation(text: str) -> str:
    """`text` with typographic quotes and full-width ASCII forms as their ASCII characters."""
    return text.translate(_PLAIN)


def bounded_paste(text: str) -> str:
    """`text` as explain reads it: unchanged when short and without a giant token, else cut as the module says."""
    if len(text) > _WHOLE_MAX:
        head_end = text.rfind("\n", 0, _HEAD) + 1 or _HEAD
        tail_start = text.find("\n", len(text) - _TAIL)
        tail_start = len(text) - _TAIL if tail_start < 0 else tail_start + 1
        middle = _anchored_lines(text[head_end:tail_start])
        text = "\n".join([text[:head_end].rstrip("\n"), *middle, text[tail_start:]])
    if len(text) > _LINE_MAX or "\n" not in text:
        text = "\n".join(_short_line(line) for line in text.split("\n"))
    return _LONG_TOKEN.sub(_short_token, text)
