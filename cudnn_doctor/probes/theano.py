"""Theano and Keras installs, the configuration Theano reads (THEANO_FLAGS over .theanorc) and the cuDNN its
dnn.include_path / dnn.library_path hold, read from files only (Theano is never imported)."""
from __future__ import annotations

import json
import os
import re
from typing import Dict, List, Optional, Tuple

from ..model_theano import TheanoFacts, TheanoInstall
from ..readers.headers import parse_cudnn_header
from ..readers.package_meta import normalize_name, parse_metadata
from ..readers.theano_config import Setting, effective, parse_flags, parse_rc, rc_files
from ..versions import soname_version

# Theano installed by pip (a wheel's *.dist-info) or by setup.py / a distro package (*.egg-info, folder or file).
_META = re.compile(r"^(?P<name>[A-Za-z0-9_.]+)-(?P<version>[0-9][^-]*?)(?:-py\d[\d.]*)?\.(?:dist|egg)-info$")
# Where gcc looks for <cudnn.h> after the -I folders Theano passes.
_SYSTEM_INCLUDES = ("/usr/local/include", "/usr/include/x86_64-linux-gnu", "/usr/include/aarch64-linux-gnu",
                    "/usr/include")


def _dists(ctx, site: str) -> List[Tuple[str, str, str]]:
    """(name, version, metadata path) of each Theano and Keras install in one site folder."""
    out = []
    for entry in ctx.host.listdir(site):
        m = _META.match(entry)
        name = normalize_name(m.group("name")) if m else None
        if m and name in ("theano", "keras"):
            path = "%s/%s" % (site, entry)
            meta_file = path + ("/METADATA" if entry.endswith(".dist-info") else "/PKG-INFO")
            text = ctx.host.read_text(meta_file if ctx.host.is_dir(path) else path, limit=64 * 1024) or ""
            version = (parse_metadata(text).get("Version") or [m.group("version")])[0]
            out.append((name, version, path))
    return out


def probe(ctx) -> None:
    host, facts = ctx.host, ctx.facts
    th = TheanoFacts()
    facts.theano = th
    for site in facts.python.site_dirs:
        dists = _dists(ctx, site)
        if not any(name == "theano" for name, _, _ in dists):
            dists += _bare_theano(ctx, site)
        for name, version, meta in dists:
            if name == "theano":
                th.installs.append(TheanoInstall(version=version, location=site, metadata=meta,
                                                 backends=_backends(ctx, site)))
            else:
                th.keras.append({"version": version, "location": site, "metadata": meta})
    if not th.installs and not th.keras:
        return
    home = host.getenv("HOME") or "/root"
    th.flags = host.getenv("THEANO_FLAGS")
    flags, error = parse_flags(th.flags or "")
    if error:
        th.problems.append(error)
    th.rc_files = rc_files(host.getenv("THEANORC"), home)
    texts = []
    for path in th.rc_files:
        ctx.searched("theano", path)
        if host.is_dir(path):
            continue  # Theano's configparser skips what it cannot open as a file
        text = host.read_text(path, limit=1 << 20)
        if text is not None:
            th.rc_found.append(path)
            texts.append((path, text))
    defaults = {"USER": host.getenv("USER") or os.path.basename(home.rstrip("/")), "PID": "0"}
    defaults.update({k: host.getenv(k) or "" for k in ("LSCRATCH", "TMPDIR", "TEMP", "TMP")})
    rc, problems = parse_rc(texts, defaults)
    th.problems.extend(problems)
    for key in list(rc) + list(flags):
        found = effective(flags, rc, key)
        if found is not None:  # always: the key comes from one of the two
            th.settings[key] = {"value": found[0], "from": found[1]}
    for inst in th.installs:  # the release's own defaults (which folder dnn.* default to)
        _paths(ctx, inst, flags, rc, ctx.knowledge.theano_release(inst.version) or {})
    _keras_backend(ctx, th, home)


def _bare_theano(ctx, site: str) -> List[Tuple[str, str, str]]:
    """A theano/ folder copied in without its metadata: the version its own files record (1.0: _version.py,
    written by versioneer; 0.x: generated_version.py, written by setup.py)."""
    for rel, pattern in (("theano/_version.py", r'"version":\s*"([^"]+)"'),
                         ("theano/generated_version.py", r"^version\s*=\s*'([^']+)'")):
        m = re.search(pattern, ctx.host.read_text("%s/%s" % (site, rel), limit=64 * 1024) or "", re.M)
        if m:
            return [("theano", m.group(1), "%s/%s" % (site, rel))]
    return []


def _backends(ctx, site: str) -> List[str]:
    host = ctx.host
    found = []
    if host.exists(site + "/theano/sandbox/cuda/dnn.py"):  # 1.0 keeps only an __init__.py that refuses
        found.append("cuda")
    if host.exists(site + "/theano/gpuarray/dnn.py") or host.exists(site + "/theano/sandbox/gpuarray/dnn.py"):
        found.append("gpuarray")
    return found


def _cuda_root(ctx, flags: Dict[str, str], rc: Dict[str, Setting], release: dict) -> Optional[str]:
    """cuda.root as Theano defaults it: the flag, else $CUDA_ROOT (1.0: then $CUDA_PATH), else nvcc's parent."""
    host = ctx.host
    set_ = effective(flags, rc, "cuda.root")
    if set_ is not None:
        return set_[0]
    for var in release.get("cuda_root_env", ["CUDA_ROOT", "CUDA_PATH"]):
        if host.getenv(var):
            return host.getenv(var)
    for folder in host.env_paths("PATH"):
        if host.exists(folder.rstrip("/") + "/nvcc"):
            return os.path.dirname(os.path.normpath(folder))
    return None


def _paths(ctx, inst: TheanoInstall, flags: Dict[str, str], rc: Dict[str, Setting], release: dict) -> None:
    host = ctx.host
    root = _cuda_root(ctx, flags, rc, release)
    if release.get("dnn_paths") == "cuda.root":
        base, base_from = root, "default (cuda.root=%s)" % root
    else:
        chosen = effective(flags, rc, "dnn.base_path")
        if chosen is not None:
            base, base_from = chosen[0], "dnn.base_path from %s" % chosen[1]
        else:  # Theano 1.0 uses cuda.root only when cuDNN's header was copied into it
            base = root if root and host.exists(root.rstrip("/") + "/include/cudnn.h") else None
            base_from = "default (dnn.base_path=%s)" % base
    for key, sub in (("include_path", "include"), ("library_path", "lib64")):
        chosen = effective(flags, rc, "dnn." + key)
        origin: Optional[str]
        if chosen is not None:
            value, origin = chosen
        else:
            value, origin = (os.path.join(base, sub), base_from) if base else ("", None)
        setattr(inst, key, value or None)
        setattr(inst, key + "_from", origin)
    cuda_include = [os.path.join(root, "include")] if root else []
    _header(ctx, inst, ([inst.include_path] if inst.include_path else []) + cuda_include + list(_SYSTEM_INCLUDES))
    # Theano 1.0 links its cuDNN ops with -Wl,-rpath,<dnn.bin_path> (on Linux: dnn.library_path unless set); 0.x
    # adds no run path for cuDNN.
    bin_path = effective(flags, rc, "dnn.bin_path")
    run_path = (bin_path[0] if bin_path else inst.library_path) if release.get("dnn_paths") != "cuda.root" else None
    _library(ctx, inst, run_path or None)


def _header(ctx, inst: TheanoInstall, folders: List[str]) -> None:
    """The first cudnn.h the compiler finds; its version, or that of cudnn_version.h beside it (cuDNN 8+)."""
    for folder in dict.fromkeys(folders):
        path = folder.rstrip("/") + "/cudnn.h"
        ctx.searched("theano", path)
        text = ctx.host.read_text(path, limit=1 << 20)
        if text is None:
            continue
        parsed = parse_cudnn_header(text) or parse_cudnn_header(
            ctx.host.read_text(folder.rstrip("/") + "/cudnn_version.h", limit=1 << 20) or "")
        inst.header_path, inst.header_version = path, parsed["version"] if parsed else None
        return


def _library(ctx, inst: TheanoInstall, run_path: Optional[str]) -> None:
    """What `-lcudnn` links (library_path's libcudnn.so, else the system's) and what the module loads."""
    host = ctx.host
    folder = inst.library_path
    if folder and host.is_dir(folder):
        inst.library_files = sorted(n for n in host.listdir(folder) if n.startswith("libcudnn"))
    if folder and host.lexists(folder.rstrip("/") + "/libcudnn.so"):
        inst.link_path = folder.rstrip("/") + "/libcudnn.so"
        inst.link_realpath, _ = host.realpath(inst.link_path)
    elif not folder or "libcudnn.so" not in inst.library_files:
        res = ctx.loader.resolve("libcudnn.so")
        inst.link_path, inst.link_realpath = res.path, res.realpath
    version = soname_version(os.path.basename(inst.link_realpath or ""))
    if not version:
        return
    soname = "libcudnn.so.%s" % version.split(".")[0]
    res = ctx.loader.resolve(soname, runpath=[run_path] if run_path else ())
    inst.load_path, inst.load_realpath, inst.load_via = res.path, res.realpath, res.via


def _keras_backend(ctx, th: TheanoFacts, home: str) -> None:
    """Keras 1/2 pick their backend from $KERAS_BACKEND, else ~/.keras/keras.json."""
    env = ctx.host.getenv("KERAS_BACKEND")
    path = home.rstrip("/") + "/.keras/keras.json"
    try:
        config = json.loads(ctx.host.read_text(path, limit=64 * 1024) or "{}")
    except ValueError:
        config = {}
    for entry in th.keras:
        if env:
            entry.update(backend=env, backend_from="KERAS_BACKEND")
        elif isinstance(config, dict) and config.get("backend"):
            entry.update(backend=str(config["backend"]), backend_from=path)
