"""The real-world oracle: the environment's own python, under the real glibc loader, loads cuDNN as the framework
does (its Python-side preloads, then its library's dlopen), with no GPU; the framework's own GPU-less checks say
which cuDNN it accepts (JAX's version module in the same process, TensorFlow's build info)."""
from __future__ import annotations

import os
import re
import runpy
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

HERE = Path(__file__).resolve().parent / "realworld"
LD_SO = "/lib64/ld-linux-x86-64.so.2"
SYSTEM_CACHE = b"/etc/ld.so.cache"


@dataclass
class OracleResult:
    asked: str  # the soname the framework's library asks for
    opened: Optional[str] = None  # the file glibc mapped for it
    error: Optional[str] = None  # dlerror() when it failed
    version: Optional[int] = None  # cudnnGetVersion() of what was mapped
    checks: Dict[str, int] = field(default_factory=dict)  # each sub-library's VersionCheck status (0: success)
    maps: List[str] = field(default_factory=list)  # every libcudnn* file in /proc/self/maps
    crashed: Optional[str] = None  # the process died (a sub-library of another release called into)
    startup: Dict[str, Optional[str]] = field(default_factory=dict)  # TensorFlow's start-up libraries: soname -> file
    engines: Dict[str, Optional[str]] = field(default_factory=dict)  # cuDNN 9's engine sub-libraries: soname -> file
    rejected: Dict[str, str] = field(default_factory=dict)  # an engine file the search found but could not load
    framework: Dict[str, str] = field(default_factory=dict)  # its own preloads and checks (PRELOAD, JAXBUILD, ...)

    def sublibrary(self, soname: str) -> Optional[str]:
        return next((m for m in self.maps if os.path.basename(m) == soname), None)


def shim_for(library: Path, workdir: Path) -> Path:
    """A library that dlopens with `library`'s search path: its RPATH or RUNPATH copied, $ORIGIN expanded."""
    dyn = subprocess.run(["readelf", "-d", str(library)], capture_output=True, text=True).stdout
    m = re.search(r"\((RPATH|RUNPATH)\)\s+Library (?:rpath|runpath): \[(.*)\]", dyn)
    argv = ["gcc", "-shared", "-fPIC", "-o", str(workdir / "shim.so"), str(HERE / "shim.c"), "-ldl"]
    if m:
        dirs = m.group(2).replace("$ORIGIN", str(library.parent)).replace("${ORIGIN}", str(library.parent))
        tags = "--enable-new-dtags" if m.group(1) == "RUNPATH" else "--disable-new-dtags"
        argv.append("-Wl,%s,-rpath,%s" % (tags, dirs))
    else:
        argv.append("-Wl,--disable-new-dtags")
    subprocess.run(argv, check=True)
    return workdir / "shim.so"


def loader_for(workdir: Path, cache: Path) -> Path:
    """The machine's own ld.so with its cache path pointing at the case's ld.so.cache (made by ldconfig -C):
    the real loader, searching a cache the test may write without touching /etc."""
    workdir.mkdir(parents=True, exist_ok=True)
    link = cache_link(workdir)
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(cache, link)
    data = Path(LD_SO).read_bytes().replace(SYSTEM_CACHE, link.encode())
    out = workdir / "ld.so"
    out.write_bytes(data)
    out.chmod(0o755)
    return out


def cache_link(workdir: Path) -> str:
    """A path as long as /etc/ld.so.cache (the patched loader's string keeps its length), one per work folder."""
    link = "/tmp/rw%06d.lc" % (abs(hash(str(workdir))) % 10 ** 6)
    assert len(link) == len(SYSTEM_CACHE)
    return link


def forget(workdir: Path) -> None:
    """Remove what the oracle left outside its work folder (the cache link in /tmp)."""
    if os.path.lexists(cache_link(workdir)):
        os.unlink(cache_link(workdir))


def needed_soname(library: Path) -> Optional[str]:
    dyn = subprocess.run(["readelf", "-d", str(library)], capture_output=True, text=True).stdout
    m = re.search(r"\(NEEDED\)\s+Shared library: \[(libcudnn\.so\.\d+)\]", dyn)
    return m.group(1) if m else None


def tf_build_info(site: Path) -> Dict[str, object]:
    """tf.sysconfig.get_build_info(), read from the file it returns (importing TensorFlow needs its whole stack)."""
    return dict(runpy.run_path(str(site / "tensorflow/python/platform/build_info.py"))["build_info"])


def run(library: Path, soname: str, workdir: Path, cache: Path, env: Dict[str, str], python: Path, kind: str,
        site: Path, startup: Sequence[str] = (), engines: Sequence[str] = (), user_site: bool = False) -> OracleResult:
    """The environment's own python, under the real loader with the case's ld.so.cache, loading cuDNN the way the
    framework does (tests/realworld/oracle.py): its Python-side preloads first, then its library's dlopen, then (cuDNN
    9) the `engines` sub-libraries its first convolution loads."""
    workdir.mkdir(parents=True, exist_ok=True)
    shim = shim_for(library, workdir)
    loader = loader_for(workdir, cache)
    # -s keeps the test runner's user site out, except where the case's own user site holds the framework
    argv = [str(loader), str(python), *([] if user_site else ["-s"]), str(HERE / "oracle.py"), kind,
            str(site), str(library), str(shim), soname, ",".join(engines), *startup]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)
    out = OracleResult(asked=soname)
    for line in proc.stdout.splitlines():
        word, _, rest = line.partition(" ")
        if word == "OPEN":
            out.opened = rest.split(" ", 1)[1]
        elif word == "ERROR":
            out.error = rest
        elif word == "VERSION":
            out.version = int(rest)
        elif word == "CHECK":
            name, status = rest.split()
            out.checks[name] = int(status)
        elif word == "MAP" and rest not in out.maps:
            out.maps.append(rest)
        elif word in ("STARTUP", "ENGINE"):
            name, _, where = rest.partition(" ")
            (out.startup if word == "STARTUP" else out.engines)[name] = None if where.startswith("ERROR") else where
            if where.startswith("ERROR REJECTED "):  # found first, then refused: the file the search stopped at
                out.rejected[name] = where.split()[2]
        elif word in ("PRELOAD", "JAXBUILD", "JAXGOT", "JAXERROR", "CUDART"):
            out.framework[word] = rest
    if proc.returncode < 0:  # a mixed copy can crash in the sub-library's own code
        out.crashed = "killed by signal %d" % -proc.returncode
    if out.opened is None and out.error is None:
        out.error = "oracle died: %s" % (proc.stderr.strip()[-300:] or proc.returncode)
    return out


def clean(workdir: Path) -> None:
    shutil.rmtree(workdir, ignore_errors=True)
