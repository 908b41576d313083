"""The typed results of smoke, bench, fleet and install.

Each is what its command's domain code returns and its renderers read; `to_dict()` is the JSON payload the
envelope wraps (schema/*.json). They live apart from results.py so that a plain `check` does not build their
dataclasses (about a tenth of its import time went to dataclass creation)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from .model import Finding, to_plain

# The largest relative error (max|gpu - cpu| / max|cpu|) a float32 convolution may show; the smoke child's copy
# of this number is smoke/conv_math.THRESHOLD (the child runs without the package), and a test keeps them equal.
SMOKE_THRESHOLD = 1e-5


@dataclass
class SmokeResult:
    """One cuDNN copy's smoke test. Timings are measured inside the child from the start of its task."""

    ok: bool
    library: str  # as given
    summary: str = ""  # one line
    diagnosis: str = ""
    fix: str = ""
    status: Optional[str] = None  # e.g. CUDNN_STATUS_NOT_INITIALIZED, CUDA_ERROR_NO_DEVICE, SMOKE_MISMATCH
    status_code: Optional[int] = None
    status_api: Optional[str] = None  # cudnn, cuda, cuda_runtime, smoke
    failed_call: Optional[str] = None  # the call or stage that failed, e.g. cudnnCreate
    error_message: Optional[str] = None  # the library's or loader's own words
    cudnn_answer: Optional[str] = None  # what cudnnCreate said, also when the driver was the problem
    cudnn_answer_detail: Optional[str] = None  # cuDNN 9's cudnnGetLastErrorString for that answer
    catalogue: List[str] = field(default_factory=list)
    library_realpath: Optional[str] = None
    version: Optional[str] = None  # cudnnGetVersion decoded
    version_code: Optional[int] = None
    cudart_version: Optional[str] = None  # the CUDA this cuDNN was built for
    driver_library: Optional[str] = None
    driver_cuda_version: Optional[str] = None
    device_index: int = 0
    device_count: Optional[int] = None
    gpu_name: Optional[str] = None
    gpu_cc: Optional[str] = None
    algorithm: Optional[str] = None
    workspace_bytes: Optional[int] = None
    fallback: Optional[str] = None  # why the no-workspace algorithm was used instead
    max_rel_error: Optional[float] = None  # max|gpu - cpu| / max|cpu|
    threshold: float = SMOKE_THRESHOLD
    nonfinite: Optional[int] = None
    unwritten: Optional[int] = None  # output elements still holding the poison
    seed: Optional[int] = None
    first_result_ms: Optional[float] = None  # cold: dlopen + handle + first convolution copied back
    total_ms: Optional[float] = None

    def to_dict(self) -> Dict[str, Any]:
        return to_plain(self)


@dataclass
class BenchResult:
    """What `bench` measured and derived, and its CD95x findings."""

    gpu: Dict[str, Any]  # index, name, cc, sm_count, memory_free, memory_total
    cudnn: Dict[str, Any]  # library, realpath, version, graph_api
    driver_cuda_version: Optional[int]
    nvml: Dict[str, Any]  # clocks, power, throttle reasons, PCIe link
    peak: Optional[Dict[str, Any]]  # the datasheet peak of this GPU, when compat knows it
    seed: List[Dict[str, Any]]  # the seed network's table: CPU, plain CUDA, cuDNN
    seed_raw: Dict[str, Any]
    seed_source: str
    layers: List[Dict[str, Any]]  # one row per layer and data type
    totals: List[Dict[str, Any]]
    workspace_limit: Optional[int]
    timing: str  # how the kernels were timed
    nvrtc_library: Optional[str]
    plan: Dict[str, Any]  # layers, dtypes, directions
    duration_s: float
    child_timings_ms: Dict[str, Any]  # where the child's time went: start, seed, layers
    findings: List[Finding] = field(default_factory=list)
    error: Optional[Any] = None  # why the run stopped early (absent from the JSON when it did not)

    def fields(self) -> Dict[str, Any]:
        """The fields by name, values as they are (findings stay Finding values): what renderers read."""
        out = {name: getattr(self, name) for name in self.__dataclass_fields__}
        if self.error is None:
            del out["error"]
        return out

    def to_dict(self) -> Dict[str, Any]:
        return {name: to_plain(value) for name, value in self.fields().items()}


@dataclass
class FleetResult:
    """Many nodes' `check --json` reports merged: who is ok, what differs, which findings on how many hosts."""

    nodes: int
    verdicts: Dict[str, int]  # ok / warning / error -> node count
    hosts_by_verdict: Dict[str, str]  # verdict -> compressed host list, e.g. "gpu[001-004]"
    reports: Dict[str, Any]  # used, rejected (by kind), duplicated, stale, max_age_s
    tool_versions: Dict[str, Any]
    groups: List[Dict[str, Any]]  # nodes with one configuration fingerprint, and how they differ
    findings: List[Dict[str, Any]]  # id, severity, count, hosts, title, fix

    def to_dict(self) -> Dict[str, Any]:
        return to_plain(self)


@dataclass
class InstallResult:
    """What `install` did (or, with --dry-run, would do): the plan, the load check, the history entry, and what
    `check` and the smoke test said afterwards."""

    dry_run: bool
    source: Dict[str, Any]  # kind, path, url, sha256
    installed: bool = False
    plan: Dict[str, Any] = field(default_factory=dict)  # archive, target, compatibility, counts, files, notes
    refusal: Optional[str] = None  # dry run: why the install would be refused
    refusal_code: int = 0
    recovered: List[str] = field(default_factory=list)  # earlier interrupted installs undone first
    verify: Dict[str, Any] = field(default_factory=dict)  # the installed library's load check
    history_entry: Optional[str] = None
    rollback_hint: str = ""
    loader_cache: Optional[str] = None
    backup: Dict[str, Any] = field(default_factory=dict)
    check: Dict[str, Any] = field(default_factory=dict)  # `check` on the result: ran, verdict, findings
    smoke: Dict[str, Any] = field(default_factory=dict)  # the smoke test on the installed library

    DRY_RUN_FIELDS = ("dry_run", "installed", "source", "plan", "refusal", "refusal_code")
    INSTALL_FIELDS = ("dry_run", "installed", "source", "recovered", "plan", "verify", "history_entry",
                      "rollback_hint", "loader_cache", "backup", "check", "smoke")

    def to_dict(self) -> Dict[str, Any]:
        """A dry run says what it would do and whether it would be refused; an install, what it did."""
        return {name: to_plain(getattr(self, name))
                for name in (self.DRY_RUN_FIELDS if self.dry_run else self.INSTALL_FIELDS)}
