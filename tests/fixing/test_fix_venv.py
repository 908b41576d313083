"""`cudnn-doctor fix` on a real virtual environment (python -m venv; wheels built here; pip resolving offline from a
--find-links folder): torch pins cuDNN 8.9.2.26 while the 9.3 wheel is installed (CD702, CD704). fix --yes heals it
as a new shell of the venv sees it, fix --undo puts back every RECORD and bin/activate byte for byte, --dry-run and
a missing terminal change nothing, and a fix killed at any step leaves files old or new and --undo finishes."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fix_factory import cudnn_wheel, make_venv, offline_pip_env, open_to_others, pip, state_hashes, torch_wheel

pytestmark = pytest.mark.slow  # builds a venv and runs pip and check a dozen times: about a minute on 2 cores

IDS = ("CD702", "CD704")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A pristine venv with the broken pair installed, copied for each test (a venv is not relocatable, so each
    copy lives at the same path: the tests of this module use it one after another)."""
    base = tmp_path_factory.mktemp("fixvenv")
    open_to_others(base)
    links = base / "wheels"
    torch_wheel(links)
    cudnn_wheel(links, "9.3.0.75")
    cudnn_wheel(links, "8.9.2.26")
    venv = make_venv(base / "pristine")
    pip(venv, "install", "--no-deps", "torch==2.3.1", "nvidia-cudnn-cu12==9.3.0.75", links=links)
    return base, links


@pytest.fixture
def venv(built):
    base, links = built
    where = base / "venv"
    if where.exists():
        shutil.rmtree(where)
    shutil.copytree(base / "pristine", where, symlinks=True)
    # the copy's scripts name the pristine path: point them (and pyvenv.cfg) at the copy, as venv would have
    for f in list((where / "bin").iterdir()) + [where / "pyvenv.cfg"]:
        if f.is_file() and not f.is_symlink():
            data = f.read_bytes()
            if str(base / "pristine").encode() in data:
                f.write_bytes(data.replace(str(base / "pristine").encode(), str(where).encode()))
    return where, links


def doctor(venv: Path, links: Path, *args: str, extra_env=None, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, **offline_pip_env(links), **(extra_env or {})}
    env.pop("VIRTUAL_ENV", None)
    env = {k: v for k, v in env.items() if v is not None}  # extra_env's None: leave that variable out
    words = [sys.executable, "-m", "cudnn_doctor", *args, "--env", "VIRTUAL_ENV=%s" % venv,
             "--env", "PATH=%s/bin:/usr/bin:/bin" % venv]
    return subprocess.run(words, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=timeout)


def errors_in_a_new_shell(venv: Path) -> set:
    """check --json run from a new bash that sourced the venv's activate: what a user's next shell sees."""
    script = ". %s/bin/activate && %s -m cudnn_doctor check --json" % (venv, sys.executable)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "LD_LIBRARY_PATH")}
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=120).stdout
    return {f["id"] for f in json.loads(out)["findings"] if f["severity"] == "error"}


def test_fix_heals_the_venv_and_undo_puts_every_record_and_the_activate_script_back(venv):
    venv, links = venv
    before = state_hashes(venv)
    assert set(IDS) <= errors_in_a_new_shell(venv)
    done = doctor(venv, links, "fix", *IDS, "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pip install nvidia-cudnn-cu12==8.9.2.26" in done.stdout
    assert "nvidia-cudnn-cu12 9.3.0.75 -> 8.9.2.26" in done.stdout  # pip's own dry run says what changes
    assert "CD702" in done.stdout and "-> gone" in done.stdout
    assert not set(IDS) & errors_in_a_new_shell(venv)  # the real judge: a new shell of the venv
    assert state_hashes(venv) != before
    assert "# >>> cudnn-doctor >>>" in (venv / "bin" / "activate").read_text()
    asked = doctor(venv, links, "fix", "--undo")  # no terminal: it says what it would take back, and changes nothing
    assert asked.returncode == 2 and "nvidia-cudnn-cu12 8.9.2.26 -> 9.3.0.75" in asked.stdout, asked.stdout
    fixed = state_hashes(venv)
    # --undo --dry-run: the same preview, exit 0, nothing changed (a new user's trial: it asked for a terminal)
    preview = doctor(venv, links, "fix", "--undo", "--dry-run")
    assert preview.returncode == 0 and "nvidia-cudnn-cu12 8.9.2.26 -> 9.3.0.75" in preview.stdout, preview.stdout
    assert "dry run: nothing was changed" in preview.stdout and state_hashes(venv) == fixed
    assert "python -m pip install nvidia-cudnn-cu12==8.9.2.26" in asked.stdout and "bin/activate" in asked.stdout
    # with no wheel to be had (an offline node): the release fix replaced comes back from the journal's own copy
    nothing = links.parent / "no-wheels"
    nothing.mkdir(exist_ok=True)
    undone = doctor(venv, nothing, "fix", "--undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert "put back nvidia-cudnn-cu12==9.3.0.75 from the journal" in undone.stdout, undone.stdout
    assert state_hashes(venv) == before
    assert not (venv / ".cudnn-doctor").exists()
    assert set(IDS) <= errors_in_a_new_shell(venv)  # the failure is back


def test_dry_run_and_no_terminal_without_yes_change_nothing(venv):
    venv, links = venv
    before = state_hashes(venv)
    dry = doctor(venv, links, "fix", "--dry-run")
    assert dry.returncode == 0 and "dry run: nothing was changed" in dry.stdout
    asked = doctor(venv, links, "fix", *IDS)
    assert asked.returncode == 2 and "pass --yes" in asked.stdout
    assert state_hashes(venv) == before and not (venv / ".cudnn-doctor").exists()


def test_a_typo_an_absent_finding_and_a_missing_environment_are_each_said_plainly(venv, tmp_path):
    """A new user's trial: `fix CD999` and `fix foo` read like a check that found nothing, and --env VIRTUAL_ENV= a
    folder that does not exist was taken silently."""
    venv, links = venv
    typo = doctor(venv, links, "fix", "CD999", "--dry-run")
    assert typo.returncode == 2 and "no check is called CD999" in typo.stderr, typo.stderr
    absent = doctor(venv, links, "fix", "CD226", "--dry-run")  # a real check that reports nothing here
    assert absent.returncode == 2 and "check reports no CD226 here" in absent.stderr, absent.stderr
    gone = subprocess.run([sys.executable, "-m", "cudnn_doctor", "fix", "--dry-run", "--env",
                           "VIRTUAL_ENV=%s" % (tmp_path / "nowhere")], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120)
    assert gone.returncode == 2 and "no such folder" in gone.stderr and "Traceback" not in gone.stderr


def test_json_is_one_envelope_of_its_schema_and_never_asks(venv):
    import jsonschema

    venv, links = venv
    schema = json.loads((Path(__file__).resolve().parents[2] / "schema" / "fix-v1.json").read_text())
    dry = doctor(venv, links, "fix", *IDS, "--dry-run", "--json")
    doc = json.loads(dry.stdout)
    jsonschema.validate(doc, schema)
    assert dry.returncode == doc["exit_code"] == 0 and doc["dry_run"] and doc["taken"] == list(IDS)
    assert [s["kind"] for s in doc["plan"]] == ["packages", "variables"]
    asked = json.loads(doctor(venv, links, "fix", *IDS, "--json").stdout)
    jsonschema.validate(asked, schema)
    assert asked["exit_code"] == 2 and "pass --yes" in asked["problem"] and not asked["ran"]


def test_shell_prints_the_line_to_eval(venv):
    venv, links = venv
    out = doctor(venv, links, "fix", "CD704", "--shell")
    assert out.returncode == 0 and out.stdout.startswith("export LD_LIBRARY_PATH=%s" % venv)


def test_pip_without_its_index_is_said_before_anything_changes(venv):
    venv, links = venv
    before = state_hashes(venv)
    empty = links.parent / "no-wheels"
    empty.mkdir(exist_ok=True)
    out = doctor(venv, empty, "fix", *IDS, "--yes")
    assert out.returncode == 1 and "pip cannot resolve it" in out.stdout and "nothing was changed" in out.stdout
    unreachable = {"PIP_NO_INDEX": None, "PIP_FIND_LINKS": None, "PIP_CONFIG_FILE": os.devnull,
                   "PIP_INDEX_URL": "http://127.0.0.1:9/simple"}  # the discard port: nothing listens
    out = doctor(venv, links, "fix", *IDS, "--yes", extra_env=unreachable)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "pip cannot reach its package index (Failed to establish a new connection" in out.stdout
    assert state_hashes(venv) == before and not (venv / ".cudnn-doctor").exists()


@pytest.mark.parametrize("point", ["fix-after-journal", "fix-after-step-1", "after-backup-1", "after-place-1"])
def test_a_fix_killed_at_any_step_leaves_files_old_or_new_and_undo_finishes(venv, point):
    venv, links = venv
    before = state_hashes(venv)
    old_activate = (venv / "bin" / "activate").read_bytes()
    killed = doctor(venv, links, "fix", *IDS, "--yes", extra_env={"CUDNN_DOCTOR_TEST_CRASH_AT": point})
    assert killed.returncode == -signal.SIGKILL
    now = (venv / "bin" / "activate").read_bytes()
    assert now == old_activate or now.startswith(old_activate[:20]) and b"# >>> cudnn-doctor >>>" in now
    again = doctor(venv, links, "fix", *IDS, "--yes")
    assert again.returncode == 1 and "fix --undo" in again.stdout  # no second fix over a half one
    undone = doctor(venv, links, "fix", "--undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert state_hashes(venv) == before


def test_a_fix_killed_at_a_random_moment_is_undone_exactly(venv):
    venv, links = venv
    before = state_hashes(venv)
    env = dict(os.environ, **offline_pip_env(links))
    env.pop("VIRTUAL_ENV", None)
    for delay in (0.5, 2.5, 4.0):
        proc = subprocess.Popen([sys.executable, "-m", "cudnn_doctor", "fix", *IDS, "--yes", "--env",
                                 "VIRTUAL_ENV=%s" % venv, "--env", "PATH=%s/bin:/usr/bin:/bin" % venv],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGKILL)  # pip too, as a power cut would
        proc.wait()
        if (venv / ".cudnn-doctor").exists():
            undone = doctor(venv, links, "fix", "--undo", "--yes")
            assert undone.returncode in (0, 1), undone.stdout + undone.stderr
            if undone.returncode == 1:
                assert "no record" in undone.stdout  # killed before the journal said anything
        assert state_hashes(venv) == before, delay


def test_a_conda_environment_gets_activate_d_and_deactivate_d_scripts_and_undo_takes_them_away(venv):
    venv, links = venv
    (venv / "conda-meta").mkdir()  # what makes a prefix a conda environment (its pip still changes the wheels)
    (venv / "conda-meta" / "history").write_text("")
    before = state_hashes(venv)
    env = {**os.environ, **offline_pip_env(links)}
    env.pop("VIRTUAL_ENV", None)
    words = [sys.executable, "-m", "cudnn_doctor", "fix", *IDS, "--yes", "--env", "CONDA_PREFIX=%s" % venv,
             "--env", "PATH=%s/bin:/usr/bin:/bin" % venv]
    done = subprocess.run(words, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    up = venv / "etc" / "conda" / "activate.d" / "cudnn-doctor.sh"
    down = venv / "etc" / "conda" / "deactivate.d" / "cudnn-doctor.sh"
    assert up.is_file() and down.is_file()
    shown = subprocess.run(["bash", "-c", 'unset LD_LIBRARY_PATH; . %s; echo "$LD_LIBRARY_PATH"; . %s; '
                            'echo "${LD_LIBRARY_PATH-unset}"' % (up, down)], capture_output=True, text=True).stdout
    assert shown.split() == ["%s/nvidia/cudnn/lib" % next(venv.glob("lib/python*/site-packages")), "unset"]
    assert (venv / "bin" / "activate").read_bytes() and "cudnn-doctor" not in (venv / "bin" / "activate").read_text()
    undo = [sys.executable, "-m", "cudnn_doctor", "fix", "--undo", "--yes", "--env", "CONDA_PREFIX=%s" % venv]
    undone = subprocess.run(undo, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert state_hashes(venv) == before and not (venv / "etc").exists()


def test_an_undo_killed_part_way_is_finished_by_the_next_undo(venv):
    venv, links = venv
    before = state_hashes(venv)
    assert doctor(venv, links, "fix", *IDS, "--yes").returncode == 0
    killed = doctor(venv, links, "fix", "--undo", "--yes", extra_env={"CUDNN_DOCTOR_TEST_CRASH_AT": "after-restore-1"})
    assert killed.returncode == -signal.SIGKILL
    undone = doctor(venv, links, "fix", "--undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert state_hashes(venv) == before


@pytest.mark.parametrize("existed", [False, True])
def test_a_pip_target_folder_is_kept_by_the_journal_and_put_back_by_undo(venv, existed):
    """The whole-environment fix puts the other cuDNN major in a folder beside the environment with pip --target:
    pip's list never shows it, so the journal keeps the folder itself."""
    from cudnn_doctor.fixing.apply import run_plan, undo_newest
    from cudnn_doctor.fixing.plan import Environment, Erring, build_plan

    venv, links = venv
    folder = venv / "cudnn8"
    if existed:
        (folder / "old").mkdir(parents=True)
        (folder / "old" / "keep.txt").write_text("kept\n")
    before = state_hashes(venv)
    env = {**os.environ, **offline_pip_env(links)}
    environment = Environment(str(venv), "venv", "pip")
    lib = "%s/nvidia/cudnn/lib" % folder
    err = Erring("CD710", "two majors", ('pip install --no-deps --target %s "nvidia-cudnn-cu12==8.9.2.26"' % folder,
                                         "export LD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" % lib))
    plan = build_plan([err], environment, as_root=False)
    done = run_plan(plan, env, as_root=False)
    assert [code for _, code, _ in done.ran] == [0]
    assert (folder / "nvidia" / "cudnn" / "lib" / "libcudnn.so.8").is_file()
    undo_newest(environment, env)
    assert state_hashes(venv) == before
    assert folder.exists() == existed
    if existed:
        assert sorted(p.name for p in folder.rglob("*")) == ["keep.txt", "old"]
        assert (folder / "old" / "keep.txt").read_text() == "kept\n"


def _every_file(folder: Path) -> dict:
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() and not p.is_symlink() else os.readlink(p)
                                         if p.is_symlink() else "dir") for p in sorted(folder.rglob("*"))}


def test_a_wheel_in_a_target_folder_is_removed_through_the_journal_and_undo_puts_it_back(venv):
    """pip cannot uninstall a `pip install --target` copy (no environment holds it): fix removes its payload and
    record itself, after the journal kept them, and undo puts them back byte for byte."""
    from cudnn_doctor.fixing.apply import run_plan, undo_newest
    from cudnn_doctor.fixing.plan import Environment, Erring, build_plan

    venv, links = venv
    pydeps = venv.parent / "pydeps"
    shutil.rmtree(pydeps, ignore_errors=True)
    env = {**os.environ, **offline_pip_env(links)}
    pip(venv, "install", "--no-deps", "--target", str(pydeps), "nvidia-cudnn-cu12==8.9.2.26", links=links)
    (pydeps / "other.txt").write_text("not the wheel's\n")
    before = state_hashes(venv), _every_file(pydeps)
    environment = Environment(str(venv), "venv", "pip")
    err = Erring("CD503", "preloads from PYTHONPATH",
                 ("rm -rf %s/nvidia/cudnn %s/nvidia_cudnn_cu12-*.dist-info" % (pydeps, pydeps),))
    plan = build_plan([err], environment, as_root=False)
    assert plan.taken == ["CD503"]
    done = run_plan(plan, env, as_root=False)
    assert [code for _, code, _ in done.ran] == [0]
    assert not (pydeps / "nvidia" / "cudnn").exists() and not list(pydeps.glob("nvidia_cudnn_cu12-*.dist-info"))
    assert (pydeps / "other.txt").exists()
    undo_newest(environment, env)
    assert (state_hashes(venv), _every_file(pydeps)) == before
    shutil.rmtree(pydeps)


def test_a_venv_used_from_path_is_judged_without_its_activate_script_and_not_called_healed(venv):
    """A venv whose bin is on PATH but never activated (realworld draw 101-16): its new shells do not source
    bin/activate, so the LD_LIBRARY_PATH fix wrote there reaches none of them. fix said "gone" and exited 0; it
    must judge as that shell will, say how the variables are reached, and exit 1. Undo still finds it."""
    venv, links = venv
    before = state_hashes(venv)
    env = {**os.environ, **offline_pip_env(links)}
    env.pop("VIRTUAL_ENV", None)
    words = [sys.executable, "-m", "cudnn_doctor", "fix", *IDS, "--yes", "--env", "PATH=%s/bin:/usr/bin:/bin" % venv]
    done = subprocess.run(words, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
    assert "nvidia-cudnn-cu12 9.3.0.75 -> 8.9.2.26" in done.stdout, done.stdout + done.stderr
    assert done.returncode == 1, done.stdout + done.stderr
    assert "CD704" in done.stdout and "still there" in done.stdout, done.stdout
    assert "is not activated in this shell" in done.stdout and ". %s/bin/activate" % venv in done.stdout
    assert not {"CD702", "CD704"} & errors_in_a_new_shell(venv)  # an activated shell is healed
    undone = subprocess.run([sys.executable, "-m", "cudnn_doctor", "fix", "--undo", "--yes", "--env",
                             "PATH=%s/bin:/usr/bin:/bin" % venv], env=env, capture_output=True, text=True,
                            stdin=subprocess.DEVNULL, timeout=300)
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert state_hashes(venv) == before


def test_rc_writes_the_variables_where_every_new_shell_reads_them_and_undo_takes_them_out(venv, tmp_path):
    """The same venv used from PATH, with `--rc FILE` (issue 45: nothing goes into a user's rc file unless asked):
    the lines go into a marked block at the end of that file, a new shell that reads it (the venv still not
    activated) is healed, fix says 0, and undo puts the file back byte for byte (realworld draws 20261205-10,
    20261206-13: a variable the user's shell sets)."""
    venv, links = venv
    rc = tmp_path / "home" / ".bashrc"
    rc.parent.mkdir()
    rc.write_text("# the user's own\nexport EDITOR=vi\n")
    open_to_others(tmp_path)
    before, rc_before = state_hashes(venv), rc.read_bytes()
    env = {**os.environ, **offline_pip_env(links)}
    env.pop("VIRTUAL_ENV", None)
    on_path = ["--env", "PATH=%s/bin:/usr/bin:/bin" % venv]
    words = [sys.executable, "-m", "cudnn_doctor", "fix", *IDS, "--yes", "--rc", str(rc), *on_path]
    done = subprocess.run(words, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "in %s (a marked block at its end)" % rc in done.stdout and "New shells that read %s" % rc in done.stdout
    text = rc.read_text()
    assert text.startswith("# the user's own\nexport EDITOR=vi\n# >>> cudnn-doctor >>>\n") and "LD_LIBRARY_PATH" in text
    script = ". %s && PATH=%s/bin:$PATH %s -m cudnn_doctor check --json" % (rc, venv, sys.executable)
    shell_env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "LD_LIBRARY_PATH")}
    report = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=shell_env, timeout=120).stdout
    assert not {"CD702", "CD704"} & {f["id"] for f in json.loads(report)["findings"] if f["severity"] == "error"}
    undone = subprocess.run([sys.executable, "-m", "cudnn_doctor", "fix", "--undo", "--yes", *on_path], env=env,
                            capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert state_hashes(venv) == before and rc.read_bytes() == rc_before


def test_a_step_that_fails_after_its_dry_run_passed_says_pips_reason_and_changes_nothing(venv, tmp_path):
    """pip's dry run reads a wheel's METADATA alone; its install inflates every member. A wheel whose library
    member is damaged passes the first and fails the second, as a full disk would: fix undoes what it did and says
    pip's own last words, not only its exit code."""
    venv, links = venv
    damaged = tmp_path / "wheels"
    shutil.copytree(links, damaged)
    wheel = next(damaged.glob("nvidia_cudnn_cu12-8.9.2.26-*.whl"))
    import zipfile
    member = next(i for i in zipfile.ZipFile(wheel).infolist() if i.filename.endswith("libcudnn.so.8"))
    data = bytearray(wheel.read_bytes())
    start = member.header_offset + 30 + len(member.filename) + len(member.extra)
    for at in range(start + 100, start + 104):
        data[at] ^= 0xFF  # inside the deflated bytes: the local header and the central directory stay whole
    wheel.write_bytes(bytes(data))
    before = state_hashes(venv)
    done = doctor(venv, damaged, "fix", *IDS, "--yes")
    assert done.returncode == 1, done.stdout + done.stderr
    stopped = next(line for line in done.stdout.splitlines() if line.startswith("fix stopped:"))
    assert "failed (exit 2): zlib.error: Error -3 while decompressing data" in stopped, stopped
    assert "everything fix had changed was undone" in stopped
    assert state_hashes(venv) == before
