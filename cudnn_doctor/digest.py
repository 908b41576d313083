"""SHA-256 in hex without loading OpenSSL: hashlib's import opens libcrypto (2-4 ms at every start)."""
from __future__ import annotations

from typing import Any, Callable

_SHA256: "Callable[[bytes], Any] | None" = None


def sha256_hex(data: bytes) -> str:
    """The SHA-256 digest of ``data`` as hexadecimal, the same as hashlib.sha256(data).hexdigest()."""
    global _SHA256
    if _SHA256 is None:
        try:  # CPython's own implementation (3.12 calls it _sha2, older releases _sha256)
            from _sha2 import sha256 as own  # type: ignore[import-not-found]
        except ImportError:
            try:
                from _sha256 import sha256 as own  # type: ignore[import-not-found]
            except ImportError:  # a build without it: OpenSSL's
                from hashlib import sha256 as own
        _SHA256 = own
    return str(_SHA256(data).hexdigest())
