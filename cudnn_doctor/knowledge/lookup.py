"""The look-ups `matrix` prints: everything known about one CUDA release, cuDNN release, driver or framework,
as plain data with a source per row (the renderer only formats it)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from ..versions import major_of, mm, mm_before, mm_of, mm_text, release3, release3_of, ver
from . import gpu_answers
from .cudnn import CudnnBuild, CudnnKnowledge
from .derived import DerivedKnowledge
from .driver import DriverFloor, DriverKnowledge
from .frameworks import FrameworkKnowledge
from .gpu import GpuKnowledge
from .pair import PairKnowledge
from .tables import Domain, Tables

FRAMEWORK_TABLES = {
    "dl4j": ["dl4j"], "deeplearning4j": ["dl4j"],
    "tensorflow": ["tensorflow_linux", "tensorflow_windows"], "tf": ["tensorflow_linux", "tensorflow_windows"],
    "torch": ["pytorch", "pytorch_arch"], "pytorch": ["pytorch", "pytorch_arch"],
    "jax": ["jax"],
}


class LookupKnowledge(Domain):
    """Typed questions behind `cudnn-doctor matrix`; each raises ValueError with one clear line on bad input."""

    def __init__(self, tables: Tables, pairs: PairKnowledge, cudnn: CudnnKnowledge, drivers: DriverKnowledge,
                 gpus: GpuKnowledge, frameworks: FrameworkKnowledge, published: DerivedKnowledge) -> None:
        super().__init__(tables)
        self.pairs = pairs
        self.cudnn = cudnn
        self.drivers = drivers
        self.gpus = gpus
        self.frameworks = frameworks
        self.published = published

    def build_summary(self, b: CudnnBuild, platform: str) -> Dict[str, Any]:
        """One build row as matrix shows it: the driver the row names, else what its lowest CUDA needs."""
        floor = None
        if not (b.driver_linux if platform == "linux" else b.driver_windows):
            first = b.cuda[0] if b.cuda else None
            major = major_of(first) or 0
            mvc = (self.drivers.minor_compat_floor(str(major), platform) if self.drivers.has_minor_compat(major)
                   else None)
            floor = mvc or (self.drivers.min_driver(first, platform) if first else None)
        exact = b.driver_linux or b.driver_windows
        return {
            "cudnn": b.releases_text(), "variant": b.variant, "cuda": b.cuda,
            "driver": b.driver_text(platform) if (exact or not floor) else floor.text(),
            "driver_source": b.source if exact else (floor.source if floor else ""),
            "min_cc": (b.min_cc.low if b.min_cc and b.min_cc.known else
                       ("%s-%s (unconfirmed)" % (b.min_cc.low, b.min_cc.high) if b.min_cc else None)),
            "static_link": b.static_link, "built_with": b.built_with,
            "status": b.status, "source": b.source, "note": b.note,
        }

    def cuda_lookup(self, cuda: str, platform: str = "linux") -> Dict[str, Any]:
        if mm(cuda) is None:
            raise ValueError("--cuda wants a CUDA version such as 12.4, not %r" % cuda)
        want = str(mm_text(cuda))
        if want not in self.drivers.cuda_releases():
            raise ValueError("CUDA %s is not a release the knowledge knows (known: %s%s)" % (
                want, ", ".join(self.drivers.cuda_releases()), self._stale_hint("cuda", want)))
        major = mm_of(want)[0]
        drivers = []
        for plat in ("linux", "windows"):
            floor = self.drivers.min_driver(want, plat)
            if floor:
                drivers.append({"platform": plat, "driver": floor.text(), "how": floor.how,
                                "status": floor.status, "source": floor.source})
            mvc = self.drivers.minor_compat_floor(str(major), plat) if self.drivers.has_minor_compat(major) else None
            if mvc:
                drivers.append({"platform": plat, "driver": mvc.text(), "how": "minor-version compatibility "
                                "(CUDA %d.x)" % major, "status": mvc.status, "source": mvc.source})
        builds = [self.build_summary(b, platform) for b in self.cudnn.cudnn_builds_for_cuda(want)]
        # Builds of the same major made for older minors run on this one through minor-version compatibility.
        older = [self.build_summary(b, platform) for b in self.cudnn.cudnn_builds()
                 if self.drivers.has_minor_compat(major) and b.family and b.cuda_major == major and b.cuda
                 and mm_before(b.cuda[-1], want) and release3_of(b.first) >= self.cudnn.family_since()]
        later = []
        era = self.cudnn.variant_era(major) if self.drivers.has_minor_compat(major) else None
        if era:
            later.append({"variant": "cuda%d" % major, "from": era.get("first", ""), "to": era.get("last", ""),
                          "status": era.get("status"), "source": era.get("source"),
                          "note": "every release of the era has a CUDA %d.x build; newer minors than a row lists run "
                                  "through minor-version compatibility" % major})
        floor_cc = self.gpus.cuda_min_cc(major)
        gpus = [{"arch": a.name, "ccs": a.ccs, "first_cuda": a.first_cuda, "last_cuda": a.last_cuda or "current"}
                for a in self.gpus.architectures()
                if floor_cc and not mm_before(a.ccs[-1], floor_cc.low) and not mm_before(want, a.first_cuda)]
        return {"query": {"cuda": want, "platform": platform}, "drivers": drivers, "cudnn_builds": builds,
                "cudnn_builds_minor_compat": older, "cudnn_by_family": later,
                "min_cc": {"cc": floor_cc.low, "source": floor_cc.source} if floor_cc else None,
                "architectures": gpus}

    def cudnn_lookup(self, cudnn: str, platform: str = "linux") -> Dict[str, Any]:
        release = release3(cudnn)
        if release is None:
            raise ValueError("--cudnn wants a cuDNN version such as 8.9.7, not %r" % cudnn)
        req = self.cudnn.cudnn_requirements(cudnn)
        if not req["known_release"] and not req["builds"]:
            major = release.release[0]
            raise ValueError("cuDNN %s is not a release the knowledge knows (known %d.x: %s)%s" % (
                cudnn, major, ", ".join(self.cudnn.cudnn_releases(major)) or "none", self._stale_hint("cudnn", cudnn)))
        floor = req["min_cc"]
        return {
            "query": {"cudnn": str(release3(cudnn)), "platform": platform},
            "builds": [self.build_summary(b, platform) for b in req["builds"]],
            "likely_variants": req.get("likely_variants", []),
            "min_cc": ({"cc": floor.low if floor.known else "%s-%s" % (floor.low, floor.high),
                        "status": floor.status, "source": floor.source} if floor else None),
            "known_bad": [{"problem": b["problem"], "fixed_in": b.get("fixed_in"), "source": b["source"]}
                          for b in req["known_bad"]],
            "note": "" if req["builds"] else "No support-matrix row for this release in the knowledge: its builds "
                                             "come from the releases PyPI and NVIDIA's manifests list.",
        }

    def driver_lookup(self, driver: str, platform: str = "linux") -> Dict[str, Any]:
        if ver(driver) is None:
            raise ValueError("--driver wants a driver version such as 535.104.05, not %r" % driver)
        # A bare branch number (580) means "a driver of branch 580": judge the branch's newest release and say
        # from which release of the branch each CUDA runs (580 alone is not the release 580.0).
        branch = driver.strip() if driver.strip().isdigit() else None
        probe = "%s.9999.9999" % branch if branch else driver
        runnable = {r.cuda: r for r in self.drivers.cuda_runnable(probe, platform)}
        rows = []
        for cuda in self.drivers.cuda_releases():
            floor = self.drivers.min_driver(cuda, platform)
            run = runnable.get(cuda)
            used = run.floor if run else floor
            rows.append({"cuda": cuda, "runs": bool(run), "how": run.how if run else "driver too old",
                         "needs": floor.text() if floor else "unknown",
                         "floor_used": run.floor.text() if run else None,
                         "status": used.status if used else "unknown", "source": used.source if used else "",
                         "note": run.note if run else ""})
            if branch:
                rows[-1]["branch_releases"] = self._branch_releases(run.floor, branch) if run else None
        query: Dict[str, Any] = {"driver": driver, "platform": platform}
        if branch:
            query["branch"] = branch
        return {"query": query, "max_cuda": self.drivers.max_cuda_for_driver(probe, platform), "cuda": rows}

    @staticmethod
    def _branch_releases(floor: DriverFloor, branch: str) -> str:
        """Which releases of driver branch `branch` clear `floor`: 'R580: 580.65.06 or later', or every one."""
        need = ver(floor.version) if floor.version else None
        if need is not None and need.release[0] == int(branch):
            return "R%s: %s or later" % (branch, floor.version)
        return "R%s: any release" % branch

    def pair_lookup(self, cuda: str, cudnn: Optional[str], driver: Optional[str] = None, platform: str = "linux",
                    gpu: Optional[str] = None, cc: Optional[str] = None) -> Dict[str, Any]:
        """The pair question as `matrix --cuda --cudnn` (or, without a cuDNN, `--cuda --driver`) answers it: the
        inputs checked (ValueError says what is wrong with one), the verdict, the query and the knowledge's date."""
        if mm(cuda) is None:
            raise ValueError("--cuda wants a CUDA version such as 12.4, not %r" % cuda)
        if cudnn is not None and release3(cudnn) is None:
            raise ValueError("--cudnn wants a cuDNN version such as 9.1.0, not %r" % cudnn)
        if driver is not None and not (driver.strip().isdigit() or ver(driver) is not None):
            raise ValueError("--driver wants a driver version such as 535.104.05 or a branch such as 580, not %r"
                             % driver)
        cc = self._gpu_cc(gpu, cc)
        verdict = (self.pairs.pair_verdict(cuda, cudnn, driver=driver, platform=platform, cc=cc) if cudnn is not None
                   else self.pairs.cuda_driver_verdict(cuda, driver, platform, cc))
        query: Dict[str, Any] = {"cuda": verdict.cuda, "cudnn": verdict.cudnn, "platform": platform}
        for key, value in (("driver", driver), ("gpu", gpu), ("cc", cc)):
            if value:
                query[key] = value
        return dict(verdict.to_dict(), query=query,
                    knowledge={"date": self.published.knowledge_date(), "origin": self.published.knowledge_origin()})

    def _gpu_cc(self, gpu: Optional[str], cc: Optional[str]) -> Optional[str]:
        """The compute capability --gpu names (or --cc gives); ValueError with one line for a bad or unknown one."""
        if gpu and cc:
            raise ValueError("give --gpu or --cc, not both")
        if cc is not None and mm(cc) is None:
            raise ValueError("--cc wants a compute capability such as 8.0, not %r" % cc)
        if gpu:
            cc = self.pairs.cc_for_gpu(gpu)
            if cc is None:
                raise ValueError("--gpu %r is not a GPU the knowledge knows; give its compute capability with --cc "
                                 "(nvidia-smi --query-gpu=compute_cap --format=csv)" % gpu)
        return cc

    def gpu_lookup(self, gpu: Optional[str], cc: Optional[str], driver: Optional[str] = None,
                   cuda: Optional[str] = None, cudnn: Optional[str] = None, platform: str = "linux"
                   ) -> Dict[str, Any]:
        """The one-GPU questions (`matrix --gpu NAME` with --driver, --cuda or --cudnn; knowledge/gpu_answers.py)."""
        if driver is not None and not (driver.strip().isdigit() or ver(driver) is not None):
            raise ValueError("--driver wants a driver version such as 535.104.05 or a branch such as 580, not %r"
                             % driver)
        if cuda is not None and (mm(cuda) is None or str(mm_text(cuda)) not in self.drivers.cuda_releases()):
            raise ValueError("--cuda wants a CUDA release the knowledge knows (%s), not %r%s" % (
                ", ".join(self.drivers.cuda_releases()[-6:]) + ", ...", cuda, self._stale_hint("cuda", cuda)))
        if cudnn is not None and (release3(cudnn) is None or not (self.cudnn.cudnn_release_known(cudnn) or
                                                                  self.cudnn.cudnn_builds(cudnn))):
            raise ValueError("--cudnn wants a cuDNN release the knowledge knows, such as 9.10.2, not %r%s" % (
                cudnn, self._stale_hint("cudnn", cudnn)))
        found = self._gpu_cc(gpu, cc)
        if found is None:
            raise ValueError("--gpu or --cc is needed")
        arch = self.gpus.arch_for_cc(found)
        if arch is None:
            raise ValueError("compute capability %s is not an architecture the knowledge knows" % found)
        answer = gpu_answers.GpuAnswer(cc=str(mm_text(found)))
        if driver:
            gpu_answers.with_driver(self.pairs, answer, driver, platform)
        if cuda:
            gpu_answers.with_cuda(self.pairs, answer, str(mm_text(cuda)), platform)
        if cudnn:
            gpu_answers.with_cudnn(self.pairs, answer, str(release3(cudnn)), platform)
        if not (driver or cuda or cudnn):
            gpu_answers.alone(self.pairs, answer, platform)
        query: Dict[str, Any] = {"platform": platform, "cc": answer.cc, "architecture": arch.name}
        for key, value in (("gpu", gpu), ("driver", driver), ("cuda", cuda and mm_text(cuda)),
                           ("cudnn", cudnn and str(release3(cudnn)))):
            if value:
                query[key] = value
        return dict(answer.to_dict(), query=query,
                    knowledge={"date": self.published.knowledge_date(), "origin": self.published.knowledge_origin()})

    def framework_lookup(self, name: str) -> Dict[str, Any]:
        text, version = name.strip(), None
        if "==" in text:
            text, version = (part.strip() for part in text.split("==", 1))
            if not version:
                raise ValueError("--for wants FRAMEWORK or FRAMEWORK==VERSION, not %r" % name)
        tables = FRAMEWORK_TABLES.get(text.lower())
        if tables is None:
            raise ValueError("--for wants one of dl4j, tensorflow, torch, jax (optionally ==VERSION), not %r" % name)
        query: Dict[str, Any] = {"for": text.lower()}
        if version:
            query["version"] = version
        out: Dict[str, Any] = {"query": query, "tables": {}}
        for table in tables:
            meta = self.frameworks.framework_table(table)
            rows = self.framework_release_rows(table, version) if version else self.frameworks.framework_rows(table)
            out["tables"][table] = {"source": meta.get("source", ""), "status": meta.get("status", ""), "rows": rows}
        pins = self.published.framework_pins(_pin_name(text.lower()))
        if version:
            pins = [p for p in pins if p["version"] == version.split("+")[0]
                    or ".".join(p["version"].split(".")[:2]) == version.split("+")[0]]
        if pins:
            out["tables"]["pypi_pins"] = {
                "source": "Requires-Dist of each release's Linux wheel on https://pypi.org (compat/derived.json)",
                "status": "confirmed",
                "rows": [dict({k: p[k] for k in ("project", "version", "cuda", "cudnn", "cuda_runtime", "source")},
                              status="confirmed") for p in pins]}
        if version and not out["tables"][tables[0]]["rows"]:
            raise ValueError("no knowledge of %s %s (`cudnn-doctor matrix --for %s` lists the known releases)%s" % (
                text.lower(), version, text.lower(), self._stale_hint(_pin_name(text.lower()), version)))
        return out

    def framework_release_rows(self, table: str, version: str) -> List[Dict[str, Any]]:
        """The rows of a framework table that describe one release (all rows for tables without versions)."""
        rows = self.frameworks.framework_rows(table)
        plain = version.split("+")[0]
        if table == "pytorch":
            return self.frameworks.torch_rows(plain)
        if table == "pytorch_arch":
            out = []
            wanted = ver(plain)
            for r in rows:
                try:
                    if wanted is not None and wanted in SpecifierSet(r["torch"]):
                        out.append(r)
                except InvalidSpecifier:
                    continue
            return out
        if table.startswith("tensorflow"):
            row = self.frameworks.tensorflow_row(plain, "windows" if table.endswith("windows") else "linux")
            return [row] if row else []
        if table == "dl4j":
            return [r for r in rows if str(r["dl4j"]).lower() == plain.lower()]
        return rows

    def _stale_hint(self, kind: str, version: Optional[str]) -> str:
        if kind and self.published.is_newer_than_knowledge(kind, version):
            return "; it is newer than the knowledge (dated %s): run `cudnn-doctor update`" % (
                self.published.knowledge_date() or "?")
        return ""


def _pin_name(framework: str) -> str:
    return {"pytorch": "torch", "tf": "tensorflow"}.get(framework, framework)
