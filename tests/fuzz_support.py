"""Fuzz-suite support: hypothesis profiles (a fixed CI budget, a long one by hand) and damaged machine roots.

Profiles: ``ci`` (the default under pytest) is derandomized with a fixed example budget per property, so CI
is reproducible and bounded; ``long`` (``CUDNN_DOCTOR_FUZZ_PROFILE=long``) runs 20 times the examples from a
random seed. Both print hypothesis's ``@reproduce_failure`` blob and the falsifying example on failure.
"""
from __future__ import annotations

import json
import os
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

from kit import FakeMachine, Gpu, cudnn_header

PROFILE_ENV = "CUDNN_DOCTOR_FUZZ_PROFILE"
_SCALE = {"ci": 1, "long": 20}
_QUIET_CHECKS = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large,
                 HealthCheck.large_base_example, HealthCheck.filter_too_much]

# The explain phase re-runs a failing example dozens of times (minutes here); the shrunk example is enough.
_PHASES = [p for p in Phase if p.name != "explain"]
settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True,
                          suppress_health_check=_QUIET_CHECKS, max_examples=25, phases=_PHASES)
settings.register_profile("long", derandomize=False, deadline=None, print_blob=True,
                          suppress_health_check=_QUIET_CHECKS, max_examples=500, phases=_PHASES)
PROFILE = os.environ.get(PROFILE_ENV, "ci")
if PROFILE not in _SCALE:
    raise SystemExit("%s must be one of %s, not %r" % (PROFILE_ENV, ", ".join(_SCALE), PROFILE))
settings.load_profile(PROFILE)


def budget(examples: int) -> settings:
    """This property's example budget under the loaded profile (the CI share is the number given)."""
    return settings(max_examples=examples * _SCALE[PROFILE])


# --- the healthy machine every generated root starts from ----------------------------------------------

MA = "/usr/lib/x86_64-linux-gnu"
TK = "/usr/local/cuda-13.0"
SITE = "/opt/venv/lib/python3.12/site-packages"
# The files issue 16 names (each hung `check` when it was a FIFO), then the other files probes read.
KEY_FILES = [
    MA + "/libcudnn_ops.so.9.14.0",
    "/usr/include/x86_64-linux-gnu/cudnn_version.h",
    TK + "/version.json",
    "/etc/ld.so.conf",
    "/proc/driver/nvidia/version",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf.d/x86_64-linux-gnu.conf",
    MA + "/libcudnn.so.9.14.0",
    MA + "/libcuda.so.580.95.05",
    MA + "/libnvidia-ml.so.580.95.05",
    TK + "/include/cuda.h",
    TK + "/include/cuda_runtime_api.h",
    TK + "/lib64/libcudart.so.13.0.89",
    SITE + "/nvidia/cudnn/lib/libcudnn.so.9",
    SITE + "/nvidia/cudnn/include/cudnn_version.h",
    SITE + "/nvidia_cudnn_cu13-9.19.0.56.dist-info/METADATA",
    "/proc/modules",
]
HUNG_FILES = KEY_FILES[:5]


@lru_cache(maxsize=None)
def base_root() -> Path:
    """A healthy machine (driver, GPU, toolkit, system and pip cuDNN, real ld.so.cache), built once per run."""
    top = Path(tempfile.mkdtemp(prefix="cudnn-doctor-fuzz-base-"))
    m = FakeMachine(top / "root")
    m.driver("580.95.05", cuda=13000, gpus=[Gpu()])
    m.ld_conf("x86_64-linux-gnu.conf", [MA])
    m.toolkit("13.0.2")
    m.cudnn("9.14.0", MA, "/usr/include/x86_64-linux-gnu", cuda=13000)
    m.pip_cudnn(SITE, "9.19.0.56", cuda_major=13, cudart=13010)
    m.ld_cache()
    return m.root


@lru_cache(maxsize=None)
def base_files() -> Tuple[str, ...]:
    """Every path of the healthy machine, as seen inside it (files, links and folders)."""
    root = base_root()
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            out.append("/" + str((Path(dirpath) / name).relative_to(root)))
    return tuple(sorted(out))


def fresh_root() -> Path:
    """A private copy of the healthy machine (links copied as links)."""
    top = Path(tempfile.mkdtemp(prefix="cudnn-doctor-fuzz-"))
    shutil.copytree(base_root(), top / "root", symlinks=True)
    return top / "root"


def discard_root(root: Path) -> None:
    for dirpath, dirnames, _ in os.walk(root.parent):
        for name in dirnames:  # an op may have left a folder without permissions
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                os.chmod(path, 0o755)
    shutil.rmtree(root.parent, ignore_errors=True)


# --- damage: one strategy per kind the issue lists ----------------------------------------------------

paths = st.one_of(st.sampled_from(KEY_FILES), st.deferred(lambda: st.sampled_from(base_files())))
huge = st.one_of(st.integers(0, 2 ** 64 - 1), st.sampled_from([2 ** 63, 2 ** 64 - 1, 2 ** 32, 0xFFFF]),
                 st.integers(0, 64))
digits = st.one_of(st.integers(0, 10 ** 6).map(str), st.integers(1, 6000).map(lambda n: "9" * n),
                   st.sampled_from(["-1", "0x10", "08", "1e9", ""]))
# Text that an environment variable may hold: no NUL, no lone surrogates outside surrogateescape.
env_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=40)


def elf_bytes() -> st.SearchStrategy:
    """ELF-looking bytes: a real 64-bit header shape with garbage and huge numbers in its fields."""
    def build(cls, data, machine, phoff, shoff, phentsize, phnum, shentsize, shnum, tail):
        head = b"\x7fELF" + bytes([cls, data, 1]) + b"\0" * 9
        end = "<" if data == 1 else ">"
        body = struct.pack(end + "HHIQQQIHHHHHH", 3, machine, 1, 0, phoff, shoff, 0, 64,
                           phentsize, phnum, shentsize, shnum, 0)
        return head + body + tail
    return st.builds(build, st.sampled_from([1, 2, 0, 7]), st.sampled_from([1, 2, 0]),
                     st.sampled_from([62, 183, 3, 0, 0xFFFF]), huge, huge,
                     st.integers(0, 0xFFFF), st.integers(0, 0xFFFF), st.integers(0, 0xFFFF), st.integers(0, 0xFFFF),
                     st.binary(max_size=512))


def header_text() -> st.SearchStrategy:
    keys = st.sampled_from(["CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL", "CUDNN_MAX_SM_MAJOR_NUMBER",
                            "CUDNN_MAX_SM_MINOR_NUMBER", "CUDNN_VERSION", "CUDA_VERSION", "CUDART_VERSION"])
    line = st.one_of(st.builds(lambda k, v, sp: "#%sdefine %s %s" % (sp, k, v), keys, digits, st.sampled_from(["", " ", "  "])),
                     st.text(max_size=60))
    return st.lists(line, max_size=12).map("\n".join)


def json_values() -> st.SearchStrategy:
    leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20),
                       st.sampled_from(["13.0.2", "9" * 5000, "1e999", "..", "13.0.2.4.5.6"]))
    return st.recursive(leaves, lambda kids: st.one_of(st.lists(kids, max_size=4),
                        st.dictionaries(st.sampled_from(["cuda", "version", "nvidia_driver", "name", "cuda_cudart"]),
                                        kids, max_size=4)), max_leaves=20)


def version_json_text() -> st.SearchStrategy:
    return st.one_of(json_values().map(json.dumps),
                     st.integers(1, 200000).map(lambda n: "[" * n),  # nesting deeper than json's recursion limit
                     st.text(max_size=200))


def ld_cache_bytes() -> st.SearchStrategy:
    """Junk ld.so.cache files: random bytes, the right magic with garbage, huge counts, cut or flipped real ones."""
    new = b"glibc-ld.so.cache1.1"
    old = b"ld.so-1.7.0\0"
    magic_and_junk = st.builds(lambda m, b: m + b, st.sampled_from([new, old, old + b"\0" * 4 + new]),
                               st.binary(max_size=300))
    huge_count = st.builds(lambda n, s, tail: new + struct.pack("<II", n, s) + b"\0" * 20 + tail,
                           st.integers(0, 2 ** 32 - 1), st.integers(0, 2 ** 32 - 1), st.binary(max_size=200))
    old_count = st.builds(lambda n, tail: old + struct.pack("<I", n) + tail, st.integers(0, 2 ** 32 - 1),
                          st.binary(max_size=200))
    return st.one_of(st.binary(max_size=300), magic_and_junk, huge_count, old_count,
                     st.builds(lambda n: ("cut", n), st.integers(0, 4096)),
                     st.builds(lambda flips: ("flip", flips), st.lists(st.tuples(st.integers(0, 4095),
                                                                                 st.integers(0, 255)), max_size=8)))


def conf_line() -> st.SearchStrategy:
    return st.one_of(st.sampled_from([MA, "/usr/local/cuda/lib64", "include /etc/ld.so.conf",
                                      "include /etc/ld.so.conf.d/*.conf", "include *", "include ../../../../etc/*",
                                      "hwcap 0 nosegneg", "/opt/x=libc6", "", "#", "include", "/nonexistent",
                                      "relative/dir", "//", "/etc/ld.so.cache", "include /proc/self/*"]),
                     st.text(st.characters(blacklist_characters="\0"), max_size=30))


def ld_library_path() -> st.SearchStrategy:
    part = st.one_of(st.sampled_from(["", ".", "..", "relative/lib", MA, TK + "/lib64", "/nonexistent", "//",
                                      "$ORIGIN", "/etc/ld.so.cache", MA + "/libcudnn.so.9", "/proc/self",
                                      "/../../../..", SITE + "/nvidia/cudnn/lib"]), env_text)
    return st.lists(part, max_size=8).map(":".join)


def damage(fifo: bool = False) -> st.SearchStrategy:
    """One piece of damage to a root, as a tuple the tests apply with ``apply``."""
    kinds = [
        st.tuples(st.just("truncate"), paths, st.integers(0, 2048)),
        st.tuples(st.just("bytes"), paths, st.binary(max_size=512)),
        st.tuples(st.just("elf"), paths, elf_bytes()),
        st.tuples(st.just("flip"), paths, st.lists(st.tuples(st.integers(0, 8191), st.integers(0, 255)),
                                                  min_size=1, max_size=16)),
        st.tuples(st.just("text"), paths, header_text()),
        st.tuples(st.just("text"), st.sampled_from(["/usr/include/x86_64-linux-gnu/cudnn_version.h",
                                                    TK + "/include/cuda.h", SITE + "/nvidia/cudnn/include/cudnn_version.h"]),
                  header_text()),
        st.tuples(st.just("text"), st.just(TK + "/version.json"), version_json_text()),
        st.tuples(st.just("text"), st.just("/proc/driver/nvidia/version"),
                  st.one_of(st.text(max_size=100), digits.map(lambda d: "NVRM version: Kernel Module  %s.1" % d))),
        st.tuples(st.just("text"), st.just(SITE + "/nvidia_cudnn_cu13-9.19.0.56.dist-info/METADATA"),
                  st.one_of(st.text(max_size=200), digits.map(lambda d: "Name: nvidia-cudnn-cu13\nVersion: %s\n" % d))),
        st.tuples(st.just("loop"), paths),
        st.tuples(st.just("selfloop"), paths),
        st.tuples(st.just("outside"), paths, st.sampled_from(["/../../../../../etc/passwd", "../../../../../../../..",
                                                              "/proc/self/root", os.path.realpath(sys.executable),
                                                              "../" * 30 + "tmp", "/dev/zero", "/"])),
        st.tuples(st.just("unreadable"), paths),
        st.tuples(st.just("dir"), paths),
        st.tuples(st.just("remove"), paths),
        st.tuples(st.just("ldcache"), ld_cache_bytes()),
        st.tuples(st.just("conf_loop"), st.booleans()),
        st.tuples(st.just("conf_long"), st.integers(1, 1000), st.lists(conf_line(), min_size=1, max_size=20)),
    ]
    if fifo:
        kinds.append(st.tuples(st.just("fifo"), paths))
    return st.one_of(kinds)


def apply(root: Path, op: Sequence) -> None:
    """Applies one generated piece of damage inside ``root`` (never outside it); skipped where an earlier piece
    already turned a folder on the way into a file or link."""
    try:
        _apply(root, op)
    except OSError:  # ENOTDIR, ELOOP, EEXIST...: the damage cannot land there; the root stays as damaged as it is
        pass


def _apply(root: Path, op: Sequence) -> None:
    kind = op[0]
    target = root / str(op[1]).lstrip("/") if len(op) > 1 and isinstance(op[1], str) else None

    def clear(path: Path) -> None:
        if path.is_symlink() or path.is_file() or (path.exists() and not path.is_dir()):
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path)
        path.parent.mkdir(parents=True, exist_ok=True)

    def current(path: Path) -> bytes:
        try:
            return path.read_bytes() if path.is_file() and not path.is_symlink() else b""
        except OSError:
            return b""

    if kind == "truncate":
        data = current(target)
        clear(target)
        target.write_bytes(data[:op[2]])
    elif kind in ("bytes", "elf"):
        clear(target)
        target.write_bytes(op[2])
    elif kind == "flip":
        data = bytearray(current(target))
        for offset, value in op[2]:
            if data:
                data[offset % len(data)] = value
        clear(target)
        target.write_bytes(bytes(data))
    elif kind == "text":
        clear(target)
        target.write_text(op[2], encoding="utf-8", errors="surrogatepass")
    elif kind == "loop":
        clear(target)
        os.symlink(target.name + ".loop", target)
        other = target.with_name(target.name + ".loop")
        clear(other)
        os.symlink(target.name, other)
    elif kind == "selfloop":
        clear(target)
        os.symlink(target.name, target)
    elif kind == "outside":
        clear(target)
        os.symlink(op[2], target)
    elif kind == "unreadable":
        if target.exists() and not target.is_symlink():
            os.chmod(target, 0)
    elif kind == "dir":
        clear(target)
        (target / "inner").mkdir(parents=True)
        (target / "inner" / "file").write_bytes(b"x")
    elif kind == "remove":
        clear(target)
    elif kind == "fifo":
        clear(target)
        os.mkfifo(target)
    elif kind == "ldcache":
        path = root / "etc/ld.so.cache"
        data = op[1]
        real = current(base_root() / "etc/ld.so.cache")
        if isinstance(data, tuple) and data[0] == "cut":
            data = real[:data[1]]
        elif isinstance(data, tuple):
            buf = bytearray(real)
            for offset, value in data[1]:
                if buf:
                    buf[offset % len(buf)] = value
            data = bytes(buf)
        clear(path)
        path.write_bytes(data)
    elif kind == "conf_loop":
        (root / "etc/ld.so.conf").unlink()
        (root / "etc/ld.so.conf").write_text("include /etc/ld.so.conf\ninclude /etc/ld.so.conf.d/*.conf\n")
        if op[1]:
            (root / "etc/ld.so.conf.d/loop.conf").write_text("include /etc/ld.so.conf\ninclude loop.conf\n" + MA + "\n")
    elif kind == "conf_long":
        lines, pool = op[1], op[2]
        conf = root / "etc/ld.so.conf"
        clear(conf)
        conf.write_text("".join(pool[i % len(pool)] + "\n" for i in range(lines)), encoding="utf-8",
                        errors="surrogatepass")
    else:  # pragma: no cover - a new kind without an implementation
        raise AssertionError(kind)


# --- what every report must satisfy -------------------------------------------------------------------

DOCUMENTED_CHECK_CODES = {0, 1, 2, 3, 4}


def assert_report_contract(doc: dict, code: int) -> None:
    """The `check --json` contract (tests/commands/test_check_json_contract.py) on any report, damaged machine or not."""
    from test_check_json_contract import ENVELOPE, FINDING

    for key, typ in ENVELOPE.items():
        assert isinstance(doc[key], typ), key
    assert doc["schema_version"] == "1" and doc["command"] == "check"
    assert doc["exit_code"] == code
    assert doc["verdict"] in ("ok", "warning", "error")
    for finding in doc["findings"]:
        for key, typ in FINDING.items():
            assert isinstance(finding[key], typ), key
        assert finding["severity"] in ("error", "warning", "info")
    if "incomplete" in doc:
        assert isinstance(doc["incomplete"], bool)


@lru_cache(maxsize=None)
def check_help() -> str:
    """`cudnn-doctor check --help` of this checkout (which options it has decides what can be tested)."""
    proc = subprocess.run([sys.executable, "-m", "cudnn_doctor", "check", "--help"], capture_output=True,
                          text=True, env=dict(os.environ, COLUMNS="200", PYTHONPATH=str(Path(__file__).parents[1])),
                          cwd=str(Path(__file__).parents[1]), timeout=60)
    return proc.stdout


def have_timeout_option() -> bool:
    return "--timeout" in check_help()


NO_TIMEOUT_REASON = ("`cudnn-doctor check --help` lists no --timeout yet (issue 16 items 1-2, branch 'runtime'): "
                     "a FIFO or hung read would block check forever")


def run_check_cli(root: Path, env: Optional[Dict[str, str]] = None, args: Sequence[str] = (),
                  timeout: float = 60, wrapper: Optional[str] = None) -> Tuple[subprocess.CompletedProcess, float]:
    """`cudnn-doctor check --root ROOT --json` in a fresh process; (completed process, seconds it took)."""
    import time

    full_env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(Path(__file__).parents[1]), "NO_COLOR": "1",
                "CUDNN_DOCTOR_TEST_MACHINE_ROOT": "/nonexistent/cudnn-doctor-test-machine"}
    full_env.update(env or {})
    head = [sys.executable, wrapper] if wrapper else [sys.executable, "-m", "cudnn_doctor"]
    start = time.monotonic()
    proc = subprocess.run(head + ["check", "--root", str(root), "--json", *args], capture_output=True, text=True,
                          env=full_env, timeout=timeout, cwd=str(Path(__file__).parents[1]), stdin=subprocess.DEVNULL)
    return proc, time.monotonic() - start


def mode_of(path: Path) -> str:
    try:
        return stat.filemode(os.lstat(path).st_mode)
    except OSError:
        return "missing"
