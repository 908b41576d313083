"""The typed evidence a pasted error text holds: status codes, loader failures, Windows loader codes, library
names with the releases that ship them, framework version checks, and named conditions (container, architecture,
suspend, XLA, TensorRT, harmless log lines)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

from ..knowledge import Shipped, StatusCode
from .paste_facts import PasteFacts


@dataclass(frozen=True)
class StatusSeen:
    """A status code the text names, by name, number or the library's own message."""

    code: StatusCode
    said: str


@dataclass(frozen=True)
class LoaderFailure:
    """One dynamic-loader failure. kind: missing, permission, undefined-symbol, node-not-defined,
    version-not-found, wrong-elf-class, no-version-info."""

    kind: str
    library: str = ""  # the library that failed to load, lacks the symbol, or lacks the version node
    symbol: str = ""
    node: str = ""  # a symbol version node: 'libnvJitLink.so.12', 'GLIBCXX_3.4.30'
    caller: str = ""  # the library (or program) that asked
    folder: str = ""  # the caller's folder, where the text gives it (an undefined symbol's)


@dataclass(frozen=True)
class WindowsLoad:
    """A Windows loader error code (126, 127, 193, 1455) and the DLL it names, if any."""

    code: int
    meaning: str
    dll: str = ""


@dataclass(frozen=True)
class VersionCheck:
    """A framework's version check as printed: what it found at run time, what it was built with, its rule."""

    framework: str
    library: str  # "cuDNN", "CUDA", "TensorRT"
    runtime: str
    compiled: str
    rule: str  # same-minor, same-major-newer-minor, not-older, same-major, exact
    fits: bool
    source: str = ""


@dataclass(frozen=True)
class Signal:
    """A named condition the text shows (a symptom id of compat/symptoms.toml): container, architecture, suspend, XLA, ..."""

    kind: str
    detail: str = ""  # what the text said about it (a CUDA floor, a compute capability, a file)


@dataclass
class Evidence:
    """Everything decoded from one paste; `platform` is 'windows' when the text is from Windows, else 'linux'."""

    statuses: List[StatusSeen] = field(default_factory=list)
    loader: List[LoaderFailure] = field(default_factory=list)
    windows: List[WindowsLoad] = field(default_factory=list)
    libraries: List[Shipped] = field(default_factory=list)
    checks: List[VersionCheck] = field(default_factory=list)
    signals: List[Signal] = field(default_factory=list)
    cuda: List[str] = field(default_factory=list)  # CUDA releases the text states ("found version 11000")
    gpu_cc: Optional[str] = None  # the GPU's compute capability, where the text states it
    drivers: List[str] = field(default_factory=list)  # NVIDIA driver releases the text states ("driver 515.65.01")
    platform: str = "linux"
    text: str = ""  # the paste itself, for the few answers that read where a file sits
    facts: PasteFacts = field(default_factory=PasteFacts)  # the machine the paste describes (unknown stays None)

    def __bool__(self) -> bool:
        return bool(self.statuses or self.loader or self.windows or self.libraries or self.checks or self.signals)

    def kinds(self) -> List[str]:
        return [s.kind for s in self.signals]

    @property
    def driver_platform(self) -> str:
        """Whose driver a fix installs: 'wsl' where the paste is from WSL, which runs on the Windows driver (a Linux
        driver inside WSL hides it); 'container' where it is from a Linux container, which runs on its host's;
        else the platform."""
        said = {s.value for s in self.facts.os}
        if self.platform != "linux":  # a Windows paste that mentions WSL is still Windows's
            return self.platform
        return "wsl" if "wsl" in said else ("container" if "container" in said else self.platform)

    @property
    def driver_floor_platform(self) -> str:
        """Whose driver releases a floor names: Windows's under WSL too (its driver is the Windows one: CUDA 12.4
        needs 551.61 there, not Linux's 550.54.14)."""
        return "windows" if self.driver_platform in ("windows", "wsl") else "linux"

    @property
    def python(self) -> Optional[str]:
        """The Python the paste names (a path's python3.X, a version line), or None where it says none."""
        return self.facts.python.value if self.facts.python else None
