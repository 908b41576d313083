"""Real virtual environments for `cudnn-doctor fix` tests: python -m venv (no network), small wheels built here and
a local --find-links folder, so pip itself installs, resolves and uninstalls them offline."""
from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
import sys
from pathlib import Path
from typing import Dict, List, Sequence

from archive_factory import entry, wheel_record, write_wheel, write_zip


def framework_wheel(directory: Path, name: str, version: str, requires: Sequence[str] = (),
                    files: Dict[str, str] = {}) -> Path:
    """A pure-Python wheel of ``name`` (e.g. a torch whose version.py says its CUDA) with these Requires-Dist."""
    norm = name.replace("-", "_")
    dist = "%s-%s.dist-info" % (norm, version)
    meta = "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version)
    meta += "".join("Requires-Dist: %s\n" % r for r in requires)
    entries = [entry(rel, data=text.encode()) for rel, text in files.items()]
    entries += [entry("%s/METADATA" % dist, data=meta.encode()),
                entry("%s/WHEEL" % dist, data=b"Wheel-Version: 1.0\nTag: py3-none-any\n")]
    entries.append(entry("%s/RECORD" % dist, data=wheel_record(entries, "%s/RECORD" % dist)))
    return write_zip(Path(directory) / ("%s-%s-py3-none-any.whl" % (norm, version)), entries)


def torch_wheel(directory: Path, version: str = "2.3.1", cudnn_pin: str = "8.9.2.26", cuda: str = "12.1") -> Path:
    return framework_wheel(directory, "torch", version,
                           requires=['nvidia-cudnn-cu12==%s; platform_system == "Linux"' % cudnn_pin],
                           files={"torch/__init__.py": "", "torch/version.py": "cuda = '%s'\n" % cuda})


def cudnn_wheel(directory: Path, version: str, cuda_major: int = 12) -> Path:
    return write_wheel(Path(directory), version=version, cuda_major=cuda_major)


def open_to_others(folder: Path) -> None:
    """pytest makes its temporary folders 0700: a venv there is unreadable to other users (CD405), an error a fix that
    makes a framework load its cuDNN would bring; a real venv lives where its users can read it."""
    top = Path(tempfile.gettempdir()).resolve()
    for part in [folder, *folder.parents]:  # pytest's own folders, popen-gwN of xdist's workers too, up to /tmp
        if part.resolve() == top or part == part.parent:
            break
        part.chmod(0o755)


def make_venv(where: Path) -> Path:
    """python -m venv without pip's own download (ensurepip installs from the bundled wheel)."""
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, capture_output=True)
    return where


def bundled_pip_wheels(links: Path) -> None:
    """The pip and setuptools wheels this Python bundles (ensurepip), linked into ``links``: `python -m venv
    --upgrade-deps` asks pip for them, offline too (a new environment per framework is made so)."""
    import ensurepip
    bundled = Path(ensurepip.__file__).parent / "_bundled"
    links.mkdir(parents=True, exist_ok=True)
    for wheel in bundled.glob("*.whl"):
        if not (links / wheel.name).exists():
            (links / wheel.name).symlink_to(wheel)


def offline_pip_env(links: Path) -> Dict[str, str]:
    """What makes the environment's pip resolve from ``links`` alone, as pip reads it from the environment."""
    return {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(links), "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_COMPILE": "0",
            "PIP_NO_INPUT": "1"}


def pip(venv: Path, *args: str, links: Path) -> None:
    env = dict(os.environ, **offline_pip_env(links))
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", *args], check=True, capture_output=True, env=env)


def state_hashes(venv: Path) -> Dict[str, str]:
    """sha256 of every dist-info RECORD in the venv's site-packages and of bin/activate: the package set and files."""
    out: Dict[str, str] = {}
    for record in sorted(venv.glob("lib/python*/site-packages/*.dist-info/RECORD")):
        out[str(record.relative_to(venv))] = hashlib.sha256(record.read_bytes()).hexdigest()
    activate = venv / "bin" / "activate"
    out["bin/activate"] = hashlib.sha256(activate.read_bytes()).hexdigest()
    return out


def site_of(venv: Path) -> Path:
    found: List[Path] = sorted(venv.glob("lib/python*/site-packages"))
    return found[0]
