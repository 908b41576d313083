"""cuDNN copies: every libcudnn on the disk, its real version, header, sub-libraries, links, modes and owner."""
from __future__ import annotations

import os
import re
import stat
from typing import Dict, List, Optional, Tuple

from ..model import CudnnCopy, LibFile
from ..readers.headers import parse_cudnn_header
from ..readers.package_meta import dpkg_status_version
from ..versions import decode_cuda, decode_cudnn, soname_version
from .toolkit import INCLUDE_SUBDIRS, lib_dirs, toolkit_for

_CUDNN_FILE = re.compile(r"^libcudnn(?:_(?P<sub>[a-z_]+?))?\.so(?:\.(?P<ver>\d+(?:\.\d+)*))?$")
TRIPLETS = ("x86_64-linux-gnu", "aarch64-linux-gnu", "powerpc64le-linux-gnu")


def _search_dirs(ctx) -> List[Tuple[str, str]]:
    """(folder, how it was found) in the order a user would expect them reported."""
    host, facts = ctx.host, ctx.facts
    dirs: List[Tuple[str, str]] = [(d, "LD_LIBRARY_PATH") for d in facts.loader.ld_library_path]
    # A libcudnn LD_PRELOAD forces into every process is a copy in use wherever its folder is (probes/preloads.py).
    dirs += [(os.path.dirname(p), "LD_PRELOAD") for p in facts.loader.ld_preload
             if p.startswith("/") and os.path.basename(p).startswith("libcudnn")]
    for tk in facts.toolkits:
        if tk.kind != "pip" and not tk.dangling:
            dirs += [(d, "toolkit %s" % tk.path) for d in lib_dirs(host, tk.path)]
    dirs += [(d, "ld.so.conf") for d in facts.loader.conf_dirs]
    dirs += [(d, "default loader path") for d in facts.loader.default_dirs]
    for site in facts.python.site_dirs:
        dirs += [(d, "pip (%s)" % site) for d in (site + "/nvidia/cudnn/lib", site + "/torch/lib")]
    for prefix in facts.python.conda_prefixes:
        dirs.append((prefix + "/lib", "conda (%s)" % prefix))
    for pattern in ("/opt/cudnn*/lib*", "/usr/local/cudnn*/lib*", "/opt/nvidia/cudnn*/lib*"):
        dirs += [(d, "standalone (%s)" % pattern) for d in host.glob(pattern)]
    for inst in facts.theano.installs:  # wherever Theano's configuration points it
        if inst.library_path:
            dirs.append((inst.library_path, "Theano dnn.library_path"))
    return dirs


def _canonical(ctx, dirs: List[Tuple[str, str]]) -> List[Tuple[str, str]]:
    """Name each real folder once, preferring a path without links (/usr/lib/... over /lib/... on merged-/usr)."""
    host = ctx.host
    best: Dict[str, str] = {}
    for d, _ in dirs:
        real, _ = host.realpath(d)
        if real not in best or (d == real and best[real] != real and not best[real].startswith("/usr/local/cuda")):
            best[real] = d
    return [(best[host.realpath(d)[0]], via) for d, via in dirs]


def probe(ctx) -> None:
    host, facts = ctx.host, ctx.facts
    copies: Dict[Tuple[str, int], CudnnCopy] = {}
    for directory, via in _canonical(ctx, _search_dirs(ctx)):
        ctx.searched("cudnn", "%s (%s)" % (directory, via))
        if not host.is_dir(directory):
            continue
        real_dir, _ = host.realpath(directory)
        groups: Dict[int, List[str]] = {}
        dev_links: List[str] = []
        for name in host.listdir(directory):
            # The prefix first: a library folder holds thousands of names and the pattern starts with it.
            m = _CUDNN_FILE.match(name) if name.startswith("libcudnn") else None
            if not m or host.is_dir("%s/%s" % (directory, name)):
                continue  # a folder that happens to carry a library's name is not a library
            if not m.group("ver"):
                dev_links.append(name)
                continue
            groups.setdefault(int(m.group("ver").split(".")[0]), []).append(name)
        for major, names in groups.items():
            key = (real_dir, major)
            if key in copies:
                if via not in copies[key].found_via:
                    copies[key].found_via.append(via)
                continue
            copy = _copy(ctx, directory, major, names + _dev_links_for(host, directory, dev_links, major), via)
            copies[key] = copy
    facts.cudnn = list(copies.values())
    for copy in facts.cudnn:
        main = host.real(copy.path)
        task = {"op": "cudnn", "lib": str(main), "search_dir": str(host.real(copy.directory))}
        ctx.native("cudnn", [task], lambda results, copy=copy: _apply_native(copy, results[0], str(host.root)))


def _dev_links_for(host, directory: str, dev_links: List[str], major: int) -> List[str]:
    """The unversioned libcudnn*.so links that point at this major (dangling ones go to every major)."""
    out = []
    for name in dev_links:
        real, dangling = host.realpath("%s/%s" % (directory, name))
        ver = soname_version(os.path.basename(real))
        if dangling or (ver and ver.split(".")[0] == str(major)):
            out.append(name)
    return out


def _copy(ctx, directory: str, major: int, names: List[str], via: str) -> CudnnCopy:
    host, facts = ctx.host, ctx.facts
    main = "libcudnn.so.%d" % major
    if main not in names:
        versioned = sorted(n for n in names if n.startswith("libcudnn.so."))
        main = versioned[0] if versioned else sorted(names)[0]
    copy = CudnnCopy(path="%s/%s" % (directory, main), directory=directory, major=major, found_via=[via])
    copy.files = [_lib_file(ctx, directory, name) for name in sorted(names)]
    copy.origin = _origin(ctx, directory, via)
    _header(ctx, copy, major)
    copy.package = _package(ctx, copy)
    return copy


def _lib_file(ctx, directory: str, name: str) -> LibFile:
    host = ctx.host
    path = "%s/%s" % (directory, name)
    chain, dangling = host.link_chain(path)
    real, _ = host.realpath(path)
    lf = LibFile(name=name, path=path, realpath=real, is_link=host.is_link(path),
                 link_chain=chain if len(chain) > 1 else [], dangling=dangling)
    lf.file_version = soname_version(os.path.basename(real)) or soname_version(name)
    if not dangling:
        st = host.stat(real)
        if st is not None:
            lf.mode = "%04o" % stat.S_IMODE(st.st_mode)
        lf.readable = host.world_readable(path)
        lf.read_blocker = host.read_blocker(path) if lf.readable is False else None
        lf.elf = ctx.loader.elf(path).status
    return lf


def _origin(ctx, directory: str, via: str) -> str:
    host, facts = ctx.host, ctx.facts
    real, _ = host.realpath(directory)
    for site in facts.python.site_dirs:
        site_real, _ = host.realpath(site)
        if real.startswith(site_real.rstrip("/") + "/"):
            return "pip"
    for prefix in facts.python.conda_prefixes:
        pre_real, _ = host.realpath(prefix)
        if real.startswith(pre_real.rstrip("/") + "/"):
            return "conda"
    if toolkit_for(directory, [t for t in facts.toolkits if t.kind != "pip"], host):
        return "toolkit"
    system = {host.realpath(d)[0] for d in facts.loader.conf_dirs + facts.loader.default_dirs}
    if real in system:
        return "system"
    if via == "LD_LIBRARY_PATH":
        return "ld_library_path"
    return "other"


def _header_candidates(ctx, copy: CudnnCopy, major: int) -> List[str]:
    host, facts = ctx.host, ctx.facts
    names = ["cudnn_version_v%d.h" % major, "cudnn_version.h", "cudnn_v%d.h" % major, "cudnn.h"]
    dirs = [os.path.normpath(copy.directory + "/../include")]
    tk = toolkit_for(copy.directory, facts.toolkits, host)
    if tk:
        dirs += ["%s/%s" % (tk.path, inc) for inc in INCLUDE_SUBDIRS]
    if copy.origin in ("system", "other", "ld_library_path"):
        dirs += ["/usr/include/%s" % t for t in TRIPLETS] + ["/usr/include", "/usr/local/include"]
    if copy.origin == "conda":
        dirs.append(os.path.normpath(copy.directory + "/../include"))
    return ["%s/%s" % (d, n) for d in dict.fromkeys(dirs) for n in names]


def _header(ctx, copy: CudnnCopy, major: int) -> None:
    """The header beside this copy: cudnn.h up to 7, cudnn_version.h from 8 (Debian: cudnn_version_v9.h)."""
    fallback: Optional[Tuple[str, Optional[str], Optional[str]]] = None
    for path in _header_candidates(ctx, copy, major):
        ctx.searched("cudnn", path)
        text = ctx.host.read_text(path, limit=1 << 20)
        if text is None:
            continue
        parsed = parse_cudnn_header(text)
        if parsed is None:
            if fallback is None and os.path.basename(path) != "cudnn.h":
                fallback = (path, None, None)  # a header with no version macros: garbage or truncated
            continue
        if (parsed["version"] or "").split(".")[0] == str(major):
            copy.header_path, copy.header_version, copy.header_max_sm = path, parsed["version"], parsed["max_sm"]
            return
        if fallback is None or fallback[1] is None:
            fallback = (path, parsed["version"], parsed["max_sm"])
    if fallback:
        copy.header_path, copy.header_version, copy.header_max_sm = fallback


def _package(ctx, copy: CudnnCopy) -> Optional[str]:
    host, facts = ctx.host, ctx.facts
    if copy.origin == "pip":
        for wheel in facts.python.nvidia_wheels:
            if wheel["name"].startswith("nvidia-cudnn") and copy.directory.startswith(wheel["location"].rstrip("/") + "/"):
                return "%s %s" % (wheel["name"], wheel["version"])
        return None
    if copy.origin == "conda":
        for pkg in facts.python.conda_packages:
            if pkg["name"] in ("cudnn", "libcudnn") and copy.directory.startswith(pkg["prefix"]):
                return "conda %s %s (%s)" % (pkg["name"], pkg["version"], pkg["build"])
        return None
    real, _ = host.realpath(copy.path)
    wanted = {copy.path, real}
    for listing in host.glob("/var/lib/dpkg/info/*cudnn*.list"):
        text = host.read_text(listing, limit=1 << 20) or ""
        lines = set(text.splitlines())
        if wanted & lines:
            name = os.path.basename(listing)[:-5].split(":")[0]
            return "deb %s %s" % (name, _dpkg_version(ctx, name) or "")
    return None


def _dpkg_version(ctx, package: str) -> Optional[str]:
    return dpkg_status_version(ctx.host.read_text("/var/lib/dpkg/status", limit=64 << 20) or "", package)


def _apply_native(copy: CudnnCopy, res: dict, root: str = "/") -> None:
    if res.get("crashed"):
        copy.load_error = "loading it crashed the probe process (%s)" % res["crashed"]
    elif res.get("timeout"):
        copy.load_error = "loading it did not finish within %ss (hung)" % res["timeout"]
    elif res.get("error"):
        copy.load_error = res["error"]
        if root and root != "/":
            copy.load_error = copy.load_error.replace(root, "")  # the loader names doctor-side paths
    else:
        version = decode_cudnn(res.get("version"))
        if version:
            copy.version, copy.version_source = version, "cudnnGetVersion"
        cuda = decode_cuda(res.get("cudart_version"))
        if cuda:
            copy.cuda_version, copy.cuda_version_source = cuda, "cudnnGetCudartVersion"
    if copy.version:
        return
    # The library could not say; fall back to what the files and packages say, and record which.
    main = next((f for f in copy.files if f.name.startswith("libcudnn.so.")), None)
    if main and main.file_version and main.file_version.count(".") >= 2:
        copy.version, copy.version_source = ".".join(main.file_version.split(".")[:3]), "file name"
    elif copy.package:
        version = copy.package.split()[-1 if not copy.package.startswith("conda") else 2]
        m = re.match(r"(\d+\.\d+\.\d+)", version)
        if m:
            copy.version, copy.version_source = m.group(1), "package"
