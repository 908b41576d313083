"""What each framework accepts at run time from the cuDNN it loads (compat/frameworks.toml [cudnn_acceptance]): the
rule its own start-up check applies against the cuDNN it was built with, read from its code. One environment's
frameworks are judged by these rules, not by their pins: pip installs one nvidia-cudnn wheel per folder, but a
framework built with 9.3 runs with 9.10 (TensorFlow's rule), and a cuDNN 8 beside a cuDNN 9 is another soname."""
from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from packaging.version import Version

from ..versions import mm_before, ver
from .tables import Domain

SAME_MAJOR_NEWER_MINOR = "same-major-newer-minor"


class Verdict(NamedTuple):
    """Whether a framework runs with a cuDNN release, and its own words when it does not (or warns)."""

    accepts: bool
    why: str
    source: str


class AcceptanceKnowledge(Domain):
    """The run-time acceptance rule per framework kind (torch, tensorflow, jax, onnxruntime, cupy, paddle)."""

    def acceptance_rows(self) -> List[Dict[str, Any]]:
        return self.tables.sourced_rows("frameworks", "cudnn_acceptance")

    def acceptance_rule(self, kind: Optional[str]) -> Optional[Dict[str, Any]]:
        """The row for a framework kind (queries.framework_kind's names), None for one compat does not know."""
        return next((r for r in self.acceptance_rows() if r["kind"] == kind), None) if kind else None

    def accepts(self, kind: Optional[str], built: Optional[str], runtime: str,
                gpu_ccs: Sequence[str] = ()) -> Verdict:
        """Whether a framework of `kind` built with cuDNN `built` (None: only its major is known, from the soname it
        asks for, which the caller matched) runs with cuDNN `runtime`, on GPUs of these compute capabilities.
        A kind compat does not know is judged by the strictest rule any framework applies (same major, minor no
        older), so an unknown framework is never promised more than the known ones get."""
        row = self.acceptance_rule(kind) or {"rule": SAME_MAJOR_NEWER_MINOR, "check": "refuses", "source": ""}
        source = str(row.get("source", ""))
        have, want = ver(runtime), ver(built) if built else None
        if have is None:
            return Verdict(False, "cuDNN %s is not a version" % runtime, source)
        if want is not None and want.release[0] != have.release[0]:
            return Verdict(False, "libcudnn.so.%d is another soname than the libcudnn.so.%d it asks for" % (
                have.release[0], want.release[0]), source)
        exactly = ver(row.get("refuses_exactly"))
        if exactly is not None and have.release[:3] == exactly.release[:3] and \
                (want is None or want.release[:3] != exactly.release[:3]):
            return Verdict(False, "it refuses cuDNN %s when built with another release" % exactly, source)
        floor = ver(row.get("below_cc_from"))
        low = [cc for cc in gpu_ccs if row.get("below_cc") and mm_before(cc, str(row["below_cc"]))]
        if floor is not None and low and have >= floor:
            return Verdict(False, "it refuses cuDNN %s on a GPU below SM %s (%s)" % (
                floor, row["below_cc"], ", ".join(low)), source)
        if want is not None and _minor(have) < _minor(want):
            if row["rule"] == SAME_MAJOR_NEWER_MINOR:
                return Verdict(False, _message(row, want, have), source)
            if row.get("check") == "warns-older":
                return Verdict(True, "it runs and warns: '%s'" % _message(row, want, have), source)
        return Verdict(True, "", source)


def _minor(v: Version) -> Tuple[int, int]:
    release = tuple(v.release) + (0, 0)
    return release[0], release[1]


def _message(row: Dict[str, Any], built: Version, runtime: Version) -> str:
    """The framework's own words for this pair, as its check prints them."""
    text = str(row.get("message") or "it needs cuDNN {built} or a newer minor of that major, not {runtime}")
    return text.replace("{built}", str(built)).replace("{runtime}", str(runtime))
