"""The in-environment oracle: run by the environment's own python under the real glibc loader, it loads cuDNN the way
the framework does -- first the framework's own Python-side preloading, executed from the installed framework's
source (torch's _load_global_deps/_preload_cuda_deps, the JAX plugin's nvidia-wheel loads), then the dlopen its
library makes (a shim with the library's RPATH/RUNPATH) -- and prints what happened, one fact a line:
  PRELOAD <what> <path|error>, OPEN <soname> <path> | ERROR <dlerror>, VERSION <n>, CUDART <n>,
  CHECK <fn> <status>,
  STARTUP <soname> <path|ERROR text> (TensorFlow's start-up libraries), MAP <path> (every libcudnn* mapped),
  ENGINE <soname> <path|DRIVER path|ERROR dlerror> (cuDNN 9's engine sub-libraries, which its first convolution
  loads; DRIVER: found, but it needs the driver's libcuda.so.1, which only a GPU host has).
argv: kind site library shim soname engines(comma-separated sonames, may be empty) [startup soname ...]."""
import ast
import ctypes
import glob
import os
import platform
import re
import subprocess
import sys

CHECKS = ("cudnnGraphVersionCheck", "cudnnOpsVersionCheck", "cudnnCnnVersionCheck", "cudnnAdvVersionCheck",
          "cudnnOpsInferVersionCheck", "cudnnOpsTrainVersionCheck", "cudnnCnnInferVersionCheck",
          "cudnnCnnTrainVersionCheck", "cudnnAdvInferVersionCheck", "cudnnAdvTrainVersionCheck")
LIBDL = ctypes.CDLL(None)
LIBDL.dlerror.restype = ctypes.c_char_p
LIBDL.dlinfo.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]


def say(*words):
    print(" ".join(str(w) for w in words), flush=True)


def mapped():
    """Every libcudnn* file in /proc/self/maps, once each, in order."""
    seen = []
    with open("/proc/self/maps") as fh:
        for line in fh:
            path = line[line.find("/"):].strip() if "/" in line else ""
            if "libcudnn" in path and path not in seen:
                seen.append(path)
    return seen


def dump_maps():
    for path in mapped():
        say("MAP", path)


def functions_from(path, names, scope):
    """The named top-level functions of a framework's module, defined from its own source in `scope` with the
    module's own top-level imports that work without the framework (importing the whole framework needs its whole
    stack; these functions need only the standard library)."""
    tree = ast.parse(open(path).read())
    own = os.path.basename(os.path.dirname(path))  # the framework's own package: importing it is what we avoid
    for node in tree.body:
        modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [
            getattr(node, "module", None) or ""]
        if isinstance(node, (ast.Import, ast.ImportFrom)) and not getattr(node, "level", 0) and not any(
                m.split(".")[0] in (own, "typing_extensions") for m in modules):
            try:
                exec(compile(ast.Module(body=[node], type_ignores=[]), path, "exec"), scope)
            except Exception:  # the framework's own modules: not needed by these functions
                pass
    body = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in names]
    exec(compile(ast.Module(body=body, type_ignores=[]), path, "exec"), scope)
    return [n.name for n in body]


# torch's preload outcome for cuDNN and its CUDA runtime: wheel folder -> None (done) or the ValueError's text.
PRELOADED = {}


def _recorded(real):
    """torch's per-library preload, its cuDNN outcome said and any other library's failure kept from stopping it."""
    def preload(*args, **kwargs):  # (lib_folder, lib_name[, required]) up to 2.9; (err) then per library in 2.14
        folder = next((f for f in ("cudnn", "cuda_runtime") if repr(f) in repr(args)), None)
        try:
            real(*args, **kwargs)
            if folder:
                PRELOADED.setdefault(folder, None)
            if folder == "cudnn":
                say("PRELOAD", "torch-sys.path", "ok")
        except ValueError as err:
            if folder:
                PRELOADED[folder] = str(err).split(" in the system path")[0]
            if folder == "cudnn":
                say("PRELOAD", "torch-sys.path", PRELOADED[folder])
    return preload


def torch_stopped():
    """torch's own error for cuDNN's preload, where it decides: torch raises a required preload's ValueError and its
    import stops. It stops at its first missing library; the oracle judges cuDNN as if the others were in place, and a
    CUDA runtime in place (its wheel, on the global deps' RPATH) lets them load with nothing preloaded: so cuDNN's
    error decides only where the runtime itself was preloaded from sys.path (pip --target), as the doctor models."""
    if PRELOADED.get("cudnn") and "cuda_runtime" in PRELOADED and PRELOADED["cuda_runtime"] is None:
        return "torch's _preload_cuda_deps: %s" % PRELOADED["cudnn"]
    return None


def torch_preload(site):
    """torch/__init__.py's own _load_global_deps(): its libtorch_global_deps.so, and on a CUDA-library error the
    _preload_cuda_deps() of every CUDA wheel found on sys.path. Libraries other than cuDNN that no sys.path entry
    holds are recorded, not raised: the oracle judges cuDNN (torch itself would stop at the first one)."""
    init = os.path.join(site, "torch", "__init__.py")
    scope = {"os": os, "ctypes": ctypes, "glob": glob, "sys": sys, "platform": platform, "__file__": init,
             "textwrap": __import__("textwrap")}
    # Its functions import torch.version (a plain file); the package itself, which needs torch's whole stack, stays
    # unimported: an empty package object over the same folder.
    package = __import__("types").ModuleType("torch")
    package.__path__ = [os.path.dirname(init)]
    sys.modules.setdefault("torch", package)
    # 2.14 split the per-library load out of _preload_cuda_deps into _preload_cuda_lib.
    found = functions_from(init, {"_get_cuda_dep_paths", "_preload_cuda_deps", "_preload_cuda_lib",
                                  "_load_global_deps", "_running_with_deploy", "find_package_path"}, scope)
    if "_load_global_deps" not in found:
        return
    for name in ("_preload_cuda_deps", "_preload_cuda_lib"):  # one library a call: (lib_folder, lib_name[, ...])
        if scope.get(name) is not None:
            scope[name] = _recorded(scope[name])
    try:
        scope["_load_global_deps"]()
    except OSError as err:
        say("PRELOAD", "torch-global-deps", str(err).replace("\n", " "))


def jax_preload(site, library):
    """The JAX CUDA plugin's own loads of NVIDIA's wheels by full path (nvidia.<lib>.__path__), from its source."""
    init = os.path.join(os.path.dirname(library), "__init__.py")
    if not os.path.exists(init):
        return
    source = open(init).read()
    if "nvidia" not in source:
        return
    scope = {"__name__": "jax_plugins.oracle", "__file__": init}
    try:
        import importlib
        import logging
        import pathlib
        scope.update(os=os, ctypes=ctypes, sys=sys, importlib=importlib, logging=logging, pathlib=pathlib,
                     glob=glob, platform=platform, logger=logging.getLogger("oracle"))
        names = functions_from(init, {"_load_nvidia_libraries", "_load", "_get_library_path"}, scope)
        if "_load_nvidia_libraries" in names:
            scope["_load_nvidia_libraries"]()
            say("PRELOAD", "jax-nvidia-wheels", "ok")
    except Exception as err:  # what JAX's plugin logs and goes on with
        say("PRELOAD", "jax-nvidia-wheels", ("%s: %s" % (type(err).__name__, err)).replace("\n", " "))


def jax_versions(library):
    """JAX's own check (jax_cuda1N_plugin._versions, what its _check_cuda_versions calls, after the preloads): the
    cuDNN it was built for, and the one it gets. Run in a fork of this process (the same preloads mapped): cuDNN 9's
    libcudnn.so.9 aborts the process inside cudnnGetVersion() when it cannot load its libcudnn_graph ("Unable to load
    any of {libcudnn_graph.so.9...}"), which is JAX's real outcome and is said as its error; the oracle goes on to
    record the file the loader gives the framework's library. When the check returns, it is made here too, so this
    process has what it mapped (a later dlopen of the same soname gets that object), as JAX's has."""
    module = "jax_cuda%s_plugin._versions" % os.path.basename(os.path.dirname(library))[len("xla_cuda"):]
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: JAX's own calls; its stderr (cuDNN's last words) goes back to the parent
        os.close(read)
        os.dup2(write, 2)
        try:
            import importlib
            versions = importlib.import_module(module)
            say("JAXBUILD", versions.cudnn_build_version())
            say("JAXGOT", versions.cudnn_get_version())
        except Exception as err:
            say("JAXERROR", ("%s: %s" % (type(err).__name__, err)).replace("\n", " ")[:300])
        sys.stdout.flush()
        os._exit(0)
    os.close(write)
    with os.fdopen(read, errors="replace") as fh:
        last_words = fh.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        say("JAXERROR", ("killed by signal %d: %s" % (os.WTERMSIG(status), last_words.strip()))
            .replace("\n", " ")[:300])
        return
    try:  # it returns: the same calls here, so this process maps what JAX's check maps, before the library's dlopen
        import importlib
        importlib.import_module(module).cudnn_get_version()
    except Exception:  # said by the child already
        pass


DRIVER = "libcuda.so.1"  # the NVIDIA driver's own library, on every GPU host and absent here


def search_dirs(library):
    """The folders glibc searches, before its cache, for a dlopen by name from `library`: its RPATH before
    LD_LIBRARY_PATH, or its RUNPATH after it ($ORIGIN expanded; the wheels' graph libraries have RUNPATH $ORIGIN)."""
    dyn = subprocess.run(["readelf", "-d", library], capture_output=True, text=True).stdout
    m = re.search(r"\((RPATH|RUNPATH)\)\s+Library (?:rpath|runpath): \[(.*)\]", dyn)
    own = [d.replace("${ORIGIN}", os.path.dirname(library)).replace("$ORIGIN", os.path.dirname(library))
           for d in (m.group(2).split(":") if m else []) if d]
    env = [d for d in os.environ.get("LD_LIBRARY_PATH", "").replace(";", ":").split(":") if d]
    return own + env if m and m.group(1) == "RPATH" else env + own


def load_engines(names, version):
    """cuDNN 9 loads its engine sub-libraries at the first use of an engine (a convolution), not in the version
    checks: /proc/self/maps after every cudnn*VersionCheck holds libcudnn{,_graph,_ops,_cnn,_adv} only. The loader is
    libcudnn_graph.so.9's LibraryLoader (read from the 9.24 wheel's machine code): dlopen(RTLD_NOW) of
    <name>.M.m.p, <name>.M.m, <name>.M, then <name> itself, by name, so glibc searches from the graph library:
    LD_LIBRARY_PATH, then its RUNPATH ($ORIGIN, its own folder, and the nvidia wheels beside it), then the
    ld.so.cache and the system folders. Without a GPU no engine runs; what the loader finds is what the GPU gets."""
    graph = next((m for m in mapped() if os.path.basename(m).startswith("libcudnn_graph.so")), None)
    if graph is None:
        for name in names:
            say("ENGINE", name, "ERROR no libcudnn_graph mapped")
        return
    dirs = search_dirs(graph)
    major, minor, patch = version // 10000, version // 100 % 100, version % 100
    LIBDL.dlopen.restype = ctypes.c_void_p
    LIBDL.dlopen.argtypes = [ctypes.c_char_p, ctypes.c_int]
    for name in names:
        stem = name.split(".so")[0] + ".so"
        found, error = None, "?"
        rejected = None
        for each in ("%s.%d.%d.%d" % (stem, major, minor, patch), "%s.%d.%d" % (stem, major, minor),
                     "%s.%d" % (stem, major), stem):
            # glibc takes the first folder that holds the name (else its cache, by name) and stops there: a file it
            # finds but cannot load (another release's engines, whose symbols this graph library lacks) fails that
            # name, never hands the search on to a later folder. Seen on an H200
            # (git show 44f09e4:scripts/gpu_engines_probe.sh): cuDNN 9.14's engines_precompiled first on
            # LD_LIBRARY_PATH left the wheel's own unmapped too.
            held = [os.path.join(d, each) for d in dirs if os.path.exists(os.path.join(d, each))]
            path = held[0] if held else each
            handle = LIBDL.dlopen(path.encode(), 2)
            if handle:
                found = path_of(handle)
                break
            error = (LIBDL.dlerror() or b"?").decode(errors="replace")
            if DRIVER in error:  # 9.28's runtime-compiled engines need the driver's library: a GPU host has it
                found = "DRIVER " + path
                break
            if held:
                rejected = rejected or path
        if found:
            say("ENGINE", name, found)
        elif rejected:
            say("ENGINE", name, "ERROR REJECTED %s %s" % (rejected, error))
        else:
            say("ENGINE", name, "ERROR " + error)


def open_from(shim, soname):
    handle = shim.open_from_framework(soname.encode())
    if not handle:
        return None, (LIBDL.dlerror() or b"?").decode(errors="replace")
    return (handle, path_of(handle)), None


def path_of(handle):
    """The file glibc mapped for a dlopen handle."""
    lmap = ctypes.c_void_p()
    LIBDL.dlinfo(handle, 2, ctypes.byref(lmap))  # RTLD_DI_LINKMAP: struct link_map { l_addr; char *l_name; ... }
    return ctypes.cast(lmap.value + 8, ctypes.POINTER(ctypes.c_char_p))[0].decode()


def main(argv):
    kind, site, library, shim_path, soname, engines = argv[:6]
    startup = argv[6:]
    if kind == "torch":
        torch_preload(site)
        stopped = torch_stopped()
        if stopped:  # the ValueError torch raises (only a required preload raises: 2.14's best effort does not)
            say("ERROR", stopped)
            dump_maps()
            return 0
    elif kind == "jax":
        jax_preload(site, library)
    shim = ctypes.CDLL(shim_path)
    shim.open_from_framework.restype = ctypes.c_void_p
    shim.open_from_framework.argtypes = [ctypes.c_char_p]
    for name in startup:  # TensorFlow's start-up dlopens besides cuDNN, from its framework library
        opened, error = open_from(shim, name)
        say("STARTUP", name, opened[1] if opened else "ERROR " + error)
    if kind == "jax":
        jax_versions(library)
    opened, error = open_from(shim, soname)
    if kind == "paddle" and not opened:  # Paddle's last search-list entry: the CUDA folder, by full path
        opened, _ = open_from(shim, "/usr/local/cuda/lib64/" + soname)
    if not opened:
        say("ERROR", error)
        dump_maps()
        return 0
    handle, path = opened
    say("OPEN", soname, path)
    lib = ctypes.CDLL(path)
    try:
        getver = lib.cudnnGetVersion
    except AttributeError:
        getver = None
    if getver is not None:
        getver.restype = ctypes.c_size_t
        say("VERSION", getver())
    cudart = getattr(lib, "cudnnGetCudartVersion", None)
    if cudart is not None:  # the CUDA runtime this cuDNN was built for (its build must match the framework's)
        cudart.restype = ctypes.c_size_t
        say("CUDART", cudart())
    dump_maps()
    for check in CHECKS:
        try:
            fn = getattr(lib, check)
        except AttributeError:
            continue
        fn.restype = ctypes.c_int
        say("CHECK", check, fn())
        dump_maps()
    names = [n for n in engines.split(",") if n and getver is not None and n.endswith(".so.%d" % (getver() // 10000))]
    if names:
        load_engines(names, getver())
        dump_maps()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
