"""Every fix runnable as printed: no <placeholders>, no double slashes, and no command that assumes a path the
machine does not have (walks every rule over every scenario machine of the test kit)."""
from __future__ import annotations

import os
import re
import shlex
from typing import Dict, Iterable, List, Optional

import pytest

from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.model import Finding
from cudnn_doctor.remedies import run, stated
from cudnn_doctor.rules import RuleContext, evaluate
from facts_factory import real_machine

# The fixes these tests build themselves are written for Target() (the live root, a user, sh).
pytestmark = pytest.mark.usefixtures("fix_target")

PLACEHOLDER = re.compile(r"<[A-Za-z][A-Za-z0-9 ._-]*>")
DOUBLE_SLASH = re.compile(r"(?<![:/])//")
# Commands after one of these may use what it installs: their paths are not checked against the machine.
INSTALLS = re.compile(r"\b(apt|apt-get|dnf|yum|pip|conda|cudnn-doctor)\s+install\b")


def text_problems(f: Finding) -> List[str]:
    texts = [f.fix] + (list(f.remedy.commands) + [f.remedy.doctor, f.remedy.manual] if f.remedy else [])
    out = []
    for text in filter(None, texts):
        out += ["%s: placeholder %s in %r" % (f.id, m.group(0), text) for m in PLACEHOLDER.finditer(text)]
        if DOUBLE_SLASH.search(text):
            out.append("%s: double slash in %r" % (f.id, text))
    return out


def _words(command: str) -> Optional[List[str]]:
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    return words[1:] if words and words[0] == "sudo" else words


def assumed_paths(commands: Iterable[str]) -> List[str]:
    """The paths these commands need to exist before they run (`cd`, `chmod`, `rm`, `ln` targets), absolute."""
    cwd: Optional[str] = None
    out: List[str] = []

    def where(path: str) -> Optional[str]:
        if path.startswith("/"):
            return os.path.normpath(path)
        return os.path.normpath(os.path.join(cwd, path)) if cwd and "$" not in path and "~" not in path else None

    for command in commands:
        words = _words(command)
        if words and words[0] == "cudnn-doctor" and "--cuda-home" in words[:-1]:
            out.append(where(words[words.index("--cuda-home") + 1]))  # the toolkit it installs into
        if INSTALLS.search(command):
            break
        if not words:
            continue
        args = [w for w in words[1:] if not w.startswith("-")]
        if words[0] == "cd" and args:
            cwd = where(args[0])
            out.append(cwd)
        elif words[0] == "chmod" and len(args) > 1:
            out += [where(a) for a in args[1:]]
        elif words[0] == "rm":
            out += [where(a) for a in args]
        elif words[0] == "ln" and len(args) == 2:
            target, name = args
            if not target.startswith("/") and name.startswith("/"):
                target = os.path.join(os.path.dirname(name), target)
            out.append(where(target))
    return [p for p in out if p]


def path_problems(f: Finding, root: str) -> List[str]:
    if not f.remedy:
        return []
    return ["%s: %r assumes %s, which does not exist in the machine" % (f.id, f.remedy.text, p)
            for p in assumed_paths(f.remedy.commands)
            # Under --root a fix names the root's files from outside it (as `ldconfig -r ROOT` does).
            if not os.path.lexists(p if p.startswith(root.rstrip("/") + "/") else root + p)]


# --- Facts scenarios (no files: placeholders and slashes) ---------------------------------------------------------


def _fact_scenarios() -> Dict[str, tuple]:
    import test_rules_on_built_facts as scenarios

    out = {name: (build, options) for name, (build, _, _, _, options) in scenarios.SCENARIOS.items()}
    out["policy-everything-unmet"] = (real_machine, {
        "requires": ["cuda>=14", "cudnn>=10", "driver>=999", "cc>=10", "toolkit>=14"], "target": "dl4j==1.0.0-beta6"})
    for target in ("torch", "tensorflow", "jax", "dl4j", "torch==2.5.1", "tensorflow==2.15.0"):
        out["for-" + target] = (real_machine, {"target": target})
    return out


FACT_SCENARIOS = _fact_scenarios()


@pytest.mark.parametrize("name", sorted(FACT_SCENARIOS))
def test_fixes_of_fact_scenarios_have_no_placeholders(name):
    build, options = FACT_SCENARIOS[name]
    findings, _ = evaluate(build(), RuleContext(compat=load_compat(), requires=list(options.get("requires", [])),
                                                target=options.get("target")))
    problems = [p for f in findings for p in text_problems(f)]
    assert problems == []


# --- Fake machines (real files: paths are checked too) ---------------------------------------------------------------


def _machine_scenarios() -> Dict[str, tuple]:
    import test_check_on_fake_machines as machines

    out = {name: (build, {}, args) for name, (build, args) in machines.PASSING.items()}
    out.update({name: (build, env, args) for name, (build, env, args, *_rest) in machines.FAILING.items()})
    return out


MACHINE_SCENARIOS = _machine_scenarios()


@pytest.mark.parametrize("name", sorted(MACHINE_SCENARIOS))
def test_fixes_on_scenario_machines_are_runnable(machine, check_json, name):
    build, env, args = MACHINE_SCENARIOS[name]
    build(machine)
    _, doc = check_json(machine, *args, env=env)
    from cudnn_doctor.model import Fix

    findings = [Finding(id=f["id"], severity=f["severity"], title=f["title"],
                        remedy=Fix(**f["remedy"]) if f.get("remedy") else None) for f in doc["findings"]]
    problems = [p for f in findings for p in text_problems(f) + path_problems(f, str(machine.root))]
    assert problems == []


# --- the walker itself --------------------------------------------------------------------------------------------


def test_walker_sees_what_a_shell_would_need():
    assert assumed_paths(["cd /usr/lib", "sudo ln -sf libcudnn.so.9.1.0 libcudnn.so.9", "sudo ldconfig"]) == [
        "/usr/lib", "/usr/lib/libcudnn.so.9.1.0"]
    assert assumed_paths(["sudo chmod a+r /a/b '/c d'"]) == ["/a/b", "/c d"]
    assert assumed_paths(['pip install "x"', "cd /site/nvidia/cuda_nvrtc/lib"]) == []  # installed first
    assert assumed_paths(["sudo cudnn-doctor install --version 9.14.0 --cuda 13 --cuda-home /usr/local/cuda"]) == [
        "/usr/local/cuda"]
    bad = Finding(id="CD999", severity="warning", title="t", remedy=stated("cd <folder> && sudo cp -P a /usr/lib//"))
    assert len(text_problems(bad)) == 2
    assert not text_problems(Finding(id="CD999", severity="warning", title="t",
                                     remedy=stated('conda install "cudnn>=9.1,<10" from https://example.com/x')))


def test_walker_reports_a_path_the_machine_lacks(tmp_path):
    (tmp_path / "usr/lib").mkdir(parents=True)
    (tmp_path / "usr/lib/libcudnn.so.9.1.0").write_bytes(b"")
    ok = Finding(id="CD404", severity="warning", title="t", remedy=run(*[
        "cd /usr/lib", "sudo ln -sf libcudnn.so.9.1.0 libcudnn.so.9", "sudo ldconfig"]))
    assert path_problems(ok, str(tmp_path)) == []
    gone = Finding(id="CD404", severity="warning", title="t", remedy=run("cd /usr/lib64", "sudo ldconfig"))
    assert path_problems(gone, str(tmp_path)) and "/usr/lib64" in path_problems(gone, str(tmp_path))[0]


# --- the fixes issue 13 names, one by one ---------------------------------------------------------------------------

from facts_factory import SYSLIB, TORCH_SITE, cudnn_copy, gpu, lib_files, resolution  # noqa: E402


def _run(facts) -> List[Finding]:
    return evaluate(facts, RuleContext(compat=load_compat()))[0]


def _only(findings: List[Finding], rule_id: str) -> Finding:
    hits = [f for f in findings if f.id == rule_id]
    assert len(hits) == 1, [(f.id, f.title) for f in findings]
    return hits[0]


def test_cd306_only_rebuilds_the_cache_when_the_folder_is_already_configured():
    f = real_machine()  # /etc/ld.so.conf.d lists /usr/local/cuda/targets/x86_64-linux/lib, the toolkit's link
    f.loader.resolved["libcudart.so.13"] = resolution("libcudart.so.13", None)
    remedy = _only(_run(f), "CD306").remedy
    assert remedy.commands == ["sudo ldconfig"] and remedy.writes == [] and remedy.root
    f.loader.conf_dirs = [SYSLIB]
    remedy = _only(_run(f), "CD306").remedy
    assert remedy.writes == ["/etc/ld.so.conf.d/cudnn-doctor-usr-local-cuda-13.0-targets-x86_64-linux-lib.conf"]
    assert remedy.commands[-1] == "sudo ldconfig" and "tee" in remedy.commands[0]


def _cudnn8_without_nvrtc(copy, package_manager=None):
    f = real_machine()
    if copy.directory == "/opt/cudnn/lib":  # an archive install on a machine where no package says apt
        f.cudnn = [c for c in f.cudnn if c.origin == "pip"]
        f.host.package_manager = package_manager
    f.cudnn.append(copy)
    f.loader.resolved["libnvrtc.so"] = resolution("libnvrtc.so", None)
    return _only(_run(f), "CD602")


@pytest.mark.parametrize("copy,command", [
    (cudnn_copy(SYSLIB, "8.9.7", "12.2", package="deb libcudnn8 8.9.7.29-1+cuda12.2"),
     "sudo apt install cuda-nvrtc-dev-12-2"),
    (cudnn_copy(TORCH_SITE + "/nvidia/cudnn/lib", "8.9.2", "12.1", origin="pip", links=False,
                package="nvidia-cudnn-cu12 8.9.2.26"), 'pip install "nvidia-cuda-nvrtc-cu12==12.*"'),
    (cudnn_copy("/opt/conda/lib", "8.9.7", "11.8", origin="conda"), 'conda install -c nvidia "cuda-nvrtc-dev=11.8"'),
    (cudnn_copy("/opt/cudnn/lib", "8.9.7", "12.2"), "sudo apt install cuda-nvrtc-dev-12-2"),
], ids=["deb", "pip", "conda", "unknown"])
def test_cd602_installs_nvrtc_first_when_nothing_provides_it(copy, command):
    hit = _cudnn8_without_nvrtc(copy)
    assert hit.remedy.commands[0] == command, hit.fix
    assert hit.fix.startswith("Install NVRTC, which nothing on this machine provides: ")
    if copy.origin == "pip":  # the wheel has no libnvrtc.so: the fix makes the link in the wheel's folder
        assert hit.remedy.commands[1] == "cd %s/nvidia/cuda_nvrtc/lib" % TORCH_SITE
    if copy.directory == "/opt/cudnn/lib":  # nothing says which package manager: dnf and pip are named too
        assert "sudo dnf install cuda-nvrtc-devel-12-2" in hit.fix and "nvidia-cuda-nvrtc-cu12" in hit.fix



def test_cd602_links_the_nvrtc_of_the_cuda_its_cudnn_8_was_built_for():
    # a cuDNN 8.9.6 wheel for CUDA 11 in a site whose NVRTC wheel is CUDA 12's: the link went to libnvrtc.so.12, which
    # cuDNN 8 for CUDA 11 cannot use; CUDA 11's NVRTC goes in and is linked, and where both wheels share the folder
    # (nvidia/cuda_nvrtc/lib) the link names CUDA 11's files
    folder = TORCH_SITE + "/nvidia/cuda_nvrtc/lib"
    copy = cudnn_copy(TORCH_SITE + "/nvidia/cudnn/lib", "8.9.6", "11.8", origin="pip", links=False,
                      package="nvidia-cudnn-cu11 8.9.6.50")
    f = real_machine()
    f.cudnn.append(copy)
    f.loader.resolved["libnvrtc.so"] = resolution("libnvrtc.so", None)
    f.python.nvidia_wheels.append({"name": "nvidia-cuda-nvrtc-cu12", "version": "12.2.140", "location": TORCH_SITE})
    commands = _only(_run(f), "CD602").remedy.commands
    assert commands[:3] == ['pip install "nvidia-cuda-nvrtc-cu11==11.*"', "cd %s" % folder,
                            'ln -sf "$(ls libnvrtc.so.11* | head -n1)" libnvrtc.so'], commands
    f.python.nvidia_wheels.append({"name": "nvidia-cuda-nvrtc-cu11", "version": "11.8.89", "location": TORCH_SITE})
    commands = _only(_run(f), "CD602").remedy.commands
    assert commands[:2] == ["cd %s" % folder, 'ln -s "$(ls libnvrtc.so.11* | head -n1)" libnvrtc.so'], commands

def test_cd602_uses_the_package_manager_the_root_has(machine, check_json):
    hit = _cudnn8_without_nvrtc(cudnn_copy("/opt/cudnn/lib", "8.9.7", "12.2"), package_manager="dnf")
    assert hit.remedy.commands == ["sudo dnf install cuda-nvrtc-devel-12-2"]
    machine.file("/usr/bin/dnf")
    machine.driver()
    _, doc = check_json(machine)
    assert doc["facts"]["host"]["package_manager"] == "dnf"


def test_cd401_is_the_cudnn_doctor_install_command_with_the_manual_way_after_it():
    f = real_machine()
    f.cudnn = []
    f.loader.resolved["libcudnn.so.9"] = resolution("libcudnn.so.9", None)
    f.python.frameworks[0].resolved_cudnn = resolution("libcudnn.so.9", None)
    hit = _only(_run(f), "CD401")
    command = hit.remedy.doctor
    assert re.fullmatch(r"sudo cudnn-doctor install --version 9\.\d+\.\d+ --cuda 13 --cuda-home /usr/local/cuda",
                        command), command
    assert hit.remedy.commands == [command] and hit.fix.startswith("Install cuDNN for CUDA 13: " + command)
    assert "(or by hand: sudo apt install libcudnn9-cuda-13" in hit.fix and hit.remedy.manual.startswith("sudo apt")


def test_cd402_for_an_archive_copy_in_a_toolkit_reinstalls_through_cudnn_doctor():
    f = real_machine()
    lib = "/usr/local/cuda-13.0/lib64"
    f.cudnn = [cudnn_copy(lib, "9.14.0", "13.0", origin="toolkit")]
    f.cudnn[0].files = lib_files(lib, "9.14.0", sublibs=["graph", "ops"])
    hit = _only(_run(f), "CD402")
    assert hit.remedy.doctor == "sudo cudnn-doctor install --version 9.14.0 --cuda 13 --cuda-home /usr/local/cuda"
    assert "sudo cp -P 'cudnn-linux-x86_64-9.14.0.*_cuda13-archive/lib'/libcudnn* /usr/local/cuda-13.0/lib64/ " \
           "&& sudo ldconfig" in hit.remedy.manual
    assert not text_problems(hit)


def test_cd205_names_a_free_gpu_only_when_there_is_one():
    f = real_machine()
    f.gpus = [gpu(0, compute_mode="exclusive_process", running_processes=1), gpu(1)]
    hit = _only(_run(f), "CD205")
    assert hit.fix.startswith("Use another GPU (export CUDA_VISIBLE_DEVICES=1)")
    assert hit.remedy.commands == ["sudo nvidia-smi -i 0 -c DEFAULT"]
    f.gpus = f.gpus[:1]
    assert "CUDA_VISIBLE_DEVICES" not in _only(_run(f), "CD205").fix


def test_cd407_asks_dpkg_for_the_version_it_does_not_know():
    f = real_machine()
    f.cudnn[0].header_version, f.cudnn[0].package = "9.10.0", "deb libcudnn9-cuda-13"
    hit = _only(_run(f), "CD407")
    assert hit.remedy.commands == [
        "sudo apt install libcudnn9-dev-cuda-13=\"$(dpkg-query -W -f='${Version}' libcudnn9-cuda-13)\""]
