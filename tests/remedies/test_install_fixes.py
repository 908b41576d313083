"""The installer's fixes: Refusal takes a Fix from remedies/install*.py, and its one line reads as it always has."""
from __future__ import annotations

import inspect
import signal

import pytest

from cudnn_doctor.install.errors import Refusal, interruption, unexpected_failure
from cudnn_doctor.install.signals import Interrupted
from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.model import Fix
from cudnn_doctor.remedies import install, install_archive

# The fixes these tests build themselves are written for Target() (the live root, a user, sh).
pytestmark = pytest.mark.usefixtures("fix_target")

BUILDERS = [f for module in (install, install_archive) for name, f in inspect.getmembers(module, inspect.isfunction)
            if name.endswith("_fix") and f.__module__ == module.__name__]


def test_a_refusal_says_its_fix_text_after_what_and_why():
    refusal = Refusal("--version needs --cuda", "NVIDIA builds each cuDNN release per CUDA major",
                      install.add_cuda_major_fix(), code=2)
    assert str(refusal) == ("--version needs --cuda; NVIDIA builds each cuDNN release per CUDA major; "
                            "fix: add --cuda 12 (or the major of your toolkit)")
    assert isinstance(refusal.fix, Fix) and refusal.code == 2
    assert str(Refusal("nothing to roll back", "no record")) == "nothing to roll back; no record"


def test_a_refusal_takes_no_fix_written_as_text():
    with pytest.raises(TypeError):
        Refusal("what", "why", "check the path")  # type: ignore[arg-type]


@pytest.mark.parametrize("builder", BUILDERS, ids=lambda f: f.__name__)
def test_every_install_builder_returns_a_fix_with_a_line(builder):
    # A flag gets True, the knowledge the knowledge; every other parameter is a path, a version or a command, and a
    # string stands for any of them.
    fix = builder(*[True if p.annotation in (bool, "bool") else load_compat() if p.annotation == "Compat" else
                    "/opt/my cuda" for p in inspect.signature(builder).parameters.values()])
    assert isinstance(fix, Fix) and fix.text and not fix.text.startswith("fix:"), builder.__name__


def test_builders_put_the_values_they_are_given_into_the_line():
    assert install.cuda_build_fix(load_compat(), "11", "8.9.7").text == \
        "install the cuDNN build for CUDA 11 (e.g. --version 8.9.7 --cuda 11), or pass --force"
    rollback = "cudnn-doctor rollback --cuda-home /usr/local/cuda-12.4"
    assert install.finish_undo_fix(rollback).text == \
        "fix the cause, then run `%s` (it finishes undoing; each step can be repeated)" % rollback
    assert install_archive.only_cuda_major_fix("12").text == "pass --cuda 12, or pick another cuDNN release"
    assert install_archive.archive_path_fix(True).text == "check the path"
    assert install_archive.archive_path_fix(False).text == "pass the archive file itself"
    assert install.ldconfig_by_hand_fix().commands == ["sudo ldconfig"] and install.ldconfig_by_hand_fix().root


@pytest.mark.parametrize("command, installed, line", [
    ("rollback", False, "interrupted by SIGTERM; the rollback stopped part-way; fix: run the same rollback again, "
                        "which finishes it (each step can be repeated)"),
    ("install", True, "interrupted by SIGTERM; the install had finished and stands; only the checks after it were "
                      "cut short; fix: run `cudnn-doctor check` (or `cudnn-doctor rollback` to undo it)"),
    ("install", False, "interrupted by SIGTERM; the install was undone and its staged files removed: nothing was "
                       "changed"),
])
def test_an_interrupted_run_says_the_state_it_left_and_the_shells_code(command, installed, line):
    signalled = Interrupted(signal.SIGTERM)
    signalled.installed = installed
    refusal = interruption(signalled, command)
    assert (str(refusal), refusal.code) == (line, 143)


def test_an_unclassified_os_error_says_how_far_the_run_got():
    exc = OSError(5, "Input/output error")
    assert str(unexpected_failure("install", exc)) == (
        "install failed: [Errno 5] Input/output error; it is not known how far it got; fix: run `cudnn-doctor "
        "rollback` for this target, which undoes an unfinished install (or the last one)")
    assert str(unexpected_failure("rollback", exc)) == (
        "rollback failed: [Errno 5] Input/output error; it stopped part-way; fix: fix the cause and run the same "
        "rollback again, which resumes where this one stopped (each step can be repeated safely)")


@pytest.mark.parametrize("cuda,version", [("13", "9.5.1"), ("13", "9.1.0"), ("13", "9.11.0"), ("12", "9.28.1"),
                                          ("11", "9.17.0"), ("12", "8.9.7")])
def test_the_build_a_refusal_names_exists(cuda, version):
    """Installing a CUDA 12 cuDNN into a CUDA 13 toolkit is refused with a release NVIDIA built for CUDA 13 (those
    start at 9.12.0), never the archive's own release where it has no such build."""
    compat = load_compat()
    text = install.cuda_build_fix(compat, cuda, version).text
    named = text.split("--version ")[1].split()[0]
    assert compat.cudnn_build_exists(named, cuda) is True, text
    assert named.split(".")[0] == version.split(".")[0]
    assert (named == version) is (compat.cudnn_build_exists(version, cuda) is True), text
