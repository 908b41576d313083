"""The machine a paste describes, as partial facts: each program with its release and build tag, Python, the CUDA
a build names and the CUDA the driver runs (every encoding frameworks print), cuDNN compiled and loaded, the
driver, GPUs and compute capabilities, the OS, pip's package list and the library folders it names - each value with
the span of text it came from. What the text does not say stays None: never this machine's. Pure.

Every pattern starts where a word starts (a look-behind or a line start), so a long token costs one pass."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator, List, Optional, Tuple

from ..versions import decode_cuda, decode_cudnn, tag_cuda
from .parse import parse_versions


@dataclass(frozen=True)
class Said:
    """One value the text states and where: text[span[0]:span[1]] said it."""

    value: str
    span: Tuple[int, int]


@dataclass(frozen=True)
class Program:
    """A program or package the text names: 'PyTorch' '1.6.0' 'cu101'; release and tag None where not said."""

    name: str
    release: Optional[str]
    tag: Optional[str]
    span: Tuple[int, int]


@dataclass
class PasteFacts:
    """What the paste says of its machine; empty or None where it says nothing."""

    programs: List[Program] = field(default_factory=list)  # frameworks and tools, first mention first
    packages: List[Program] = field(default_factory=list)  # pip list / pip freeze lines: 'nvidia-cudnn-cu12' '9.1.0.70'
    python: Optional[Said] = None  # '3.6' from /python3.6/site-packages/, 'Python 3.6.9', Python310\
    cuda_build: List[Said] = field(default_factory=list)  # the CUDA a build was made for: +cu113, 'CUDA used to build'
    cuda_driver: Optional[Said] = None  # the CUDA the driver runs: PyTorch's 'found version 11040', nvidia-smi's
    cuda_paths: List[Said] = field(default_factory=list)  # toolkits in paths: /usr/local/cuda-8.0/
    cudnn_compiled: Optional[Said] = None
    cudnn_loaded: Optional[Said] = None
    driver: Optional[Said] = None  # '460.80'
    gpus: List[Said] = field(default_factory=list)  # 'GeForce RTX 3090', 'Tesla K80'
    ccs: List[Said] = field(default_factory=list)  # '8.6' from sm_86 or 'capability 8.6'
    os: List[Said] = field(default_factory=list)  # 'windows', 'wsl', 'container', 'Ubuntu 20.04'
    library_dirs: List[Said] = field(default_factory=list)  # LD_LIBRARY_PATH entries, in its order
    library_files: List[Said] = field(default_factory=list)  # full paths of libraries the text names

    def program(self, name: str) -> Optional[Program]:
        """The first mention of `name` with a release, else the first at all."""
        named = [p for p in self.programs if p.name == name]
        return next((p for p in named if p.release), named[0] if named else None)

    def runs(self, name: str) -> bool:
        return any(p.name == name for p in self.programs)

    def package(self, prefix: str) -> List[Program]:
        return [p for p in self.packages if p.name.lower().startswith(prefix)]

    def build_cuda(self) -> Optional[str]:
        """The CUDA the failing program was built for, where the text says it."""
        return self.cuda_build[0].value if self.cuda_build else None

    def folder_of_stem(self, stem: str) -> Optional[str]:
        """The folder of the first library file named `stem` ('libnvrtc': libnvrtc.so.8.0) the text shows."""
        for said in self.library_files:
            folder, _, name = said.value.rpartition("/")
            if name.split(".so")[0] == stem and folder:
                return folder
        return None

    def folder_of(self, library: str) -> Optional[str]:
        """The folder the text shows `library` loaded from ('/usr/local/cuda-8.0/lib64')."""
        for said in self.library_files:
            folder, _, name = said.value.rpartition("/")
            if name == library and folder:
                return folder
        return None


_W = r"(?<![\w.+-])"  # starts only where a word starts
_REL = r"(\d+\.\d+(?:\.\d+)*(?:\.post\d+)?)(?:\+([A-Za-z]\w*))?"
# between a name and its release: "==", ": ", " ", " version ", users' own prints' " Ver." ("Torch Ver.2.3.1"), " v"
_SAYS = r"(?:[ \t]?(?:version|ver\.)[ \t]*(?:={1,3}|:)?|[ \t]?(?:={1,3}|:|[ \t]))[ \t]*v?"
# (name, pattern with a release as group 1 and a build tag as group 2, or no groups where only the name is said)
# a REPL's or print's echo of a module's version: ">>> tf.__version__\n'2.21.0'", "print(torch.__version__)\n2.3.1+cu121"
_ECHO = r"\.__version__\)?[ \t]*\r?\n(?:[ \t]*>>>[^\n]*\n)?[ \t]*['\"]?" + _REL
# ATen's cuDNN check says "cuDNN error: CUDNN_STATUS_..." the same way (aten/src/ATen/cudnn/Exceptions.h)
_C10_CHECK = re.compile(r"(?:RuntimeError|torch\.AcceleratorError): (?:CUDA error: |cuDNN error: CUDNN_STATUS_)")
# a traceback frame of an installed package: ".../site-packages/mmcv/ops/roi_align.py"
FRAME_PACKAGE = re.compile(r"(?:site|dist)-packages[/\\]+([A-Za-z_]\w*)[/\\]")
_PROGRAMS = (
    ("PyTorch", re.compile(_W + r"torch" + _ECHO)),
    ("TensorFlow", re.compile(_W + r"(?:tf|tensorflow)" + _ECHO)),
    ("JAX", re.compile(_W + r"jax(?:lib)?" + _ECHO)),
    ("CuPy", re.compile(_W + r"(?:cupy|cp)" + _ECHO)),
    ("ONNX Runtime", re.compile(_W + r"(?:onnxruntime|ort)" + _ECHO)),
    ("Torch7", re.compile(_W + r"(?:luajit|luarocks|cutorch|cunn|torch7|share/lua/)", re.I)),
    # "torch==1.8.1+cu101", "pytorch: 1.4", conda's "pytorch=1.4.0"
    ("PyTorch", re.compile(_W + r"(?:torch|pytorch)" + _SAYS + _REL, re.I)),
    ("PyTorch", re.compile(_W + r"(?:torch/|import torch|pytorch\b)", re.I)),
    # PyTorch's own words (c10/cuda/CUDAFunctions.cpp), pasted alone: no other program says them
    ("PyTorch", re.compile(r"NVIDIA driver on your system is too old \(found version \d|"
                           r"CUDA kernel errors might be asynchronously reported at some other API call")),
    # c10's CUDA check, raised as RuntimeError (torch.AcceleratorError from 2.8): PyTorch's own words, but an
    # extension's kernels raise them too (mmcv, detectron2, flash_attn), so _programs keeps it only where no other
    # package's frame is in the text
    ("PyTorch", _C10_CHECK),
    # diffusers' PyTorch pipelines (its Flax ones are pipeline_flax_*): their files run PyTorch's kernels
    ("PyTorch", re.compile(_W + r"pipeline_stable_diffusion(?!\w*_(?:onnx|oneflow|flax))\w*\.py")),
    ("TensorFlow", re.compile(_W + r"tensor ?flow(?:-gpu)?(?:\[and-cuda\])?" + _SAYS + _REL, re.I)),
    ("TensorFlow", re.compile(_W + r"tensorflow\b", re.I)),
    ("JAX", re.compile(_W + r"jax(?:lib)?(?:\[cuda\d*\])?" + _SAYS + _REL, re.I)),
    ("JAX", re.compile(_W + r"jax(?:lib)?\b", re.I)),
    ("ONNX Runtime", re.compile(_W + r"onnxru[nm]time(?:-gpu)?" + _SAYS + _REL, re.I)),  # "onnxrumtime 1.16.2"
    ("ONNX Runtime", re.compile(_W + r"(?:onnxruntime|\[ONNXRuntimeError\])", re.I)),
    ("CuPy", re.compile(_W + r"cupy(?:-cuda\w+)?\b", re.I)),
    ("PaddlePaddle", re.compile(_W + r"paddle(?:paddle)?(?:-gpu)?\b", re.I)),
    # Paddle's PADDLE_ENFORCE words for a CUDA call that failed: "OSError: (External) CUDA error(209), ..."
    ("PaddlePaddle", re.compile(r"\(External\) (?:CUDA|CUDNN|CUBLAS) error\(\d+\)")),
    ("TensorRT", re.compile(r"(?:\[TRT\]|" + _W + r"TensorRT\b|" + _W + r"libnvinfer)", re.I)),
    ("CTranslate2", re.compile(_W + r"ctranslate2\b", re.I)),
    # CTranslate2's CUDA_CHECK (include/ctranslate2/utils.h); spconv's says it in lower case
    ("CTranslate2", re.compile(r"CUDA failed with error ")),
    ("NCCL", re.compile(_W + r"(?:nccl\w*|libnccl)", re.I)),
    ("Caffe", re.compile(_W + r"caffe\b", re.I)),
    # Caffe's CUDNN_CHECK (include/caffe/util/cudnn.hpp): glog's CHECK_EQ on a variable called status, then " " and
    # the status name; MXNet's says e, TensorFlow's cuda_dnn.cc runs straight into its own words ("Failed to set ...")
    ("Caffe", re.compile(r"Check failed: status == CUDNN_STATUS_SUCCESS \(\d{1,4} vs\. 0\)[ \t]+CUDNN_STATUS_")),
    ("docker", re.compile(_W + r"docker\b", re.I)),
    ("nvidia-container-cli", re.compile(_W + r"nvidia-container-cli\b")),
    ("nvidia-smi", re.compile(_W + r"nvidia-smi\b|NVIDIA-SMI\b")),
    ("modprobe", re.compile(_W + r"(?:modprobe|insmod)\b")),
)
# pip list / pip freeze lines, and torch's collect_env ("[pip3] nvidia-nccl-cu12==2.29.3", "[conda] ...").
_PACKAGE = re.compile(r"(?m)^[ \t]*(?:\[(?:pip3?|conda)\][ \t]+)?([A-Za-z][\w.-]*)(?:==|[ \t]+)(\d+(?:\.\d+)+)"
                      r"(?:\+(\w+))?[ \t]*$")
# pip's own report of what it installed: "Successfully installed torch-2.4.0+cu121 nvidia-cudnn-cu12-9.1.0.70"
_INSTALLED = re.compile(r"Successfully installed ([^\n]+)")
_INSTALLED_ONE = re.compile(r"(?<!\S)([A-Za-z][\w.-]*?)-(\d+(?:\.\d+)+(?:\.post\d+)?)(?:\+(\w+))?(?![\w.+-])")
# a path's python3.6/, "Python 3.6.9", a `conda list` or `pip list` row ("python    3.6.12"), Python310\, cp310
_PYTHON = (re.compile(r"(?<![\w.])python(\d\.\d{1,2})[/\\]", re.I), re.compile(_W + r"Python(?: version| ver\.)?(?::? |=|(?<=\.))(\d\.\d{1,2})(?:\.\d+)?\b", re.I),
           re.compile(r"^[ \t]*python[ \t]{2,40}(3\.\d{1,2})\.\d+\b", re.I | re.M),
           re.compile(r"(?<![\w.])Python(3)(\d{1,2})[/\\]", re.I), re.compile(r"(?<![\w.])cp(3)(\d{1,2})\b"),
           re.compile(r"(?<![A-Za-z0-9_./])python(3\.\d{1,2})\.\d{1,2}(?![\d.])", re.I))  # "使用python3.11.4"
_CUDA_BUILD = (re.compile(r"CUDA used to build PyTorch:\s*(\d{1,2}\.\d)"),
               re.compile(r"Cuda compilation tools, release (\d{1,2}\.\d)"),
               re.compile(r"(?<![\w.])(?:CUDA runtime version|cudart version)[ \t]*:?[ \t]*(\d{4,5}|\d{1,2}\.\d)\b", re.I),
               # Paddle's start-up NOTE: "Driver API Version: 11.5, Runtime API Version: 10.2"
               re.compile(r"Runtime API Version:[ \t]*(\d{1,2}\.\d)\b"))
_CUDA_DRIVER = (re.compile(r"driver on your system is too old \(found version (\d{4,5})\)"),
                re.compile(r"(?<![\w.])CUDA Version:\s*(\d{1,2}\.\d)"),
                re.compile(r"(?<![\w.])CUDA driver version(?: is)?[ \t]*:?[ \t]*(\d{4,5}|\d{1,2}\.\d)\b", re.I),
                re.compile(r"Driver API Version:[ \t]*(\d{1,2}\.\d)\b"))
# Paddle's start-up NOTE: "device: 0, cuDNN Version: 8.0." (the cuDNN it loaded)
_CUDNN_NOTE = re.compile(r"cuDNN Version:[ \t]*(\d{1,2}\.\d{1,2})\b")
# a user's own print of the cuDNN loaded: torch.backends.cudnn.version()'s number ("cuDNN Ver. 8907", "cudnn version:
# 90100"); only that encoding (cuDNN 4 to 8: four digits, 9 on: five), never a release said in words
_CUDNN_PRINTED = re.compile(r"(?<!\w)cudnn(?:\.version\(\)|[ \t]*(?:version|ver\.))[ \t]*[:=]?[ \t]*"
                            r"([4-8]\d{3}|9\d{4})(?![\d.])", re.I)
_CUDA_PATH = re.compile(r"(?<![\w.+-])cuda-(\d{1,2}\.\d)(?=/|\b)")
_DRIVER = re.compile(r"(?:Driver Version|driver(?: version)?|NVML library version|Kernel Module|NVRM version:"
                     r"[^\n]{0,60}?Kernel Module)[ \t]*:?[ \t]*(\d{3}\.\d{2,3}(?:\.\d{1,3})?)\b", re.I)
_GPU = re.compile(_W + r"((?:NVIDIA )?(?:GeForce|Tesla|Quadro|TITAN)(?:[ -](?:RTX|GTX|GT|Ti|SUPER|[A-Z]{0,2}\d{2,4}\w*))+"
                  r"|(?i:NVIDIA) [ABHLKMPTV]\d{1,3}\w*|(?i:RTX|GTX)[ -]?\d{3,4}D?\b(?: Ti\b)?)")
# A card named by its number before the word for a graphics card ("5090显卡"): GeForce's GTX 10/16 and RTX 20-50.
_GPU_CJK = re.compile(r"(?<![0-9A-Za-z_.])((1[06]|[2-5]0)[5-9]0(?: ?Ti)?)[ \t]*(?:显卡|顯示卡)")
# A compute capability stated ("cuda capability 3.0", Paddle's "GPU Compute Capability: 8.6"), and any sm_XX.
STATED_CC = re.compile(r"(?<![\w.])(?:compute|cuda) capability\s*(?::\s*)?(?:of\s*)?(\d{1,2}\.\d)", re.I)
_CC = (re.compile(_W + r"sm_(\d{2,3})\b"), STATED_CC)
_OS = (("windows", re.compile(r"\.dll\b|WinError|(?<![\w.])[A-Z]:\\|PowerShell|\\site-packages\\|Program Files"
                              r"|(?<![\w.])(?:Windows (?:1[01]|7|8(?:\.1)?|Server)|on[ \t]{1,3}Windows)\b"
                              r"|(?<![\w.])win1[01](?![A-Za-z0-9_.])", re.I)),  # "win11下": a CJK letter is \w too
       ("wsl", re.compile(r"/usr/lib/wsl\b|microsoft-standard-WSL|(?<![\w.])WSL2?\b|(?<![\w./\\-])wsl2(?![\w./\\-])")),
       # a shell prompt on Docker's default hostname, the container's 12-hex-digit id ("root@3f2a9c0d1b7e:/app#")
       ("container", re.compile(r"(?<![\w.])(?:docker|containerd|OCI runtime|kubepods|nvidia-container-cli)\b"
                                r"|(?<![\w.@-])\w+@[0-9a-f]{12}:", re.I)))
_DISTRO = re.compile(_W + r"((?:Ubuntu|Debian|CentOS|Rocky|RHEL|Fedora|Pop!_OS)(?: Linux)? ?\d{1,2}(?:\.\d{1,2})?)")
_LD_PATH = re.compile(r"LD_LIBRARY_PATH\s*[=:]\s*['\"]?([^\s'\"]+)")
_PATH = re.compile(r"(?<![\w.+/-])(/[\w.+/-]+)")  # a whole path; which are libraries is asked of its last part
_LIB_NAME = re.compile(r"lib[\w.+-]*\.so(?:\.\d+)*")


def _said(m: "re.Match[str]", value: str, group: int = 1) -> Said:
    return Said(value, m.span(group))


def _each(patterns: Tuple["re.Pattern[str]", ...], text: str) -> Iterator["re.Match[str]"]:
    for pattern in patterns:
        yield from pattern.finditer(text)


def _cuda(number: str) -> Optional[str]:
    return decode_cuda(int(number)) if number.isdigit() else number


# Words one of whose is in the text wherever a program's patterns match: a pattern is tried only then (a 160 KiB
# log costs a lowered copy and a find per word, not a regular-expression pass per pattern).
_KEYS = {"Torch7": ("luajit", "luarocks", "cutorch", "cunn", "torch7", "share/lua/"),
         "PyTorch": ("torch", "(found version", "kernel errors might be asynchronously", "error: cuda error: ", "error: cudnn error: cudnn_status_",
                     "pipeline_stable_diffusion"),
         "TensorFlow": ("tensorflow", "tensor flow", "tf.__version__"), "JAX": ("jax",), "ONNX Runtime": ("onnxruntime", "onnxrumtime", "ort.__version__"),
         "CuPy": ("cupy", "cp.__version__"),
         "PaddlePaddle": ("paddle", "(external) cu"), "TensorRT": ("[trt]", "tensorrt", "libnvinfer"), "CTranslate2": ("ctranslate2", "cuda failed with error "),
         "NCCL": ("nccl",), "Caffe": ("caffe", "status == cudnn_status_success ("), "docker": ("docker",), "nvidia-container-cli": ("nvidia-container-cli",),
         "nvidia-smi": ("nvidia-smi",), "modprobe": ("modprobe", "insmod")}


def _has(low: str, *words: str) -> bool:
    return any(w in low for w in words)


def _programs(text: str, low: str) -> List[Program]:
    out: List[Program] = []
    for name, pattern in _PROGRAMS:
        if not _has(low, *_KEYS[name]):
            continue
        if pattern is _C10_CHECK and any(p not in ("torch", "nvidia") for p in FRAME_PACKAGE.findall(text)):
            continue  # another package's kernel said it (an extension's build, not PyTorch's)
        for m in pattern.finditer(text):
            release = m.group(1) if pattern.groups else None
            tag = m.group(2) if pattern.groups > 1 else None
            out.append(Program(name, release, tag, m.span()))
            if not pattern.groups:
                break  # the name once is enough; releases are each kept
    return sorted(out, key=lambda p: p.span)


def read_paste(text: str) -> PasteFacts:
    """Every version and name `text` carries, with where it said it."""
    text = text or ""
    low = text.lower()
    out = PasteFacts(programs=_programs(text, low))
    out.packages = [Program(m.group(1), m.group(2), m.group(3), m.span()) for m in _PACKAGE.finditer(text)]
    for line in _INSTALLED.finditer(text) if "successfully installed" in low else ():
        out.packages += [Program(m.group(1), m.group(2), m.group(3), (line.start(1) + m.start(), line.start(1) + m.end()))
                         for m in _INSTALLED_ONE.finditer(line.group(1))]
    for p in out.packages:  # pip's list names the frameworks too
        for name, pattern in _PROGRAMS:
            if pattern.groups and pattern.match(p.name + " " + p.release if p.release else ""):
                out.programs.append(Program(name, p.release, p.tag, p.span))
    py = next(_each(_PYTHON, text), None) if _has(low, "python", "cp3") else None
    if py is not None:
        out.python = Said(".".join(g for g in py.groups() if g) if py.re.groups > 1 else py.group(1), py.span())
    for p in out.programs:
        cuda = tag_cuda(p.tag)
        if cuda:
            out.cuda_build.append(Said(cuda, p.span))
    if _has(low, "cuda used", "cuda compilation", "runtime version", "cudart version", "runtime api version"):
        out.cuda_build += [_said(m, _cuda(m.group(1)) or "") for m in _each(_CUDA_BUILD, text)]
    drv = next(_each(_CUDA_DRIVER, text), None) if _has(low, "found version", "cuda version", "cuda driver",
                                                        "driver api version") else None
    out.cuda_driver = _said(drv, _cuda(drv.group(1)) or "") if drv else None
    out.cuda_paths = [_said(m, m.group(1)) for m in _CUDA_PATH.finditer(text)] if "cuda-" in low else []
    versions = parse_versions(text)
    out.cudnn_compiled = Said(versions.compiled, (0, 0)) if versions.compiled else None
    out.cudnn_loaded = Said(versions.runtime, (0, 0)) if versions.runtime else None
    loaded = _CUDNN_NOTE.search(text) if out.cudnn_loaded is None and "cudnn version:" in low else None
    out.cudnn_loaded = _said(loaded, loaded.group(1)) if loaded else out.cudnn_loaded
    printed = _CUDNN_PRINTED.search(text) if out.cudnn_loaded is None and "cudnn" in low else None
    number = decode_cudnn(int(printed.group(1))) if printed else None
    out.cudnn_loaded = _said(printed, number) if printed and number else out.cudnn_loaded
    d = _DRIVER.search(text) if _has(low, "driver", "nvml", "kernel module", "nvrm") else None
    out.driver = _said(d, d.group(1)) if d else None
    if _has(low, "geforce", "tesla", "quadro", "titan", "nvidia ", "rtx", "gtx"):
        out.gpus = [_said(m, m.group(1)) for m in _GPU.finditer(text)]
    if "显卡" in text or "顯示卡" in text:
        out.gpus += [_said(m, ("GTX " if m.group(2) in ("10", "16") else "RTX ") + m.group(1))
                     for m in _GPU_CJK.finditer(text)]
    for m in (_each(_CC, text) if _has(low, "sm_", "capability") else ()):
        v = m.group(1)
        out.ccs.append(_said(m, v if "." in v else "%s.%s" % (v[:-1], v[-1])))
    out.os = [Said(kind, m.span()) for kind, pattern in _OS for m in [pattern.search(text)] if m]
    distro = _DISTRO.search(text) if _has(low, "ubuntu", "debian", "centos", "rocky", "rhel", "fedora", "pop!_os") \
        else None
    out.os += [_said(distro, distro.group(1))] if distro else []
    for m in (_LD_PATH.finditer(text) if "ld_library_path" in low else ()):
        start = m.start(1)
        for entry in m.group(1).split(":"):
            if entry:
                out.library_dirs.append(Said(entry.rstrip("/"), (start, start + len(entry))))
            start += len(entry) + 1
    out.library_files = [_said(m, m.group(1)) for m in (_PATH.finditer(text) if ".so" in low else ())
                         if _LIB_NAME.fullmatch(m.group(1).rpartition("/")[2])]
    return out
