"""What each framework accepts at run time from the cuDNN it loads (compat [cudnn_acceptance], issue 43 item 4):
the rules against the frameworks' own words and code. The fast tests hold the recorded rows to the messages the
frameworks print and to the code line each row records; the realdata tests read that line again from the real wheel
(downloaded once into the test cache; skipped offline)."""
from __future__ import annotations

import fnmatch
import zipfile

import pytest

import realdata
from cudnn_doctor.knowledge import load_compat

KINDS = ("torch", "tensorflow", "jax", "onnxruntime", "cupy", "paddle")


def _rows():
    return {r["kind"]: r for r in load_compat().acceptance.acceptance_rows()}


def test_every_framework_has_a_rule_with_its_source():
    rows = _rows()
    assert set(KINDS) <= set(rows)
    for kind, row in rows.items():
        assert row["rule"] in ("same-major-newer-minor", "same-major"), kind
        assert row["check"] in ("refuses", "none", "warns-older"), kind
        assert row["source"].startswith("https://"), kind
        for evidence in row.get("evidence", []):
            assert "==" in evidence["wheel"] and evidence["file"] and evidence["code"], kind


def test_the_recorded_code_says_the_rule():
    # The code line each row was read from decides its rule: a minor compared with >=, or only the soname linked.
    rows = _rows()
    assert "runtime_minor >= compile_minor" in rows["torch"]["evidence"][0]["code"]
    assert rows["torch"]["rule"] == "same-major-newer-minor"
    assert "equal or higher minor version" in rows["tensorflow"]["evidence"][0]["code"]
    assert rows["tensorflow"]["rule"] == "same-major-newer-minor"
    # JAX's Python check compares the runtime with build_version // 100 (always passes); XLA's own check decides.
    assert "// scale_for_comparison" in rows["jax"]["evidence"][0]["code"] and "openxla/xla" in rows["jax"]["source"]
    for kind in ("onnxruntime", "cupy"):
        assert rows[kind]["evidence"][0]["code"].startswith("libcudnn.so.") and rows[kind]["rule"] == "same-major"


@pytest.mark.parametrize("kind,built,runtime,accepts", [
    # the LD_PRELOAD case: torch compiled against (9, 26, 0) finds (9, 13, 0)
    ("torch", "9.26.0", "9.13.0", False),
    ("torch", "9.8.0", "9.10.2.21", True),  # torch 2.9.1's build beside its own pin
    ("tensorflow", "9.3.0", "9.10.2.21", True),  # TF 2.19 beside torch 2.9.1's pin
    ("tensorflow", "9.8.0", "9.5.1", False),  # "Loaded runtime CuDNN library: 9.5.1 but source .. 9.8.0"
    ("tensorflow", "8.9.7", "9.10.2.21", False),  # another soname
    ("jax", "9.8.0", "9.10.0", False),  # refused by its own check
    ("jax", "9.8.0", "9.10.1", True),
    ("onnxruntime", "9.1.0", "9.0.0", True),  # only libcudnn.so.9 is asked for
    ("onnxruntime", "9.1.0", "8.9.2.26", False),
    ("cupy", "8.8.0", "8.9.7.29", True),
    ("cupy", "8.8.0", "8.6.0", True),
    ("paddle", "9.9.0", "9.5.1", True),  # it warns and runs
    ("unknown-framework", "9.8.0", "9.5.1", False),  # the strictest rule for what compat does not know
])
def test_acceptance(kind, built, runtime, accepts):
    verdict = load_compat().acceptance.accepts(kind, built, runtime)
    assert verdict.accepts is accepts, verdict
    if not accepts:
        assert verdict.why


def test_torchs_refusal_is_said_in_its_own_words():
    verdict = load_compat().acceptance.accepts("torch", "9.26.0", "9.13.0")
    assert verdict.why == ("cuDNN version incompatibility: PyTorch was compiled  against 9.26.0 but found runtime "
                           "version 9.13.0")


def test_torch_refuses_cudnn_9_11_on_a_gpu_below_turing():
    acceptance = load_compat().acceptance
    assert not acceptance.accepts("torch", "9.8.0", "9.11.0", gpu_ccs=["7.0"]).accepts
    assert acceptance.accepts("torch", "9.8.0", "9.10.2", gpu_ccs=["7.0"]).accepts
    assert acceptance.accepts("torch", "9.8.0", "9.11.0", gpu_ccs=["8.0"]).accepts


def _evidence():
    return [pytest.param(kind, e, id="%s-%s" % (kind, e["wheel"])) for kind, row in _rows().items()
            for e in row.get("evidence", [])]


@pytest.mark.realdata
@pytest.mark.parametrize("kind,evidence", _evidence())
def test_the_rule_is_in_the_real_wheel(kind, evidence, tmp_path):
    name, version = evidence["wheel"].split("==")
    stem = name.replace("-", "_")
    wheel = realdata.download_wheel(name, version, "%s-%s-*x86_64.whl" % (stem, version),
                                    ("manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_27_x86_64",
                                     "manylinux_2_28_x86_64"))
    if wheel is None:
        pytest.skip("the %s wheel is not in the test cache (offline?)" % evidence["wheel"])
    needle = evidence["code"].encode()
    with zipfile.ZipFile(wheel) as zf:
        members = [m for m in zf.namelist() if fnmatch.fnmatchcase(m, evidence["file"])]
        assert members, (evidence["file"], wheel.name)
        for member in members:
            tail = b""
            with zf.open(member) as src:  # streamed: libtensorflow_framework.so.2 is 160 MB
                for chunk in iter(lambda: src.read(1 << 22), b""):
                    if needle in tail + chunk:
                        return
                    tail = chunk[-len(needle):]
    pytest.fail("%s is not in %s of %s" % (evidence["code"], evidence["file"], wheel.name))
