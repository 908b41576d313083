"""fix runs the one plan of frameworks that cannot share an environment (CD710's one environment per framework): the
lines the real remedy builder prints are taken on, each makes its new venv whole (python3 -m venv, its own pip, its
activate lines), the environment the frameworks leave is not touched, and undo removes what fix made; a folder
already there, a failing pip and a SIGKILL after the folder was made each leave the old state."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from dataclasses import replace
import pickle

import pytest

from cudnn_doctor.fixing import apply, gather
from cudnn_doctor.fixing.apply import FixStopped, run_plan, undo_newest
from cudnn_doctor.fixing.environment import find_environment
from cudnn_doctor.fixing.plan import Environment, build_plan
from fix_factory import bundled_pip_wheels, cudnn_wheel, framework_wheel, make_venv, offline_pip_env, open_to_others, pip, state_hashes

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "rules"))
import test_shared_environments as shared_env  # noqa: E402  (its built facts: ORT 1.18 beside TensorFlow 2.17)

ORT = "~/venvs/onnxruntime-gpu-1.18.0"


def _conflict():
    """CD710 for ONNX Runtime 1.18 (CUDA 11) beside TensorFlow 2.17 (cuDNN 8 for CUDA 12), as check reports it."""
    ort = shared_env._plain_path("onnxruntime-gpu", "1.18.0", 8, "onnxruntime/capi/libonnxruntime_providers_cuda.so")
    ort.cuda_version = "11.8"
    facts = shared_env._environment([ort, shared_env._tensorflow("2.17.1", 8, shared_env.TF217, 8)], "8.9.7.29")
    [conflict] = [f for f in shared_env._findings(facts) if f.id == "CD710"]
    return conflict, facts


def test_each_new_environment_line_of_the_remedy_is_one_step_fix_takes_on():
    conflict, facts = _conflict()
    plan = build_plan(gather.errings([conflict], facts), Environment(shared_env.PREFIX, "venv", "pip"), False)
    assert plan.taken == ["CD710"] and not plan.left, plan.left
    assert [s.kind for s in plan.steps] == ["environments", "environments"]
    assert plan.made == [ORT, "~/venvs/tensorflow-2.17.1"]
    assert [s.shown for s in plan.steps] == list(conflict.remedy.commands)  # run as printed
    assert all(s.argv[:2] == ["bash", "-c"] for s in plan.steps)


def test_a_line_of_another_shape_is_left_with_why():
    conflict, facts = _conflict()
    changed = [c.replace(" && ", " ; ", 1) for c in conflict.remedy.commands[:1]]
    errs = [replace(e, commands=tuple(changed)) for e in gather.errings([conflict], facts)]
    plan = build_plan(errs, Environment(shared_env.PREFIX, "venv", "pip"), False)
    assert plan.not_taken == ["CD710"] and not plan.steps
    assert "new environment in a way fix does not run" in plan.left[0][2]


@pytest.fixture
def machine(tmp_path):
    """A venv the frameworks leave (one small framework installed), a HOME, and the wheels the ONNX Runtime line
    names, built here under their real names, for pip to resolve offline."""
    open_to_others(tmp_path)
    links = tmp_path / "wheels"
    bundled_pip_wheels(links)  # --upgrade-deps, offline
    framework_wheel(links, "onnxruntime-gpu", "1.18.0", files={"onnxruntime/__init__.py": ""})
    cudnn_wheel(links, "8.9.6.50", cuda_major=11)
    old = make_venv(tmp_path / "old")
    pip(old, "install", "--no-deps", "onnxruntime-gpu==1.18.0", links=links)
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, **offline_pip_env(links), HOME=str(home), VIRTUAL_ENV=str(old),
               PATH="%s/bin:/usr/bin:/bin" % old)
    conflict, facts = _conflict()
    line = conflict.remedy.commands[0]
    assert line.startswith("python3.12 -m venv --upgrade-deps %s " % ORT)  # the site's own Python minor (the facts' machine's)
    line = line.replace("python3.12 ", "python%d.%d " % sys.version_info[:2], 1)  # this machine's: the venv's
    errs = [replace(e, commands=(line,), site=str(next(old.glob("lib/python*/site-packages")))) for e in
            gather.errings([conflict], facts)]
    environment = find_environment(env, [])
    return old, home, env, build_plan(errs, environment, False)


@pytest.mark.slow  # makes two venvs and runs pip
def test_fix_makes_the_new_environment_whole_and_undo_removes_it(machine):
    old, home, env, plan = machine
    before = state_hashes(old)
    done = run_plan(plan, env, as_root=False)
    made = home / "venvs/onnxruntime-gpu-1.18.0"
    assert [code for _, code, _ in done.ran] == [0], done.ran
    site = next(made.glob("lib/python*/site-packages"))
    assert {p.name.split("-")[0] for p in site.glob("*.dist-info")} >= {"onnxruntime_gpu", "nvidia_cudnn_cu11"}
    activate = (made / "bin/activate").read_text()
    assert "export LD_LIBRARY_PATH=$(echo %s/lib/python3*/site-packages/nvidia/cudnn/lib)" % ORT in activate
    # a new shell that activates it gets the wheel's folder first
    shell = apply.made.new_shell(str(made), env, str(old))
    assert shell["VIRTUAL_ENV"] == str(made)
    assert shell["LD_LIBRARY_PATH"].split(":")[0] == str(site / "nvidia/cudnn/lib")
    assert "%s/bin" % old not in shell["PATH"].split(":")
    assert state_hashes(old) == before  # the environment the frameworks leave is as it was
    undone = undo_newest(plan.environment, env)
    assert str(made) in undone.removed and not made.exists()
    assert state_hashes(old) == before and not (old / ".cudnn-doctor").exists()


@pytest.mark.slow
def test_a_folder_already_there_stops_fix_before_anything_changes(machine):
    old, home, env, plan = machine
    (home / "venvs/onnxruntime-gpu-1.18.0").mkdir(parents=True)
    (home / "venvs/onnxruntime-gpu-1.18.0/mine.txt").write_text("the user's")
    before = state_hashes(old)
    with pytest.raises(FixStopped, match="is there already.*nothing was changed"):
        run_plan(plan, env, as_root=False)
    assert (home / "venvs/onnxruntime-gpu-1.18.0/mine.txt").read_text() == "the user's"
    assert state_hashes(old) == before and not (old / ".cudnn-doctor" / "fix-journal" / "history").exists()


@pytest.mark.slow
def test_a_pip_that_fails_in_the_new_environment_takes_the_folder_away(machine):
    old, home, env, plan = machine
    env = dict(env, PIP_FIND_LINKS=str(home))  # no wheels there: pip finds no onnxruntime-gpu
    before = state_hashes(old)
    with pytest.raises(FixStopped, match="failed.*everything fix had changed was undone"):
        run_plan(plan, env, as_root=False)
    assert not (home / "venvs/onnxruntime-gpu-1.18.0").exists()
    assert state_hashes(old) == before


@pytest.mark.slow
def test_a_fix_killed_once_the_folder_is_made_is_undone_by_the_next_undo(machine, tmp_path):
    old, home, env, plan = machine
    before = state_hashes(old)
    script = ("import pickle, sys; from cudnn_doctor.fixing.apply import run_plan; "
              "run_plan(pickle.load(open(sys.argv[1], 'rb')), dict(__import__('os').environ), False)")
    saved = tmp_path / "plan.pickle"
    saved.write_bytes(pickle.dumps(plan))
    killed = subprocess.run([sys.executable, "-c", script, str(saved)], capture_output=True, text=True,
                            env=dict(env, CUDNN_DOCTOR_TEST_CRASH_AT="fix-after-step-1",
                                     PYTHONPATH=str(Path(__file__).resolve().parents[2])))
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert (home / "venvs/onnxruntime-gpu-1.18.0/bin/activate").exists()  # made, then the power cut
    assert apply.interrupted(plan.environment) is not None
    undone = undo_newest(plan.environment, env)
    assert not (home / "venvs/onnxruntime-gpu-1.18.0").exists(), undone
    assert state_hashes(old) == before and not (old / ".cudnn-doctor").exists()


def test_undo_removes_only_a_folder_fix_marked_and_the_empty_parents_it_made(tmp_path):
    from cudnn_doctor.fixing import made
    home = {"HOME": str(tmp_path)}
    parents = made.parents_to_make(["~/venvs/a", "~/venvs/b"], home)
    assert parents == [str(tmp_path / "venvs")]
    made.make(str(tmp_path / "venvs/a"), "0001")
    (tmp_path / "venvs/a/lib").mkdir()
    (tmp_path / "venvs/b").mkdir()  # someone else's, made after a kill before fix made its own
    (tmp_path / "venvs/b/mine").write_text("kept")
    gone, problems = made.remove([str(tmp_path / "venvs/a"), str(tmp_path / "venvs/b")], parents)
    assert gone == [str(tmp_path / "venvs/a")] and not problems
    assert (tmp_path / "venvs/b/mine").read_text() == "kept"  # and so ~/venvs, not empty, stays too
    with pytest.raises(FileExistsError):  # made exclusively: a folder there now stops the step
        made.make(str(tmp_path / "venvs/b"), "0001")


def test_a_line_past_its_time_is_killed_with_every_process_it_started(tmp_path):
    from cudnn_doctor.fixing import made
    late = tmp_path / "late"
    # bash starts a child (as it does pip) that would write after the time is up
    line = "(sleep 3; touch %s) && echo done" % late
    code, said = made.run_line(["bash", "-c", line], dict(os.environ, PIP_TARGET="/elsewhere"), timeout=1)
    assert code == 124 and "did not finish" in said
    import time
    time.sleep(3)
    assert not late.exists()
