"""--for torch / tensorflow / jax: each framework build's CUDA, cuDNN, driver and GPU needs, against this machine."""
from __future__ import annotations

from typing import List

from ..knowledge import Compat
from ..versions import mm_text, newer_than, ver, version_of
from ..model import Facts, Finding
from ..queries import (best_torch_variant, driver_version, framework_kind, gpu_cudnn_problems, has_driver, platform_of)
from ..remedies import torch_install
from ..remedies.frameworks import tensorflow_wheels_fix
from ..remedies.targets import (jax_build_fix, matrix_fix, tensorflow_on_windows_fix, tensorflow_tested_build_fix,
                                torch_build_for_gpu_fix)
from .common import ERROR, WARNING, finding
from .fit import (arch_blocks_driver, cudnn_problem, driver_problem, gpu_problems, toolkit_problem, verdict,
                  with_driver_step)
from .policy import Target, cuda_of, tf_row, torch_rows


def judge_tf(facts: Facts, compat: Compat, target: Target) -> List[Finding]:
    installed = next((fw for fw in facts.python.frameworks if framework_kind(fw) == "tensorflow"), None)
    version = target.version or (installed.version.split("+")[0] if installed else
                                 compat.framework_rows("tensorflow_linux")[0]["tensorflow"])
    platform = platform_of(facts)
    last_windows = compat.tensorflow_last_windows_gpu()
    if platform == "windows" and last_windows is not None and newer_than(version, last_windows):
        return [finding(ERROR, "TensorFlow %s has no GPU support on native Windows" % version,
                        remedy=tensorflow_on_windows_fix(version, mm_text(str(last_windows)) or str(last_windows)),
                        catalogue=["G2"])]
    row = tf_row(compat, version, platform)
    if row is None:
        return [finding(WARNING, "No compat data for TensorFlow %s" % version,
                        remedy=matrix_fix("tensorflow"))]
    cuda, cudnn = cuda_of(row["cuda"]), row["cudnn"]
    # Without the table's answer, assume no [and-cuda] wheels: the toolkit and cuDNN are then checked too.
    wheels_from = compat.tensorflow_pip_wheels_from()
    release = ver(version)
    pip_wheels = wheels_from is not None and release is not None and release >= wheels_from
    problems = [p for p in [driver_problem(facts, compat, cuda)] if p]
    problems += [p for p in gpu_problems(facts, compat, cuda,
                                          compat.tensorflow_min_cc())
                 if "needs CUDA" not in p]
    problems += [p for p in gpu_cudnn_problems(facts, compat, cudnn, cuda) if p not in problems]
    blocked = arch_blocks_driver(facts, compat, cuda)
    if blocked:
        problems.append(blocked.strip())
    if pip_wheels and platform != "windows":
        fix = tensorflow_wheels_fix(version)
    else:
        problems += [p for p in (toolkit_problem(facts, compat, cuda), cudnn_problem(facts, compat, cudnn, cuda))
                     if p]
        fix = tensorflow_tested_build_fix(version, cuda, cudnn)
    fix = with_driver_step(facts, compat, cuda, fix)
    table = "tensorflow_windows" if platform == "windows" else "tensorflow_linux"
    return verdict("TensorFlow %s (CUDA %s, cuDNN %s)" % (version, cuda, cudnn),
                    [("its tested build (CUDA %s, cuDNN %s)" % (cuda, cudnn), problems, fix)],
                    compat.framework_source(table), ["C1", "E1"])


def judge_torch(facts: Facts, compat: Compat, target: Target) -> List[Finding]:
    installed = next((fw for fw in facts.python.frameworks if framework_kind(fw) == "torch"), None)
    version = target.version or (installed.version if installed else None)
    rows = torch_rows(compat, version) if version else []
    if not version or not rows:
        newest = str(max(compat.framework_rows("pytorch"), key=lambda r: version_of(r["torch"]))["torch"])
        version, rows = newest, torch_rows(compat, newest)
    tag = version.split("+", 1)[1] if "+" in version else ""
    if tag.startswith("cu"):
        wanted = "%s.%s" % (tag[2:-1], tag[-1])
        rows = [r for r in rows if r["cuda"] == wanted] or rows
    options = []
    # Newest CUDA build first: pip users get the newest that fits.
    for row in sorted(rows, key=lambda r: version_of(r["cuda"]), reverse=True):
        cuda = row["cuda"]
        arch = compat.pytorch_arch(version.split("+")[0] if version.count(".") >= 2 else row["torch"] + ".0", cuda)
        problems = [p for p in [driver_problem(facts, compat, cuda)] if p]
        problems += gpu_problems(facts, compat, cuda, arch=arch)
        problems += [p for p in gpu_cudnn_problems(facts, compat, row.get("cudnn"), cuda) if p not in problems]
        blocked = arch_blocks_driver(facts, compat, cuda)
        if blocked:
            problems.append(blocked.strip())
        # The pin names a release on PyPI: the one asked for where it exists, else the table's minor (2.5 = 2.5.0).
        pin = version if compat.framework_release_exists("torch", version) is not False else row["torch"]
        fix = with_driver_step(facts, compat, cuda, torch_install(compat, pin, cuda))
        if blocked or any("compute capability" in p and "below" in p or "no kernels" in p for p in problems):
            # The GPU itself rules this build out: name the newest PyTorch build that still runs here.
            other = best_torch_variant(facts, compat, None, site=installed.location if installed else None)
            if other is not None:
                fix = torch_build_for_gpu_fix(compat, other["torch"], other["cuda"])
        options.append(("the CUDA %s build (bundled cuDNN %s)" % (cuda, row["cudnn"]), problems, fix))
    return verdict("PyTorch %s" % version.split("+")[0], options,
                    compat.framework_source("pytorch"), ["C1", "B1"])


def judge_jax(facts: Facts, compat: Compat, target: Target) -> List[Finding]:
    options = []
    bad = [c for c in facts.cudnn if any(b.get("severity") == "error_if_jax" for b in compat.known_bad("cudnn", c.version))]
    for row in compat.framework_rows("jax"):
        problems = []
        if platform_of(facts) == "windows":
            problems.append("JAX has no native-Windows GPU build (use WSL2)")
        if not has_driver(facts):
            problems.append("no NVIDIA driver is installed")
        elif driver_version(facts) and newer_than(row["driver_linux"], driver_version(facts)):
            problems.append("driver %s is older than the R%s branch JAX %s needs" % (
                driver_version(facts), row["driver_linux"], row["extra"]))
        elif not driver_version(facts):
            problems.append("cannot tell the driver version")
        problems += gpu_problems(facts, compat, cuda_of(row["built_cuda"].split(".")[0]), row["min_cc"])
        problems = [p for p in problems if "needs CUDA" not in p]
        problems += ["cuDNN %s at %s is refused by JAX (known-bad)" % (c.version, c.directory) for c in bad]
        fix = jax_build_fix(facts, compat, row, any("driver" in p for p in problems))
        options.append(("jax[%s] (CUDA %s, cuDNN %s)" % (row["extra"], row["cuda"], row["cudnn"]), problems, fix))
    note = "" if not target.version else " (compat holds the current JAX requirements only)"
    return verdict("JAX%s%s" % ((" " + target.version) if target.version else "", note), options,
                    compat.framework_source("jax"), ["C1", "E1"])

