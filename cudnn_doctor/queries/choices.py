"""Questions a framework or a cuDNN release answers with the knowledge: what a framework is and was built with, and
which PyTorch variant, JAX extra or cuDNN release fits this machine's driver and GPUs."""
from __future__ import annotations

import os
import re
from typing import Any, Dict, List, Optional, Tuple

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ..knowledge import Compat
from ..model import Facts, FrameworkFacts
from ..versions import (canonical_name, cuda_label, major_of, mm_text, release3_of, requirements, ver, version_key,
                        version_of)
from .copies import environment_prefix
from .gpus import _NO_FLOOR, cc_below, gpu_cudnn_problems, gpu_label, gpus_with_cc
from .machine import driver_cuda, driver_version, platform_of


def framework_label(facts: Facts, fw: FrameworkFacts) -> str:
    """"torch 2.11.0", and where the same release is installed in another environment too, which one this is: two
    findings that read alike name different environments (a venv and its copy, on the H200)."""
    label = "%s %s" % (fw.name, fw.version)
    twins = [o for o in facts.python.frameworks if o is not fw and (o.name, o.version) == (fw.name, fw.version)
             and o.location != fw.location]
    if not twins:
        return label
    prefix = environment_prefix(os.path.normpath(fw.location))
    # two sites of one prefix (lib/python3.11 and lib/python3.12 of one venv): the site itself tells them apart
    same = any(environment_prefix(os.path.normpath(o.location)) == prefix for o in twins)
    return "%s (in %s)" % (label, os.path.normpath(fw.location) if same else prefix)


_IN_ENVIRONMENT = re.compile(r" \(in [^()]+\)")


def without_environment(title: str) -> str:
    """A finding's title without the environment framework_label names for a release installed twice: what stays the
    same when a fix changes the other copy (fix matches its findings before and after by it)."""
    return _IN_ENVIRONMENT.sub("", title, count=1)


def framework_kind(fw: FrameworkFacts) -> Optional[str]:
    name = fw.name.lower()
    if name == "torch":
        return "torch"
    if name.startswith("tensorflow") or name == "tf-nightly":
        return "tensorflow"
    if name == "jaxlib" or name.startswith("jax-cuda"):
        return "jax"
    if name.startswith("paddlepaddle"):
        return "paddle"
    if name.startswith("onnxruntime"):
        return "onnxruntime"
    if name.startswith("cupy"):
        return "cupy"
    return None


def own_cudnn_wheel_dir(fw: FrameworkFacts) -> str:
    """The folder NVIDIA's cuDNN wheel installs into beside a framework (its site-packages' nvidia/cudnn/lib)."""
    return os.path.normpath(os.path.join(fw.location, "nvidia/cudnn/lib"))


def cudnn_pin_floor(fw: FrameworkFacts, major: Optional[int] = None) -> Optional[Version]:
    """The lowest cuDNN a framework's own nvidia-cudnn requirement admits (==9.3.0.75, >=9.1, ==8.9.*), of `major`
    when given; parsed with packaging, whatever the spacing or parentheses of the METADATA line."""
    for _, req in requirements(fw.requires):
        if not canonical_name(req.name).startswith("nvidia-cudnn-"):
            continue
        for spec in req.specifier:
            floor = ver(spec.version.replace(".*", "")) if spec.operator in ("==", ">=", "~=", "===") else None
            if floor is not None and (major is None or floor.release[0] == major):
                return floor
    return None


def compiled_cudnn(fw: FrameworkFacts) -> Optional[str]:
    """The cuDNN a framework was compiled against: its build info when that names a minor, else the floor of its own
    cuDNN pin of that major (TensorFlow records only '9'; its [and-cuda] pin says 9.3.0.75)."""
    recorded = fw.cudnn_version
    if recorded and "." in recorded:
        return recorded
    floor = cudnn_pin_floor(fw, major_of(recorded) if recorded else None)
    return str(floor) if floor is not None else recorded


def cudnn_older(runtime: Any, compiled: Any) -> Tuple[bool, str]:
    """(incompatible, why) under cuDNN's rule: same major, and a runtime minor not older than the build's."""
    r, c = ver(runtime), ver(compiled)
    if r is None or c is None:
        return False, ""
    if r.release[0] != c.release[0]:
        return True, "another major version"
    if len(c.release) >= 2 and len(r.release) >= 2 and r.release[1] < c.release[1]:
        return True, "an older minor version"
    return False, ""


def best_torch_variant(facts: Facts, compat: Compat, torch_version: Optional[str],
                       python: Optional[str] = None, site: Optional[str] = None) -> Optional[Dict[str, Any]]:
    """The newest PyTorch CUDA variant (of this torch minor when known) the driver and GPUs can run, and that has
    wheels for the Python it goes to (each row's range, read from its wheels' tags): `python`, else the Python
    the probes read for `site`."""
    rows = compat.framework_rows("pytorch")
    if python is None and site:
        python = next((p.get("version") for p in facts.python.pythons if p.get("site") == site), None)
    if python:
        rows = [r for r in rows if not r.get("python") or SpecifierSet(str(r["python"])).contains(python)]
    if torch_version:
        minor = mm_text(torch_version.split("+")[0])
        same = [r for r in rows if r["torch"] == minor]
        rows = same or rows
    driver = driver_version(facts)
    dcuda = driver_cuda(facts, compat)
    fitting = []
    for row in rows:
        ok, _, _ = compat.driver_runs_cuda(driver or "", row["cuda"], platform_of(facts), dcuda)
        if ok is False:
            continue
        arch = compat.pytorch_arch(row["torch"] + ".0", row["cuda"])
        if arch and any(not compat.sass_runs(arch["arch"], arch.get("ptx"), g.compute_capability)
                        for g in gpus_with_cc(facts)):
            continue
        if gpu_cudnn_problems(facts, compat, row.get("cudnn"), row["cuda"]):
            continue  # the bundled cuDNN no longer supports the GPU
        if gpus_with_cc(facts) and not arch and any(
                cc_below(g.compute_capability, (compat.cuda_min_cc(row["cuda"]) or _NO_FLOOR).low)
                for g in gpus_with_cc(facts)):
            continue  # the CUDA major dropped the GPU
        if not arch and any(version_of(row["cuda"]) < version_of(compat.first_cuda_for_cc(g.compute_capability)
                                                                  or "0") for g in gpus_with_cc(facts)):
            continue  # no table of its kernels, and its CUDA predates the GPU: nvcc could not build for it
        fitting.append(row)
    if not fitting:
        return None
    return max(fitting, key=lambda r: (version_of(r["torch"]), version_of(r["cuda"])))


def cudnn_build_exists(compat: Compat, release: str, cuda: Any) -> Optional[bool]:
    """Whether NVIDIA made a build of cuDNN `release` for `cuda` (the knowledge answers: Compat.cudnn_build_exists)."""
    return compat.cudnn_build_exists(release, cuda)


def cudnn_runs_on_cc(compat: Compat, release: str, cuda: Any, cc: Optional[str], strict: bool = True) -> bool:
    """Whether a cuDNN release's build for `cuda` supports a GPU of compute capability `cc` (strict: also where
    compat only knows the floor lies in a range, take its top)."""
    if not cc:
        return True
    floor = compat.cudnn_min_cc(release, mm_text(cuda) or cuda_label(cuda))
    if floor is None:
        return True
    return not cc_below(cc, floor.high if strict else floor.low)


def cudnn_release_for(compat: Compat, cuda: Any, cudnn_major: Optional[int] = None,
                      min_cc: Optional[str] = None) -> Optional[str]:
    """The newest cuDNN release (of `cudnn_major` when given) with a build for `cuda` that runs on `min_cc`."""
    newest = compat.newest_cudnn_build(cuda, cudnn_major)
    if not min_cc or newest is None:
        return newest
    for strict in (True, False):
        releases = [r for r in compat.cudnn_releases(cudnn_major) if cudnn_build_exists(compat, r, cuda)]
        releases = [r for r in releases if cudnn_runs_on_cc(compat, r, cuda, min_cc, strict)]
        if releases:
            return str(max(release3_of(r) for r in releases))
    return None


def jax_choice(facts: Facts, compat: Compat, cuda_major: Any = None) -> Tuple[Optional[Dict[str, Any]], List[str]]:
    """The JAX CUDA extra for this machine: of `cuda_major` when given, else the newest whose driver branch and
    minimum GPU the machine meets. Returns (row, why-not reasons of the chosen row: empty when it fits)."""
    rows = sorted(compat.framework_rows("jax"), key=lambda r: version_key(r.get("built_cuda")), reverse=True)
    if cuda_major is not None:
        same = [r for r in rows if major_of(r.get("built_cuda")) == major_of(cuda_major)]
        rows = same or rows
    driver = ver(driver_version(facts))
    judged = []
    for row in rows:
        why = []
        floor = ver(row.get("driver_linux"))
        if driver is not None and floor is not None and driver.release[0] < floor.release[0]:
            why.append("driver %s is older than the R%s branch jax[%s] needs" % (
                driver_version(facts), row["driver_linux"], row["extra"]))
        why += ["%s is below jax[%s]'s minimum compute capability %s" % (gpu_label(g), row["extra"], row["min_cc"])
                for g in gpus_with_cc(facts) if row.get("min_cc") and cc_below(g.compute_capability, row["min_cc"])]
        judged.append((row, why))
    for row, why in judged:
        if not why:
            return row, []
    return (judged[0] if judged else (None, []))
