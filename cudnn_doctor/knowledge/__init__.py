"""The knowledge base (compat/*.toml) behind the Compat facade. Imports versions and parsed_cache, never the machine."""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable, Dict, List, TypeVar

from .acceptance import AcceptanceKnowledge
from .builds import Build, BuildKnowledge
from .containers import ContainerKnowledge
from .declared import DeclaredKnowledge
from .cudnn import CudnnBuild, CudnnKnowledge
from .cudnn_fit import CudnnFitKnowledge
from .derived import DerivedKnowledge
from .driver import CudaRun, DriverFloor, DriverKnowledge
from .exists import ExistsKnowledge
from .framework_features import FrameworkFeatureKnowledge
from .frameworks import FrameworkKnowledge
from .gpu import Arch, CcFloor, GpuKnowledge
from .known_bad import KnownBadKnowledge, Symptom
from .layout import LayoutKnowledge
from .load import COMPAT_FILES, read_all
from .lookup import LookupKnowledge
from .node import NodeKnowledge
from .pair import PairKnowledge, PairVerdict
from .pastes import ErrorText, PastesKnowledge
from .reference import ReferenceKnowledge
from .sonames import Shipped, SonameKnowledge
from .status import StatusCode, StatusKnowledge
from .tables import CONFIRMED, Domain, Tables
from .theano import TheanoKnowledge

if TYPE_CHECKING:
    from typing import Concatenate, ParamSpec

    P = ParamSpec("P")

R = TypeVar("R")

__all__ = ["Arch", "Build", "CONFIRMED", "COMPAT_FILES", "CcFloor", "Compat", "CudaRun", "CudnnBuild", "DriverFloor",
           "ErrorText", "PairVerdict", "Shipped", "StatusCode", "Symptom", "load_compat"]


def forward(method: "Callable[Concatenate[Any, P], R]") -> "Callable[Concatenate[Compat, P], R]":
    """A facade method that calls `method` on the Compat's domain of its class, with the same typed signature."""
    owner, name = method.__qualname__.split(".")[0], method.__name__

    def call(self: Compat, /, *args: "P.args", **kwargs: "P.kwargs") -> R:
        bound: "Callable[P, R]" = getattr(self.domains[owner], name)
        return bound(*args, **kwargs)

    functools.update_wrapper(call, method)  # its name, docstring and (inspect.signature) signature
    call.__qualname__ = "Compat." + name
    return call


class Compat:
    """Read-only view of the compat tables. Every answer carries the source it came from.

    One object per domain, each built from its own tables and handed the other domains it asks (typed accessors
    below); the methods of the facade forward to them, so callers keep one object to pass around.
    """

    def __init__(self, data: Dict[str, Dict[str, Any]], origin: str = "") -> None:
        tables = Tables(data, origin)
        self.tables = tables
        self.status_tables = StatusKnowledge(tables)
        self.problems = KnownBadKnowledge(tables, self.status_tables)
        self.published = DerivedKnowledge(tables)
        self.drivers = DriverKnowledge(tables)
        self.gpus = GpuKnowledge(tables)
        self.reference = ReferenceKnowledge(tables)
        self.frameworks = FrameworkKnowledge(tables)
        self.acceptance = AcceptanceKnowledge(tables)
        self.cudnn = CudnnKnowledge(tables, self.drivers, self.problems, self.published)
        self.fit = CudnnFitKnowledge(tables, self.cudnn, self.drivers)
        self.exists = ExistsKnowledge(tables, self.cudnn, self.drivers, self.published)
        self.pairs = PairKnowledge(tables, self.cudnn, self.fit, self.drivers, self.gpus, self.published,
                                   self.reference)
        self.lookups = LookupKnowledge(tables, self.pairs, self.cudnn, self.drivers, self.gpus, self.frameworks,
                                       self.published)
        self.layout = LayoutKnowledge(tables, self.cudnn)
        self.sonames = SonameKnowledge(tables, self.drivers)
        self.builds = BuildKnowledge(tables, self.frameworks)
        self.containers = ContainerKnowledge(tables)
        self.theano = TheanoKnowledge(tables)
        self.pastes = PastesKnowledge(tables)
        self.features = FrameworkFeatureKnowledge(tables)
        self.node = NodeKnowledge(tables)
        self.declared = DeclaredKnowledge(tables)
        # What forward() looks a method's domain up by: its class's name.
        self.domains: Dict[str, Domain] = {type(d).__name__: d for d in vars(self).values() if isinstance(d, Domain)}

    @property
    def data(self) -> Dict[str, Dict[str, Any]]:
        return self.tables.data

    @property
    def origin(self) -> str:
        return self.tables.origin

    def table(self, file: str, name: str) -> Dict[str, Any]:
        return self.tables.table(file, name)

    def sourced_rows(self, file: str, name: str) -> List[Dict[str, Any]]:
        return self.tables.sourced_rows(file, name)

    # status codes by name and number (status.py)
    status_apis = forward(StatusKnowledge.status_apis)
    status_codes_of = forward(StatusKnowledge.status_codes_of)
    status_by_name = forward(StatusKnowledge.status_by_name)
    status_by_number = forward(StatusKnowledge.status_by_number)

    # known-bad releases, error-text symptoms, smoke's status words (known_bad.py)
    known_bad = forward(KnownBadKnowledge.known_bad)
    harmless_warnings = forward(KnownBadKnowledge.harmless_warnings)
    dropped_gpus = forward(KnownBadKnowledge.dropped_gpus)
    flagged = forward(KnownBadKnowledge.flagged)
    bad_wheel = forward(KnownBadKnowledge.bad_wheel)
    bad_wheels = forward(KnownBadKnowledge.bad_wheels)
    symptoms = forward(KnownBadKnowledge.symptoms)
    status_name = forward(KnownBadKnowledge.status_name)
    status_entries = forward(KnownBadKnowledge.status_entries)
    status_words = forward(KnownBadKnowledge.status_words)

    # what PyPI and NVIDIA's manifests list, and how current that is (derived.py)
    derived = forward(DerivedKnowledge.derived)
    knowledge_date = forward(DerivedKnowledge.knowledge_date)
    knowledge_origin = forward(DerivedKnowledge.knowledge_origin)
    derived_cudnn_releases = forward(DerivedKnowledge.derived_cudnn_releases)
    cudnn_release_cuda_majors = forward(DerivedKnowledge.cudnn_release_cuda_majors)
    newest_cudnn_release = forward(DerivedKnowledge.newest_cudnn_release)
    newest_cuda_release = forward(DerivedKnowledge.newest_cuda_release)
    framework_pins = forward(DerivedKnowledge.framework_pins)
    newest_framework_release = forward(DerivedKnowledge.newest_framework_release)
    newest_known_driver = forward(DerivedKnowledge.newest_known_driver)
    knowledge_summary = forward(DerivedKnowledge.knowledge_summary)
    is_newer_than_knowledge = forward(DerivedKnowledge.is_newer_than_knowledge)

    # CUDA releases and the drivers that run them (driver.py)
    toolkit_rows = forward(DriverKnowledge.toolkit_rows)
    cuda_releases = forward(DriverKnowledge.cuda_releases)
    min_driver = forward(DriverKnowledge.min_driver)
    minor_compat_floor = forward(DriverKnowledge.minor_compat_floor)
    nvenc_driver = forward(DriverKnowledge.nvenc_driver)
    ptx_isa_cuda = forward(DriverKnowledge.ptx_isa_cuda)
    minor_compat_majors = forward(DriverKnowledge.minor_compat_majors)
    has_minor_compat = forward(DriverKnowledge.has_minor_compat)
    toolkit_package = forward(DriverKnowledge.toolkit_package)
    cuda_runnable = forward(DriverKnowledge.cuda_runnable)
    max_cuda_for_driver = forward(DriverKnowledge.max_cuda_for_driver)
    driver_runs_cuda = forward(DriverKnowledge.driver_runs_cuda)

    # GPU architectures and names (gpu.py)
    architectures = forward(GpuKnowledge.architectures)
    gpu_names = forward(GpuKnowledge.gpu_names)
    driver_drives_gpu = forward(GpuKnowledge.driver_drives_gpu)
    arch_for_cc = forward(GpuKnowledge.arch_for_cc)
    cuda_min_cc = forward(GpuKnowledge.cuda_min_cc)
    first_cuda_for_cc = forward(GpuKnowledge.first_cuda_for_cc)
    forward_compat_gpu = forward(GpuKnowledge.forward_compat_gpu)
    sass_runs = forward(GpuKnowledge.sass_runs)

    # smaller reference tables (reference.py)
    nvrtc_packages = forward(ReferenceKnowledge.nvrtc_packages)
    forward_compat = forward(ReferenceKnowledge.forward_compat)
    api_compat_source = forward(ReferenceKnowledge.api_compat_source)
    architectures_source = forward(ReferenceKnowledge.architectures_source)
    windows_loader_errors = forward(ReferenceKnowledge.windows_loader_errors)
    zlibwapi = forward(ReferenceKnowledge.zlibwapi)
    cudnn_installer_folder = forward(ReferenceKnowledge.cudnn_installer_folder)
    package_of_dll = forward(ReferenceKnowledge.package_of_dll)
    windows_consumers = forward(ReferenceKnowledge.windows_consumers)
    tensorflow_sonames = forward(ReferenceKnowledge.tensorflow_sonames)
    workspace_advice = forward(ReferenceKnowledge.workspace_advice)
    tensorflow_pip_cuda_since = forward(ReferenceKnowledge.tensorflow_pip_cuda_since)
    gpu_peaks = forward(ReferenceKnowledge.gpu_peaks)

    # framework tables (frameworks.py)
    framework_rows = forward(FrameworkKnowledge.framework_rows)
    framework_table = forward(FrameworkKnowledge.framework_table)
    framework_source = forward(FrameworkKnowledge.framework_source)
    tensorflow_pip_wheels_from = forward(FrameworkKnowledge.tensorflow_pip_wheels_from)
    tensorflow_last_windows_gpu = forward(FrameworkKnowledge.tensorflow_last_windows_gpu)
    tensorflow_min_cc = forward(FrameworkKnowledge.tensorflow_min_cc)
    version_check_rule = forward(FrameworkKnowledge.version_check_rule)
    pytorch_arch = forward(FrameworkKnowledge.pytorch_arch)
    tensorflow_row = forward(FrameworkKnowledge.tensorflow_row)
    torch_rows = forward(FrameworkKnowledge.torch_rows)
    torch_default_cuda = forward(FrameworkKnowledge.torch_default_cuda)
    dl4j_releases = forward(FrameworkKnowledge.dl4j_releases)

    # cuDNN releases and their builds (cudnn.py)
    cudnn_releases = forward(CudnnKnowledge.cudnn_releases)
    cudnn_builds = forward(CudnnKnowledge.cudnn_builds)
    cudnn_builds_for_cuda = forward(CudnnKnowledge.cudnn_builds_for_cuda)
    newest_cudnn_build = forward(CudnnKnowledge.newest_cudnn_build)
    variant_era = forward(CudnnKnowledge.variant_era)
    cudnn_min_cc = forward(CudnnKnowledge.cudnn_min_cc)
    cudnn_requirements = forward(CudnnKnowledge.cudnn_requirements)
    blackwell_cuda12 = forward(CudnnKnowledge.blackwell_cuda12)

    # a cuDNN build against a CUDA toolkit (cudnn_fit.py)
    cudnn_cuda_verdict = forward(CudnnFitKnowledge.cudnn_cuda_verdict)

    # whether a release a fix names exists (exists.py)
    cudnn_build_exists = forward(ExistsKnowledge.cudnn_build_exists)
    cudnn_build_exists_on = forward(ExistsKnowledge.cudnn_build_exists_on)
    cudnn_release_to_name = forward(ExistsKnowledge.cudnn_release_to_name)
    framework_releases = forward(ExistsKnowledge.framework_releases)
    framework_release_exists = forward(ExistsKnowledge.framework_release_exists)
    driver_branch_exists = forward(ExistsKnowledge.driver_branch_exists)

    # the cuDNN x CUDA x driver x GPU verdict (pair.py)
    build_for = forward(PairKnowledge.build_for)
    pair_verdict = forward(PairKnowledge.pair_verdict)
    cc_for_gpu = forward(PairKnowledge.cc_for_gpu)

    # matrix's look-ups (lookup.py)
    cuda_lookup = forward(LookupKnowledge.cuda_lookup)
    cudnn_lookup = forward(LookupKnowledge.cudnn_lookup)
    driver_lookup = forward(LookupKnowledge.driver_lookup)
    pair_lookup = forward(LookupKnowledge.pair_lookup)
    framework_lookup = forward(LookupKnowledge.framework_lookup)

    # file layouts, wheels and archive names (layout.py)
    cudnn_layout = forward(LayoutKnowledge.cudnn_layout)
    later_engines = forward(LayoutKnowledge.later_engines)
    cudart_soname = forward(LayoutKnowledge.cudart_soname)
    cudnn_channels = forward(LayoutKnowledge.cudnn_channels)
    cudnn_wheel = forward(LayoutKnowledge.cudnn_wheel)
    cudnn_archive_name = forward(LayoutKnowledge.cudnn_archive_name)

    # which release ships a library name (sonames.py)
    shipped_by = forward(SonameKnowledge.shipped_by)
    pip_project = forward(SonameKnowledge.pip_project)
    optional_library = forward(SonameKnowledge.optional_library)
    symbol_owner = forward(SonameKnowledge.symbol_owner)
    symbol_since = forward(SonameKnowledge.symbol_since)

    # the framework builds pick chooses among (builds.py)
    wheel_code = forward(BuildKnowledge.wheel_code)
    spconv_cuda_builds = forward(BuildKnowledge.spconv_cuda_builds)
    spconv_arch_variable = forward(BuildKnowledge.spconv_arch_variable)
    library_min_cc = forward(BuildKnowledge.library_min_cc)
    install_recipe = forward(BuildKnowledge.install_recipe)
    extension_project = forward(BuildKnowledge.extension_project)
    conda_override = forward(BuildKnowledge.conda_override)
    framework_builds = forward(BuildKnowledge.framework_builds)
    build_pip_project = forward(BuildKnowledge.build_pip_project)

    # checks declared whole in compat/checks.toml (declared.py)
    declared_checks = forward(DeclaredKnowledge.declared_checks)
    declared_check = forward(DeclaredKnowledge.declared_check)

    # container runtimes (containers.py)
    runtime_brands_for = forward(ContainerKnowledge.runtime_brands_for)
    refusal_prefix = forward(ContainerKnowledge.refusal_prefix)
    runtime_source = forward(ContainerKnowledge.runtime_source)
    driver_capabilities = forward(ContainerKnowledge.driver_capabilities)
    cuda_capabilities = forward(ContainerKnowledge.cuda_capabilities)
    no_gpu_devices = forward(ContainerKnowledge.no_gpu_devices)
    capabilities_source = forward(ContainerKnowledge.capabilities_source)
    forward_compat_rule = forward(ContainerKnowledge.forward_compat_rule)

    # Theano releases (theano.py)
    theano_release = forward(TheanoKnowledge.theano_release)
    theano_cudnn_check = forward(TheanoKnowledge.theano_cudnn_check)
    theano_api_removed = forward(TheanoKnowledge.theano_api_removed)
    theano_first_break = forward(TheanoKnowledge.theano_first_break)
    theano_config = forward(TheanoKnowledge.theano_config)
    theano_source = forward(TheanoKnowledge.theano_source)

    # public error reports (pastes.py)
    error_texts = forward(PastesKnowledge.error_texts)
    reports_of = forward(PastesKnowledge.reports_of)
    installer_fetches = forward(PastesKnowledge.installer_fetches)
    newest_fetchable = forward(PastesKnowledge.newest_fetchable)

    # framework features by release (framework_features.py)
    framework_feature = forward(FrameworkFeatureKnowledge.framework_feature)
    framework_build = forward(FrameworkFeatureKnowledge.framework_build)
    framework_builds_by_release = forward(FrameworkFeatureKnowledge.framework_builds_by_release)
    framework_features_source = forward(FrameworkFeatureKnowledge.framework_features_source)
    framework_extras = forward(FrameworkFeatureKnowledge.framework_extras)
    framework_feature_since = forward(FrameworkFeatureKnowledge.framework_feature_since)
    framework_newest_cudnn_major = forward(FrameworkFeatureKnowledge.framework_newest_cudnn_major)
    cuda_wheel = forward(FrameworkFeatureKnowledge.cuda_wheel)
    extension_source = forward(FrameworkFeatureKnowledge.extension_source)

    # the node's health (Xid, clock events) (node.py)
    xid = forward(NodeKnowledge.xid)
    xid_source = forward(NodeKnowledge.xid_source)
    sxid_fatal_word = forward(NodeKnowledge.sxid_fatal_word)
    clock_event_faults = forward(NodeKnowledge.clock_event_faults)
    clock_events_source = forward(NodeKnowledge.clock_events_source)


@functools.lru_cache(maxsize=1)
def load_compat() -> Compat:
    """The knowledge base, read once per process."""
    data, origin = read_all()
    return Compat(data, origin)
