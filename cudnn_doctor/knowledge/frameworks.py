"""Which CUDA and cuDNN each framework release was built for (compat/frameworks.toml)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from ..versions import dl4j_key, mm_text, ver
from .tables import Tables, row_source


class FrameworkKnowledge(Tables):
    """PyTorch, TensorFlow, JAX and DL4J build tables."""

    def framework_rows(self, name: str) -> List[Dict[str, Any]]:
        """Rows of a framework table with status/source filled in: pytorch, pytorch_arch, tensorflow_linux,
        tensorflow_windows, jax, dl4j."""
        table = self.table("frameworks", name)
        out = []
        for row in table.get("rows", []):
            status, source = row_source(table, row)
            out.append(dict(row, status=status, source=source))
        return out

    def framework_table(self, name: str) -> Dict[str, Any]:
        return self.table("frameworks", name)

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

    def dl4j_releases(self) -> List[str]:
        """DL4J releases compat knows, newest first (see dl4j_key for how they order)."""
        return sorted(dict.fromkeys(r["dl4j"] for r in self.framework_rows("dl4j")), key=dl4j_key, reverse=True)
