"""The zipapp's __main__: unpack once into a per-build folder, then run cudnn-doctor from there.

scripts/build_zipapp.sh copies this file into dist/cudnn-doctor.pyz with BUILD_ID filled in. The native, smoke and
bench children run as scripts beside their modules and pynvml must import in them, so the code needs real files:
the first run on a machine unpacks the zip (about a quarter of a second); every later run only finds that folder
and imports from it, through os and sys alone, so it starts as fast as an installed cudnn-doctor.
"""
import os
import sys

BUILD_ID = "@BUILD_ID@"  # a digest of everything in the zip, so a new build never runs an old unpacked copy
MIN_PYTHON = "@MIN_PYTHON@"  # the oldest Python every packed dependency accepts
DONE = ".unpacked"
RETIRE_AFTER = 14 * 86400  # an unpacked build no run has used for this long is removed when another is unpacked


def _candidates():
    """Where the unpacked copy may live: $CUDNN_DOCTOR_ZIPAPP_DIR, the user's cache, else a private temp folder."""
    if os.environ.get("CUDNN_DOCTOR_ZIPAPP_DIR"):
        yield os.environ["CUDNN_DOCTOR_ZIPAPP_DIR"], False
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    yield os.path.join(cache, "cudnn-doctor", "zipapp"), False
    import tempfile

    # A shared temp folder: only one this user created and alone can write, or another user could plant code.
    yield os.path.join(tempfile.gettempdir(), "cudnn-doctor-zipapp-%d" % os.getuid()), True


def _usable(base, private):
    try:
        os.makedirs(base, mode=0o700, exist_ok=True)
        if private:
            st = os.lstat(base)
            if st.st_uid != os.getuid() or st.st_mode & 0o022 or not os.path.isdir(base) or os.path.islink(base):
                return False
        return os.access(base, os.W_OK | os.X_OK)
    except OSError:
        return False


def _unpack(archive, base):
    """Unpack into a fresh folder beside the final one and rename it into place: a run killed half-way or two
    runs at once never leave a half-filled folder where the next run would import from."""
    import shutil
    import tempfile
    import zipfile

    staging = tempfile.mkdtemp(prefix=".unpacking-", dir=base)
    try:
        # The code is one inner archive (payload.zip, stored), so that every start reads a two-entry directory.
        with zipfile.ZipFile(archive) as outer, outer.open("payload.zip") as raw, zipfile.ZipFile(raw) as zf:
            zf.extractall(staging)
        open(os.path.join(staging, DONE), "w").close()
        os.rename(staging, os.path.join(base, BUILD_ID))
    except OSError:
        if not os.path.isfile(os.path.join(base, BUILD_ID, DONE)):  # not another run winning the race
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    _retire_old_builds(base)


def _retire_old_builds(base):
    """Each upgrade unpacks a new build beside the old ones (a few MB each): remove the builds no run has started
    for RETIRE_AFTER, and staging folders of unpacks killed a day ago or more. A build in use is marked at each
    start (``_mark_used``), so a long-lived old version keeps its folder."""
    import shutil
    import time

    now = time.time()
    try:
        names = os.listdir(base)
    except OSError:
        return
    for name in names:
        path = os.path.join(base, name)
        try:
            if name == BUILD_ID or os.path.islink(path) or not os.path.isdir(path):
                continue
            if name.startswith(".unpacking-"):
                stale = os.lstat(path).st_mtime < now - 86400
            else:
                marker = os.path.join(path, DONE)
                stale = os.path.isfile(marker) and os.stat(marker).st_mtime < now - RETIRE_AFTER
            if stale:
                shutil.rmtree(path, ignore_errors=True)
        except OSError:
            continue


def _mark_used(folder):
    """Touch the build's marker at most once a day: retiring goes by it, and a warm start stays write-free."""
    import time

    marker = os.path.join(folder, DONE)
    try:
        if os.stat(marker).st_mtime < time.time() - 86400:
            os.utime(marker)
    except OSError:
        pass


def _home():
    archive = os.path.dirname(os.path.abspath(__file__))
    for base, private in _candidates():
        folder = os.path.join(base, BUILD_ID)
        if os.path.isfile(os.path.join(folder, DONE)):
            _mark_used(folder)
            return folder
        if _usable(base, private):
            _unpack(archive, base)
            return folder
    sys.stderr.write("cudnn-doctor: no writable folder to unpack %s into; set CUDNN_DOCTOR_ZIPAPP_DIR\n" % archive)
    sys.exit(3)


if __name__ == "__main__":
    if sys.version_info[:2] < tuple(int(n) for n in MIN_PYTHON.split(".")):
        sys.stderr.write("cudnn-doctor: this zipapp needs Python %s or newer; this is %s (%s)\n"
                         % (MIN_PYTHON, sys.version.split()[0], sys.executable))
        sys.exit(3)
    home = _home()
    # The zip itself leaves sys.path: every later import would look in it first, and find nothing there.
    sys.path[:] = [home] + [p for p in sys.path if p != os.path.dirname(os.path.abspath(__file__))]
    from cudnn_doctor.cli import main

    main()
