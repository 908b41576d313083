"""Theano's real sdists from PyPI, downloaded once and cached, for the tests that read Theano's own source."""
from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Callable, Optional

from realdata import CACHE

# Every release compat/theano.toml describes.
RELEASES = ("0.8.2", "0.9.0", "1.0.0", "1.0.1", "1.0.2", "1.0.3", "1.0.4", "1.0.5")


def sdist_file(version: str) -> Optional[Path]:
    """The cached Theano-<version>.tar.gz, fetched with `pip download` on first use; None when offline."""
    folder = CACHE / "sdists"
    found = sorted(folder.glob("Theano-%s.tar.gz" % version))
    if found or os.environ.get("CUDNN_DOCTOR_NO_DOWNLOAD"):
        return found[0] if found else None
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                    "--timeout", "15", "--retries", "1",
                    "Theano==%s" % version, "-d", str(folder)], capture_output=True, text=True)
    found = sorted(folder.glob("Theano-%s.tar.gz" % version))
    return found[0] if found else None


def _cached_tree(target: Path, version: str, build: Callable[[Path, Path], bool], inner: str = "") -> Optional[Path]:
    """`target`, built once from the sdist: build(archive, tmp) fills a scratch folder (False: it could not), whose
    `inner` folder then moves into place. None when the sdist or the build cannot be had."""
    if (target / ".complete").exists():
        return target
    archive = sdist_file(version)
    if archive is None:
        return None
    tmp = target.with_name(target.name + ".tmp%d" % os.getpid())
    if not build(archive, tmp):
        return None
    if target.exists():
        import shutil

        shutil.rmtree(target)
    os.replace(tmp / inner if inner else tmp, target)
    if inner:
        tmp.rmdir()
    (target / ".complete").write_text("ok")
    return target


def sdist_tree(version: str) -> Optional[Path]:
    """The sdist unpacked (tarfile's data filter: no links out, no device files); None when it cannot be had."""

    def unpack(archive: Path, tmp: Path) -> bool:
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        return True

    return _cached_tree(CACHE / "sdists" / "unpacked" / ("Theano-%s" % version), version, unpack,
                        inner="Theano-%s" % version)


def installed_tree(version: str) -> Optional[Path]:
    """The sdist installed by pip (`pip install --no-deps --target`): the real site-packages layout, with the
    dist-info pip writes; None when it cannot be had."""

    def install(archive: Path, tmp: Path) -> bool:
        proc = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-compile",
                               "--timeout", "15", "--target", str(tmp), str(archive)], capture_output=True, text=True)
        return proc.returncode == 0

    return _cached_tree(CACHE / "sdists" / "installed" / ("Theano-%s" % version), version, install)
