"""cuDNN headers a C/C++ build would include, and what deleted copies left behind (links, headers, files)."""
from __future__ import annotations

import os
import re
from typing import Dict, List

from ..readers.headers import parse_cudnn_header
from ..versions import soname_version
from .cudnn import TRIPLETS, _canonical, _search_dirs
from .toolkit import INCLUDE_SUBDIRS

HEADER_NAMES = ("cudnn_version.h", "cudnn_version_v9.h", "cudnn_version_v8.h", "cudnn.h", "cudnn_v8.h", "cudnn_v7.h")
_LIB = re.compile(r"^libcudnn(?:_[a-z_]+?)?\.so(?:\.\d+)*$")


def build_include_dirs(ctx) -> List[str]:
    """nvcc's order: the toolkit's own include folders first, then the compiler's system folders."""
    facts = ctx.facts
    dirs: List[str] = []
    toolkits = [t for t in facts.toolkits if t.kind != "pip" and not t.dangling]
    main = next((t for t in toolkits if t.path.rstrip("/") == "/usr/local/cuda"), toolkits[0] if toolkits else None)
    if main:
        dirs += ["%s/%s" % (main.path.rstrip("/"), inc) for inc in INCLUDE_SUBDIRS]
    dirs += ["/usr/include/%s" % t for t in TRIPLETS] + ["/usr/include", "/usr/local/include"]
    return dirs


def _headers(ctx) -> List[Dict]:
    out: List[Dict] = []
    seen = set()
    for d in build_include_dirs(ctx):
        for name in HEADER_NAMES:
            path = "%s/%s" % (d, name)
            text = ctx.host.read_text(path, limit=1 << 20)
            if text is None:
                continue
            real = ctx.host.realpath(path)[0]
            parsed = parse_cudnn_header(text)
            if parsed is None or real in seen:
                continue
            seen.add(real)
            out.append({"path": path, "version": parsed["version"]})
    return out


def probe(ctx) -> None:
    host, facts = ctx.host, ctx.facts
    facts.cudnn_headers = _headers(ctx)
    copy_dirs = {host.realpath(c.directory)[0] for c in facts.cudnn}
    majors = {c.major for c in facts.cudnn}
    seen = set()
    for directory, _via in _canonical(ctx, _search_dirs(ctx)):
        real_dir = host.realpath(directory)[0]
        if real_dir in seen or not host.is_dir(directory):
            continue
        seen.add(real_dir)
        for name in sorted(host.listdir(directory)):
            path = "%s/%s" % (directory, name)
            if not _LIB.match(name) or not host.is_link(path):
                continue
            chain, dangling = host.link_chain(path)
            if dangling and real_dir not in copy_dirs:
                target = host.readlink(path) or (chain[-1] if chain else "")
                facts.cudnn_leftovers.append({"kind": "dangling-link", "path": path, "target": target,
                                              "directory": directory,
                                              "version": soname_version(os.path.basename(target))})
    for header in facts.cudnn_headers:
        if int(header["version"].split(".")[0]) not in majors:
            facts.cudnn_leftovers.append({"kind": "header-without-library", "path": header["path"],
                                          "version": header["version"]})
    managed = {host.realpath(d)[0] for d in facts.loader.conf_dirs + facts.loader.default_dirs}
    for copy in facts.cudnn:
        names = {f.name for f in copy.files}
        for f in copy.files:
            m = re.match(r"^(libcudnn(?:_[a-z_]+?)?\.so)\.(\d+)\.\d+(?:\.\d+)*$", f.name)
            if m and not f.is_link and "%s.%s" % (m.group(1), m.group(2)) not in names:
                facts.cudnn_leftovers.append({"kind": "missing-soname-link", "path": f.path,
                                              "soname": "%s.%s" % (m.group(1), m.group(2)),
                                              "directory": copy.directory, "version": f.file_version,
                                              "ldconfig_manages": host.realpath(copy.directory)[0] in managed})
