"""`cudnn-doctor update` against recorded PyPI answers (plus one release newer than the shipped knowledge), the
cache it writes, and `check` on a machine newer than the knowledge (CD004, fixed by `cudnn-doctor update`)."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import requests

from cudnn_doctor.knowledge import Compat, load_compat
from cudnn_doctor.knowledge.load import read_all, read_updated
from cudnn_doctor.knowledge.schema import problems
from cudnn_doctor.refresh import update as update_mod
from cudnn_doctor.rules import RuleContext, evaluate

import facts_factory as ff

ROOT = Path(__file__).resolve().parents[2]
PYPI = ROOT / "tests" / "data" / "knowledge" / "pypi"
REDIST = ROOT / "tests" / "data" / "knowledge" / "redistrib"
NEW = "9.29.0.12"


class _Answer:
    def __init__(self, url: str, doc, text: str = "") -> None:
        self.url, self._doc, self.status_code, self.text = url, doc, 200, text

    def raise_for_status(self) -> None:
        pass

    def json(self):
        return copy.deepcopy(self._doc)


class RecordedPyPI:
    """A requests.Session that answers PyPI's JSON API from the recorded copies, with one new cuDNN release
    (for CUDA 12 and 13) added; NVIDIA's download host is unreachable, as it is from here."""

    def __init__(self, new: bool = True, down: bool = False) -> None:
        self.new, self.down, self.asked = new, down, []

    nvidia = False  # True: NVIDIA's redist host answers from the recorded manifests (and one newer cuDNN one)

    def get(self, url, timeout=None, headers=None):
        self.asked.append(url)
        assert timeout is not None and timeout <= 60, "every request is bounded"
        if self.nvidia and "developer.download.nvidia.com" in url:
            return self._nvidia(url)
        if self.down or "pypi.org" not in url:
            raise requests.ConnectionError("Name or service not known")
        name = url.rstrip("/").split("/")[-2]
        path = PYPI / (name + ".json")
        if not path.is_file():
            raise requests.HTTPError("404 for %s" % url)
        doc = json.loads(path.read_text())
        if self.new and name in ("nvidia-cudnn-cu12", "nvidia-cudnn-cu13"):
            doc["releases"][NEW] = [{"filename": "nvidia_cudnn_%s-%s-py3-none-manylinux_2_27_x86_64.whl" % (
                name[-4:], NEW), "upload_time": "2026-12-01T10:00:00", "yanked": False, "url": ""}]
        return _Answer(url, doc)

    def _nvidia(self, url):
        kind = "cudnn" if "/cudnn/" in url else "cuda"
        docs = {json.loads(p.read_text())["release_label"]: json.loads(p.read_text())
                for p in REDIST.glob("redistrib_%s_*.json" % kind)}
        if kind == "cudnn":  # a release newer than the shipped knowledge, shaped like 9.27.0's manifest
            newer = copy.deepcopy(docs["9.27.0"])
            newer.update(release_label="9.30.0", release_date="2026-12-10")
            newer["cudnn"]["version"] = "9.30.0.7"
            docs["9.30.0"] = newer
        if url.endswith("/redist/"):
            page = "".join('<a href="redistrib_%s.json">redistrib_%s.json</a>\n' % (k, k) for k in docs)
            return _Answer(url, None, text=page)
        label = url.rsplit("redistrib_", 1)[1][:-5]
        if label not in docs:
            raise requests.HTTPError("404 for %s" % url)
        return _Answer(url, docs[label])

    def head(self, url, **kw):
        raise requests.ConnectionError("no wheel downloads in this test")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("CUDNN_DOCTOR_CACHE_DIR", "off")
    return tmp_path / "cudnn-doctor" / "knowledge.json"


def _current():
    return dict(load_compat().derived())


def test_update_adds_a_release_newer_than_the_shipped_knowledge(cache):
    session = RecordedPyPI()
    doc = update_mod.run_update(_current(), session=session, seconds=30, today="2026-12-02")
    assert problems(doc) == [] and doc["date"] == "2026-12-02" and doc["generated_by"] == "cudnn-doctor update"
    new = [e for e in doc["cudnn_releases"] if e["release"] == "9.29.0"]
    assert new and set(new[0]["cuda_majors"]) == {"12", "13"}
    assert any("developer.download.nvidia.com" in e for e in doc["errors"])  # named, not fatal
    written = json.loads(cache.read_text())
    assert written == doc and read_updated(cache) is not None
    assert not list(cache.parent.glob(".knowledge-*"))  # no temporary file left behind
    data, _ = read_all()
    compat = Compat(data)
    assert compat.newest_cudnn_release() == "9.29.0" and compat.knowledge_date() == "2026-12-02"
    assert compat.knowledge_origin() == str(cache)
    assert all(url.startswith("https://") for url in session.asked)


def test_update_reads_nvidia_index_pages_and_manifests(cache):
    session = RecordedPyPI()
    session.nvidia = True
    current = _current()
    current["toolkit_driver"] = [r for r in current["toolkit_driver"] if r["cuda"] != "13.3.0"]
    doc = update_mod.run_update(current, session=session, seconds=30, today="2026-12-11",
                                known_toolkits=["13.1.0", "13.2.1"])
    new = [e for e in doc["cudnn_releases"] if e["release"] == "9.30.0"]
    assert new and new[0]["cuda_majors"] == {"12": "9.30.0.7", "13": "9.30.0.7"}
    assert "https://developer.download.nvidia.com/compute/cuda/redist/redistrib_13.3.0.json" in session.asked
    assert {"cuda": "13.3.0", "driver_linux": "610.43.02", "date": "2026-05-26"} in doc["toolkit_driver"]
    assert not [e for e in doc.get("errors", []) if "nvidia.com" in e]


def test_shipped_knowledge_is_kept_when_the_update_cannot_read_pypi(cache):
    with pytest.raises(update_mod.UpdateFailed, match="could not read PyPI"):
        update_mod.run_update(_current(), session=RecordedPyPI(down=True), seconds=5)
    assert not cache.exists()


def test_a_damaged_cache_falls_back_to_the_shipped_knowledge(cache):
    cache.parent.mkdir(parents=True)
    cache.write_text('{"date": "2099-01-01", "cudnn_releases": "nonsense"}')
    data, _ = read_all()
    assert Compat(data).knowledge_origin() == "shipped"


def test_update_command_prints_one_line_when_pypi_is_unreachable(cache, monkeypatch):
    from typer.testing import CliRunner

    from cudnn_doctor.cli import build_app

    monkeypatch.setattr(update_mod.requests, "Session", lambda: RecordedPyPI(down=True))
    result = CliRunner().invoke(build_app("update"), ["update", "--timeout", "5"])
    assert result.exit_code == 1
    err = (result.stderr if hasattr(result, "stderr") else result.output).strip()
    assert "could not read PyPI" in err and len(err.splitlines()) == 1 and "Traceback" not in result.output


def _compat_after_update(cache):
    update_mod.run_update(_current(), session=RecordedPyPI(), seconds=30, today="2026-12-02")
    data, _ = read_all()
    return Compat(data)


def test_check_names_a_cudnn_newer_than_the_knowledge_and_suggests_update(cache):
    facts = ff.make_facts()
    facts.cudnn = [ff.cudnn_copy(ff.PIP_CUDNN, "9.31.0", "13.0", origin="pip")]
    findings, _ = evaluate(facts, RuleContext(compat=load_compat()))
    (f,) = [f for f in findings if f.id == "CD004"]
    fix = f.fix if hasattr(f.fix, "doctor") else f.remedy  # the Fix value (its field name is the house's call)
    assert "9.31.0" in f.detail and fix.doctor == "cudnn-doctor update" and fix.commands == ["cudnn-doctor update"]
    # Once the knowledge knows a release at least that new, the finding goes away for it.
    facts.cudnn = [ff.cudnn_copy(ff.PIP_CUDNN, "9.29.0", "13.0", origin="pip")]
    findings, _ = evaluate(facts, RuleContext(compat=_compat_after_update(cache)))
    assert not [f for f in findings if f.id == "CD004"]


def test_check_names_a_driver_and_a_framework_newer_than_the_knowledge():
    facts = ff.make_facts()
    facts.driver = ff.driver("990.10.01", cuda="14.2")
    facts.python.frameworks = [ff.framework("torch", "3.1.0+cu142")]
    findings, _ = evaluate(facts, RuleContext(compat=load_compat()))
    (f,) = [f for f in findings if f.id == "CD004"]
    assert "990.10.01" in f.detail and "torch 3.1.0" in f.detail and "CUDA 14.2" in f.detail


def test_check_says_nothing_when_the_machine_is_within_the_knowledge():
    findings, _ = evaluate(ff.make_facts(), RuleContext(compat=load_compat()))
    assert not [f for f in findings if f.id == "CD004"]


def test_suggested_install_version_is_the_newest_known_release_for_the_cuda_major():
    compat = load_compat()
    assert compat.newest_cudnn_build("13") == compat.newest_cudnn_release(13)
    assert compat.newest_cudnn_build("12.4") == compat.newest_cudnn_release(12)


def test_update_against_the_real_pypi(cache):
    """The one test that talks to PyPI for real; skipped when it cannot be reached."""
    try:
        requests.get("https://pypi.org/pypi/nvidia-cudnn-cu12/json", timeout=5).raise_for_status()
    except requests.RequestException as exc:
        pytest.skip("PyPI is not reachable: %s" % exc)
    doc = update_mod.run_update(_current(), seconds=30)
    assert problems(doc) == [] and doc["cudnn_releases"] and cache.is_file()


def test_cd401_suggests_the_newest_release_the_knowledge_has_for_the_cuda_major():
    facts = ff.make_facts()
    facts.cudnn = []
    facts.python.frameworks = []
    compat = load_compat()
    findings, _ = evaluate(facts, RuleContext(compat=compat))
    (f,) = [f for f in findings if f.id == "CD401"]
    newest = compat.newest_cudnn_release(13)
    assert "install --version %s --cuda 13" % newest in str(f.fix) and newest != "9.23.2"
