"""Reading compat/*.toml once per process: from the installed package data, else the source tree."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict, Tuple

COMPAT_FILES = ("cuda_driver", "cudnn", "gpu_arch", "cudnn_layout", "frameworks", "known_bad", "symptoms",
                "status_codes", "catalogue", "gpu_peaks", "windows", "packages", "containers", "framework_features")


def _parse_toml(text: str) -> Dict[str, Any]:
    # Imported here: a run that finds the files unchanged reads the parse cache and never needs a TOML parser.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.9/3.10 only
        import tomli as tomllib
    return tomllib.loads(text)


def _source_tree_dir() -> Path:
    return Path(__file__).resolve().parents[2] / "compat"


def read_all() -> Tuple[Dict[str, Dict[str, Any]], str]:
    """Installed package data first; a source tree's compat/ when running with PYTHONPATH=.

    Plain folders are read through a parse cache keyed on each file's identity (parsed_cache.py);
    importlib.resources (zip installs) only when there is no folder.
    """
    installed = Path(__file__).resolve().parents[1] / "_compat"
    folder = installed if (installed / "cudnn.toml").is_file() else _source_tree_dir()
    if (folder / "cudnn.toml").is_file():
        from ..parsed_cache import load

        paths = {name: folder / (name + ".toml") for name in COMPAT_FILES}
        return load(paths, lambda raw: _parse_toml(raw.decode("utf-8")), "compat"), str(folder)
    from importlib.resources import files

    base = files("cudnn_doctor._compat")
    data = {name: _parse_toml(base.joinpath(name + ".toml").read_text(encoding="utf-8")) for name in COMPAT_FILES}
    return data, str(base)
