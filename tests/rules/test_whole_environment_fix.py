"""Fixes solved for the whole environment (issue 34, family e): one cuDNN install for every framework of a
site-packages folder where their own pins allow one; else CD710 and one environment per framework, which the
frameworks' own cuDNN findings give too (never a swap of the one nvidia/cudnn folder that breaks another)."""
from __future__ import annotations

import shlex

import pytest

from packaging.requirements import Requirement

from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.remedies.environments import missing_pins
from cudnn_doctor.rules import RuleContext, evaluate
from facts_factory import TORCH_SITE, cudnn_copy, framework, real_machine, resolution
from shellcheck_kit import ld_library_path_after

CUDNN = TORCH_SITE + "/nvidia/cudnn/lib"
TF_PINS = ["nvidia-cudnn-cu12 ==8.9.7.29 ; extra == 'and-cuda'", "nvidia-cublas-cu12 ==12.3.4.1 ; extra == 'and-cuda'"]
TORCH_PINS = ['nvidia-cudnn-cu12==9.10.2.21; platform_system == "Linux" and platform_machine == "x86_64"']


def _environment(tf_pins=TF_PINS, installed="9.10.2.21"):
    facts = real_machine()
    torch = framework("torch", "2.9.1", cuda_version="12.8", cudnn_version="9.8.0", requires=TORCH_PINS,
                      consumer_library=TORCH_SITE + "/torch/lib/libtorch_cuda.so",
                      resolved_cudnn=resolution("libcudnn.so.9", CUDNN + "/libcudnn.so.9", via="RPATH"))
    tf = framework("tensorflow", "2.17.1", cuda_version="12.3", cudnn_version="8", requires=list(tf_pins),
                   extras=["and-cuda"], consumer_library=TORCH_SITE + "/tensorflow/libtensorflow_framework.so.2",
                   resolved_cudnn=resolution("libcudnn.so.8", None))
    facts.python.frameworks = [tf, torch]
    facts.python.nvidia_wheels = [{"name": "nvidia-cudnn-cu12", "version": installed, "location": TORCH_SITE}]
    facts.cudnn = [c for c in facts.cudnn if not c.directory.startswith(TORCH_SITE)]
    facts.cudnn.append(cudnn_copy(CUDNN, ".".join(installed.split(".")[:3]), "12.9", origin="pip", links=False,
                                  package="nvidia-cudnn-cu12 " + installed))
    return facts


def _findings(facts):
    findings, _ = evaluate(facts, RuleContext(compat=load_compat()))
    return findings


def _alone(fw, wheels, copies, ld_path=()):
    """A machine whose one framework sees these nvidia-* wheels (name, version) in its site, these cuDNN copies and
    this LD_LIBRARY_PATH."""
    facts = real_machine()
    facts.python.frameworks = [fw]
    facts.python.nvidia_wheels = [{"name": n, "version": v, "location": TORCH_SITE} for n, v in wheels]
    facts.cudnn = [c for c in facts.cudnn if not c.directory.startswith(TORCH_SITE)] + list(copies)
    facts.loader.ld_library_path = list(ld_path)
    return facts


def test_two_majors_in_one_folder_get_the_other_major_beside_it_from_every_finding():
    # issue 43: cuDNN 8 and 9 are other sonames, so TensorFlow 2.17's 8.9 goes beside the environment (on
    # LD_LIBRARY_PATH) and torch keeps its 9.10 in the site; no separate environments (tests/rules/
    # test_shared_environments.py holds the four cases of the issue)
    findings = _findings(_environment())
    assert not [f for f in findings if f.id == "CD710"]
    own = [f for f in findings if f.id in ("CD702", "CD704") and f.severity.value == "error"]
    assert own and all(f.remedy.commands[0].startswith("pip install --no-deps --target ") for f in own)
    assert all("-m venv" not in f.remedy.text for f in own)


def test_two_cuda_builds_of_one_major_get_one_fix_from_every_finding():
    # torch 2.9.1 (CUDA 12.8) beside a TensorFlow pinned to the CUDA 13 wheel: torch 2.9.1's cu130 build on PyTorch's
    # own index (compat's release matrix) shares it, so every finding moves torch, none swaps the one folder alone
    findings = _findings(_environment(tf_pins=["nvidia-cudnn-cu13 ==9.24.0.43 ; extra == 'and-cuda'"]))
    [conflict] = [f for f in findings if f.id == "CD710"]
    assert conflict.severity.value == "error" and "tensorflow 2.17.1" in conflict.title
    moved = conflict.remedy.commands
    assert moved[:2] == ["pip uninstall -y nvidia-cudnn-cu12",
                         'pip install "torch==2.9.1+cu130" --index-url https://download.pytorch.org/whl/cu130'], moved
    own = [f for f in findings if f.id in ("CD702", "CD704") and f.severity.value == "error"]
    assert own and all(f.remedy.commands == moved for f in own)


def test_two_cuda_builds_of_one_major_with_no_build_the_driver_runs_get_one_environment_each():
    # R570 runs CUDA 12.8 at most: no CUDA 13 build of torch runs, so one environment per framework
    from facts_factory import driver
    facts = _environment(tf_pins=["nvidia-cudnn-cu13 ==9.24.0.43 ; extra == 'and-cuda'"])
    facts.driver = driver("570.133.20", "12.8")
    findings = _findings(facts)
    [conflict] = [f for f in findings if f.id == "CD710"]
    venvs = conflict.remedy.commands
    assert venvs == ['python3.12 -m venv --upgrade-deps ~/venvs/tensorflow-2.17.1 && ~/venvs/tensorflow-2.17.1/bin/pip install '
                     '"tensorflow[and-cuda]==2.17.1"',
                     'python3.12 -m venv --upgrade-deps ~/venvs/torch-2.9.1 && ~/venvs/torch-2.9.1/bin/pip install "torch==2.9.1"']
    for command in venvs:  # each line parses as the shell and pip read it, and names one release
        words = shlex.split(command)
        assert Requirement(words[-1]).specifier
    # the frameworks' own cuDNN findings give the same environments, not a swap of the one nvidia/cudnn folder
    own = [f for f in findings if f.id in ("CD702", "CD704") and f.severity.value == "error"]
    assert own and all(f.remedy.commands == venvs for f in own)


def test_where_the_frameworks_need_environments_of_their_own_every_fix_is_that_plan():
    # draw 20261201-190 (the real loader): Paddle's in-place LD_LIBRARY_PATH line and TensorFlow's CUDA-library
    # install beside the per-framework environments; the shell line reached the new TensorFlow environment
    from facts_factory import driver
    from cudnn_doctor.remedies.acting import building_for
    from cudnn_doctor.diagnose import fix_target
    from cudnn_doctor.remedies.environments import whole_environment_fix
    from cudnn_doctor.remedies.shell import prepend_ld_path, run
    facts = _environment(tf_pins=["nvidia-cudnn-cu13 ==9.24.0.43 ; extra == 'and-cuda'"])
    facts.driver = driver("570.133.20", "12.8")
    [conflict] = [f for f in _findings(facts) if f.id == "CD710"]
    tf = facts.python.frameworks[0]
    with building_for(fix_target(facts)):
        for own in (run('pip install "nvidia-cublas-cu12==12.3.4.1"'), run(prepend_ld_path(CUDNN))):
            assert whole_environment_fix(facts, load_compat(), tf, own).commands == conflict.remedy.commands


def test_a_new_environment_takes_the_shell_s_cudnn_folders_off_in_its_activate(tmp_path):
    # draw 20261201-40 (the real loader, the new environments made in the user's shell): a folder of a CUDA 11
    # cuDNN 8.9.6 first on LD_LIBRARY_PATH beat the new TensorFlow environment's own wheel
    import subprocess
    from facts_factory import driver
    conda, toolkit = "/opt/conda/lib", "/usr/local/cuda/lib64"
    facts = _environment(tf_pins=["nvidia-cudnn-cu13 ==9.24.0.43 ; extra == 'and-cuda'"])
    facts.driver = driver("570.133.20", "12.8")
    facts.cudnn.append(cudnn_copy(conda, "8.9.6", "11.8", origin="conda", links=False))
    facts.loader.ld_library_path = [conda, toolkit]
    [conflict] = [f for f in _findings(facts) if f.id == "CD710"]
    for command in conflict.remedy.commands:
        venv = shlex.split(command)[4]  # python3.X -m venv --upgrade-deps FOLDER
        tail = command.split(" && printf ", 1)[1]
        assert tail.endswith(">> %s/bin/activate" % venv), command
        activate = tmp_path / "activate"
        subprocess.run(["sh", "-ec", "printf " + tail.replace(venv + "/bin/activate", str(activate))], check=True)
        done = subprocess.run(["sh", "-ec", '. %s; printf %%s "$LD_LIBRARY_PATH"' % activate], capture_output=True,
                              text=True, check=True, env={"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": conda + ":" +
                                                          toolkit})
        assert done.stdout == toolkit  # the cuDNN folder off, the toolkit's kept
        activate.unlink()


def test_one_release_meeting_every_pin_is_no_conflict():
    ranged = ["nvidia-cudnn-cu12>=9.1,<10 ; extra == 'and-cuda'"]
    findings = _findings(_environment(tf_pins=ranged))
    assert not [f for f in findings if f.id == "CD710"]


def test_tensorflow_missing_libraries_get_its_exact_pins():
    facts = _environment()
    tf = facts.python.frameworks[0]
    assert missing_pins(facts, tf, ["nvidia-cublas-cu12", "nvidia-cudnn-cu12"]) == [
        "nvidia-cudnn-cu12==8.9.7.29", "nvidia-cublas-cu12==12.3.4.1"]  # in its metadata's order


def test_an_older_minor_in_a_shared_environment_gets_the_whole_set():
    # torch built with 9.8 loads 9.1 (CD503): its own release goes back in the site and TensorFlow's 8.9 beside it,
    # the same fix every finding of the environment gives
    findings = _findings(_environment(installed="9.1.0.70"))
    assert not [f for f in findings if f.id == "CD710"]
    older = [f for f in findings if f.id == "CD503"]
    assert older and all(f.remedy.commands[0] == 'pip install "nvidia-cudnn-cu12==9.10.2.21"' for f in older)
    assert len({tuple(f.remedy.commands) for f in findings if f.id in ("CD503", "CD702", "CD704")}) == 1


def test_paddle_environment_links_the_unversioned_name_its_dlopen_asks_for(fix_target):
    from cudnn_doctor.remedies.environments import Need, separate_environments_fix
    paddle = framework("paddlepaddle-gpu", "2.6.2", cuda_version="11.8", cudnn_version="8.9.7",
                       consumer_library=TORCH_SITE + "/paddle/libs/libphi.so",
                       resolved_cudnn=resolution("libcudnn.so", None))
    paddle.library_search_path = [TORCH_SITE + "/paddle/libs"]
    [line] = separate_environments_fix(load_compat(), [Need(paddle, "nvidia-cudnn-cu11", 8, None)]).commands
    folder = "$(echo ~/venvs/paddlepaddle-gpu-2.6.2/lib/python3*/site-packages/nvidia/cudnn/lib)"
    assert line.endswith(" && ln -sf libcudnn.so.8 %s/libcudnn.so && echo 'export LD_LIBRARY_PATH=%s"
                         "${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}' >> ~/venvs/paddlepaddle-gpu-2.6.2/bin/activate"
                         % (folder, folder)), line


def test_a_build_newer_than_the_copy_names_the_framework_cudas_wheel_and_only_a_release_that_exists(fix_target):
    from cudnn_doctor.remedies.runtime import cudnn_not_older_than_build_fix
    facts = real_machine()
    copy = cudnn_copy("/x/pydeps/nvidia/cudnn/lib", "8.9.6", "11.8", origin="pip", links=False,
                      package="nvidia-cudnn-cu11 8.9.6.50")
    torch = framework("torch", "2.14.1", cuda_version="13.0", cudnn_version="9.24.0.43")
    text = " ".join(cudnn_not_older_than_build_fix(facts, load_compat(), torch, copy, "9.24.0.43", None).commands)
    assert "cu11" not in text  # NVIDIA made no cuDNN 9 for CUDA 11
    assert "nvidia-cudnn-cu13>=9.24.0.43" in text


def _jax_with_its_wheel_on_pythonpath(via="PYTHONPATH"):
    """JAX 0.5.3's plugin (RUNPATH into its own site's nvidia folders only), its cuDNN wheel put by
    `pip install --target /home/u/pydeps` into a PYTHONPATH folder (draws 61127/23, /113)."""
    facts = real_machine()
    jax = framework("jax-cuda12-pjrt", "0.5.3", cuda_version="12", requires=["nvidia-cudnn-cu12<10.0,>=9.1"],
                    consumer_library=TORCH_SITE + "/jax_plugins/xla_cuda12/xla_cuda_plugin.so",
                    resolved_cudnn=resolution("libcudnn.so.9", None))
    facts.python.frameworks = [jax]
    wheel = {"name": "nvidia-cudnn-cu12", "version": "9.5.1.17", "location": "/home/u/pydeps"}
    facts.python.nvidia_wheels = [dict(wheel, via=via) if via else wheel]
    return facts


def test_a_wheel_on_pythonpath_is_installed_beside_the_framework_without_pythonpath():
    # pip in the framework's environment counts the PYTHONPATH copy as installed ("Requirement already satisfied")
    # and installs nothing, so the printed fix must run pip without PYTHONPATH.
    [cd704] = [f for f in _findings(_jax_with_its_wheel_on_pythonpath()) if f.id == "CD704"]
    assert cd704.remedy.commands == ['PYTHONPATH= pip install "nvidia-cudnn-cu12<10.0,>=9.1"']
    assert cd704.remedy.text.startswith(cd704.remedy.commands[0])


def test_a_wheel_in_another_environment_changes_nothing():
    [cd704] = [f for f in _findings(_jax_with_its_wheel_on_pythonpath(via=None)) if f.id == "CD704"]
    assert cd704.remedy.commands == ['pip install "nvidia-cudnn-cu12<10.0,>=9.1"']


def test_an_older_copy_on_ld_library_path_with_nothing_behind_it_is_replaced_by_the_framework_pin():
    # draw 61127/286: JAX 0.7.2 (built with cuDNN 9.8) whose only cuDNN is a conda prefix's 9.1 on LD_LIBRARY_PATH;
    # dropping the entry alone leaves it none ("cuDNN not found"), so its own pin is installed too.
    facts = real_machine()
    conda_lib = "/opt/conda/lib"
    jax = framework("jax-cuda12-pjrt", "0.7.2", cuda_version="12", cudnn_version="9.8",
                    requires=["nvidia-cudnn-cu12<10.0,>=9.8; extra == 'with-cuda'"], extras=["with-cuda"],
                    consumer_library=TORCH_SITE + "/jax_plugins/xla_cuda12/xla_cuda_plugin.so",
                    resolved_cudnn=resolution("libcudnn.so.9", conda_lib + "/libcudnn.so.9", via="LD_LIBRARY_PATH"))
    facts.python.frameworks = [jax]
    facts.python.nvidia_wheels = []
    facts.cudnn = [c for c in facts.cudnn if not c.directory.startswith(TORCH_SITE)]
    facts.cudnn.append(cudnn_copy(conda_lib, "9.1.0", "12.4", origin="conda", links=False))
    facts.loader.ld_library_path = [conda_lib]
    [older] = [f for f in _findings(facts) if f.id == "CD503"]
    assert older.remedy.commands[1:] == ['pip install "nvidia-cudnn-cu12<10.0,>=9.8"']
    assert ld_library_path_after(older.remedy.commands, [conda_lib]) == []


def test_paddle_beside_a_cudnn_wheel_of_another_cuda_gets_the_wheel_of_its_own_cuda():
    # draws 61127/26, /143: Paddle 2.6.2 (built for CUDA 11.8, cuDNN 8.6) beside nvidia-cudnn-cu12 8.9.4; linking
    # libcudnn.so to that copy loads a cuDNN built for CUDA 12 (cudnnGetCudartVersion 12020), which Paddle refuses.
    facts = real_machine()
    paddle = framework("paddlepaddle-gpu", "2.6.2", cuda_version="11.8", cudnn_version="8.6.0",
                       consumer_library=TORCH_SITE + "/paddle/libs/libphi.so",
                       resolved_cudnn=resolution("libcudnn.so", None))
    paddle.library_search_path = [TORCH_SITE + "/paddle/libs"]
    facts.python.frameworks = [paddle]
    facts.python.nvidia_wheels = [{"name": "nvidia-cudnn-cu12", "version": "8.9.4.25", "location": TORCH_SITE}]
    facts.cudnn = [c for c in facts.cudnn if not c.directory.startswith(TORCH_SITE)]
    facts.cudnn.append(cudnn_copy(CUDNN, "8.9.4", "12.2", origin="pip", links=False,
                                  package="nvidia-cudnn-cu12 8.9.4.25"))
    [cd707] = [f for f in _findings(facts) if f.id == "CD707"]
    assert cd707.remedy.commands == [
        "pip uninstall -y nvidia-cudnn-cu12", 'pip install "nvidia-cudnn-cu11==8.*"',
        "ln -sf libcudnn.so.8 %s/libcudnn.so" % CUDNN,
        "export LD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" % CUDNN]


def test_a_damaged_wheel_the_framework_cannot_find_is_reinstalled_not_installed():
    # draw 61127/31: CuPy 13 (no RPATH) beside nvidia-cudnn-cu12 8.9.7.29 that lacks libcudnn_ops_infer.so.8; a plain
    # `pip install "nvidia-cudnn-cu12==8.*"` is "Requirement already satisfied", and the folder put on
    # LD_LIBRARY_PATH then aborts the process at the missing sub-library.
    facts = real_machine()
    cupy = framework("cupy-cuda12x", "13.3.0", cuda_version="12",
                     consumer_library=TORCH_SITE + "/cupy_backends/cuda/libs/cudnn.cpython-311-x86_64-linux-gnu.so",
                     resolved_cudnn=resolution("libcudnn.so.8", None), library_search_path=[])
    facts.python.frameworks = [cupy]
    facts.python.nvidia_wheels = [{"name": "nvidia-cudnn-cu12", "version": "8.9.7.29", "location": TORCH_SITE}]
    facts.cudnn = [c for c in facts.cudnn if not c.directory.startswith(TORCH_SITE)]
    facts.cudnn.append(cudnn_copy(CUDNN, "8.9.7", "12.2", origin="pip", links=False,
                                  package="nvidia-cudnn-cu12 8.9.7.29", sublibraries_missing=["libcudnn_ops_infer.so.8"]))
    [cd704] = [f for f in _findings(facts) if f.id == "CD704"]
    assert cd704.remedy.commands == [
        'pip install --force-reinstall --no-deps "nvidia-cudnn-cu12==8.*"',
        "export LD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" % CUDNN]


def test_a_damaged_wheel_older_than_the_pin_is_reinstalled_at_the_pin(fix_target):
    # draw 61127/59: TensorFlow 2.19 (pins ==9.3.0.75) over nvidia-cudnn-cu12 9.1.0.70 lacking libcudnn_ops.so.9;
    # CD709's reinstall at 9.1.0.70 ran after CD702's 9.3.0.75 and undid it.
    from cudnn_doctor.remedies.frameworks import cudnn_package_reinstall_fix
    facts = real_machine()
    tf = framework("tensorflow", "2.19.0", cuda_version="12.5.1", cudnn_version="9",
                   requires=["nvidia-cudnn-cu12==9.3.0.75; extra == 'and-cuda'"], extras=["and-cuda"])
    copy = cudnn_copy(CUDNN, "9.1.0", "12.4", origin="pip", links=False, package="nvidia-cudnn-cu12 9.1.0.70")
    fix = cudnn_package_reinstall_fix(facts, load_compat(), copy, CUDNN, tf)
    assert fix.commands == ['pip install --force-reinstall --no-deps "nvidia-cudnn-cu12==9.3.0.75"']
    # at a release its pin admits, the copy's own release is reinstalled
    copy.package = "nvidia-cudnn-cu12 9.3.0.75"
    assert cudnn_package_reinstall_fix(facts, load_compat(), copy, CUDNN, tf).commands == [
        'pip install --force-reinstall --no-deps "nvidia-cudnn-cu12==9.3.0.75"']


def test_an_older_own_copy_first_on_the_path_drops_every_entry_of_that_major():
    # draw 61127/66: torch 2.14.1 (built with 9.24 for CUDA 13) with a cu12 9.8 wheel whose folder is first on
    # LD_LIBRARY_PATH and a 9.5 folder after it; once 9.24 is installed, a 9.x folder left on LD_LIBRARY_PATH hands
    # the new libcudnn_graph (RUNPATH $ORIGIN) its engine libraries.
    other = "/home/u/extra/c"
    torch = framework("torch", "2.14.1", cuda_version="13.0", cudnn_version="9.24.0.43",
                      requires=['nvidia-cudnn-cu13==9.24.0.43; platform_system == "Linux"'],
                      consumer_library=TORCH_SITE + "/torch/lib/libtorch_cuda.so",
                      resolved_cudnn=resolution("libcudnn.so.9", CUDNN + "/libcudnn.so.9", via="LD_LIBRARY_PATH"))
    commands = _cd503_commands(torch, "9.8.0.87", "12.8", [CUDNN, other], cudnn_copy(
        other, "9.5.1", "12.6", origin="ld_library_path", links=False))
    # the cu12 wheel writes the same libcudnn.so.9 files: out first (uninstalled after, it would delete the new ones)
    assert commands[1:] == ["pip uninstall -y nvidia-cudnn-cu12", 'pip install "nvidia-cudnn-cu13==9.24.0.43"']
    assert ld_library_path_after(commands, [CUDNN, other]) == []


def _cd503_commands(fw, wheel, built_for, ld_path, *others):
    """CD503's commands for ``fw`` whose own site holds the nvidia-cudnn-cu12 ``wheel`` (built for CUDA
    ``built_for``) beside ``others``, with this LD_LIBRARY_PATH."""
    release = ".".join(wheel.split(".")[:3])
    own = cudnn_copy(CUDNN, release, built_for, origin="pip", links=False, package="nvidia-cudnn-cu12 " + wheel)
    facts = _alone(fw, [("nvidia-cudnn-cu12", wheel)], [own, *others], ld_path)
    [older] = [f for f in _findings(facts) if f.id == "CD503"]
    return older.remedy.commands


@pytest.mark.parametrize("via", ["PYTHONPATH", ".pth"])
def test_a_wrong_wheel_the_framework_preloads_from_pythonpath_is_removed_there(via):
    # draw 61127/16: torch 2.14.1 (CUDA 13) preloads nvidia-cudnn-cu12 9.8 from a pip --target folder on PYTHONPATH
    # (sys.path puts it first): the cu13 wheel installed beside torch is never loaded while that copy is there. A
    # folder a .pth file names comes after the site, but an old wheel's nvidia/__init__.py makes `nvidia` a regular
    # package there, which wins all the same (fix draw 301202-17: JAX kept loading it after fix)
    facts = real_machine()
    pydeps = "/home/u/pydeps"
    torch = framework("torch", "2.14.1", cuda_version="13.0", cudnn_version="9.24.0.43",
                      consumer_library=TORCH_SITE + "/torch/lib/libtorch_cuda.so",
                      resolved_cudnn=resolution("libcudnn.so.9", pydeps + "/nvidia/cudnn/lib/libcudnn.so.9",
                                                via="sys.path (torch's _preload_cuda_deps)"))
    facts.python.frameworks = [torch]
    facts.python.nvidia_wheels = [{"name": "nvidia-cudnn-cu12", "version": "9.8.0.87", "location": pydeps,
                                   "via": via}]
    facts.cudnn = [c for c in facts.cudnn if not c.directory.startswith(TORCH_SITE)]
    facts.cudnn.append(cudnn_copy(pydeps + "/nvidia/cudnn/lib", "9.8.0", "12.8", origin="pip", links=False,
                                  package="nvidia-cudnn-cu12 9.8.0.87"))
    [older] = [f for f in _findings(facts) if f.id == "CD503"]
    assert older.remedy.commands == [
        "rm -rf /home/u/pydeps/nvidia/cudnn /home/u/pydeps/nvidia_cudnn_cu12-*.dist-info",
        'PYTHONPATH= pip install "nvidia-cudnn-cu13>=9.24.0.43"' if via == "PYTHONPATH" else
        'pip install --ignore-installed "nvidia-cudnn-cu13>=9.24.0.43"']
    assert ("or take /home/u/pydeps off PYTHONPATH" if via == "PYTHONPATH" else
            "or delete the .pth file line that puts /home/u/pydeps on sys.path") in older.remedy.text


def test_an_old_wheel_on_pythonpath_ahead_of_the_sites_newer_one_is_removed_and_nothing_installed():
    # a new user's trial: JAX 0.7.2 (built with cuDNN 9.8) imports nvidia.cudnn from `pip install --target ~/pylibs
    # nvidia-cudnn-cu12==9.1.0.70` on PYTHONPATH while its own site holds 9.28; the fix was `pip install -U
    # "jax[cuda12]"` (2 GB, JAX 0.7.2 -> 0.10.2, still 9.1 after it)
    pylibs = "/home/u/pylibs"
    jax = framework("jax-cuda12-pjrt", "0.7.2", cuda_version="12", cudnn_version="9.8.0",
                    requires=["nvidia-cudnn-cu12<10.0,>=9.8"],
                    consumer_library=TORCH_SITE + "/jax_plugins/xla_cuda12/xla_cuda_plugin.so",
                    resolved_cudnn=resolution("libcudnn.so.9", pylibs + "/nvidia/cudnn/lib/libcudnn.so.9",
                                              via="sys.path (the JAX plugin's nvidia.cudnn)"))
    facts = _alone(jax, [("nvidia-cudnn-cu12", "9.28.0.42")], [
        cudnn_copy(CUDNN, "9.28.0", "12.9", origin="pip", links=False, package="nvidia-cudnn-cu12 9.28.0.42"),
        cudnn_copy(pylibs + "/nvidia/cudnn/lib", "9.1.0", "12.4", origin="pip", links=False,
                   package="nvidia-cudnn-cu12 9.1.0.70")])
    facts.python.nvidia_wheels.append({"name": "nvidia-cudnn-cu12", "version": "9.1.0.70", "location": pylibs,
                                       "via": "PYTHONPATH"})
    [older] = [f for f in _findings(facts) if f.id == "CD503"]
    assert older.remedy.commands == ["rm -rf /home/u/pylibs/nvidia/cudnn /home/u/pylibs/nvidia_cudnn_cu12-*.dist-info"]
    assert "or take /home/u/pylibs off PYTHONPATH" in older.remedy.text


def test_a_copy_for_another_cuda_first_on_ld_library_path_is_dropped_not_replaced_by_a_system_package():
    # draws 880088/3 and /18: a CUDA 13 cuDNN 9.24 folder first on LD_LIBRARY_PATH before torch's own 9.10.2 wheel
    # (CUDA 12): CD501 said `apt install libcudnn9-cuda-12`, which LD_LIBRARY_PATH would still beat.
    extra = "/home/u/extra/c"
    torch = framework("torch", "2.9.1", cuda_version="12.8", cudnn_version="9.8.0", requires=TORCH_PINS,
                      consumer_library=TORCH_SITE + "/torch/lib/libtorch_cuda.so",
                      resolved_cudnn=resolution("libcudnn.so.9", extra + "/libcudnn.so.9", via="LD_LIBRARY_PATH"))
    facts = _alone(torch, [("nvidia-cudnn-cu12", "9.10.2.21")], [
        cudnn_copy(extra, "9.24.0", "13.3", origin="ld_library_path", links=False),
        cudnn_copy(CUDNN, "9.10.2", "12.9", origin="pip", links=False, package="nvidia-cudnn-cu12 9.10.2.21")],
        [extra, CUDNN])
    [mismatch] = [f for f in _findings(facts) if f.id == "CD501" and f.evidence.get("path", "").startswith(extra)]
    assert len(mismatch.remedy.commands) == 1
    assert ld_library_path_after(mismatch.remedy.commands, [extra, CUDNN]) == [CUDNN]


def test_onnxruntime_beside_a_damaged_wheel_gets_it_reinstalled():
    # draw 880088/105: onnxruntime-gpu 1.22 beside nvidia-cudnn-cu12 9.1.0.70 lacking libcudnn_ops.so.9; ONNX
    # Runtime's own fix said `pip install "nvidia-cudnn-cu12==9.*"`, which pip counts satisfied, so the folder it then
    # put on LD_LIBRARY_PATH still held the damaged wheel (signal 6 at the missing sub-library).
    ort = framework("onnxruntime-gpu", "1.22.0", cuda_version="12", cudnn_version="9",
                    consumer_library=TORCH_SITE + "/onnxruntime/capi/libonnxruntime_providers_cuda.so",
                    resolved_cudnn=resolution("libcudnn.so.9", None))
    facts = _alone(ort, [("nvidia-cudnn-cu12", "9.1.0.70")], [
        cudnn_copy(CUDNN, "9.1.0", "12.4", origin="pip", links=False, package="nvidia-cudnn-cu12 9.1.0.70",
                   sublibraries_missing=["libcudnn_ops.so.9"])])
    [cd704] = [f for f in _findings(facts) if f.id == "CD704"]
    assert cd704.remedy.commands[:2] == [
        'pip install --force-reinstall --no-deps "nvidia-cudnn-cu12==9.*"',
        "export LD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" % CUDNN]


def test_a_damaged_wheel_of_another_cuda_is_replaced_by_the_framework_cudas_wheel(fix_target):
    # draw 880088/163: jax-cuda12 0.5.3 (pins nvidia-cudnn-cu12>=9.1,<10) beside nvidia-cudnn-cu13 9.24.0.43 lacking
    # libcudnn_graph.so.9: CD709 reinstalled the cu13 wheel, whole but still built for CUDA 13 (CD501 after it).
    from cudnn_doctor.remedies.frameworks import cudnn_package_reinstall_fix
    facts = real_machine()
    jax = framework("jax-cuda12-plugin", "0.5.3", cuda_version="12",
                    requires=['nvidia-cudnn-cu12<10.0,>=9.1; extra == "with-cuda"'])
    copy = cudnn_copy(CUDNN, "9.24.0", None, origin="pip", links=False, package="nvidia-cudnn-cu13 9.24.0.43")
    fix = cudnn_package_reinstall_fix(facts, load_compat(), copy, CUDNN, jax)
    assert fix.commands == ["pip uninstall -y nvidia-cudnn-cu13", 'pip install "nvidia-cudnn-cu12<10.0,>=9.1"']
    # its own CUDA's wheel, damaged, is still reinstalled as it is
    copy.package = "nvidia-cudnn-cu12 9.8.0.87"
    assert cudnn_package_reinstall_fix(facts, load_compat(), copy, CUDNN, jax).commands == [
        'pip install --force-reinstall --no-deps "nvidia-cudnn-cu12==9.8.0.87"']


def _tf219_beside_a_cuda13_folder(wheel, version, built_for, ld_path):
    """tensorflow 2.19 (built with 9.3, pins nvidia-cudnn-cu12==9.3.0.75) whose site holds ``wheel``, handed a CUDA 13
    cuDNN 9.24 folder on LD_LIBRARY_PATH: CD501's fix."""
    tf = framework("tensorflow", "2.19.0", cuda_version="12.5.1", cudnn_version="9",
                   requires=["nvidia-cudnn-cu12==9.3.0.75; extra == 'and-cuda'"],
                   consumer_library=TORCH_SITE + "/tensorflow/libtensorflow_framework.so.2",
                   resolved_cudnn=resolution("libcudnn.so.9", EXTRA + "/libcudnn.so.9", via="LD_LIBRARY_PATH"))
    facts = _alone(tf, [("nvidia-cudnn-cu12", wheel)], [
        cudnn_copy(CUDNN, version, built_for, origin="pip", links=False, package="nvidia-cudnn-cu12 " + wheel),
        cudnn_copy(EXTRA, "9.24.0", "13.3", origin="ld_library_path", links=False)], ld_path)
    [mismatch] = [f for f in _findings(facts) if f.id == "CD501" and f.evidence.get("path", "").startswith(EXTRA)]
    return mismatch.remedy.commands


EXTRA = "/home/u/extra/c"


def test_a_copy_for_another_cuda_on_ld_library_path_with_only_an_older_major_of_its_own_installs_its_pin():
    # draw 880088/198: only nvidia-cudnn-cu12 8.9.7.29 in its site, the CUDA 13 folder after it: CD501 counted the 8.9
    # wheel (it fits CUDA 12) as its own copy and only dropped the entry, which left it no libcudnn.so.9 at all.
    commands = _tf219_beside_a_cuda13_folder("8.9.7.29", "8.9.7", "12.2", [CUDNN, EXTRA])
    assert commands[1:] == ['pip install "nvidia-cudnn-cu12==9.3.0.75"']
    assert ld_library_path_after(commands, [CUDNN, EXTRA]) == [CUDNN]


def test_its_own_copy_older_than_its_build_does_not_serve_once_the_foreign_folder_goes():
    # draw 31337/222: a 9.1.0.70 wheel (pin forced off), the CUDA 13 folder first: CD501 only dropped the folder, and
    # TF then loaded 9.1 (CD503).
    commands = _tf219_beside_a_cuda13_folder("9.1.0.70", "9.1.0", "12.4", [EXTRA])
    assert commands[1:] == ['pip install "nvidia-cudnn-cu12==9.3.0.75"']
    assert ld_library_path_after(commands, [EXTRA]) == []


def test_onnxruntime_over_a_system_copy_for_another_cuda_gets_its_cuda_wheel_first_on_its_path():
    # draw 880088/247: onnxruntime-gpu 1.18 (CUDA 11 build) whose libcudnn.so.8 comes from /usr/local/cudnn/lib (8.9.7
    # for CUDA 12) through ld.so.cache: CD501 said `apt install libcudnn8 libcudnn8-dev`, which needs root and may
    # not beat that folder in the cache; the CUDA 11 wheel, first on LD_LIBRARY_PATH, beats the cache.
    system = "/usr/local/cudnn/lib"
    ort = framework("onnxruntime-gpu", "1.18.0", cuda_version="11.8", cudnn_version="8",
                    consumer_library=TORCH_SITE + "/onnxruntime/capi/libonnxruntime_providers_cuda.so",
                    resolved_cudnn=resolution("libcudnn.so.8", system + "/libcudnn.so.8", via="ld.so.cache"))
    facts = _alone(ort, [], [cudnn_copy(system, "8.9.7", "12.2", origin="system", links=False)])
    [mismatch] = [f for f in _findings(facts) if f.id == "CD501" and "onnxruntime-gpu 1.18.0" in f.title]
    assert mismatch.remedy.commands == [
        'pip install "nvidia-cudnn-cu11==8.9.*"',
        "export LD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" % CUDNN]


def test_an_older_own_wheel_on_ld_library_path_is_upgraded_in_place_and_its_folder_kept():
    # draw 31337/26: JAX 0.7.2 (built with 9.8) and ONNX Runtime 1.22 share a cu12 9.5.1 wheel whose folder is on
    # LD_LIBRARY_PATH; CD503 dropped that folder, and ONNX Runtime (no RPATH into it) lost its cuDNN. The pin
    # replaces the cu12 wheel in the same folder, so the folder stays.
    jax = framework("jax-cuda12-pjrt", "0.7.2", cuda_version="12", cudnn_version="9.8",
                    requires=["nvidia-cudnn-cu12<10.0,>=9.8; extra == 'with-cuda'"], extras=["with-cuda"],
                    consumer_library=TORCH_SITE + "/jax_plugins/xla_cuda12/xla_cuda_plugin.so",
                    resolved_cudnn=resolution("libcudnn.so.9", CUDNN + "/libcudnn.so.9", via="LD_LIBRARY_PATH"))
    assert _cd503_commands(jax, "9.5.1.17", "12.6", [CUDNN, "/home/u/extra/c"]) == [
        'pip install "nvidia-cudnn-cu12<10.0,>=9.8"']


def test_another_cudas_wheel_in_its_site_is_uninstalled_before_the_right_one_goes_in():
    # draw 31337/268: jax-cuda13 over nvidia-cudnn-cu12 9.5.1. Both wheels write nvidia/cudnn/lib, so installing cu13
    # over cu12 and uninstalling cu12 afterwards (CD709's fix, or the user tidying up) deletes cu13's files.
    jax = framework("jax-cuda13-pjrt", "0.7.2", cuda_version="13", cudnn_version="9.12.0.46",
                    consumer_library=TORCH_SITE + "/jax_plugins/xla_cuda13/xla_cuda_plugin.so",
                    resolved_cudnn=resolution("libcudnn.so.9", CUDNN + "/libcudnn.so.9", via="RUNPATH"))
    facts = _alone(jax, [("nvidia-cudnn-cu12", "9.5.1.17")], [
        cudnn_copy(CUDNN, "9.5.1", "12.6", origin="pip", links=False, package="nvidia-cudnn-cu12 9.5.1.17")])
    [mismatch] = [f for f in _findings(facts) if f.id == "CD501"]
    assert mismatch.remedy.commands[0] == "pip uninstall -y nvidia-cudnn-cu12"
    assert mismatch.remedy.commands[1].startswith('pip install "nvidia-cudnn-cu13')


def test_a_cudnn_it_cannot_find_goes_in_with_the_same_major_taken_off_ld_library_path():
    # draw 31337/1: torch 2.14.1 (CUDA 13) finds no libcudnn.so.9 of its own; a 9.5.1 folder for CUDA 12 is on
    # LD_LIBRARY_PATH. Its pin installed alone, the new libcudnn_graph took its engines from that folder.
    other = "/home/u/extra/c"
    torch = framework("torch", "2.14.1", cuda_version="13.0", cudnn_version="9.24.0.43",
                      requires=['nvidia-cudnn-cu13==9.24.0.43; platform_system == "Linux"'],
                      consumer_library=TORCH_SITE + "/torch/lib/libtorch_cuda.so",
                      resolved_cudnn=resolution("libcudnn.so.9", None))
    facts = _alone(torch, [], [cudnn_copy(other, "9.5.1", "12.6", origin="ld_library_path", links=False)], [other])
    [missing] = [f for f in _findings(facts) if f.id == "CD704"]
    assert missing.remedy.commands[1:] == ['pip install "nvidia-cudnn-cu13==9.24.0.43"']
    assert ld_library_path_after(missing.remedy.commands, [other, "/opt/kept"]) == ["/opt/kept"]





def test_a_tarball_folder_for_another_cuda_is_answered_with_the_frameworks_own_wheel_not_a_system_package():
    # draw 31337/145: tensorflow 2.17 (CUDA 12) handed /usr/local/cudnn/lib's 8.9.6 for CUDA 11 through ld.so.cache:
    # `apt install libcudnn8` needs root, lands in another folder, and may lose to that one in the cache; its pinned
    # wheel in its site wins through its RPATH. A distribution package's copy is replaced in place by apt.
    tarball = "/usr/local/cudnn/lib"
    for folder, first in ((tarball, 'pip install "nvidia-cudnn-cu12==8.9.7.29"'),
                          ("/usr/lib/x86_64-linux-gnu", "apt install")):
        tf = framework("tensorflow", "2.17.1", cuda_version="12.3", cudnn_version="8",
                       requires=["nvidia-cudnn-cu12==8.9.7.29; extra == 'and-cuda'"],
                       consumer_library=TORCH_SITE + "/tensorflow/libtensorflow_framework.so.2",
                       resolved_cudnn=resolution("libcudnn.so.8", folder + "/libcudnn.so.8", via="ld.so.cache"))
        facts = _alone(tf, [], [cudnn_copy(folder, "8.9.6", "11.8", origin="system", links=False)])
        [mismatch] = [f for f in _findings(facts) if f.id == "CD501" and "tensorflow" in f.title]
        assert any(first in c for c in mismatch.remedy.commands), (folder, mismatch.remedy.commands)


def test_jax_handed_an_older_system_cudnn_gets_its_own_wheel_not_a_jax_upgrade():
    # draw 271127/273: jax-cuda12 0.7.2 (built with 9.8) loading /usr/local/cudnn/lib's 9.3 through ld.so.cache:
    # `pip install -U "jax[cuda12]"` upgrades JAX itself; its own cuDNN wheel (found through its RPATH) is enough.
    system = "/usr/local/cudnn/lib"
    jax = framework("jax-cuda12-pjrt", "0.7.2", cuda_version="12", cudnn_version="9.8",
                    requires=["nvidia-cudnn-cu12<10.0,>=9.8; extra == 'with-cuda'"], extras=["with-cuda"],
                    consumer_library=TORCH_SITE + "/jax_plugins/xla_cuda12/xla_cuda_plugin.so",
                    resolved_cudnn=resolution("libcudnn.so.9", system + "/libcudnn.so.9", via="ld.so.cache"))
    facts = _alone(jax, [], [cudnn_copy(system, "9.3.0", "12.6", origin="system", links=False)])
    [older] = [f for f in _findings(facts) if f.id == "CD503"]
    assert older.remedy.commands == ['pip install "nvidia-cudnn-cu12<10.0,>=9.8"']


def test_a_separate_environment_line_runs_as_printed_and_its_variable_stays_in_that_environment(tmp_path, fix_target):
    """ONNX Runtime 1.18 built for CUDA 11 beside TensorFlow's CUDA 12 cuDNN 8 (one soname, two builds): its own
    environment gets its cuDNN and the CUDA 11 libraries the probe saw it miss. The printed line, run by bash with
    pip resolving offline from wheels built here: pip installs each named wheel, the shell that ran it keeps its
    LD_LIBRARY_PATH, and a shell that activates the new environment searches the wheels' folders first."""
    import os
    import subprocess
    import sys

    from cudnn_doctor.remedies.environments import Need, separate_environments_fix
    from fix_factory import bundled_pip_wheels, cudnn_wheel, framework_wheel, offline_pip_env

    ort = framework("onnxruntime-gpu", "1.18.0", cuda_version="11.8",
                    consumer_library=TORCH_SITE + "/onnxruntime/capi/libonnxruntime_providers_cuda.so")
    ort.library_search_path = [TORCH_SITE + "/onnxruntime/capi"]
    facts = real_machine()
    facts.machine_state["framework_libraries"] = {"onnxruntime-gpu 1.18.0": {
        "libcublas.so.11": None, "libcublasLt.so.11": None, "libcudart.so.11.0": None, "libcudnn.so.8": None}}
    [line] = separate_environments_fix(load_compat(), [Need(ort, "nvidia-cudnn-cu11", 8, None)], facts).commands
    assert '"nvidia-cublas-cu11" "nvidia-cuda-runtime-cu11"' in line and "export LD_LIBRARY_PATH" not in \
        line.split("echo '")[0], line
    links = tmp_path / "wheels"
    bundled_pip_wheels(links)  # --upgrade-deps, offline
    framework_wheel(links, "onnxruntime-gpu", "1.18.0")
    cudnn_wheel(links, "8.9.6.50", cuda_major=11)
    for project, lib in (("nvidia-cublas-cu11", "cublas"), ("nvidia-cuda-runtime-cu11", "cuda_runtime")):
        framework_wheel(links, project, "11.11.3.6", files={"nvidia/%s/lib/lib%s.so.11" % (lib, lib): "elf"})
    home = tmp_path / "home"
    home.mkdir()
    assert line.startswith("python3.12 -m venv --upgrade-deps ")  # the site's Python minor (the facts' machine's): this one's here
    line = line.replace("python3.12 ", "python%d.%d " % sys.version_info[:2], 1)
    python = os.path.dirname(sys.executable)  # `python3.X` of the line: this interpreter, so venv makes the same kind
    env = {"HOME": str(home), "PATH": "%s:/usr/bin:/bin" % python, "LD_LIBRARY_PATH": "/before",
           **offline_pip_env(links)}
    script = "%s\nprintf 'after: %%s\\n' \"$LD_LIBRARY_PATH\"\n. ~/venvs/onnxruntime-gpu-1.18.0/bin/activate\n" \
             "printf 'activated: %%s\\n' \"$LD_LIBRARY_PATH\"" % line
    done = subprocess.run(["bash", "-ec", script], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    said = dict(row.split(": ", 1) for row in done.stdout.splitlines() if ": " in row)
    assert said["after"] == "/before"  # the shell that ran the line: unchanged
    site = next((home / "venvs" / "onnxruntime-gpu-1.18.0" / "lib").glob("python3*/site-packages"))
    assert said["activated"].split(":") == [str(site / "nvidia" / f / "lib") for f in ("cudnn", "cublas", "cuda_runtime")
                                           ] + ["/before"]
    assert all((site / "nvidia" / f / "lib").is_dir() for f in ("cudnn", "cublas", "cuda_runtime"))


def test_a_cudnn_for_another_cuda_that_ld_preload_forces_on_a_framework_is_taken_off_first(fix_target):
    """realworld draw 291129-20: LD_PRELOAD forces cuDNN 9.24 for CUDA 13 on torch 2.5.1 (CUDA 12). CD501's install
    alone changes nothing the process loads first: its fix takes the preload away, then installs the build's own."""
    facts = real_machine()
    forced = cudnn_copy("/opt/p", "9.24.0", "13.3", origin="other")
    facts.cudnn.append(forced)
    facts.loader.ld_preload = ["/opt/p/libcudnn.so.9"]
    torch = facts.python.frameworks[0]
    torch.version, torch.cuda_version, torch.cudnn_version = "2.5.1", "12.4", "9.1.0"
    torch.resolved_cudnn = resolution("libcudnn.so.9", forced.path, via="LD_PRELOAD")
    [mismatch] = [f for f in _findings(facts) if f.id == "CD501" and "torch" in f.title]
    assert mismatch.severity.value == "error" and "/opt/p" in mismatch.title, mismatch.title
    assert mismatch.remedy.commands[0] in ("unset LD_PRELOAD", "export LD_PRELOAD="), mismatch.remedy.commands
    assert len(mismatch.remedy.commands) > 1  # and then the cuDNN the build needs


def test_a_preload_that_hid_a_site_cudnn_the_framework_refuses_is_taken_off_and_the_site_mended():
    """realworld draw 20261202-1: LD_PRELOAD forced 9.5.1 on JAX (built with 9.8) and TensorFlow, over a site 9.3.0
    without libcudnn_ops. `unset LD_PRELOAD` alone handed both the broken 9.3: CD711's fix goes on to the site's
    cuDNN. Where the site's copy serves the framework, taking the preload away is the whole fix."""
    facts = real_machine()
    forced = cudnn_copy("/opt/p", "9.10.0", "13.0", origin="other", found_via=["LD_PRELOAD"])
    facts.cudnn.append(forced)
    facts.loader.ld_preload = ["/opt/p/libcudnn.so.9"]
    torch = facts.python.frameworks[0]
    torch.resolved_cudnn = resolution("libcudnn.so.9", forced.path, via="LD_PRELOAD")
    [site] = [c for c in facts.cudnn if c.directory == CUDNN]

    def cd711():
        [found] = [f for f in _findings(facts) if f.id == "CD711"]
        return found.remedy.commands

    assert cd711() == ["unset LD_PRELOAD"]  # the site's 9.19 is the build's own
    assert not [f for f in _findings(facts) if f.id == "CD601"]  # a preloaded copy is loaded, not off the path
    site.version = "9.14.0"  # older than torch's build (9.19): refused once the preload is gone
    commands = cd711()
    assert commands[0] == "unset LD_PRELOAD" and any("nvidia-cudnn-cu13" in c for c in commands[1:]), commands


def test_a_framework_the_same_preload_answered_is_not_left_without_cudnn():
    """realworld draw 301130-11: LD_PRELOAD forced 9.3 on torch 2.9.1 (built with 9.10) and on ONNX Runtime 1.22,
    whose library searches only its own folder. `unset LD_PRELOAD` left ONNX Runtime no libcudnn.so.9 at all: CD711's
    fix puts the site's cuDNN on its path too."""
    facts = real_machine()
    facts.cudnn = [c for c in facts.cudnn if c.origin not in ("system", "toolkit")]  # no copy in the loader's cache
    forced = cudnn_copy("/opt/p", "9.3.0", "12.4", origin="other", found_via=["LD_PRELOAD"])
    facts.cudnn.append(forced)
    facts.loader.ld_preload = ["/opt/p/libcudnn.so.9"]
    torch = facts.python.frameworks[0]
    torch.resolved_cudnn = resolution("libcudnn.so.9", forced.path, via="LD_PRELOAD")
    ort = framework("onnxruntime-gpu", "1.22.0", cuda_version="12.4", location=torch.location,
                    consumer_library=torch.location + "/onnxruntime/capi/libonnxruntime_providers_cuda.so",
                    resolved_cudnn=resolution("libcudnn.so.9", forced.path, via="LD_PRELOAD"),
                    library_search_path=[torch.location + "/onnxruntime/capi"])
    facts.python.frameworks.append(ort)
    [found] = [f for f in _findings(facts) if f.id == "CD711"]
    assert found.remedy.commands[0] == "unset LD_PRELOAD", found.remedy.commands
    assert any("LD_LIBRARY_PATH=%s" % CUDNN in c for c in found.remedy.commands[1:]), found.remedy.commands


def test_a_damaged_site_wheel_is_mended_with_the_release_its_frameworks_share():
    """draw 20261203-17: TensorFlow 2.19 (built with 9.3) and ONNX Runtime 1.22 over a site 9.1.0.70 without
    libcudnn_graph. CD402 reinstalled 9.1.0.70 while CD503's whole-environment fix installed 9.3.0.75: one pip line
    with both pins, which pip cannot resolve. CD402's reinstall of a site's wheel now asks the same whole fix."""
    tf = framework("tensorflow", "2.19.0", cuda_version="12.5", cudnn_version="9.3.0",
                   requires=["nvidia-cudnn-cu12 ==9.3.0.75 ; extra == 'and-cuda'"], extras=["and-cuda"],
                   consumer_library=TORCH_SITE + "/tensorflow/libtensorflow_framework.so.2",
                   resolved_cudnn=resolution("libcudnn.so.9", CUDNN + "/libcudnn.so.9", via="RUNPATH"))
    ort = framework("onnxruntime-gpu", "1.22.0", cuda_version="12.4", requires=["nvidia-cudnn-cu12~=9.0; extra == 'cudnn'"],
                    resolved_cudnn=resolution("libcudnn.so.9", CUDNN + "/libcudnn.so.9", via="LD_LIBRARY_PATH"))
    site = cudnn_copy(CUDNN, "9.1.0", "12.4", origin="pip", links=False, package="nvidia-cudnn-cu12 9.1.0.70",
                      sublibraries_missing=["libcudnn_graph.so.9"])
    facts = _alone(tf, [("nvidia-cudnn-cu12", "9.1.0.70")], [site], [CUDNN])
    facts.python.frameworks.append(ort)
    commands = [c for f in _findings(facts) if f.id in ("CD402", "CD503") for c in f.remedy.commands
                if "nvidia-cudnn-cu12" in c]
    assert commands and all("9.3.0.75" in c and "9.1.0.70" not in c for c in commands), commands


def test_a_folder_of_another_release_on_ld_library_path_comes_after_the_site_with_the_layout():
    # draws 422601-1 and -22 (the real loader as oracle): the layout kept JAX's major in the site, but libcudnn_graph
    # dlopens its engines searching LD_LIBRARY_PATH first, so a conda prefix's 9.8 engines paired with the site's
    # graph and JAX found no engine after the fix. The site's folder goes ahead of it; the prefix stays on the path
    # (its other libraries serve the environment's other programs), and so does a folder of the site's own release.
    conda, same = "/opt/conda/lib", "/opt/cudnn-9.10.2/lib"
    facts = _environment()
    facts.cudnn += [cudnn_copy(conda, "9.8.0", "12.8", origin="conda", links=False),
                    cudnn_copy(same, "9.10.2", "12.9", origin="ld_library_path", links=False)]
    facts.loader.ld_library_path = [same, conda]
    own = [f for f in _findings(facts) if f.id in ("CD702", "CD704") and f.severity.value == "error"]
    assert own
    for f in own:
        after = ld_library_path_after(f.remedy.commands, [same, conda])
        site_lib = next(e for e in after if e.endswith("/nvidia/cudnn/lib"))
        assert after.index(site_lib) < after.index(conda) and same in after, f.remedy.commands


def test_the_folders_a_drop_line_takes_off_are_read_as_the_shell_reads_them():
    from cudnn_doctor.remedies import shell
    from cudnn_doctor.remedies.shell import dropped_entries as _dropped_entries
    line = shell._DROP_LD_PATH + "-e /a/b -e %s | paste -sd: -)\"" % shell.q("/c d|x")
    assert _dropped_entries(line) == ["/a/b", "/c d|x"]
    assert ld_library_path_after([line], ["/a/b", "/c d|x", "/keep"]) == ["/keep"]  # what sh does with it
    assert _dropped_entries(shell._DROP_LD_PATH + "-e '/unclosed | paste -sd: -)\"") == []  # no traceback



PRELOADED, CUDNN8 = "/home/u/extra/p", "/home/u/extra/c"


def _jax13_beside_onnxruntime_under_a_preload():
    """Draw 131314756-58: jax-cuda13 0.7.2 beside onnxruntime-gpu 1.22 (CUDA 12) in a site holding nvidia-cudnn-cu12
    9.8.0.87, whose folder is first on LD_LIBRARY_PATH (a cuDNN 8 folder after it), both under an LD_PRELOAD of a
    9.5.1."""
    plugin = TORCH_SITE + "/jax_plugins/xla_cuda13/xla_cuda_plugin.so"
    pins = ['nvidia-cudnn-cu13<10.0,>=9.12.0.46; sys_platform == "linux" and extra == "with-cuda"']
    forced = resolution("libcudnn.so.9", PRELOADED + "/libcudnn.so.9", via="LD_PRELOAD")
    # the preloaded shim's sub-libraries come from the site's folder, first on LD_LIBRARY_PATH: the site's 9.8 works
    parts = {n: resolution(n, CUDNN + "/" + n, via="LD_LIBRARY_PATH") for n in (
        "libcudnn_graph.so.9", "libcudnn_ops.so.9", "libcudnn_cnn.so.9", "libcudnn_adv.so.9",
        "libcudnn_engines_precompiled.so.9", "libcudnn_engines_runtime_compiled.so.9", "libcudnn_heuristic.so.9")}
    jax = [framework(name, "0.7.2", cuda_version="13", requires=pins, extras=["with-cuda"], consumer_library=plugin,
                     resolved_cudnn=forced if name.endswith("pjrt") else None,
                     resolved_cudnn_parts=dict(parts) if name.endswith("pjrt") else {},
                     cudnn_without_preload=resolution("libcudnn.so.9", CUDNN + "/libcudnn.so.9", via="sys.path")
                     if name.endswith("pjrt") else None,
                     library_search_path=[TORCH_SITE + "/jax_plugins/nvidia/cu13/lib", CUDNN])
           for name in ("jax-cuda13-pjrt", "jax-cuda13-plugin")]
    ort = framework("onnxruntime-gpu", "1.22.0", cuda_version="12",
                    requires=['nvidia-cudnn-cu12~=9.0; extra == "cudnn"'], extras=["cuda", "cudnn"],
                    consumer_library=TORCH_SITE + "/onnxruntime/capi/libonnxruntime_providers_cuda.so",
                    resolved_cudnn=forced, resolved_cudnn_parts=dict(parts),
                    cudnn_without_preload=resolution("libcudnn.so.9", CUDNN + "/libcudnn.so.9", via="LD_LIBRARY_PATH"),
                    library_search_path=[])
    facts = _alone(jax[0], [("nvidia-cudnn-cu12", "9.8.0.87")], [
        cudnn_copy(CUDNN, "9.8.0", "12.8", origin="pip", links=False, package="nvidia-cudnn-cu12 9.8.0.87"),
        cudnn_copy(PRELOADED, "9.5.1", "12.6", origin="other", links=False, found_via=["LD_PRELOAD"]),
        cudnn_copy(CUDNN8, "8.9.7", "12.2", origin="ld_library_path", links=False)], [CUDNN, CUDNN8])
    facts.python.frameworks = [*jax, ort]
    facts.python.pythons = [{"site": TORCH_SITE, "version": "3.11", "source": "pyvenv.cfg"}]
    facts.loader.ld_preload = [PRELOADED + "/libcudnn.so.9"]
    return facts


def test_the_sites_own_cudnn_folder_stays_on_ld_library_path_where_the_plan_keeps_its_copy():
    # draw 131314756-58: JAX's own CD501 fix dropped the site's folder; the site's plan moved JAX to its CUDA 12 build
    # and kept that copy, and ONNX Runtime (its library searches only its own folder) then found no libcudnn.so.9
    facts = _jax13_beside_onnxruntime_under_a_preload()
    errors = [f for f in _findings(facts) if f.severity.value == "error" and f.id.startswith("CD5")]
    [mismatch] = [f for f in errors if f.id == "CD501" and f.evidence.get("framework") == "jax-cuda13-pjrt"]
    assert any("jax-cuda12-plugin" in c for c in mismatch.remedy.commands), mismatch.remedy.commands
    for finding in errors:  # every error's fix leaves ONNX Runtime the site's copy, the one the plan keeps
        after = ld_library_path_after(finding.remedy.commands, [CUDNN, CUDNN8])
        assert after == [CUDNN, CUDNN8], (finding.id, finding.remedy.commands)
