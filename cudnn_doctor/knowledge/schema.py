"""The schema of the derived knowledge (compat/derived.json and what `cudnn-doctor update` writes), as JSON Schema."""
from __future__ import annotations

from typing import Any, Dict, List

_VERSION = {"type": "string", "pattern": r"^[0-9]+(\.[0-9]+)*(\.post[0-9]+)?$"}
_MINOR = {"type": "string", "pattern": r"^[0-9]+\.[0-9]+$"}
_SOURCE = {"type": "string", "minLength": 1}

SCHEMA: Dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["schema_version", "date", "generated_by", "sources", "cudnn_releases", "cudnn_builds",
                 "cuda_releases", "toolkit_driver", "frameworks"],
    "properties": {
        "schema_version": {"const": 1},
        "date": {"type": "string", "pattern": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
        "generated_by": {"type": "string"},
        "origin": {"type": "string"},
        "sources": {"type": "array", "items": {"type": "string"}},
        "errors": {"type": "array", "items": {"type": "string"}},
        "cudnn_releases": {"type": "array", "items": {
            "type": "object", "required": ["release", "cuda_majors", "date"],
            "properties": {"release": _VERSION, "date": {"type": "string"},
                           "cuda_majors": {"type": "object", "minProperties": 1,
                                           "propertyNames": {"pattern": "^[0-9]+$"},
                                           "additionalProperties": _VERSION}}}},
        "cudnn_builds": {"type": "array", "items": {
            "type": "object", "required": ["from", "to", "variant", "cuda", "built_with", "status", "source"],
            "properties": {"from": _VERSION, "to": _VERSION, "variant": {"type": "string", "pattern": "^cuda[0-9]+$"},
                           "cuda": {"type": "array", "minItems": 1, "items": _MINOR}, "built_with": _MINOR,
                           "status": {"enum": ["confirmed", "secondary"]}, "source": _SOURCE}}},
        "cuda_releases": {"type": "array", "items": {
            "type": "object", "required": ["cuda", "runtime", "date"],
            "properties": {"cuda": _MINOR, "runtime": {"type": "string"}, "date": {"type": "string"}}}},
        "toolkit_driver": {"type": "array", "items": {
            "type": "object", "required": ["cuda", "driver_linux"],
            "properties": {"cuda": _VERSION, "driver_linux": _VERSION, "date": {"type": "string"}}}},
        "frameworks": {"type": "array", "items": {
            "type": "object", "required": ["framework", "project", "version", "cuda_major", "cuda", "cudnn", "source"],
            "properties": {"framework": {"enum": ["torch", "tensorflow", "jax"]}, "version": {"type": "string"},
                           "cuda_major": {"type": "string"}, "cuda": {"type": "string"},
                           "cudnn": {"type": "string"}, "source": _SOURCE}}},
    },
}


def problems(doc: Any) -> List[str]:
    """Why `doc` is not valid derived knowledge (empty when it is)."""
    try:
        import jsonschema  # why: about 180 ms, only to validate a user's updated knowledge once per file
    except ImportError:  # a copy without it (the single-file zipapp) cannot vouch for an update: the shipped data wins
        return ["cannot validate: the jsonschema package is not installed"]

    validator = jsonschema.Draft202012Validator(SCHEMA)
    return ["%s: %s" % ("/".join(str(p) for p in e.absolute_path) or "(top)", e.message)
            for e in validator.iter_errors(doc)][:20]
