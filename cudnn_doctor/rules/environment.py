"""CD510, CD609, CD610, CD612, CD613: the smoke test's verdict, loader traps in the environment itself, and CUDA
environment variables that slow every program down."""
from __future__ import annotations

from typing import List

from ..model import Facts, Finding
from ..queries import driver_place, platform_of
from ..remedies.doctor import no_cudnn_to_smoke_fix, smoke_result_fix
from ..remedies.environment import environment_variable_fix
from ..remedies.loader import absolute_ld_library_path_fix, broken_library_fix
from ..results import SmokeSkipped
from . import LINUX, RuleContext, rule
from .common import ERROR, INFO, WARNING, compat_of, finding


@rule("CD510", "smoke-test-failed", "A real convolution through cuDNN failed", section="smoke")
def smoke(facts: Facts, ctx: RuleContext) -> List[Finding]:
    result = ctx.smoke if ctx is not None else None
    if result is None:
        return []
    if isinstance(result, SmokeSkipped):  # nothing loaded, nothing ran: the install command for this machine
        return [finding(ERROR, "Smoke test failed: %s" % result.summary, detail=_SMOKE_DETAIL, remedy=no_cudnn_to_smoke_fix(facts, compat_of(ctx)),
                        catalogue=["E3", "E4"])]
    library = result.library or "?"
    if result.ok:
        return [finding(INFO, "Smoke test passed: %s" % result.summary,
                        evidence={"library": library, "max_rel_error": result.max_rel_error,
                                  "first_result_ms": result.first_result_ms})]
    evidence = {"library": result.library, "status": result.status, "failed_call": result.failed_call,
                "gpu_name": result.gpu_name, "error_message": result.error_message}
    return [finding(
        ERROR, "Smoke test failed: %s" % result.summary, detail=result.diagnosis or _SMOKE_DETAIL,
        remedy=smoke_result_fix(compat_of(ctx), result, driver_place(facts)) if result.library else
        no_cudnn_to_smoke_fix(facts, compat_of(ctx)),
        evidence={k: v for k, v in evidence.items() if v is not None}, catalogue=["E3", "E4"])]


_SMOKE_DETAIL = ("The files look right, but cuDNN could not run a convolution here, which is what a framework would "
                 "do first.")


@rule("CD609", "ld-library-path-current-folder", "LD_LIBRARY_PATH makes programs search their current folder",
      platforms=LINUX, section="loader")
def cwd_in_path(facts: Facts, ctx: RuleContext) -> List[Finding]:
    if not facts.loader.ld_library_path_cwd:
        return []
    return [finding(
        WARNING, "LD_LIBRARY_PATH has an empty or relative entry (a stray ':' or '.')",
        detail="The loader reads it as the current folder, so which libcudnn or libcuda a program loads depends on "
               "where it is started: a copy lying in a project folder silently wins over the installed one.",
        remedy=absolute_ld_library_path_fix(facts),
        evidence={"LD_LIBRARY_PATH": facts.loader.ld_library_path}, catalogue=["F1", "E2"])]


@rule("CD610", "loader-stops-at-broken-file", "The loader reaches a broken library file first", platforms=LINUX,
      section="loader")
def broken_first(facts: Facts, ctx: RuleContext) -> List[Finding]:
    out: List[Finding] = []
    for name, res in sorted(facts.loader.resolved.items()):
        if not res.error or not res.path:
            continue
        out.append(finding(
            ERROR, "%s: the loader reaches %s first and fails (%s)" % (name, res.path, res.error),
            detail="glibc passes over libraries built for another architecture, but a truncated or non-ELF file "
                   "ends the search: every program asking for %s fails with '%s: %s', even though %s" % (
                       name, res.path, res.error, "a good copy exists later on the path" if res.shadowed else
                       "the rest of the stack may be fine"),
            remedy=broken_library_fix(res.path, res.via == "LD_LIBRARY_PATH"),
            evidence={"soname": name, "path": res.path, "via": res.via, "error": res.error,
                      "later_copies": [s["path"] for s in res.shadowed]},
            catalogue=["D6", "F4"]))
    return out


@rule("CD612", "cuda-launch-blocking", "CUDA_LAUNCH_BLOCKING=1 makes every kernel launch wait", section="loader")
def launch_blocking(facts: Facts, ctx: RuleContext) -> List[Finding]:
    value = facts.environment.get("CUDA_LAUNCH_BLOCKING")
    if value is None or value.strip() != "1":
        return []
    return [finding(
        WARNING, "CUDA_LAUNCH_BLOCKING=1 is set: every CUDA kernel launch waits for the kernel to finish",
        detail="A debugging aid (errors are reported at the launch that caused them): the CPU can no longer queue "
               "work ahead of the GPU, so training and inference run slower, often several times. Set it for one "
               "debugging run, not for every program.",
        remedy=environment_variable_fix("CUDA_LAUNCH_BLOCKING", platform_of(facts)),
        evidence={"CUDA_LAUNCH_BLOCKING": value})]


@rule("CD613", "cuda-module-loading-eager", "CUDA_MODULE_LOADING=EAGER loads every kernel at start-up",
      section="loader")
def eager_loading(facts: Facts, ctx: RuleContext) -> List[Finding]:
    value = facts.environment.get("CUDA_MODULE_LOADING")
    if value is None or value.strip().upper() != "EAGER":
        return []
    return [finding(
        INFO, "CUDA_MODULE_LOADING=EAGER is set: CUDA loads every kernel of every library when a program starts",
        detail="Lazy loading (CUDA's default in current releases) loads a kernel when it is first used; eager loading "
               "makes every program start slower and hold more GPU memory, most of it for cuDNN and cuBLAS kernels "
               "it never runs. Keep it only where a program relies on every kernel being loaded up front.",
        remedy=environment_variable_fix("CUDA_MODULE_LOADING", platform_of(facts), "LAZY"),
        evidence={"CUDA_MODULE_LOADING": value})]
