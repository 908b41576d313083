"""The derived knowledge (compat/derived.json, or `cudnn-doctor update`'s newer copy): releases NVIDIA and PyPI
list, what each cuDNN wheel was built with, framework pins; how current the knowledge is."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from packaging.version import Version

from ..results import KnowledgeSummary
from ..versions import major_of, release3, ver
from .tables import Domain


class DerivedKnowledge(Domain):
    """Questions answered from the derived knowledge alone."""

    def derived(self) -> Dict[str, Any]:
        return self.data.get("derived") or {}

    def knowledge_date(self) -> str:
        """When the sources behind the knowledge were read (YYYY-MM-DD); '' when unknown."""
        return str(self.derived().get("date", ""))

    def knowledge_origin(self) -> str:
        """'shipped' (the copy in the package) or the path of the copy `cudnn-doctor update` wrote."""
        return str(self.derived().get("origin", "shipped"))

    def knowledge_sources(self) -> List[str]:
        return [str(s) for s in self.derived().get("sources", [])]

    def derived_cudnn_releases(self) -> List[Dict[str, Any]]:
        return list(self.derived().get("cudnn_releases", []))

    def cudnn_release_cuda_majors(self, release: str) -> List[int]:
        """The CUDA majors a cuDNN release was built for, as PyPI and NVIDIA's manifests list them."""
        return list(self.once("cudnn_release_cuda_majors", self._cuda_majors_by_release).get(release3(release), []))

    def _cuda_majors_by_release(self) -> Dict[Optional[Version], List[int]]:
        by_release: Dict[Optional[Version], List[int]] = {}
        for entry in self.derived_cudnn_releases():  # the first entry of a release is the one that counts
            by_release.setdefault(release3(entry["release"]), sorted(int(m) for m in entry.get("cuda_majors", {})))
        return by_release

    def newest_cudnn_release(self, cuda_major: Optional[Any] = None) -> Optional[str]:
        """The newest cuDNN release the knowledge knows (built for `cuda_major` when given)."""
        want = major_of(cuda_major) if cuda_major is not None else None
        found = [r for r in (release3(e["release"]) for e in self.derived_cudnn_releases()
                             if want is None or str(want) in e.get("cuda_majors", {})) if r is not None]
        return str(max(found)) if found else None

    def newest_cuda_release(self) -> Optional[str]:
        """The newest CUDA major.minor the knowledge knows (runtime wheels and the toolkit table)."""
        found = [v for v in (ver(r["cuda"]) for r in self.derived().get("cuda_releases", [])) if v is not None]
        return "%d.%d" % max(found).release[:2] if found else None

    def derived_build_rows(self) -> List[Dict[str, Any]]:
        return list(self.derived().get("cudnn_builds", []))

    def derived_toolkit_rows(self) -> List[Dict[str, Any]]:
        return list(self.derived().get("toolkit_driver", []))

    def framework_pins(self, framework: Optional[str] = None) -> List[Dict[str, Any]]:
        """What each framework release's Linux wheel pins (cuDNN wheel, CUDA runtime), from its Requires-Dist."""
        return [dict(r) for r in self.derived().get("frameworks", [])
                if framework is None or r.get("framework") == framework]

    def newest_framework_release(self, framework: str) -> Optional[str]:
        found = [v for v in (ver(r["version"]) for r in self.framework_pins(framework)) if v is not None]
        return str(max(found)) if found else None

    def newest_known_driver(self) -> Optional[str]:
        """The newest Linux driver the knowledge names (the toolkit table and NVIDIA's manifests)."""
        rows = list(self.data.get("cuda_driver", {}).get("toolkit_driver", {}).get("rows", []))
        texts = [r.get("linux") for r in rows] + [r.get("driver_linux") for r in self.derived_toolkit_rows()]
        found = [v for v in (ver(t) for t in texts + [r.get("branch") for r in rows]) if v is not None]
        return str(max(found)) if found else None

    def knowledge_summary(self) -> KnowledgeSummary:
        """How current the knowledge is, for check's -v and --json."""
        return KnowledgeSummary(date=self.knowledge_date(), origin=self.knowledge_origin(),
                                newest_cudnn=self.newest_cudnn_release(), newest_cuda=self.newest_cuda_release())

    def is_newer_than_knowledge(self, kind: str, version: Optional[str]) -> bool:
        """Whether a version seen on a machine is newer than anything the knowledge knows of its kind:
        'cudnn' (a cuDNN release), 'cuda' (a CUDA major.minor), or a framework name."""
        v = release3(version) if kind == "cudnn" else ver(version)
        if v is None:
            return False
        if kind == "cudnn":
            newest = self.newest_cudnn_release()
        elif kind == "cuda":
            newest = self.newest_cuda_release()
            v = Version("%d.%d" % (v.release + (0,))[:2])
        else:
            newest = self.newest_framework_release(kind)
        return newest is not None and v > Version(newest)
