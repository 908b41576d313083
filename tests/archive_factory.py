"""Builds cuDNN archives in every official layout (and hostile ones) from the kit's fake libraries."""
from __future__ import annotations

import base64
import hashlib
import io
import os
import stat
import sys
import subprocess
import tarfile
import tempfile
import zipfile
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from kit import SUBLIBS, _cudnn_code, build_lib, cudnn_header

# One archive entry: (name, kind, payload). kind: file (bytes), symlink (target), dir, or a
# hostile kind (hardlink, chardev, fifo); mode defaults per kind.
Entry = Dict[str, object]


def entry(name: str, kind: str = "file", data: bytes = b"", target: str = "", mode: Optional[int] = None,
          size: Optional[int] = None) -> Entry:
    return {"name": name, "kind": kind, "data": data, "target": target, "mode": mode, "size": size}


# --- the cuDNN payloads -----------------------------------------------------------


def _headers(version: str) -> List[Tuple[str, bytes]]:
    major = int(version.split(".")[0])
    version_header = "cudnn.h" if major <= 7 else "cudnn_version.h"
    out = [(version_header, cudnn_header(version).encode())]
    if major >= 8:
        out.append(("cudnn.h", b"#include \"cudnn_version.h\"\n"))
        stems = ["ops", "cnn", "adv", "graph"] if major >= 9 else ["ops_infer", "ops_train", "adv_infer"]
        out += [("cudnn_%s.h" % s, ("/* cudnn_%s %s */\n" % (s, version)).encode()) for s in stems]
    return out


def linux_libs(version: str, cudart: int, versioned: bool = True, static: bool = True) -> List[Entry]:
    """Entries relative to the lib folder: real .so.X.Y.Z, .so.X and .so links (the `cp -P` set)."""
    major = int(version.split(".")[0])
    code = _cudnn_code(version)
    out: List[Entry] = []
    for stem in ["libcudnn"] + ["libcudnn_%s" % s for s in SUBLIBS.get(major, [])]:
        soname = "%s.so.%d" % (stem, major)
        lib = build_lib("cudnn", soname=soname, CUDNN_V=code, CUDART_V=cudart).read_bytes()
        if versioned:
            out.append(entry("%s.so.%s" % (stem, version), data=lib, mode=0o755))
            out.append(entry(soname, "symlink", target="%s.so.%s" % (stem, version)))
            out.append(entry("%s.so" % stem, "symlink", target=soname))
        else:
            out.append(entry(soname, data=lib, mode=0o644))
    if static:
        out.append(entry("libcudnn_static.a" if major < 9 else "libcudnn_adv_static.a",
                         data=b"!<arch>\nfake static %s\n" % version.encode(), mode=0o644))
    return out


def _prefixed(prefix: str, entries: Iterable[Entry]) -> List[Entry]:
    out = []
    for e in entries:
        e = dict(e)
        e["name"] = "%s/%s" % (prefix, e["name"])
        out.append(e)
    return out


def linux_tree(version: str = "9.1.0", build: str = "70", cuda: str = "12", arch: str = "x86_64",
               cudart: Optional[int] = None) -> Tuple[str, List[Entry]]:
    """8.3+/9.x tarball: cudnn-linux-<arch>-<ver>_cuda<N>-archive/{include,lib,LICENSE}."""
    cudart = cudart or _cudart_for(cuda)
    top = "cudnn-linux-%s-%s.%s_cuda%s-archive" % (arch, version, build, cuda)
    entries = [entry(top, "dir", mode=0o755), entry(top + "/include", "dir", mode=0o755),
               entry(top + "/lib", "dir", mode=0o755)]
    entries += [entry("%s/include/%s" % (top, n), data=d, mode=0o644) for n, d in _headers(version)]
    entries += _prefixed(top + "/lib", linux_libs(version, cudart))
    entries.append(entry(top + "/LICENSE", data=b"fake NVIDIA license\n", mode=0o644))
    return top, entries


def legacy_tree(version: str = "7.6.5", build: str = "32", cuda: str = "10.2",
                system: str = "linux") -> Tuple[str, List[Entry]]:
    """<= 8.2 tgz: cuda/include + cuda/lib64 (Linux) or cuda/lib (macOS, .dylib)."""
    cudart = _cudart_for(cuda)
    major = int(version.split(".")[0])
    entries = [entry("cuda", "dir", mode=0o755), entry("cuda/include", "dir", mode=0o755)]
    entries += [entry("cuda/include/%s" % n, data=d, mode=0o644) for n, d in _headers(version)]
    if system == "linux":
        entries += _prefixed("cuda/lib64", linux_libs(version, cudart))
    else:
        fake = b"\xcf\xfa\xed\xfe fake Mach-O cudnn %s\n" % version.encode()
        entries += [entry("cuda/lib/libcudnn.%s.dylib" % major, data=fake, mode=0o755),
                    entry("cuda/lib/libcudnn.dylib", "symlink", target="libcudnn.%s.dylib" % major),
                    entry("cuda/lib/libcudnn_static.a", data=b"!<arch>\nfake\n", mode=0o644)]
    entries.append(entry("cuda/NVIDIA_SLA_cuDNN_Support.txt", data=b"fake SLA\n", mode=0o644))
    name = "cudnn-%s-%s-v%s.%s" % (cuda, "linux-x64" if system == "linux" else "osx-x64", version, build)
    return name, entries


def windows_tree(version: str = "9.1.0", build: str = "70", cuda: str = "12",
                 new: bool = True) -> Tuple[str, List[Entry]]:
    """Windows zip: new `<name>-archive/{bin,include,lib/x64}` or old `cuda/{bin,include,lib/x64}`."""
    major = int(version.split(".")[0])
    top = "cudnn-windows-x86_64-%s.%s_cuda%s-archive" % (version, build, cuda) if new else "cuda"
    name = top if new else "cudnn-%s-windows10-x64-v%s.%s" % (cuda, version, build)
    dlls = ["cudnn64_%d.dll" % major] + ["cudnn_%s64_%d.dll" % (s, major) for s in SUBLIBS.get(major, [])]
    libs = ["cudnn.lib"] + ["cudnn_%s.lib" % s for s in SUBLIBS.get(major, [])]
    entries = [entry(top + "/bin/" + d, data=b"MZ fake dll " + d.encode(), mode=0o644) for d in dlls]
    entries += [entry("%s/include/%s" % (top, n), data=d, mode=0o644) for n, d in _headers(version)]
    entries += [entry(top + "/lib/x64/" + n, data=b"fake import lib " + n.encode(), mode=0o644) for n in libs]
    if new:
        entries.append(entry(top + "/LICENSE", data=b"fake license\n", mode=0o644))
    return name, entries


def wheel_record(entries: List[Entry], record: str) -> bytes:
    """A wheel's RECORD (PEP 376): each file's path, urlsafe-base64 sha256 and size; RECORD itself without them."""
    def line(e: Entry) -> str:
        data = bytes(e["data"])
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        return "%s,sha256=%s,%d" % (e["name"], digest, len(data))
    return ("\n".join([line(e) for e in entries if e["kind"] == "file"] + [record + ",,"]) + "\n").encode()


def wheel_tree(version: str = "9.1.0.70", cuda_major: int = 12,
               platform_tag: str = "manylinux2014_x86_64") -> Tuple[str, List[Entry]]:
    """nvidia-cudnn-cuNN wheel: nvidia/cudnn/{lib,include} with only .so.N files, plus dist-info; named with
    `platform_tag` (NVIDIA's real files: manylinux1, manylinux2014, manylinux_2_27, win_amd64)."""
    short = ".".join(version.split(".")[:3])
    dist = "nvidia_cudnn_cu%d-%s.dist-info" % (cuda_major, version)
    entries = [entry("nvidia/__init__.py"), entry("nvidia/cudnn/__init__.py"),
               entry("nvidia/cudnn/include/__init__.py"), entry("nvidia/cudnn/lib/__init__.py")]
    entries += [entry("nvidia/cudnn/include/%s" % n, data=d) for n, d in _headers(short)]
    entries += _prefixed("nvidia/cudnn/lib", linux_libs(short, _cudart_for(str(cuda_major)), versioned=False,
                                                         static=False))
    entries += [entry("%s/METADATA" % dist, data=b"Metadata-Version: 2.1\nName: nvidia-cudnn-cu%d\nVersion: %s\n"
                      % (cuda_major, version.encode())),
                entry("%s/WHEEL" % dist, data=b"Wheel-Version: 1.0\nTag: py3-none-%s\n" % platform_tag.encode())]
    entries.append(entry("%s/RECORD" % dist, data=wheel_record(entries, "%s/RECORD" % dist)))
    name = "nvidia_cudnn_cu%d-%s-py3-none-%s" % (cuda_major, version, platform_tag)
    return name, entries


def _cudart_for(cuda: str) -> int:
    parts = [int(x) for x in cuda.split(".")]
    major, minor = parts[0], (parts[1] if len(parts) > 1 else {12: 4, 13: 0, 11: 8}.get(parts[0], 0))
    return major * 1000 + minor * 10


# --- writers -----------------------------------------------------------------------


def write_tar(path: Path, entries: Sequence[Entry], compression: str = "xz") -> Path:
    """compression: xz, gz, bz2 or '' (plain tar). Hostile kinds are written as asked."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = "w:%s" % compression if compression else "w"
    kinds = {"file": tarfile.REGTYPE, "dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE,
             "hardlink": tarfile.LNKTYPE, "chardev": tarfile.CHRTYPE, "blockdev": tarfile.BLKTYPE,
             "fifo": tarfile.FIFOTYPE}
    with tarfile.open(path, mode, format=tarfile.GNU_FORMAT) as tar:
        for e in entries:
            info = tarfile.TarInfo(str(e["name"]))
            info.type = kinds[str(e["kind"])]
            default = 0o755 if e["kind"] in ("dir",) else (0o777 if e["kind"] == "symlink" else 0o644)
            info.mode = e["mode"] if e["mode"] is not None else default
            info.mtime = 1700000000
            if e["kind"] in ("symlink", "hardlink"):
                info.linkname = str(e["target"])
            data = bytes(e["data"]) if e["kind"] == "file" else b""
            info.size = len(data)
            if e["size"] is not None:  # a header that lies about the size, with no data behind it
                info.size = int(e["size"])
                tar.addfile(info)
                continue
            tar.addfile(info, io.BytesIO(data) if data or e["kind"] == "file" else None)
    return path


def write_zip(path: Path, entries: Sequence[Entry], method: int = zipfile.ZIP_DEFLATED) -> Path:
    """Zip in the Info-ZIP Unix convention (mode in external_attr; a symlink's data is its target)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", method) as zf:
        for e in entries:
            name = str(e["name"])
            kind = str(e["kind"])
            if kind == "dir":
                info = zipfile.ZipInfo(name.rstrip("/") + "/", (2023, 11, 14, 0, 0, 0))
                info.external_attr = ((stat.S_IFDIR | (e["mode"] or 0o755)) << 16) | 0x10
                zf.writestr(info, b"")
                continue
            info = zipfile.ZipInfo(name, (2023, 11, 14, 0, 0, 0))
            info.create_system = 3
            ftype = {"file": stat.S_IFREG, "symlink": stat.S_IFLNK, "fifo": stat.S_IFIFO,
                     "chardev": stat.S_IFCHR}[kind]
            mode = e["mode"] if e["mode"] is not None else (0o777 if kind == "symlink" else 0o644)
            info.external_attr = (ftype | mode) << 16
            info.compress_type = method
            zf.writestr(info, str(e["target"]).encode() if kind == "symlink" else bytes(e["data"]))
    return path


def write_wheel(directory: Path, version: str = "9.1.0.70", cuda_major: int = 12,
                platform_tag: str = "manylinux2014_x86_64") -> Path:
    name, entries = wheel_tree(version, cuda_major, platform_tag)
    return write_zip(Path(directory) / (name + ".whl"), entries)


# --- ready-made archives in every layout --------------------------------------------


def make(kind: str, directory: Path, **kw: object) -> Path:
    """kind: linux-xz (x86_64), linux-sbsa, legacy-linux, legacy-macos, windows-new, windows-old, wheel."""
    directory = Path(directory)
    if kind in ("linux-xz", "linux-sbsa", "linux-gz", "linux-tar"):
        arch = "sbsa" if kind == "linux-sbsa" else str(kw.pop("arch", "x86_64"))
        top, entries = linux_tree(arch=arch, **kw)  # type: ignore[arg-type]
        comp = {"linux-gz": "gz", "linux-tar": ""}.get(kind, "xz")
        suffix = {"xz": ".tar.xz", "gz": ".tar.gz", "": ".tar"}[comp]
        return write_tar(directory / (top + suffix), entries, comp)
    if kind in ("legacy-linux", "legacy-macos"):
        name, entries = legacy_tree(system="linux" if kind == "legacy-linux" else "macos", **kw)  # type: ignore
        return write_tar(directory / (name + ".tgz"), entries, "gz")
    if kind in ("windows-new", "windows-old"):
        name, entries = windows_tree(new=kind == "windows-new", **kw)  # type: ignore[arg-type]
        return write_zip(directory / (name + ".zip"), entries)
    if kind == "wheel":
        return write_wheel(directory, **kw)  # type: ignore[arg-type]
    raise ValueError(kind)


# --- the real library, repacked into NVIDIA's tarball layout ----------------------------


def repack_wheel_as_tarball(site: Path, out_dir: Path, version: str = "9.1.0.70", cuda: str = "12",
                            compression: str = "xz", xz_level: int = 6) -> Path:
    """Real `nvidia-cudnn-cu12` wheel files as cudnn-linux-x86_64-<ver>_cuda<N>-archive.tar[.xz].

    The .so.N files become .so.X.Y.Z real files plus .so.N and .so links, as in NVIDIA's tarball.
    Cached: an existing output is returned as it is. xz runs as `xz -T0` (multi-block, so
    multi-threaded decompression can use it).
    """
    short = ".".join(version.split(".")[:3])
    top = "cudnn-linux-x86_64-%s_cuda%s-archive" % (version, cuda)
    out = Path(out_dir) / (top + (".tar.xz" if compression == "xz" else ".tar"))
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp%d" % os.getpid())
    base = Path(site) / "nvidia" / "cudnn"
    proc = None
    raw = open(tmp, "wb")
    try:
        if compression == "xz":
            proc = subprocess.Popen(["xz", "-T0", "-%d" % xz_level, "-c"], stdin=subprocess.PIPE, stdout=raw)
            sink = proc.stdin
        else:
            sink = raw
        with tarfile.open(fileobj=sink, mode="w|", format=tarfile.GNU_FORMAT, bufsize=1 << 20) as tar:
            def add_dir(name: str) -> None:
                info = tarfile.TarInfo(name)
                info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 1700000000
                tar.addfile(info)

            def add_link(name: str, target: str) -> None:
                info = tarfile.TarInfo(name)
                info.type, info.linkname, info.mode, info.mtime = tarfile.SYMTYPE, target, 0o777, 1700000000
                tar.addfile(info)

            def add_file(name: str, src: Path) -> None:
                info = tarfile.TarInfo(name)
                info.size, info.mode, info.mtime = src.stat().st_size, 0o644, 1700000000
                with open(src, "rb") as fh:
                    tar.addfile(info, fh)

            add_dir(top)
            add_dir(top + "/include")
            for header in sorted((base / "include").glob("*.h")):
                add_file("%s/include/%s" % (top, header.name), header)
            add_dir(top + "/lib")
            for lib in sorted((base / "lib").glob("libcudnn*.so.*")):
                stem, major = lib.name.split(".so.")
                real = "%s.so.%s" % (stem, short)
                add_file("%s/lib/%s" % (top, real), lib)
                add_link("%s/lib/%s" % (top, lib.name), real)
                add_link("%s/lib/%s.so" % (top, stem), lib.name)
            licenses = sorted(Path(site).glob("nvidia_cudnn_cu*.dist-info/License.txt"))
            if licenses:
                add_file(top + "/LICENSE", licenses[0])
        if proc is not None:
            proc.stdin.close()
            if proc.wait() != 0:
                raise RuntimeError("xz failed")
    finally:
        raw.close()
    os.replace(tmp, out)
    return out


# --- comparing trees ------------------------------------------------------------------


def snapshot(root: Path) -> Dict[str, Tuple[str, str, int, str]]:
    """rel path -> (type, link target, mode, sha256 of content): what rollback must restore exactly."""
    root = Path(root)
    out: Dict[str, Tuple[str, str, int, str]] = {}
    if not root.exists():
        return out
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(path), 0, "")
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", "", stat.S_IMODE(st.st_mode), "")
            else:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                out[rel] = ("file", "", stat.S_IMODE(st.st_mode), digest)
    return out


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# --- running the command ----------------------------------------------------------------

REPO = Path(__file__).resolve().parents[1]


def cli_app():
    """The real app; a fresh one with only install/rollback if cli.py is mid-edit and fails to import."""
    try:
        from cudnn_doctor.cli import app

        return app
    except Exception:  # pragma: no cover - only while another module is broken
        import typer

        from cudnn_doctor.commands import install as install_cmd

        app = typer.Typer()
        install_cmd.register(app)
        return app


# Post-install steps read the machine (ld.so.conf, `check`); tests point them at a fake machine root,
# by default one that does not exist (nothing on it), so no test probes the real machine.
MACHINE_ENV = "CUDNN_DOCTOR_TEST_MACHINE_ROOT"
NO_MACHINE = "/nonexistent/cudnn-doctor-test-machine"


def invoke(*args: str, env: Optional[Dict[str, str]] = None):
    """In-process run through typer's CliRunner (stdout and stderr kept apart)."""
    from clirunner import CliRunner

    return CliRunner().invoke(cli_app(), [str(a) for a in args], env=dict({MACHINE_ENV: NO_MACHINE}, **(env or {})))


def run_cli(*args: str, env: Optional[Dict[str, str]] = None, timeout: float = 120,
            wait: bool = True):
    """The command in a fresh process, as a user runs it (so kills and tracebacks are real)."""
    full_env = dict(os.environ, NO_COLOR="1", PYTHONPATH=str(REPO))
    full_env[MACHINE_ENV] = NO_MACHINE
    full_env.update(env or {})
    cmd = [sys.executable, "-m", "cudnn_doctor"] + [str(a) for a in args]
    if not wait:
        return subprocess.Popen(cmd, cwd=str(REPO), env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
    return subprocess.run(cmd, cwd=str(REPO), env=full_env, capture_output=True, text=True, timeout=timeout)


# --- toolkits for the other layouts ------------------------------------------------------


def arm_toolkit(machine, version: str = "12.4.1", arch: str = "sbsa") -> Path:
    """A toolkit whose include/ and lib64/ link into targets/<arch>-linux (as NVIDIA's packages lay it out)."""
    prefix = "/usr/local/cuda-%s" % ".".join(version.split(".")[:2])
    machine.mkdir("%s/targets/%s-linux/include" % (prefix, arch))
    machine.mkdir("%s/targets/%s-linux/lib" % (prefix, arch))
    machine.link("%s/include" % prefix, "targets/%s-linux/include" % arch)
    machine.link("%s/lib64" % prefix, "targets/%s-linux/lib" % arch)
    machine.file("%s/version.json" % prefix, '{"cuda": {"name": "CUDA SDK", "version": "%s"}}' % version)
    machine.file("%s/include/cuda.h" % prefix, "#define CUDA_VERSION 12040\n")
    machine.file("%s/bin/nvcc" % prefix, "#!/bin/sh\n", mode=0o755)
    return machine.p(prefix)


def windows_toolkit(machine, version: str = "12.4.1") -> Path:
    """CUDA_PATH on Windows: bin (with .exe tools), include, lib\\x64."""
    prefix = "/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v%s" % ".".join(version.split(".")[:2])
    machine.file("%s/bin/nvcc.exe" % prefix, b"MZ fake nvcc")
    machine.file("%s/bin/cudart64_12.dll" % prefix, b"MZ fake cudart")
    machine.file("%s/lib/x64/cudart.lib" % prefix, b"fake import lib")
    machine.file("%s/include/cuda.h" % prefix, "#define CUDA_VERSION %d\n" % _cudart_for(version))
    machine.file("%s/version.json" % prefix, '{"cuda": {"name": "CUDA SDK", "version": "%s"}}' % version)
    return machine.p(prefix)


def macos_toolkit(machine, version: str = "10.2.89") -> Path:
    """/Developer/NVIDIA/CUDA-10.2: lib with .dylib files, include, version.txt."""
    prefix = "/Developer/NVIDIA/CUDA-%s" % ".".join(version.split(".")[:2])
    machine.file("%s/lib/libcudart.10.2.dylib" % prefix, b"\xcf\xfa\xed\xfe fake cudart")
    machine.link("%s/lib/libcudart.dylib" % prefix, "libcudart.10.2.dylib")
    machine.file("%s/include/cuda.h" % prefix, "#define CUDA_VERSION 10020\n")
    machine.file("%s/version.txt" % prefix, "CUDA Version %s\n" % version)
    machine.mkdir("%s/bin" % prefix)
    return machine.p(prefix)


def toolkit_with_cudnn9(machine, tmp_path: Path, monkeypatch) -> Dict[str, Path]:
    """A CUDA 12.4 toolkit holding cuDNN 9.0.0, with Python's temp files kept inside tmp_path for the tests."""
    home = machine.p(machine.toolkit("12.4.1"))
    rel = str(home.relative_to(machine.root))
    machine.cudnn("9.0.0", rel + "/lib64", rel + "/include", cuda=12040)
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    return {"home": home, "tmp": tmp_path, "temp": temp}


def toolkit_and_tarball(machine, tmp_path: Path) -> Dict[str, object]:
    """A CUDA 12.4 toolkit holding cuDNN 9.0.0, and a 9.1.0 tarball to install over it."""
    home = machine.p(machine.toolkit("12.4.1"))
    rel = str(home.relative_to(machine.root))
    machine.cudnn("9.0.0", rel + "/lib64", rel + "/include", cuda=12040)
    archive = make("linux-xz", tmp_path / "dl")
    return {"home": home, "archive": archive, "machine": machine, "tmp": tmp_path}
