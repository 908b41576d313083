"""Turns what the smoke child reported into a SmokeResult: pass or fail, one summary line, diagnosis and fix."""
from __future__ import annotations

from typing import Any, Dict, Optional

from ..knowledge import load_compat
from ..run_results import SmokeResult
from ..versions import decode_cuda, decode_cudnn
from . import codes
from .bindings import FWD_ALGOS


def _short_bytes(n: Optional[int]) -> str:
    if n is None:
        return "?"
    if n < 1024:
        return "%d B" % n
    size = float(n)
    for unit in ("KiB", "MiB", "GiB"):
        size /= 1024
        if size < 1024 or unit == "GiB":
            break
    return "%.1f %s" % (size, unit)


def _algo_name(algo: Optional[int]) -> Optional[str]:
    if algo is None:
        return None
    return FWD_ALGOS[algo] if 0 <= algo < len(FWD_ALGOS) else "algo %d" % algo


def _fill_facts(result: SmokeResult, raw: Dict[str, Any]) -> None:
    result.version_code = raw.get("version")
    result.version = decode_cudnn(raw.get("version"))
    result.cudart_version = decode_cuda(raw.get("cudart_version"))
    result.driver_library = raw.get("driver_library")
    result.driver_cuda_version = decode_cuda(raw.get("driver_cuda_version"))
    device = raw.get("device") or {}
    result.device_count = device.get("count")
    result.gpu_name = device.get("name")
    result.gpu_cc = device.get("cc")
    conv = raw.get("conv") or {}
    result.seed = conv.get("seed")
    result.algorithm = _algo_name(conv.get("algo"))
    result.workspace_bytes = conv.get("workspace")
    result.max_rel_error = conv.get("max_rel_error")
    result.nonfinite = conv.get("nonfinite")
    result.unwritten = conv.get("poisoned")
    timings = raw.get("timings") or {}
    result.first_result_ms = timings.get("first_result_ms")
    result.total_ms = timings.get("total_ms")
    create = raw.get("cudnn_create")
    if create is not None:
        result.cudnn_answer = codes.status_name("cudnn", create["code"], result.version_code)
        result.cudnn_answer_detail = create.get("detail") or None
    fb = conv.get("fallback")
    if fb:
        err = fb.get("error") or {}
        why = codes.status_name(err.get("api", "cuda"), err.get("code", -1), result.version_code)
        result.fallback = "%s needs %s of workspace and %s failed with %s; retried with IMPLICIT_GEMM (no workspace)" % (
            _algo_name(fb.get("from_algo")), _short_bytes(fb.get("workspace")), err.get("func"), why)


def _apply(result: SmokeResult, name: str, api: str, code: Optional[int] = None, call: Optional[str] = None,
           message: Optional[str] = None, version: Optional[int] = None) -> None:
    words = codes.explain(name, code, version)
    result.status, result.status_api, result.status_code = name, api, code
    result.failed_call, result.error_message = call, message or None
    result.diagnosis, result.catalogue = words.diagnosis, words.catalogue  # the fix: run_smoke, with CD510's builder
    result.summary = words.headline


def _driver_too_old(raw: Dict[str, Any]) -> bool:
    """The driver's CUDA is older than the one cuDNN was built for (minor-version compatible from CUDA 11)."""
    drv, built = raw.get("driver_cuda_version"), raw.get("cudart_version")
    if not drv or not built:
        return False

    if load_compat().has_minor_compat(built // 1000):
        return built // 1000 > drv // 1000
    return built > drv


def _label(result: SmokeResult) -> str:
    name = "cuDNN %s" % result.version if result.version else "cuDNN"
    return "%s (%s)" % (name, result.library_realpath or result.library)


def interpret(raw: Dict[str, Any], library: str, realpath: Optional[str], stage: Optional[str]) -> SmokeResult:
    """The verdict for one child report (a result dict, or the runner's crashed/timeout/error record)."""
    result = SmokeResult(ok=False, library=library, library_realpath=realpath,
                         device_index=int((raw.get("device") or {}).get("index", 0)))
    _fill_facts(result, raw)
    label = _label(result)
    error = raw.get("error")
    driver_error = raw.get("driver_error")
    conv = raw.get("conv") or {}
    version = result.version_code

    if ("crashed" in raw or "timeout" in raw) and driver_error:
        # The driver had already failed; cuDNN dying afterwards is a consequence, not the cause.
        _explain_driver(result, driver_error, label)
        what = "crashed (%s)" % raw["crashed"] if "crashed" in raw else "hung (no answer within %ss)" % raw["timeout"]
        result.summary += "; then cuDNN %s during %s" % (what, stage or "start-up")
    elif "crashed" in raw:
        _apply(result, "SMOKE_CRASHED", "smoke", call=stage, message="the child process died: %s" % raw["crashed"])
        result.summary = "%s: %s (%s during %s)" % (label, result.summary, raw["crashed"], stage or "start-up")
    elif "timeout" in raw:
        _apply(result, "SMOKE_TIMEOUT", "smoke", call=stage, message="no answer within %ss" % raw["timeout"])
        result.summary = "%s: %s (no answer within %ss, during %s)" % (label, result.summary, raw["timeout"],
                                                                       stage or "start-up")
    elif isinstance(error, str) or (isinstance(error, dict) and error.get("api") == "child"):
        text = error if isinstance(error, str) else error.get("message")
        _apply(result, "SMOKE_CHILD_ERROR", "smoke", call=stage, message=text)
        result.summary = "%s: %s: %s" % (label, result.summary, text)
    elif error and error.get("api") == "loader":
        _apply(result, "SMOKE_LOAD_FAILED", "smoke", call="dlopen", message=error.get("message"))
        result.summary = "%s: %s: %s" % (label, result.summary, error.get("message"))
    elif error and error.get("api") == "symbol":
        _apply(result, "SMOKE_MISSING_SYMBOL", "smoke", call=error.get("func"),
               message="%s is not exported" % error.get("func"))
        result.summary = "%s: %s (%s is not exported)" % (label, result.summary, error.get("func"))
    elif error and error.get("api") == "smoke" and error.get("func") == "cudnnGetVersion":
        _apply(result, "SMOKE_UNSUPPORTED_VERSION", "smoke", call="cudnnGetVersion")
        result.summary = "%s: %s" % (label, result.summary)
    elif error and error.get("api") == "smoke":
        _apply(result, "SMOKE_MISMATCH", "smoke", call=error.get("func"), message=error.get("message"))
        result.summary = "%s: %s: %s" % (label, result.summary, error.get("message"))
    elif driver_error:
        _explain_driver(result, driver_error, label)
    elif error and error.get("api") == "cudnn":
        name = codes.status_name("cudnn", error["code"], version)
        if error.get("func") == "cudnnCreate" and _driver_too_old(raw):
            _apply(result, "cudaErrorInsufficientDriver", "cuda_runtime", 35, "cudnnCreate",
                   error.get("detail") or error.get("message"))
            result.summary = "%s: %s: the driver supports CUDA %s, this cuDNN was built for CUDA %s (%s)" % (
                label, result.summary, result.driver_cuda_version, result.cudart_version, name)
        else:
            _apply(result, name, "cudnn", error["code"], error.get("func"),
                   error.get("detail") or error.get("message"), version)
            result.summary = "%s: %s: %s from %s" % (label, result.summary, name, error.get("func"))
    elif error and error.get("api") == "cuda":
        name = codes.status_name("cuda", error["code"])
        _apply(result, name, "cuda", error["code"], error.get("func"))
        result.summary = "%s: %s: %s from %s" % (label, result.summary, name, error.get("func"))
    elif error:
        _apply(result, "SMOKE_CHILD_ERROR", "smoke", call=error.get("func"), message=error.get("message"))
        result.summary = "%s: %s: %s" % (label, result.summary, error.get("message"))
    else:
        _judge_numbers(result, conv, label)
    return result


def _explain_driver(result: SmokeResult, err: Dict[str, Any], label: str) -> None:
    if err.get("api") == "loader" and err.get("func") == "dlopen":
        _apply(result, "SMOKE_NO_DRIVER_LIBRARY", "smoke", call="dlopen %s" % err.get("library"),
               message=err.get("message"))
        what = "%s could not be loaded" % err.get("library")
    elif err.get("api") == "loader":
        _apply(result, "SMOKE_DRIVER_SYMBOL_MISSING", "smoke", call=err.get("func"), message=err.get("message"))
        what = str(err.get("message"))
    else:
        name = codes.status_name("cuda", err["code"])
        _apply(result, name, "cuda", err["code"], err.get("func"))
        what = "%s from %s" % (name, err.get("func"))
    answer = "; cuDNN's own answer: %s" % result.cudnn_answer if result.cudnn_answer else ""
    result.summary = "%s: %s: %s%s" % (label, result.summary, what, answer)


def _judge_numbers(result: SmokeResult, conv: Dict[str, Any], label: str) -> None:
    elements = conv.get("elements") or 0
    unwritten, nonfinite, err = conv.get("poisoned") or 0, conv.get("nonfinite") or 0, conv.get("max_rel_error")
    if unwritten:
        _apply(result, "SMOKE_UNWRITTEN", "smoke", call="cudnnConvolutionForward")
        result.summary = "%s: %s (%d of %d output values never written)" % (label, result.summary, unwritten, elements)
    elif nonfinite or err is None:
        _apply(result, "SMOKE_NONFINITE", "smoke", call="cudnnConvolutionForward")
        result.summary = "%s: %s (%d of %d values)" % (label, result.summary, nonfinite, elements)
    elif err > result.threshold:
        _apply(result, "SMOKE_MISMATCH", "smoke", call="cudnnConvolutionForward")
        result.summary = "%s: %s: max relative error %.2e > %.0e (%s)" % (
            label, result.summary, err, result.threshold, result.algorithm)
    else:
        result.ok = True
        _apply(result, "SMOKE_WORKSPACE_FALLBACK" if result.fallback else "SMOKE_OK", "smoke")
        if not result.fallback:  # a clean pass names no status and needs no fix
            result.status = None
        where = "%s, CC %s" % (result.gpu_name or "GPU %d" % result.device_index, result.gpu_cc or "?")
        result.summary = "%s on %s: convolution matches the CPU (max rel error %.1e, %s, %s workspace, %s ms to first result)" % (
            label, where, err, result.algorithm, _short_bytes(result.workspace_bytes),
            "%.0f" % result.first_result_ms if result.first_result_ms is not None else "?")
        if result.fallback:
            result.summary += "; memory is tight: %s" % result.fallback
