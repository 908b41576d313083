"""pip is the judge of `pick`: drawn nodes (Python 3.9-3.13, x86_64 and aarch64, glibc 2.17-2.39, driver branches
R470-R580, one to three GPUs from Kepler to Blackwell, every framework) are picked for, and every answer's pip line
is handed to pip's own resolver against PyPI, for the node's Python and platform, without a GPU:

    pip install --dry-run --only-binary=:all: --python-version X.Y --platform TAG... --target DIR REQ

Every answer must resolve; and wherever the resolver turned the newest release down for the node itself (its Python,
processor, glibc or dependencies, not its driver or GPUs), answer or not, pip must turn that release down too. Answers from a framework's own index (PyTorch's cuXXX) are asked
of PyPI's build of the same release (that index is not reachable here). PICK_PIP_NODES draws (default 40; the full
run is 300), PICK_PIP_SEED, PICK_PIP_JOBS pip runs at once; the tally, time and disk are printed."""
from __future__ import annotations

import os
import random
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

from cudnn_doctor.knowledge.wheel_index import Node, load_wheel_index
from cudnn_doctor.model import Target
from cudnn_doctor.pick.answer import answer
from cudnn_doctor.pick.choose import NODE_KINDS, pick
from cudnn_doctor.pick.cudnn import pick_cudnn
from cudnn_doctor.pick.machine import Gpu, Machine
from cudnn_doctor.remedies.acting import building_for
from cudnn_doctor.versions import ver
from hermetic import shipped_compat

pytestmark = pytest.mark.realdata

FRAMEWORKS = ("torch", "tensorflow", "jax", "onnxruntime", "cupy", "paddlepaddle", "cudnn")
PYTHONS = ("3.9", "3.10", "3.11", "3.12", "3.13")
ARCHES = ("x86_64", "aarch64")
GLIBCS = ("2.17", "2.28", "2.31", "2.35", "2.39")
CACHE = Path.home() / ".cache" / "cudnn-doctor-tests" / "pip"
# This environment's own interpreter (its pip: 24 or newer, whose --dry-run reads metadata only and downloads no wheel).
PYTHON = str(Path(sys.prefix) / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python"))


def _pip_new_enough() -> bool:
    done = subprocess.run([PYTHON, "-m", "pip", "--version"], capture_output=True, text=True)
    words = done.stdout.split()
    return done.returncode == 0 and len(words) > 1 and int(words[1].split(".")[0]) >= 24


def _online() -> bool:
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
        return True
    except OSError:
        return False


def _drivers(compat) -> List[str]:
    """One driver per branch R470-R580 the knowledge names (the newest it lists of each)."""
    by_branch: Dict[int, str] = {}
    for row in compat.toolkit_rows():
        text = str(row.get("linux") or "")
        v = ver(text)
        if v is not None and 470 <= v.release[0] <= 580 and (
                v.release[0] not in by_branch or v > ver(by_branch[v.release[0]])):
            by_branch[v.release[0]] = text
    return [by_branch[b] for b in sorted(by_branch)]


def _ccs(compat) -> List[str]:
    """Every compute capability from Kepler (3.5) to Blackwell the GPU table lists."""
    out = {cc for arch in compat.architectures() for cc in arch.ccs if ver(cc) is not None and ver(cc) >= ver("3.5")}
    return sorted(out, key=ver)


def draw(rng: random.Random, compat, drivers: List[str], ccs: List[str]) -> Tuple[str, Machine]:
    node = Node(rng.choice(PYTHONS), rng.choice(ARCHES), rng.choice(GLIBCS))
    # A node's GPUs are of one era or neighbouring ones (a Kepler beside a Blackwell fits no build at all).
    first = rng.randrange(len(ccs))
    near = ccs[max(0, first - 2):first + 3]
    gpus = [Gpu("GPU %d (sm %s)" % (i, cc), cc) for i, cc in enumerate(rng.sample(near, min(len(near),
                                                                                         rng.randint(1, 3))))]
    return rng.choice(FRAMEWORKS), Machine("drawn", rng.choice(drivers), None, gpus, node=node)


def platforms(node: Node) -> List[str]:
    """What pip's --platform must list for a node (pip does not widen an explicit manylinux_2_X to older floors)."""
    major, minor = (int(x) for x in node.glibc.split("."))
    tags = ["manylinux_%d_%d_%s" % (major, m, node.machine) for m in range(minor, 4, -1)]
    legacy = [("manylinux2014", 17), ("manylinux2010", 12), ("manylinux1", 5)]
    return tags + ["%s_%s" % (name, node.machine) for name, floor in legacy if floor <= minor]


def requirement(pip_line: str) -> Tuple[str, bool]:
    """('torch==2.14.1', from the framework's own index?) from `pip install 'torch==2.14.1' --index-url ...`."""
    words = shlex.split(pip_line)
    return words[2], "--index-url" in words


def pip_resolves(req: str, node: Node) -> Tuple[bool, str]:
    target = tempfile.mkdtemp(prefix="pick-pip-")
    argv = [PYTHON, "-m", "pip", "install", "--dry-run", "--only-binary=:all:", "--python-version", node.python,
            "--target", target, "--use-feature=fast-deps", "--cache-dir", str(CACHE), "--quiet",
            "--disable-pip-version-check", "--no-input"]
    for tag in platforms(node):
        argv += ["--platform", tag]
    # PyPI alone: the machine's pip.conf adds local wheel folders that could satisfy what PyPI cannot.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") or k == "PIP_CERT"}
    env["PIP_CONFIG_FILE"] = os.devnull
    # pip evaluates Requires-Dist markers against the interpreter it runs in, whatever --platform and
    # --python-version say (torch's `triton; platform_machine == "x86_64"` would be asked for on aarch64): the pip
    # child is told the node's processor and Python as it would see them there.
    env["PYTHONPATH"] = _node_site(node)
    try:
        done = subprocess.run(argv + [req], capture_output=True, text=True, timeout=900, env=env)
    except subprocess.TimeoutExpired:
        return False, "pip ran past 900 s"
    finally:
        shutil.rmtree(target, ignore_errors=True)
    errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR")]
    return done.returncode == 0, " | ".join(errors[-2:])


def _node_site(node: Node) -> str:
    folder = Path(tempfile.gettempdir()) / ("pick-pip-site-%s-%s" % (node.python, node.machine))
    folder.mkdir(exist_ok=True)
    (folder / "sitecustomize.py").write_text(
        "import platform\n"
        "platform.machine = lambda: %r\n"
        "platform.python_version = lambda: %r\n"
        "platform.python_version_tuple = lambda: tuple(%r.split('.'))\n" % (
            node.machine, node.python + ".0", node.python + ".0"))
    return str(folder)


def _disk(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


@pytest.mark.skipif(not _online(), reason="PyPI is not reachable")
@pytest.mark.skipif(not _pip_new_enough(), reason="pip 24 or newer is needed (an older --dry-run downloads wheels)")
def test_pip_resolves_every_pick_and_turns_down_the_next_newer_release():
    compat = shipped_compat()
    index = load_wheel_index()
    count = int(os.environ.get("PICK_PIP_NODES", "40"))
    # a fresh draw each run (printed with the tally, PICK_PIP_SEED draws it again): every run is new nodes
    seed = int(os.environ.get("PICK_PIP_SEED") or random.SystemRandom().randrange(10 ** 6))
    rng = random.Random(seed)
    drivers, ccs = _drivers(compat), _ccs(compat)
    start = time.monotonic()
    answers: List[Tuple[str, Node, str, bool]] = []  # (framework, node, requirement, own index)
    newer: List[Tuple[str, Node, str]] = []  # (framework, node, requirement of the next newer release)
    none = 0
    for _ in range(count):
        framework, machine = draw(rng, compat, drivers, ccs)
        chosen = pick_cudnn(compat, "", machine) if framework == "cudnn" else pick(compat, framework, "", machine, index)
        misses = chosen.resolution.misses if chosen.resolution else []
        # (a wheel that is a CPU build on the node installs: pip cannot tell that it brings no CUDA)
        if misses and misses[0][1].kind in NODE_KINDS and "CPU build" not in misses[0][1].text:
            # the newest release turned down for the node itself (not its driver or GPUs): pip must turn it down too
            turned_down = next(b for b in compat.framework_builds(framework) if b.release == misses[0][0])
            if turned_down.default:
                newer.append((framework, machine.node, "%s==%s" % (compat.build_pip_project(turned_down),
                                                                   turned_down.release)))
        if chosen.chosen is None:
            none += 1
            continue
        with building_for(Target()):
            line = answer(compat, chosen)["install"]["pip"]
        req, own = requirement(line)
        answers.append((framework, machine.node, req, own))
    asks = sorted({(req, node) for _, node, req, _ in answers} | {(req, node) for _, node, req in newer},
                  key=lambda a: (a[0], a[1].python, a[1].machine, a[1].glibc))
    with ThreadPoolExecutor(int(os.environ.get("PICK_PIP_JOBS", "8"))) as pool:
        verdicts = dict(zip(asks, pool.map(lambda a: pip_resolves(*a), asks)))
    failed = ["%s on %s: %s" % (req, node.describe(), verdicts[(req, node)][1])
              for _, node, req, _ in answers if not verdicts[(req, node)][0]]
    wrongly_newer = ["%s on %s" % (req, node.describe()) for _, node, req in newer if verdicts[(req, node)][0]]
    print("\npick x pip, seed %d: %d nodes drawn, %d answers (%d from a framework's own index, judged on PyPI's build), "
          "%d nothing fits; %d distinct pip runs; %d resolve, %d fail; %d newer releases tried, %d wrongly install; "
          "%.0f s; pip cache %.1f MB; %s" % (
              seed, count, len(answers), sum(1 for a in answers if a[3]), none, len(asks),
              len(answers) - len(failed), len(failed), len(newer), len(wrongly_newer), time.monotonic() - start,
              _disk(CACHE) / 1e6, PYTHON))
    assert not failed, ("seed %d" % seed, failed[:10])
    assert not wrongly_newer, ("seed %d" % seed, wrongly_newer[:10])
    assert len(answers) + none == count and (answers or count < 20)
