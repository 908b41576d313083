"""Reading compat/*.toml once per process: from the installed package data, else the source tree."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10 only
    import tomli as tomllib

COMPAT_FILES = ("cuda_driver", "cudnn", "gpu_arch", "cudnn_layout", "frameworks", "known_bad", "symptoms",
                "status_codes", "catalogue")


def _source_tree_dir() -> Path:
    return Path(__file__).resolve().parents[2] / "compat"


def read_all() -> Tuple[Dict[str, Dict[str, Any]], str]:
    """Installed package data first; a source tree's compat/ when running with PYTHONPATH=."""
    data: Dict[str, Dict[str, Any]] = {}
    try:
        from importlib.resources import files

        base = files("cudnn_doctor._compat")
        for name in COMPAT_FILES:
            data[name] = tomllib.loads(base.joinpath(name + ".toml").read_text(encoding="utf-8"))
        return data, str(base)
    except Exception:  # older importlib.resources, or no installed data: try the folders themselves
        pass
    installed = Path(__file__).resolve().parents[1] / "_compat"
    folder = installed if (installed / "cudnn.toml").is_file() else _source_tree_dir()
    for name in COMPAT_FILES:
        with open(folder / (name + ".toml"), "rb") as fh:
            data[name] = tomllib.load(fh)
    return data, str(folder)
