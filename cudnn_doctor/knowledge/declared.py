"""Checks declared whole in compat/checks.toml: one fact against one sourced number, with the finding's words and its
fix (rules/declared.py judges them). Read and validated here, so a malformed row fails the knowledge tests, not a
user's run."""
from __future__ import annotations

import functools
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple

from .load import read_shipped
from .tables import Domain, row_source

FILE = "checks"
SEVERITIES = ("error", "warning", "info")
UNITS = ("bytes", "count")
_REQUIRED = ("id", "title", "section", "severity", "fact", "title_found", "source", "status")
# An environment variable's row (fact = "environment.NAME") needs no words: its fix is the variable unset, or set to
# `set_to`, in the shell of the platform (remedies/environment.environment_variable_fix), with where to change it.
ENVIRONMENT = "environment."


class DeclaredCheck(NamedTuple):
    """One table of compat/checks.toml."""

    alias: str  # the table's name: kebab-case, what --skip takes
    id: str  # CDnnn
    title: str  # what --list-checks shows
    section: str  # the report section (rules.SECTIONS)
    severity: str  # error | warning | info
    platforms: Tuple[str, ...]  # linux, windows
    fact: str  # dotted path into the facts: host.shm_bytes
    when: Tuple[str, ...]  # facts that must be true for the check to apply
    below: Optional[float]  # a finding when the fact is under it; None: any value of the fact is one
    equals: Optional[str]  # a finding when the fact (a string, compared without case or outer spaces) is this
    set_to: Optional[str]  # an environment variable's fix: set it to this (None: unset it)
    unit: str  # how {value} and {limit} are written
    title_found: str  # the finding's headline: {value}, {limit}
    detail: str
    fix: Mapping[str, Any]  # {commands, words}: a fix row, built like every other (remedies/catalogue.table_fix)
    source: str
    status: str


def problems_of(alias: str, row: Mapping[str, Any]) -> List[str]:
    """What is wrong with one declared check (empty when nothing is)."""
    found = ["%s: %s is missing" % (alias, key) for key in _REQUIRED if not row.get(key)]
    if not row.get("words") and not str(row.get("fact", "")).startswith(ENVIRONMENT):
        found.append("%s: words is missing" % alias)
    for key in ("equals", "set_to"):
        if key in row and not isinstance(row[key], str):
            found.append("%s: %s must be a string" % (alias, key))
    if row.get("severity") not in SEVERITIES:
        found.append("%s: severity must be one of %s" % (alias, ", ".join(SEVERITIES)))
    if row.get("unit", "count") not in UNITS:
        found.append("%s: unit must be one of %s" % (alias, ", ".join(UNITS)))
    below = row.get("below")
    if below is not None and (isinstance(below, bool) or not isinstance(below, (int, float))):
        found.append("%s: below must be a number" % alias)
    if not all(isinstance(c, str) for c in row.get("when", [])) or not isinstance(row.get("when", []), list):
        found.append("%s: when must be a list of fact paths" % alias)
    return found


def _check(alias: str, row: Mapping[str, Any]) -> DeclaredCheck:
    status, source = row_source({}, dict(row))
    below = row.get("below")
    return DeclaredCheck(
        alias=alias, id=str(row["id"]), title=str(row["title"]), section=str(row["section"]),
        severity=str(row["severity"]), platforms=tuple(row.get("platforms", ["linux", "windows"])),
        fact=str(row["fact"]), when=tuple(row.get("when", [])),
        below=below, equals=row.get("equals"), set_to=row.get("set_to"), unit=str(row.get("unit", "count")),
        title_found=str(row["title_found"]), detail=str(row.get("detail", "")),
        fix={"commands": list(row.get("commands", [])), "words": str(row.get("words", ""))}, source=source, status=status)


def declared(data: Mapping[str, Mapping[str, Any]]) -> List[DeclaredCheck]:
    """Every valid declared check of compat/checks.toml as read (``data`` is the compat files by name); a row with
    problems is left out (tests/knowledge/test_compat_data.py names them)."""
    rows: Dict[str, Any] = dict(data.get(FILE, {}))
    return [_check(alias, row) for alias, row in rows.items()
            if isinstance(row, dict) and not problems_of(alias, row)]


class DeclaredKnowledge(Domain):
    def declared_checks(self) -> List[DeclaredCheck]:
        return self.once("declared_checks", lambda: declared(self.data))

    def declared_check(self, alias: str) -> Optional[DeclaredCheck]:
        """The check as this knowledge declares it (a user's update may change its number or words)."""
        return next((c for c in self.declared_checks() if c.alias == alias), None)


@functools.lru_cache(maxsize=1)
def shipped_checks() -> List[DeclaredCheck]:
    """The declared checks as shipped: what registers them as rules (ids, aliases, titles, sections) when the rule
    modules are imported. A run judges them with the knowledge it is handed (numbers and words may be updated)."""
    return declared({FILE: read_shipped(FILE)})
