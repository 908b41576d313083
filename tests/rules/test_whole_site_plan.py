"""A plan for every framework of a site (CD710, and an error's fix that became that plan) reaches what each of them
loads: a PYTHONPATH folder's cuDNN a moved framework would import again goes first, even where the plan names no
cuDNN wheel (the framework's own pins bring it); no uninstall line is said twice; and a PYTHONPATH folder is never
taken for an environment whose owner alone may read what is under it (CD405). Found by a review of round 28."""
from __future__ import annotations

from facts_factory import TORCH_SITE, cudnn_copy, framework, real_machine, resolution

from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.rules import RuleContext, evaluate

from test_whole_environment_fix import _environment, _findings

CUDNN = TORCH_SITE + "/nvidia/cudnn/lib"
PYLIBS = "/home/u/pylibs"


def _torch13_beside_jax12_on_pythonpath():
    facts = real_machine()
    torch = framework("torch", "2.14.1", cuda_version="13.0", cudnn_version="9.24.0.43",
                      requires=['nvidia-cudnn-cu13==9.24.0.43; platform_system == "Linux"'],
                      consumer_library=TORCH_SITE + "/torch/lib/libtorch_cuda.so",
                      resolved_cudnn=resolution("libcudnn.so.9", CUDNN + "/libcudnn.so.9",
                                                via="sys.path (torch's _preload_cuda_deps)"))
    jax = framework("jax-cuda12-pjrt", "0.7.2", cuda_version="12", cudnn_version="9.8.0",
                    requires=["nvidia-cudnn-cu12<10.0,>=9.8"],
                    consumer_library=TORCH_SITE + "/jax_plugins/xla_cuda12/xla_cuda_plugin.so",
                    resolved_cudnn=resolution("libcudnn.so.9", PYLIBS + "/nvidia/cudnn/lib/libcudnn.so.9",
                                              via="sys.path (the JAX plugin's nvidia.cudnn)"))
    facts.python.frameworks = [torch, jax]
    facts.python.nvidia_wheels = [
        {"name": "nvidia-cudnn-cu13", "version": "9.24.0.43", "location": TORCH_SITE},
        {"name": "nvidia-cudnn-cu12", "version": "9.10.2.21", "location": PYLIBS, "via": "PYTHONPATH"}]
    facts.cudnn = [c for c in facts.cudnn if not c.directory.startswith(TORCH_SITE)]
    facts.cudnn.append(cudnn_copy(CUDNN, "9.24.0", "13.0", origin="pip", links=False,
                                  package="nvidia-cudnn-cu13 9.24.0.43"))
    facts.cudnn.append(cudnn_copy(PYLIBS + "/nvidia/cudnn/lib", "9.10.2", "12.9", origin="pip", links=False,
                                  package="nvidia-cudnn-cu12 9.10.2.21"))
    return facts


def _remedies(facts, rule_id):
    found, _ = evaluate(facts, RuleContext(compat=load_compat()))
    return [f.remedy for f in found if f.id == rule_id and f.remedy is not None]


def test_a_framework_moved_by_the_plan_does_not_keep_importing_a_pythonpath_copy():
    (plan,) = _remedies(_torch13_beside_jax12_on_pythonpath(), "CD710")
    assert plan.commands[0] == "rm -rf %s/nvidia/cudnn %s/nvidia_cudnn_cu12-*.dist-info" % (PYLIBS, PYLIBS), \
        plan.commands
    assert any('"jax-cuda13-plugin[with-cuda]==0.7.2"' in c for c in plan.commands), plan.commands


def test_no_uninstall_is_said_twice():
    facts = _environment(tf_pins=["nvidia-cudnn-cu13 ==9.24.0.43 ; extra == 'and-cuda'"])
    facts.python.user_sites = [TORCH_SITE]
    facts.python.user_site_owner = "/usr/bin/python3"
    for finding in _findings(facts):
        if finding.remedy is not None and finding.id in ("CD704", "CD710"):
            commands = finding.remedy.commands
            assert len(commands) == len(set(commands)), (finding.id, commands)


def test_a_pythonpath_folder_is_no_environment_that_excuses_an_unreadable_cudnn():
    for pythonpath in ([], ["/srv/shared/pylibs"]):
        facts = real_machine()
        copy = cudnn_copy("/srv/shared/cudnn-9.10/lib", "9.10.2", "12.9", origin="tarball")
        for f in copy.files:
            f.readable, f.read_blocker = False, "/srv/shared"
        facts.cudnn.append(copy)
        facts.python.site_dirs = list(facts.python.site_dirs) + pythonpath
        assert _remedies(facts, "CD405"), pythonpath
