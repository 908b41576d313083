"""Every real error text in compat/error_texts.toml, pasted into `explain` on a fake machine: the routing table
matches it, the parser reads its libraries and versions, and the answer names what they need, what the machine
has and one fix, without an empty heading or a catalogue letter (those only with -v)."""
from __future__ import annotations

import re

import pytest
from clirunner import CliRunner
from packaging.version import Version

from cudnn_doctor.explain import explain, extract_sonames, match_symptoms, parse_versions
from cudnn_doctor.knowledge import load_compat
from hermetic import shipped_compat
from kit import FakeMachine, have_gcc
from shellcheck_kit import ld_library_path_after

TEXTS = shipped_compat().error_texts()
HEADINGS = ("What the text says", "What that needs", "On this machine", "Fix")


def test_the_table_holds_at_least_25_real_texts_each_with_a_public_source():
    assert len(TEXTS) >= 25
    assert len({t.id for t in TEXTS}) == len(TEXTS)
    for t in TEXTS:
        assert re.match(r"https://github\.com/[\w.-]+/[\w.-]+/(issues|pull)/\d+$", t.source), t.id


@pytest.mark.parametrize("row", TEXTS, ids=[t.id for t in TEXTS])
def test_text_is_routed_and_read(row):
    assert row.symptom in [m.id for m in match_symptoms(row.text, load_compat())]
    assert extract_sonames(row.text) == row.sonames
    v = parse_versions(row.text)
    assert {k: getattr(v, k) for k in ("runtime", "compiled") if getattr(v, k)} == row.versions


@pytest.fixture(scope="module")
def box(tmp_path_factory):
    """Driver 580 (CUDA 13.0), a CUDA 12.4 toolkit at /usr/local/cuda holding cuDNN 9.1.0."""
    if not have_gcc():
        pytest.skip("gcc is needed to build the fake NVIDIA libraries")
    m = FakeMachine(tmp_path_factory.mktemp("pastes") / "root")
    m.driver()
    prefix = m.toolkit("12.4")
    m.cudnn("9.1.0", prefix + "/lib64", prefix + "/include", cuda=12040)
    m.ld_conf("cuda.conf", [prefix + "/lib64"])
    m.ld_cache()
    return m


def _app():
    from cudnn_doctor.cli import app
    return app


@pytest.mark.parametrize("row", TEXTS, ids=[t.id for t in TEXTS])
def test_text_is_answered_with_needs_machine_and_one_fix(row, box):
    report = explain(row.text, root=str(box.root))
    ex = report.explanation
    assert ex.checked and ex.needs and ex.has, (ex.needs, ex.has)
    assert ex.fix is not None and ex.fix.text and "compat knows" not in ex.fix.text
    out = CliRunner().invoke(_app(), ["explain", "--root", str(box.root), row.text]).stdout
    lines = out.splitlines()
    for i, line in enumerate(lines):  # every heading has at least one line under it
        if line in HEADINGS:
            assert i + 1 < len(lines) and lines[i + 1].startswith("  "), out
    assert "Fix" in lines and "What that needs" in lines and "On this machine" in lines, out
    assert not re.search(r"\b[A-K]\d\b", out), out  # catalogue letters only with -v
    assert "None of these checks found a problem" not in out
    for value in row.versions.values():  # the versions it read are repeated to the user
        assert value in out, out
    verbose = CliRunner().invoke(_app(), ["explain", "-v", "--root", str(box.root), row.text]).stdout
    assert "failure catalogue" in verbose and "Reported before: https://github.com/" in verbose


def test_loaded_8_1_compiled_8_6_repeats_the_versions_and_names_a_fitting_copy(box, tmp_path):
    """A cuDNN 8.9.7 the loader does not search satisfies a build with 8.6.0: the fix puts it on the path."""
    text = "Loaded runtime CuDNN library: 8.1.0 but source was compiled with: 8.6.0"
    m = FakeMachine(tmp_path / "root")
    m.driver()
    m.toolkit("12.4")
    m.cudnn("8.9.7", "/opt/cudnn8/lib", "/opt/cudnn8/include", cuda=12040)
    result = CliRunner().invoke(_app(), ["explain", "--root", str(m.root), text])
    out = result.stdout
    assert "built with cuDNN 8.6.0, loaded cuDNN 8.1.0" in out
    assert "needs cuDNN 8.6.0 or a newer cuDNN 8.x" in out and "an older minor version" in out
    fix = out.split("\nFix\n", 1)[1]
    assert "And here: cuDNN 8.9.7 is already installed at /opt/cudnn8/lib" in fix and "ldconfig" in fix
    assert result.exit_code == 1, out  # the text shows the failure; the machine adds where the fitting copy is


def test_loaded_8_1_compiled_8_6_without_a_fitting_copy_installs_one(box):
    out = CliRunner().invoke(_app(), ["explain", "--root", str(box.root), "Loaded runtime CuDNN library: 8.1.0 but "
                                      "source was compiled with: 8.6.0"])
    assert out.exit_code == 1
    fix = out.stdout.split("\nFix\n", 1)[1]
    # NVIDIA never built cuDNN 8.6.0 for CUDA 12 (its CUDA 12 builds start at 8.8): the release named is a cuDNN 8
    # build for this machine's CUDA 12 that is not older than 8.6.0.
    named = re.search(r"install --version (\S+) --cuda (\d+)", fix)
    assert named and named.group(2) == "12" and "--version 8.6.0" not in fix, fix
    assert Version(named.group(1)) >= Version("8.6.0") and named.group(1).startswith("8.")
    assert load_compat().cudnn_build_exists(named.group(1), "12") is True


def test_pasted_names_are_resolved_by_the_loader_probe_within_the_run(box, monkeypatch):
    """explain hands the names to diagnose; it never builds a loader view of its own."""
    import cudnn_doctor.diagnose as diagnose_mod

    seen = {}
    real = diagnose_mod.diagnose

    def spy(*args, **kw):
        seen.update(kw)
        return real(*args, **kw)

    monkeypatch.setattr(diagnose_mod, "diagnose", spy)
    report = explain("OSError: libcudart.so.11.0: cannot open shared object file", root=str(box.root))
    assert seen["sonames"] == ["libcudart.so.11.0"]
    assert "libcudart.so.11.0" in report.facts.loader.resolved
    [lib] = report.explanation.libraries
    assert lib.problem and "CUDA 12.4" in lib.message


def test_a_list_of_alternatives_is_missing_only_when_none_resolves(box):
    """ctranslate2 tries libcudnn_ops.so.9.1.0, .9.1, .9, .so in turn: the .so.9 here is enough."""
    report = explain("Unable to load any of {libcudnn_ops.so.9.1.0, libcudnn_ops.so.9.1, libcudnn_ops.so.9, "
                     "libcudnn_ops.so}", root=str(box.root))
    ex = report.explanation
    assert ex.problem  # the text shows the failing program found none of them
    assert not any(lib.problem for lib in ex.libraries)  # here one resolves: the program runs elsewhere
    assert "libcudnn_ops.so.9, of the same list, resolves" in ex.libraries[0].message


def test_missing_unversioned_libcuda_link_is_made_next_to_the_driver(box):
    report = explain("Could not load library libcudnn_cnn_infer.so.8. Error: libcuda.so: cannot open shared object "
                     "file: No such file or directory", root=str(box.root))
    ex = report.explanation
    assert "sudo ln -sf libcuda.so.1 libcuda.so" in ex.fix.commands  # from the text alone
    [(label, fix)] = ex.also  # and this machine's own link, where its driver is
    root = str(box.root)  # under --root the link is made in the root, and the root's cache rebuilt
    assert label == "and here" and fix.commands == ["cd %s/usr/lib/x86_64-linux-gnu" % root, "sudo ln -sf libcuda.so.1 libcuda.so",
                            "sudo ldconfig -r %s" % root]


def test_an_older_copy_first_on_ld_library_path_is_taken_off_it(tmp_path):
    m = FakeMachine(tmp_path / "root")
    m.driver()
    m.toolkit("12.4")
    m.cudnn("8.3.3", "/opt/old/lib", "/opt/old/include", cuda=12040)
    m.cudnn("8.9.7", "/opt/new/lib", "/opt/new/include", cuda=12040)
    m.ld_conf("new.conf", ["/opt/new/lib"])
    m.ld_cache()
    report = explain("RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 5, 0) but "
                     "found runtime version (8, 3, 3).", root=str(m.root),
                     env={"LD_LIBRARY_PATH": "/opt/old/lib", "PATH": "/usr/bin"})
    ex = report.explanation
    assert "PyTorch was built with cuDNN 8.5.0 and loaded cuDNN 8.3.3" in ex.answer.cause
    [(label, fix)] = ex.also  # this machine adds why: its LD_LIBRARY_PATH puts the old copy first
    assert "older cuDNN in /opt/old/lib first" in fix.text and len(fix.commands) == 1
    assert ld_library_path_after(fix.commands, ["/opt/old/lib", "/opt/kept"]) == ["/opt/kept"]


def test_a_windows_dll_is_named_as_one_and_its_fix_is_path(box):
    ex = explain("Could not load dynamic library 'cudnn64_8.dll'; dlerror: cudnn64_8.dll not found",
                 root=str(box.root)).explanation
    assert any("Windows library" in line for line in ex.needs)
    assert "on PATH" in ex.fix.text and "Get-Command cudnn64_8.dll -All" in ex.fix.text
    assert ex.evidence.platform == "windows" and ex.evidence.libraries[0].label == "cuDNN 8"
