"""fix's plan (pure) and the activate blocks it writes, the latter judged by a real shell sourcing them."""
from __future__ import annotations

import dataclasses

import subprocess
import sys
from pathlib import Path

import pytest

from cudnn_doctor.fixing import activate
from cudnn_doctor.fixing.commands import parse_command
from cudnn_doctor.fixing.plan import Environment, Erring, build_plan, user_steps, with_versions

ENV = Environment("/srv/venv", "venv", "pip")
SITE = "/srv/venv/lib/python3.11/site-packages"
KEEP = "${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"


def test_package_installs_merge_into_one_command_of_the_environments_own_pip_and_variables_come_last():
    errs = [Erring("CD704", "t", ('pip install "nvidia-cudnn-cu12==8.9.2.26"',
                                  "export LD_LIBRARY_PATH=%s/nvidia/cudnn/lib%s" % (SITE, KEEP)), SITE),
            Erring("CD702", "t", ('pip install "nvidia-cudnn-cu12==8.9.2.26"',), SITE),
            Erring("CD706", "t", ('python3 -m pip install "nvidia-cublas-cu12==12.3.4.1"',), SITE)]
    plan = build_plan(errs, ENV, as_root=False)
    assert [s.kind for s in plan.steps] == ["packages", "variables"]
    assert plan.steps[0].argv == ["/srv/venv/bin/python", "-m", "pip", "install", "nvidia-cudnn-cu12==8.9.2.26",
                                  "nvidia-cublas-cu12==12.3.4.1"]
    assert plan.steps[0].ids == ["CD704", "CD702", "CD706"]
    assert plan.variable_lines == ["export LD_LIBRARY_PATH=%s/nvidia/cudnn/lib%s" % (SITE, KEEP)]
    assert plan.taken == ["CD704", "CD702", "CD706"] and not plan.left


def test_installs_with_other_options_stay_apart_and_uninstalls_get_yes():
    errs = [Erring("A", "t", ('pip install --no-deps --target /srv/venv/cudnn8 "nvidia-cudnn-cu12==8.9.7.29"',
                              "pip uninstall nvidia-cudnn-cu11", 'pip install "nvidia-cudnn-cu12==9.10.2.21"'))]
    plan = build_plan(errs, ENV, as_root=False)
    shown = [s.argv[3:] for s in plan.steps]
    # removals first (test_a_removed_wheel_is_not_reinstalled_and_removals_come_before_installs)
    assert shown == [["uninstall", "-y", "nvidia-cudnn-cu11"],
                     ["install", "--no-deps", "--target", "/srv/venv/cudnn8", "nvidia-cudnn-cu12==8.9.7.29"],
                     ["install", "nvidia-cudnn-cu12==9.10.2.21"]]


def test_uv_environments_get_uv_pip_with_the_environments_python():
    plan = build_plan([Erring("A", "t", ('pip install "x==1"',))], Environment("/e", "venv", "uv"), False)
    assert plan.steps[0].argv == ["uv", "pip", "install", "--python", "/e/bin/python", "x==1"]


@pytest.mark.parametrize("command, kind", [
    ("sudo ldconfig", "system"), ("apt-get install -y libcudnn9", "system"),
    ("docker run --gpus all ...", "left"), ("ln -sf a b && echo", "left"), ("cudnn-doctor install x", "left"),
    ("/other/venv/bin/pip install torch", "left"), ("pip download x", "left"),
    ("unset LD_LIBRARY_PATH", "variables"), ("export CUDA_VISIBLE_DEVICES=0", "variables"),
    ("uv pip install x", "packages"), ("conda install -c nvidia cudnn", "left"),
    # a range's < and > inside quotes are the requirement's (draw-101-0's CD704 fix was left as a redirection)
    ('pip install "nvidia-cudnn-cu13<10.0,>=9.12.0.46"', "packages"), ("pip install 'x>1' > log", "left"),
    ('pip install "$(echo x)"', "left"),
    # a wheel in a `pip install --target` folder on PYTHONPATH (pip cannot uninstall it): fix removes it, journaled
    ("rm -rf /home/u/pydeps/nvidia/cudnn /home/u/pydeps/nvidia_cudnn_cu12-*.dist-info", "removals"),
    ("rm -rf /home/u/pydeps/nvidia/cudnn /other/nvidia_cudnn_cu12-*.dist-info", "left"),  # two folders
    ("rm -rf /home/u/pydeps", "left"), ("rm -r /home/u/pydeps/nvidia/cudnn", "left"),
    ("rm -rf /home/u/pydeps/nvidia/../../../etc", "left"), ("rm -rf nvidia/cudnn", "left"),
    # read only: what a layout that leaves the environment as it is names (nothing for fix to run)
    ("pip check", "checks"), ("python3 -m pip check", "checks"), ("pip check --verbose", "left"),
])
def test_each_command_is_sorted_by_what_it_changes(command, kind):
    assert parse_command(command, as_root=False).kind == kind


def test_a_read_only_pip_check_beside_changes_is_skipped_and_alone_leaves_the_finding():
    # fix draw 301301-14: a JAX swap for CUDA 12 whose layout left the site's cuDNN as it was ended in `pip check`,
    # which fix does not run: the whole finding was left, so nothing was healed
    swap = ("unset LD_PRELOAD", "pip uninstall -y jax-cuda13-pjrt jax-cuda13-plugin",
            'pip install "jax-cuda12-pjrt==0.7.2"', "pip check")
    plan = build_plan([Erring("CD501", "t", swap, SITE), Erring("CD702", "t", ("pip check",), SITE)], ENV, False)
    assert plan.taken == ["CD501"] and [s.kind for s in plan.steps] == ["packages", "packages", "variables"]
    assert not any("check" in s.argv for s in plan.steps)
    assert plan.left == [("CD702", "pip check", "its fix changes nothing (it says to leave the environment as it is)",
                          "t")]


def test_twins_left_for_the_user_are_named_by_their_own_titles():
    """H200, rounds 29-31: "Left for you" named the twin fix takes on (the copy's torch) with the reason of the twin it
    leaves (the original's, about another environment): titles were looked up by finding id, which twins share."""
    from cudnn_doctor.render.fix import plan_lines

    copy, original = SITE, "/opt/torch/.venv/lib/python3.12/site-packages"
    fix = ("pip install --force-reinstall --no-deps nvidia-cudnn-cu13==9.19.0.56",)
    errs = [Erring("CD503", "torch 2.11.0 (in /opt/torch/.venv) loads 9.14", fix, original),
            Erring("CD503", "torch 2.11.0 (in the copy) loads 9.14", fix, copy)]
    plan = build_plan(errs, ENV, as_root=False)
    lines = plan_lines(plan, {e.id: e.title for e in errs})  # the id-keyed map holds the copy's title only
    left = [line for line in lines if line.startswith("  CD503")]
    assert left == ["  CD503  torch 2.11.0 (in /opt/torch/.venv) loads 9.14  (it is about another environment (%s): "
                    "run fix with that one active)" % original], lines
    from cudnn_doctor.render.fix import plan_payload
    assert [e["title"] for e in plan_payload(plan)["left"]] == ["torch 2.11.0 (in /opt/torch/.venv) loads 9.14"]


def test_root_steps_are_left_for_a_user_and_taken_by_root_and_a_finding_is_never_half_run():
    errs = [Erring("CD608", "stale cache", ("sudo ldconfig",)),
            Erring("CD801", "container", ("docker run --gpus all ...", "sudo systemctl restart docker")),
            Erring("CD702", "pin", ('pip install "a==1"',), SITE)]
    user = build_plan(errs, ENV, as_root=False)
    assert user.taken == ["CD702"] and user.not_taken == ["CD608", "CD801"]
    assert ("CD608", "sudo ldconfig", "it changes the system, not the environment: run it as root") in [
        left[:3] for left in user.left]
    assert [s.kind for s in user.steps] == ["packages"]
    root = build_plan(errs, ENV, as_root=True)
    assert root.taken == ["CD608", "CD702"] and [s.kind for s in root.steps] == ["packages", "system"]


def test_a_fix_for_another_environment_or_with_no_environment_is_left():
    other = Erring("CD702", "pin", ('pip install "a==1"',), "/opt/other/lib/python3.11/site-packages")
    plan = build_plan([other], ENV, as_root=False)
    assert plan.not_taken == ["CD702"] and "another environment" in plan.left[0][2]
    plan = build_plan([Erring("CD702", "pin", ('pip install "a==1"',))], None, as_root=False)
    assert plan.not_taken == ["CD702"] and "no Python environment" in plan.left[0][2]


def _venv_activate(tmp_path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "v")], check=True)
    return tmp_path / "v" / "bin" / "activate"


def _bash(script: str) -> str:
    return subprocess.run(["bash", "-c", script], check=True, capture_output=True, text=True).stdout


def test_the_venv_block_sets_the_variable_and_deactivate_puts_the_old_value_or_unset_back(tmp_path):
    path = _venv_activate(tmp_path)
    old = path.read_text()
    line = "export LD_LIBRARY_PATH=/wheel/lib%s" % KEEP
    new = activate.venv_activate(old, [line])
    assert new is not None and activate.without_blocks(new) == old
    path.write_text(new)
    out = _bash('export LD_LIBRARY_PATH=/old; . %s; echo "$LD_LIBRARY_PATH"; deactivate; echo "$LD_LIBRARY_PATH"; '
                'unset LD_LIBRARY_PATH; . %s; . %s; echo "$LD_LIBRARY_PATH"; deactivate; '
                'echo "${LD_LIBRARY_PATH-unset}"' % (path, path, path))
    assert out.split() == ["/wheel/lib:/old", "/old", "/wheel/lib", "unset"]
    # a second fix keeps the first one's line and adds its own, in one block
    again = activate.venv_activate(new, ["export CUDA_MODULE_LOADING=LAZY"])
    assert again is not None and again.count(activate.BEGIN) == 2  # the end block and the one in deactivate
    assert line in again and activate.without_blocks(again) == old


def test_conda_scripts_set_and_restore(tmp_path):
    up, down = activate.conda_scripts(["export LD_LIBRARY_PATH=/wheel/lib%s" % KEEP])
    (tmp_path / "up.sh").write_text(up)
    (tmp_path / "down.sh").write_text(down)
    out = _bash('unset LD_LIBRARY_PATH; . %s/up.sh; echo "$LD_LIBRARY_PATH"; . %s/down.sh; '
                'echo "${LD_LIBRARY_PATH-unset}"' % (tmp_path, tmp_path))
    assert out.split() == ["/wheel/lib", "unset"]


def test_an_environment_another_user_owns_is_left_named():
    theirs = Environment("/srv/venv", "venv", "pip", writable=False)
    plan = build_plan([Erring("CD702", "pin", ('pip install "a==1"',), SITE)], theirs, as_root=False)
    assert plan.not_taken == ["CD702"] and "not yours to change" in plan.left[0][2] and not plan.steps


def test_variables_set_for_pip_alone_are_kept_on_its_step_and_printed_as_run():
    """CD704's `PYTHONPATH= pip install ...` (a --target folder on PYTHONPATH that pip would count as installed:
    realworld draw 515-14) was left as "not the environment's package tool"; it is a pip step with its own
    variables, kept apart from installs without them. Other variables, or on another program, stay the user's."""
    plan = build_plan([Erring("CD704", "t", ('PYTHONPATH= pip install "nvidia-cudnn-cu12<10.0,>=9.0"',)),
                       Erring("CD702", "t", ('pip install "nvidia-nvtx-cu12==12.8.90"',))], ENV, False)
    assert plan.taken == ["CD704", "CD702"]
    shown = [s.shown for s in plan.steps]
    assert shown == ["PYTHONPATH='' /srv/venv/bin/python -m pip install 'nvidia-cudnn-cu12<10.0,>=9.0'",
                     "/srv/venv/bin/python -m pip install nvidia-nvtx-cu12==12.8.90"]
    assert plan.steps[0].pip_env == {"PYTHONPATH": ""} and plan.steps[1].pip_env == {}
    assert parse_command("LD_PRELOAD=/x.so pip install a", False).kind == "left"
    assert parse_command("PYTHONPATH= make install", False).kind == "left"


def test_a_finding_about_the_user_site_the_environment_sees_is_taken_and_its_pip_is_the_sites_owner():
    """A framework in ~/.local seen by a venv made with --system-site-packages (realworld draws 515-3, 303-1,
    202-20): fix took it for another environment's. It is this one's; `pip install --user` runs with the
    interpreter that owns that site (a venv's pip would leave the old release beside the new)."""
    seeing = Environment("/srv/venv", "venv", "pip", user_site="/home/u/.local/lib/python3.11/site-packages",
                         base_python="/usr/bin/python3.11")
    err = Erring("CD704", "t", ('pip install --user "nvidia-cudnn-cu13<10.0,>=9.12.0.46"',),
                 site="/home/u/.local/lib/python3.11/site-packages")
    plan = build_plan([err], seeing, False)
    assert plan.taken == ["CD704"]
    assert plan.steps[0].argv == ["/usr/bin/python3.11", "-m", "pip", "install", "--user",
                                  "nvidia-cudnn-cu13<10.0,>=9.12.0.46"]
    assert plan.steps[0].changes.endswith("in /home/u/.local/lib/python3.11/site-packages")
    assert build_plan([err], ENV, False).not_taken == ["CD704"]  # a venv that does not see that site


def test_an_uninstall_from_the_user_site_is_run_by_its_owner_without_user():
    """pip in a venv never removes a package from the user site ("Not uninstalling ... outside environment", exit
    0), and `pip uninstall` has no --user: the site's owner runs it (draw 20261130-1: JAX's CUDA 12 build stayed
    beside the CUDA 13 one fix installed). The user site is then journaled for undo."""
    seeing = Environment("/srv/venv", "venv", "pip", user_site="/home/u/.local/lib/python3.11/site-packages",
                         base_python="/usr/bin/python3.11")
    err = Erring("CD710", "t", ("pip uninstall -y jax-cuda12-pjrt jax-cuda12-plugin",
                                'pip install --user "jax-cuda13-pjrt==0.7.2"'),
                 site="/home/u/.local/lib/python3.11/site-packages")
    plan = build_plan([err], seeing, False)
    assert plan.steps[0].argv == ["/usr/bin/python3.11", "-m", "pip", "uninstall", "-y", "jax-cuda12-pjrt",
                                  "jax-cuda12-plugin"], plan.steps[0].argv
    assert plan.steps[0].changes.endswith("in /home/u/.local/lib/python3.11/site-packages")
    assert user_steps(plan) and all(s.user for s in plan.steps)
    mine = Erring("CD710", "t", ("pip uninstall -y jax-cuda12-pjrt",), site="/srv/venv/lib/python3.11/site-packages")
    assert build_plan([mine], seeing, False).steps[0].argv[:4] == ["/srv/venv/bin/python", "-m", "pip", "uninstall"]


def test_user_is_never_added_to_a_target_install():
    """pip refuses --user with --target ("Can not combine"): draw 101-14's fix failed on it."""
    from cudnn_doctor.model import Fix
    from cudnn_doctor.remedies.environments import with_pip_option

    fix = Fix(text='pip install "a==1" && pip install --no-deps --target /t "b==2"',
              commands=['pip install "a==1"', 'pip install --no-deps --target /t "b==2"'])
    done = with_pip_option(fix, "pip install ", "--user")
    assert done.commands == ['pip install --user "a==1"', 'pip install --no-deps --target /t "b==2"']
    assert done.text == 'pip install --user "a==1" && pip install --no-deps --target /t "b==2"'


def test_a_link_beside_a_file_of_the_environment_is_a_step_after_the_packages():
    """Paddle dlopens the unversioned libcudnn.so (CD707: `ln -sf libcudnn.so.8 <site>/nvidia/cudnn/lib/libcudnn.so`,
    realworld draw 515-18): fix makes that link through its journal, after the pip step that installs the file it
    points at and before the variables. A link outside the environment, or any other ln, stays the user's."""
    link = "/srv/venv/lib/python3.11/site-packages/nvidia/cudnn/lib/libcudnn.so"
    plan = build_plan([Erring("CD707", "t", ('pip install "nvidia-cudnn-cu11==8.*"', "ln -sf libcudnn.so.8 " + link,
                                             "export LD_LIBRARY_PATH=%s" % link.rsplit("/", 1)[0]))], ENV, False)
    assert plan.taken == ["CD707"]
    assert [(s.kind, s.link, s.target) for s in plan.steps] == [
        ("packages", "", ""), ("links", link, "libcudnn.so.8"), ("variables", "", "")]
    assert build_plan([Erring("X", "t", ("ln -sf libcudnn.so.8 /usr/lib/libcudnn.so",))], ENV, False).not_taken == ["X"]
    for other in ("ln -s /abs/target /srv/venv/x", "ln libcudnn.so.8 /srv/venv/x", "ln -sf a"):
        assert parse_command(other, False).kind == "left"


def test_a_finding_is_about_its_frameworks_site_and_not_the_places_it_searched():
    """realworld draw 291129-47: CD401's evidence lists every folder it searched, the doctor's own site among them,
    so fix took its errors for two environments and changed none; CD706 names its framework by its label."""
    from cudnn_doctor.fixing.gather import site_of
    from cudnn_doctor.model import Finding, Fix, Severity
    from facts_factory import framework, real_machine

    facts = real_machine()
    own = "/opt/doctor/lib/python3.12/site-packages"
    facts.python.site_dirs = [own, SITE]
    facts.python.frameworks = [framework("tensorflow", "2.15.1", location=SITE)]
    missing = Finding("CD401", Severity.ERROR, "No cuDNN", remedy=Fix(text="x"),
                      evidence={"searched": [own, SITE, "/usr/lib"], "cuda": None})
    libs = Finding("CD706", Severity.ERROR, "t", remedy=Fix(text="x"),
                   evidence={"framework": "tensorflow 2.15.1", "libraries": {"libcublas.so.12": None}})
    assert site_of(missing, facts) is None
    assert site_of(libs, facts) == SITE


def test_a_twins_finding_is_about_the_twin_its_title_names_not_the_site_its_evidence_loads_from():
    """H200, rounds 29-30: torch 2.11 in /opt/torch/.venv and in its hard-linked copy. CD709 about the copy's torch
    names the original's cuDNN folder (LD_LIBRARY_PATH points there), so fix said it was about another environment;
    the title's "(in ...)" says which twin it is."""
    from cudnn_doctor.fixing.gather import site_of
    from cudnn_doctor.model import Finding, Fix, Severity
    from cudnn_doctor.queries import framework_label
    from facts_factory import framework, real_machine

    facts = real_machine()
    original = "/opt/torch/.venv/lib/python3.12/site-packages"
    copy = "/tmp/cudnn-doctor-fix-venv/lib/python3.12/site-packages"
    facts.python.site_dirs = [copy, original]
    facts.python.frameworks = [framework("torch", "2.11.0", location=original),
                               framework("torch", "2.11.0", location=copy)]
    for fw in facts.python.frameworks:
        title = "%s loads cuDNN 9.19.0 but its libcudnn_graph.so.9 from elsewhere" % framework_label(facts, fw)
        mixed = Finding("CD709", Severity.ERROR, title, remedy=Fix(text="x"), evidence={
            "framework": "torch", "version": "2.11.0", "cudnn": original + "/nvidia/cudnn/lib/libcudnn.so.9"})
        assert site_of(mixed, facts) == fw.location
    # without a label to tell them apart (an older finding), the evidence still decides
    bare = Finding("CD709", Severity.ERROR, "torch 2.11.0 loads", remedy=Fix(text="x"),
                   evidence={"framework": "torch", "cudnn": copy + "/nvidia/cudnn/lib/libcudnn.so.9"})
    assert site_of(bare, facts) == copy


def test_a_removed_wheel_is_not_reinstalled_and_removals_come_before_installs():
    """realworld draw 291129-43: CD402 reinstalls the damaged cu13 wheel, CD501 and CD709 swap it for cu12 (the
    same nvidia/cudnn folder). Merged by options, CD501's install ran before its own uninstall, which then emptied
    the folder. A fix that removes a project and installs it again keeps both."""
    errs = [Erring("CD402", "t", ('pip install --force-reinstall --no-deps "nvidia-cudnn-cu13==9.24.0.43"',), SITE),
            Erring("CD501", "t", ("pip uninstall -y nvidia-cudnn-cu13",
                                  'pip install --force-reinstall --no-deps "nvidia-cudnn-cu12==9.10.2.21"'), SITE),
            Erring("CD709", "t", ("pip uninstall -y nvidia-cudnn-cu13", 'pip install "nvidia-cudnn-cu12==9.10.2.21"'),
                   SITE)]
    plan = build_plan(errs, ENV, as_root=False)
    assert [s.argv[3:] for s in plan.steps] == [
        ["uninstall", "-y", "nvidia-cudnn-cu13"],
        ["install", "--force-reinstall", "--no-deps", "nvidia-cudnn-cu12==9.10.2.21"]]
    assert plan.taken == ["CD402", "CD501", "CD709"]
    swap = build_plan([Erring("A", "t", ("pip uninstall -y nvidia-cudnn-cu12", 'pip install "nvidia-cudnn-cu12==9.1"'
                                         ), SITE)], ENV, as_root=False)
    assert [s.argv[3:] for s in swap.steps] == [["uninstall", "-y", "nvidia-cudnn-cu12"],
                                                ["install", "nvidia-cudnn-cu12==9.1"]]


def test_a_file_a_package_step_removed_is_new_when_its_link_is_placed(tmp_path):
    # The other major's link takes the name of a file the plan's own uninstall removed (draw 20261129-9: the cu12
    # wheel's libcudnn.so.8): apply keeps no copy of a file that is gone, and undo removes the link before pip puts
    # the wheel's file back; a file still there is replaced as planned
    from cudnn_doctor.fixing.apply import _gone_since_staged
    (tmp_path / "kept.so.8").write_bytes(b"x")
    journal = {"dirs": [{"path": str(tmp_path), "existed": True}],
               "ops": [{"dir": 0, "rel": "libcudnn.so.8", "action": "replace"},
                       {"dir": 0, "rel": "kept.so.8", "action": "replace"}]}
    assert _gone_since_staged(journal)
    assert [op["action"] for op in journal["ops"]] == ["new", "replace"]
    assert not _gone_since_staged(journal)  # nothing more to change


def test_a_target_copys_removal_comes_before_the_install_that_replaces_it():
    # CD503's fix for torch preloading a cu12 wheel from a `pip install --target` folder on PYTHONPATH (draw 61127/16)
    commands = ("rm -rf /home/u/pydeps/nvidia/cudnn /home/u/pydeps/nvidia_cudnn_cu12-*.dist-info",
                'PYTHONPATH= pip install "nvidia-cudnn-cu13==9.24.0.43"')
    plan = build_plan([Erring("CD503", "t", commands, "/e/lib/python3.11/site-packages")],
                      Environment("/e", "venv", "pip"), False)
    assert plan.taken == ["CD503"] and [s.kind for s in plan.steps] == ["removals", "packages"]
    assert plan.steps[0].paths == ["/home/u/pydeps/nvidia/cudnn", "/home/u/pydeps/nvidia_cudnn_cu12-*.dist-info"]


def test_a_variable_taken_away_is_said_unset_and_a_target_install_is_added_not_reinstalled():
    # a new user's trial: `unset LD_PRELOAD` read "sets LD_PRELOAD", and a --target install of a release the site also
    # holds read "(reinstalled)"
    env = Environment("/e", "venv", "pip")
    plan = build_plan([Erring("CD711", "t", ("unset LD_PRELOAD",)),
                       Erring("CD704", "t", ('pip install --no-deps --target /e/cudnn8 "nvidia-cudnn-cu12==8.9.7.29"',
                                             "export LD_LIBRARY_PATH=/e/cudnn8/nvidia/cudnn/lib"))], env, False)
    [target, variables] = plan.steps
    assert variables.changes.startswith("sets LD_LIBRARY_PATH and unsets LD_PRELOAD for new shells"), variables.changes
    with_versions(target, [("nvidia-cudnn-cu12", "8.9.7.29")], {"nvidia-cudnn-cu12": "8.9.7.29"})
    assert target.changes.endswith("nvidia-cudnn-cu12 8.9.7.29 (added)"), target.changes


def test_variables_of_an_environment_used_from_path_are_not_said_to_reach_its_new_shells(tmp_path):
    # draw 20261205-10: a venv on PATH, never activated; its activate block would reach no shell the user opens, and
    # the plan said "for new shells of this environment"
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    from cudnn_doctor.fixing.environment import find_environment
    on_path = find_environment({"PATH": "%s/bin:/usr/bin" % venv}, [str(venv / "lib/python3.11/site-packages")])
    activated = find_environment({"VIRTUAL_ENV": str(venv)}, [])
    assert on_path is not None and not on_path.active and activated is not None and activated.active
    errors = [Erring("CD709", "t", ("unset LD_LIBRARY_PATH",))]
    [step] = build_plan(errors, on_path, False).steps
    assert "only shells that activate this environment get them (this one did not; `--rc ~/.bashrc` writes them " \
        "where every new shell reads them)" in step.changes, step.changes
    asked = dataclasses.replace(on_path, rc="/home/u/.bashrc")
    [step] = build_plan(errors, asked, False).steps
    assert step.changes == "unsets LD_LIBRARY_PATH in /home/u/.bashrc (a marked block at its end): every new shell " \
        "that reads it gets them", step.changes
    [step] = build_plan(errors, activated, False).steps
    assert step.changes.startswith("unsets LD_LIBRARY_PATH for new shells of this environment"), step.changes


def test_an_uninstall_by_the_user_sites_owner_is_taken_and_another_pythons_pip_is_left():
    # check prints the user site's uninstall with the interpreter that owns it (pip in the venv never removes there)
    user = "/home/u/.local/lib/python3.11/site-packages"
    env = Environment("/e", "venv", "pip", user_site=user, base_python="/usr/local/bin/python3.11")
    mine = Erring("CD710", "t", ("/usr/local/bin/python3.11 -m pip uninstall -y jax-cuda12-plugin",
                                 'pip install --user "jax-cuda13-pjrt==0.7.2"'), user)
    plan = build_plan([mine], env, False)
    assert plan.taken == ["CD710"]
    assert plan.steps[0].argv == ["/usr/local/bin/python3.11", "-m", "pip", "uninstall", "-y", "jax-cuda12-plugin"]
    other = Erring("CD710", "t", ("/opt/other/bin/python3 -m pip uninstall -y x",), user)
    assert build_plan([other], env, False).not_taken == ["CD710"]


def test_the_owners_own_uninstall_line_is_a_user_step_and_pep_668s_option_comes_from_the_environment():
    """The review's case: an owner's uninstall line (`/usr/bin/python3.11 -m pip uninstall --break-system-packages -y
    X`) where the finding names no site ran with the venv's own pip, the option with it. It is the owner's step, and
    the option is the environment's to add: only where the owner is externally managed."""
    line = "/usr/bin/python3.11 -m pip uninstall --break-system-packages -y torch"
    for managed in (True, False):
        seeing = Environment("/srv/venv", "venv", "pip", user_site="/home/u/.local/lib/python3.11/site-packages",
                             base_python="/usr/bin/python3.11", base_managed=managed)
        plan = build_plan([Erring("CD702", "t", (line,), site=None)], seeing, False)
        assert plan.steps[0].user and plan.steps[0].argv == ["/usr/bin/python3.11", "-m", "pip", "uninstall"] + (
            ["--break-system-packages"] if managed else []) + ["-y", "torch"], plan.steps[0].argv
