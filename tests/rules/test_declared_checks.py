"""compat/checks.toml's checks (one fact against one sourced number) register as rules and are judged by the knowledge
a run is handed: every row is valid, names facts that exist, and a changed number changes the verdict."""
from __future__ import annotations

import copy
import dataclasses
import importlib
import typing

import pytest

from cudnn_doctor.knowledge import Compat, load_compat
from cudnn_doctor.knowledge.declared import FILE, declared, problems_of, shipped_checks
from cudnn_doctor.model import CUDA_ENVIRONMENT, Facts, HostFacts
from cudnn_doctor.rules import RuleContext, evaluate, registered_all
from cudnn_doctor.rules.declared import fact_at, judged, shown

SHIPPED = load_compat()
# The names the facts' annotations use, from every module that declares facts (some only under TYPE_CHECKING).
NAMES = {k: v for m in ("model", "model_image", "model_node", "model_theano", "model_windows")
         for k, v in vars(importlib.import_module("cudnn_doctor." + m)).items()}
ROWS = SHIPPED.data[FILE]


def _leaf(path: str) -> type:
    """The declared type at a dotted path of the Facts dataclasses (KeyError where a step does not exist)."""
    kind: typing.Any = Facts
    for step in path.split("."):
        hints = typing.get_type_hints(kind, globalns=NAMES)
        if step not in hints:
            raise KeyError("%s: %s has no field %s" % (path, kind.__name__, step))
        kind = next((a for a in typing.get_args(hints[step]) if a is not type(None)), hints[step])
    return kind


@pytest.mark.parametrize("alias", sorted(ROWS))
def test_every_row_is_valid_sourced_and_registered(alias):
    row = ROWS[alias]
    assert problems_of(alias, row) == []
    assert str(row["source"]).startswith("https://") and row["status"] in ("confirmed", "secondary", "heuristic")
    rule = next(r for r in registered_all() if r.alias == alias)
    assert (rule.id, rule.title, rule.section) == (row["id"], row["title"], row["section"])
    assert [c.alias for c in shipped_checks()].count(alias) == 1


@pytest.mark.parametrize("alias", sorted(ROWS))
def test_the_facts_a_row_names_exist_with_the_right_kind(alias):
    row = ROWS[alias]
    if row["fact"].startswith("environment."):  # a variable the probe reads (model.CUDA_ENVIRONMENT), a string
        assert row["fact"].split(".", 1)[1] in CUDA_ENVIRONMENT and ("equals" in row or "below" in row)
        return
    kind = _leaf(row["fact"])
    assert kind in (int, float) if "below" in row else kind is not None, row["fact"]
    for path in row.get("when", []):
        _leaf(path)


def test_a_malformed_row_is_named_and_left_out():
    bad = {"id": "CD999", "title": "t", "section": "gpus", "severity": "fatal", "fact": "host.euid", "below": "8",
           "title_found": "x", "words": "w", "source": "https://example.org", "status": "secondary", "when": "x"}
    found = problems_of("bad-row", bad)
    assert any("severity" in p for p in found) and any("below" in p for p in found) and any("when" in p for p in found)
    assert declared({FILE: {"bad-row": bad}}) == []


def test_the_number_comes_from_the_knowledge_handed_in():
    """A user's knowledge with another floor judges by it: the table registers the check, the run's knowledge
    decides (CD807 here, 64 MiB against a 1 GiB floor, then against a 32 MiB one)."""
    facts = Facts(host=HostFacts(in_container=True, shm_bytes=64 << 20))

    def cd807(compat: Compat):
        return [f for f in evaluate(facts, RuleContext(compat=compat))[0] if f.id == "CD807"]

    assert cd807(SHIPPED)
    data = copy.deepcopy(SHIPPED.data)
    data[FILE]["container-shm-small"]["below"] = 32 << 20
    assert cd807(Compat(data)) == []
    del data[FILE]["container-shm-small"]
    assert cd807(Compat(data)) == []  # knowledge without the check: nothing to judge, no crash


def test_fact_paths_and_numbers_read_as_said():
    facts = Facts(host=HostFacts(shm_bytes=5))
    assert fact_at(facts, "host.shm_bytes") == 5 and fact_at(facts, "host.nothing_here") is None
    assert fact_at(dataclasses.replace(facts, host=None), "host.shm_bytes") is None
    assert [shown(n, "bytes") for n in (64 << 20, 8 << 30, 65536, 512)] == ["64 MiB", "8 GiB", "64 KiB", "512 bytes"]
    assert shown(3, "count") == "3"


def test_an_environment_row_is_judged_by_its_value_and_fixed_in_the_platform_s_shell():
    """A row on an environment variable: `equals` without case or outer spaces, a number said as digits under
    `below`, and the fix the variable unset (or set to `set_to`) in the shell of the machine's platform."""
    row = {"id": "CD999", "title": "t", "section": "loader", "severity": "info", "fact": "environment.X_SIZE",
           "below": 1024, "title_found": "X_SIZE is {value}, under {limit}", "source": "https://example.org",
           "status": "secondary"}
    eager = {k: v for k, v in row.items() if k != "below"}
    eager.update(fact="environment.X_MODE", equals="EAGER", set_to="LAZY", title_found="X_MODE={value}")
    [small, mode] = declared({FILE: {"x-size": row, "x-mode": eager}})
    assert judged(small, Facts(environment={"X_SIZE": "100"}))[0].evidence == {"X_SIZE": "100", "below": 1024}
    assert judged(small, Facts(environment={"X_SIZE": "4096"})) == []
    assert judged(small, Facts(environment={"X_SIZE": "1g"})) == []  # not a number: not judged
    found = judged(mode, Facts(environment={"X_MODE": " eager"}))
    assert found and found[0].remedy.commands == ["export X_MODE=LAZY"]
    assert judged(mode, Facts(environment={"X_MODE": "LAZY"})) == []
    assert judged(mode, Facts()) == []
