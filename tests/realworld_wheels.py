"""Real framework and NVIDIA wheels for the real-world corpus: downloaded once through pip, unpacked once (the parts a
framework loads cuDNN with), then hard-linked into each case so a case costs no disk and $ORIGIN stays exact."""
from __future__ import annotations

import fnmatch
import functools
import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Iterable, List, Optional, Sequence

from packaging.requirements import InvalidRequirement, Requirement
from packaging.tags import sys_tags
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

from realdata import CACHE, cache_lock, download_wheel, unpacked_wheel

WHEELS = CACHE / "wheels"
TREES = CACHE / "realworld-trees"
FOR_PIP = CACHE / "wheels-for-pip"  # what a proof's pip installs from: the cache, its big wheels re-stored
INSTALLABLE = frozenset(sys_tags())  # the harness's environments are this interpreter's venvs
STORE_OVER = 20 << 20  # a smaller wheel inflates in a blink: linked as it is
# The stored copies are 1.5-3 times their wheels: the least recently named go back to links past this many GB (CI's
# disk holds the whole cache besides).
STORED_GB = float(os.environ.get("REALWORLD_STORED_GB", "10"))
SLIM_OVER = 400 << 20  # framework libraries bigger than this keep only their ELF headers and dynamic section
PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_27_x86_64", "manylinux_2_28_x86_64",
             "manylinux1_x86_64")

# What of each framework wheel the corpus needs: its metadata, build records and the library that loads cuDNN.
# NVIDIA's own wheels are unpacked whole (every sub-library is a file the loader may pick).
KEEP = {
    "torch": ("torch/version.py", "torch/lib/libtorch_cuda.so", "torch/__init__.py", "torch/lib/libtorch_global_deps.so"),
    "tensorflow": ("tensorflow/python/platform/build_info.py", "tensorflow/libtensorflow_framework.so.2"),
    "onnxruntime-gpu": ("onnxruntime/__init__.py", "onnxruntime/capi/_ld_preload.py",
                        "onnxruntime/capi/libonnxruntime_providers_cuda.so",
                        "onnxruntime/capi/libonnxruntime_providers_shared.so"),
    "jax-cuda12-pjrt": ("jax_plugins/*",),
    "jax-cuda12-plugin": ("jax_cuda12_plugin/version.py", "jax_cuda12_plugin/__init__.py",
                          "jax_cuda12_plugin/_versions.so"),
    "jaxlib": ("jaxlib/version.py", "jaxlib/__init__.py"),
    "tensorflow-cpu": ("tensorflow/python/platform/build_info.py", "tensorflow/libtensorflow_framework.so.2"),
    "onnxruntime": ("onnxruntime/__init__.py", "onnxruntime/capi/*.so*"),
    "jax-cuda13-pjrt": ("jax_plugins/*",),
    "jax-cuda13-plugin": ("jax_cuda13_plugin/version.py", "jax_cuda13_plugin/__init__.py",
                          "jax_cuda13_plugin/_versions.so"),
    "paddlepaddle-gpu": ("paddle/version/__init__.py", "paddle/libs/libphi.so"),
    "cupy-cuda12x": ("cupy/_environment.py", "cupy/.data/_wheel.json", "cupy/__init__.py", "cupy/cuda/__init__.py",
                     "cupy_backends/cuda/libs/cudnn.*.so"),
}


def _stem(name: str) -> str:
    return name.replace("-", "_")


def wheel_file(name: str, version: str) -> Optional[Path]:
    """The cached Linux wheel, fetched by `pip download` (through pip's own HTTP cache) on first use."""
    return download_wheel(name, version, "%s-%s-*x86_64.whl" % (_stem(name), version), PLATFORMS)


def _wanted(name: str, member: str) -> bool:
    if ".dist-info/" in member:
        return True
    keep = KEEP.get(name)
    return keep is None or any(fnmatch.fnmatchcase(member, pat) for pat in keep)


def tree(name: str, version: str) -> Optional[Path]:
    """The wheel unpacked as a site-packages folder holding only what the corpus reads (cached, done once)."""
    def fill(zf: zipfile.ZipFile, tmp: Path) -> None:
        for info in zf.infolist():
            if info.is_dir() or not _wanted(name, info.filename):
                continue
            zf.extract(info, tmp)
            mode = (info.external_attr >> 16) & 0o777
            if mode:  # zip drops the exec bits pip keeps
                os.chmod(tmp / info.filename, mode)
        if not name.startswith("nvidia-"):  # slimmed here, in the private folder under the tree's lock, never in place
            for path in tmp.rglob("*.so*"):
                if path.is_file() and path.stat().st_size > SLIM_OVER and (
                        path.stat().st_blocks * 512 > SLIM_OVER or b".nv_fatbin\0" in _shstrtab(path)):
                    slim_elf(path)
    # A framework wheel is read once; only NVIDIA's are installed again (by the fixes, with pip).
    keep = name.startswith("nvidia-") or bool(os.environ.get("CUDNN_DOCTOR_KEEP_WHEELS"))
    return unpacked_wheel(TREES / ("%s-%s" % (name, version)), lambda: wheel_file(name, version), fill,
                          keep_wheel=keep)


def _shstrtab(path: Path) -> bytes:
    out = subprocess.run(["readelf", "-p", ".shstrtab", str(path)], capture_output=True, text=True).stdout
    return ("\0".join(re.findall(r"\]\s+(\S+)", out)) + "\0").encode()


def slim_elf(path: Path) -> None:
    """Rewrite an ELF file as a sparse file of the same size holding only its ELF and program headers, section
    headers and the dynamic section and strings (as readelf locates them): what ld.so's RPATH/RUNPATH/NEEDED
    search and readelf -d read of a library that is never itself loaded. Only called on a tree being filled (its
    private folder, under its cache lock): a file another run may be reading is never rewritten."""
    out = subprocess.run(["readelf", "-hlS", "--wide", str(path)], capture_output=True, text=True, check=True).stdout
    header = dict(re.findall(r"^\s+(Start of (?:program|section) headers|Size of (?:program|section) headers|"
                             r"Number of (?:program|section) headers):\s+(\d+)", out, re.M))
    keep = [(0, int(header["Start of program headers"]) +
             int(header["Size of program headers"]) * int(header["Number of program headers"])),
            (int(header["Start of section headers"]),
             int(header["Size of section headers"]) * int(header["Number of section headers"]))]
    for name, offset, size in re.findall(r"\]\s+(\.dynamic|\.dynstr|\.shstrtab|\.gnu\.version_d)\s+\S+\s+\S+\s+"
                                         r"([0-9a-f]+)\s+([0-9a-f]+)", out):
        keep.append((int(offset, 16), int(size, 16)))
    size = path.stat().st_size
    tmp = path.with_name(path.name + ".slim")
    with open(path, "rb") as src, open(tmp, "wb") as dst:
        dst.truncate(size)
        for offset, length in keep:
            src.seek(offset)
            dst.seek(offset)
            # The GPU code is not kept: its section is renamed, so no reader walks the holes as a fat binary.
            dst.write(src.read(length).replace(b".nv_fatbin\0", b".nv_fatbix\0"))
    os.chmod(tmp, path.stat().st_mode)
    os.replace(tmp, path)


def link_into(src: Path, dest: Path, only: Sequence[str] = ()) -> None:
    """Hard-link a cached tree into a case folder (as `pip install --no-deps --target` would lay it out);
    `only`: file-name globs to keep (a cuDNN copy with some sub-libraries missing)."""
    for folder, _, files in os.walk(src):
        rel = os.path.relpath(folder, src)
        for name in files:
            if name == ".complete" or (only and not any(fnmatch.fnmatchcase(name, p) for p in only)):
                continue
            out = dest / rel / name
            out.parent.mkdir(parents=True, exist_ok=True)
            if not out.exists():
                os.link(os.path.join(folder, name), out)


def requirements_in(text: str) -> List[str]:
    """Every word of the `pip install` lines in `text` that is a requirement ("nvidia-cudnn-cu12==8.9.7.*"); a
    line the shell could not split names none."""
    named = []
    for line in text.splitlines():
        try:
            words = shlex.split(line)
        except ValueError:
            continue
        if "pip" not in " ".join(words[:4]) or "install" not in words:
            continue
        for word in words[words.index("install") + 1:]:
            try:
                named.append(str(Requirement(word)))
            except InvalidRequirement:
                continue  # an option or its value (--target DIR)
    return named


@functools.lru_cache(maxsize=None)
def index_releases(name: str) -> tuple:
    """The releases of a project on the index for this Python and platform, as pip itself lists them (`pip index
    versions`), newest first; none offline."""
    proc = subprocess.run([sys.executable, "-m", "pip", "index", "versions", name, "--disable-pip-version-check"],
                          capture_output=True, text=True, timeout=120)
    m = re.search(r"^Available versions: (.+)$", proc.stdout, re.M)
    return tuple(v.strip() for v in m.group(1).split(",")) if m else ()


def fetch(requirements: Iterable[str]) -> List[str]:
    """Each requirement's wheel in the cache, at the release pip with an index would install: an exact pin (or a
    `==X.*` one, by the cache's glob and else pip download) as named; otherwise the newest release on the index that
    it admits (ONNX Runtime 1.18's fix names the cu11 wheels unpinned: draws 303-0, 515-0). A proof's pip then runs
    on the cache alone: with the index too it downloads a release again that the cache holds (pip prefers the
    index's copy of the same file: 700 MB a cuDNN wheel, at every proof). The ones it could not get."""
    missing = []
    for text in requirements:
        req = Requirement(text)
        pins = [s.version for s in req.specifier if s.operator == "=="]
        if len(req.specifier) == 1 and pins:
            version: Optional[str] = pins[0]
        else:
            version = next((v for v in index_releases(req.name) if req.specifier.contains(v)), None)
        if version is None or wheel_file(req.name, version) is None:
            missing.append(text)
    return missing


def for_pip(named: Iterable[str] = ()) -> Path:
    """The folder a proof's pip finds its wheels in (PIP_FIND_LINKS): every wheel of the cache, by hard link, and
    each one over STORE_OVER that a requirement in `named` selects written again without compression. pip installs
    the same files with the same modes, metadata and RECORD from it (RECORD's hashes are of the unpacked files, and
    tests/probes/test_realworld_wheels.py compares the two installs); what is gone is the inflating, most of a
    proof's time (a 700 MB cuDNN wheel: 10.5 s compressed, 3.3 s stored, here)."""
    FOR_PIP.mkdir(parents=True, exist_ok=True)
    cached = {p.name: p for p in WHEELS.glob("*.whl")}
    for stale in set(os.listdir(FOR_PIP)) - set(cached):  # a framework wheel deleted once unpacked: its link too
        if stale.endswith(".whl"):
            Path(FOR_PIP, stale).unlink(missing_ok=True)
    for name, wheel in cached.items():
        try:
            os.link(wheel, FOR_PIP / name)
        except FileExistsError:
            pass
    releases = []
    for name, wheel in cached.items():
        try:
            project, version, _, tags = parse_wheel_filename(name)
        except InvalidWheelFilename:
            continue
        if not tags.isdisjoint(INSTALLABLE):  # the cache holds Windows wheels of the same releases too
            releases.append((project, version, name, wheel))
    used = set()
    for requirement in map(Requirement, named):
        # the release pip takes for it: the newest the cache holds that it admits (one, not every 9.x of "==9.*")
        admitted = [r for r in releases if r[0] == canonicalize_name(requirement.name) and
                    requirement.specifier.contains(r[1], prereleases=True)]
        if not admitted:
            continue
        _, _, name, wheel = max(admitted, key=lambda r: r[1])
        if wheel.stat().st_size > STORE_OVER:
            _store(wheel, FOR_PIP / name)
            os.utime(FOR_PIP / name)  # named now: the last to go back to a link
            used.add(name)
    _within_budget(used)
    return FOR_PIP


def _within_budget(used: set) -> None:
    """The stored copies cut to STORED_GB, the least recently named first (none named by this call): each goes back
    to a hard link of its wheel, moved in whole."""
    with cache_lock(FOR_PIP.with_name(FOR_PIP.name + "-locks") / "budget"):
        stored = [p for p in FOR_PIP.glob("*.whl") if p.stat().st_nlink == 1 and (WHEELS / p.name).exists()]
        total = sum(p.stat().st_size for p in stored)
        for copy in sorted(stored, key=lambda p: p.stat().st_mtime):
            if total <= STORED_GB * 1e9:
                break
            if copy.name in used:
                continue
            private = FOR_PIP.with_name("%s.tmp%d" % (FOR_PIP.name, os.getpid()))
            private.mkdir(exist_ok=True)
            os.link(WHEELS / copy.name, private / copy.name)
            total -= copy.stat().st_size
            os.replace(private / copy.name, copy)
            shutil.rmtree(private, ignore_errors=True)


def _store(wheel: Path, out: Path) -> None:
    """`out` (a hard link of `wheel`) replaced by the wheel written without compression: once, under its lock, into
    a private file moved in whole (a pip reading the link meanwhile keeps reading the original)."""
    with cache_lock(FOR_PIP.with_name(FOR_PIP.name + "-locks") / out.name):
        if not out.exists() or not out.samefile(wheel):
            return  # stored already
        private = FOR_PIP.with_name("%s.tmp%d" % (FOR_PIP.name, os.getpid()))
        private.mkdir(exist_ok=True)
        stored_copy(wheel, private / out.name)
        os.replace(private / out.name, out)
        shutil.rmtree(private, ignore_errors=True)


def stored_copy(wheel: Path, out: Path) -> None:
    """The wheel written to `out` with every member stored, not deflated: the same names, bytes, times and modes."""
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            entry = zipfile.ZipInfo(info.filename, info.date_time)
            entry.external_attr, entry.create_system = info.external_attr, info.create_system
            with src.open(info) as data, dst.open(entry, "w", force_zip64=info.file_size > 1 << 30) as copy:
                shutil.copyfileobj(data, copy, 1 << 20)
