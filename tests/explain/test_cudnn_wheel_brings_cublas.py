"""What explain's answer to a cuDNN sub-library without its cuBLAS rests on (answer_dlopen.cudnn_needs_cublas):
NVIDIA's cuDNN wheel for CUDA N requires the nvidia-cublas-cuN wheel, so installing it brings the cuBLAS it opens.
Asked of PyPI's own metadata for the release each answer names (cuDNN 8 and 9, CUDA 11 and 12). Skipped offline."""
from __future__ import annotations

import re

import pytest
from packaging.requirements import Requirement
from packaging.version import Version
from realdata import wheel_requires

from cudnn_doctor.explain import explain

pytestmark = [pytest.mark.slow, pytest.mark.realdata]


@pytest.mark.parametrize("cudnn, cuda", [(8, 11), (8, 12), (9, 12)])
def test_the_cudnn_wheel_the_answer_names_requires_the_cublas_wheel_of_its_cuda(cudnn, cuda):
    sublibrary = "libcudnn_ops_infer.so.8" if cudnn == 8 else "libcudnn_ops.so.9"
    text = ("Could not load library %s. Error: libcublas.so.%d: cannot open shared object file: No such file or "
            "directory" % (sublibrary, cuda))
    fix = explain(text, check=False).explanation.fix
    install = next(c for c in fix.commands if "nvidia-cudnn-cu" in c)
    wanted = Requirement(install.split(None, 2)[2].strip('"'))
    assert wanted.name == "nvidia-cudnn-cu%d" % cuda
    # the release the answer says is the newest of that major for this CUDA ("cuDNN 8.9.6 is the newest 8.x ...")
    said = re.search(r"\(cuDNN (\d+\.\d+\.\d+) is the newest", fix.text).group(1)
    requires = None
    for build in _builds_on_pypi(wanted.name, said):
        assert wanted.specifier.contains(build)
        requires = wheel_requires(wanted.name, build)
        break
    if requires is None:
        pytest.skip("PyPI cannot be reached")
    assert "nvidia-cublas-cu%d" % cuda in [Requirement(r).name for r in requires], requires


def _builds_on_pypi(project, release):
    """PyPI's releases of `project` that are builds of cuDNN `release` (8.9.6 -> 8.9.6.50), newest first."""
    import os

    import requests

    if os.environ.get("CUDNN_DOCTOR_NO_DOWNLOAD"):
        return []
    try:
        doc = requests.get("https://pypi.org/simple/%s/" % project, timeout=30,
                           headers={"Accept": "application/vnd.pypi.simple.v1+json"}).json()
    except (requests.RequestException, ValueError):
        return []
    builds = [Version(v) for v in doc.get("versions", []) if v.startswith(release + ".")]
    return [str(v) for v in sorted(builds, reverse=True) if not v.is_prerelease]
