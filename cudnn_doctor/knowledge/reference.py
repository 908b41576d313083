"""Smaller reference tables as typed questions: package names, Windows DLL facts, catalogue thresholds, bench peaks
(compat/packages, windows, catalogue, gpu_peaks, cuda_driver [forward_compat] .toml)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from .tables import Domain


class ReferenceKnowledge(Domain):
    """Read-only look-ups that callers outside knowledge/ use instead of reading tables themselves."""

    def nvrtc_packages(self) -> Dict[str, Any]:
        """NVRTC's package names per channel (pip per CUDA major, apt/dnf/conda patterns)."""
        return dict(self.table("packages", "nvrtc"))

    def forward_compat(self) -> Dict[str, Any]:
        """NVIDIA's forward-compatibility rules: the cuda-compat package, its library folder, supported GPUs."""
        return dict(self.table("cuda_driver", "forward_compat"))

    def api_compat_source(self) -> str:
        return str(self.table("cudnn", "api_compat").get("source", ""))

    def architectures_source(self) -> str:
        return str(self.table("gpu_arch", "architectures").get("source", ""))

    def windows_loader_errors(self) -> List[Dict[str, Any]]:
        """Windows error codes a failed DLL load reports (126, 127, 193, 1455), with their system message."""
        return list(self.table("windows", "loader_errors").get("rows", []))

    def package_of_dll(self, dll: str) -> Optional[str]:
        """The Python package whose own Windows wheel ships ``dll`` in its folder (fbgemm.dll: torch), or None."""
        name = dll.lower()
        return next((str(r["package"]) for r in self.table("windows", "package_dlls").get("rows", [])
                     if name in (d.lower() for d in r["dlls"])), None)

    def zlibwapi(self) -> Dict[str, Any]:
        """Which cuDNN releases load zlibwapi.dll on Windows, and where it comes from."""
        return dict(self.table("windows", "zlibwapi"))

    def cudnn_installer_folder(self) -> str:
        """Where NVIDIA's Windows cuDNN installer puts its DLLs ('C:\\Program Files\\NVIDIA\\CUDNN\\v<cudnn
        major.minor>\\bin\\<cuda major.minor>'), or '' where the table does not say."""
        row = self.table("windows", "cudnn_installer")
        layout = str(row.get("layout", "")).split("\\*.dll", 1)[0]
        return "%s\\%s" % (row["root"], layout) if row.get("root") and layout else ""

    def windows_consumers(self) -> List[Dict[str, Any]]:
        """Framework libraries on Windows that import cuDNN or the CUDA runtime."""
        return list(self.table("windows", "consumers").get("rows", []))

    def tensorflow_sonames(self, cuda_major: str) -> List[str]:
        """The CUDA libraries TensorFlow built for a CUDA major dlopens."""
        rows = self.table("catalogue", "tensorflow_sonames").get("rows", [])
        return next((list(r["sonames"]) for r in rows if str(r["cuda_major"]) == str(cuda_major)), [])

    def workspace_advice(self) -> Dict[str, Any]:
        """The small-GPU convolution-workspace thresholds (catalogue E5)."""
        return dict(self.table("catalogue", "workspace"))

    def tensorflow_pip_cuda_since(self) -> str:
        return str(self.table("catalogue", "tensorflow_pip_cuda")["since"])

    def gpu_peaks(self) -> Dict[str, Any]:
        """bench's ceiling: compat/gpu_peaks.toml as read (gpus, healthy shares, dtype_min_cc)."""
        peaks: Dict[str, Any] = self.data["gpu_peaks"]
        return peaks
