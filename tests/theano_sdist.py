"""Theano's real sdists from PyPI, downloaded once and cached, for the tests that read Theano's own source."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Callable, Optional

from realdata import CACHE, cache_lock, filled_once

# Every release compat/theano.toml describes.
RELEASES = ("0.8.2", "0.9.0", "1.0.0", "1.0.1", "1.0.2", "1.0.3", "1.0.4", "1.0.5")


def sdist_file(version: str) -> Optional[Path]:
    """The cached Theano-<version>.tar.gz, fetched with `pip download` on first use; None when offline. pip writes
    into a private folder under the cache lock and the file is moved in whole, as realdata.download_wheel does."""
    folder = CACHE / "sdists"
    pattern = "Theano-%s.tar.gz" % version
    found = sorted(folder.glob(pattern))
    if found or os.environ.get("CUDNN_DOCTOR_NO_DOWNLOAD"):
        return found[0] if found else None
    with cache_lock(folder / pattern):
        found = sorted(folder.glob(pattern))
        if found:  # another run fetched it while this one waited
            return found[0]
        private = folder / (".download-%d" % os.getpid())
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                        "--timeout", "15", "--retries", "1", "Theano==%s" % version, "-d", str(private)],
                       capture_output=True, text=True)
        for archive in private.glob(pattern):
            os.replace(archive, folder / archive.name)
        shutil.rmtree(private, ignore_errors=True)
        found = sorted(folder.glob(pattern))
        return found[0] if found else None


def _cached_tree(target: Path, version: str, build: Callable[[Path, Path], bool], inner: str = "") -> Optional[Path]:
    """`target`, built once from the sdist (realdata.filled_once: under the cache lock, moved into place whole):
    build(archive, scratch) fills a scratch folder (False: it could not), whose `inner` folder becomes the tree.
    None when the sdist or the build cannot be had."""
    def fill(tmp: Path) -> bool:
        archive = sdist_file(version)
        if archive is None:
            return False
        scratch = tmp.with_name(tmp.name + ".build")
        shutil.rmtree(scratch, ignore_errors=True)
        if not build(archive, scratch):
            shutil.rmtree(scratch, ignore_errors=True)
            return False
        os.replace(scratch / inner if inner else scratch, tmp)
        shutil.rmtree(scratch, ignore_errors=True)
        return True

    return filled_once(target, fill)


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
