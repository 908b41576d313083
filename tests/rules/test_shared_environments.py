"""Two frameworks in one environment judged by what each accepts at run time, not by their pins (issue 43, item 4):
CD710 only where no set of cuDNN libraries serves both; otherwise every finding's fix installs that set (a newer
release of the shared major in site-packages, the other major beside it on LD_LIBRARY_PATH) and says which pin pip
will warn about. The four cases of the issue, on built facts."""
from __future__ import annotations

import shlex

from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.rules import RuleContext, evaluate
from facts_factory import TORCH_SITE, cudnn_copy, framework, real_machine, resolution

SITE_LIB = TORCH_SITE + "/nvidia/cudnn/lib"
PREFIX = "/opt/torch/.venv"
TORCH291 = ['nvidia-cudnn-cu12==9.10.2.21; platform_system == "Linux" and platform_machine == "x86_64"']
TORCH231 = ['nvidia-cudnn-cu12==8.9.2.26; platform_system == "Linux" and platform_machine == "x86_64"']
TF219 = ["nvidia-cudnn-cu12==9.3.0.75; extra == \"and-cuda\""]
TF217 = ["nvidia-cudnn-cu12==8.9.7.29; extra == \"and-cuda\""]


def _torch(version, built, pins, installed_major):
    """torch whose libtorch_cuda.so asks for libcudnn.so.N through its RPATH into the site's nvidia/cudnn."""
    major = int(built.split(".")[0])
    found = SITE_LIB + "/libcudnn.so.%d" % major if installed_major == major else None
    return framework("torch", version, cuda_version="12.8" if major == 9 else "12.1", cudnn_version=built,
                     requires=pins, consumer_library=TORCH_SITE + "/torch/lib/libtorch_cuda.so",
                     resolved_cudnn=resolution("libcudnn.so.%d" % major, found, via="RPATH"),
                     library_search_path=[TORCH_SITE + "/torch/lib", SITE_LIB])


def _tensorflow(version, major, pins, installed_major):
    found = SITE_LIB + "/libcudnn.so.%d" % major if installed_major == major else None
    return framework("tensorflow", version, cuda_version="12.3" if major == 8 else "12.5", cudnn_version=str(major),
                     requires=pins, extras=["and-cuda"],
                     consumer_library=TORCH_SITE + "/tensorflow/libtensorflow_framework.so.2",
                     resolved_cudnn=resolution("libcudnn.so.%d" % major, found, via="RUNPATH"),
                     library_search_path=[TORCH_SITE + "/tensorflow", SITE_LIB])


def _plain_path(name, version, major, library):
    """ONNX Runtime, CuPy 13: the library searches only its own folder ($ORIGIN), never nvidia/cudnn."""
    return framework(name, version, cuda_version="12", cudnn_version=None,
                     consumer_library=TORCH_SITE + "/" + library,
                     resolved_cudnn=resolution("libcudnn.so.%d" % major, None),
                     library_search_path=[TORCH_SITE + "/" + library.rsplit("/", 1)[0]])


def _environment(frameworks, installed):
    facts = real_machine()
    facts.python.frameworks = list(frameworks)
    facts.python.nvidia_wheels = [{"name": "nvidia-cudnn-cu12", "version": installed, "location": TORCH_SITE}]
    facts.cudnn = [cudnn_copy(SITE_LIB, ".".join(installed.split(".")[:3]), "12.9", origin="pip", links=False,
                              package="nvidia-cudnn-cu12 " + installed)]
    facts.loader.ld_library_path = []
    return facts


def _findings(facts):
    findings, _ = evaluate(facts, RuleContext(compat=load_compat()))
    return findings


def _errors(findings):
    return [f for f in findings if f.severity.value == "error" and f.id.startswith(("CD5", "CD7"))]


def test_tf_219_beside_torch_291_runs_with_torchs_cudnn_and_is_left_alone():
    # torch's pin (9.10.2.21) installed last: TensorFlow built with 9.3 runs with 9.10 (XLA: same major, newer minor)
    facts = _environment([_tensorflow("2.19.0", 9, TF219, 9), _torch("2.9.1", "9.8.0", TORCH291, 9)], "9.10.2.21")
    findings = _findings(facts)
    assert not [f for f in findings if f.id == "CD710"] and not _errors(findings)
    [pin] = [f for f in findings if f.id == "CD702"]  # pip check's complaint, said as a warning
    # it changes nothing: pip's check is named, not run (it exits 1 on the pins this leaves: draw 20261201-151)
    assert pin.severity.value == "warning" and pin.remedy.commands == []
    assert pin.remedy.text.startswith("leave the environment's cuDNN as it is")
    assert "pip's own check keeps reporting tensorflow 2.19.0 requires nvidia-cudnn-cu12==9.3.0.75" in pin.remedy.text


def test_tf_219_installed_last_gets_torchs_release_for_both_and_the_pin_warning_named():
    # TensorFlow's pin (9.3.0.75) installed last: torch built with 9.8 refuses 9.3 (CD503); 9.10.2.21 serves both
    facts = _environment([_tensorflow("2.19.0", 9, TF219, 9), _torch("2.9.1", "9.8.0", TORCH291, 9)], "9.3.0.75")
    findings = _findings(facts)
    assert not [f for f in findings if f.id == "CD710"]
    errors = _errors(findings)
    assert errors and {f.id for f in errors} <= {"CD503", "CD702"}
    for f in errors:
        assert f.remedy.commands == ['pip install "nvidia-cudnn-cu12==9.10.2.21"'], f.remedy.commands
        assert "pip will warn that tensorflow 2.19.0 requires nvidia-cudnn-cu12==9.3.0.75" in f.remedy.text
        assert "-m venv" not in f.remedy.text


def test_tf_217_beside_torch_291_gets_cudnn_8_beside_the_environment():
    # cuDNN 8 (TensorFlow 2.17) and 9 (torch 2.9.1) are other sonames: 8.9.7.29 in a folder beside the site, each of
    # its files linked into the site's nvidia/cudnn/lib, which TensorFlow's RUNPATH searches: no variable, so a shell
    # that never activates the environment gets it too (realworld draws 291129-16, -31)
    facts = _environment([_tensorflow("2.17.1", 8, TF217, 9), _torch("2.9.1", "9.8.0", TORCH291, 9)], "9.10.2.21")
    findings = _findings(facts)
    assert not [f for f in findings if f.id == "CD710"]
    errors = _errors(findings)
    assert errors and all(f.title.startswith("tensorflow") for f in errors)
    folder = PREFIX + "/cudnn8"
    names = ["libcudnn.so.8"] + list(load_compat().cudnn_layout(8)["linux_sublibraries"])
    site_lib = facts.python.frameworks[0].location + "/nvidia/cudnn/lib"
    for f in errors:
        assert f.remedy.commands == [
            'pip install --no-deps --target %s "nvidia-cudnn-cu12==8.9.7.29"' % folder] + [
            "ln -sf %s/nvidia/cudnn/lib/%s %s/%s" % (folder, n, site_lib, n) for n in names]
        assert "pip will warn that tensorflow 2.17.1 requires nvidia-cudnn-cu12==8.9.7.29" in f.remedy.text
        for command in f.remedy.commands:
            shlex.split(command)


def test_tf_217_installed_last_puts_torchs_release_back_in_the_site_first():
    facts = _environment([_tensorflow("2.17.1", 8, TF217, 8), _torch("2.9.1", "9.8.0", TORCH291, 8)], "8.9.7.29")
    errors = _errors(_findings(facts))
    assert errors
    for f in errors:
        assert f.remedy.commands[0] == 'pip install "nvidia-cudnn-cu12==9.10.2.21"'
        assert f.remedy.commands[1].startswith("pip install --no-deps --target %s/cudnn8 " % PREFIX)


def test_onnxruntime_119_beside_torch_231_gets_cudnn_9_on_its_path():
    ort = _plain_path("onnxruntime-gpu", "1.19.0", 9, "onnxruntime/capi/libonnxruntime_providers_cuda.so")
    facts = _environment([ort, _torch("2.3.1", "8.9.2", TORCH231, 8)], "8.9.2.26")
    findings = _findings(facts)
    assert not [f for f in findings if f.id == "CD710"]
    [unresolved] = [f for f in _errors(findings) if f.id == "CD704"]
    install, export = unresolved.remedy.commands
    assert install.startswith('pip install --no-deps --target %s/cudnn9 "nvidia-cudnn-cu12==9.' % PREFIX)
    assert export.startswith("export LD_LIBRARY_PATH=%s/cudnn9/nvidia/cudnn/lib" % PREFIX)
    assert "pip will warn" not in unresolved.remedy.text  # ONNX Runtime 1.19 pins no cuDNN wheel


def test_cupy_136_beside_torch_291_gets_cudnn_8_on_its_path():
    cupy = _plain_path("cupy-cuda12x", "13.6.0", 8, "cupy_backends/cuda/libs/cudnn.cpython-312-x86_64-linux-gnu.so")
    facts = _environment([cupy, _torch("2.9.1", "9.8.0", TORCH291, 9)], "9.10.2.21")
    findings = _findings(facts)
    assert not [f for f in findings if f.id == "CD710"]
    errors = _errors(findings)
    assert errors and all(f.title.startswith("cupy") for f in errors)
    for f in errors:
        assert f.remedy.commands[0].startswith('pip install --no-deps --target %s/cudnn8 "nvidia-cudnn-cu12==8.' % (
            PREFIX))


def test_torch_for_cuda_13_beside_tensorflow_for_cuda_12_moves_to_its_releases_cu126_build():
    # nvidia-cudnn-cu12 and -cu13 both ship libcudnn.so.9: one process loads one. TensorFlow has one CUDA build per
    # release; torch 2.14.1 has a cu126 build on PyTorch's own index (compat's release matrix: cuDNN 9.10.2.21), which
    # TensorFlow (built with 9.3) runs with too
    torch13 = framework("torch", "2.14.1", cuda_version="13.0", cudnn_version="9.24.0",
                        requires=['nvidia-cudnn-cu13==9.24.0.43; platform_system == "Linux"'],
                        consumer_library=TORCH_SITE + "/torch/lib/libtorch_cuda.so",
                        resolved_cudnn=resolution("libcudnn.so.9", SITE_LIB + "/libcudnn.so.9", via="RPATH"))
    facts = _environment([_tensorflow("2.19.0", 9, TF219, 9), torch13], "9.3.0.75")
    [conflict] = [f for f in _findings(facts) if f.id == "CD710"]
    assert "nvidia-cudnn-cu12 and nvidia-cudnn-cu13 both ship libcudnn.so.9" in conflict.title
    # TensorFlow loads the 9.3 wheel it pins and works: named, but not with its release, which would make the finding
    # about it (draws 811739-4 and -10: the real loader said the named-but-working framework works)
    assert conflict.title.startswith("torch 2.14.1 and tensorflow cannot share"), conflict.title
    assert conflict.remedy.commands == [
        'pip install "torch==2.14.1+cu126" --index-url https://download.pytorch.org/whl/cu126',
        'pip install "nvidia-cudnn-cu12==9.10.2.21"'], conflict.remedy.commands
    assert "build for CUDA 12.6 on PyTorch's own index" in conflict.detail


def test_two_cuda_builds_of_one_major_with_no_other_build_still_need_separate_environments():
    # ONNX Runtime 1.18 (CUDA 11, cuDNN 8 for CUDA 11) beside TensorFlow 2.17 (cuDNN 8 for CUDA 12): PyPI has one CUDA
    # build of each release, so one environment per framework
    ort = _plain_path("onnxruntime-gpu", "1.18.0", 8, "onnxruntime/capi/libonnxruntime_providers_cuda.so")
    ort.cuda_version = "11.8"
    facts = _environment([ort, _tensorflow("2.17.1", 8, TF217, 8)], "8.9.7.29")
    [conflict] = [f for f in _findings(facts) if f.id == "CD710"]
    assert all(c.startswith("python3.12 -m venv --upgrade-deps ~/venvs/") for c in conflict.remedy.commands), conflict.remedy.commands
    assert "Nothing else serves them all" in conflict.detail


def test_a_release_no_framework_pins_is_the_newest_with_a_wheel_of_its_project():
    # ONNX Runtime 1.18 (CUDA 11, cuDNN 8; no pin) beside torch 2.9.1: NVIDIA built cuDNN 8.9.7 for CUDA 11, but
    # PyPI's nvidia-cudnn-cu11 8.x ends at 8.9.6, so the folder beside the environment gets 8.9.6
    ort = _plain_path("onnxruntime-gpu", "1.18.0", 8, "onnxruntime/capi/libonnxruntime_providers_cuda.so")
    ort.cuda_version = "11.8"
    facts = _environment([ort, _torch("2.9.1", "9.8.0", TORCH291, 9)], "9.10.2.21")
    [unresolved] = [f for f in _errors(_findings(facts)) if f.id == "CD704"]
    assert unresolved.remedy.commands[0] == (
        'pip install --no-deps --target %s/cudnn8 "nvidia-cudnn-cu11==8.9.6.*"' % PREFIX)


def test_a_lower_bound_names_no_release_the_newest_wheel_of_the_major_does():
    # JAX 0.7.2's plugin pins nvidia-cudnn-cu12>=9.8,<10.0: `==9.8` would match no wheel (draw 43/4: "No matching
    # distribution found for nvidia-cudnn-cu12==9.8"); TensorFlow 2.17's 8.9.7.29 installed last holds the site
    jax = framework("jax-cuda12-pjrt", "0.7.2", cuda_version="12", requires=["nvidia-cudnn-cu12<10.0,>=9.8"],
                    consumer_library=TORCH_SITE + "/jax_plugins/xla_cuda12/xla_cuda_plugin.so",
                    resolved_cudnn=resolution("libcudnn.so.9", None),
                    library_search_path=[TORCH_SITE + "/jax_plugins/xla_cuda12", SITE_LIB])
    facts = _environment([_tensorflow("2.17.1", 8, TF217, 8), jax], "8.9.7.29")
    [unresolved] = [f for f in _errors(_findings(facts)) if f.id == "CD704"]
    install = unresolved.remedy.commands[0]
    assert install.startswith('pip install "nvidia-cudnn-cu12==9.') and install.endswith('.*"'), install
    assert unresolved.remedy.commands[1].startswith("pip install --no-deps --target %s/cudnn8 " % PREFIX)


def _jax12_beside_torch13(**machine):
    """JAX 0.7.2's CUDA 12 plugin beside torch 2.14.1 (CUDA 13, pins nvidia-cudnn-cu13 9.24.0.43, installed): one
    soname from two CUDA builds. The plugin's pins are its real METADATA's (the wheel index holds them)."""
    torch13 = framework("torch", "2.14.1", cuda_version="13.0", cudnn_version="9.24.0",
                        requires=['nvidia-cudnn-cu13==9.24.0.43; platform_system == "Linux"'],
                        consumer_library=TORCH_SITE + "/torch/lib/libtorch_cuda.so",
                        resolved_cudnn=resolution("libcudnn.so.9", SITE_LIB + "/libcudnn.so.9", via="RPATH"),
                        library_search_path=[TORCH_SITE + "/torch/lib", SITE_LIB])
    plugin = TORCH_SITE + "/jax_plugins/xla_cuda12/xla_cuda_plugin.so"
    pins = ['nvidia-cudnn-cu12<10.0,>=9.8; sys_platform == "linux" and extra == "with-cuda"']
    jax = [framework(name, "0.7.2", cuda_version="12", requires=pins, extras=["with-cuda"], consumer_library=plugin,
                     resolved_cudnn=resolution("libcudnn.so.9", SITE_LIB + "/libcudnn.so.9", via="sys.path")
                     if name.endswith("pjrt") else None)
           for name in ("jax-cuda12-pjrt", "jax-cuda12-plugin")]
    facts = _environment([*jax, torch13], "9.24.0.43")
    facts.python.nvidia_wheels = [{"name": "nvidia-cudnn-cu13", "version": "9.24.0.43", "location": TORCH_SITE}]
    facts.python.pythons = [{"site": TORCH_SITE, "version": "3.11", "source": "pyvenv.cfg"}]
    for key, value in machine.items():
        setattr(facts, key, value)
    return facts


def test_jax_for_cuda_12_beside_torch_for_cuda_13_moves_to_its_releases_cuda_13_build():
    # The same JAX release, built for CUDA 13 (PyPI has jax-cuda13-plugin 0.7.2 for Python 3.11): its cuDNN wheel is
    # torch's, so both run in the environment the user already has; nothing else changes
    from cudnn_doctor.knowledge.wheel_index import Node, load_wheel_index
    [conflict] = [f for f in _findings(_jax12_beside_torch13()) if f.id == "CD710"]
    assert conflict.remedy.commands[:2] == [
        "pip uninstall -y jax-cuda12-pjrt jax-cuda12-plugin",
        'pip install "jax-cuda13-pjrt==0.7.2" "jax-cuda13-plugin[with-cuda]==0.7.2"'], conflict.remedy.commands
    assert "jax 0.7.2 also has a build for CUDA 13 on PyPI" in conflict.detail
    assert "jax-cuda13-pjrt 0.7.2 runs with cuDNN 9.24.0.43" in conflict.remedy.text
    index, node = load_wheel_index(), Node("3.11", "x86_64", "2.36")
    for project in ("jax-cuda13-pjrt", "jax-cuda13-plugin"):  # the releases it names exist for this node
        assert index.installable(project, "0.7.2", node) is None


def test_a_damaged_site_copy_is_reinstalled_after_a_framework_moves_to_another_cuda_build():
    # draw 301202-0: JAX's build for the other CUDA swapped in, the site's cuDNN kept, but that copy lacked
    # libcudnn_ops: the route through the rebuild never reinstalled it, and torch and JAX died (signal 6) after fix
    facts = _jax12_beside_torch13()
    facts.cudnn[0].files = [f for f in facts.cudnn[0].files if not f.name.startswith("libcudnn_ops")]
    for fid in ("CD710", "CD402"):
        commands = [f for f in _findings(facts) if f.id == fid][0].remedy.commands
        assert commands[:3] == [
            "pip uninstall -y jax-cuda12-pjrt jax-cuda12-plugin",
            'pip install "jax-cuda13-pjrt==0.7.2" "jax-cuda13-plugin[with-cuda]==0.7.2"',
            'pip install --force-reinstall --no-deps "nvidia-cudnn-cu13==9.24.0.43"'], (fid, commands)


def test_no_cuda_13_build_for_a_driver_that_cannot_run_it_or_a_gpu_it_does_not_cover():
    # R570 runs CUDA 12.8 at most, and JAX's CUDA 13 build documents R580; a GTX 1080 (6.1) is below its 7.5: torch
    # moves to its cu126 build instead (sm_60 cubins run on 6.1). A Tesla K80 (3.7) neither runs: one environment per
    # framework
    from facts_factory import driver, gpu
    for machine in ({"driver": driver("570.133.20", "12.8")}, {"gpus": [gpu(name="NVIDIA GeForce GTX 1080", cc="6.1")]}):
        [conflict] = [f for f in _findings(_jax12_beside_torch13(**machine)) if f.id == "CD710"]
        # the cuDNN wheel for CUDA 13 goes first: the cu126 build's own wheel writes the same files
        assert conflict.remedy.commands[:2] == [
            "pip uninstall -y nvidia-cudnn-cu13",
            'pip install "torch==2.14.1+cu126" --index-url https://download.pytorch.org/whl/cu126'
        ], (machine, conflict.remedy.commands)
    [conflict] = [f for f in _findings(_jax12_beside_torch13(gpus=[gpu(name="Tesla K80", cc="3.7")])) if f.id == "CD710"]
    assert all(c.startswith("python3.12 -m venv --upgrade-deps ~/venvs/") for c in conflict.remedy.commands), conflict.remedy.commands
    assert "Nothing else serves them all" in conflict.detail


def test_a_damaged_site_copy_the_layout_keeps_is_reinstalled_before_the_other_major_goes_beside():
    # torch 2.9.1's 9.10.2.21 lacks libcudnn_engines_precompiled.so.9 (a file deleted) beside ONNX Runtime 1.18 (cuDNN
    # 8): the layout keeps 9.10.2.21 in the site, so it alone would install nothing there (draw 913377-70: torch still
    # lacked the engine after the fix)
    ort = _plain_path("onnxruntime-gpu", "1.18.0", 8, "onnxruntime/capi/libonnxruntime_providers_cuda.so")
    ort.cuda_version = "11.8"
    torch = _torch("2.9.1", "9.8.0", TORCH291, 9)
    torch.resolved_cudnn_parts = {
        "libcudnn_graph.so.9": resolution("libcudnn_graph.so.9", SITE_LIB + "/libcudnn_graph.so.9", via="RPATH"),
        "libcudnn_engines_precompiled.so.9": resolution("libcudnn_engines_precompiled.so.9", None)}
    facts = _environment([ort, torch], "9.10.2.21")
    facts.cudnn[0].files = [f for f in facts.cudnn[0].files if "engines_precompiled" not in f.name]
    [damaged] = [f for f in _findings(facts) if f.id == "CD709"]
    commands = damaged.remedy.commands
    assert commands[0] == 'pip install --force-reinstall --no-deps "nvidia-cudnn-cu12==9.10.2.21"', commands
    assert commands[1].startswith("pip install --no-deps --target %s/cudnn8 " % PREFIX), commands


def test_a_damaged_site_copy_is_reinstalled_at_the_release_the_layout_keeps_not_at_a_pin():
    # TensorFlow 2.18 pins nvidia-cudnn-cu12==9.3.0.75 (and accepts the 9.8.0.87 installed) beside CuPy 13.3 (cuDNN 8);
    # the site's 9.8.0.87 lacks libcudnn_engines_precompiled.so.9. TensorFlow's own fix reinstalls its pin, which the
    # layout does not keep, so the repair was dropped (draw 20261204-17: CD709 after the fix): the kept release is
    # reinstalled whole instead
    cupy = _plain_path("cupy-cuda12x", "13.3.0", 8, "cupy_backends/cuda/libs/libcupy_cudnn.so")
    tf = _tensorflow("2.18.0", 9, ['nvidia-cudnn-cu12==9.3.0.75; extra == "and-cuda"'], 9)
    tf.resolved_cudnn_parts = {
        "libcudnn_graph.so.9": resolution("libcudnn_graph.so.9", SITE_LIB + "/libcudnn_graph.so.9", via="RUNPATH"),
        "libcudnn_engines_precompiled.so.9": resolution("libcudnn_engines_precompiled.so.9", None)}
    facts = _environment([cupy, tf], "9.8.0.87")
    facts.cudnn[0].files = [f for f in facts.cudnn[0].files if "engines_precompiled" not in f.name]
    for fid in ("CD709", "CD402"):
        [damaged] = [f for f in _findings(facts) if f.id == fid]
        commands = damaged.remedy.commands
        assert commands[0] == 'pip install --force-reinstall --no-deps "nvidia-cudnn-cu12==9.8.0.87"', (fid, commands)
        assert commands[1].startswith("pip install --no-deps --target %s/cudnn8 " % PREFIX), (fid, commands)


def test_a_wheel_of_the_major_linked_in_from_beside_is_uninstalled_first():
    # nvidia-cudnn-cu11 8.9.6.50 in the site beside TensorFlow 2.15 (pins cu12 8.9.4.25) and JAX 0.7.2 (cuDNN 9): the
    # cuDNN 8 files linked into the site's folder from beside would replace the cu11 wheel's own libcudnn.so.8, and
    # pip's record of it would be false (draw 913377-43: CD712 after the fix)
    jax = framework("jax-cuda12-pjrt", "0.7.2", cuda_version="12", requires=["nvidia-cudnn-cu12<10.0,>=9.8"],
                    consumer_library=TORCH_SITE + "/jax_plugins/xla_cuda12/xla_cuda_plugin.so",
                    resolved_cudnn=resolution("libcudnn.so.9", None),
                    library_search_path=[TORCH_SITE + "/jax_plugins/xla_cuda12", SITE_LIB])
    tf = _tensorflow("2.15.1", 8, ["nvidia-cudnn-cu12==8.9.4.25; extra == \"and-cuda\""], 8)
    facts = _environment([tf, jax], "8.9.6.50")
    facts.python.nvidia_wheels = [{"name": "nvidia-cudnn-cu11", "version": "8.9.6.50", "location": TORCH_SITE}]
    [unresolved] = [f for f in _errors(_findings(facts)) if f.id == "CD704"]
    commands = unresolved.remedy.commands
    assert commands[0] == "pip uninstall -y nvidia-cudnn-cu11", commands
    assert commands[1].startswith('pip install "nvidia-cudnn-cu12==9.'), commands
    assert commands[2] == 'pip install --no-deps --target %s/cudnn8 "nvidia-cudnn-cu12==8.9.4.25"' % PREFIX, commands
    assert any(c.startswith("ln -sf ") and c.endswith(SITE_LIB + "/libcudnn.so.8") for c in commands), commands


def test_what_a_build_installs_is_read_from_pypis_metadata_from_its_recipe():
    # jax[cuda13]==0.7.2 pins jaxlib and jax-cuda13-plugin[with-cuda] to the release, and the plugin its pjrt; CuPy's
    # recipe is the project itself (cupy-cuda<M>x): the real wheel index (compat/wheels.json) decides both
    from cudnn_doctor.knowledge.wheel_index import Node, load_wheel_index
    from cudnn_doctor.remedies.environment_rebuild import _own_projects
    compat, index, node = load_compat(), load_wheel_index(), Node("3.11", "x86_64", "2.36")
    [jax13] = [b for b in compat.framework_builds("jax") if b.release == "0.7.2" and b.cuda == "13"]
    assert _own_projects(index, compat, jax13, node) == {
        "jax": "jax[cuda13]==0.7.2", "jaxlib": "jaxlib==0.7.2",
        "jax-cuda13-plugin": "jax-cuda13-plugin[with-cuda]==0.7.2", "jax-cuda13-pjrt": "jax-cuda13-pjrt==0.7.2"}
    [cupy13] = [b for b in compat.framework_builds("cupy") if b.release == "14.2.0" and b.cuda == "13"]
    assert _own_projects(index, compat, cupy13, node) == {"cupy-cuda13x": "cupy-cuda13x==14.2.0"}


def test_the_ld_library_path_entry_of_an_older_copy_stays_in_the_whole_environment_fix():
    # TensorFlow 2.19 (built with 9.3) beside JAX loads a conda prefix's cuDNN 9.1 through LD_LIBRARY_PATH: the shared
    # layout installs the site's release, and the entry that beats it goes too (draw 20261129-32: 9.1 still loaded)
    conda_lib = "/opt/conda/lib"
    tf = _tensorflow("2.19.0", 9, TF219, 9)
    tf.resolved_cudnn = resolution("libcudnn.so.9", conda_lib + "/libcudnn.so.9", via="LD_LIBRARY_PATH")
    jax = framework("jax-cuda12-pjrt", "0.7.2", cuda_version="12", requires=["nvidia-cudnn-cu12<10.0,>=9.8"],
                    consumer_library=TORCH_SITE + "/jax_plugins/xla_cuda12/xla_cuda_plugin.so",
                    resolved_cudnn=resolution("libcudnn.so.9", SITE_LIB + "/libcudnn.so.9"),
                    library_search_path=[TORCH_SITE + "/jax_plugins/xla_cuda12", SITE_LIB])
    facts = _environment([tf, jax], "9.10.2.21")
    facts.cudnn.append(cudnn_copy(conda_lib, "9.1.0", "12.4", origin="conda", links=False))
    facts.loader.ld_library_path = [conda_lib]
    [older] = [f for f in _findings(facts) if f.id == "CD503"]
    assert any("grep -vxF -e %s" % conda_lib in c for c in older.remedy.commands), older.remedy.commands


def test_the_other_major_the_fix_put_beside_is_no_foreign_copy_and_no_toolkit_mismatch():
    # after `fix` gave CuPy 13.3 (cuDNN 8) its folder beside JAX 0.7.2's site (cuDNN 9.28), with the CUDA 13.0 toolkit
    # on the machine: CD504 called that folder a foreign copy beating CuPy's "own cuDNN 9.28" (another major) and
    # would drop it; CD501 judged it against the toolkit and said `apt install libcudnn9-cuda-13` (a new user's trial)
    beside = PREFIX + "/cudnn8/nvidia/cudnn/lib"
    cupy = _plain_path("cupy-cuda12x", "13.3.0", 8, "cupy_backends/cuda/libs/libcupy_cudnn.so")
    cupy.resolved_cudnn = resolution("libcudnn.so.8", beside + "/libcudnn.so.8", via="LD_LIBRARY_PATH")
    jax = framework("jax-cuda12-pjrt", "0.7.2", cuda_version="12", cudnn_version="9.8.0",
                    requires=["nvidia-cudnn-cu12<10.0,>=9.8"],
                    consumer_library=TORCH_SITE + "/jax_plugins/xla_cuda12/xla_cuda_plugin.so",
                    resolved_cudnn=resolution("libcudnn.so.9", SITE_LIB + "/libcudnn.so.9", via="RPATH"),
                    library_search_path=[TORCH_SITE + "/jax_plugins/xla_cuda12", SITE_LIB])
    facts = _environment([cupy, jax], "9.28.0.42")
    facts.cudnn.append(cudnn_copy(beside, "8.9.7", "12.2", origin="ld_library_path", links=False))
    facts.loader.ld_library_path = [beside]
    assert facts.toolkits and facts.toolkits[0].version == "13.0"
    about_beside = [(f.id, f.title) for f in _findings(facts) if f.id in ("CD501", "CD504") and "8.9.7" in f.title]
    assert about_beside == []


def test_a_site_wheel_for_another_cuda_is_not_a_frameworks_own_copy():
    # ONNX Runtime 1.18.0 (its CUDA 11 build) loads a cuDNN 8.9.6 tarball for CUDA 11 through LD_LIBRARY_PATH, in a
    # site whose cuDNN 8 wheel is TensorFlow's nvidia-cudnn-cu12: CD504 called that wheel "its own" and said to drop
    # the one copy ONNX Runtime can use (draw 301301-51); TensorFlow (CUDA 12) is still told
    tarball = "/opt/cudnn-linux-x86_64-8.9.6.50_cuda11-archive/lib"
    ort = _plain_path("onnxruntime-gpu", "1.18.0", 8, "onnxruntime/capi/libonnxruntime_providers_cuda.so")
    ort.cuda_version = "11.8"
    ort.resolved_cudnn = resolution("libcudnn.so.8", tarball + "/libcudnn.so.8", via="LD_LIBRARY_PATH")
    tf = _tensorflow("2.17.1", 8, TF217, 8)
    tf.resolved_cudnn = resolution("libcudnn.so.8", tarball + "/libcudnn.so.8", via="LD_LIBRARY_PATH")
    facts = _environment([ort, tf], "8.9.7.29")
    facts.cudnn[0].cuda_version = "12.2"
    facts.cudnn.append(cudnn_copy(tarball, "8.9.6", "11.8", origin="ld_library_path", links=False))
    facts.loader.ld_library_path = [tarball]
    shadowed = [f.evidence["framework"] for f in _findings(facts) if f.id == "CD504"]
    assert shadowed == ["tensorflow"], shadowed


def test_another_cudas_wheel_of_the_major_a_framework_gets_installed_goes_first():
    # CuPy 13.3 (CUDA 12) with only nvidia-cudnn-cu11 8.9.6.50 in its site (a uv venv in a new user's trial): the fix
    # installs nvidia-cudnn-cu12 8.* into the same nvidia/cudnn folder; the cu11 wheel stayed on top of it, and
    # uninstalling it later deleted CuPy's cuDNN
    cupy = _plain_path("cupy-cuda12x", "13.3.0", 8, "cupy_backends/cuda/libs/libcupy_cudnn.so")
    facts = _environment([cupy], "8.9.6.50")
    facts.python.nvidia_wheels = [{"name": "nvidia-cudnn-cu11", "version": "8.9.6.50", "location": TORCH_SITE}]
    facts.cudnn[0] = cudnn_copy(SITE_LIB, "8.9.6", "11.8", origin="pip", links=False,
                                package="nvidia-cudnn-cu11 8.9.6.50")
    [unresolved] = [f for f in _errors(_findings(facts)) if f.id == "CD704"]
    commands = unresolved.remedy.commands
    assert commands[0] == "pip uninstall -y nvidia-cudnn-cu11", commands
    assert commands[1].startswith('pip install "nvidia-cudnn-cu12==8.'), commands


def test_a_damaged_wheel_gets_one_reinstall_from_cd402_and_cd709():
    # draw 20261206-1: TensorFlow 2.19 (pins 9.3.0.75) loads the site's 9.5.1.17, which lacks
    # libcudnn_engines_precompiled.so.9: CD709 reinstalled at the pin, CD402 at 9.5.1.17, and fix's one pip line
    # asked for both (ResolutionImpossible)
    tf = _tensorflow("2.19.0", 9, ['nvidia-cudnn-cu12==9.3.0.75; extra == "and-cuda"'], 9)
    tf.resolved_cudnn_parts = {
        "libcudnn_engines_precompiled.so.9": resolution("libcudnn_engines_precompiled.so.9", None)}
    facts = _environment([tf], "9.5.1.17")
    facts.cudnn[0].files = [f for f in facts.cudnn[0].files if "engines_precompiled" not in f.name]
    fixes = {f.id: f.remedy.commands for f in _findings(facts) if f.id in ("CD402", "CD709")}
    assert fixes["CD402"] == fixes["CD709"] == [
        'pip install --force-reinstall --no-deps "nvidia-cudnn-cu12==9.3.0.75"'], fixes


def test_an_older_copys_parts_through_ld_library_path_are_taken_off_it_not_upgraded():
    # The lent H200: torch 2.11 loads its wheel's 9.19 shim through its RPATH, and the shim the system 9.14's
    # sub-libraries through LD_LIBRARY_PATH (`scripts/gpu_verify.sh fix`: torch says "compiled against (9, 19, 0) but
    # found runtime version (9, 14, 0)"). CD503's fix is CD709's: that folder off the path, not the system copy upgraded
    system = "/usr/lib/x86_64-linux-gnu"
    torch = _torch("2.9.1", "9.10.2", TORCH291, 9)
    parts = ("libcudnn_graph.so.9", "libcudnn_ops.so.9", "libcudnn_cnn.so.9", "libcudnn_adv.so.9")
    torch.resolved_cudnn_parts = {p: resolution(p, "%s/%s" % (system, p), via="LD_LIBRARY_PATH") for p in parts}
    facts = _environment([torch], "9.10.2.21")
    facts.cudnn.append(cudnn_copy(system, "9.8.0", "12.8", origin="deb", links=False))
    facts.loader.ld_library_path = [system]
    found = _findings(facts)
    [older] = [f for f in found if f.id == "CD503"]
    assert "loads cuDNN 9.8.0" in older.title
    assert older.remedy.commands and "Upgrade" not in older.remedy.text, older.remedy.text
    assert any("grep -vxF -e %s " % system in c for c in older.remedy.commands), older.remedy.commands
    assert not any(c.startswith("pip install") for c in older.remedy.commands)  # its own site's 9.10.2 fits


def test_a_new_environments_pip_runs_without_pythonpath_where_nvidias_wheels_sit_in_a_target_folder():
    # NVIDIA's wheels in a `pip install --target` folder on PYTHONPATH: the new environment's pip would count them
    # installed ("Requirement already satisfied") and leave out the framework's own cuDNN (draw 20261205-40)
    from cudnn_doctor.fixing.commands import parse_command
    ort = _plain_path("onnxruntime-gpu", "1.18.0", 8, "onnxruntime/capi/libonnxruntime_providers_cuda.so")
    ort.cuda_version = "11.8"
    facts = _environment([ort, _tensorflow("2.17.1", 8, TF217, 8)], "8.9.7.29")
    facts.python.nvidia_wheels.append({"name": "nvidia-cudnn-cu12", "version": "9.1.0.70", "location": "/srv/pydeps",
                                       "via": "PYTHONPATH"})
    [conflict] = [f for f in _findings(facts) if f.id == "CD710"]
    for line in conflict.remedy.commands:
        folder = line.split(" ")[4]
        assert line.startswith("python3.12 -m venv --upgrade-deps %s && PYTHONPATH= %s/bin/pip install " % (folder, folder)), line
        assert parse_command(line, False).kind == "environments"  # fix runs it as printed
