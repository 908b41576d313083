"""Real stacks for the corpus: a venv of real framework and cuDNN wheels, folders on LD_LIBRARY_PATH, a system folder
behind a real ld.so.cache, a conda-style prefix; built from cached trees by hard links, in seconds."""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import realdata
import realworld_wheels as wheels

SITE = "venv/lib/python3.11/site-packages"
USER_SITE = "home/.local/lib/python3.11/site-packages"  # HOME is the case's own home/ when it has a user site
# The library in each framework that loads cuDNN (DT_NEEDED or dlopen from code inside it).
FRAMEWORK_LIBRARY = {
    "torch": "torch/lib/libtorch_cuda.so",
    "tensorflow": "tensorflow/libtensorflow_framework.so.2",
    "onnxruntime-gpu": "onnxruntime/capi/libonnxruntime_providers_cuda.so",
    "jax-cuda12-pjrt": "jax_plugins/xla_cuda12/xla_cuda_plugin.so",
    "jax-cuda13-pjrt": "jax_plugins/xla_cuda13/xla_cuda_plugin.so",
    "cupy-cuda12x": "cupy_backends/cuda/libs/cudnn.cpython-311-x86_64-linux-gnu.so",
    "paddlepaddle-gpu": "paddle/libs/libphi.so",
    "jaxlib": None,  # the CPU core: loads no cuDNN
}
Wheel = Tuple[str, str]


@dataclass
class Folder:
    """A folder of cuDNN libraries from a wheel (all, or only some names) outside the venv."""

    label: str  # the folder's name under the case
    wheel: Wheel
    only: Sequence[str] = ()


@dataclass
class Case:
    name: str
    framework: Wheel  # the framework whose cuDNN load is judged
    site: Sequence[Wheel] = ()  # more wheels in the venv (cuDNN, a JAX plugin, a second framework)
    ld_path: Sequence[str] = ()  # LD_LIBRARY_PATH: folder labels, or "@site-cudnn" for the venv's own cuDNN folder
    folders: Sequence[Folder] = ()
    system: Optional[Folder] = None  # listed in the case's ld.so.conf, so its real ld.so.cache names it
    conda: Optional[Folder] = None  # a conda-style prefix (lib/ + conda-meta record), its lib on LD_LIBRARY_PATH
    drop_from_site: Sequence[str] = ()  # cuDNN file globs deleted from the venv's copy (a damaged install)
    note: str = ""
    was_wrong: str = ""  # the failure of the issue this case reproduces (it failed against main's code)
    judged: Sequence[Wheel] = ()  # more frameworks of the venv judged too (every consumer of the environment)
    target: Sequence[Wheel] = ()  # wheels installed by `pip install --target` into a folder on PYTHONPATH
    preload: Sequence[str] = ()  # LD_PRELOAD: "LABEL/FILE" of a folder's library (ld.so loads it before the program)
    pth: Sequence[Wheel] = ()  # wheels in a folder that a .pth file of the venv's site-packages puts on sys.path
    user_site: bool = False  # framework and site wheels in ~/.local's user site (`pip install --user`), not the venv's
    activated: bool = True  # False: the venv's bin/ is on PATH but VIRTUAL_ENV is unset (a second environment on PATH)


@dataclass
class Stack:
    case: Case
    root: Path
    env: Dict[str, str] = field(default_factory=dict)
    venv: Optional[Path] = None  # a venv elsewhere under root that holds the framework (one `fix` made), not root/venv

    @property
    def site(self) -> Path:
        """Where the framework is installed: the venv's site-packages, or the user site of the case's HOME."""
        if self.venv is not None:
            return next(self.venv.glob("lib/python3*/site-packages"))
        return self.root / (USER_SITE if self.case.user_site else SITE)

    @property
    def python(self) -> Path:
        return (self.venv or self.root / "venv") / "bin/python"

    @property
    def pth_folder(self) -> Path:
        return self.root / "pthdeps"

    @property
    def cache(self) -> Path:
        return self.root / "etc/ld.so.cache"

    @property
    def conf(self) -> Path:
        return self.root / "etc/ld.so.conf"

    @property
    def target(self) -> Path:
        return self.root / "pydeps"

    def library(self) -> Optional[Path]:
        """The framework's library that loads cuDNN; None for a CPU-only build (it has none)."""
        rel = FRAMEWORK_LIBRARY.get(self.case.framework[0])
        return self.site / rel if rel and (self.site / rel).exists() else None


def as_installed(stack: Stack, wheel: Wheel) -> Wheel:
    """The framework wheel as the site now holds it: where a fix moved it to its release's build for another CUDA
    (jax-cuda12-pjrt 0.7.2 -> jax-cuda13-pjrt 0.7.2: the same release, the user's programs unchanged), that build; the
    wheel itself otherwise."""
    name, version = wheel
    def holds(project: str) -> bool:
        return any(stack.site.glob("%s-%s.dist-info" % (project.replace("-", "_"), version)))
    if holds(name) or not re.search(r"cuda\d+", name):
        return wheel
    builds = [n for n in FRAMEWORK_LIBRARY if n != name and re.sub(r"\d+", "", n) == re.sub(r"\d+", "", name)]
    return next(((n, version) for n in builds if holds(n)), wheel)


def unpacked(wheel: Wheel) -> Optional[Path]:
    name, version = wheel
    if name.startswith("nvidia-"):
        wheels.wheel_file(name, version)  # fetched for any manylinux tag (cuDNN 9.24's wheel is manylinux_2_27)
        return realdata.real_wheel(name, version)  # NVIDIA's wheels whole: every sub-library is a candidate
    return wheels.tree(name, version)


def _cudnn_lib(tree: Path) -> Path:
    return tree / "nvidia/cudnn/lib"


def missing_wheels(case: Case) -> List[Wheel]:
    wanted = [case.framework, *case.site, *case.target, *[f.wheel for f in case.folders]]
    wanted += [f.wheel for f in (case.system, case.conda) if f is not None]
    return [w for w in wanted if unpacked(w) is None]


def make_venv(root: Path, system_site: bool = False) -> None:
    """A real venv without pip of its own: its `pip` is the test's pip working on it (`pip --python`, pip >= 22.3),
    so a fix's `pip install` lands in the case's site-packages whatever the interpreter has installed. With
    ``system_site`` it sees the user site too (site.py enables it only for such a venv)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", *(["--system-site-packages"] if system_site else []),
                    str(root / "venv")], check=True)
    pip = root / "venv/bin/pip"
    pip.write_text('#!/bin/sh\nexec %s -m pip --python "$(dirname "$0")/python" "$@"\n' % shlex.quote(sys.executable))
    pip.chmod(0o755)


def build(case: Case, root: Path) -> Stack:
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    make_venv(root, system_site=case.user_site)
    stack = Stack(case, root)
    stack.site.mkdir(parents=True, exist_ok=True)
    for wheel in (case.framework, *case.site):
        wheels.link_into(unpacked(wheel), stack.site)
    for wheel in case.target:
        wheels.link_into(unpacked(wheel), stack.target)
    for wheel in case.pth:
        wheels.link_into(unpacked(wheel), stack.pth_folder)
    if case.pth:  # one line naming the folder, as `conda develop` or a site's own .pth writes it
        (root / SITE / "extra-libraries.pth").write_text(str(stack.pth_folder) + "\n")
    for pattern in case.drop_from_site:
        for path in stack.site.glob("nvidia/cudnn/lib/" + pattern):
            path.unlink()
    dirs = {"@site-cudnn": str(_cudnn_lib(stack.site))}
    for folder in case.folders:
        dest = root / "extra" / folder.label
        wheels.link_into(_cudnn_lib(unpacked(folder.wheel)), dest, folder.only)
        dirs[folder.label] = str(dest)
    conf_dirs = []
    if case.system is not None:
        dest = root / "usr/local/cudnn/lib"
        wheels.link_into(_cudnn_lib(unpacked(case.system.wheel)), dest, case.system.only)
        conf_dirs.append(str(dest))
    ld_path = [dirs[label] for label in case.ld_path]
    if case.conda is not None:
        prefix = root / "conda"
        wheels.link_into(_cudnn_lib(unpacked(case.conda.wheel)), prefix / "lib", case.conda.only)
        (prefix / "conda-meta").mkdir(parents=True)
        version = case.conda.wheel[1]
        (prefix / "conda-meta" / ("cudnn-%s-h0_0.json" % version)).write_text(json.dumps(
            {"name": "cudnn", "version": version, "build": "h0_0", "depends": []}))
        ld_path.insert(0, str(prefix / "lib"))
        stack.env["CONDA_PREFIX"] = str(prefix)
    write_loader_config(stack, conf_dirs)
    stack.env.update({"PATH": "%s/venv/bin:/usr/bin:/bin" % root,
                      "HOME": str(root / "home") if case.user_site else os.environ.get("HOME", "/root")})
    if case.activated:
        stack.env["VIRTUAL_ENV"] = str(root / "venv")
    if ld_path:
        stack.env["LD_LIBRARY_PATH"] = ":".join(ld_path)
    if case.target:
        stack.env["PYTHONPATH"] = str(stack.target)
    if case.preload:
        stack.env["LD_PRELOAD"] = " ".join("%s/%s" % (dirs[e.split("/")[0]], e.split("/", 1)[1]) for e in case.preload)
    return stack


def write_loader_config(stack: Stack, conf_dirs: Sequence[str]) -> None:
    """The case's ld.so.conf and the real ld.so.cache ldconfig builds from it (the trusted folders included)."""
    stack.conf.parent.mkdir(parents=True, exist_ok=True)
    stack.conf.write_text("".join(d + "\n" for d in conf_dirs))
    subprocess.run(["ldconfig", "-X", "-C", str(stack.cache), "-f", str(stack.conf)], check=True,
                   capture_output=True)


def copy(stack: Stack, root: Path) -> Stack:
    """The same stack under another folder (hard links), for applying a fix without touching the original."""
    shutil.rmtree(root, ignore_errors=True)
    subprocess.run(["cp", "-al", str(stack.root), str(root)], check=True)
    old, new = str(stack.root), str(root)
    env = {k: v.replace(old, new) for k, v in stack.env.items()}
    for script in (root / "venv/bin").iterdir():  # the venv names its own folder in its scripts and config
        if script.is_file() and not script.is_symlink() and script.stat().st_size < 65536:
            text = script.read_text(errors="replace")
            if old in text:
                script.unlink()
                script.write_text(text.replace(old, new))
                script.chmod(0o755)
    for pth in (root / SITE).glob("*.pth"):  # a .pth naming the case's own folder (pthdeps): the copy's
        text = pth.read_text(errors="replace")
        if old in text:
            pth.unlink()
            pth.write_text(text.replace(old, new))
    cfg = root / "venv/pyvenv.cfg"
    text = cfg.read_text()
    cfg.unlink()
    cfg.write_text(text.replace(old, new))
    moved = Stack(stack.case, root, env)
    conf = stack.conf.read_text().replace(old, new)
    moved.conf.unlink()
    moved.cache.unlink()
    write_loader_config(moved, [d for d in conf.splitlines() if d])
    return moved
