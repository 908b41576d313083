"""Writes the published JSON Schemas of every --json output into schema/ (shipped in the wheel).

    python scripts/write_schemas.py          # rewrite schema/*.json
    python scripts/write_schemas.py --check  # exit 1 if a file differs from what the model says

The facts, findings and fixes are generated from the dataclasses in cudnn_doctor/model.py (a field added there
appears here on the next run; tests/commands/test_schemas.py fails until the files are rewritten); the envelopes around
them are written out below. Draft 2020-12; each file's $id is a URN so they reference each other offline.

How the schemas evolve (docs/json.md, "Schema versions"): an object's required fields are the ones it had when it was
first published (read back from schema/*.json), so a field added to a dataclass later is optional and keeps
`schema_version`; no object forbids fields it does not list, so a reader of an older schema accepts a newer report.
Removing (or renaming) a published required field is a breaking change: this script refuses it until
SCHEMA_VERSION is bumped (cudnn_doctor/render/envelope.py) and the files are written under their new names.
"""
from __future__ import annotations

import dataclasses
import enum
import functools
import json
import sys
import typing
from pathlib import Path
from typing import Any, Dict, Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cudnn_doctor import model  # noqa: E402
from cudnn_doctor.commands.pick import CHOICES as PICK_CHOICES  # noqa: E402
from cudnn_doctor.pick.answer import ANSWER_FIELDS  # noqa: E402
from cudnn_doctor.render.envelope import SCHEMA_VERSION as VERSION  # noqa: E402
from cudnn_doctor.run_results import BenchResult, FleetResult, InstallResult, SmokeResult  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "schema"
DRAFT = "https://json-schema.org/draft/2020-12/schema"
NULL = {"type": "null"}


def urn(name: str) -> str:
    return "urn:cudnn-doctor:schema:%s" % name


def _nullable(schema: Dict[str, Any]) -> Dict[str, Any]:
    return {"anyOf": [schema, NULL]}


def type_schema(tp: Any, defs: Dict[str, Any]) -> Dict[str, Any]:
    """The JSON Schema of a Python annotation as to_plain() writes it."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is Any or tp is object:
        return {}
    if origin is typing.Union:
        rest = [a for a in args if a is not type(None)]
        inner = type_schema(rest[0], defs) if len(rest) == 1 else {"anyOf": [type_schema(a, defs) for a in rest]}
        return _nullable(inner) if type(None) in args else inner
    if origin in (list, tuple, typing.List, typing.Tuple):
        item = args[0] if args else Any
        return {"type": "array", "items": type_schema(item, defs)}
    if origin in (dict, typing.Dict):
        return {"type": "object", "additionalProperties": type_schema(args[1], defs) if args else {}}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"enum": [m.value for m in tp]}
    if dataclasses.is_dataclass(tp):
        return {"$ref": "#/$defs/%s" % dataclass_def(tp, defs)}
    if typing.is_typeddict(tp):
        return typeddict_schema(tp, defs)
    return {str: {"type": "string"}, bool: {"type": "boolean"}, int: {"type": "integer"},
            float: {"type": "number"}}[tp]


def _hints(cls: type) -> Dict[str, Any]:
    # model.py names the Windows and image facts only for the type checker (a plain check never builds them).
    from cudnn_doctor import model_image, model_windows

    module = sys.modules[cls.__module__]
    return typing.get_type_hints(cls, {**vars(model_windows), **vars(model_image), **vars(module)})


# Fields a renderer writes beside a dataclass's own: json_report adds a flat soname -> path map to the loader's facts.
WRITTEN_BESIDE: Dict[str, Dict[str, Any]] = {
    "LoaderFacts": {"paths": {"type": "object", "additionalProperties": {"type": ["string", "null"]}}},
}


class BreakingChange(Exception):
    """A published required field is gone: the documents need a new schema_version."""


@functools.lru_cache(maxsize=None)
def published() -> Dict[str, Dict[str, Any]]:
    """Every object of the schemas as published in schema/*.json, by name: what this schema_version promised."""
    defs: Dict[str, Dict[str, Any]] = {}
    for path in sorted(OUT.glob("*-v%s.json" % VERSION)):
        defs.update(json.loads(path.read_text()).get("$defs", {}))
    return defs


def required_fields(name: str, props: Dict[str, Any], promised: Dict[str, Dict[str, Any]]) -> list:
    """What an object must carry: all of a new object's fields; a published one's fields as first published."""
    if name not in promised:
        return sorted(props)
    gone = sorted(set(promised[name].get("required", [])) - set(props))
    if gone:
        raise BreakingChange("%s loses %s, required in schema_version %s: bump SCHEMA_VERSION (a removal breaks "
                             "readers), or keep the field" % (name, ", ".join(gone), VERSION))
    return sorted(promised[name]["required"])


def description(cls: type) -> str:
    """The first line of the class's own docstring (never the signature dataclasses writes when it has none)."""
    doc = cls.__dict__.get("__doc__") or ""
    if not doc.strip() or doc.startswith(cls.__name__ + "("):
        raise ValueError("%s.%s has no docstring for its schema description" % (cls.__module__, cls.__name__))
    return doc.strip().splitlines()[0]


def dataclass_def(cls: type, defs: Dict[str, Any], promised: Optional[Dict[str, Dict[str, Any]]] = None) -> str:
    """Add ``cls`` to $defs (an object with its fields, plus those its JSON derives) and name it; ``promised`` is
    what is published (read from schema/ unless given)."""
    name = cls.__name__
    if name in defs:
        return name
    promised = published() if promised is None else promised
    defs[name] = {}  # a placeholder, so a class that refers to itself stops here
    hints = _hints(cls)
    props = {f.name: type_schema(hints[f.name], defs) for f in dataclasses.fields(cls)}
    for derived in getattr(cls, "DERIVED", ()):
        props[derived] = type_schema(typing.get_type_hints(getattr(cls, derived).fget)["return"], defs)
    props.update(WRITTEN_BESIDE.get(name, {}))
    defs[name] = {"type": "object", "properties": props, "required": required_fields(name, props, promised),
                  "description": description(cls)}
    return name


def typeddict_schema(cls: type, defs: Dict[str, Any]) -> Dict[str, Any]:
    hints = _hints(cls)
    return {"type": "object", "properties": {k: type_schema(v, defs) for k, v in hints.items()}}


def envelope(command: str, payload: Dict[str, Any], required: list) -> Dict[str, Any]:
    """The fields every --json output starts with, then the command's own; a refusal carries only `error`."""
    base = {
        "schema_version": {"const": VERSION},
        "tool": {"type": "object", "properties": {"name": {"const": "cudnn-doctor"}, "version": {"type": "string"}},
                 "required": ["name", "version"]},
        "command": {"const": command},
        "exit_code": {"type": "integer", "minimum": 0},
    }
    ok = {"type": "object", "properties": dict(base, **payload), "required": sorted(list(base) + required)}
    error = {"type": "object", "properties": dict(base, error={"type": "string", "minLength": 1}),
             "required": sorted(list(base) + ["error"]), "additionalProperties": False}
    return {"anyOf": [ok, error]}


def document(name: str, title: str, body: Dict[str, Any], defs: Dict[str, Any]) -> Dict[str, Any]:
    out = {"$schema": DRAFT, "$id": urn(name), "title": title}
    out.update(body)
    if defs:
        out["$defs"] = defs
    return out


def report_schema() -> Dict[str, Any]:
    defs: Dict[str, Any] = {}
    dataclass_def(model.Finding, defs)
    facts = dataclass_def(model.Facts, defs)
    defs["Finding"]["properties"]["id"] = {"type": "string", "pattern": "^CD[0-9]{3}$"}
    defs["Fix"]["properties"]["shell"] = {"enum": ["", "sh", "powershell", "cmd"]}
    payload = {
        "verdict": {"enum": ["ok", "warning", "error"]},
        "incomplete": {"type": "boolean"},
        "facts": {"$ref": "#/$defs/%s" % facts},
        "findings": {"type": "array", "items": {"$ref": "#/$defs/Finding"}},
        "rules_run": {"type": "array", "items": {"type": "string", "pattern": "^CD[0-9]{3}$"}},
        "host": {"type": ["string", "null"]},
        "started_at": {"type": ["string", "null"]},
        "duration_s": {"type": ["number", "null"]},
        "fingerprint": {"type": "object", "required": ["id", "version", "fields"],
                        "properties": {"id": {"type": "string", "pattern": "^[0-9a-f]{16}$"},
                                       "version": {"type": "integer"}, "fields": {"type": "object"}}},
        "smoke": {"type": "object"},
        "knowledge": {"type": "object"},  # how current the knowledge base is (Compat.knowledge_summary)
    }
    required = ["verdict", "incomplete", "facts", "findings", "rules_run", "host", "started_at", "duration_s",
                "fingerprint"]
    return document("report-v1", "cudnn-doctor check --json", envelope("check", payload, required), defs)


def smoke_schema() -> Dict[str, Any]:
    defs: Dict[str, Any] = {}
    dataclass_def(SmokeResult, defs)
    payload = {"results": {"type": "array", "items": {"$ref": "#/$defs/SmokeResult"}},
               "problem": {"type": "string"}}
    return document("smoke-v1", "cudnn-doctor smoke --json", envelope("smoke", payload, ["results"]), defs)


def bench_schema() -> Dict[str, Any]:
    defs: Dict[str, Any] = {}
    result = defs[dataclass_def(BenchResult, defs)]
    del defs["BenchResult"]
    defs["Finding"]["properties"]["id"] = {"type": "string", "pattern": "^CD9[0-9]{2}$"}
    required = [name for name in result["required"] if name != "error"]  # present only when the run stopped
    return document("bench-v1", "cudnn-doctor bench --json", envelope("bench", result["properties"], required), defs)


def install_schema() -> Dict[str, Any]:
    check_finding = {"type": "object", "required": ["id", "severity", "title", "fix", "about_install"],
                     "properties": {"id": {"type": "string", "pattern": "^CD[0-9]{3}$"},
                                    "severity": {"enum": ["error", "warning", "info"]}, "title": {"type": "string"},
                                    "fix": {"type": "string"}, "about_install": {"type": "boolean"}}}
    payload = {
        "dry_run": {"type": "boolean"}, "installed": {"type": "boolean"},
        "plan": {"type": "object", "required": ["archive", "target", "compatibility", "counts", "files"]},
        "check": {"type": "object", "required": ["ran"],
                  "properties": {"ran": {"type": "boolean"}, "findings": {"type": "array", "items": check_finding},
                                 "verdict": {"enum": ["ok", "warning", "error"]},
                                 "other_findings": {"type": "integer", "minimum": 0},
                                 "seen_with": {"type": "object", "additionalProperties": {"type": "string"}},
                                 "note": {"type": "string"}}},
        "verify": {"type": "object"}, "smoke": {"type": "object"}, "backup": {"type": "object"},
        "source": {"type": "object"}, "rollback_hint": {"type": "string"}, "recovered": {"type": "array"},
        "refusal": {"type": ["string", "null"]}, "refusal_code": {"type": "integer", "minimum": 0},
        "history_entry": {"type": ["string", "null"]}, "loader_cache": {"type": ["string", "null"]},
    }
    # The hand-written shapes above name every field the typed result writes, in a dry run or an install.
    assert set(InstallResult.DRY_RUN_FIELDS) | set(InstallResult.INSTALL_FIELDS) == set(payload), sorted(payload)
    return document("install-v1", "cudnn-doctor install --json",
                    envelope("install", payload, ["dry_run", "plan"]), {})


def fleet_schema() -> Dict[str, Any]:
    counts = {"type": "object", "properties": {v: {"type": "integer", "minimum": 0} for v in ("ok", "warning",
                                                                                            "error")},
              "required": ["ok", "warning", "error"]}
    finding = {"type": "object", "required": ["id", "severity", "count", "hosts", "title", "fix"],
               "properties": {"id": {"type": "string", "pattern": "^CD[0-9]{3}$"},
                              "severity": {"enum": ["error", "warning", "info"]},
                              "count": {"type": "integer", "minimum": 1}, "hosts": {"type": "string"},
                              "title": {"type": "string"}, "fix": {"type": "string"}}}
    payload = {
        "nodes": {"type": "integer", "minimum": 0}, "verdicts": counts,
        "hosts_by_verdict": {"type": "object", "additionalProperties": {"type": "string"}},
        "reports": {"type": "object", "required": ["used", "rejected", "duplicated", "stale", "max_age_s"]},
        "tool_versions": {"type": "object"}, "groups": {"type": "array", "items": {"type": "object"}},
        "findings": {"type": "array", "items": finding},
    }
    # The hand-written shapes above cover exactly the typed result's fields.
    assert set(payload) == {f.name for f in dataclasses.fields(FleetResult)}, sorted(payload)
    return document("fleet-v1", "cudnn-doctor fleet --json",
                    envelope("fleet", payload, ["nodes", "verdicts", "hosts_by_verdict", "reports", "groups",
                                                "findings"]), {})


def pick_schema() -> Dict[str, Any]:
    text, texts = {"type": "string"}, {"type": "array", "items": {"type": "string"}}
    maybe_text = {"type": ["string", "null"]}
    gpu = {"type": "object", "required": ["name", "cc"], "properties": {"name": text, "cc": maybe_text}}
    build = {"type": "object", "required": ["release", "cuda", "why"],
             "properties": {"release": text, "cuda": text, "why": texts}, "additionalProperties": False}
    chosen = {"type": "object", "additionalProperties": False,
              "required": ["release", "cuda", "default_build", "index_url", "cudnn", "driver", "code_source",
                           "sources", "gpus"],
              "properties": {"release": text, "cuda": text, "default_build": {"type": "boolean"}, "index_url": text,
                             "cudnn": text, "driver": text, "code_source": text, "sources": texts,
                             "gpus": {"type": "array", "items": dict(gpu, required=["name", "cc", "runs"],
                                                                     properties=dict(gpu["properties"], runs=text))}}}
    payload = {
        "framework": {"enum": list(PICK_CHOICES)}, "spec": text, "ok": {"type": "boolean"},
        "machine": {"type": "object", "additionalProperties": False,
                    "required": ["label", "driver", "driver_cuda", "gpus", "toolkits", "from_report"],
                    "properties": {"label": text, "driver": maybe_text, "driver_cuda": maybe_text,
                                   "gpus": {"type": "array", "items": gpu}, "toolkits": texts,
                                   "from_report": {"type": "boolean"}, "python": maybe_text,
                                   "python_source": maybe_text, "processor": maybe_text, "glibc": maybe_text}},
        "pick": {"anyOf": [chosen, NULL]},
        "install": {"type": "object", "additionalProperties": False,
                    "properties": {"pip": text, "uv": {"anyOf": [texts, text]}, "conda": text, "requirements": texts,
                                   "cudnn-doctor": text}},
        "newer": {"type": "array", "items": build}, "why_none": texts,
        "driver_upgrade": {"anyOf": [{"type": "object", "required": ["branch", "fix"], "additionalProperties": False,
                                      "properties": {"branch": {"type": "string", "pattern": "^R[0-9]+$"},
                                                     "fix": text}}, NULL]},
        "unjudged": {"type": "array", "items": {"type": "object", "required": ["release", "cuda"],
                                                 "properties": {"release": text, "cuda": text}}},
        "candidates": {"type": "integer", "minimum": 0}, "would_fit": texts,
    }
    # The hand-written shapes above name exactly the fields pick/answer.py writes.
    assert set(payload) == set(ANSWER_FIELDS), sorted(set(payload) ^ set(ANSWER_FIELDS))
    return document("pick-v1", "cudnn-doctor pick --json", envelope("pick", payload, sorted(payload)), {})


def fix_schema() -> Dict[str, Any]:
    from cudnn_doctor.render.fix import empty_payload

    text, texts, ids = {"type": "string"}, {"type": "array", "items": {"type": "string"}}, \
        {"type": "array", "items": {"type": "string", "pattern": "^CD[0-9]{3}$"}}
    environment = {"type": "object", "required": ["prefix", "kind", "tool"], "additionalProperties": False,
                   "properties": {"prefix": text, "kind": {"enum": ["venv", "conda"]},
                                  "tool": {"enum": ["pip", "uv", "conda"]}}}
    step = {"type": "object", "required": ["kind", "command", "changes", "ids"], "additionalProperties": False,
            "properties": {"kind": {"enum": ["packages", "removals", "environments", "links", "variables", "system"]},
                           "command": text, "changes": text, "ids": ids}}
    payload = {
        "environment": {"anyOf": [environment, NULL]}, "plan": {"type": "array", "items": step},
        "left": {"type": "array", "items": {"type": "object", "required": ["id", "command", "why"],
                                            "properties": {"id": text, "command": text, "why": text,
                                                           "title": text}}},
        "taken": ids, "not_taken": ids, "remaining": ids, "warnings_new": ids,
        "before": {"type": "array", "items": {"type": "object", "required": ["id", "title"],
                                              "properties": {"id": text, "title": text}}},
        "problem": {"type": ["string", "null"]}, "dry_run": {"type": "boolean"}, "undone": {"type": "boolean"},
        "ran": {"type": "array", "items": {"type": "object", "required": ["command", "exit_code", "output"],
                                           "properties": {"command": text, "exit_code": {"type": "integer"},
                                                          "output": text}}},
        "files": texts, "journal": text,
        "made": {"type": "array", "items": {"type": "object", "required": ["prefix", "errors"],
                                            "additionalProperties": False,
                                            "properties": {"prefix": text, "errors": ids}}},
    }
    # The hand-written shapes above name exactly the fields render/fix.py writes.
    assert set(payload) == set(empty_payload()), sorted(set(payload) ^ set(empty_payload()))
    return document("fix-v1", "cudnn-doctor fix --json", envelope("fix", payload, sorted(payload)), {})


SCHEMAS = {"report-v1.json": report_schema, "smoke-v1.json": smoke_schema, "bench-v1.json": bench_schema,
           "install-v1.json": install_schema, "fleet-v1.json": fleet_schema, "pick-v1.json": pick_schema,
           "fix-v1.json": fix_schema}


def rendered() -> Dict[str, str]:
    return {name: json.dumps(build(), indent=2, sort_keys=True) + "\n" for name, build in SCHEMAS.items()}


def main() -> int:
    texts = rendered()
    if "--check" in sys.argv[1:]:
        stale = [n for n, t in texts.items() if not (OUT / n).exists() or (OUT / n).read_text() != t]
        for name in stale:
            print("schema/%s differs from the model: run python scripts/write_schemas.py" % name)
        return 1 if stale else 0
    OUT.mkdir(exist_ok=True)
    for name, text in texts.items():
        (OUT / name).write_text(text)
    print("wrote %s" % ", ".join(sorted(texts)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
