"""A paste explain reads as Windows gets an answer written for Windows (no sudo, apt, ldconfig, LD_LIBRARY_PATH or
lib64 folder; PowerShell's commands), and one read as WSL the Windows driver, never a Linux one (the brief: every
fix is built for its target). Drawn from every real paste of the corpus, not from a list: 21 Windows answers said
Linux words before this test, and 1 WSL answer a Linux driver (round 30)."""
from __future__ import annotations

import re

import explain_grading as grading

from cudnn_doctor.explain import explain
from cudnn_doctor.model import WINDOWS_SHELL

LINUX_ONLY = re.compile(r"\bsudo\b|\bapt(?:-get)?\b|\bldconfig\b|LD_LIBRARY_PATH|ubuntu-drivers|\blib64\b|\.so\b")


def test_windows_pastes_are_answered_for_windows():
    wrong, windows = [], 0
    for split in grading.SPLITS:
        for case in grading.cases(split):
            ex = explain(case["text"], check=False).explanation
            if ex.evidence is None or ex.evidence.platform != "windows" or ex.fix is None:
                continue
            windows += 1
            said = sorted(set(LINUX_ONLY.findall(ex.fix.text)))
            shells = {ex.fix.shell} - {"", WINDOWS_SHELL}
            if said or shells:
                wrong.append("%s: %s %s | %s" % (case["id"], said, sorted(shells), ex.fix.text[:160]))
    assert windows >= 100, windows  # the corpus holds that many: the platform reading still works
    assert wrong == [], "\n".join(wrong)


LINUX_DRIVER = re.compile(r"ubuntu-drivers|\breboot\b|apt(?:-get)? install[^;`]*nvidia-driver|NVIDIA-Linux-\S+\.run")


def test_wsl_pastes_never_install_a_linux_driver():
    """WSL 2 runs on the Windows driver, and a Linux driver installed inside WSL hides it (catalogue H4): a paste
    read as WSL is told to update the Windows driver and restart WSL, never to install a Linux one or reboot."""
    wrong, wsl = [], 0
    for split in grading.SPLITS:
        for case in grading.cases(split):
            ex = explain(case["text"], check=False).explanation
            if ex.evidence is None or ex.evidence.driver_platform != "wsl" or ex.fix is None:
                continue
            wsl += 1
            said = sorted(set(LINUX_DRIVER.findall(ex.fix.text)))
            if said:
                wrong.append("%s: %s | %s" % (case["id"], said, ex.fix.text[:160]))
    assert wsl >= 5, wsl
    assert wrong == [], "\n".join(wrong)


def test_a_driver_too_old_under_wsl_is_the_windows_driver():
    text = ("nvidia-container-cli: initialization error: WSL environment detected but no adapters were found: unknown")
    ex = explain(text, check=False).explanation
    assert "WSL 1" in ex.answer.cause and "wsl --set-version <distro> 2" in ex.fix.commands, ex.fix.text
    text = ("(base) user@DESKTOP:~$ uname -r\n5.15.153.1-microsoft-standard-WSL2\n"
            "RuntimeError: The NVIDIA driver on your system is too old (found version 11040).")
    ex = explain(text, check=False).explanation
    assert "on Windows" in ex.fix.text and "wsl --shutdown" in ex.fix.text and "ubuntu-drivers" not in ex.fix.text, \
        ex.fix.text


def test_container_pastes_put_the_driver_on_the_host():
    """A container runs on its host's driver (the toolkit mounts it in): a driver installed or a reboot is the
    host's, said so, never `ubuntu-drivers` run inside the container (20 answers of the corpus did, round 30)."""
    wrong, inside = [], 0
    for split in grading.SPLITS:
        for case in grading.cases(split):
            ex = explain(case["text"], check=False).explanation
            if ex.evidence is None or ex.evidence.driver_platform != "container" or ex.fix is None:
                continue
            inside += 1
            if LINUX_DRIVER.search(ex.fix.text) and "host" not in ex.fix.text:
                wrong.append("%s | %s" % (case["id"], ex.fix.text[:160]))
    assert inside >= 20, inside
    assert wrong == [], "\n".join(wrong)


def test_a_windows_paste_read_on_linux_keeps_its_own_fix(tmp_path):
    """A Windows paste explained on a Linux machine: this machine's facts are shown, but its repairs (here: no
    cuDNN, install one for its CUDA) are not offered as the text's, since they cannot be its machine's."""
    from kit import FakeMachine

    m = FakeMachine(tmp_path / "linux")
    m.mkdir("/usr/lib")
    text = "Could not locate cudnn_ops_infer64_8.dll. Please make sure it is in your library path!"
    ex = explain(text, root=str(m.root), env={}).explanation
    assert ex.checked and "comes from Windows and this machine runs Linux" in ex.elsewhere
    assert ex.also == [] and "Get-Command cudnn_ops_infer64_8.dll" in ex.fix.text
    linux = explain("Could not load library libcudnn_cnn_infer.so.8", root=str(m.root), env={}).explanation
    assert linux.elsewhere == ""  # a text that names no OS may be this machine's


def test_a_gpu_this_machine_does_not_have_marks_the_text_as_another_machines():
    """NVML names this machine's GPUs: a text about a GPU model none of them is came from elsewhere (another node of
    the cluster, a forum post); one that names the same model, however spelled, or no GPU at all may be this one."""
    from cudnn_doctor.explain import other_machine
    from cudnn_doctor.explain.decode import decode
    from cudnn_doctor.knowledge import load_compat
    from cudnn_doctor.model import Facts, GpuFacts

    h200 = Facts(gpus=[GpuFacts(index=0, name="NVIDIA H200")])
    sm86 = decode("NVIDIA GeForce RTX 3090 with CUDA capability sm_86 is not compatible with the current PyTorch "
                  "installation.", load_compat())
    assert "names NVIDIA GeForce RTX 3090 and this machine has NVIDIA H200" in other_machine(sm86, h200)
    assert other_machine(sm86, Facts(gpus=[GpuFacts(index=0, name="NVIDIA GeForce RTX 3090")])) == ""
    assert other_machine(sm86, Facts()) == ""  # no GPU seen here (no driver): it may still be this machine
    said = decode("CUDA error: out of memory on Tesla V100", load_compat())
    assert other_machine(said, Facts(gpus=[GpuFacts(index=0, name="Tesla V100-SXM2-32GB")])) == ""
