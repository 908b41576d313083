"""Which cuDNN each framework loads: the soname its binary or metadata names (and where that was read), then ld.so's
search for it from the framework's library, and for each sub-library libcudnn.so.N itself dlopens at first use."""
from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Set, Tuple

from packaging.version import Version

from .. import parsed_cache
from ..model import PRELOADED, FrameworkFacts, Resolution
from ..versions import canonical_name, requirements, small_int
from ..queries import copy_for_path
from .preloads import preloaded_cudnn

if TYPE_CHECKING:
    from packaging.requirements import Requirement

# A literal soname in a library that dlopens cuDNN by name (CuPy's, ONNX Runtime's); XLA and TensorFlow build the
# name at run time from their build's version, which their own records say instead.
_SONAME_TEXT = re.compile(rb"libcudnn\.so\.(\d{1,2})(?![\d.])")
_CHUNK = 16 << 20
_PLATFORM = {"platform_system": "Linux", "sys_platform": "linux", "platform_machine": "x86_64",
             "os_name": "posix"}


def binary_cudnn_majors(host, path: str) -> List[int]:
    """The cuDNN majors a library names as `libcudnn.so.N` anywhere in its bytes (remembered per file identity)."""
    opened = host.open_binary(path)
    if opened is None:
        return []
    fh, size = opened
    try:
        st = os.fstat(fh.fileno())
        return list(parsed_cache.remember("cudnn-soname", parsed_cache.file_identity(path, st),
                                          lambda: _scan(fh.fileno(), size)) or [])
    finally:
        fh.close()


def _scan(fd: int, size: int) -> List[int]:
    found: Set[int] = set()
    offset, tail = 0, b""
    while offset < size:
        block = tail + os.pread(fd, _CHUNK, offset)
        found.update(int(m.group(1)) for m in _SONAME_TEXT.finditer(block))
        tail = block[-24:]  # a name split across two reads
        offset += _CHUNK
    return sorted(found)


def requirement_cudnn_major(requires: Sequence[str], extras: Sequence[str]) -> Optional[Tuple[int, str]]:
    """(major, requirement) of the nvidia-cudnn-* requirement that applies here (its marker true without an extra,
    else under one of the package's extras: TensorFlow's `and-cuda`, JAX's `with-cuda`, ONNX Runtime's `cudnn`)."""
    parsed = []
    for text, req in requirements(requires):
        if canonical_name(req.name).startswith("nvidia-cudnn-") and req.specifier:
            parsed.append((text, req))
    for extra in [""] + list(extras):
        for text, req in parsed:
            try:
                applies = req.marker is None or req.marker.evaluate(dict(_PLATFORM, extra=extra))
            except Exception:  # an exotic marker: judge the next requirement
                continue
            major = specifier_major(req)
            if applies and major is not None:
                return major, text
    return None


def specifier_major(req: Requirement) -> Optional[int]:
    """The cuDNN major pip would install for a specifier: the newest major it admits (==8.9.* -> 8, >=9.1,<10 -> 9)."""
    candidates = []
    for spec in req.specifier:
        text = spec.version.replace(".*", "")
        head = small_int(text.split(".")[0])
        if head is not None:
            candidates.append(text)
            candidates += ["%d.%s" % (m, tail) for m in (head - 1, head) if m >= 0 for tail in ("0", "99.99.99")]
    admitted = [Version(v).major for v in candidates if req.specifier.contains(Version(v), prereleases=True)]
    return max(admitted) if admitted else None


def wanted_cudnn(ctx, fw: FrameworkFacts, needed: Sequence[str]) -> Tuple[Optional[int], Optional[str]]:
    """(major, where that was read) of the cuDNN a framework asks for, best evidence first: the loader's own
    DT_NEEDED, the framework's build record, a soname in its binary, its requirements, the wheel beside it."""
    for name in needed:
        if name.startswith("libcudnn.so."):
            return small_int(name.rsplit(".", 1)[1]), "DT_NEEDED of %s" % fw.consumer_library
    major = small_int((fw.cudnn_version or "").split(".")[0])
    if major is not None:
        return major, fw.source
    if fw.consumer_library:
        majors = binary_cudnn_majors(ctx.host, fw.consumer_library)
        if len(majors) == 1:
            return majors[0], "libcudnn.so.%d named in %s" % (majors[0], fw.consumer_library)
    found = requirement_cudnn_major(fw.requires, fw.extras)
    if found:
        return found[0], "Requires-Dist: %s (%s)" % (found[1], fw.requires_source or fw.source)
    copies = [c for c in ctx.facts.cudnn if c.origin == "pip" and c.directory.startswith(fw.location)]
    if copies and copies[0].major is not None:
        return copies[0].major, "the cuDNN wheel installed beside it (%s)" % copies[0].directory
    return None, None


def dlopen_name(ctx, fw: FrameworkFacts, major: int) -> str:
    """The name the framework asks the loader for: libcudnn.so.N, or the unversioned name a release dlopens
    (PaddlePaddle 2.6's own search list: compat/framework_features.toml)."""
    if fw.name.startswith("paddlepaddle"):
        row = ctx.knowledge.framework_build(canonical_name(fw.name).replace("-", "_"), fw.version)
        if row and row.get("cudnn_name"):
            return str(row["cudnn_name"])
    return "libcudnn.so.%d" % major


def _loader_chain(ctx, fw: FrameworkFacts) -> List[Tuple[List[str], Optional[str]]]:
    """(RPATH, $ORIGIN) of the framework library, inherited by a dlopen from an object without RUNPATH."""
    if not fw.consumer_library:
        return []
    info = ctx.loader.elf(fw.consumer_library, dynamic=True)
    return [] if info.runpath else [(list(info.rpath), os.path.dirname(fw.consumer_library))]


def resolve_sublibraries(ctx, fw: FrameworkFacts, major: int) -> Dict[str, Resolution]:
    """Where the sub-libraries the loaded libcudnn.so.N dlopens come from: glibc searches with the shim's own RUNPATH
    after LD_LIBRARY_PATH (or its RPATH, then its loaders', before it), so another copy can supply some of them."""
    res = fw.resolved_cudnn
    if res is None or not res.path or res.error or not re.fullmatch(r"libcudnn\.so(\.\d+)?", res.name):
        return {}
    names = ctx.knowledge.cudnn_layout(major).get("linux_sublibraries", [])
    info = ctx.loader.elf(res.path, dynamic=True)
    # A preloaded shim was loaded by the program, not by the framework's library: no RPATH of the latter is inherited.
    preloaded = res.via in PRELOADED
    inherited = [] if info.runpath or preloaded else _loader_chain(ctx, fw)
    shim = dict(runpath=info.runpath, rpath=info.rpath, origin=os.path.dirname(res.path), inherited_rpath=inherited)
    release = _release_of(copy_for_path(ctx.facts, res.path, res.realpath)) if major >= 9 else None
    names = list(names) + ctx.knowledge.later_engines(major, release)  # 9.20's tensor_ir engine, where it is 9.20+
    found = {name: _sublibrary(ctx, name, release, shim) for name in names if "_engines_" not in name}
    # cuDNN 9's engines are dlopened by libcudnn_graph's LibraryLoader at the first convolution, so glibc searches
    # from the graph library: its RUNPATH comes after LD_LIBRARY_PATH even where the shim's RPATH came before it
    # (the 9.24 wheel's libcudnn.so.9 has RPATH $ORIGIN, its graph library RUNPATH $ORIGIN; docs/real-stacks.md).
    graph = found.get("libcudnn_graph.so.%d" % major)
    searcher = shim
    if graph is not None and graph.path and not graph.error:
        release = _release_of(copy_for_path(ctx.facts, graph.path, graph.realpath))
        g_info = ctx.loader.elf(graph.path, dynamic=True)
        searcher = dict(runpath=g_info.runpath, rpath=g_info.rpath, origin=os.path.dirname(graph.path),
                        inherited_rpath=[] if g_info.runpath else list(info.rpath) + inherited)
    found.update({name: _sublibrary(ctx, name, release, searcher) for name in names if "_engines_" in name})
    return {name: found[name] for name in names}


def _release_of(copy) -> Optional[str]:
    """The release (9.14.0) of the copy a loaded cuDNN file belongs to, where a probe read it."""
    return str(copy.version) if copy is not None and copy.version else None


def _sublibrary(ctx, soname: str, release: Optional[str], searcher: Dict) -> Resolution:
    """cuDNN 9's library loader asks for its own release's file name first, then major.minor, then the soname, then
    the bare name (its log: 'Unable to load any of {libcudnn_engines_precompiled.so.9.19.0, ...so.9.19, ...so.9,
    ...so}'; LD_DEBUG on an H200: a 9.14 shim found libcudnn_graph.so.9.14.0 in its own folder although a 9.19
    libcudnn_graph.so.9 came first on LD_LIBRARY_PATH). A name that finds a loadable file ends the search."""
    base = soname.rsplit(".so.", 1)[0] + ".so"
    numbers = release.split(".")[:3] if release else []
    names = ["%s.%s" % (base, ".".join(numbers)), "%s.%s" % (base, ".".join(numbers[:2]))] if len(numbers) == 3 else []
    for name in names:
        res = ctx.loader.resolve(name, **searcher)
        if res.path and not res.error:
            return res
    res = ctx.loader.resolve(soname, **searcher)
    if names and not res.path:  # the bare name last, as the loader's list has it (a -dev package's link)
        bare = ctx.loader.resolve(base, **searcher)
        if bare.path and not bare.error:
            return bare
    return res


# The CUDA runtime (or cuBLAS) a framework library links, whose soname major is its build's CUDA major.
_CUDA_NEEDED = re.compile(r"lib(?:cudart|cublas)\.so\.(\d+)")


def _loaded(ctx, fw: FrameworkFacts, major: int, name: str, search: dict, ld_preload: bool) -> Resolution:
    """The copy a preload or the framework's own Python side hands it, else the loader's search from its library."""
    return preloaded_cudnn(ctx, fw, major, name, ld_preload=ld_preload) or ctx.loader.resolve(name, **search)


def resolve_frameworks(ctx) -> None:
    """Which cuDNN each framework would load: its RPATH/RUNPATH around LD_LIBRARY_PATH, as ld.so does (E2)."""
    resolved = set()
    for fw in ctx.facts.python.frameworks:
        # Without a library of its own to read, only a known GPU build is taken to load cuDNN at all.
        if fw.cuda_build is False or (not fw.consumer_library and fw.cuda_build is not True):
            continue
        if fw.name.startswith(("jax-cuda", "cupy")) and not fw.consumer_library:
            # Without its PJRT library JAX has no CUDA backend; CuPy 14 dropped its cuDNN module (cupy.cuda.cudnn):
            # nothing of theirs loads cuDNN.
            continue
        if fw.consumer_library and fw.consumer_library in resolved:
            continue  # JAX's plugin and PJRT wheels share one library: one process loads it once
        resolved.add(fw.consumer_library)
        info = ctx.loader.elf(fw.consumer_library, dynamic=True) if fw.consumer_library else None
        if info and not fw.cuda_version:  # no version file (ONNX Runtime): its library's CUDA runtime names it
            fw.cuda_version = next((m.group(1) for m in map(_CUDA_NEEDED.fullmatch, info.needed) if m), None)
        major, fw.cudnn_soname_source = wanted_cudnn(ctx, fw, info.needed if info else [])
        if major is None:
            continue
        origin = os.path.dirname(fw.consumer_library) if fw.consumer_library else None
        runpath, rpath = (info.runpath, info.rpath) if info else ([], [])
        where = origin or ""
        fw.library_search_path = [os.path.normpath(d.replace("${ORIGIN}", where).replace("$ORIGIN", where))
                                  for d in (runpath or rpath)]
        name = dlopen_name(ctx, fw, major)
        search = dict(runpath=runpath, rpath=rpath, origin=origin)
        fw.resolved_cudnn = _loaded(ctx, fw, major, name, search, ld_preload=True)
        if fw.resolved_cudnn.via in PRELOADED:  # what it meets once the preload is gone (CD711's fix asks)
            fw.cudnn_without_preload = _loaded(ctx, fw, major, name, search, ld_preload=False)
        fw.resolved_cudnn_parts = resolve_sublibraries(ctx, fw, major)
