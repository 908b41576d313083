"""Shared fixtures: a fake machine per test, a hermetic environment, and a guard against probing the real one."""
from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import hermetic  # noqa: E402

# Before any test module is imported (and before the package is): the package's cache folder is this session's own,
# so a developer's `cudnn-doctor update` copy (~/.cache/cudnn-doctor/knowledge.json) is never read (tests/hermetic.py).
hermetic.redirect()

import engines  # noqa: E402
import realdata  # noqa: E402
import realroot  # noqa: E402
import realworld_wheels  # noqa: E402
import time_report  # noqa: E402
import theano_sdist  # noqa: E402
import zipapp_build  # noqa: E402
from kit import FakeMachine, have_gcc  # noqa: E402

# The quick tier downloads nothing: a test not marked slow that asks for a real wheel, Debian package, sdist, tool or
# zipapp fails, naming itself (wrapped before any test module imports them by name).
hermetic.fetches_only_when_slow(realdata, "download_wheel", "real_wheel", "win_files")
hermetic.fetches_only_when_slow(realworld_wheels, "tree")
hermetic.fetches_only_when_slow(realroot, "base_root", "debs", "nonfree_deb")
hermetic.fetches_only_when_slow(theano_sdist, "sdist_file", "sdist_tree", "installed_tree")
hermetic.fetches_only_when_slow(engines, "apt_tool", "tool_venv")
hermetic.fetches_only_when_slow(zipapp_build, "built_zipapp")

from cudnn_doctor.model import CUDA_ENVIRONMENT  # noqa: E402

# Variables that steer probes; a developer's or CI runner's own values must not leak into fake machines.
_STEERING_ENV = ("LD_LIBRARY_PATH", "LD_PRELOAD", "CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR",
                 "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "VIRTUAL_ENV", "CONDA_PREFIX", "GITHUB_ACTIONS",
                 "GITHUB_STEP_SUMMARY", "NO_COLOR", "FORCE_COLOR", "container",
                 "THEANO_FLAGS", "THEANORC", "KERAS_BACKEND",  # Theano's configuration (probes/theano.py)
                 "PYTHONUSERBASE",  # the user site the probes look for (probes/python_places.py)
                 *CUDA_ENVIRONMENT)  # what facts.environment records


from kit import FIXED_DOCTOR  # noqa: E402  (the start form every test's fixes are built for)


@pytest.fixture(scope="session")
def _test_cache_home() -> Path:
    return hermetic.cache_home()


@pytest.fixture(autouse=True)
def hermetic_env(monkeypatch, request, _test_cache_home):
    for name in _STEERING_ENV:
        monkeypatch.delenv(name, raising=False)
    # Set again per test (hermetic.redirect set it at import): a test that points XDG_CACHE_HOME elsewhere with
    # monkeypatch, or by hand, leaves the next test the suite's own empty cache folder.
    monkeypatch.setenv("XDG_CACHE_HOME", str(_test_cache_home))
    # The probes read HOME for the inspected machine's home folder (Maven, Gradle and JavaCPP caches, the user site,
    # ~/.theanorc): a fake machine is read as CI's root user reads it (what the goldens were recorded with), never
    # with the home of whoever runs the suite.
    monkeypatch.setenv("HOME", "/root")
    monkeypatch.setenv("COLUMNS", "120")
    # The installer's after-install check and ld.so.conf reading look here instead of at the real machine.
    monkeypatch.setenv("CUDNN_DOCTOR_TEST_MACHINE_ROOT", "/nonexistent/cudnn-doctor-test-machine")
    # How this cudnn-doctor is started depends on how pytest was: every test sees one fixed console script that a
    # plain `cudnn-doctor` also starts, so fixes (and the golden files) read the same everywhere.
    from cudnn_doctor import host as host_seam

    monkeypatch.setattr(host_seam.Host, "doctor_start", staticmethod(lambda: (FIXED_DOCTOR, True)))
    monkeypatch.delenv("SUDO_UID", raising=False)  # a suite run through sudo builds fixes as root does
    if request.node.get_closest_marker("gpu") or request.node.get_closest_marker("live"):
        return
    # No unmarked test may probe the real machine: the Host for "/" refuses to be built.
    from cudnn_doctor import host as host_mod

    original = host_mod.Host.__init__

    def guarded(self, root="/", *args, **kwargs):
        if os.path.abspath(root) == "/":
            raise RuntimeError("test tried to probe the real machine; use a FakeMachine root or mark it 'live'")
        original(self, root, *args, **kwargs)

    monkeypatch.setattr(host_mod.Host, "__init__", guarded)


@pytest.fixture
def fix_target():
    """Fixes built in the test are written for Target() (the live root, a user, sh): a builder called outside
    remedies.acting.building_for refuses to guess, so a test that calls builders itself names the Target here."""
    from cudnn_doctor.model import Target
    from cudnn_doctor.remedies.acting import building_for

    with building_for(Target()) as target:
        yield target


@pytest.fixture
def machine(tmp_path) -> FakeMachine:
    if not have_gcc():
        pytest.skip("gcc is needed to build the fake NVIDIA libraries")
    return FakeMachine(tmp_path / "root")


@pytest.fixture
def check_json():
    """Run `check --json --root` in-process and return (exit code, parsed document)."""
    from clirunner import CliRunner

    from cudnn_doctor.cli import app

    def run(m: FakeMachine, *args: str, env=None):
        result = CliRunner().invoke(app, ["check", "--json", "--root", str(m.root), *args], env=env)
        assert result.exception is None or isinstance(result.exception, SystemExit), result.output
        doc = json.loads(result.stdout)
        # A rule that raised is reported as a finding, not a crash; in tests it is always a bug.
        crashed = [f["title"] for f in doc["findings"] if "could not run" in f["title"]]
        assert not crashed, crashed
        return result.exit_code, doc

    return run


def pytest_configure(config):
    config.addinivalue_line("markers", "live: reads the real machine read-only (the installed command end to end)")
    hermetic.install(config)  # the guard: no test reads knowledge from outside compat/, tests/ or its tmp folders
    if not hasattr(config, "workerinput"):
        # One seed for the drawn real-world sample (tests/probes/test_realworld_draws.py), chosen here and inherited by
        # every xdist worker: each worker collects the same draws (pytest-xdist refuses differing collections).
        os.environ.setdefault("REALWORLD_SEED", str(random.SystemRandom().randrange(10 ** 6)))


def pytest_unconfigure(config):
    hermetic.uninstall()


def pytest_runtest_logreport(report):
    if time_report.ENABLED:
        time_report.record(report)


def pytest_terminal_summary(terminalreporter):
    if time_report.ENABLED:
        time_report.summary(terminalreporter)


# The quick tier (`python -m pytest -m "not slow"`, README) leaves these out: what fetches or unpacks real NVIDIA
# wheels, builds images, zipapps, wheels or other interpreters' venvs, runs Wine, deployment tools or every shell's
# completion, or draws hundreds of random machines (timed per test on 2 cores); the full run (CI) keeps them all.
_SLOW_MARKERS = ("realdata", "realworld", "gpu", "live")
_SLOW_FILES = (
    "deploy/", "fuzz/", "image/", "commands/test_completions.py",
    "install/test_install_random_kills.py", "install/test_install_signals.py", "install/test_install_realdata.py",
    "project/test_dist.py", "project/test_zipapp.py", "project/test_layers.py", "project/test_docs.py",
    "theano/test_theano_sdist.py", "windows/test_windows_wine.py", "smoke/test_smoke_realwheel.py",
    "probes/test_loader_glibc.py",  # Debian's packages (apt-get download) and a real cuDNN wheel, in chroots
    # Every fix of every rule on hundreds of built machines, run in real shells or checked path by path: minutes.
    "remedies/test_fixes_run_as_printed.py", "remedies/test_fixes_stay_inside_the_root.py",
    # Pastes of megabytes, hostile and cut (13 s of CPU together); every fix builder and TOML row walked (35-40 s of
    # CPU, paid by whichever of the module's tests runs first).
    "explain/test_explain_linear_time.py", "remedies/test_fixes_are_data.py",
)
# Single generators that take 10 s or more each on 2 cores (every GPU, every release, 20,000 reports), and tests of
# 4 s or more (hypothesis-drawn picks, hangs cut off by a timeout, two installs racing, every command twice under
# ASCII): the full tier runs them.
_SLOW_TESTS = (
    "pick/test_pick_generated.py::test_each_pick_runs_everywhere_and_nothing_newer_would",
    "pick/test_pick_generated.py::test_a_driver_upgrade_named_where_nothing_fits_makes_a_build_fit",
    "bench/test_bench_fake.py::test_a_hang_is_cut_off_and_named_by_its_stage",
    "install/test_install_transaction.py::test_second_concurrent_install_fails_fast_and_the_first_completes",
    "install/test_install_transaction.py::test_second_install_with_lock_wait_runs_after_the_first",
    "commands/test_hostile_cli.py::test_every_command_reads_on_an_ascii_stream",
    "commands/test_hostile_cli.py::test_bench_tables_on_an_ascii_stream",
    "remedies/test_fixes_name_what_exists.py::test_no_fix_names_a_build_that_does_not_exist",
    "pick/test_pick_generated.py::test_cudnn_pick_passes_the_pair_verdict_on_every_gpu",
    "fleet/test_fleet_hostile.py::test_twenty_thousand_reports_with_one_poisoned_file",
    "knowledge/test_knowledge_one_answer.py::test_matrix_rules_install_and_explain_agree",
    "rules/test_rules_on_built_facts.py::test_catalogue_coverage",
    "rules/test_rules_on_built_facts.py::test_every_error_and_warning_has_a_fix",
    # the whole golden module again, with a user's `cudnn-doctor update` copy in $HOME/.cache (over a minute)
    "project/test_tests_are_hermetic.py::test_the_golden_tests_pass_with_a_users_update_in_the_home_cache",
    # Measured in CPU seconds per test (process and children) on a fresh clone, 2026-11-29, to keep the quick tier under
    # 3 minutes on 2 idle cores: each of 29 error texts answered on its own fake machine (29 s), eight kill points of
    # an install (10 s), the corpus graded (6 s), the command started in every form, terminal, width and bad root
    # (5-7 s each), every release's wheel planned, a session of its own.
    "commands/test_explain_pastes.py::test_text_is_answered_with_needs_machine_and_one_fix",
    "install/test_install_transaction.py::test_killed_install_is_undone_by_the_next_rollback",
    "explain/test_corpus.py::test_tally_is_at_least_the_recorded_floor",
    "commands/test_output_conventions.py::test_python_dash_m_is_the_command",
    "commands/test_output_conventions.py::test_colour_only_where_it_belongs",
    "commands/test_terminal_never_cuts_a_command.py::test_every_command_and_url_is_whole_on_one_line_at_60_columns",
    "commands/test_hostile_cli.py::test_root_and_cuda_home_say_what_they_are_instead",
    "install/test_install_pypi_wheels.py::test_the_wheel_index_plans_the_same_file_for_every_release",
    "probes/test_probe_budget.py::test_any_mix_of_odd_libraries_never_reaches_the_child",
    "project/test_tests_are_hermetic.py::test_a_test_that_reads_a_users_knowledge_fails_naming_it_and_the_path",
    # and, for a margin under the 3 minutes: FIFOs where files belong and bad timeouts, each on every command (4 s
    # each), bench's JSON validated, bench's script run without a GPU (a second of CPU, 5 s of waiting)
    "probes/test_deadline.py::test_fifo_where_a_file_belongs_is_reported_not_read",
    "commands/test_hostile_cli.py::test_timeout_must_be_finite_and_positive",
    "commands/test_schemas.py::test_bench_json_validates",
    "bench/test_smoke_bench_script.py::test_bench_prints_every_row_even_without_gpu_or_torch",
    # 2026-11-30, CI's quick tier at 203 s: real venvs made by uv (10 s), the real PyPI asked (network), a separate
    # environment's line run in real shells (6 s), every scenario's fix run (12 s), every health fault and its twin
    # (5 s), hangs waited out (3 s each)
    "probes/test_uv_venv.py::test_a_venv_uv_made_without_pip_gets_uv_pip_and_one_with_pip_gets_pip",
    "knowledge/test_knowledge_update.py::test_update_against_the_real_pypi",
    "rules/test_whole_environment_fix.py::"
    "test_a_separate_environment_line_runs_as_printed_and_its_variable_stays_in_that_environment",
    "remedies/test_fixes_runnable.py::test_fixes_on_scenario_machines_are_runnable",
    "node/test_gpu_health.py::test_each_health_fault_fires_and_its_healthy_twin_does_not",
    "smoke/test_smoke.py::test_hang_is_cut_off_by_the_timeout",
    "bench/test_bench_fake.py::test_a_wrong_backward_data_is_an_error_finding_and_exit_1",
    "bench/test_bench_fake.py::test_a_fast_wrong_engine_of_the_backend_api_is_caught",
    # and every catalogued failure built and checked (8.5 s), for the margin the fourth explain sample's tests took
    "commands/test_check_on_fake_machines.py::test_failure_is_diagnosed_with_its_fix",
)


# The full run (README) gives each worker a test file at a time (`--dist loadfile`): a file's daemons, Wine prefix,
# built venvs or walked builders are set up once, on one worker. Not `--dist loadgroup`: with pytest 9.2 xdist 3.8's
# groups are not applied (it renames items through `_nodeid`, which pytest no longer reads), so every test went to
# any worker and two workers shared one Wine prefix (round 18's CI run). The long real-world files are split instead
# (tests/probes/test_realworld_b.py, _regressions_a/b/c.py, _fixcmd_b.py), so that the workers finish together.


def _mark_slow(items) -> None:
    tests = Path(__file__).parent
    for item in items:
        where = Path(str(item.fspath)).resolve().relative_to(tests).as_posix()
        test = "%s::%s" % (where, item.originalname)
        if where.startswith(_SLOW_FILES) or test in _SLOW_TESTS or any(
                item.get_closest_marker(m) for m in _SLOW_MARKERS):
            item.add_marker(pytest.mark.slow)


# On native Windows (the GitHub Actions Windows job) only these modules run: the others build ELF libraries with
# gcc, use ldconfig, dlopen and POSIX file modes, none of which exist there.
WINDOWS_MODULES = frozenset({"test_windows.py", "test_compat_data.py"})


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config, items):
    _mark_slow(items)
    if sys.platform != "win32":
        return
    skip = pytest.mark.skip(reason="needs POSIX tools (gcc-built ELF libraries, ldconfig, dlopen, file modes)")
    for item in items:
        if Path(str(item.fspath)).name not in WINDOWS_MODULES:
            item.add_marker(skip)
