"""Python environments: NVIDIA wheels and GPU frameworks, read from package metadata and files, never imported."""
from __future__ import annotations

import re
from typing import Dict, List, Optional

from ..model import FrameworkFacts, PythonEnvFacts
from ..versions import canonical_name, requirements
from ..readers.package_meta import dist_info_name, parse_conda_record, parse_metadata, parse_tf_build_info
from .framework_cudnn import resolve_frameworks  # noqa: F401  (run by probes/__init__ after the loader)
from .python_places import (active_venv, altered_files, owner_managed, path_environments, pth_folders,
                            user_site_owner, user_sites)

# Cheap places other interpreters keep packages (virtual envs under /opt, distro pythons, conda).
SITE_GLOBS = (
    "/usr/lib/python3/dist-packages",
    "/usr/lib/python3*/site-packages",
    "/usr/local/lib/python3*/dist-packages",
    "/usr/local/lib/python3*/site-packages",
    "/opt/*/.venv/lib/python3*/site-packages",
    "/opt/*/venv/lib/python3*/site-packages",
    "/opt/*/lib/python3*/site-packages",
    "/opt/conda/envs/*/lib/python3*/site-packages",
    "/root/.local/lib/python3*/site-packages",
)
CONDA_GLOBS = ("/opt/conda", "/opt/conda/envs/*", "/opt/miniconda3", "/opt/miniconda3/envs/*",
               "/root/miniconda3", "/root/miniconda3/envs/*", "/root/anaconda3")

# Distributions that decide which CUDA/cuDNN a program needs.
FRAMEWORKS = re.compile(
    r"^(torch|tensorflow(-gpu|-cpu)?|tf-nightly|jaxlib|jax-cuda\d+-(plugin|pjrt)|cupy(-cuda\d+x?)?|"
    r"onnxruntime(-gpu)?|paddlepaddle(-gpu)?|ctranslate2|tensorrt(-cu\d+)?)$")


def python_path_entries(host) -> List[str]:
    """The absolute PYTHONPATH entries: on the sys.path of every python started here."""
    return [e for e in (host.getenv("PYTHONPATH") or "").split(":") if e.startswith("/")]


def site_dirs(ctx) -> List[str]:
    host = ctx.host
    found: List[str] = list(host.python_site_dirs())
    for var in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        value = host.getenv(var)
        if value:
            found.extend(host.glob(value.rstrip("/") + "/lib/python3*/site-packages"))
    # PYTHONPATH entries are on sys.path too: `pip install --target DIR` puts wheels (NVIDIA's among them) there.
    found.extend(python_path_entries(host))
    # A second environment on PATH and the user sites (`pip install --user`) are on some python's sys.path too.
    found.extend(path_environments(host) + user_sites(host))
    for pattern in SITE_GLOBS:
        found.extend(host.glob(pattern))
        ctx.searched("python", pattern)
    out, seen = [], set()
    for path in found + [f for site in found if host.is_dir(site) for f in pth_folders(host, site)]:
        real, _ = host.realpath(path)  # the folders .pth files add: packages installed there import as any other
        if real not in seen and host.is_dir(path):
            seen.add(real)
            out.append(path)
    return out


def _metadata(ctx, site: str, dist_dir: str) -> Dict[str, List[str]]:
    return parse_metadata(ctx.host.read_text("%s/%s/METADATA" % (site, dist_dir), limit=256 * 1024) or "")


def probe(ctx) -> None:
    host = ctx.host
    env = PythonEnvFacts()
    ctx.facts.python = env
    env.site_dirs = site_dirs(ctx)
    users = set(user_sites(host))
    env.user_sites = [site for site in env.site_dirs if site in users]  # a fix installs there with --user
    python_path = set(python_path_entries(host))
    from_pth: Optional[set] = None  # read when the first NVIDIA wheel outside PYTHONPATH is found
    for site in env.site_dirs:
        for entry in host.listdir(site):
            parsed = dist_info_name(entry)
            if not parsed:
                continue
            name, version = parsed
            if name.startswith("nvidia-"):
                wheel = {"name": name, "version": version, "location": site}
                if site in python_path:  # on every python's sys.path: any environment's pip sees it installed
                    wheel["via"] = "PYTHONPATH"
                else:
                    # a folder only a .pth file puts on sys.path: pip counts its wheels installed there too
                    from_pth = from_pth if from_pth is not None else {
                        f for s in env.site_dirs for f in pth_folders(host, s)} - python_path
                    if site in from_pth:
                        wheel["via"] = ".pth"
                altered = altered_files(host, site, entry) if name.startswith("nvidia-cudnn-") else []
                if altered:  # another release's file copied over the wheel's: pip still counts it installed
                    wheel["altered"] = ",".join(altered)
                env.nvidia_wheels.append(wheel)
            elif FRAMEWORKS.match(name):
                env.frameworks.append(_framework(ctx, site, entry, name, version))
        found = python_of(host, site)
        if found is not None:
            env.pythons.append(found)
    prefix, cfg = active_venv(host)
    env.package_tool = package_tool(host, prefix, cfg)
    env.user_site_owner = user_site_owner(cfg) if env.user_sites else None
    env.user_site_owner_managed = bool(env.user_site_owner) and owner_managed(host, cfg)
    _conda(ctx, env)


_SITE = re.compile(r"^(.*)/lib(?:64)?/python(3\.\d+)t?/(?:site|dist)-packages/?$")
_CFG_VERSION = re.compile(r"^\s*(?:version_info|version)\s*=\s*(3\.\d+)", re.M)


_UV_MADE = re.compile(r"^\s*uv\s*=", re.M)  # pyvenv.cfg's `uv = 0.5.1`: `uv venv` made it


def package_tool(host, prefix: str, cfg: str) -> Optional[str]:
    """"uv pip" where the active virtual environment (its prefix and pyvenv.cfg) was made by uv and holds no pip
    (`uv venv` installs none, and `pip` on PATH is then another Python's); None: its own pip."""
    if not prefix or not _UV_MADE.search(cfg):
        return None
    sites = host.glob(prefix + "/lib/python3*/site-packages")
    has_pip = any((dist_info_name(e) or ("",))[0] == "pip" for s in sites for e in host.listdir(s))
    return None if has_pip else "uv pip"


def python_of(host, site: str) -> Optional[Dict[str, str]]:
    """The Python an environment's site folder belongs to: its pyvenv.cfg's version, else the folder's name
    (lib/python3.X), else the interpreter beside it (bin/python3 -> python3.X); None where nothing says."""
    m = _SITE.match(site)
    root = m.group(1) if m else site.rsplit("/", 3)[0] if site.endswith("/dist-packages") else ""
    if root:
        cfg = host.read_text(root + "/pyvenv.cfg", limit=64 * 1024) or ""
        found = _CFG_VERSION.search(cfg)
        if found:
            return {"site": site, "version": found.group(1), "source": root + "/pyvenv.cfg"}
    if m:
        return {"site": site, "version": m.group(2), "source": site}
    if root:  # Debian's /usr/lib/python3/dist-packages serves the python3 beside it
        real, _ = host.realpath(root + "/bin/python3")
        named = re.search(r"/python(3\.\d+)$", real)
        if named:
            return {"site": site, "version": named.group(1), "source": root + "/bin/python3 -> " + real}
    return None


def _framework(ctx, site: str, dist_dir: str, name: str, version: str) -> FrameworkFacts:
    meta = _metadata(ctx, site, dist_dir)
    fw = FrameworkFacts(name=name, version=version, location=site, source="%s/%s/METADATA" % (site, dist_dir))
    fw.requires = _nvidia_requirements(meta)
    fw.extras = meta.get("Provides-Extra", [])
    fw.requires_source = fw.source
    local = version.split("+", 1)[1] if "+" in version else ""
    host = ctx.host
    if name == "torch":
        text = host.read_text(site + "/torch/version.py") or ""
        m = re.search(r"^cuda\s*(?::\s*\S+)?\s*=\s*(?:'([^']*)'|\"([^\"]*)\"|None)", text, re.M)
        if m:
            fw.cuda_version = m.group(1) or m.group(2) or None
            fw.cuda_build = fw.cuda_version is not None
            fw.source = site + "/torch/version.py"
            build = ctx.knowledge.framework_build("torch", version) if fw.cuda_build else None
            if build and build.get("cudnn"):  # compiled against, not pinned (compat/framework_features.toml)
                fw.cudnn_version = str(build["cudnn"])
        elif local == "cpu":
            fw.cuda_build = False
        fw.consumer_library = _first(ctx, site, ["torch/lib/libtorch_cuda.so"])
    elif name.startswith("tensorflow") or name == "tf-nightly":
        text = host.read_text(site + "/tensorflow/python/platform/build_info.py") or ""
        info = parse_tf_build_info(text)
        for key in ("cuda_version", "cudnn_version"):
            if info.get(key):
                setattr(fw, key, str(info[key]))
        flag = info.get("is_cuda_build")
        if isinstance(flag, bool):
            fw.cuda_build = flag
        if info:
            fw.source = site + "/tensorflow/python/platform/build_info.py"
        fw.consumer_library = _first(ctx, site, ["tensorflow/libtensorflow_framework.so.2",
                                                 "tensorflow/libtensorflow_cc.so.2"])
    elif name.startswith("jax-cuda") or name == "jaxlib":
        m = re.search(r"cuda(\d+)", name + local)
        if m:
            fw.cuda_version = m.group(1)
            fw.cuda_build = True
        elif name == "jaxlib":
            fw.cuda_build = False  # jaxlib without a +cuda tag is the CPU core; the jax-cudaNN-* wheels add the GPU
            return fw
        if name.endswith("-pjrt"):
            # The PJRT wheel holds the library that dlopens cuDNN; the plugin wheel beside it holds the cuDNN pin.
            plugin = [e for e in host.listdir(site) if (dist_info_name(e) or ("", ""))[0] == name[:-5] + "-plugin"]
            if plugin:
                fw.requires_source = "%s/%s/METADATA" % (site, plugin[0])
                extra = _metadata(ctx, site, plugin[0])
                fw.requires, fw.extras = _nvidia_requirements(extra), extra.get("Provides-Extra", [])
        m = re.search(r"cudnn(\d+)", local)  # old jaxlib local tags: +cuda11.cudnn86
        if m:
            digits = m.group(1)
            fw.cudnn_version = "%s.%s" % (digits[0], digits[1:])
        plugin = ctx.host.glob(site + "/jax_plugins/xla_cuda*/xla_cuda_plugin.so")
        fw.consumer_library = plugin[0] if plugin else None
    elif name.startswith("cupy"):
        m = re.search(r"cuda(\d+)x", name)
        fw.cuda_version = m.group(1) if m else None
        fw.cuda_build = True
        # CuPy <= 13 links cuDNN from this module (DT_NEEDED, no RPATH); CuPy 14 has no cuDNN module at all.
        module = host.glob(site + "/cupy_backends/cuda/libs/cudnn.*.so")
        fw.consumer_library = module[0] if module else None
    elif name.startswith("onnxruntime"):
        fw.cuda_build = "gpu" in name
        fw.consumer_library = _first(ctx, site, ["onnxruntime/capi/libonnxruntime_providers_cuda.so"])
    elif name.startswith("paddlepaddle"):
        fw.cuda_build = "gpu" in name
        text = host.read_text(site + "/paddle/version/__init__.py") or ""
        for key, attr in (("cuda_version", "cuda_version"), ("cudnn_version", "cudnn_version")):
            m = re.search(r"^%s\s*=\s*['\"]([^'\"]*)['\"]" % key, text, re.M)
            if m and m.group(1) not in ("", "False"):
                setattr(fw, attr, m.group(1))
        if fw.cuda_build:  # the library whose dlopen of cuDNN searches with its RUNPATH ($ORIGIN)
            fw.consumer_library = _first(ctx, site, ["paddle/libs/libphi.so"])
    return fw


def _nvidia_requirements(meta: Dict[str, List[str]]) -> List[str]:
    return [text for text, req in requirements(meta.get("Requires-Dist", []))
            if canonical_name(req.name).startswith("nvidia-")]


def _first(ctx, site: str, rels: List[str]) -> Optional[str]:
    for rel in rels:
        path = "%s/%s" % (site, rel)
        if ctx.host.lexists(path):
            return path
    return None


def _conda(ctx, env: PythonEnvFacts) -> None:
    host = ctx.host
    prefixes = []
    if host.getenv("CONDA_PREFIX"):
        prefixes.append(host.getenv("CONDA_PREFIX"))
    for pattern in CONDA_GLOBS:
        prefixes.extend(host.glob(pattern))
    for prefix in dict.fromkeys(prefixes):
        if not host.is_dir(prefix + "/conda-meta"):
            continue
        env.conda_prefixes.append(prefix)
        for entry in host.listdir(prefix + "/conda-meta"):
            if not entry.endswith(".json"):
                continue
            if not re.match(r"^(cudnn|libcudnn|cuda-|cudatoolkit|pytorch|jaxlib|tensorflow|tensorrt|libcublas)", entry):
                continue
            record = parse_conda_record(host.read_text("%s/conda-meta/%s" % (prefix, entry), limit=4 << 20) or "")
            if record is None:
                continue  # a damaged record must not hide the rest of the environment
            env.conda_packages.append({"name": record["name"], "version": record["version"],
                                       "build": record["build"], "prefix": prefix,
                                       "cudnn_depends": record["cudnn_depends"]})
