"""Compat is a facade over one object per knowledge domain: each domain gets the others it asks in its constructor
(no domain reaches another through shared state), and each facade method forwards to its domain unchanged."""
from __future__ import annotations

import inspect
import pytest

from cudnn_doctor.knowledge import Compat, load_compat
from cudnn_doctor.knowledge.tables import Domain, Tables


def _forwarders():
    return {name: value for name, value in vars(Compat).items()
            if callable(value) and not name.startswith("_") and name not in ("table", "sourced_rows")}


def test_every_facade_method_has_its_domains_signature_and_answer():
    compat = load_compat()
    forwarders = _forwarders()
    assert len(forwarders) > 100
    for name, call in forwarders.items():
        [owner] = [d for d in compat.domains.values() if name in vars(type(d))]  # exactly one domain answers it
        method = getattr(type(owner), name)
        assert inspect.signature(call).parameters.keys() == inspect.signature(method).parameters.keys(), name
        assert call.__doc__ == method.__doc__, name
    # The same answer, through the facade and through the domain's typed accessor.
    assert compat.min_driver("12.4", "windows") == compat.drivers.min_driver("12.4", "windows")
    assert compat.pair_verdict("12.4", "9.1.0", cc="8.0").to_dict() == \
        compat.pairs.pair_verdict("12.4", "9.1.0", cc="8.0").to_dict()


def test_each_domain_is_built_from_the_tables_and_the_domains_it_names():
    compat = load_compat()
    for domain in compat.domains.values():
        params = list(inspect.signature(type(domain).__init__).parameters.values())[1:]
        assert params[0].annotation in ("Tables", Tables), type(domain).__name__
        for param in params[1:]:
            given = getattr(domain, param.name)
            assert isinstance(given, Domain) and given is compat.domains[type(given).__name__], (
                type(domain).__name__, param.name)
        # What a domain holds is its tables, the domains it was handed and its own caches: nothing else.
        held = {k for k, v in vars(domain).items() if isinstance(v, (Domain, Compat))}
        assert held == {p.name for p in params[1:]}, type(domain).__name__


def test_a_compat_built_from_other_tables_answers_from_them():
    data = {k: dict(v) for k, v in load_compat().data.items()}
    data["derived"] = dict(data["derived"], date="2001-01-01", origin="test")
    compat = Compat(data, "test")
    assert compat.knowledge_date() == "2001-01-01" and compat.origin == "test"
    assert compat.published.knowledge_origin() == "test" and load_compat().knowledge_date() != "2001-01-01"


@pytest.mark.parametrize("symbol, product", [
    ("ncclCommRegister", "NCCL"), ("cublasLtMatmul", "cuBLASLt"), ("cublasCreate_v2", "cuBLAS"),
    ("nvrtcAddNameExpression", "NVRTC"), ("cudnnCreate", "cuDNN"), ("cudaMallocAsync", "the CUDA runtime"),
    ("ncclx", None), ("cuInit", None), ("_ZNSt13runtime_errorC2EPKc", None)])
def test_a_symbol_is_owned_by_the_library_whose_prefix_it_carries(symbol, product):
    owner = load_compat().symbol_owner(symbol)
    assert (owner or {}).get("product") == product
    assert owner is None or "https://" in owner["source"]
