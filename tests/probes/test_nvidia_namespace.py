"""Which `nvidia` folders `import nvidia.cudnn` reads (JAX's plugin loads cuDNN from there): the probe's answer beside
real Python's import of the same trees, for every order of a namespace portion (NVIDIA's newer wheels ship no
nvidia/__init__.py) and a regular package (older ones did), with and without cudnn in each."""
from __future__ import annotations

import itertools
import os
import subprocess
import sys

import pytest

from cudnn_doctor.probes.preloads import nvidia_package


class _Files:
    """The two questions nvidia_package asks of the host seam, answered from this machine's files."""

    lexists = staticmethod(os.path.lexists)
    is_dir = staticmethod(os.path.isdir)


KINDS = {"portion": False, "regular": True}


def _tree(root, name, regular, with_cudnn):
    package = root / name / "nvidia"
    package.mkdir(parents=True)
    if regular:
        (package / "__init__.py").write_text("")
    if with_cudnn:
        (package / "cudnn").mkdir()
        (package / "cudnn" / "__init__.py").write_text("")
    return str(root / name)


def _python_says(entries):
    code = ("import sys; sys.path[:0] = %r\ntry:\n import nvidia.cudnn as c; print(c.__file__)\n"
            "except ImportError:\n print('')" % (list(entries),))
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    return os.path.dirname(os.path.dirname(out)) if out else None


@pytest.mark.parametrize("layout", list(itertools.product(KINDS, [True, False], KINDS, [True, False])),
                         ids=lambda v: "-".join(map(str, v)))
def test_the_probe_reads_the_nvidia_package_python_imports(tmp_path, layout):
    first = _tree(tmp_path, "a", KINDS[layout[0]], layout[1])
    second = _tree(tmp_path, "b", KINDS[layout[2]], layout[3])
    folders = [p for p in nvidia_package(_Files, [first, second]) if os.path.isdir(os.path.join(p, "cudnn"))]
    assert (folders[0] if folders else None) == _python_says([first, second])
