"""Fixes for the doctor's own trouble: a probe that failed, a rule that raised."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Optional

from ..knowledge import Compat
from ..model import Facts, Fix
from ..queries import machine_cuda
from .catalogue import table_fix
from .cudnn import machine_cudnn_fix
from .acting import at, doctor
from .driver import missing_driver_fix
from .shell import q, run, said, say

if TYPE_CHECKING:
    from ..run_results import SmokeResult


def probe_failed_fix() -> Fix:
    return said("Re-run with `%s` and report it with `%s` attached.", doctor("--debug check -v"), doctor("check --json"))


def rule_crashed_fix() -> Fix:
    return said("Report it with the output of `%s` attached.", doctor("check --json"))


def smoke_status_fix(compat: Compat, status: Optional[str], code: Optional[int] = None,
                     cudnn_version: Optional[int] = None) -> Fix:
    """The fix NVIDIA's status table gives for a smoke failure (compat/status_codes.toml), else how to see more."""
    fix = table_fix(compat.status_words(status, code, cudnn_version)) if status else Fix()
    if fix:
        return fix
    command = doctor("smoke --json")
    return run(command, text="Run `%s` for the failing call and status." % command)


def smoke_result_fix(compat: Compat, result: SmokeResult, place: str) -> Fix:
    """The one fix for a failed smoke result, which `smoke` prints and CD510 gives: no driver library is the missing
    driver's answer for where the driver comes from (``place``, as check's CD101 gives it: a container's from its
    host); else the status table's (cuDNN's version counts only for a status cuDNN itself returned: cuDNN 9
    renumbered its statuses)."""
    if result.status == "SMOKE_NO_DRIVER_LIBRARY":
        return missing_driver_fix(place)
    return smoke_status_fix(compat, result.status, result.status_code,
                            result.version_code if result.status_api == "cudnn" else None)


def no_cudnn_to_smoke_fix(facts: Facts, compat: Compat) -> Fix:
    """No cuDNN a plain process would load, so nothing to smoke-test: the install command for this machine's CUDA
    (as the other install fixes give it), or, with no CUDA known, what to install first."""
    cuda = machine_cuda(facts, compat)
    if cuda:
        return machine_cudnn_fix(facts, compat, cuda)
    return said("Install the NVIDIA driver (or a CUDA toolkit) first; `%s` then names the cuDNN build to install "
                "for it.", doctor("check"))


def hung_mount_fix(path: str) -> Fix:
    """See whether the file system under a path that blocked answers, then check again (``path`` as the root's programs see it)."""
    folder = q(at(os.path.dirname(path) or "/"))
    return said("See whether the file system under it answers (a hung NFS/Lustre mount blocks every read): "
                "`%s; %s`, then `%s`; remount or restore the server, then run the check again.",
                "timeout 5 stat %s" % folder, "findmnt -T %s" % folder, "timeout 5 ls -l %s" % q(at(path)))


def more_time_fix() -> Fix:
    return said("Run `%s` to give the probe more time.", doctor("check --timeout 60 -v"))


def probes_not_run_fix() -> Fix:
    return said("Fix what the other CD002 findings name, or run `%s`.", doctor("check --timeout 60"))


def special_file_fix(path: str) -> Fix:
    """A FIFO, socket or device where a file belongs: look at it, then put the real file back."""
    return said("Look at what it is and replace it with the real file: `%s` (and `%s` if a file system is mounted "
                "there).", "ls -l %s" % q(at(path)), "findmnt -T %s" % q(at(path)))


def no_driver_to_test_fix(place: str, cudnn_found: bool) -> Fix:
    """smoke/bench found no libcuda: the driver (or the container's GPU access, per missing_driver_fix) first."""
    return say("%s; then run `%s`%s", missing_driver_fix(place), run(doctor("check")),
               "" if cudnn_found else ", which also says how to install cuDNN")


def smoke_every_copy_fix() -> Fix:
    """No cuDNN on the loader's path, but copies elsewhere: test those."""
    return said("test with `%s` or `--library PATH`", doctor("smoke --all"))


def install_cudnn_to_test_fix() -> Fix:
    """No cuDNN anywhere: cudnn-doctor installs one."""
    return said("install one with `%s`", doctor("install", privileged=True))

