"""Which CUDA and cuDNN each framework release was built for (compat/frameworks.toml)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from ..versions import dl4j_key, mm_text, ver, version_of
from .tables import Domain


class FrameworkKnowledge(Domain):
    """PyTorch, TensorFlow, JAX and DL4J build tables."""

    def framework_rows(self, name: str) -> List[Dict[str, Any]]:
        """Rows of a framework table with status/source filled in: pytorch, pytorch_arch, tensorflow_linux,
        tensorflow_windows, jax, dl4j."""
        return self.sourced_rows("frameworks", name)

    def framework_table(self, name: str) -> Dict[str, Any]:
        return self.table("frameworks", name)

    def framework_source(self, name: str) -> str:
        """The URL a framework table was transcribed from ("" when it names none)."""
        return str(self.framework_table(name).get("source", ""))

    def tensorflow_pip_wheels_from(self) -> Optional[Version]:
        """The first TensorFlow release whose Linux `[and-cuda]` extra brings CUDA and cuDNN as pip wheels."""
        return ver(self.framework_table("tensorflow_linux").get("pip_wheels_from"))

    def tensorflow_last_windows_gpu(self) -> Optional[Version]:
        """The last TensorFlow release with GPU support on native Windows."""
        return ver(self.framework_table("tensorflow_windows").get("last_native_gpu"))

    def tensorflow_min_cc(self) -> Optional[str]:
        """The lowest compute capability TensorFlow's pip wheels run on, e.g. "3.5"."""
        floor = self.framework_table("tensorflow_pip").get("min_cc")
        return str(floor) if floor else None

    def version_check_rule(self, framework: str, library: str) -> Optional[Dict[str, Any]]:
        """How `framework`'s start-up check judges the `library` it loaded ([version_checks]): rule and source."""
        rows = self.table("frameworks", "version_checks").get("rows", [])
        return next((r for r in rows if r["framework"] == framework and r["library"] == library), None)

    def pytorch_arch(self, torch_version: str, cuda: str) -> Optional[Dict[str, Any]]:
        v = ver(str(torch_version).split("+")[0])
        want = mm_text(cuda)
        for row in self.framework_rows("pytorch_arch"):
            try:
                spec = SpecifierSet(row["torch"])
            except InvalidSpecifier:
                continue
            if v is not None and v in spec and row["cuda"] == want:
                return row
        return None

    def tensorflow_row(self, version: str, platform: str = "linux") -> Optional[Dict[str, Any]]:
        """The tested-build row of a TensorFlow release (the table names the first release of each series)."""
        v = ver(version)
        if v is None:
            return None
        table = "tensorflow_windows" if platform == "windows" else "tensorflow_linux"
        rows = sorted(self.framework_rows(table), key=lambda r: version_of(r["tensorflow"]))
        series = version_of(mm_text(version) or version)
        for row in rows:
            rv = version_of(row["tensorflow"])
            if rv.release[0] == v.release[0] and rv >= series:
                return row
        return None

    def torch_rows(self, version: str) -> List[Dict[str, Any]]:
        """The CUDA variants of a PyTorch release (major.minor) with the cuDNN each pins."""
        minor = mm_text(version.split("+")[0])
        return [r for r in self.framework_rows("pytorch") if r["torch"] == minor]

    def torch_default_cuda(self, version: str) -> Optional[str]:
        """The CUDA of a PyTorch release's default build (its `stable` row: torch 1.4 is CUDA 10.1's), or None."""
        return next((str(r["cuda"]) for r in self.torch_rows(version) if r.get("channel") == "stable"), None)

    def dl4j_releases(self) -> List[str]:
        """DL4J releases compat knows, newest first (see dl4j_key for how they order)."""
        return sorted(dict.fromkeys(r["dl4j"] for r in self.framework_rows("dl4j")), key=dl4j_key, reverse=True)
