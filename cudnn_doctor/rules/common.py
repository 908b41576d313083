"""What the rule modules share: finding construction and the knowledge base handle.

Fact queries live in cudnn_doctor/queries.py and fix builders in cudnn_doctor/remedies.py; their names are
re-exported here so rule modules can keep importing them from one place."""
from __future__ import annotations

from typing import Any, Dict, Optional, Sequence

from ..knowledge import Compat
from ..model import Finding, Fix, Severity
from ..queries import (  # noqa: F401  (re-exported for the rule modules)
    best_torch_variant, cc_below, consumers, copy_for_path, cudnn_build_exists, cudnn_older, cudnn_release_for,
    cudnn_runs_on_cc, describe_copy, driver_cuda, driver_version, floor_branch, framework_kind, gpu_cudnn_problems,
    gpu_label, gpus_with_cc, has_driver, is_pip_dir, is_used, jax_choice, ld_entry_for, local_tag, lowest_cc,
    machine_cuda, plain_resolutions, platform_of, primary_toolkit, same_file, toolkit_owning, used_copies,
    visible_gpus)
from ..remedies import (  # noqa: F401  (re-exported for the rule modules)
    arch_driver_limit, copy_wheel, cudnn_dir_fix, cudnn_install_fix, cudnn_wheel_for, driver_upgrade_fix,
    export_path_line, jax_install, ld_conf_fix, ld_conf_name, ld_library_path_without, machine_cudnn_fix,
    prepend_ld_path, q, qs, reinstall_fix, toolkit_install_fix, torch_install, torch_variant_tag)

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO


def finding(rule_id: str, severity: Severity, title: str, detail: str = "", fix: Any = "",
            evidence: Optional[Dict[str, Any]] = None, catalogue: Sequence[str] = ()) -> Finding:
    """A Finding; `fix` is a Fix from cudnn_doctor.remedies (a plain string is still accepted and wrapped)."""
    return Finding(id=rule_id, severity=severity, title=title, detail=detail, fix=fix,
                   evidence=dict(evidence or {}), catalogue=list(catalogue))


def compat_of(ctx) -> Compat:
    """The knowledge base the caller handed in (RuleContext.compat); rules never read files themselves."""
    compat = getattr(ctx, "compat", None)
    if compat is None:
        raise RuntimeError("RuleContext.compat is not set: pass load_compat() when evaluating rules")
    return compat

