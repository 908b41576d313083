"""cuDNN releases and their builds: which CUDA, driver and GPUs each supports (compat/cudnn.toml)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from packaging.version import Version

from ..versions import cuda_label, major_of, mm_text, release3, release3_of, ver, version_of
from .derived import DerivedKnowledge
from .driver import DriverKnowledge
from .gpu import CcFloor
from .known_bad import KnownBadKnowledge
from .tables import CONFIRMED, Domain, Tables, row_source


@dataclass
class CudnnBuild:
    """One build variant of a range of cuDNN releases, as a support matrix lists it."""

    first: str
    last: str
    variant: str  # "cuda10.2", "cuda12"
    cuda: List[str]
    driver_linux: Optional[str] = None
    driver_windows: Optional[str] = None
    driver_branch: Optional[str] = None
    min_cc: Optional[CcFloor] = None
    status: str = CONFIRMED
    source: str = ""
    note: str = ""
    cuda_update: str = ""
    static_link: List[str] = field(default_factory=list)
    built_with: str = ""  # derived rows: the CUDA the library reports it was built with

    def covers(self, release: Any) -> bool:
        r = release3(release)
        return r is not None and release3_of(self.first) <= r <= release3_of(self.last)

    @property
    def cuda_major(self) -> Optional[int]:
        return major_of(self.cuda[0]) if self.cuda else None

    @property
    def family(self) -> bool:
        """One build for every minor of a CUDA major ('cuda12'), not one per minor ('cuda10.2')."""
        return "." not in self.variant

    def releases_text(self) -> str:
        return self.first if self.first == self.last else "%s-%s" % (self.first, self.last)

    def cuda_text(self) -> str:
        if len(self.cuda) > 2:
            return "%s-%s" % (self.cuda[0], self.cuda[-1])
        return ", ".join(self.cuda)

    def driver_text(self, platform: str = "linux") -> str:
        exact = self.driver_windows if platform == "windows" else self.driver_linux
        if exact and exact != "N/A":
            return ">= %s" % exact
        if exact == "N/A":
            return "N/A"
        if self.driver_branch:
            return "r%s" % self.driver_branch
        return "see CUDA %s" % (self.cuda[0] if self.cuda else "?")


class CudnnKnowledge(Domain):
    """cuDNN releases, their build variants and what each needs."""

    def __init__(self, tables: Tables, drivers: DriverKnowledge, problems: KnownBadKnowledge,
                 published: DerivedKnowledge) -> None:
        super().__init__(tables)
        self.drivers = drivers
        self.problems = problems
        self.published = published

    def cudnn_releases(self, major: Optional[int] = None) -> List[str]:
        """Every cuDNN release the knowledge knows, oldest first: the hand-kept lists (7.x, early 8.x) and the
        releases PyPI and NVIDIA's manifests list (derived knowledge)."""
        return [r for r in self.once("cudnn_releases", self._cudnn_releases)
                if major is None or Version(r).major == major]

    def _cudnn_releases(self) -> List[str]:
        table = self.table("cudnn", "releases")
        found = {str(release3(x)) for key in ("v7", "v8", "v9") for x in table.get(key, [])}
        found |= {str(release3(e["release"])) for e in self.published.derived_cudnn_releases()}
        return sorted((r for r in found if r != "None"), key=Version)

    def cudnn_release_known(self, release: str) -> bool:
        r = release3(release)
        return any(release3(x) == r for x in self.cudnn_releases())

    def cudnn_builds(self, release: Optional[str] = None) -> List[CudnnBuild]:
        """Build rows: those transcribed from each release's support-matrix edition, then those derived from
        what the wheels' libraries report (for releases without a transcribed row)."""
        return [b for b in self.once("cudnn_builds", self._cudnn_builds) if release is None or b.covers(release)]

    def _cudnn_builds(self) -> List[CudnnBuild]:
        out: List[CudnnBuild] = []
        for name in ("builds_v7", "builds_v8", "builds_v9"):
            table = self.table("cudnn", name)
            for row in table.get("rows", []):
                status, source = row_source(table, row)
                source = str(row.get("edition") or source)
                out.append(self._build(row, status, source))
        for row in self.published.derived_build_rows():
            for piece in self._split_at_eras(row):
                out.append(self._build(piece, str(row["status"]), str(row["source"])))
        out.sort(key=lambda b: (release3(b.first), b.cuda_major or 0))
        return out

    def _split_at_eras(self, row: Dict[str, Any]) -> List[Dict[str, Any]]:
        """A row without a floor of its own, cut where the lowest compute capability changes (min_cc_eras), so
        each piece takes the floor of its own releases rather than that of the row's first one."""
        if row.get("min_cc") or row.get("min_cc_range"):
            return [row]
        first, last = release3_of(row["from"]), release3_of(row["to"])
        pieces = []
        for era in self.table("cudnn", "min_cc_eras").get("rows", []):
            low, high = max(first, release3_of(era["from"])), min(last, release3_of(era["to"]))
            if low <= high:
                pieces.append(dict(row, **{"from": str(row["from"]) if low == first else str(era["from"]),
                                           "to": str(row["to"]) if high == last else str(era["to"])}))
        return pieces or [row]

    def _build(self, row: Dict[str, Any], status: str, source: str) -> CudnnBuild:
        cc = None
        if row.get("min_cc"):
            cc = CcFloor(str(row["min_cc"]), str(row["min_cc"]), status, source)
        elif row.get("min_cc_range"):
            low, high = row["min_cc_range"]
            cc = CcFloor(str(low), str(high), "unconfirmed", source)
        build = CudnnBuild(
            first=str(row["from"]), last=str(row["to"]), variant=str(row["variant"]),
            cuda=[str(c) for c in row.get("cuda", [])],
            driver_linux=row.get("driver_linux"), driver_windows=row.get("driver_windows"),
            driver_branch=row.get("driver_branch"), min_cc=cc, status=status, source=source,
            note=str(row.get("note", "")), cuda_update=str(row.get("cuda_update", "")),
            static_link=[str(c) for c in row.get("static_link", [])], built_with=str(row.get("built_with", "")))
        if build.min_cc is None:
            build.min_cc = self._era_min_cc(build.first)
        return build

    def cudnn_builds_for_cuda(self, cuda: str) -> List[CudnnBuild]:
        """Builds whose support-matrix row names this CUDA major.minor."""
        want = mm_text(cuda)
        return [b for b in self.cudnn_builds() if want in b.cuda]

    def family_since(self) -> Version:
        """The first cuDNN release built once per CUDA major (compat/cudnn.toml [build_family_rule])."""
        since = ver(self.table("cudnn", "build_family_rule").get("since"))
        if since is None:
            raise KeyError("compat/cudnn.toml [build_family_rule] has no 'since' release")
        return since

    def newest_cudnn_build(self, cuda: Any, cudnn_major: Optional[int] = None) -> Optional[str]:
        """The newest cuDNN release compat knows a build of for this CUDA: for a major with minor-version
        compatibility ('13', '13.0') any build of that major, before it ('10.2') a build for that exact minor."""
        label = cuda_label(cuda)  # the answer depends on the label alone: asked a few dozen times a run
        return self.once("newest_cudnn_build %s %s" % (label, cudnn_major),
                         lambda: self._newest_cudnn_build(label, cudnn_major))

    def _newest_cudnn_build(self, label: Optional[str], cudnn_major: Optional[int]) -> Optional[str]:
        cm = major_of(label) if label else None
        if cm is None:
            return None
        family = self.drivers.has_minor_compat(cm)
        exact = mm_text(label) if "." in str(label) else None
        found: List[Version] = []
        for b in self.cudnn_builds():
            if (b.cuda_major == cm) if (family or exact is None) else (exact in b.cuda):
                found.append(release3_of(b.last))
        era = self.variant_era(cm) if family else None
        if era:
            first, last = release3(era.get("first")), release3(era.get("last"))
            for r in self.cudnn_releases():
                rv = release3(r)
                majors = self.published.cudnn_release_cuda_majors(r)
                if rv is not None and (first is None or rv >= first) and (last is None or rv <= last) and (
                        not majors or cm in majors):  # 9.28.1 shipped for CUDA 13 only
                    found.append(rv)
        found = [r for r in found if cudnn_major is None or r.release[0] == cudnn_major]
        return str(max(found)) if found else None

    def variant_era(self, cuda_major: int) -> Optional[Dict[str, Any]]:
        """The first and (when it ended) last cuDNN release built for a CUDA major, with where that comes from."""
        with_major = [release3(e["release"]) for e in self.published.derived_cudnn_releases()
                      if str(cuda_major) in e.get("cuda_majors", {})]
        rows = [b for b in self._hand_builds() if b.cuda_major == cuda_major]
        known = [r for r in with_major if r is not None]
        firsts = known + [release3_of(b.first) for b in rows]
        if not firsts:
            return None
        last = max(known) if known else max(release3_of(b.last) for b in rows)
        # The era ended when a newer minor release has no build for this major (a patch for another build does
        # not end it: 9.28.1 shipped for CUDA 13 only).
        ended = any(release3_of(e["release"]).release[:2] > last.release[:2] and str(cuda_major) not in e["cuda_majors"]
                    for e in self.published.derived_cudnn_releases())
        return {"variant": "cuda%d" % cuda_major, "first": str(min(firsts)), "last": str(last) if ended else "",
                "status": "confirmed",
                "source": "the releases of https://pypi.org/project/nvidia-cudnn-cu%d/ and NVIDIA's redistrib "
                          "manifests (cuda_variant)" % cuda_major}

    def _hand_builds(self) -> List[CudnnBuild]:
        hand = [b for b in self.cudnn_builds() if not b.built_with]
        return hand

    def cudnn_min_cc(self, release: str, built_for: Optional[str] = None) -> Optional[CcFloor]:
        """Lowest compute capability of a cuDNN release (of the build for `built_for`, when given)."""
        builds = self.cudnn_builds(release)
        if built_for:
            fitting = [b for b in builds if self.build_matches(b, built_for)]
            builds = fitting or builds
        floors = [b.min_cc for b in builds if b.min_cc]
        if floors:
            # Builds differ (cuda10.2 builds reach 3.0, cuda11 ones 3.5): without a build, the lowest is a bound.
            return min(floors, key=lambda c: version_of(c.low))
        return self._era_min_cc(release)

    def _era_min_cc(self, release: str) -> Optional[CcFloor]:
        table = self.table("cudnn", "min_cc_eras")
        for row in table.get("rows", []):
            if release3_of(row["from"]) <= (release3(release) or Version("0")) <= release3_of(row["to"]):
                status, source = row_source(table, row)
                if row.get("min_cc"):
                    return CcFloor(str(row["min_cc"]), str(row["min_cc"]), status, source)
                low, high = row["min_cc_range"]
                return CcFloor(str(low), str(high), status, source)
        return None

    def cudnn_requirements(self, release: str) -> Dict[str, Any]:
        """Everything compat knows that a cuDNN release needs, for `matrix --cudnn`."""
        builds = self.cudnn_builds(release)
        bad = self.problems.known_bad("cudnn", release)
        floor = self.cudnn_min_cc(release)
        out: Dict[str, Any] = {
            "cudnn": release,
            "known_release": self.cudnn_release_known(release),
            "builds": builds,
            "min_cc": floor,
            "known_bad": bad,
        }
        # Builds NVIDIA shipped (PyPI, manifests) that no row describes: named, with what is known of them.
        r = release3(release)
        have = {b.cuda_major for b in builds}
        eras = []
        for major in (11, 12, 13):
            era = self.variant_era(major)
            if r is None or era is None or major in have:
                continue
            if era.get("first") and r < release3_of(era["first"]):
                continue
            if era.get("last") and r > release3_of(era["last"]):
                continue
            listed = major in self.published.cudnn_release_cuda_majors(release)
            if builds and not listed:
                continue
            eras.append({"variant": era["variant"], "status": "confirmed" if listed else "secondary",
                         "source": era.get("source", "")})
        out["likely_variants"] = eras
        return out

    def build_matches(self, build: CudnnBuild, built_for: str) -> bool:
        label = cuda_label(built_for)
        if label is None:
            return False
        if "." in label:
            return mm_text(label) in build.cuda or (build.family and major_of(label) == build.cuda_major)
        return major_of(label) == build.cuda_major and (build.family or len(build.cuda) == 1)

    def mvc_first(self) -> str:
        majors = self.drivers.minor_compat_majors()
        return str(majors[0]) if majors else "?"

    def family_source(self) -> str:
        return str(self.table("cudnn", "build_family_rule").get("source", ""))

    def blackwell_cuda12(self) -> Dict[str, Any]:
        return self.table("cudnn", "blackwell_cuda12")
