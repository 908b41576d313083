"""compat/status_tables.toml and compat/sonames.toml against NVIDIA's own wheels: the status tables regenerate
byte for byte from the headers (and error-string functions) in the wheels, and every soname row that names a
wheel is a file in it. Real-data tier: the wheels are downloaded once into the shared test cache."""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from hermetic import shipped_compat

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import gen_status_tables  # noqa: E402

pytestmark = pytest.mark.realdata


def _wheel(project: str, version: str) -> Path:
    if os.environ.get("CUDNN_DOCTOR_NO_DOWNLOAD") and not list(
            gen_status_tables.CACHE.glob("%s-%s-*x86_64.whl" % (project.replace("-", "_"), version))):
        pytest.skip("downloads disabled and %s %s not cached" % (project, version))
    try:
        return gen_status_tables.fetch_wheel(project, version)
    except (subprocess.CalledProcessError, IndexError, OSError) as exc:
        pytest.skip("cannot fetch %s %s: %s" % (project, version, exc))


def test_status_tables_regenerate_from_the_wheels():
    for enum in gen_status_tables.ENUMS:
        _wheel(enum.wheel, enum.version)
    assert gen_status_tables.generate() == gen_status_tables.OUT.read_text(encoding="utf-8")


ROWS = [r for table in ("toolkit_sonames", "cudnn_sonames") for r in shipped_compat().table("sonames", table)["rows"]
        if r.get("wheel")]


@pytest.mark.parametrize("row", ROWS, ids=lambda r: "%s-%s" % (r["stem"], r.get("soname", r.get("major"))))
def test_each_soname_row_is_a_file_of_its_wheel(row):
    project, version = row["wheel"].split("==")
    with zipfile.ZipFile(_wheel(project, version)) as zf:
        names = {n.rsplit("/", 1)[-1] for n in zf.namelist()}
    assert "%s.so.%s" % (row["stem"], row.get("soname", row.get("major"))) in names
