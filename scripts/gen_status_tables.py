"""Generate compat/status_tables.toml: every status enum NVIDIA's libraries return (cudaError_t, CUresult,
cudnnStatus_t of cuDNN 9 and of cuDNN 7/8, nvmlReturn_t, ncclResult_t, nvrtcResult, cublasStatus_t), by name and
number, with the meaning its header's doc comment gives, read from the headers inside NVIDIA's own PyPI wheels.

    python scripts/gen_status_tables.py            # download (cached) the wheels, write compat/status_tables.toml
    python scripts/gen_status_tables.py --check    # exit 1 when the file differs from what the wheels say

The wheels are fetched with `pip download` into the real-data test cache (CUDNN_DOCTOR_TEST_CACHE, default
~/.cache/cudnn-doctor-tests/wheels), which tests/knowledge/test_status_tables_realdata.py shares.
"""
from __future__ import annotations

import argparse
import ast
import json
import operator
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

OUT = Path(__file__).resolve().parents[1] / "compat" / "status_tables.toml"
CACHE = Path(os.environ.get("CUDNN_DOCTOR_TEST_CACHE", Path.home() / ".cache" / "cudnn-doctor-tests")) / "wheels"
PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_27_x86_64", "manylinux_2_28_x86_64")


@dataclass(frozen=True)
class Enum:
    """One status enum: its key in the table, the C type, where its header is and where NVIDIA documents it."""

    key: str
    ctype: str
    wheel: str
    version: str
    header: str  # path inside the wheel
    docs: str
    says: str = ""  # the library's own "error string" function, asked for each code's message
    libs: Tuple[str, ...] = ()  # the wheel's libraries that function needs, the one that exports it last


ENUMS = (
    Enum("cuda_runtime", "cudaError_t", "nvidia-cuda-runtime-cu12", "12.9.79",
         "nvidia/cuda_runtime/include/driver_types.h",
         "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html", "cudaGetErrorString",
         ("libcudart.so.12",)),
    Enum("cuda_driver", "CUresult", "nvidia-cuda-runtime-cu12", "12.9.79", "nvidia/cuda_runtime/include/cuda.h",
         "https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html"),
    Enum("cudnn_v9", "cudnnStatus_t", "nvidia-cudnn-cu12", "9.19.0.56", "nvidia/cudnn/include/cudnn_graph.h",
         "https://docs.nvidia.com/deeplearning/cudnn/backend/latest/api/cudnn-graph-library.html", "cudnnGetErrorString",
         ("libcudnn_graph.so.9", "libcudnn.so.9")),
    Enum("cudnn_legacy", "cudnnStatus_t", "nvidia-cudnn-cu12", "8.9.7.29", "nvidia/cudnn/include/cudnn_ops_infer.h",
         "https://docs.nvidia.com/deeplearning/cudnn/archives/cudnn-897/api/index.html", "cudnnGetErrorString",
         ("libcudnn_ops_infer.so.8", "libcudnn.so.8")),
    Enum("nvml", "nvmlReturn_t", "nvidia-nvml-dev-cu12", "12.9.79", "nvidia/nvml_dev/include/nvml.h",
         "https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceEnumvs.html"),
    Enum("nccl", "ncclResult_t", "nvidia-nccl-cu12", "2.27.7", "nvidia/nccl/include/nccl.h",
         "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/api/types.html", "ncclGetErrorString",
         ("libnccl.so.2",)),
    Enum("nvrtc", "nvrtcResult", "nvidia-cuda-nvrtc-cu12", "12.9.86", "nvidia/cuda_nvrtc/include/nvrtc.h",
         "https://docs.nvidia.com/cuda/nvrtc/index.html"),
    Enum("cublas", "cublasStatus_t", "nvidia-cublas-cu12", "12.9.1.4", "nvidia/cublas/include/cublas_api.h",
         "https://docs.nvidia.com/cuda/cublas/index.html", "cublasGetStatusString",
         ("libcublasLt.so.12", "libcublas.so.12")),
)

# One entry: comments before it, NAME [attribute macro] [= value], a trailing comment, up to the comma.
_ENTRY = re.compile(r"(?P<name>[A-Za-z_]\w*)(?:\s+[A-Z_]+)?\s*(?:=\s*(?P<value>[^,/]+?))?\s*"
                    r"(?P<trail>(?:/\*.*?\*/|//[^\n]*)\s*)*(?:,|$)", re.S)
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_OPS: Dict[type, Any] = {ast.Add: operator.add, ast.Sub: operator.sub, ast.BitOr: operator.or_, ast.LShift: operator.lshift,
        ast.USub: operator.neg}


def wheel_path(enum: Enum, cache: Path = CACHE) -> Path:
    """The cached manylinux x86_64 wheel of an enum's header."""
    return fetch_wheel(enum.wheel, enum.version, cache)


def fetch_wheel(project: str, version: str, cache: Path = CACHE) -> Path:
    """The cached manylinux x86_64 wheel of project==version, fetched with `pip download` on first use."""
    pattern = "%s-%s-*x86_64.whl" % (project.replace("-", "_"), version)
    found = sorted(p for p in cache.glob(pattern) if "win" not in p.name)
    if not found:
        cache.mkdir(parents=True, exist_ok=True)
        argv = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:"]
        for platform in PLATFORMS:
            argv += ["--platform", platform]
        subprocess.run(argv + ["--python-version", "3.11", "%s==%s" % (project, version), "-d", str(cache)],
                       check=True)
        found = sorted(p for p in cache.glob(pattern) if "win" not in p.name)
    return found[0]


def enum_body(header: str, ctype: str) -> str:
    """The text between the braces of the enum that is typedef'd to `ctype` (or named `ctype`'s base name)."""
    base = ctype[:-2] if ctype.endswith("_t") else ctype
    for m in re.finditer(r"\benum\b[^{;]*\{", header):
        depth, i = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(header[i], 0)
            i += 1
        after = re.match(r"\s*(\w+)\s*;", header[i:])
        head = header[m.start():m.end()]
        if (after and after.group(1) == ctype) or re.search(r"\benum\s+(?:__device_builtin__\s+)?%s\b" % base, head):
            return header[m.end():i - 1]
    raise ValueError("no enum for %s" % ctype)


def _value(text: str, known: Dict[str, int]) -> int:
    def ev(node: ast.AST) -> int:
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name):
            return known[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.operand))
        raise ValueError("cannot evaluate %r" % text)
    return ev(ast.parse(re.sub(r"(?<=\d)[uUlL]+\b", "", text.strip()), mode="eval").body)


def _words(comment: str) -> str:
    """A doc comment as one plain sentence: markers, leading stars and Doxygen references dropped."""
    text = re.sub(r"^/\*+<?|\*/$|^//[!/]?<?", "", comment.strip())
    text = re.sub(r"^\s*\*+ ?", "", text, flags=re.M)
    text = re.sub(r"::|\\[a-z]+ ", "", text)
    return " ".join(text.split())


def parse_enum(body: str) -> List[Tuple[str, int, str]]:
    """(name, number, meaning) per entry, in header order; meaning is the doc comment before the entry or the
    trailing one after it, else ''."""
    out: List[Tuple[str, int, str]] = []
    known: Dict[str, int] = {}
    pos, nxt = 0, 0
    pending = ""
    while pos < len(body):
        ws = re.match(r"\s+", body[pos:])
        if ws:
            pos += ws.end()
            continue
        c = _COMMENT.match(body, pos)
        if c:
            words = _words(c.group(0))
            if re.match(r"(?://[!/]|/\*[*!])<", c.group(0)) and out:  # a trailing doc comment: the entry before
                out[-1] = (out[-1][0], out[-1][1], words)
            elif re.match(r"/\*\*|///|//!", c.group(0)):  # Doxygen doc comments only: a plain one labels a group
                pending = (pending + " " + words).strip()
            pos = c.end()
            continue
        if body.startswith("#", pos):  # a preprocessor line inside the enum
            pos = body.find("\n", pos) + 1 or len(body)
            continue
        m = _ENTRY.match(body, pos)
        if not m:
            raise ValueError("cannot parse enum text at %r" % body[pos:pos + 60])
        name, value = m.group("name"), m.group("value")
        number = _value(value, known) if value else nxt
        tail = m.group(0)[m.group(0).find(value or name) + len(value or name):]
        trail = _words(" ".join(c for c in _COMMENT.findall(tail) if re.match(r"(?://[!/]|/\*[*!])<", c)))
        known[name], nxt = number, number + 1
        out.append((name, number, trail or pending))
        pending = ""
        pos = m.end()
    return out


# Run in a child: a library that crashes or hangs costs its messages, not the run. No GPU is needed.
_ASK = r"""
import ctypes, json, sys
*deps, lib = sys.argv[2:]
for dep in deps:
    ctypes.CDLL(dep, mode=ctypes.RTLD_GLOBAL)
fn = getattr(ctypes.CDLL(lib), sys.argv[1])
fn.restype = ctypes.c_char_p
print(json.dumps({n: fn(n).decode("utf-8", "replace") for n in json.loads(sys.stdin.read())}))
"""


def messages(enum: Enum, zf: zipfile.ZipFile, numbers: List[int]) -> Dict[int, str]:
    """What the library's own error-string function returns for each number ({} where it cannot be asked)."""
    if not enum.says:
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for lib in enum.libs:
            member = next(n for n in zf.namelist() if n.rsplit("/", 1)[-1] == lib)
            (Path(tmp) / lib).write_bytes(zf.read(member))
            paths.append(str(Path(tmp) / lib))
        proc = subprocess.run([sys.executable, "-c", _ASK, enum.says] + paths, input=json.dumps(numbers),
                              capture_output=True, text=True, timeout=120, env=dict(os.environ, LD_LIBRARY_PATH=tmp))
    if proc.returncode != 0:
        print("%s: %s not asked (%s)" % (enum.key, enum.says, proc.stderr.strip()[-200:]), file=sys.stderr)
        return {}
    return {int(k): v for k, v in json.loads(proc.stdout).items()}


def _q(text: str) -> str:
    return '"%s"' % text.replace("\\", "\\\\").replace('"', '\\"')


def table_text(rows: Dict[Enum, List[Tuple[str, int, str, str]]]) -> str:
    """The TOML file, byte-stable for the same wheels."""
    lines = ["# GENERATED by scripts/gen_status_tables.py from the headers in NVIDIA's PyPI wheels; do not edit.",
             "# Each [KEY] names the wheel and header it was read from; `meaning` is the header's Doxygen comment",
             "# for the entry ('' where the header has none: then only the name speaks). Where one number has",
             "# several names (cuDNN 9's deprecated aliases), the first in the header is the number's name. `message` is",
             "# what the library's own error-string function (cudaGetErrorString, ...) returns: what users paste.",
             "", "schema = 1", "", "[meta]", 'title = "Status codes of NVIDIA libraries, by name and number"',
             'source = "the headers in NVIDIA\'s PyPI wheels named per table, e.g. https://pypi.org/project/nvidia-cuda-runtime-cu12/"', 'status = "confirmed"', ""]
    for enum, entries in rows.items():
        lines += ["[%s]" % enum.key, 'status = "confirmed"', "type = %s" % _q(enum.ctype), "wheel = %s" % _q(enum.wheel),
                  "version = %s" % _q(enum.version), "header = %s" % _q(enum.header),
                  "source = %s" % _q("https://pypi.org/project/%s/%s/ (%s); documented at %s" % (
                      enum.wheel, enum.version, enum.header, enum.docs)),
                  "codes = ["]
        for name, number, meaning, message in entries:
            lines.append("  {name = %s, number = %d, meaning = %s, message = %s}," % (
                _q(name), number, _q(meaning), _q(message)))
        lines += ["]", ""]
    return "\n".join(lines)


def generate(cache: Path = CACHE) -> str:
    """The table text the wheels in `cache` (downloaded when missing) give."""
    rows: Dict[Enum, List[Tuple[str, int, str, str]]] = {}
    opened: Dict[Path, zipfile.ZipFile] = {}
    for enum in ENUMS:
        path = wheel_path(enum, cache)
        zf = opened.setdefault(path, zipfile.ZipFile(path))
        header = zf.read(enum.header).decode("utf-8", "replace")
        entries = parse_enum(enum_body(header, enum.ctype))
        said = messages(enum, zf, sorted({n for _, n, _ in entries}))
        rows[enum] = [(name, n, meaning, said.get(n, "")) for name, n, meaning in entries]
    return table_text(rows)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args(argv)
    text = generate()
    if args.check:
        same = OUT.exists() and OUT.read_text(encoding="utf-8") == text
        print("%s is %s" % (OUT.name, "up to date" if same else "STALE: rerun scripts/gen_status_tables.py"))
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print("wrote %s (%d codes)" % (OUT, text.count("number =")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
