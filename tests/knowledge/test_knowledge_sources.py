"""The knowledge against its sources: hand-transcribed rows agree with what the libraries, NVIDIA's manifests and
PyPI's metadata say (all recorded in tests/data/knowledge), and every source is a URL a user can open."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.version import Version

from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.refresh import collect
from cudnn_doctor.refresh.sources import cuda_manifest, cudnn_manifest, pinned
from cudnn_doctor.versions import release3

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "tests" / "data" / "knowledge"
INTERNAL = ("project notes", "fork's copy", "anchors survey", "seed article", "seed 0", "re-check upstream")


@pytest.fixture(scope="module")
def compat():
    return load_compat()


@pytest.fixture(scope="module")
def sources():
    return collect.load_recorded(RECORDED)


def _cudart(sources):
    return {(str(release3(r["version"])), int(r["project"][-2:])): r["built_with_cuda"]
            for r in sources["wheel_cudart"] if "built_with_cuda" in r}


def test_every_transcribed_row_ends_at_the_cuda_its_library_was_built_with(compat, sources):
    """NVIDIA's editions list a build's minors up to the CUDA it was made with; the wheels' libraries say which."""
    built = _cudart(sources)
    checked = 0
    for b in compat.cudnn_builds():
        if b.built_with or not b.family:
            continue  # derived rows are built from the libraries themselves
        for (rel, major), cuda in built.items():
            if major == b.cuda_major and b.covers(rel):
                assert b.cuda[-1] == cuda, (b.releases_text(), b.variant, b.cuda, rel, cuda)
                checked += 1
    assert checked >= 15


def test_cudnn_9_1_0_covers_cuda_12_4(compat, sources):
    assert _cudart(sources)[("9.1.0", 12)] == "12.4"
    (row,) = [b for b in compat.cudnn_builds("9.1.0") if b.variant == "cuda12"]
    assert row.cuda[-1] == "12.4" and row.status == "confirmed" and row.source.startswith("https://")


def test_manifests_name_the_builds_the_knowledge_knows(compat, sources):
    assert sources["manifests"]["cudnn"], "no recorded cuDNN manifest"
    for doc in sources["manifests"]["cudnn"]:
        m = cudnn_manifest(doc)
        assert sorted(compat.cudnn_release_cuda_majors(m["release"])) == sorted(int(x) for x in m["cuda_majors"])
        req = compat.cudnn_requirements(m["release"])
        described = {b.cuda_major for b in req["builds"]} | {int(v["variant"][4:]) for v in req["likely_variants"]}
        assert described >= {int(x) for x in m["cuda_majors"]}, m


def test_toolkit_drivers_match_nvidia_manifests(compat, sources):
    assert sources["manifests"]["cuda"], "no recorded CUDA manifest"
    for doc in sources["manifests"]["cuda"]:
        m = cuda_manifest(doc)
        floor = compat.min_driver(m["cuda"])
        assert floor is not None and floor.version == m["driver_linux"], m
        assert "redistrib_%s.json" % m["cuda"] in floor.source


def test_pytorch_rows_match_the_pins_of_its_pypi_wheels(compat):
    pins = compat.framework_pins("torch")
    assert len(pins) >= 20
    rows = compat.framework_rows("pytorch")
    for pin in pins:
        exact = pinned(pin["cudnn"])
        major_minor = ".".join(pin["version"].split(".")[:2])
        match = [r for r in rows if r["torch"] == major_minor and r["cuda"] == pin["cuda"]]
        assert match and match[0]["cudnn"] == exact, (pin["version"], pin["cuda"], exact, match)


def test_tensorflow_rows_match_the_pins_of_its_pypi_wheels(compat):
    rows = {r["tensorflow"]: r for r in compat.framework_rows("tensorflow_linux")}
    checked = 0
    for pin in compat.framework_pins("tensorflow"):
        exact, runtime = pinned(pin["cudnn"]), pinned(pin["cuda_runtime"])
        row = rows.get(pin["version"])
        if row is None or not exact or not runtime:
            continue
        assert ".".join(exact.split(".")[:2]) == row["cudnn"] and pin["cuda"] == row["cuda"], (pin, row)
        checked += 1
    assert checked >= 3


PLACEHOLDERS = ("each row's edition",)
SOURCE_KEYS = ("source", "sources", "edition")


def _sources_in(node, where):
    """Every source text in a parsed compat file: `source`/`sources`/`edition` and any `*_source` key, at any depth."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in SOURCE_KEYS or key.endswith("_source"):
                for text in value if isinstance(value, list) else [value]:
                    yield "%s.%s" % (where, key), text
            else:
                yield from _sources_in(value, "%s.%s" % (where, key))
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _sources_in(item, "%s[%d]" % (where, i))


@pytest.mark.parametrize("path", sorted((ROOT / "compat").glob("*.toml")), ids=lambda p: p.stem)
def test_every_source_is_a_url(path):
    """A user can open every source: each names a URL (placeholders pointing at the rows' own URLs aside)."""
    from cudnn_doctor.knowledge.load import parse_toml

    found = list(_sources_in(parse_toml(path.read_text(encoding="utf-8")), path.stem))
    for where, text in found:
        if text in PLACEHOLDERS or text.startswith("each row:"):
            continue
        assert re.search(r"https?://", str(text)), (where, text)


def test_the_url_check_walks_every_compat_file():
    """The check above would miss a file or a nested key if the walk stopped early; it must see them all."""
    from cudnn_doctor.knowledge.load import parse_toml

    seen = {p.stem for p in (ROOT / "compat").glob("*.toml")
            if any(True for _ in _sources_in(parse_toml(p.read_text(encoding="utf-8")), p.stem))}
    assert {"cudnn", "windows", "catalogue", "status_codes", "symptoms", "gpu_peaks"} <= seen
    nested = dict(_sources_in({"t": {"rows": [{"cuda_majors_source": "x"}]}}, "f"))
    assert nested == {"f.t.rows[0].cuda_majors_source": "x"}


def test_no_internal_notes_reach_users():
    texts = [p.read_text() for p in (ROOT / "compat").glob("*.toml")]
    texts.append(subprocess.run([sys.executable, "-m", "cudnn_doctor", "bench", "--help"], capture_output=True,
                                text=True, cwd=ROOT).stdout)
    for text in texts:
        for note in INTERNAL:
            assert note not in text.lower(), note


def test_recorded_sources_say_where_they_came_from():
    for path in RECORDED.rglob("*.json"):
        doc = json.loads(path.read_text())
        origin = doc.get("_recorded", {}).get("url") or doc.get("source", "")
        assert "http" in origin or "pypi.org" in origin, path


@pytest.mark.realdata
def test_recorded_cudart_is_what_the_real_library_reports():
    """The oracle: the cached real wheel's library, asked through ctypes in a child (no GPU needed)."""
    import realdata

    got = realdata.real_wheel(*realdata.CUDNN9)
    if got is None:
        pytest.skip("nvidia-cudnn-cu12 wheel not available")
    lib = got / "nvidia" / "cudnn" / "lib"
    ask = ("import ctypes,sys; l=ctypes.CDLL(sys.argv[1]); l.cudnnGetCudartVersion.restype=ctypes.c_size_t; "
           "l.cudnnGetVersion.restype=ctypes.c_size_t; print(l.cudnnGetVersion(), l.cudnnGetCudartVersion())")
    proc = subprocess.run([sys.executable, "-c", ask, str(lib / "libcudnn.so.9")], capture_output=True, text=True,
                          timeout=60, env={"LD_LIBRARY_PATH": str(lib), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    version, cudart = (int(x) for x in proc.stdout.split())
    rows = json.loads((RECORDED / "wheel_cudart.json").read_text())["rows"]
    (row,) = [r for r in rows if r["project"] == realdata.CUDNN9[0] and r["version"] == realdata.CUDNN9[1]]
    assert (row["cudnnGetVersion"], row["cudnnGetCudartVersion"]) == (version, cudart)
    assert Version(row["built_with_cuda"]) == Version("%d.%d" % (cudart // 1000, cudart % 1000 // 10))


def _commands_in(node, where):
    """(where, command) of every `commands` list in a parsed compat table, however deep."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "commands" and isinstance(value, list):
                yield from (("%s.commands" % where, c) for c in value)
            else:
                yield from _commands_in(value, "%s.%s" % (where, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _commands_in(value, "%s[%d]" % (where, i))


def test_commands_in_compat_run_as_printed():
    # A command a table hands to a fix is printed and run as it is: a `<version>` in it is a placeholder the user
    # would type (pytorch-187824's answer printed `nvidia-cudnn-cu12==<version>`). Templates live under other keys
    # (`install`), filled by code.
    from cudnn_doctor.knowledge.load import parse_toml

    found = [(where, c) for p in sorted((ROOT / "compat").glob("*.toml"))
             for where, c in _commands_in(parse_toml(p.read_text(encoding="utf-8")), p.stem)]
    assert len(found) > 40
    assert [(where, c) for where, c in found if re.search(r"<[\w ]+>", c)] == []
