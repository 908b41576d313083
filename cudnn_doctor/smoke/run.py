"""run_smoke: one cuDNN copy's convolution, in a child process with a time limit, judged against the CPU."""
from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Dict, Mapping, Optional, Tuple

from ..host import Host
from ..probes.hostinfo import driver_place
from ..knowledge import load_compat
from ..remedies.doctor import smoke_result_fix
from .result import SmokeResult, interpret

CHILD_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "child.py")


def run_smoke(library: str, device: int = 0, timeout: float = 60.0, env: Optional[Mapping[str, str]] = None,
              driver_library: Optional[str] = None, host: Optional[Host] = None) -> SmokeResult:
    """Run the smoke convolution through ``library`` on CUDA device ``device``.

    ``driver_library`` is the libcuda to use; by default the child loads "libcuda.so.1" by name. The child runs
    through ``host`` (the live machine's when none is given), with its environment unless ``env`` is given; the
    result names the libraries as programs under the host's root see them (the loader's own messages quote what it
    was given).
    Never raises for a broken library or machine: the result says what went wrong and how to fix it.
    """
    host = host if host is not None else Host()
    realpath = os.path.realpath(library)
    child_env = dict(host.env if env is None else env)
    # Belt and braces with CUDNN_FMA_MATH: no TF32 for float32 anywhere in the child.
    child_env["NVIDIA_TF32_OVERRIDE"] = "0"
    with tempfile.TemporaryDirectory(prefix="cudnn-doctor-smoke-") as tmp:
        progress = os.path.join(tmp, "stage")
        task = {
            "op": "smoke",
            "lib": realpath,
            # cuDNN 9's libcudnn.so.9 dlopens its sub-libraries by bare name: its own folder goes on the path.
            "search_dir": os.path.dirname(realpath),
            "device": int(device),
            "driver_lib": driver_library,
            "progress": progress,
        }
        [[raw]] = host.run_native([[task]], timeout=timeout, task_timeout=timeout, env=child_env, script=CHILD_SCRIPT)
        stage, known = _read(progress)
    if "crashed" in raw or "timeout" in raw:
        raw = dict(known, **raw)  # what the child learnt before it died still counts
    raw = dict(raw)
    raw.setdefault("device", {"index": int(device)})
    result = interpret(raw, host.inside(library), host.inside(realpath), stage)
    if result.driver_library:
        result.driver_library = host.inside(result.driver_library)
    if result.status:
        # CD510's builder, for where this machine's driver comes from (a container's from its host): one fix for both.
        result.fix = smoke_result_fix(load_compat(), result, driver_place(host)).text
    return result


def _read(path: str) -> Tuple[Optional[str], Dict[str, Any]]:
    """(last stage the child started, what it knew then); empty when it never got that far."""
    try:
        with open(path) as fh:
            data = json.load(fh)
        return data.get("stage"), dict(data.get("known") or {})
    except (OSError, ValueError, AttributeError):
        return None, {}
