"""Real errors a second breadth sweep (round 32, 60 texts) found misread: a make failure taken for Windows' error 127,
CUDA error 900 taken for 800 by the shorter message inside its own, DCGM's 'initialization error' taken for the CUDA
runtime's, an undefined symbol behind a wrapper's words taken for a missing file; and statuses whose answer repeated
NVIDIA's description (ECC, stream capture, the display watchdog). Each text is from the thread beside it."""
from __future__ import annotations

import pytest

from cudnn_doctor.explain import explain

# (thread, text, words the cause says or None for no answer, words the fix says, words neither may say)
CASES = [
    ("https://github.com/NVIDIA/open-gpu-kernel-modules/issues/805",
     " [ nvidia-modeset    ]  CXX          ../common/displayport/src/dp_auxretry.cpp\n/bin/sh: line 1: g++: command not "
     "found\nmake[1]: *** [Makefile:219: _out/Linux_x86_64/dp_auxretry.o] Error 127", None, [], ["Windows", "DLL"]),
    ("https://github.com/microsoft/onnxruntime/issues/15002",
     "CUDA failure 900: operation not permitted when stream is capturing", ["cudaErrorStreamCaptureUnsupported"],
     ["without CUDA graphs"], ["cudaErrorNotPermitted"]),
    ("https://github.com/NVIDIA/dcgm-exporter/issues/234",
     'time="2024-01-08T08:21:30Z" level=fatal msg="Error starting nv-hostengine: DCGM initialization error"', None, [],
     ["cudaErrorInitializationError"]),
    ("https://github.com/microsoft/onnxruntime/issues/14802",
     "Failed to load library libonnxruntime_providers_tensorrt.so with error: TensorRT/TensorRT-8.2.x/AL2_x86_64/"
     "DEV.STD.PTHREAD/build/lib/libnvinfer_plugin.so.8: undefined symbol: _ZN5pwgen18nvrtcCreateProgramE",
     ["libnvinfer_plugin.so.8 needs _ZN5pwgen18nvrtcCreateProgramE"], [], ["does not find"]),
    ("https://github.com/vllm-project/vllm/issues/5222", "RuntimeError: CUDA error: uncorrectable ECC error encountered",
     ["uncorrectable ECC error", "hardware fault"], ["ROW_REMAPPER", "--gpu-reset"], []),
    ("https://github.com/deepseek-ai/DeepEP/issues/62",
     "Exception: Capture cuda graph failed: CUDA error: capturing stream has unjoined work",
     ["captures a CUDA graph"], ["--enforce-eager"], []),
]


@pytest.mark.parametrize("url, text, cause, fix, never", CASES, ids=[c[0].split("github.com/")[1] for c in CASES])
def test_a_status_is_read_for_what_the_text_says(url, text, cause, fix, never):
    ex = explain(text, check=False).explanation
    said = (ex.answer.cause if ex.answer else "") + " " + (ex.fix.text if ex.fix else "")
    if cause is None:
        assert ex.answer is None or not any(n in said for n in never), said
    else:
        assert ex.answer is not None, url
        assert [c for c in cause if c not in ex.answer.cause] == [], ex.answer.cause
        assert [f for f in fix if f not in ex.fix.text] == [], ex.fix.text
    assert [n for n in never if n in said] == [], said
