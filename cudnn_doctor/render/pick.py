"""pick's answer for a terminal (the choice, how each GPU runs it, the install commands) and for scripts (one
install form alone, for `$(cudnn-doctor pick torch --emit pip)` or a requirements file)."""
from __future__ import annotations

from typing import Any, Dict, List

NAMES = {"torch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX", "onnxruntime": "ONNX Runtime",
         "cupy": "CuPy", "paddlepaddle": "PaddlePaddle", "cudnn": "cuDNN"}


def _machine_line(m: Dict[str, Any]) -> str:
    gpus = ", ".join("%s (%s)" % (g["name"], g["cc"] or "compute capability unknown") for g in m["gpus"])
    driver = "driver %s (CUDA %s)" % (m["driver"], m["driver_cuda"]) if m["driver"] else "no driver version"
    node = ", ".join(x for x in ("Python %s" % m["python"] if m.get("python") else "", m.get("processor") or "",
                                 "glibc %s" % m["glibc"] if m.get("glibc") else "") if x)
    return "%s: %s; %s%s" % (m["label"], driver, gpus or "no GPU", "; " + node if node else "")


def human_lines(data: Dict[str, Any]) -> List[str]:
    name = NAMES.get(data["framework"], data["framework"])
    within = " within %s" % data["spec"] if data["spec"] else ""
    lines = [_machine_line(data["machine"])]
    chosen = data["pick"]
    if chosen is None:
        lines.append("No %s build%s both installs on %s and runs on every GPU there:" % (
            name, within, data["machine"]["label"]))
        lines += ["  - %s" % w for w in data["why_none"]]
        lines += ["What would fit: %s" % w for w in data.get("would_fit") or []]
        if data["driver_upgrade"]:
            lines.append("Fix: %s" % data["driver_upgrade"]["fix"])
    else:
        if data["framework"] == "cudnn":
            lines.append("cuDNN %s (the build for CUDA %s) runs on every GPU%s:" % (chosen["release"], chosen["cuda"],
                                                                                   within))
        else:
            where = "PyPI's default build" if chosen["default_build"] else "from %s" % chosen["index_url"]
            lines.append("%s %s (CUDA %s build, %s) runs on every GPU%s:" % (
                name, chosen["release"], chosen["cuda"], where, within))
        if chosen["driver"]:
            lines.append("  driver %s runs CUDA %s builds (%s)" % (
                data["machine"]["driver"], chosen["cuda"], chosen["driver"]))
        lines += ["  %s (%s): %s" % (g["name"], g["cc"], g["runs"]) for g in chosen["gpus"]]
        for newer in data["newer"]:
            lines.append("  not %s (CUDA %s): %s" % (newer["release"], newer["cuda"], "; ".join(newer["why"][:2])))
        lines.append("Install:")
        install = data["install"]
        for key in ("pip", "uv", "conda", "cudnn-doctor"):
            for text in ([install[key]] if isinstance(install.get(key), str) else install.get(key) or []):
                lines.append("  %-13s %s" % (key + ":", text))
        if data["machine"]["from_report"] and install.get("conda"):
            lines.append("  (conda and pixi solve here for the node's CUDA through CONDA_OVERRIDE_CUDA; conda-forge's "
                         "release for that CUDA is its own)")
        lines.append("%s: %s" % ("Judged from" if data["framework"] == "cudnn" else "GPU code from",
                                 chosen["code_source"]))
    if data["unjudged"]:
        shown = ", ".join("%s (CUDA %s)" % (b["release"], b["cuda"]) for b in data["unjudged"][:4])
        more = len(data["unjudged"]) - 4
        lines.append("Not judged (the knowledge lacks their GPU code): %s%s" % (
            shown, " and %d more" % more if more > 0 else ""))
    return lines


def emit_lines(data: Dict[str, Any], form: str) -> List[str]:
    """One install form alone: pip, uv (the first uv line), conda or requirements."""
    value = data["install"].get(form)
    if isinstance(value, list):
        return value if form == "requirements" else value[:1]
    return [value] if value else []
