"""Library names (sonames, Windows DLLs) and the releases that ship them (compat/sonames.toml)."""
from __future__ import annotations

import functools
import json
import re
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ..versions import ver
from .driver import DriverKnowledge
from .load import compat_dir
from .tables import Domain, Tables

_SONAME = re.compile(r"^(lib[\w+-]*?)(?:\.alt)?\.so(?:\.(\d+(?:\.\d+)*))?$")
_DLL = re.compile(r"^([a-z][\w-]*?)64_(\d+)(?:_\d+)?\.dll$", re.I)


class Shipped(NamedTuple):
    """The releases that ship one library name: CUDA `low` to `high` (equal when exact), or a cuDNN major."""

    name: str
    product: str  # "CUDA" or "cuDNN"
    low: str
    high: str
    source: str

    @property
    def label(self) -> str:
        span = self.low if self.low == self.high else "%s to %s" % (self.low, self.high)
        return "%s %s" % (self.product, span)


def split_library(name: str) -> Optional[Tuple[str, str]]:
    """(stem, soname version) of a Linux soname or Windows DLL name: ('libcudart', '11.0') for cudart64_110.dll."""
    m = _SONAME.match(name)
    if m:
        return m.group(1), m.group(2) or ""
    m = _DLL.match(name)
    if not m:
        return None
    stem, n = "lib" + m.group(1), int(m.group(2))
    if stem.startswith("libcudnn"):
        return stem, str(n)
    return stem, ("%d.%d" % divmod(n, 10) if n >= 80 else str(n))


def _released(text: str) -> Version:
    """A release as a Version; one that does not parse sorts first."""
    return ver(text) or Version("0")


class SonameKnowledge(Domain):
    """Which CUDA or cuDNN release ships a library name, and the PyPI project that carries it."""

    def __init__(self, tables: Tables, drivers: DriverKnowledge) -> None:
        super().__init__(tables)
        self.drivers = drivers

    def _cuda_span(self, spec: str) -> List[str]:
        wanted = SpecifierSet(spec)
        return [r for r in self.drivers.cuda_releases() if _released(r) in wanted]

    def shipped_by(self, name: str) -> Optional[Shipped]:
        """The releases that ship `name` ('libcublas.so.9.0' -> CUDA 9.0; 'cudart64_110.dll' -> CUDA 11.0 to
        11.8; 'cudnn64_7.dll' -> cuDNN 7); None for a name no table decides."""
        parts = split_library(name)
        if parts is None:
            return None
        stem, version = parts
        if stem.startswith("libcudnn"):
            return self._cudnn(name, stem, version)
        table = self.table("sonames", "toolkit_sonames")
        if stem.endswith("64") or not version:
            return None
        exact = re.match(r"^(\d+)\.(\d+)$", version)
        if exact and (stem in table.get("exact_always", []) or _released(version) < _released(table.get("exact_before", "0"))):
            if version in self.drivers.cuda_releases():
                return Shipped(name, "CUDA", version, version, table["source"])
            if version in table.get("older_releases", []):
                return Shipped(name, "CUDA", version, version, table["older_source"])
            return None
        if name.lower().endswith(".dll") and exact and int(exact.group(1)) >= 12:
            version = exact.group(1)  # nvrtc64_120_0.dll serves every CUDA 12.x, as libnvrtc.so.12 does
        row = next((r for r in table.get("rows", []) if r["stem"] == stem and r["soname"] == version), None)
        span = self._cuda_span(row["cuda"]) if row else []
        return Shipped(name, "CUDA", span[0], span[-1], table["source"]) if span else None

    def _cudnn(self, name: str, stem: str, version: str) -> Optional[Shipped]:
        major = version.split(".")[0]
        if not major.isdigit():
            return None
        table = self.table("sonames", "cudnn_sonames")
        known = [r for r in table.get("rows", []) if r["stem"] == stem != "libcudnn"]  # every major has libcudnn
        if known and all(str(r["major"]) != major for r in known):
            return None  # libcudnn_ops_infer.so.9 was never shipped
        return Shipped(name, "cuDNN", major, major, table["source"])

    def symbol_owner(self, symbol: str) -> Optional[Dict[str, Any]]:
        """The row of the NVIDIA library whose API `symbol` belongs to, by its prefix (ncclCommRegister: NCCL's), with
        the table's source; None for any other symbol."""
        table = self.table("sonames", "symbol_owners")
        rows = sorted(table.get("rows", []), key=lambda r: -len(r["prefix"]))
        row = next((r for r in rows if symbol.startswith(r["prefix"]) and symbol[len(r["prefix"]):][:1].isupper()),
                   None)
        return dict(row, source=table["source"]) if row is not None else None

    def symbol_since(self, symbol: str) -> Optional[Dict[str, str]]:
        """The first release of an NVIDIA library that defines `symbol`: {"release": "12.0", "named": "CUDA", "product",
        "stem", "source"}, read from the real wheels' libraries (compat/symbols_since.json, scripts/
        record_symbols_since.py), else from NVIDIA's documents for older releases (sonames.toml
        [symbols_since_documented]); None where neither dates it."""
        documented = self.table("sonames", "symbols_since_documented")
        row = next((r for r in documented.get("rows", []) if r["symbol"] == symbol), None)
        if row is not None:
            return {"release": row["since"], "named": row["named"], "product": row["product"], "stem": row["stem"],
                    "source": row["source"]}
        recorded = _recorded_symbols()
        for stem, library in recorded.get("libraries", {}).items():
            seen = library["since"].get(symbol)
            if seen is not None:
                return {"release": seen["release"], "named": library["named"], "product": library["product"],
                        "stem": stem, "source": "%s defines it, and %s, the release before it that PyPI holds, does "
                        "not (its .dynsym; %s)" % (seen["wheel"], _previous(library["read"], seen["wheel"]),
                                                   recorded["_recorded"]["by"])}
        return None

    def optional_library(self, stem: str) -> Optional[Dict[str, Any]]:
        """The row of a library a framework opens only for an optional feature (TensorRT's libnvinfer for
        TensorFlow's TF-TRT), with the table's source; None for any other."""
        table = self.table("sonames", "optional_libraries")
        row = next((r for r in table.get("rows", []) if r["stem"] == stem), None)
        return dict(row, source=table["source"]) if row is not None else None

    def pip_project(self, stem: str, cuda_major: int) -> Optional[str]:
        """The PyPI project that ships a toolkit library for a CUDA major ('nvidia-cublas-cu11'); None if none."""
        table = self.table("sonames", "pip_projects")
        base = table.get("projects", {}).get(stem)
        if base is None or cuda_major < 11:
            return None
        return "%s-cu%d" % (base, cuda_major) if cuda_major <= int(table.get("suffixed_until", 12)) else base


def cuda_library_projects(compat: Any, cuda_major: int) -> List[str]:
    """The PyPI projects of a CUDA major's toolkit libraries (cuBLAS, cudart, cuFFT, ... : compat's pip_projects)."""
    stems = compat.table("sonames", "pip_projects").get("projects", {})
    return sorted({p for p in (compat.pip_project(stem, cuda_major) for stem in stems) if p})


@functools.lru_cache(maxsize=1)
def _recorded_symbols() -> Dict[str, Any]:
    """compat/symbols_since.json, read the first time an undefined symbol is asked about (explain only)."""
    path = compat_dir() / "symbols_since.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def _previous(read: List[str], wheel: str) -> str:
    at = read.index(wheel) if wheel in read else 0
    return read[at - 1] if at > 0 else "none"
