"""What prints each output block the docs show (tests/project/test_docs.py): the machine, saved report or command
behind it, run through the real command line. A page's block is keyed by the page and the block's first line."""
from __future__ import annotations

import shlex
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

from clirunner import CliRunner
from kit import FakeMachine, Gpu
from pick_nodes import node_report

from cudnn_doctor.cli import app

MA = "/usr/lib/x86_64-linux-gnu"
runner = CliRunner()


def _run(args: List[str]) -> str:
    """What the command prints (a fix that runs cudnn-doctor names the program by its full path; the test suite's
    is /opt/cudnn-doctor/bin/cudnn-doctor)."""
    result = runner.invoke(app, args)
    text = result.stdout + result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        text += "\n(the command failed: %r)" % result.exception
    return text


def _check(machine: FakeMachine, *args: str) -> str:
    """`check` on a fake machine, printed as on that machine itself: its root left out of paths and of the fixes
    (which name it with `chroot ROOT` and `ldconfig -r ROOT` under --root)."""
    machine.ld_cache()
    root = str(machine.root)
    text = _run(["check", "--no-color", "--root", root, *args])
    for with_root, live in ((" · root " + root, ""), ("chroot %s " % root, ""), (" -r " + root, ""), (root, "")):
        text = text.replace(with_root, live)
    return text


def report(tmp: Path) -> str:
    """README's and Getting started's report: a cuDNN 8.9 for CUDA 11.8 copied into a CUDA 12.4 toolkit."""
    m = FakeMachine(tmp / "root")
    m.driver("535.104.05", cuda=12020, gpus=[Gpu(name="NVIDIA H100 80GB HBM3", cc="9.0", memory_mib=81559)])
    m.ld_conf("x86_64-linux-gnu.conf", [MA])
    m.toolkit("12.4.1")
    m.cudnn("8.9.7", "/usr/local/cuda-12.4/lib64", "/usr/local/cuda-12.4/include", cuda=11080)
    return _check(m)


def cuda13_without_cudnn(tmp: Path) -> str:
    """Getting started's fix that cudnn-doctor carries out itself: a CUDA 13 toolkit without cuDNN."""
    m = FakeMachine(tmp / "root")
    m.driver("580.95.05", cuda=13000)
    m.ld_conf("x86_64-linux-gnu.conf", [MA, "/usr/local/cuda/lib64"])
    m.toolkit("13.0.2")
    return _check(m)


def theano(tmp: Path) -> str:
    """docs/theano.md: Keras 2.2.4 on Theano 1.0.5, the seed guide's .theanorc, system cuDNN 8.0.5, 7.6.5 in /opt."""
    from test_theano import HOME as home, docs_example

    m = FakeMachine(tmp / "root")
    docs_example(m)
    env = {"HOME": home, "PATH": "/usr/local/cuda/bin:/usr/bin:/bin", "VIRTUAL_ENV": home + "/venv"}
    return _check(m, *[a for k, v in env.items() for a in ("--env", "%s=%s" % (k, v))])


def pick(node: Tuple[str, str, List[Tuple[str, str]]], *args: str) -> Callable[[Path], str]:
    """`pick ARGS --against node.json` for a saved report of such a node (driver, its CUDA, GPUs and their cc)."""
    def run(tmp: Path) -> str:
        path = tmp / "node.json"
        path.write_text(node_report(*node, toolkit=False))
        return _run(["pick", *args, "--against", str(path)]).replace(str(path), "node.json")
    return run


MIXED = ("535.104.05", "12.2", [("NVIDIA GeForce GTX 1080 Ti", "6.1"), ("NVIDIA GeForce RTX 4090", "8.9")])
RTX5090_550 = ("550.54.15", "12.4", [("NVIDIA GeForce RTX 5090", "12.0")])

# (page, the block's first line) -> what prints the block
SHOWN: Dict[Tuple[str, str], Callable[[Path], str]] = {
    ("README.md", "cudnn-doctor 0.1.0"): report,
    ("getting-started.md", "cudnn-doctor 0.1.0"): report,
    ("getting-started.md", "    Fix: Install cuDNN"): cuda13_without_cudnn,
    ("pick.md", "node1 (node.json)"): pick(MIXED, "torch"),
    ("pick.md", "No PyTorch build"): pick(RTX5090_550, "torch"),
    ("theano.md", "$ cudnn-doctor check"): theano,
}
# Blocks whose command cannot run in a test, and why; every other block is run.
NOT_RUN = {("knowledge.md", "$ cudnn-doctor update"): "reads PyPI and NVIDIA's servers (tests/knowledge run it on "
                                                       "recorded answers)",
           ("performance.md", "command (whole process"): "benchmarks/check_bench.py's table on the lent H200 (a "
                                                                "benchmark on a GPU machine, not a command's output here)",
           ("fix.md", "$ cudnn-doctor fix"): "changes a Python environment (tests/fixing/test_fix_venv.py runs it on "
                                             "the venv it builds and checks these lines)"}
RUN_AS_SHOWN = ("matrix",)  # commands that read only the shipped knowledge: a `$ cudnn-doctor ...` line runs as is


def producer(page: str, body: str) -> Tuple[Optional[Callable[[Path], str]], str]:
    """What prints ``body`` on ``page``, or None and why it is not run."""
    first = body.splitlines()[0] if body.strip() else ""
    for (where, start), make in SHOWN.items():
        if where == page and first.startswith(start):
            return make, ""
    for (where, start), why in NOT_RUN.items():
        if where == page and first.startswith(start):
            return None, why
    words = shlex.split(first[2:]) if first.startswith("$ cudnn-doctor ") else []
    if words[1:2] and (words[1] in RUN_AS_SHOWN or "--help" in words or "--list-checks" in words):
        return (lambda tmp: _run(words[1:])), ""
    return None, ""
