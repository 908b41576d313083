"""Which extras, functions and builds each framework release offers (compat/framework_features.toml)."""
from __future__ import annotations

from typing import Any, Dict, Optional

from packaging.specifiers import SpecifierSet

from ..versions import ver
from .tables import Tables


class FrameworkFeatureKnowledge(Tables):
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
