"""Fixtures the hang and budget tests share: one driver, toolkit and cuDNN machine to break in different ways."""
from __future__ import annotations

import pytest

from kit import Gpu

MA = "/usr/lib/x86_64-linux-gnu"


@pytest.fixture
def gpu_machine(machine):
    """A working CUDA 13.0 / cuDNN 9.14 machine with one GPU (the libraries in the multiarch folder)."""
    machine.driver("580.95.05", cuda=13000, gpus=[Gpu()])
    machine.ld_conf("x86_64-linux-gnu.conf", [MA])
    machine.toolkit("13.0.2")
    machine.cudnn("9.14.0", MA, "/usr/include/x86_64-linux-gnu", cuda=13000)
    return machine
