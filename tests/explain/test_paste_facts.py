"""Issue 44, item 1: the paste becomes facts - every version and name it carries, with its span; what it does
not say stays None (never this machine's)."""
from __future__ import annotations

import re


from cudnn_doctor.explain.paste_facts import read_paste
from cudnn_doctor.versions import tag_cuda

PY36 = ('File "/home/u/.local/lib/python3.6/site-packages/torch/cuda/__init__.py", line 190\n'
        "torch 1.6.0+cu101\n"
        "NVIDIA GeForce RTX 3090 with CUDA capability sm_86 is not compatible with the current PyTorch installation.\n"
        "| NVIDIA-SMI 460.80       Driver Version: 460.80       CUDA Version: 11.2     |\n"
        "LD_LIBRARY_PATH=/usr/local/cuda-8.0/lib64:/usr/local/cuda-11.3/lib64\n"
        "ImportError: /usr/local/cuda-8.0/lib64/libnvrtc.so.8.0: undefined symbol: nvrtcGetCUBIN\n"
        "Ubuntu 18.04\n")


def test_every_value_with_its_span():
    facts = read_paste(PY36)
    torch = facts.program("PyTorch")
    assert (torch.release, torch.tag) == ("1.6.0", "cu101")
    assert PY36[torch.span[0]:torch.span[1]].startswith("torch 1.6.0+cu101")
    assert facts.python.value == "3.6" and "python3.6/" in PY36[facts.python.span[0]:facts.python.span[1]]
    assert facts.build_cuda() == "10.1"
    assert facts.cuda_driver.value == "11.2" and facts.driver.value == "460.80"
    assert PY36[facts.driver.span[0]:facts.driver.span[1]] == "460.80"
    assert [g.value for g in facts.gpus] == ["NVIDIA GeForce RTX 3090"]
    assert [c.value for c in facts.ccs] == ["8.6"]
    assert [d.value for d in facts.library_dirs] == ["/usr/local/cuda-8.0/lib64", "/usr/local/cuda-11.3/lib64"]
    assert facts.folder_of("libnvrtc.so.8.0") == "/usr/local/cuda-8.0/lib64"
    assert "Ubuntu 18.04" in [o.value for o in facts.os]
    assert facts.runs("nvidia-smi") and not facts.runs("Torch7")


def test_driver_cuda_encodings_and_tags():
    facts = read_paste("The NVIDIA driver on your system is too old (found version 11040).")
    assert facts.cuda_driver.value == "11.4" and facts.build_cuda() is None
    assert [tag_cuda(t) for t in ("cu101", "cu130", "cu92", "cpu", None)] == ["10.1", "13.0", "9.2", None, None]
    # jaxlib's local versions: cuda111 until 0.3, the major alone since 0.4 ("0.4.13+cuda11.cudnn86")
    assert [tag_cuda(t) for t in ("cuda111", "cuda92", "cuda11.cudnn86", "cuda12.cudnn89", "rocm5.2")] == [
        "11.1", "9.2", "11", "12", None]
    facts = read_paste("jax v4.13  jaxlib v0.4.13+cuda11.cudnn86")
    assert ("JAX", "0.4.13", "cuda11") in [(p.name, p.release, p.tag) for p in facts.programs]
    assert facts.build_cuda() == "11"


def test_what_the_text_does_not_say_is_unknown():
    facts = read_paste("CUDA error: out of memory")
    assert facts.python is None and facts.driver is None and facts.cuda_driver is None
    assert facts.build_cuda() is None and not facts.gpus and not facts.ccs and not facts.os and not facts.programs
    # c10's own form of the same words says the program: PyTorch raises them as RuntimeError (AcceleratorError from
    # 2.8), with no release
    said = read_paste("RuntimeError: CUDA error: out of memory").programs
    assert [(p.name, p.release) for p in said] == [("PyTorch", None)]


def test_programs_tools_and_pip_list():
    text = ("/home/u/torch/install/bin/luajit: .../share/lua/5.1/cutorch/init.lua:2\n"
            "$ pip list | grep nvidia\nnvidia-cudnn-cu12         9.1.0.70\nonnxruntime-gpu==1.18.0\n"
            "modprobe: ERROR: could not insert 'nvidia': Key was rejected by service\n"
            "nvidia-container-cli: mount error: stat failed\n[TRT] TensorRT was linked against cuDNN 8.9.0\n")
    facts = read_paste(text)
    names = {p.name for p in facts.programs}
    assert {"Torch7", "modprobe", "nvidia-container-cli", "TensorRT", "ONNX Runtime"} <= names
    assert [(p.name, p.release) for p in facts.package("nvidia-cudnn")] == [("nvidia-cudnn-cu12", "9.1.0.70")]
    assert facts.program("ONNX Runtime").release == "1.18.0"
    assert "container" in [o.value for o in facts.os]


def _patterns():
    import cudnn_doctor.explain.paste_facts as module

    def walk(value):
        if isinstance(value, re.Pattern):
            yield value
        elif isinstance(value, (tuple, list)):
            for item in value:
                yield from walk(item)

    for name in dir(module):
        yield from ((name, p) for p in walk(getattr(module, name)))


def test_every_pattern_starts_where_a_word_starts():
    """Linear in the paste: a pattern tried at every position of a long token must fail at once unless a word starts
    there, so each begins with a look-behind, a line start or a literal (times: benchmarks/explain_bench.py)."""
    # What starts a pattern that a long token makes quadratic: a character class, a dot or \w-like class, or a group
    # opening with one.
    open_start = re.compile(r"(?:\(\?[a-zA-Z]+\))?(?:\((?:\?:)?)?(?:\[|\.|\\[wWsSdD])")
    loose = [(name, p.pattern[:40]) for name, p in _patterns() if open_start.match(p.pattern)]
    assert not loose


def test_a_modules_version_echoed_by_the_repl_or_print_is_its_release():
    """tensorflow#117538: the release was said only as `tf.__version__`'s echo, so TensorFlow's tested build was never
    looked up."""
    for text, name, release, tag in ((">>> tf.__version__\n'2.21.0'\n", "TensorFlow", "2.21.0", None),
                                     ("print(torch.__version__)\n2.3.1+cu121\n", "PyTorch", "2.3.1", "cu121"),
                                     (">>> import cupy as cp\n>>> cp.__version__\n'13.3.0'", "CuPy", "13.3.0", None),
                                     ('>>> jax.__version__\n>>> \n"0.4.30"', "JAX", "0.4.30", None)):
        program = read_paste(text).program(name)
        assert program is not None and (program.release, program.tag) == (release, tag), text
    assert read_paste("tf.__version__ is 2.21").program("TensorFlow") is None  # no echo: nothing read
