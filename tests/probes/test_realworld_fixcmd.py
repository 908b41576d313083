"""`cudnn-doctor fix` itself on failing real-world draws (tests/realworld_fixcmd.py, issue 45): run as a program in a
copy of the environment, it heals every framework as the oracle judges it in a new shell, --undo puts every file
back (hashes) and the failure returns, --dry-run changes nothing. Draws that failed before: a quoted range taken for a
redirection (101-0), undo's uninstall taking the CUDA runtime's nvidia/__init__.py (101-2), TensorFlow's [and-cuda]
pins (202-0), a newer cuDNN in the site whose sub-libraries an LD_LIBRARY_PATH copy then shadowed (515-5: the error
the first round brings is taken on in a second, and one --undo takes both back), a cuDNN --target folder on
PYTHONPATH (515-14: `PYTHONPATH= pip install`, pip run with its own variables, and undo's pip on the site alone), a
framework in the user site a --system-site-packages venv sees (515-3: `pip install --user` by that site's owner),
Paddle's unversioned libcudnn.so link (515-18: `ln -sf` made through the journal), JAX's CUDA 12 plugin beside torch
for CUDA 13 (112930-17: moved to its release's CUDA 13 build, which undo puts back from the wheel cache), a venv used
from PATH whose variables reach no activate script (20261205-10: the user follows fix's words, `--rc ~/.bashrc`),
CuPy, Paddle and ONNX Runtime for CUDA 11 that cannot share one environment (20261203-20: fix makes one per
framework, their pip resolving from PyPI, and undo removes them), a --user install over a user site's cuDNN 8 wheel
(20261205-42: its files and pip's own records put back from the journal, not reinstalled by name), and draws whose cuDNN
sits in a system folder of the case's ld.so.cache (1202022-15, -23: fix run in a mount namespace of its own with the
case's /etc, skipped where unshare is refused). The whole sample: `python tests/realworld_run.py --draws 30 --seed S --fix-command`."""
from __future__ import annotations

import os
import shutil

import pytest

from realworld_draw import draw
from realworld_fixcmd import prove
from realworld_run import WORK, judge_all
from realworld_stacks import build, missing_wheels

pytestmark = [pytest.mark.realworld, pytest.mark.live]


# Every failing draw fix was tried on (seed, n); the other half is test_realworld_fixcmd_b.py, so that the full run's
# `--dist loadfile` spreads them over the workers.
DRAWS = [(101, 0), (101, 2), (202, 0), (515, 5), (515, 14), (515, 3), (515, 18), (291129, 20), (291129, 16), (291129, 39), (291129, 43), (291129, 47), (291129, 66), (112930, 17), (20261129, 9), (20261129, 32), (20261130, 1), (20261130, 36), (20261203, 17), (20261205, 10), (20261203, 20), (20261205, 42),
         (1202022, 15), (1202022, 23)]


@pytest.mark.parametrize("seed, n", DRAWS[0::2], ids=lambda v: str(v))
def test_fix_heals_a_failing_draw_and_undo_puts_it_back_exactly(seed, n):
    heals_and_undoes(seed, n)


def heals_and_undoes(seed: int, n: int) -> None:
    if shutil.which("readelf") is None or shutil.which("gcc") is None:
        pytest.skip("readelf and gcc are needed")
    case = draw(seed, n)
    missing = missing_wheels(case)
    if missing:
        pytest.skip("wheels not available here: %s" % missing)
    work = WORK / ("pytest-%d" % os.getpid())
    try:
        stack = build(case, work / case.name)
        failing, _ = judge_all(stack)
        assert not all(seen.works for _, seen, _ in failing), "the draw no longer fails: pick another"
        run = prove(stack, work / (case.name + "-fix"), judge_all, failing)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if run.skipped:
        pytest.skip(run.skipped)
    again = "python tests/realworld_run.py --only %d --seed %d --fix-command" % (n, seed)
    assert (run.dry_exact, run.healed, run.undo_exact, run.records_exact, run.back) == (True,) * 5, "%s\n%s" % (
        "\n".join(run.why), again)
    # exit 0 only when the errors it took on are gone: a healed draw whose fix says otherwise misleads a script
    assert run.codes.get("fix") == 0, "healed, but fix exited %s\n%s" % (run.codes.get("fix"), again)
