"""compat/framework_builds.toml [wheel_code] against the wheels themselves: each row is what the fat-binary reader
finds in the wheel it names (where the wheel is in the test cache), each names its PyPI page, and the documented
floors pick uses for JAX agree with the GPU code JAX's own plugin wheels carry."""
from __future__ import annotations

import pytest
from realdata import CACHE

from cudnn_doctor.refresh.wheel_code import project_of, wheel_code
from cudnn_doctor.versions import mm
from hermetic import shipped_compat

COMPAT = shipped_compat()
ROWS = COMPAT.table("framework_builds", "wheel_code")["rows"]


@pytest.mark.realdata
@pytest.mark.parametrize("row", ROWS, ids=[r["wheel"] for r in ROWS])
def test_each_row_is_what_its_wheel_carries(row):
    wheel = CACHE / "wheels" / row["wheel"]
    if not wheel.is_file():
        pytest.skip("%s is not in the test cache (scripts/read_build_code.py --pip %s==%s reads it)" % (
            row["wheel"], row["project"], row["version"]))
    code = wheel_code(str(wheel))
    assert code is not None
    assert (code["sass"], code["ptx"]) == (row["sass"], row["ptx"])
    assert ", ".join(code["libraries"]) == row["library"]
    if code["cuda_major"]:
        assert code["cuda_major"] == row["cuda"].split(".")[0]


@pytest.mark.parametrize("row", ROWS, ids=[r["wheel"] for r in ROWS])
def test_each_row_names_its_wheel_and_pypi_page(row):
    assert project_of(row["wheel"]) == row["project"]
    assert row["wheel"].split("-")[1] == row["version"]
    assert row["source"] == "https://pypi.org/project/%s/%s/" % (row["project"], row["version"])
    assert row["sass"] or row["ptx"]


@pytest.mark.parametrize("plugin", COMPAT.framework_rows("jax"), ids=lambda r: r["plugin"])
def test_jax_documented_floor_has_code_in_its_pjrt_wheel(plugin):
    """JAX compiles most kernels at run time; the kernels its PJRT plugin ships prebuilt start at or below the
    documented lowest compute capability, so the floor pick uses is not lower than the code that exists."""
    major = plugin["extra"].replace("cuda", "")
    rows = [r for r in ROWS if r["project"] == "jax-cuda%s-pjrt" % major]
    if not rows:
        pytest.skip("no jax-cuda%s-pjrt wheel read" % major)
    lowest = min(mm("%s.%s" % (int(a[3:]) // 10, int(a[3:]) % 10)) for a in rows[0]["sass"])
    assert lowest <= mm(plugin["min_cc"])
