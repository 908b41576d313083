"""Find and read `check --json` reports: files, folders (recursively) and stdin; a bad report is a value, not a crash."""
from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, Union

from .. import __version__
from ..render.envelope import SCHEMA_VERSION
from .reading import STDIN, Bad, read_report, split_documents, stdin_reader


@dataclass
class NodeReport:
    """What the merge keeps of one report: small, so tens of thousands fit in memory."""

    host: str
    source: str
    started_at: str
    started_ts: float
    verdict: str
    exit_code: int
    fingerprint: str
    tool_version: str
    findings: Tuple[Tuple[str, str], ...]  # (id, severity)


@dataclass
class Rejected:
    """A report that could not be used: kind is unreadable, truncated, other-schema, old-tool or not-a-report."""

    kind: str
    source: str
    reason: str
    host: Optional[str] = None


@dataclass
class Catalogue:
    """Shared by all reports: one fingerprint's fields and one example per finding id (first seen)."""

    fields: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    examples: Dict[str, Dict[str, str]] = field(default_factory=dict)


def iter_texts(sources: List[str], stdin) -> Iterator[Tuple[str, Union[bytes, Bad, Callable[[int], str]]]]:
    """(name, content, the reason it cannot be read, or a reader of stdin) for every report file named or found
    under a folder."""
    for source in sources:
        if source == "-":
            yield STDIN, stdin_reader(stdin)
        elif os.path.isdir(source):
            for folder, dirs, files in os.walk(source):
                dirs.sort()
                for name in sorted(files):
                    if name.endswith(".json") and not name.startswith("."):
                        path = os.path.join(folder, name)
                        yield path, read_report(path, in_folder=True)
        else:
            yield source, read_report(source, in_folder=False)


_FACTS_KEY = b'\n  "facts": '
_FINDINGS_KEY = b'\n  "findings": '


def quick_document(data: bytes) -> Optional[Any]:
    """Parse a report as `check --json` writes it, without its bulky `facts` (the merge never reads them): several
    times faster at fleet scale. With indent=2 a line opening with exactly two spaces and a quote is a top-level
    key (JSON strings hold no raw newline), and with sorted keys `findings` follows `facts`, so the cut is exact
    (tests/fleet/test_fleet.py compares it with the full parse). Anything else returns None or the whole document."""
    start = data.find(_FACTS_KEY, 0, 4096)  # near the top: after command, duration_s, exit_code
    if start >= 0:
        end = data.rfind(_FINDINGS_KEY, start)  # searched from the end: findings are near it, facts are long
        if end < 0:
            return None
        data = data[:start] + data[end:]
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):  # the full parse names what is wrong
        return None
    return doc if isinstance(doc, dict) else None


def parse_time(value: Any) -> Optional[float]:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def to_node(label: str, doc: Any, catalogue: Catalogue) -> Union[NodeReport, Rejected]:
    """Keep what the merge needs; say exactly why a document is not a usable check report."""
    if not isinstance(doc, dict) or doc.get("command") != "check" or \
            not isinstance(doc.get("tool"), dict) or doc["tool"].get("name") != "cudnn-doctor":
        return Rejected("not-a-report", label, "not a `cudnn-doctor check --json` report")
    tool_version = str(doc["tool"].get("version"))
    if str(doc.get("schema_version")) != SCHEMA_VERSION:
        return Rejected("other-schema", label, "schema_version %s (this fleet reads %s), from cudnn-doctor %s"
                        % (doc.get("schema_version"), SCHEMA_VERSION, tool_version))
    fp, host, started = doc.get("fingerprint"), doc.get("host"), parse_time(doc.get("started_at"))
    if not isinstance(fp, dict) or not isinstance(fp.get("id"), str) or not host or started is None:
        if tool_version == __version__ or host is not None and not isinstance(host, str):
            # This very version writes those fields: the report was damaged or edited, not written by an old tool.
            return Rejected("not-a-report", label, "a `check --json` report without a usable host, started_at or "
                                                   "fingerprint (damaged or edited)")
        return Rejected("old-tool", label, "no host, started_at or fingerprint: cudnn-doctor %s is too old to merge; "
                                           "upgrade it on that node" % tool_version, host if isinstance(host, str) else None)
    if not isinstance(host, str) or not isinstance(doc.get("findings", []), list) or \
            not isinstance(doc.get("facts", {}), dict):
        return Rejected("not-a-report", label, "a `check --json` report with a malformed host, facts or findings")
    if fp["id"] not in catalogue.fields:
        catalogue.fields[fp["id"]] = fp.get("fields") or {}
    findings = doc.get("findings") or []
    pairs = []
    for f in findings:
        if not isinstance(f, dict):
            continue
        fid, sev = str(f.get("id")), str(f.get("severity"))
        pairs.append((fid, sev))
        if fid not in catalogue.examples:
            catalogue.examples[fid] = {"title": str(f.get("title", "")), "fix": str(f.get("fix", "")), "severity": sev}
    return NodeReport(host=str(host), source=label, started_at=doc["started_at"], started_ts=started,
                      verdict=str(doc.get("verdict")), exit_code=int(doc.get("exit_code", 0) or 0),
                      fingerprint=fp["id"], tool_version=tool_version, findings=tuple(pairs))


def load(sources: List[str], stdin) -> Tuple[List[NodeReport], List[Rejected], Catalogue]:
    catalogue = Catalogue()
    nodes: List[NodeReport] = []
    rejected: List[Rejected] = []
    for name, content in iter_texts(sources, stdin):
        if isinstance(content, Bad):
            rejected.append(Rejected(content.kind, name, content.reason))
            continue
        quick = quick_document(content) if isinstance(content, bytes) else None
        if quick is not None:
            documents: Iterator = iter([(name, quick)])
        elif isinstance(content, bytes):
            try:
                documents = split_documents(name, io.StringIO(content.decode("utf-8")).read)
            except UnicodeDecodeError as exc:
                rejected.append(Rejected("unreadable", name, "not UTF-8 text: %s" % exc.reason))
                continue
        else:
            documents = split_documents(name, content)
        for label, doc in documents:
            item = Rejected(doc.kind, label, doc.reason) if isinstance(doc, Bad) else to_node(label, doc, catalogue)
            if isinstance(item, Rejected):
                rejected.append(item)
            else:
                nodes.append(item)
    return nodes, rejected, catalogue
