"""A paste explain reads as Windows gets an answer written for Windows (no sudo, apt, ldconfig, LD_LIBRARY_PATH or
lib64 folder; PowerShell's commands), and one read as WSL the Windows driver, never a Linux one (the brief: every
fix is built for its target). Drawn from every real paste of the corpus, not from a list: 21 Windows answers said
Linux words before this test, and 1 WSL answer a Linux driver (round 30)."""
from __future__ import annotations

import re

import explain_grading as grading

from cudnn_doctor.explain import explain
from cudnn_doctor.model import WINDOWS_SHELL

LINUX_ONLY = re.compile(r"\bsudo\b|\bapt(?:-get)?\b|\bldconfig\b|LD_LIBRARY_PATH|ubuntu-drivers|\blib64\b|\.so\b|"
                        r"\bexport\b|\bunset\b|modprobe|rm -rf|~/|\$[A-Z_]{2,}")

# Windows texts the corpus does not reach (a review found their answers Linux's): a PowerShell traceback of CUDA
# seeing no device, cuBLAS's handle, a fault after sleep, an out-of-memory, cuDNN's handle, a busy GPU.
TORCH = 'File "C:\\Users\\me\\venv\\lib\\site-packages\\torch\\cuda\\__init__.py", line 302, in _lazy_init\n'
WINDOWS_TEXTS = [TORCH + "RuntimeError: CUDA error: no CUDA-capable device is detected",
                 TORCH + "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`",
                 TORCH + "RuntimeError: CUDA error: unspecified launch failure",
                 TORCH + "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB",
                 TORCH + "Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR",
                 TORCH + "RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable",
                 "CUDA_VISIBLE_DEVICES=-1\n" + TORCH + "RuntimeError: No CUDA GPUs are available"]


def _texts():
    for split in grading.SPLITS:
        for case in grading.cases(split):
            yield case["id"], case["text"]
    for n, text in enumerate(WINDOWS_TEXTS):
        yield "windows-%d" % n, text


def test_windows_pastes_are_answered_for_windows():
    wrong, windows = [], 0
    for name, text in _texts():
        ex = explain(text, check=False).explanation
        if ex.evidence is None or ex.evidence.platform != "windows" or ex.fix is None:
            continue
        windows += 1
        said = sorted(set(LINUX_ONLY.findall(ex.fix.text)))
        shells = {ex.fix.shell} - {"", WINDOWS_SHELL}
        if said or shells:
            wrong.append("%s: %s %s | %s" % (name, said, sorted(shells), ex.fix.text[:160]))
    assert windows >= 100 + len(WINDOWS_TEXTS), windows  # the platform reading still works
    assert wrong == [], "\n".join(wrong)


# Linux texts the corpus does not reach under WSL or in a container (a review found a uvm reload and a Linux
# driver floor there): each is asked once behind a WSL kernel line and once behind a container's prompt.
WSL = "$ uname -r\n5.15.153.1-microsoft-standard-WSL2\n"
CONTAINER = "root@3f2a9c0d1b7e:/workspace# python train.py\n"
LINUX_TEXTS = ["RuntimeError: CUDA error: unspecified launch failure",
               "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 11040).",
               "torch 2.5.1+cu124\nRuntimeError: The NVIDIA driver on your system is too old",
               "Failed to initialize NVML: Driver/library version mismatch"]

LINUX_DRIVER = re.compile(r"ubuntu-drivers|\breboot\b|apt(?:-get)? install[^;`]*nvidia-driver|NVIDIA-Linux-\S+\.run")


def _driver_fixes(where: str, prompt: str, wrong_for_it):
    """(how many texts read as ``where``, those whose fix ``wrong_for_it`` refuses): the corpus, the synthetic
    Windows texts, and the Linux texts behind ``prompt``."""
    count, wrong = 0, []
    for name, text in list(_texts()) + [("%s-%d" % (where, n), prompt + t) for n, t in enumerate(LINUX_TEXTS)]:
        ex = explain(text, check=False).explanation
        if ex.evidence is None or ex.evidence.driver_platform != where or ex.fix is None:
            continue
        count += 1
        if wrong_for_it(ex.fix.text):
            wrong.append("%s | %s" % (name, ex.fix.text[:160]))
    return count, wrong


def test_wsl_pastes_never_install_a_linux_driver():
    """WSL 2 runs on the Windows driver, and a Linux driver installed inside WSL hides it (catalogue H4): a paste
    read as WSL is told to update the Windows driver and restart WSL, never to install a Linux one or reboot."""
    wsl, wrong = _driver_fixes("wsl", WSL, lambda fix: bool(re.search(LINUX_DRIVER.pattern + r"|rmmod|modprobe", fix)))
    assert wsl >= 5, wsl
    assert wrong == [], "\n".join(wrong)


def test_a_driver_too_old_under_wsl_is_the_windows_driver():
    text = ("nvidia-container-cli: initialization error: WSL environment detected but no adapters were found: unknown")
    ex = explain(text, check=False).explanation
    assert "WSL 1" in ex.answer.cause and ex.fix.commands == ["wsl -l -v", "wsl --update", "wsl --shutdown"], \
        ex.fix.text
    assert ex.fix.shell == WINDOWS_SHELL and "<" not in ex.fix.text  # Windows's commands, no placeholder to fill
    text = ("(base) user@DESKTOP:~$ uname -r\n5.15.153.1-microsoft-standard-WSL2\n"
            "RuntimeError: The NVIDIA driver on your system is too old (found version 11040).")
    ex = explain(text, check=False).explanation
    assert "on Windows" in ex.fix.text and "wsl --shutdown" in ex.fix.text and "ubuntu-drivers" not in ex.fix.text, \
        ex.fix.text
    # the driver a floor names is a Windows release (compat: CUDA 12.4 needs 551.61 there, 550.54.14 on Linux)
    from cudnn_doctor.knowledge import load_compat

    floor = load_compat().min_driver("12.4", "windows").version
    ex = explain(WSL + "torch 2.5.1+cu124\nCUDA driver version is insufficient for CUDA runtime version",
                 check=False).explanation
    assert floor in ex.fix.text and load_compat().min_driver("12.4", "linux").version not in ex.fix.text, ex.fix.text
    assert ex.fix.shell == WINDOWS_SHELL  # wsl --shutdown runs from Windows


def test_container_pastes_put_the_driver_on_the_host():
    """A container runs on its host's driver (the toolkit mounts it in): a driver installed or a reboot is the
    host's, said so, never `ubuntu-drivers` run inside the container (20 answers of the corpus did, round 30)."""
    inside, wrong = _driver_fixes("container", CONTAINER, lambda fix: bool(
        re.search(LINUX_DRIVER.pattern + r"|rmmod|modprobe", fix)) and "on the host" not in fix)
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
