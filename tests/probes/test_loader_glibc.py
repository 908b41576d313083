"""The loader simulation against the real glibc: Debian 12 roots from Debian's own packages, real NVIDIA wheels.

Each case lays out copies of the real libcudnn.so.9 (nvidia-cudnn-cu12 wheel), runs a program that dlopen()s it
inside `chroot ROOT` (the root's own ld.so decides), and compares the file glibc picked with what
`cudnn-doctor check --root ROOT --json` predicts. `python tests/probes/test_loader_glibc.py` prints the matrix.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Callable, Dict, Optional, Tuple

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))

import realroot  # noqa: E402
from realdata import CUDART11, CUDNN9, real_wheel  # noqa: E402

SITE = "/opt/venv/lib/python3.11/site-packages"
SHIM = "nvidia/cudnn/lib/libcudnn.so.9"
MA = "/usr/lib/x86_64-linux-gnu"


class Case:
    def __init__(self, root: Path, wheel: Path) -> None:
        self.root, self.wheel = root, wheel
        self.env: Dict[str, str] = {}
        self.first = "-"  # a consumer library glibc loads before asking for libcudnn.so.9
        self.framework = False
        self.soname = "libcudnn.so.9"  # what the program asks for

    def cudnn(self, folder: str, size: Optional[int] = None) -> None:
        realroot.place(self.root, "%s/libcudnn.so.9" % folder, self.wheel / SHIM, size)

    def file(self, inside: str, data: bytes) -> None:
        path = self.root / inside.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() or path.is_symlink():
            path.unlink()  # the root is hard-linked to the cached one: never write through a shared inode
        path.write_bytes(data)

    def conf(self, name: str, folder: str) -> None:
        self.file("/etc/ld.so.conf.d/%s" % name, (folder + "\n").encode())

    def ldconfig(self) -> None:
        realroot.ldconfig(self.root)

    def x32(self, folder: str) -> None:
        """A real 32-bit library (Debian's libc6-i386) under the cuDNN name: the F4 wrong-class file."""
        realroot.place(self.root, "%s/libcudnn.so.9" % folder, self.root / "lib32/libc.so.6")

    def torch(self, rpath: str, new_dtags: bool) -> None:
        """A real site-packages: the cuDNN wheel with its dist-info, and a torch whose library links cuDNN."""
        site = self.root / SITE.lstrip("/")
        self.cudnn(SITE + "/nvidia/cudnn/lib")
        dist = next(self.wheel.glob("nvidia_cudnn_cu12-*.dist-info"))
        shutil.copytree(dist, site / dist.name)
        (site / "nvidia/cudnn/__init__.py").write_text("")
        (site / "torch-2.5.1.dist-info").mkdir(parents=True)
        (site / "torch-2.5.1.dist-info/METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1\n")
        (site / "torch/lib").mkdir(parents=True)
        (site / "torch/version.py").write_text("cuda = '12.4'\n")
        stubs = self.root.parent / "stubs"
        stubs.mkdir(exist_ok=True)
        shutil.copyfile(self.wheel / SHIM, stubs / "libcudnn.so.9")
        realroot.gcc_consumer(site / "torch/lib/libtorch_cuda.so", ["libcudnn.so.9"], stubs, rpath, new_dtags)
        self.first = SITE + "/torch/lib/libtorch_cuda.so"
        self.framework = True


def _ldlp(order):
    def build(c: Case) -> None:
        for d in ("/opt/a", "/opt/b"):
            c.cudnn(d)
        c.env["LD_LIBRARY_PATH"] = order
        c.ldconfig()
    return build


def _conf(first: str, second: str):
    def build(c: Case) -> None:
        for d in (first, second):
            c.cudnn(d)
        c.conf("00-first.conf", first)
        c.conf("10-second.conf", second)
        c.ldconfig()
    return build


def _no_cache(c: Case) -> None:
    c.cudnn("/opt/a")
    c.conf("a.conf", "/opt/a")
    c.cudnn(MA)
    (c.root / "etc/ld.so.cache").unlink(missing_ok=True)


def _cached_file_deleted(c: Case) -> None:
    c.cudnn("/opt/a")
    c.conf("a.conf", "/opt/a")
    c.ldconfig()
    (c.root / "opt/a/libcudnn.so.9").unlink()
    c.cudnn("/usr/lib")


def _folder_added_without_ldconfig(c: Case) -> None:
    c.ldconfig()
    c.cudnn("/opt/new")
    c.conf("new.conf", "/opt/new")


def _only_in(folder: str):
    def build(c: Case) -> None:
        c.cudnn(folder)
        c.ldconfig()
    return build


def _consumer(new_dtags: bool, ldlp: bool):
    def build(c: Case) -> None:
        c.torch("$ORIGIN/../../nvidia/cudnn/lib", new_dtags)
        if ldlp:
            c.cudnn("/opt/a")
            c.env["LD_LIBRARY_PATH"] = "/opt/a"
        c.ldconfig()
    return build


def _first_on_path(kind: str):
    def build(c: Case) -> None:
        c.cudnn("/opt/a")
        if kind == "elfclass32":
            c.x32("/opt/bad")
        elif kind == "empty":
            c.file("/opt/bad/libcudnn.so.9", b"")
        elif kind.startswith("cut-at-"):  # an interrupted copy of the real library
            size = int(kind[7:])
            c.cudnn("/opt/bad", size=size if size > 0 else (c.wheel / SHIM).stat().st_size + size)
        elif kind == "not-elf":
            c.file("/opt/bad/libcudnn.so.9", b"this is not a library\n" * 10)
        elif kind == "dangling":
            (c.root / "opt/bad").mkdir(parents=True, exist_ok=True)
            os.symlink("libcudnn.so.9.1.0", c.root / "opt/bad/libcudnn.so.9")
        c.env["LD_LIBRARY_PATH"] = "/opt/bad:/opt/a"
        c.ldconfig()
    return build


def _hwcaps(c: Case) -> None:
    c.cudnn("/opt/a")
    c.cudnn("/opt/a/glibc-hwcaps/x86-64-v2")
    c.env["LD_LIBRARY_PATH"] = "/opt/a"
    c.ldconfig()


def _hwcaps_in_conf_folder(c: Case) -> None:
    c.cudnn("/opt/a")
    c.cudnn("/opt/a/glibc-hwcaps/x86-64-v2")
    c.conf("a.conf", "/opt/a")
    c.ldconfig()


def _debian_cudart(ldconfig: bool, wheel_on_path: bool):
    """Debian's own libcudart11.0 (non-free), unpacked as dpkg would, beside NVIDIA's cu11 runtime wheel."""
    def build(c: Case) -> None:
        deb = realroot.nonfree_deb("libcudart11.0")
        wheel = real_wheel(*CUDART11)
        if deb is None or wheel is None:
            pytest.skip("Debian's libcudart11.0 or the %s wheel could not be downloaded" % CUDART11[0])
        import subprocess

        subprocess.run(["dpkg", "-x", str(deb), str(c.root)], check=True)
        c.soname = "libcudart.so.11.0"
        if wheel_on_path:
            folder = SITE + "/nvidia/cuda_runtime/lib"
            realroot.place(c.root, folder + "/libcudart.so.11.0", wheel / "nvidia/cuda_runtime/lib/libcudart.so.11.0")
            c.env["LD_LIBRARY_PATH"] = folder
        if ldconfig:
            c.ldconfig()  # what the package's trigger runs: it creates the soname link and the cache entry
    return build


def _x32_in_cache_folder(c: Case) -> None:
    c.x32("/opt/x32")
    c.conf("00-x32.conf", "/opt/x32")
    c.cudnn(MA)
    c.ldconfig()


CASES: Dict[str, Callable[[Case], None]] = {
    "LD_LIBRARY_PATH=/opt/b:/opt/a": _ldlp("/opt/b:/opt/a"),
    "LD_LIBRARY_PATH=/opt/a:/opt/b": _ldlp("/opt/a:/opt/b"),
    "ld.so.conf.d: /opt/b file sorts first": _conf("/opt/b", "/opt/a"),
    "ld.so.conf.d: /opt/a file sorts first": _conf("/opt/a", "/opt/b"),
    "ld.so.conf.d folder vs multiarch folder": _conf("/opt/a", MA),
    "no ld.so.cache": _no_cache,
    "stale cache: cached file deleted": _cached_file_deleted,
    "stale cache: folder added, no ldconfig": _folder_added_without_ldconfig,
    "only in /usr/lib (default path)": _only_in("/usr/lib"),
    "only in /usr/lib64": _only_in("/usr/lib64"),
    "RPATH consumer vs LD_LIBRARY_PATH": _consumer(False, True),
    "RUNPATH consumer vs LD_LIBRARY_PATH": _consumer(True, True),
    "RUNPATH consumer alone": _consumer(True, False),
    "32-bit file first on LD_LIBRARY_PATH": _first_on_path("elfclass32"),
    "empty file first": _first_on_path("empty"),
    "file cut at 40 bytes first": _first_on_path("cut-at-40"),
    "file cut inside its program headers first": _first_on_path("cut-at-300"),
    "file cut inside a loaded segment first": _first_on_path("cut-at-4096"),
    "file cut after its segments (section headers lost) first": _first_on_path("cut-at--100"),
    "not-ELF file first": _first_on_path("not-elf"),
    "dangling link first": _first_on_path("dangling"),
    "glibc-hwcaps/x86-64-v2 subfolder": _hwcaps,
    "glibc-hwcaps subfolder of an ld.so.conf folder": _hwcaps_in_conf_folder,
    "32-bit file in an ld.so.conf folder": _x32_in_cache_folder,
    "Debian libcudart11.0 unpacked, no cache (default folder)": _debian_cudart(False, False),
    "Debian libcudart11.0 after ldconfig": _debian_cudart(True, False),
    "Debian libcudart11.0 vs cu11 wheel on LD_LIBRARY_PATH": _debian_cudart(True, True),
}


def _predict(root: Path, env: Dict[str, str], framework: bool, soname: str = "libcudnn.so.9") -> Tuple[str, str]:
    from clirunner import CliRunner

    from cudnn_doctor.cli import app

    if soname != "libcudnn.so.9":
        # `check` asks about a runtime soname only when a toolkit or driver names it: ask its loader view directly.
        from cudnn_doctor.host import Host
        from cudnn_doctor.probes.loader import LoaderView

        res = LoaderView(Host(str(root), env=env)).resolve(soname)
        if res.error:
            return "ERROR", "%s: %s" % (res.path, res.error)
        return ("LOADED", os.path.normpath(res.path)) if res.path else (
            "ERROR", "%s: cannot open shared object file" % soname)

    result = CliRunner().invoke(app, ["check", "--json", "--root", str(root)],
                                env=dict(env, LD_LIBRARY_PATH=env.get("LD_LIBRARY_PATH", "")) if env else
                                {"LD_LIBRARY_PATH": ""})
    doc = json.loads(result.stdout)
    if framework:
        fw = next(f for f in doc["facts"]["python"]["frameworks"] if f["name"] == "torch")
        res = fw["resolved_cudnn"] or {}
    else:
        res = doc["facts"]["loader"]["resolved"].get("libcudnn.so.9") or {}
    if res.get("error"):
        return "ERROR", "%s: %s" % (res["path"], res["error"])
    if not res.get("path"):
        return "ERROR", "libcudnn.so.9: cannot open shared object file"
    return "LOADED", os.path.normpath(res["path"])


def run_case(name: str, tmp: Path, wheel: Path):
    case = Case(realroot.new_root(tmp / "root"), wheel)
    CASES[name](case)
    glibc = realroot.glibc_picks(case.root, case.soname, case.env, case.first)
    if glibc[0] == "LOADED":
        glibc = ("LOADED", os.path.normpath(glibc[1]))
    return glibc, _predict(case.root, case.env, case.framework, case.soname)


def agree(glibc: Tuple[str, str], predicted: Tuple[str, str]) -> bool:
    if glibc[0] != predicted[0]:
        return False
    if glibc[0] == "LOADED":
        return glibc[1] == predicted[1]
    # Both fail: on the same file with the same reason, or both find nothing; a process glibc let die of a
    # signal names no file, so the signal must be the predicted reason.
    if glibc[1].startswith("killed by "):
        return glibc[1][len("killed by "):] in predicted[1]
    where, _, why = predicted[1].partition(": ")
    return where in glibc[1] and why in glibc[1]


def _wheel_or_skip() -> Path:
    reason = realroot.why_not()
    if reason:
        pytest.skip(reason)
    if realroot.base_root() is None:
        pytest.skip("apt-get download of Debian's libc6/libc-bin failed (offline?)")
    wheel = real_wheel(*CUDNN9)
    if wheel is None or not (wheel / SHIM).exists():
        pytest.skip("the nvidia-cudnn-cu12 %s wheel could not be downloaded" % CUDNN9[1])
    return wheel


@pytest.mark.parametrize("name", list(CASES))
def test_prediction_matches_glibc(name, tmp_path):
    wheel = _wheel_or_skip()
    glibc, predicted = run_case(name, tmp_path, wheel)
    assert agree(glibc, predicted), "glibc: %s | cudnn-doctor: %s" % (glibc, predicted)


if __name__ == "__main__":
    import tempfile

    wheel = real_wheel(*CUDNN9)
    print("| case | glibc (chroot, real ld.so) | check --root prediction | agree |")
    print("|---|---|---|---|")
    for name in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            glibc, predicted = run_case(name, Path(tmp), wheel)
            print("| %s | %s %s | %s %s | %s |" % (name, glibc[0], glibc[1], predicted[0], predicted[1],
                                                  "yes" if agree(glibc, predicted) else "**NO**"))
