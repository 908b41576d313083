"""Fixes for a library the loader cannot find (`explain`'s question): which release installs it, or where it is."""
from __future__ import annotations

from typing import Optional, Tuple

from ..model import Facts, Fix
from ..queries import driver_version, framework_kind, machine_cuda, platform_of
from ..versions import ver
from .cudnn import machine_cudnn_fix
from .shell import cudnn_dir_fix, noted, stated
from .software import driver_upgrade_fix, toolkit_install_fix


def split_soname(name: str) -> Tuple[str, str]:
    """'libcudart.so.11.0' -> ('libcudart', '11.0'); 'libnvrtc.so' -> ('libnvrtc', '')."""
    stem, _, rest = name.partition(".so")
    return stem, rest.lstrip(".")


def is_toolkit_lib(stem: str) -> bool:
    """A library the CUDA toolkit ships (libcudart, libcublas, libnvrtc...), not the driver's or cuDNN's."""
    return (stem.startswith("libcu") or stem.startswith("libnv")) and stem not in ("libcuda", "libnvidia-ml") and \
        not stem.startswith("libcudnn") and not stem.startswith("libnvidia")


def cuda_for_soname(compat, facts, stem: str, version: str) -> Optional[str]:
    """The newest CUDA release whose library carries this soname version (preferring one this driver runs)."""
    first = version.split(".")[0] if version else ""
    if not first.isdigit():
        return None
    if stem == "libcudart":
        want = [c for c in compat.cuda_releases() if compat.cudart_soname(c) == "libcudart.so." + version]
    else:
        want = [c for c in compat.cuda_releases() if c.split(".")[0] == first]
    runs = [c for c in want if compat.driver_runs_cuda(driver_version(facts) or "", c, platform_of(facts),
                                                         facts.driver.cuda_version)[0] is not False]
    return (runs or want or [None])[-1]


def _tensorflow_and_cuda_fix(compat, facts) -> str:
    """For an installed TensorFlow that has NVIDIA's [and-cuda] wheels (Linux, per compat), the pinned reinstall
    that brings the cuDNN it was built with; empty otherwise."""
    fw = next((f for f in facts.python.frameworks if framework_kind(f) == "tensorflow"), None)
    if fw is None or platform_of(facts) != "linux":
        return ""
    version = fw.version.split("+")[0]
    since = ver(compat.framework_table("tensorflow_linux").get("pip_wheels_from"))
    if since is None or ver(version) is None or ver(version) < since:
        return ""
    return 'pip install "tensorflow[and-cuda]==%s"   (TensorFlow %s with the cuDNN and CUDA wheels it was built ' \
           'with)' % (version, version)


def missing_library_fix(compat, facts: Facts, name: str) -> Fix:
    """What installs or exposes a library the loader cannot find, by what it is (cuDNN, the driver, the toolkit)."""
    stem, version = split_soname(name)
    here = machine_cuda(facts, compat)
    if stem.startswith("libcudnn"):
        major = int(version.split(".")[0]) if version.split(".")[0].isdigit() else None
        same = [c for c in facts.cudnn if major is not None and c.major == major]
        if same:
            return stated("cuDNN %s is installed at %s but not on the search path: %s" % (
                same[0].version or major, same[0].directory, cudnn_dir_fix(same[0].directory).text))
        tf = _tensorflow_and_cuda_fix(compat, facts)
        if tf:
            return stated(tf)
        if major is None:
            return stated("install cuDNN for CUDA %s: %s" % (here or "?", machine_cudnn_fix(facts, compat, here).text))
        if here and compat.newest_cudnn_build(here, major) is None:
            have = sorted({c.major for c in facts.cudnn if c.major is not None})
            return stated("compat knows no cuDNN %d build for CUDA %s: install the failing program's build for this "
                          "machine (CUDA %s%s) instead" % (major, here, here, (", cuDNN %s" % "/".join(
                              str(h) for h in have)) if have else ""))
        return stated("install cuDNN %d for CUDA %s: %s" % (major, here or "?",
                                                           machine_cudnn_fix(facts, compat, here, major).text))
    if stem == "libcuda":
        return noted(driver_upgrade_fix("a current release", platform_of(facts)), "; inside a container, start it "
                                                                                  "with `--gpus all`")
    if is_toolkit_lib(stem):
        cuda = cuda_for_soname(compat, facts, stem, version)
        if cuda:
            other = [t.version for t in facts.toolkits if t.version and not t.dangling and t.kind != "pip"]
            text = "install the CUDA %s runtime it was built for (%s)" % (
                cuda, toolkit_install_fix(facts, compat, cuda).text)
            if other:
                text += ", or install the failing program's build for the installed CUDA %s" % ", ".join(other)
            return stated(text)
    return stated("find the file with `find / -name '%s*' 2>/dev/null`, write the folder it prints into "
                  "/etc/ld.so.conf.d/%s.conf and run `sudo ldconfig`; or install the package that provides it" % (
                      name, stem.replace("lib", "", 1) or "extra"))
