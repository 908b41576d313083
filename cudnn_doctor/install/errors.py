"""The one exception the installer raises on purpose: a refusal with what, why and the exact fix."""
from __future__ import annotations


class Refusal(Exception):
    """Stops an install or rollback; ``str()`` is the one line the user sees."""

    def __init__(self, what: str, why: str = "", fix: str = "", code: int = 1) -> None:
        self.what, self.why, self.fix, self.code = what, why, fix, code
        parts = [what]
        if why:
            parts.append(why)
        if fix:
            parts.append("fix: " + fix)
        super().__init__("; ".join(parts))
