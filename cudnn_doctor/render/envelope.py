"""The versioned JSON envelope shared by every --json output (check, smoke, install, matrix)."""
from __future__ import annotations

import json
from typing import Any, Dict

from .. import __version__

SCHEMA_VERSION = "1"


def envelope(command: str, exit_code: int, **payload: Any) -> Dict[str, Any]:
    """Add fields freely (they are optional in the schema); bump SCHEMA_VERSION only when a field changes meaning
    or goes away (docs/json.md, "Schema versions")."""
    out: Dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "cudnn-doctor", "version": __version__},
        "command": command,
        "exit_code": exit_code,
    }
    out.update(payload)
    return out


def dumps(data: Dict[str, Any]) -> str:
    """Width-independent, key-sorted JSON."""
    return json.dumps(data, indent=2, sort_keys=True, default=str)
