"""CD510, CD609, CD610: the smoke test's verdict and loader traps in the environment itself. The CUDA variables that
slow every program down (CD612-CD614) are declared in compat/checks.toml."""
from __future__ import annotations

from typing import List

from ..model import Facts, Finding
from ..queries import driver_place
from ..remedies.doctor import no_cudnn_to_smoke_fix, smoke_result_fix
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
