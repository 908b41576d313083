"""The knowledge base's tables as read from compat/*.toml, and where each row says it came from."""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Tuple, TypeVar

T = TypeVar("T")

CONFIRMED = "confirmed"


def row_source(table: Dict[str, Any], row: Dict[str, Any]) -> Tuple[str, str]:
    """A row's own source/status, else its table's."""
    return (str(row.get("status") or table.get("status") or CONFIRMED),
            str(row.get("source") or table.get("source") or ""))


class Tables:
    """Read-only view of the compat tables as read; each domain (below) asks its own questions of them."""

    def __init__(self, data: Dict[str, Dict[str, Any]], origin: str = "") -> None:
        self.data = data
        self.origin = origin  # where the TOML files were read from

    def once(self, key: str, compute: Callable[[], T]) -> T:
        """compute()'s value, worked out on the first call for ``key`` only: the tables never change after loading,
        and a run asks for the same derived lists (every cuDNN build row, every release) hundreds of times."""
        memo: Dict[str, Any] = self.__dict__.setdefault("_once", {})
        if key not in memo:
            memo[key] = compute()
        value: T = memo[key]
        return value

    def table(self, file: str, name: str) -> Dict[str, Any]:
        found: Dict[str, Any] = self.data.get(file, {}).get(name, {})
        return found

    def sourced_rows(self, file: str, name: str) -> List[Dict[str, Any]]:
        """A table's rows, each with its status and source filled in (its own, else the table's)."""
        table = self.table(file, name)
        out = []
        for row in table.get("rows", []):
            status, source = row_source(table, row)
            out.append(dict(row, status=status, source=source))
        return out


class Domain:
    """One domain of the knowledge (drivers, GPUs, cuDNN builds, ...): reads its own tables; any other domain it
    asks is handed to its constructor (the Compat facade wires them)."""

    def __init__(self, tables: Tables) -> None:
        self.tables = tables

    @property
    def data(self) -> Dict[str, Dict[str, Any]]:
        return self.tables.data

    def once(self, key: str, compute: Callable[[], T]) -> T:
        """Tables.once: the memo is the tables', so ``key`` names one answer across every domain."""
        return self.tables.once(key, compute)

    def table(self, file: str, name: str) -> Dict[str, Any]:
        return self.tables.table(file, name)

    def sourced_rows(self, file: str, name: str) -> List[Dict[str, Any]]:
        return self.tables.sourced_rows(file, name)
