"""Where else a Python process takes packages from, beyond the environment the doctor runs in: user sites
(`pip install --user`, PYTHONUSERBASE), the folders `.pth` files add, and the environments whose bin/ is on PATH;
the order site.py puts them on one environment's sys.path (what torch's and JAX's own cuDNN preloads walk); and the
files of an installed wheel that are no longer the ones its RECORD lists."""
from __future__ import annotations

import os
import re
from typing import Dict, List, Optional, Tuple

_VERSION = re.compile(r"/lib(?:64)?/python(3\.\d+)t?/(?:site|dist)-packages/?$")
_SYSTEM_SITE = re.compile(r"^\s*include-system-site-packages\s*=\s*true\s*$", re.I | re.M)
_HOME = re.compile(r"^\s*home\s*=\s*(\S+)\s*$", re.M)


def user_bases(host) -> List[str]:
    """site.getuserbase(): PYTHONUSERBASE, else ~/.local (the HOME of the environment read)."""
    base = host.getenv("PYTHONUSERBASE")
    if base:
        return [base.rstrip("/")]
    home = host.getenv("HOME")
    return [home.rstrip("/") + "/.local"] if home and home.startswith("/") else []


_EXECUTABLE = re.compile(r"^\s*executable\s*=\s*(\S+)\s*$", re.M)


def active_venv(host) -> Tuple[str, str]:
    """(prefix, pyvenv.cfg's text) of the active virtual environment (VIRTUAL_ENV); ("", "") where none is."""
    prefix = (host.getenv("VIRTUAL_ENV") or "").rstrip("/")
    return (prefix, host.read_text(prefix + "/pyvenv.cfg", limit=64 * 1024) or "") if prefix else ("", "")


def user_site_owner(cfg: str) -> Optional[str]:
    """The interpreter that owns the user site a virtual environment (this pyvenv.cfg) sees when made with
    --system-site-packages: its `executable`, else `home`'s python3. pip in the venv installs there with --user but
    never uninstalls there ("outside environment"); None where it sees none."""
    if not cfg or not _SYSTEM_SITE.search(cfg):
        return None
    m = _EXECUTABLE.search(cfg)
    if m:
        return m.group(1)
    home = _HOME.search(cfg)
    return home.group(1).rstrip("/") + "/python3" if home else None


_CFG_VERSION = re.compile(r"^\s*version(?:_info)?\s*=\s*(3\.\d+)", re.M)


def owner_managed(host, cfg: str) -> bool:
    """Whether the interpreter that made this venv is externally managed (PEP 668): the EXTERNALLY-MANAGED file in
    its standard library folder, `home`'s parent's lib/python3.X (/usr/lib/python3.11 on Debian 12)."""
    home, version = _HOME.search(cfg or ""), _CFG_VERSION.search(cfg or "")
    if home is None or version is None:
        return False
    prefix = os.path.dirname(home.group(1).rstrip("/"))
    return host.exists("%s/lib/python%s/EXTERNALLY-MANAGED" % (prefix, version.group(1)))


def user_sites(host, version: Optional[str] = None) -> List[str]:
    """The user site folders (of one Python version, else every one there is)."""
    pattern = "python%s" % version if version else "python3*"
    return [d for base in user_bases(host) for d in host.glob("%s/lib/%s/site-packages" % (base, pattern))]


def path_environments(host) -> List[str]:
    """The site folders of every virtual or conda environment whose bin/ is on PATH (a second venv's python
    answers `python` before the one the doctor runs in)."""
    out: List[str] = []
    for entry in (host.getenv("PATH") or "").split(":"):
        if not entry.startswith("/") or not entry.rstrip("/").endswith("/bin"):
            continue
        prefix = entry.rstrip("/")[:-len("/bin")]
        if host.lexists(prefix + "/pyvenv.cfg") or host.is_dir(prefix + "/conda-meta"):
            out += host.glob(prefix + "/lib/python3*/site-packages")
    return out


def pth_folders(host, site: str) -> List[str]:
    """The folders the `.pth` files of one site folder add to sys.path (site.addpackage: one path a line, relative to
    the site; lines starting with `import` run code and add nothing; `#` comments)."""
    out: List[str] = []
    for name in sorted(host.listdir(site)):
        if not name.endswith(".pth"):
            continue
        for line in (host.read_text("%s/%s" % (site, name), limit=64 * 1024) or "").splitlines():
            line = line.rstrip()
            if not line or line.startswith("#") or line.startswith(("import ", "import\t")):
                continue
            folder = os.path.normpath(line if line.startswith("/") else "%s/%s" % (site.rstrip("/"), line))
            if host.is_dir(folder) and folder not in out:
                out.append(folder)
    return out


def sys_path_sites(host, site: str) -> List[str]:
    """The package folders on sys.path of the python that owns `site`, in site.py's order: a virtual environment's
    own site, then (include-system-site-packages = true) the user site of its Python and its base interpreter's
    sites; without a virtual environment the user site comes before the system site. Each site is followed by the
    folders its .pth files add."""
    m = _VERSION.search(site)
    prefix = site[:m.start()] if m else ""
    cfg = host.read_text(prefix + "/pyvenv.cfg", limit=64 * 1024) if prefix else None
    version = m.group(1) if m else None
    user = user_sites(host, version) if version else []
    if cfg is not None:
        order = [site] + (user + _base_sites(host, cfg, version) if _SYSTEM_SITE.search(cfg) else [])
    else:
        order = [s for s in user if s != site] + [site]
    out: List[str] = []
    for s in order:
        for folder in [s] + pth_folders(host, s):
            if folder not in out:
                out.append(folder)
    return out


def _base_sites(host, cfg: str, version: Optional[str]) -> List[str]:
    """The site folders of the interpreter a virtual environment was made from (pyvenv.cfg's `home = PREFIX/bin`)."""
    m = _HOME.search(cfg)
    if not m or not version:
        return []
    base = m.group(1).rstrip("/")
    base = base[:-len("/bin")] if base.endswith("/bin") else base
    found = ["%s/lib/python%s/site-packages" % (base, version), "%s/local/lib/python%s/dist-packages" % (base, version),
             "%s/lib/python3/dist-packages" % base]
    return [d for d in found if host.is_dir(d)]


def altered_files(host, site: str, dist_dir: str, under: str = "nvidia/cudnn/lib/") -> List[str]:
    """The library files of an installed wheel whose size is not the one its RECORD lists (`path,sha256=...,SIZE`):
    another release's file copied over it. Sizes only: hashing a 500 MB engine library on every run costs seconds,
    and two releases' builds of one library never have one size. A file another installed cuDNN wheel of the site
    lists at its size is that wheel's (NVIDIA's wheels for two CUDAs write the same files): not a damaged wheel. A
    missing file is said elsewhere (the copy's sub-libraries)."""
    others: Dict[str, set] = {}
    for entry in host.listdir(site):
        if entry != dist_dir and entry.startswith("nvidia_cudnn_cu") and entry.endswith(".dist-info"):
            for path, size in _record(host, site, entry, under):
                others.setdefault(path, set()).add(size)
    out: List[str] = []
    for path, size in _record(host, site, dist_dir, under):
        st = host.stat("%s/%s" % (site, path))
        if st is not None and st.st_size != size and st.st_size not in others.get(path, ()):
            out.append(path[len(under):])
    return out


def _record(host, site: str, dist_dir: str, under: str) -> List[Tuple[str, int]]:
    out = []
    for line in (host.read_text("%s/%s/RECORD" % (site, dist_dir), limit=1 << 20) or "").splitlines():
        parts = line.rsplit(",", 2)
        if len(parts) == 3 and parts[0].startswith(under) and parts[2].strip().isdigit():
            out.append((parts[0], int(parts[2])))
    return out
