"""How the published schemas evolve (docs/json.md, "Schema versions"): a new field is optional and keeps
schema_version, a reader of the published schema meets it without failing, and removing a field is refused."""
from __future__ import annotations

import dataclasses
import importlib.util
import json
from pathlib import Path
from typing import Optional

import pytest
from jsonschema import Draft202012Validator

from cudnn_doctor import model
from cudnn_doctor.render.envelope import SCHEMA_VERSION

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("write_schemas", REPO / "scripts" / "write_schemas.py")
write_schemas = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(write_schemas)


def _probe_error(*fields, doc: str = "A probe that raised."):
    """A stand-in for model.ProbeError with other fields (same name, so it meets the published definition)."""
    cls = dataclasses.make_dataclass("ProbeError", fields, namespace={"__doc__": doc})
    cls.__module__ = model.__name__
    return cls


def test_a_new_field_is_optional_and_keeps_the_schema_version():
    published = write_schemas.published()["ProbeError"]
    grown = _probe_error(("probe", str), ("error", str), ("hint", Optional[str], None))
    defs: dict = {}
    write_schemas.dataclass_def(grown, defs)
    assert "hint" in defs["ProbeError"]["properties"]
    assert defs["ProbeError"]["required"] == published["required"] == ["error", "probe"]
    assert write_schemas.envelope("check", {}, [])["anyOf"][0]["properties"]["schema_version"] == {
        "const": SCHEMA_VERSION}
    old = {"probe": "driver", "error": "boom"}
    assert not list(Draft202012Validator(defs["ProbeError"]).iter_errors(old))  # yesterday's report still fits


def test_a_reader_of_the_published_schema_accepts_a_field_added_later():
    schema = json.loads((REPO / "schema" / "report-v1.json").read_text())
    probe_error = dict(schema["$defs"]["ProbeError"], **{"$defs": schema["$defs"]})
    assert not list(Draft202012Validator(probe_error).iter_errors({"probe": "driver", "error": "boom", "hint": "x"}))
    assert all(d.get("additionalProperties") is not False for d in schema["$defs"].values())


def test_removing_a_published_field_needs_a_new_schema_version():
    with pytest.raises(write_schemas.BreakingChange, match="ProbeError loses error.*bump SCHEMA_VERSION"):
        write_schemas.dataclass_def(_probe_error(("probe", str)), {})


def test_a_new_object_requires_its_fields_and_every_object_says_what_it_is():
    defs: dict = {}
    write_schemas.dataclass_def(_probe_error(("probe", str), ("error", str)), defs, promised={})
    assert defs["ProbeError"]["required"] == ["error", "probe"]
    with pytest.raises(ValueError, match="no docstring"):
        write_schemas.dataclass_def(dataclasses.make_dataclass("Bare", [("x", int)]), {}, promised={})
    for name, schema in write_schemas.rendered().items():
        for cls, body in json.loads(schema).get("$defs", {}).items():
            assert body.get("description") and not body["description"].startswith(cls + "("), (name, cls)
