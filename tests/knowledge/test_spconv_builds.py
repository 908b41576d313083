"""compat/framework_builds.toml [spconv]: every spconv-cuXYZ project explain may name is on PyPI with a release.
Skipped offline."""
from __future__ import annotations

import os

import pytest

from hermetic import shipped_compat

pytestmark = [pytest.mark.slow, pytest.mark.realdata]


@pytest.mark.parametrize("cuda", [str(c) for c in shipped_compat().table("framework_builds", "spconv")["cuda"]])
def test_each_spconv_build_the_table_names_is_on_pypi(cuda):
    if os.environ.get("CUDNN_DOCTOR_NO_DOWNLOAD"):
        pytest.skip("no downloads")
    import requests

    project = "spconv-cu%s" % cuda.replace(".", "")
    try:
        resp = requests.get("https://pypi.org/simple/%s/" % project, timeout=30,
                            headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    except requests.RequestException:
        pytest.skip("PyPI cannot be reached")
    assert resp.status_code == 200, (project, resp.status_code)  # 404: no such project on PyPI
    assert resp.json().get("versions"), project
