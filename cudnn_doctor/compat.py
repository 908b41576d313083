"""The compatibility knowledge base (compat/*.toml) behind typed accessors that rules and commands share."""
from __future__ import annotations

import functools
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Tuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10 only
    import tomli as tomllib

COMPAT_FILES = ("cuda_driver", "cudnn", "gpu_arch", "cudnn_layout", "frameworks", "known_bad", "symptoms",
                "status_codes", "packages")
CONFIRMED = "confirmed"


# --- version helpers -------------------------------------------------------


def ver(text: Any) -> Optional[Version]:
    """A Version for '580.65.06', '9.14.0', 'r440', '13'; None for '', 'N/A' or garbage."""
    if text is None:
        return None
    s = str(text).strip().lstrip("rR")
    if not s or s.upper() == "N/A":
        return None
    try:
        return Version(s)
    except InvalidVersion:
        return None


def mm(text: Any) -> Optional[Tuple[int, int]]:
    """(major, minor) of a CUDA or cuDNN version; '13' -> (13, 0) is *not* assumed: returns None."""
    v = ver(text)
    if v is None or len(v.release) < 2:
        return None
    return v.release[0], v.release[1]


def mm_text(text: Any) -> Optional[str]:
    pair = mm(text)
    return "%d.%d" % pair if pair else None


def major_of(text: Any) -> Optional[int]:
    v = ver(text)
    return v.release[0] if v is not None else None


def cuda_label(text: Any) -> Optional[str]:
    """Normalise how a CUDA build is named: 'cuda13', '13.x', 'cu130', '13.1' -> '13' / '13.1'."""
    if text is None:
        return None
    s = str(text).strip().lower()
    m = re.fullmatch(r"cu(\d{2,3})", s)  # wheel tags: cu118, cu130
    if m:
        digits = m.group(1)
        return "%s.%s" % (digits[:-1], digits[-1])
    s = re.sub(r"^cuda", "", s)
    s = re.sub(r"\.x$", "", s)
    return s or None


# DL4J's pre-release stages in the order they were published. The 1.0.0 milestones (M1, M1.1, M2, M2.1) came
# after the betas (beta2 ... beta7), but PEP 440 would read "M" as nothing known and packaging sorts neither
# consistently, so the order is spelled out here.
_DL4J_STAGES = {"alpha": 0, "beta": 1, "m": 2}


def dl4j_key(text: Any) -> Tuple[Tuple[int, ...], int, Tuple[int, ...]]:
    """Sort key for DL4J versions: 1.0.0-beta6 < 1.0.0-M1 < 1.0.0-M1.1 < 1.0.0-M2.1 < 1.0.0."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)*)(?:-?([A-Za-z]+)\.?(\d+(?:\.\d+)*)?)?(?:-SNAPSHOT)?\s*", str(text or ""))
    if not m:
        return ((), -1, ())
    base = tuple(int(x) for x in m.group(1).split("."))
    stage = _DL4J_STAGES.get((m.group(2) or "").lower(), 3 if not m.group(2) else -1)
    number = tuple(int(x) for x in m.group(3).split(".")) if m.group(3) else ()
    return base, stage, number


def release3(text: Any) -> Optional[Version]:
    """A cuDNN release without its build number: 9.19.0.56 -> 9.19.0."""
    v = ver(text)
    if v is None:
        return None
    parts = list(v.release[:3]) + [0] * (3 - len(v.release[:3]))
    return Version("%d.%d.%d" % tuple(parts))


# --- typed rows ------------------------------------------------------------


@dataclass
class DriverFloor:
    """A minimum driver for running some CUDA release on one platform."""

    cuda: str
    platform: str
    version: Optional[str]  # exact minimum, e.g. "525.60.13"; None when only a branch is known
    branch: Optional[str] = None  # "580"
    status: str = CONFIRMED
    source: str = ""
    label: str = ""
    how: str = "toolkit driver"  # or "minor-version compatibility"

    @property
    def floor(self) -> Optional[Version]:
        """What a driver must reach: the exact version, else the branch (R615 -> 615)."""
        return ver(self.version) or ver(self.branch)

    def text(self) -> str:
        if self.version:
            return ">= %s" % self.version
        if self.branch:
            return "R%s branch or later" % self.branch
        return "unknown"


@dataclass
class CudaRun:
    """One CUDA release a driver can run, and how."""

    cuda: str
    how: str  # "exact" (driver >= the toolkit's own driver) or "minor-version compatibility"
    floor: DriverFloor
    note: str = ""


@dataclass
class CcFloor:
    """The lowest compute capability; low < high when the exact value is not confirmed."""

    low: str
    high: str
    status: str = CONFIRMED
    source: str = ""

    @property
    def known(self) -> bool:
        return self.low == self.high


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

    def covers(self, release: Any) -> bool:
        r = release3(release)
        return r is not None and release3(self.first) <= r <= release3(self.last)

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


@dataclass
class Arch:
    name: str
    ccs: List[str]
    first_cuda: str
    last_cuda: str
    last_driver_branch: str
    first_cuda_by_cc: Dict[str, str] = field(default_factory=dict)
    source: str = ""

    def first_cuda_for(self, cc: str) -> str:
        return self.first_cuda_by_cc.get(cc, self.first_cuda)


@dataclass
class Symptom:
    id: str
    patterns: List[str]
    meaning: str
    catalogue: List[str]
    rules: List[str]

    def matches(self, text: str) -> Optional[str]:
        """The pattern that matched, or None."""
        low = text.lower()
        for pattern in self.patterns:
            if pattern.startswith("re:"):
                if re.search(pattern[3:], text, re.I):
                    return pattern
            elif pattern.lower() in low:
                return pattern
        return None


# --- the knowledge base ----------------------------------------------------


def _row_source(table: Dict[str, Any], row: Dict[str, Any]) -> Tuple[str, str]:
    """A row's own source/status, else its table's."""
    return (str(row.get("status") or table.get("status") or CONFIRMED),
            str(row.get("source") or table.get("source") or ""))


class Compat:
    """Read-only view of the compat tables. Every answer carries the source it came from."""

    def __init__(self, data: Dict[str, Dict[str, Any]], origin: str = "") -> None:
        self.data = data
        self.origin = origin  # where the TOML files were read from

    def table(self, file: str, name: str) -> Dict[str, Any]:
        return self.data.get(file, {}).get(name, {})

    # --- CUDA toolkit <-> driver ------------------------------------------

    def toolkit_rows(self) -> List[Dict[str, Any]]:
        return list(self.table("cuda_driver", "toolkit_driver").get("rows", []))

    def cuda_releases(self) -> List[str]:
        """Distinct CUDA major.minor releases the driver table knows, oldest first."""
        seen = {mm_text(r["cuda"]) for r in self.toolkit_rows()}
        return sorted((s for s in seen if s), key=ver)

    def min_driver(self, cuda: str, platform: str = "linux") -> Optional[DriverFloor]:
        """The driver a CUDA release needs without minor-version compatibility (its toolkit driver)."""
        table = self.table("cuda_driver", "toolkit_driver")
        want = ver(cuda)
        if want is None:
            return None
        exact = len(want.release) >= 3
        key = "windows" if platform == "windows" else "linux"
        rows = [r for r in table.get("rows", []) if mm(r["cuda"]) == mm(cuda)]
        if exact:
            rows = [r for r in rows if ver(r["cuda"]) == want] or rows
        if not rows:
            return None
        # The GA (lowest) release of a minor decides what "CUDA X.Y" needs.
        rows.sort(key=lambda r: ver(r["cuda"]))
        for row in rows:
            status, source = _row_source(table, row)
            value = str(row.get(key, ""))
            if value.upper() == "N/A" and key == "windows":
                # Not bundled on Windows from 13.1: the minor-version-compatibility floor is what NVIDIA states.
                mvc = self.minor_compat_floor(str(major_of(cuda)), platform)
                if mvc:
                    return DriverFloor(cuda=mm_text(cuda) or cuda, platform=platform, version=mvc.version,
                                       status=mvc.status, source=mvc.source,
                                       how="minor-version compatibility (no Windows driver bundled)")
                continue
            if value or row.get("branch"):
                return DriverFloor(cuda=mm_text(cuda) or cuda, platform=platform, version=value or None,
                                   branch=str(row.get("branch") or "") or None, status=status,
                                   source=source, label=str(row.get("label", "")))
        return None

    def minor_compat_floor(self, major: str, platform: str = "linux") -> Optional[DriverFloor]:
        table = self.table("cuda_driver", "minor_version_compat")
        for row in table.get("rows", []):
            if str(row["major"]) != str(major):
                continue
            status = str(row.get("status") or table.get("status") or CONFIRMED)
            source = str(table.get("source", ""))
            note = row.get("source")
            if platform == "windows":
                status = str(row.get("windows_status") or status)
                note = row.get("windows_source") or note
                value = row.get("windows")
            else:
                value = row.get("linux")
            return DriverFloor(cuda="%s.x" % major, platform=platform, version=str(value),
                               branch=str(row.get("min_branch", "")) or None, status=status,
                               source=source + ("; " + str(note) if note else ""),
                               how="minor-version compatibility")
        return None

    def minor_compat_majors(self) -> List[int]:
        """The CUDA majors NVIDIA lists for minor-version compatibility ([minor_version_compat] rows), oldest first."""
        rows = self.table("cuda_driver", "minor_version_compat").get("rows", [])
        majors = {major_of(row.get("major")) for row in rows}
        return sorted(m for m in majors if m is not None)

    def has_minor_compat(self, major: Any) -> bool:
        """Whether programs built with any minor of this CUDA major run on every driver of the major's family.

        NVIDIA introduced the promise with the first major the table lists and keeps it for later ones, so a
        major newer than the table (a future release) keeps it too; older majors have one runtime per minor.
        """
        m = major_of(major)
        majors = self.minor_compat_majors()
        return m is not None and bool(majors) and m >= majors[0]

    def toolkit_package(self, cuda: Any) -> Optional[str]:
        """NVIDIA's package for one toolkit release without the driver: 'cuda-toolkit-13-0' for CUDA 13.0."""
        pair = mm(cuda)
        pattern = self.table("cuda_driver", "toolkit_packages").get("apt")
        if pair is None or not pattern:
            return None
        return str(pattern).replace("<major>", str(pair[0])).replace("<minor>", str(pair[1]))

    def cuda_runnable(self, driver: str, platform: str = "linux") -> List[CudaRun]:
        """Every CUDA release this driver can run: exactly, or through minor-version compatibility."""
        d = ver(driver)
        if d is None:
            return []
        out: List[CudaRun] = []
        for cuda in self.cuda_releases():
            floor = self.min_driver(cuda, platform)
            if floor and floor.floor is not None and d >= floor.floor:
                out.append(CudaRun(cuda, "exact", floor))
                continue
            mvc = self.minor_compat_floor(str(major_of(cuda)), platform)
            if mvc and mvc.floor is not None and d >= mvc.floor:
                out.append(CudaRun(cuda, "minor-version compatibility", mvc,
                                   note="PTX built by CUDA %s cannot be JIT-compiled by this driver" % cuda))
        return out

    def max_cuda_for_driver(self, driver: str, platform: str = "linux") -> Optional[str]:
        """The newest CUDA the driver supports by itself (what nvidia-smi calls 'CUDA Version')."""
        exact = [r.cuda for r in self.cuda_runnable(driver, platform) if r.how == "exact"]
        return exact[-1] if exact else None

    def driver_runs_cuda(self, driver: str, cuda: str, platform: str = "linux",
                         driver_cuda: Optional[str] = None) -> Tuple[Optional[bool], str, Optional[DriverFloor]]:
        """(verdict, how, floor). `driver_cuda` is the driver's own CUDA version when the probe knows it."""
        d = ver(driver)
        want = mm(cuda) or ((major_of(cuda), 0) if major_of(cuda) is not None else None)
        if want is None:
            return None, "the CUDA version %r is not understood" % cuda, None
        target = "%d.%d" % want
        floor = self.min_driver(target, platform)
        own = mm(driver_cuda) if driver_cuda else None
        if own is not None and own >= want:
            return True, "exact", floor
        if d is not None and floor and floor.floor is not None and d >= floor.floor:
            return True, "exact", floor
        mvc = self.minor_compat_floor(str(want[0]), platform)
        if mvc and mvc.floor is not None and d is not None and d >= mvc.floor and (
                own is None or own[0] >= want[0]):
            return True, "minor-version compatibility", mvc
        if d is None and own is None:
            return None, "the driver version is unknown", floor
        if floor is None and mvc is None:
            return None, "compat has no driver row for CUDA %s" % target, None
        return False, "too old", floor or mvc

    # --- cuDNN -------------------------------------------------------------

    def cudnn_releases(self, major: Optional[int] = None) -> List[str]:
        table = self.table("cudnn", "releases")
        keys = ["v%d" % major] if major else ["v7", "v8", "v9"]
        out: List[str] = []
        for key in keys:
            out += list(table.get(key, []))
        return out

    def cudnn_release_known(self, release: str) -> bool:
        r = release3(release)
        return any(release3(x) == r for x in self.cudnn_releases())

    def cudnn_builds(self, release: Optional[str] = None) -> List[CudnnBuild]:
        out: List[CudnnBuild] = []
        for name in ("builds_v7", "builds_v8", "builds_v9"):
            table = self.table("cudnn", name)
            for row in table.get("rows", []):
                status, source = _row_source(table, row)
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
                    note=str(row.get("note", "")), cuda_update=str(row.get("cuda_update", "")))
                if release is None or build.covers(release):
                    out.append(build)
        return out

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
        label = cuda_label(cuda)
        cm = major_of(label) if label else None
        if cm is None:
            return None
        family = self.has_minor_compat(cm)
        exact = mm_text(label) if "." in str(label) else None
        found: List[Version] = []
        for b in self.cudnn_builds():
            if (b.cuda_major == cm) if (family or exact is None) else (exact in b.cuda):
                found.append(release3(b.last))
        era = self.variant_era(cm) if family else None
        if era:
            first, last = release3(era.get("first")), release3(era.get("last"))
            for r in self.cudnn_releases():
                rv = release3(r)
                if rv is not None and (first is None or rv >= first) and (last is None or rv <= last):
                    found.append(rv)
        found = [r for r in found if r is not None and (cudnn_major is None or r.release[0] == cudnn_major)]
        return str(max(found)) if found else None

    def variant_era(self, cuda_major: int) -> Optional[Dict[str, Any]]:
        for row in self.table("cudnn", "variant_eras").get("rows", []):
            if row["variant"] == "cuda%d" % cuda_major:
                return row
        return None

    def cudnn_min_cc(self, release: str, built_for: Optional[str] = None) -> Optional[CcFloor]:
        """Lowest compute capability of a cuDNN release (of the build for `built_for`, when given)."""
        builds = self.cudnn_builds(release)
        if built_for:
            fitting = [b for b in builds if self._build_matches(b, built_for)]
            builds = fitting or builds
        floors = [b.min_cc for b in builds if b.min_cc]
        if floors:
            # Builds differ (cuda10.2 builds reach 3.0, cuda11 ones 3.5): without a build, the lowest is a bound.
            return min(floors, key=lambda c: ver(c.low))
        table = self.table("cudnn", "min_cc_eras")
        for row in table.get("rows", []):
            if release3(row["from"]) <= (release3(release) or Version("0")) <= release3(row["to"]):
                status, source = _row_source(table, row)
                if row.get("min_cc"):
                    return CcFloor(str(row["min_cc"]), str(row["min_cc"]), status, source)
                low, high = row["min_cc_range"]
                return CcFloor(str(low), str(high), status, source)
        return None

    def cudnn_requirements(self, release: str) -> Dict[str, Any]:
        """Everything compat knows that a cuDNN release needs, for `matrix --cudnn`."""
        builds = self.cudnn_builds(release)
        bad = self.known_bad("cudnn", release)
        floor = self.cudnn_min_cc(release)
        out: Dict[str, Any] = {
            "cudnn": release,
            "known_release": self.cudnn_release_known(release),
            "builds": builds,
            "min_cc": floor,
            "known_bad": bad,
        }
        if not builds:
            r = release3(release)
            eras = []
            rows = sorted(self.table("cudnn", "variant_eras").get("rows", []),
                          key=lambda e: major_of(cuda_label(e["variant"])) or 0)
            for era in rows:
                if r is None:
                    continue
                if era.get("first") and r < release3(era["first"]):
                    continue
                if era.get("last") and r > release3(era["last"]):
                    continue
                eras.append({"variant": era["variant"], "status": era.get("status", "secondary"),
                             "source": era.get("source", "")})
            out["likely_variants"] = eras
        return out

    def _build_matches(self, build: CudnnBuild, built_for: str) -> bool:
        label = cuda_label(built_for)
        if label is None:
            return False
        if "." in label:
            return mm_text(label) in build.cuda or (build.family and major_of(label) == build.cuda_major)
        return major_of(label) == build.cuda_major and (build.family or len(build.cuda) == 1)

    def cudnn_cuda_verdict(self, cudnn_version: str, built_for_cuda: Optional[str],
                           toolkit_cuda: str) -> Tuple[Optional[bool], str]:
        """Can this cuDNN build be used with that CUDA toolkit? (True / False / None = cannot tell, why)."""
        release = release3(cudnn_version)
        tk = mm(toolkit_cuda)
        tk_major = major_of(toolkit_cuda)
        if release is None:
            return None, "Cannot tell: the cuDNN version %r is not understood." % cudnn_version
        if tk_major is None:
            return None, "Cannot tell: the toolkit version %r is not understood." % toolkit_cuda
        tk_text = "%d.%d" % tk if tk else str(tk_major)
        label = cuda_label(built_for_cuda)
        built_major = major_of(label) if label else None
        builds = self.cudnn_builds(str(release))
        if label and built_major is not None:
            matching = [b for b in builds if self._build_matches(b, label)]
            if matching:
                b = matching[0]
                src = "%s [%s]" % (b.source, b.status)
                if tk and "%d.%d" % tk in b.cuda:
                    return True, ("cuDNN %s's %s build supports CUDA %s (%s)." % (release, b.variant, tk_text, src))
                if tk_major != b.cuda_major:
                    return False, ("cuDNN %s built for CUDA %s needs a CUDA %d.x toolkit, not %s; install the "
                                   "build for CUDA %d (%s)." % (release, label, b.cuda_major, tk_text, tk_major, src))
                if self.has_minor_compat(tk_major) and (b.family or release >= self.family_since()):
                    return True, ("cuDNN %s's %s build lists CUDA %s; %s runs through CUDA minor-version "
                                  "compatibility (%s)." % (release, b.variant, b.cuda_text(), tk_text, src))
                if self.has_minor_compat(tk_major):
                    return None, ("Cannot tell: cuDNN %s's %s build lists CUDA %s, not %s (%s)."
                                  % (release, b.variant, b.cuda_text(), tk_text, src))
                return False, ("cuDNN %s built for CUDA %s does not work with CUDA %s: before CUDA %s every "
                               "minor release has its own runtime soname (%s)." % (release, label, tk_text,
                                                                                  self._mvc_first(), src))
            if builds:
                listed = ", ".join(sorted({b.variant for b in builds}))
                if built_major != tk_major:
                    return False, ("cuDNN %s built for CUDA %s cannot be used with CUDA %s (major differs); "
                                   "builds listed: %s (%s)." % (release, label, tk_text, listed, builds[0].source))
            # No row names this build: judge by the major only.
            if built_major != tk_major:
                return False, ("cuDNN %s built for CUDA %s cannot be used with CUDA %s: the CUDA major differs "
                               "(%s)." % (release, label, tk_text, self._family_source()))
            if self.has_minor_compat(tk_major) and release >= self.family_since():
                return True, ("cuDNN %s built for CUDA %s fits CUDA %s: from %s NVIDIA ships one build per CUDA "
                              "major for all its minors (%s) [no support-matrix row for %s in compat]."
                              % (release, label, tk_text, self.family_since(), self._family_source(), release))
            if not self.has_minor_compat(tk_major) and tk and mm(label) == tk:
                return True, ("cuDNN %s built for CUDA %s matches the toolkit %s exactly [no support-matrix row "
                              "for %s in compat]." % (release, label, tk_text, release))
            if not self.has_minor_compat(tk_major) and tk and mm(label) and mm(label) != tk:
                return False, ("cuDNN %s built for CUDA %s does not work with CUDA %s: before CUDA %s every minor "
                               "release has its own runtime soname." % (release, label, tk_text, self._mvc_first()))
            return None, ("Cannot tell whether cuDNN %s built for CUDA %s works with CUDA %s: compat has no row "
                          "for it." % (release, label, tk_text))
        # The build is not known: is there any build of this release for the toolkit?
        if not builds:
            eras = self.cudnn_requirements(str(release)).get("likely_variants", [])
            era = next((e for e in eras if e["variant"] == "cuda%d" % tk_major), None)
            if era and self.has_minor_compat(tk_major):
                return True, ("cuDNN %s most likely has a %s build (%s) [%s: no support-matrix row for %s]; make "
                              "sure that build is the one installed." % (release, era["variant"], era["source"],
                                                                         era["status"], release))
            return None, ("Cannot tell: compat has no support-matrix row for cuDNN %s and the CUDA it was built "
                          "for is unknown." % release)
        fitting = [b for b in builds if tk and "%d.%d" % tk in b.cuda]
        if fitting:
            b = fitting[0]
            return True, ("cuDNN %s has a %s build for CUDA %s (%s [%s]); make sure that build is the one "
                          "installed." % (release, b.variant, tk_text, b.source, b.status))
        same_major = [b for b in builds if b.cuda_major == tk_major and self.has_minor_compat(tk_major) and b.family]
        if same_major:
            b = same_major[0]
            return True, ("cuDNN %s's %s build (CUDA %s) covers CUDA %s through minor-version compatibility "
                          "(%s [%s])." % (release, b.variant, b.cuda_text(), tk_text, b.source, b.status))
        listed = ", ".join("%s (CUDA %s)" % (b.variant, b.cuda_text()) for b in builds)
        return False, ("cuDNN %s has no build for CUDA %s; its builds: %s (%s)."
                       % (release, tk_text, listed, builds[0].source))

    def _mvc_first(self) -> str:
        majors = self.minor_compat_majors()
        return str(majors[0]) if majors else "?"

    def _family_source(self) -> str:
        return str(self.table("cudnn", "build_family_rule").get("source", ""))

    def blackwell_cuda12(self) -> Dict[str, Any]:
        return self.table("cudnn", "blackwell_cuda12")

    def cudnn_layout(self, major: int) -> Dict[str, Any]:
        return self.table("cudnn_layout", "v%d" % major)

    def cudart_soname(self, cuda: str) -> Optional[str]:
        """'libcudart.so.11.0' for CUDA 11.8: the name a program built for that CUDA asks the loader for."""
        want = mm(cuda)
        if want is None:
            return None
        version = Version("%d.%d" % want)
        for row in self.table("cudnn_layout", "cudart_soname").get("rows", []):
            if version in SpecifierSet(row["cuda"]):
                return row["soname"].format(major=want[0], minor=want[1])
        return None

    def cudnn_channels(self) -> List[Dict[str, Any]]:
        return list(self.table("cudnn_layout", "channels").get("rows", []))

    def cudnn_wheel(self, cuda_major: Any) -> Optional[str]:
        """The pip project of the cuDNN build for a CUDA major ('nvidia-cudnn-cu13'); None where NVIDIA ships none."""
        m = major_of(cuda_major)
        for row in self.cudnn_channels():
            if row.get("channel") != "pip":
                continue
            if m is None or str(m) not in [str(x) for x in row.get("cuda_majors", [])]:
                return None
            return str(row["package"]).replace("<cuda_major>", str(m))
        return None

    def cudnn_archive_name(self, release: str, cuda: str, platform: str = "linux",
                           machine: str = "x86_64") -> Optional[str]:
        """The official download file name for a cuDNN build ('<version>' keeps the build number open);
        None where compat does not know the name for this machine type."""
        r = release3(release)
        table = self.table("cudnn_layout", "archives")
        for row in table.get("rows", []):
            if r is not None and release3(row["era_from"]) <= r <= release3(row["era_to"]):
                pattern = str(row["windows" if platform == "windows" else "linux"])
                if "<arch>" in pattern:
                    arch = table.get("linux_arch", {}).get(machine or "x86_64")
                    if not arch:
                        return None
                    pattern = pattern.replace("<arch>", str(arch))
                elif platform != "windows" and machine not in (None, "", "x86_64"):
                    return None  # the old names are x86_64 ones
                major = major_of(cuda)
                cuda_text = mm_text(cuda)
                if "<cuda>" in pattern:
                    # Names that carry the minor: a one-per-major build is named after the newest CUDA its
                    # support-matrix row lists; a per-minor build after its own minor.
                    family = [b for b in self.cudnn_builds(str(r)) if b.cuda_major == major and b.cuda and b.family]
                    if family:
                        cuda_text = family[0].cuda[-1]
                    elif cuda_text is None:
                        return None
                return (pattern.replace("<cuda_major>", str(major)).replace("<cuda>", cuda_text or str(cuda))
                        .replace("<version>", "%s.*" % r))
        return None

    # --- GPUs --------------------------------------------------------------

    def architectures(self) -> List[Arch]:
        table = self.table("gpu_arch", "architectures")
        return [Arch(name=r["name"], ccs=list(r["ccs"]), first_cuda=str(r["first_cuda"]),
                     last_cuda=str(r.get("last_cuda", "")), last_driver_branch=str(r.get("last_driver_branch", "")),
                     first_cuda_by_cc=dict(r.get("first_cuda_by_cc", {})), source=str(table.get("source", "")))
                for r in table.get("rows", [])]

    def arch_for_cc(self, cc: str) -> Optional[Arch]:
        want = mm_text(cc)
        for arch in self.architectures():
            if want in arch.ccs:
                return arch
        return None

    def cuda_min_cc(self, cuda_major: Any) -> Optional[CcFloor]:
        table = self.table("gpu_arch", "cuda_min_cc")
        for row in table.get("rows", []):
            if str(row["cuda_major"]) == str(major_of(cuda_major)):
                status, source = _row_source(table, row)
                return CcFloor(str(row["min_cc"]), str(row["min_cc"]), status, source)
        return None

    def first_cuda_for_cc(self, cc: str) -> Optional[str]:
        arch = self.arch_for_cc(cc)
        return arch.first_cuda_for(mm_text(cc)) if arch else None

    def forward_compat_gpu(self, name: Optional[str]) -> Optional[bool]:
        """True: forward compatibility supported; False: not (GeForce); None: cannot tell from the name."""
        if not name:
            return None
        table = self.table("gpu_arch", "forward_compat_gpu_names")
        padded = " %s " % name
        if any(p.lower() in padded.lower() for p in table.get("unsupported", [])):
            return False
        for pattern in table.get("supported", []):
            if re.search(r"(?<![A-Za-z0-9])%s(?![0-9])" % re.escape(pattern.strip()), name, re.I):
                return True
        return None

    def sass_runs(self, arch_list: Iterable[str], ptx: Optional[str], cc: str) -> bool:
        """Whether a binary with SASS for `arch_list` (plus PTX for `ptx`) has code for a GPU of `cc`."""
        gpu = mm(cc)
        if gpu is None:
            return True
        for a in arch_list:
            built = mm(a)
            if built and built[0] == gpu[0] and built[1] <= gpu[1]:
                return True
        p = mm(ptx) if ptx else None
        return bool(p and p <= gpu)

    # --- frameworks --------------------------------------------------------

    def framework_rows(self, name: str) -> List[Dict[str, Any]]:
        """Rows of a framework table with status/source filled in: pytorch, pytorch_arch, tensorflow_linux,
        tensorflow_windows, jax, dl4j."""
        table = self.table("frameworks", name)
        out = []
        for row in table.get("rows", []):
            status, source = _row_source(table, row)
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

    # --- known-bad and symptoms -------------------------------------------

    def known_bad(self, component: str, version: Optional[str]) -> List[Dict[str, Any]]:
        v = release3(version) if component == "cudnn" else ver(version)
        if v is None:
            return []
        table = self.table("known_bad", component)
        out = []
        for row in table.get("rows", []):
            try:
                spec = SpecifierSet(row["version"])
            except InvalidSpecifier:
                continue
            if v in spec:
                status, source = _row_source(table, row)
                out.append(dict(row, status=status, source=source))
        return out

    def symptoms(self) -> List[Symptom]:
        return [Symptom(id=s["id"], patterns=list(s["patterns"]), meaning=s["meaning"],
                        catalogue=list(s.get("catalogue", [])), rules=list(s.get("rules", [])))
                for s in self.data.get("symptoms", {}).get("symptom", [])]

    def meta_source(self, file: str) -> str:
        meta = self.data.get(file, {}).get("meta", {})
        return "; ".join(meta.get("sources", [])) or str(meta.get("source", ""))


# --- loading ---------------------------------------------------------------


def _source_tree_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "compat"


def _read_all() -> Tuple[Dict[str, Dict[str, Any]], str]:
    """Installed package data first; a source tree's compat/ when running with PYTHONPATH=."""
    data: Dict[str, Dict[str, Any]] = {}
    try:
        from importlib.resources import files

        base = files("cudnn_doctor._compat")
        for name in COMPAT_FILES:
            data[name] = tomllib.loads(base.joinpath(name + ".toml").read_text(encoding="utf-8"))
        return data, str(base)
    except Exception:  # older importlib.resources, or no installed data: try the folders themselves
        pass
    installed = Path(__file__).resolve().parent / "_compat"
    folder = installed if (installed / "cudnn.toml").is_file() else _source_tree_dir()
    for name in COMPAT_FILES:
        with open(folder / (name + ".toml"), "rb") as fh:
            data[name] = tomllib.load(fh)
    return data, str(folder)


@functools.lru_cache(maxsize=1)
def load_compat() -> Compat:
    """The knowledge base, read once per process."""
    data, origin = _read_all()
    return Compat(data, origin)
