"""CUDA releases and the NVIDIA drivers that run them (compat/cuda_driver.toml)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from packaging.version import Version

from ..versions import major_of, mm, mm_text, ver, version_of
from .tables import CONFIRMED, Domain, row_source


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


class DriverKnowledge(Domain):
    """Which driver a CUDA release needs, and which CUDA releases a driver runs."""

    def toolkit_rows(self) -> List[Dict[str, Any]]:
        """The toolkit -> driver rows: NVIDIA's release-notes table, then releases only the derived knowledge has
        (the driver packaged with them, from NVIDIA's redistrib manifests)."""
        return list(self.once("toolkit_rows", self._toolkit_rows))

    def _toolkit_rows(self) -> List[Dict[str, Any]]:
        table = self.table("cuda_driver", "toolkit_driver")
        rows = list(table.get("rows", []))
        have = {str(r["cuda"]) for r in rows}
        for row in self.data.get("derived", {}).get("toolkit_driver", []):
            if str(row["cuda"]) not in have:
                rows.append({"cuda": row["cuda"], "linux": row["driver_linux"], "windows": "",
                             "branch": str(row["driver_linux"]).split(".")[0], "status": "confirmed",
                             "source": "https://developer.download.nvidia.com/compute/cuda/redist/redistrib_%s.json "
                                       "(cuda_compat: the driver packaged with the release)" % row["cuda"]})
        return rows

    def cuda_releases(self) -> List[str]:
        """Distinct CUDA major.minor releases the knowledge knows, oldest first: the toolkit table's and those
        the CUDA runtime wheels exist for (derived knowledge)."""
        seen = {mm_text(r["cuda"]) for r in self.toolkit_rows()}
        seen |= {mm_text(r["cuda"]) for r in self.data.get("derived", {}).get("cuda_releases", [])}
        return sorted((s for s in seen if s), key=version_of)

    def min_driver(self, cuda: str, platform: str = "linux") -> Optional[DriverFloor]:
        """The driver a CUDA release needs without minor-version compatibility (its toolkit driver)."""
        table = self.table("cuda_driver", "toolkit_driver")
        want = ver(cuda)
        if want is None:
            return None
        exact = len(want.release) >= 3
        key = "windows" if platform == "windows" else "linux"
        rows = self.once("toolkit_rows_by_minor", self._rows_by_minor).get(mm(cuda), [])
        if exact:
            rows = [r for r in rows if ver(r["cuda"]) == want] or rows
        for row in rows:
            status, source = row_source(table, row)
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

    def _rows_by_minor(self) -> Dict[Optional[Tuple[int, int]], List[Dict[str, Any]]]:
        """The toolkit rows by CUDA major.minor, the GA (lowest) release first: it decides what "CUDA X.Y" needs.
        (min_driver is asked a few hundred times a run; the rows never change once loaded.)"""
        by_minor: Dict[Optional[Tuple[int, int]], List[Dict[str, Any]]] = {}
        for row in self.toolkit_rows():
            by_minor.setdefault(mm(row["cuda"]), []).append(row)
        for rows in by_minor.values():
            rows.sort(key=lambda r: version_of(r["cuda"]))
        return by_minor

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
        # Rules ask this of the machine's one driver several times a run; each answer walks every CUDA release.
        return self.once("max_cuda_for_driver %s %s" % (driver, platform), lambda: self._max_cuda(driver, platform))

    def _max_cuda(self, driver: str, platform: str) -> Optional[str]:
        exact = [r.cuda for r in self.cuda_runnable(driver, platform) if r.how == "exact"]
        return exact[-1] if exact else None

    def driver_runs_cuda(self, driver: str, cuda: str, platform: str = "linux",
                         driver_cuda: Optional[str] = None) -> Tuple[Optional[bool], str, Optional[DriverFloor]]:
        """(verdict, how, floor). `driver_cuda` is the driver's own CUDA version when the probe knows it."""
        d = ver(driver)
        major = major_of(cuda)
        want = mm(cuda) or ((major, 0) if major is not None else None)
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

    def ptx_isa_cuda(self, isa: str) -> Optional[Tuple[str, str]]:
        """(the CUDA release that introduced PTX ISA `isa`, the last whose ptxas writes it): "7.0": ("11.0", "11.0"),
        "8.5": ("12.5", "12.6"); None where the table lacks it."""
        rows = self.table("cuda_driver", "ptx_isa").get("rows", [])
        row = next((r for r in rows if mm(r["isa"]) == mm(isa)), None)
        return (str(row["cuda"]), str(row.get("through", row["cuda"]))) if row else None

    def nvenc_driver(self, api: str, platform: str = "linux") -> Optional[DriverFloor]:
        """The driver an NVENC API version (a Video Codec SDK release, "12.1") needs on `platform`; None where the
        table has no row for exactly that version (a floor between two rows is not guessed)."""
        table = self.table("cuda_driver", "nvenc_api_driver")
        for row in table.get("rows", []):
            if mm(row["api"]) == mm(api):
                key = "windows" if platform == "windows" else "linux"
                status, source = row_source(table, row)
                return DriverFloor(api, key, row[key], status=status, source=source, how="NVENC API %s" % api)
        return None
