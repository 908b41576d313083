"""Validate Kubernetes manifests against the official `kubernetes` Python client's models (run in a venv that has it).

Every key must be a field of the model for its kind (unknown keys are errors, as `kubectl --validate=strict`),
every value must have the model's type, and every required field must be present (the models' own checks).
Usage: python k8s_validate.py MANIFEST.yaml...   Prints one line per object; exit 1 on any error.
"""
import re
import sys

import kubernetes.client as k8s
import yaml

KINDS = {("v1", "Namespace"): "V1Namespace", ("v1", "ConfigMap"): "V1ConfigMap",
         ("apps/v1", "DaemonSet"): "V1DaemonSet", ("v1", "ServiceAccount"): "V1ServiceAccount"}
PRIMITIVES = {"str": str, "int": int, "bool": bool, "float": (int, float), "datetime": str, "date": str}


def check(value, type_name, path, errors):
    if value is None:
        return
    m = re.match(r"^list\[(.+)\]$", type_name)
    if m:
        if not isinstance(value, list):
            errors.append("%s: expected a list" % path)
            return
        for i, item in enumerate(value):
            check(item, m.group(1), "%s[%d]" % (path, i), errors)
        return
    m = re.match(r"^dict\((\w+), (.+)\)$", type_name)
    if m:
        if not isinstance(value, dict):
            errors.append("%s: expected a map" % path)
            return
        for k, v in value.items():
            check(v, m.group(2), "%s.%s" % (path, k), errors)
        return
    if type_name == "object":  # IntOrString, Quantity, raw JSON
        if not isinstance(value, (str, int, float, dict, list)):
            errors.append("%s: unexpected %r" % (path, value))
        return
    if type_name in PRIMITIVES:
        if not isinstance(value, PRIMITIVES[type_name]) or (type_name == "int" and isinstance(value, bool)):
            errors.append("%s: expected %s, got %r" % (path, type_name, value))
        return
    model = getattr(k8s, type_name)
    if not isinstance(value, dict):
        errors.append("%s: expected a %s object" % (path, type_name))
        return
    by_json = {json_key: attr for attr, json_key in model.attribute_map.items()}
    for key, item in value.items():
        if key not in by_json:
            errors.append("%s: unknown field %r for %s" % (path, key, type_name))
            continue
        check(item, model.openapi_types[by_json[key]], "%s.%s" % (path, key), errors)


def main(paths):
    bad = 0
    client = k8s.ApiClient()
    for path in paths:
        with open(path) as f:
            docs = [d for d in yaml.safe_load_all(f) if d is not None]
        for doc in docs:
            name = "%s %s/%s" % (path, doc.get("kind"), (doc.get("metadata") or {}).get("name"))
            model = KINDS.get((doc.get("apiVersion"), doc.get("kind")))
            errors = []
            if model is None:
                errors.append("unknown apiVersion/kind %s/%s" % (doc.get("apiVersion"), doc.get("kind")))
            else:
                check(doc, model, doc.get("kind"), errors)
                try:  # the models' own validation: required fields, enums
                    client._ApiClient__deserialize(doc, model)
                except (ValueError, TypeError) as exc:
                    errors.append("%s: %s" % (model, exc))
            print("%s %s%s" % ("OK  " if not errors else "FAIL", name, "".join("\n  " + e for e in errors)))
            bad += bool(errors)
    print("kubernetes client %s: %d object(s) invalid" % (k8s.__version__ if hasattr(k8s, "__version__") else "?", bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
