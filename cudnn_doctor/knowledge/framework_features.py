"""Which extras, functions and builds each framework release offers (compat/framework_features.toml)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from packaging.specifiers import SpecifierSet

from ..versions import ver
from .tables import Domain


class FrameworkFeatureKnowledge(Domain):
    """Questions a fix asks before naming a framework's own remedy: does this release have it?"""

    def framework_feature(self, framework: str, feature: str, version: str) -> Optional[bool]:
        """Whether `version` of `framework` (a table name: onnxruntime_gpu) has `feature` (pip_extras, preload_dlls);
        None when compat does not know the feature or the version does not parse."""
        since = ver(self.table("framework_features", framework).get("%s_since" % feature))
        have = ver(str(version).split("+")[0])
        if since is None or have is None:
            return None
        return have >= since

    def framework_build(self, framework: str, version: str) -> Optional[Dict[str, Any]]:
        """The row naming the CUDA and cuDNN a release's default build uses, with the table's source."""
        table = self.table("framework_features", framework)
        have = ver(str(version).split("+")[0])
        for row in table.get("rows", []):
            if have is not None and SpecifierSet(row["releases"]).contains(have, prereleases=True):
                return dict(row, source=table.get("source"))
        return None

    def framework_builds_by_release(self, framework: str) -> List[Dict[str, Any]]:
        """Every row of a framework's default builds (releases, cuda, cudnn_major, cudnn_wheel, cudnn_pin), oldest
        first as compat writes them."""
        return list(self.table("framework_features", framework).get("rows", []))

    def framework_features_source(self, framework: str) -> Optional[str]:
        """Where compat read a framework's features (its release pages), for the [source] a fix cites."""
        return self.table("framework_features", framework).get("source")

    def framework_extras(self, framework: str) -> List[str]:
        """The pip extras a framework's newer releases offer (onnxruntime-gpu: cuda, cudnn)."""
        return list(self.table("framework_features", framework).get("pip_extras", []))

    def framework_feature_since(self, framework: str, feature: str) -> Optional[str]:
        """The first release of `framework` that has `feature` (preload_dlls), as compat writes it; None if unknown."""
        return self.table("framework_features", framework).get("%s_since" % feature)

    def framework_newest_cudnn_major(self, framework: str) -> int:
        """The cuDNN major the framework's newest default builds use."""
        return max(int(r["cudnn_major"]) for r in self.table("framework_features", framework)["rows"])

    def extension_source(self, module: str) -> str:
        """What pip installs a PyTorch extension from: its own source where PyPI does not serve it (detectron2's
        git repository), else its name."""
        rows = self.table("framework_features", "extension_sources").get("rows", [])
        return next((r["install"] for r in rows if r["module"] == module), module)

    def cuda_wheel(self, soname: str, cuda_major: str) -> Optional[Dict[str, Any]]:
        """The pip ``wheel`` and site-packages ``folder`` of a CUDA library named by its soname (or its stem), for a
        CUDA major, matched by prefix (libcublasLt.so.12: the cuBLAS wheel); None for a library compat does not
        list. From `unsuffixed_from` on the wheel's name has no -cuNN (nvidia-cuda-runtime for CUDA 13)."""
        table = self.table("framework_features", "cuda_wheels")
        row = next((r for r in table.get("rows", []) if soname.split(".so")[0].startswith(r["soname"])), None)
        if row is None:
            return None
        plain = cuda_major.isdigit() and int(cuda_major) >= int(table.get("unsuffixed_from", 10 ** 6))
        return dict(row, wheel=row["wheel"].replace("-cu{major}", "") if plain else row["wheel"].format(major=cuda_major))
