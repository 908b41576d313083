"""CD707's fix sends Paddle to a cuDNN of its major in its own environment only where that copy can serve it: built
for Paddle's CUDA (read from the wheel's name where the library could not be loaded) and whole. A finding about a
release installed in two environments says which one it is about."""
from __future__ import annotations

from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.queries import without_environment
from cudnn_doctor.rules import RuleContext, evaluate
from facts_factory import TORCH_SITE, cudnn_copy, framework, real_machine, resolution

WHEEL = TORCH_SITE + "/nvidia/cudnn/lib"
ABORTED = "loading it crashed the probe process (SIGABRT)"


def _cd707(cuda_major: int, missing: bool):
    """Paddle 2.6.2 for CUDA 11.8 (built with 8.6), no libcudnn.so on any plain path, and a cuDNN 8.9.7 wheel of
    CUDA `cuda_major` in its site that could not be loaded (its CUDA unread), lacking libcudnn_ops_infer if
    `missing`."""
    facts = real_machine()
    paddle = framework("paddlepaddle-gpu", "2.6.2", cuda_build=True, cuda_version="11.8", cudnn_version="8.6.0",
                       resolved_cudnn=resolution("libcudnn.so", None))
    facts.python.frameworks = [paddle]
    wheel = "nvidia-cudnn-cu%d" % cuda_major
    facts.python.nvidia_wheels = [{"name": wheel, "version": "8.9.7.29", "location": TORCH_SITE}]
    subs = ["adv_infer", "adv_train", "cnn_infer", "cnn_train", "ops_train"] + ([] if missing else ["ops_infer"])
    copy = cudnn_copy(WHEEL, "8.9.7", None, origin="pip", links=False, package=wheel + " 8.9.7.29", sublibs=subs,
                      version_source="package", load_error=ABORTED)
    facts.cudnn = [c for c in facts.cudnn if not c.directory.startswith(TORCH_SITE)] + [copy]
    findings, _ = evaluate(facts, RuleContext(compat=load_compat()))
    [found] = [f for f in findings if f.id == "CD707"]
    return found.remedy.commands


def test_a_wheel_of_another_cuda_is_replaced_by_paddles_own_cuda_wheel_not_linked():
    # realworld draw 486637-59: the link to a cu12 8.9.7 (Paddle is for CUDA 11.8) left it on the wrong build, which
    # also lacked a sub-library: the load aborted (CD501 and CD709 after the fix)
    commands = _cd707(12, missing=True)
    assert any("uninstall -y nvidia-cudnn-cu12" in c for c in commands), commands
    assert any('install "nvidia-cudnn-cu11==8.' in c for c in commands), commands
    assert commands[-1].startswith("export LD_LIBRARY_PATH=%s" % WHEEL), commands


def test_a_wheel_of_its_own_cuda_that_lacks_a_sub_library_is_reinstalled_before_the_link():
    commands = _cd707(11, missing=True)
    install = next(i for i, c in enumerate(commands) if "nvidia-cudnn-cu11" in c and "--force-reinstall" in c)
    link = next(i for i, c in enumerate(commands) if c.startswith("ln -sf libcudnn.so.8 "))
    assert install < link and "uninstall" not in " ".join(commands), commands


def test_a_whole_wheel_of_its_own_cuda_is_only_linked_and_put_on_the_path():
    commands = _cd707(11, missing=False)
    assert commands[0] == "ln -sf libcudnn.so.8 %s/libcudnn.so" % WHEEL and "pip" not in " ".join(commands), commands


def test_the_same_release_in_two_environments_gets_two_findings_that_say_which():
    # on the H200 a venv and a copy of it gave two CD503 findings that read alike: each now names its environment
    facts = real_machine()
    sites = [TORCH_SITE, "/home/u/copy/lib/python3.12/site-packages"]
    facts.python.frameworks = [framework("paddlepaddle-gpu", "2.6.2", location=site, cuda_build=True, cuda_version="11.8",
                                         cudnn_version="8.6.0", resolved_cudnn=resolution("libcudnn.so", None))
                               for site in sites]
    findings, _ = evaluate(facts, RuleContext(compat=load_compat()))
    titles = sorted(f.title for f in findings if f.id == "CD707")
    assert titles == ["paddlepaddle-gpu 2.6.2 (in /home/u/copy) needs cuDNN 8.6.0, which no plain search path provides",
                      "paddlepaddle-gpu 2.6.2 (in /opt/torch/.venv) needs cuDNN 8.6.0, which no plain search path "
                      "provides"], titles
    facts.python.frameworks.pop()
    findings, _ = evaluate(facts, RuleContext(compat=load_compat()))
    plain = "paddlepaddle-gpu 2.6.2 needs cuDNN 8.6.0, which no plain search path provides"
    assert [f.title for f in findings if f.id == "CD707"] == [plain]
    # fix matches findings before and after by their words less that name: a fix that changes one copy, and so
    # rewords the other's title, did not make the other's finding gone, nor a new one (a review of this change)
    assert {without_environment(t) for t in titles} == {plain}
