"""Whether a version a fix or an answer names exists: a cuDNN release built for a CUDA major (and for a platform:
NVIDIA's wheels per platform), a framework release on PyPI, a driver branch. The one validator every remedies
builder that names a version, `explain` and `matrix` ask."""
from __future__ import annotations

from typing import Any, List, NamedTuple, Optional

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from ..versions import cuda_label, major_of, mm_text, release3, ver
from .cudnn import CudnnKnowledge
from .derived import DerivedKnowledge
from .driver import DriverKnowledge
from .tables import Domain, Tables

# Where the knowledge cannot tell: said, not guessed.
INSUFFICIENT = "insufficient metadata"
# A machine type as NVIDIA's downloads name its platform (an Arm server's cuDNN is the sbsa build; arm64 = aarch64).
_ARCH = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64", "sbsa": "aarch64"}


class Existence(NamedTuple):
    """True (it exists), False (the knowledge says it does not) or None (cannot tell), and why."""

    exists: Optional[bool]
    why: str


def platform_key(platform: str, machine: Optional[str]) -> str:
    """'linux-x86_64', 'linux-aarch64', 'windows-x86_64', 'windows-arm64': as compat's [wheel_platforms] names them."""
    arch = _ARCH.get((machine or "x86_64").lower(), (machine or "").lower())
    if platform == "windows":
        return "windows-" + ("arm64" if arch == "aarch64" else arch)
    return "linux-" + arch


# The PyPI project each framework's releases are listed under in the derived knowledge.
_FRAMEWORK_OF = {"torch": "torch", "pytorch": "torch", "tensorflow": "tensorflow", "jax": "jax", "jaxlib": "jax"}


class ExistsKnowledge(Domain):
    """Existence questions: True (it exists), False (the knowledge says it does not), None (cannot tell)."""

    def __init__(self, tables: Tables, cudnn: CudnnKnowledge, drivers: DriverKnowledge,
                 published: DerivedKnowledge) -> None:
        super().__init__(tables)
        self.cudnn = cudnn
        self.drivers = drivers
        self.published = published

    def cudnn_build_exists(self, release: str, cuda: Any) -> Optional[bool]:
        """Whether NVIDIA made a build of cuDNN `release` for `cuda` ('13' = any build of that major where the major
        has minor-version compatibility, '10.2' = that exact minor before it); None when nothing is known of it."""
        label = cuda_label(cuda)
        cm = major_of(label) if label else None
        r = release3(release)
        if cm is None or r is None:
            return None
        family = self.drivers.has_minor_compat(cm)
        exact = mm_text(label) if "." in str(label) else None
        builds = self.cudnn.cudnn_builds(str(r))
        if any((b.cuda_major == cm) if (family or exact is None) else (exact in b.cuda) for b in builds):
            return True
        majors = self.published.cudnn_release_cuda_majors(str(r))
        if family and majors:  # PyPI and NVIDIA's manifests list the release's builds (9.28.1: CUDA 13 only)
            return cm in majors
        era = self.cudnn.variant_era(cm) if family else None
        if era:
            first, last = release3(era.get("first")), release3(era.get("last"))
            if (first is None or r >= first) and (last is None or r <= last) and self.cudnn.cudnn_release_known(str(r)):
                return True
        return False if (builds or self.cudnn.cudnn_release_known(str(r))) else None

    def cudnn_build_exists_on(self, release: str, cuda: Any, platform: str = "linux", machine: Optional[str] = "x86_64",
                              channel: str = "pip") -> Existence:
        """Whether cuDNN `release` for `cuda` exists for this platform and machine, as NVIDIA's wheel
        (`channel="pip"`: PyPI's files, compat/cudnn_layout.toml [wheel_platforms]) or archive (`"archive"`: compat
        names the archives per platform but does not list which releases were published for which, so only
        linux-x86_64, the support matrices' platform, is answered)."""
        where, r, cm = platform_key(platform, machine), release3(release), major_of(cuda_label(cuda))
        no_build = Existence(False, "NVIDIA made no cuDNN %s build for CUDA %s" % (release, cuda))
        if r is None or cm is None:
            return no_build
        rows = [row for row in self.table("cudnn_layout", "wheel_platforms").get("rows", [])
                if str(row.get("project", "")).endswith("-cu%d" % cm)] if channel == "pip" else []
        here = {release3(v) for row in rows if row.get("platform") == where for v in row.get("releases", [])}
        if r in here:  # a wheel on PyPI is a build for that CUDA major: no need to ask the slower tables
            return Existence(True, "PyPI has a %s wheel of %s %s" % (where, rows[0]["project"], r))
        built = self.cudnn_build_exists(release, cuda)
        if built is False:
            return no_build
        if channel != "pip":
            if where == "linux-x86_64":
                return Existence(built, "NVIDIA's support matrix and releases list it" if built else INSUFFICIENT)
            return Existence(None, "%s: compat names NVIDIA's %s archives but not which releases were published "
                                   "for it" % (INSUFFICIENT, where))
        if not rows:
            return Existence(None, "%s: compat lists no cuDNN wheels for CUDA %d" % (INSUFFICIENT, cm))
        project = str(rows[0]["project"])
        listed = {release3(v) for row in rows for v in row.get("releases", [])}
        if r > max(v for v in listed if v is not None):
            return Existence(None, "%s: compat's list of %s wheels ends before %s" % (INSUFFICIENT, project, r))
        return Existence(False, "PyPI has no %s wheel of %s %s" % (where, project, r))

    def newest_cudnn_wheel(self, project: str, major: int, platform: str = "linux",
                           machine: Optional[str] = "x86_64", glibc: Optional[str] = None) -> Optional[str]:
        """The newest cuDNN `major` release (major.minor.patch) PyPI has a `project` wheel of for this platform and
        processor ([wheel_platforms]) that installs on a node with this glibc (a row's manylinux floor; None: not
        judged); None where it lists none."""
        where, node = platform_key(platform, machine), ver(glibc) if glibc else None
        releases = [release3(v) for row in self.table("cudnn_layout", "wheel_platforms").get("rows", [])
                    if row.get("project") == project and row.get("platform") == where
                    and (node is None or not row.get("glibc") or (ver(str(row["glibc"])) or node) <= node)
                    for v in row.get("releases", [])]
        mine = [r for r in releases if r is not None and r.release[0] == major]
        return str(max(mine)) if mine else None

    def cudnn_release_to_name(self, cuda: Any, wanted: Optional[str] = None,
                              cudnn_major: Optional[int] = None) -> Optional[str]:
        """The cuDNN release a fix names for `cuda`: `wanted` where NVIDIA built it for that CUDA (or nothing is
        known against it), else the newest release of its major (`cudnn_major`, else `wanted`'s) that was, else
        (no major asked for) the newest of any major; None when the knowledge has no such build."""
        if wanted and release3(wanted) is not None and self.cudnn_build_exists(wanted, cuda) is not False:
            return str(release3(wanted))
        major = cudnn_major if cudnn_major is not None else major_of(wanted) if wanted else None
        newest = self.cudnn.newest_cudnn_build(cuda, major)
        return newest or (self.cudnn.newest_cudnn_build(cuda) if cudnn_major is None else None)

    def framework_releases(self, framework: str) -> List[str]:
        """The releases of a framework the knowledge lists (the wheels' Requires-Dist read from PyPI)."""
        project = _FRAMEWORK_OF.get(framework.lower(), framework.lower())
        return [str(r["version"]) for r in self.published.framework_pins(project)]

    def framework_release_exists(self, framework: str, version: str) -> Optional[bool]:
        """Whether `pip install FRAMEWORK==version` names a release on PyPI ('2.5' is 2.5.0, as pip reads it); None
        for a framework the knowledge does not list or a release outside the range it lists."""
        known = [v for v in (ver(r) for r in self.framework_releases(framework)) if v is not None]
        try:
            spec = SpecifierSet("==%s" % version.split("+")[0])
        except InvalidSpecifier:
            return False
        want = ver(version.split("+")[0].rstrip(".*"))
        if not known or want is None:
            return None
        if any(spec.contains(v, prereleases=True) for v in known):
            return True
        # The list starts where the wheels' records were read (torch 1.13): older or newer releases are not known.
        return None if want > max(known) or want < min(known) else False

    def driver_branches(self) -> List[int]:
        """The Linux driver branches the knowledge names: each CUDA release's driver, the minor-version floors and
        the architectures' first and last branches."""
        rows = self.drivers.toolkit_rows()
        found = {major_of(r.get("linux")) for r in rows} | {major_of(r.get("branch")) for r in rows}
        for row in self.table("cuda_driver", "minor_version_compat").get("rows", []):
            found |= {major_of(row.get("min_branch")), major_of(row.get("linux"))}
        for arch in self.table("gpu_arch", "architectures").get("rows", []):
            found |= {major_of(arch.get("first_driver_branch")), major_of(arch.get("last_driver_branch"))}
        return sorted(b for b in found if b is not None)

    def driver_branch_exists(self, branch: Any) -> Optional[bool]:
        """Whether NVIDIA shipped a Linux driver branch (R550 yes; the knowledge lists each CUDA release's); None for
        one newer than the knowledge or between two it lists (branches it has no CUDA release for)."""
        want, known = major_of(branch), self.driver_branches()
        if want is None or not known:
            return None
        if want in known:
            return True
        return False if want < known[0] else None
