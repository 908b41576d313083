"""How cuDNN and CUDA ship: file layouts, runtime sonames, pip wheels and archive names (cudnn_layout.toml)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ..versions import major_of, mm, mm_text, release3, release3_of
from .cudnn import CudnnKnowledge
from .tables import Domain, Tables


class LayoutKnowledge(Domain):
    """Where files go and what they are called; archive names depend on which builds exist."""

    def __init__(self, tables: Tables, cudnn: CudnnKnowledge) -> None:
        super().__init__(tables)
        self.cudnn = cudnn

    def cudnn_layout(self, major: int) -> Dict[str, Any]:
        return self.table("cudnn_layout", "v%d" % major)

    def later_engines(self, major: int, release: Optional[str]) -> List[str]:
        """The engine sub-libraries a `release` opens by name beyond its major's fixed list (9.20's
        libcudnn_engines_tensor_ir.so.9); none where the release is not known. A copy may lack them and run."""
        have = release3(release) if release else None
        since = self.cudnn_layout(major).get("linux_engines_since", {})
        return [] if have is None else sorted(n for n, first in since.items()
                                              if (r := release3(first)) is not None and have >= r)

    def cudart_soname(self, cuda: str) -> Optional[str]:
        """'libcudart.so.11.0' for CUDA 11.8: the name a program built for that CUDA asks the loader for."""
        want = mm(cuda)
        if want is None:
            return None
        version = Version("%d.%d" % want)
        for row in self.table("cudnn_layout", "cudart_soname").get("rows", []):
            if version in SpecifierSet(row["cuda"]):
                return str(row["soname"]).format(major=want[0], minor=want[1])
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
            if r is not None and release3_of(row["era_from"]) <= r <= release3_of(row["era_to"]):
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
                    family = [b for b in self.cudnn.cudnn_builds(str(r))
                              if b.cuda_major == major and b.cuda and b.family]
                    if family:
                        cuda_text = family[0].cuda[-1]
                    elif cuda_text is None:
                        return None
                return (pattern.replace("<cuda_major>", str(major)).replace("<cuda>", cuda_text or str(cuda))
                        .replace("<version>", "%s.*" % r))
        return None
