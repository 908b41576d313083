"""compat/windows.toml [package_dlls], the DLLs a package's own Windows wheel ships in its folder (explain reads a
bare "error loading fbgemm.dll" as PyTorch's install by it), against the real wheels' file lists on PyPI, read by
HTTP range requests on each wheel's zip directory. Skipped offline."""
from __future__ import annotations

import pytest
from realdata import wheel_members

from cudnn_doctor.knowledge import load_compat

pytestmark = [pytest.mark.slow, pytest.mark.realdata]


def test_every_dll_of_the_table_is_in_one_of_the_named_releases_wheels_folder():
    rows = load_compat().table("windows", "package_dlls")["rows"]
    assert rows
    for row in rows:
        folder = row["folder"].replace("\\", "/") + "/"
        shipped = set()
        for release in row["releases"]:
            members = wheel_members(row["package"], release, "cp312-win_amd64.whl")
            if members is None:
                pytest.skip("PyPI cannot be reached")
            shipped |= {m[len(folder):].lower() for m in members if m.startswith(folder) and m.endswith(".dll")}
        assert {d.lower() for d in row["dlls"]} <= shipped, sorted({d.lower() for d in row["dlls"]} - shipped)
        assert shipped <= {d.lower() for d in row["dlls"]}, sorted(shipped - {d.lower() for d in row["dlls"]})
