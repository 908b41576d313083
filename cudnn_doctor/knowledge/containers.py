"""What the NVIDIA container runtime does with an image (compat/containers.toml): brand words, driver
capabilities, and where forward compatibility through an image's cuda-compat libcuda works."""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Tuple

from .tables import Domain


class ContainerKnowledge(Domain):
    def runtime_brands(self) -> List[str]:
        """The brand words a GPU can show to a `brand=` requirement (every other NVML brand reads 'Unknown')."""
        return list(self.table("containers", "runtime").get("brands", []))

    def runtime_brands_for(self, gpu_names: Iterable[Optional[str]]) -> List[str]:
        """The brand words GPUs of these names can show the runtime ([brand_by_name]); every word when unsure."""
        every = self.runtime_brands()
        found: List[str] = []
        for name in gpu_names:
            words = (name or "").lower().split()
            row = next((r for r in self.table("containers", "brand_by_name").get("rows", [])
                        if str(r.get("word", "")).lower() in words), None)
            if row is None:
                return every
            found += [b for b in row.get("brands", []) if b not in found]
        return found or every

    def refusal_prefix(self) -> str:
        """What the runtime's refusal lines start with (the CLI that prints them)."""
        return str(self.table("containers", "runtime").get("refusal_prefix", ""))

    def runtime_source(self) -> str:
        return str(self.table("containers", "runtime").get("source", ""))

    def driver_capabilities(self, value: Optional[str]) -> Tuple[List[str], List[str]]:
        """(capabilities the runtime mounts, words it does not know) for an NVIDIA_DRIVER_CAPABILITIES value."""
        table = self.table("containers", "driver_capabilities")
        words = [w.strip() for w in (value or "").split(",") if w.strip()]
        if not words:
            return list(table.get("default", [])), []
        known = list(table.get("known", []))
        if "all" in words:
            return [k for k in known if k != "all"], [w for w in words if w not in known]
        return [w for w in words if w in known], [w for w in words if w not in known]

    def cuda_capabilities(self) -> List[str]:
        return list(self.table("containers", "driver_capabilities").get("cuda_needs", []))

    def no_gpu_devices(self, value: Optional[str]) -> bool:
        """Whether NVIDIA_VISIBLE_DEVICES, when set to ``value``, leaves the container without any GPU."""
        return value is not None and value.strip() in self.table("containers", "driver_capabilities").get(
            "no_gpu_devices", [])

    def capabilities_source(self) -> str:
        return str(self.table("containers", "driver_capabilities").get("source", ""))

    def forward_compat_rule(self) -> Dict[str, Any]:
        """[forward_compat]: the GPUs it works on, its errors, its source."""
        return dict(self.table("containers", "forward_compat"))
