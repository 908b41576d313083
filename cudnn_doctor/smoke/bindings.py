"""ctypes bindings to the CUDA driver API and cuDNN's legacy convolution API (7.x to 9.x); every status is checked.

Used only inside the smoke child process: a crash or hang in these calls cannot take the doctor down.
"""
from __future__ import annotations

import ctypes
import os
from typing import Dict, List, Optional, Sequence, Tuple

c_int, c_uint, c_size_t, c_void_p = ctypes.c_int, ctypes.c_uint, ctypes.c_size_t, ctypes.c_void_p
CUdeviceptr = ctypes.c_ulonglong

FWD_ALGOS = ("IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
             "WINOGRAD", "WINOGRAD_NONFUSED")
IMPLICIT_GEMM = 0  # needs no workspace: the seeds' choice when memory is tight
CUDNN_TENSOR_NCHW = 0
CUDNN_DATA_FLOAT = 0
CUDNN_CROSS_CORRELATION = 1
CUDNN_DEFAULT_MATH = 0
CUDNN_TENSOR_OP_MATHS = (1, 2)  # TENSOR_OP_MATH, TENSOR_OP_MATH_ALLOW_CONVERSION
CUDNN_FMA_MATH = 3  # cuDNN 8.0+
CU_DEVICE_ATTRIBUTE_CC_MAJOR = 75
CU_DEVICE_ATTRIBUTE_CC_MINOR = 76


class ApiError(Exception):
    """A call returned a status other than success."""

    def __init__(self, api: str, func: str, code: int, message: str = "", detail: str = "") -> None:
        super().__init__("%s returned %d" % (func, code))
        self.api, self.func, self.code, self.message, self.detail = api, func, code, message, detail

    def to_dict(self) -> Dict[str, object]:
        out: Dict[str, object] = {"api": self.api, "func": self.func, "code": self.code}
        if self.message:
            out["message"] = self.message
        if self.detail:
            out["detail"] = self.detail
        return out


class MissingSymbol(Exception):
    """The library does not export a function the smoke test needs."""


def load(path: str) -> ctypes.CDLL:
    # RTLD_LOCAL keeps this copy's symbols from satisfying another library's lookups.
    return ctypes.CDLL(path, mode=getattr(os, "RTLD_LOCAL", 0) | getattr(os, "RTLD_NOW", 2))


class _Lib:
    api = ""

    def __init__(self, path: str) -> None:
        self.path = path
        self.lib = load(path)
        self._fns: Dict[str, object] = {}

    def has(self, name: str) -> bool:
        return hasattr(self.lib, name)

    def fn(self, name: str, argtypes: Sequence[object], restype: object = c_int):
        fn = self._fns.get(name)
        if fn is None:
            try:
                fn = getattr(self.lib, name)
            except AttributeError:
                raise MissingSymbol(name) from None
            fn.argtypes = list(argtypes)
            fn.restype = restype
            self._fns[name] = fn
        return fn

    def call(self, name: str, argtypes: Sequence[object], *args: object) -> None:
        rc = int(self.fn(name, argtypes)(*args))
        if rc != 0:
            raise self.error(name, rc)

    def error(self, name: str, rc: int) -> ApiError:
        return ApiError(self.api, name, rc)


class Driver(_Lib):
    """libcuda.so.1, the driver API.

    Chosen over libcudart because it ships with the driver itself: the smoke test needs no second CUDA runtime
    that could be the wrong version, and cuDNN's own (statically linked) runtime picks up the primary context
    made current here.
    """

    api = "cuda"

    def version(self) -> int:
        out = c_int(0)
        self.call("cuDriverGetVersion", [ctypes.POINTER(c_int)], ctypes.byref(out))
        return out.value

    def init(self) -> None:
        self.call("cuInit", [c_uint], 0)

    def device_count(self) -> int:
        out = c_int(0)
        self.call("cuDeviceGetCount", [ctypes.POINTER(c_int)], ctypes.byref(out))
        return out.value

    def device(self, ordinal: int) -> int:
        out = c_int(0)
        self.call("cuDeviceGet", [ctypes.POINTER(c_int), c_int], ctypes.byref(out), ordinal)
        return out.value

    def name(self, dev: int) -> str:
        buf = ctypes.create_string_buffer(256)
        self.call("cuDeviceGetName", [ctypes.c_char_p, c_int, c_int], buf, len(buf), dev)
        return buf.value.decode("utf-8", "replace")

    def compute_capability(self, dev: int) -> str:
        parts = []
        for attr in (CU_DEVICE_ATTRIBUTE_CC_MAJOR, CU_DEVICE_ATTRIBUTE_CC_MINOR):
            out = c_int(0)
            self.call("cuDeviceGetAttribute", [ctypes.POINTER(c_int), c_int, c_int], ctypes.byref(out), attr, dev)
            parts.append(str(out.value))
        return ".".join(parts)

    def retain_primary_context(self, dev: int) -> int:
        ctx = c_void_p()
        self.call("cuDevicePrimaryCtxRetain", [ctypes.POINTER(c_void_p), c_int], ctypes.byref(ctx), dev)
        return ctx.value or 0

    def release_primary_context(self, dev: int) -> None:
        name = "cuDevicePrimaryCtxRelease_v2" if self.has("cuDevicePrimaryCtxRelease_v2") else "cuDevicePrimaryCtxRelease"
        self.call(name, [c_int], dev)

    def set_current(self, ctx: int) -> None:
        self.call("cuCtxSetCurrent", [c_void_p], ctx)

    def alloc(self, nbytes: int) -> int:
        ptr = CUdeviceptr(0)
        self.call("cuMemAlloc_v2", [ctypes.POINTER(CUdeviceptr), c_size_t], ctypes.byref(ptr), nbytes)
        return ptr.value

    def free(self, ptr: int) -> None:
        self.call("cuMemFree_v2", [CUdeviceptr], ptr)

    def to_device(self, ptr: int, host: object, nbytes: int) -> None:
        self.call("cuMemcpyHtoD_v2", [CUdeviceptr, c_void_p, c_size_t], ptr, host, nbytes)

    def to_host(self, host: object, ptr: int, nbytes: int) -> None:
        self.call("cuMemcpyDtoH_v2", [c_void_p, CUdeviceptr, c_size_t], host, ptr, nbytes)

    def fill_bytes(self, ptr: int, value: int, nbytes: int) -> None:
        self.call("cuMemsetD8_v2", [CUdeviceptr, ctypes.c_ubyte, c_size_t], ptr, value, nbytes)

    def synchronize(self) -> None:
        self.call("cuCtxSynchronize", [])


class FwdAlgoPerf(ctypes.Structure):
    """cudnnConvolutionFwdAlgoPerf_t, the same layout in 7.x, 8.x and 9.x."""

    _fields_ = [("algo", c_int), ("status", c_int), ("time", ctypes.c_float), ("memory", c_size_t),
                ("determinism", c_int), ("mathType", c_int), ("reserved", c_int * 3)]


class Cudnn(_Lib):
    """The main cuDNN library (libcudnn.so.N): the legacy descriptor API that 7.x, 8.x and 9.x all export."""

    api = "cudnn"

    def version(self) -> int:
        return int(self.fn("cudnnGetVersion", [], c_size_t)())

    def cudart_version(self) -> Optional[int]:
        if not self.has("cudnnGetCudartVersion"):
            return None
        return int(self.fn("cudnnGetCudartVersion", [], c_size_t)())

    def error(self, name: str, rc: int) -> ApiError:
        message = detail = ""
        try:
            text = self.fn("cudnnGetErrorString", [c_int], ctypes.c_char_p)(rc)
            message = (text or b"").decode("utf-8", "replace")
        except MissingSymbol:
            pass
        if self.has("cudnnGetLastErrorString"):  # 9.x: the reason behind the status
            buf = ctypes.create_string_buffer(1024)
            self.fn("cudnnGetLastErrorString", [ctypes.c_char_p, c_size_t], None)(buf, len(buf))
            detail = buf.value.decode("utf-8", "replace").strip()
        return ApiError(self.api, name, rc, message, detail)

    def create(self) -> int:
        handle = c_void_p()
        self.call("cudnnCreate", [ctypes.POINTER(c_void_p)], ctypes.byref(handle))
        return handle.value or 0

    def destroy(self, handle: int) -> None:
        self.call("cudnnDestroy", [c_void_p], handle)

    def _new(self, what: str) -> int:
        desc = c_void_p()
        self.call("cudnnCreate%sDescriptor" % what, [ctypes.POINTER(c_void_p)], ctypes.byref(desc))
        return desc.value or 0

    def free_descriptor(self, what: str, desc: int) -> None:
        self.call("cudnnDestroy%sDescriptor" % what, [c_void_p], desc)

    def tensor(self, n: int, c: int, h: int, w: int) -> int:
        desc = self._new("Tensor")
        # (format, dataType, ...) here but (dataType, format, ...) for filters: the API's own order.
        self.call("cudnnSetTensor4dDescriptor", [c_void_p, c_int, c_int] + [c_int] * 4,
                  desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w)
        return desc

    def filter(self, k: int, c: int, r: int, s: int) -> int:
        desc = self._new("Filter")
        self.call("cudnnSetFilter4dDescriptor", [c_void_p, c_int, c_int] + [c_int] * 4,
                  desc, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, k, c, r, s)
        return desc

    def convolution(self, pad: int, stride: int, dilation: int, math_type: int) -> int:
        desc = self._new("Convolution")
        # The 6.0+ signature: dilation and computeType were added after the strides (5.x had upscale args).
        self.call("cudnnSetConvolution2dDescriptor", [c_void_p] + [c_int] * 8,
                  desc, pad, pad, stride, stride, dilation, dilation, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT)
        self.call("cudnnSetConvolutionMathType", [c_void_p, c_int], desc, math_type)
        return desc

    def output_dims(self, conv: int, x: int, w: int) -> Tuple[int, int, int, int]:
        dims = [c_int(0) for _ in range(4)]
        self.call("cudnnGetConvolution2dForwardOutputDim", [c_void_p] * 3 + [ctypes.POINTER(c_int)] * 4,
                  conv, x, w, *[ctypes.byref(d) for d in dims])
        n, c, h, w = (d.value for d in dims)
        return n, c, h, w

    def heuristics(self, handle: int, x: int, w: int, conv: int, y: int) -> List[FwdAlgoPerf]:
        """cuDNN's ranked algorithm choices (no benchmarking, no memory): cudnnGetConvolutionForwardAlgorithm_v7."""
        results = (FwdAlgoPerf * len(FWD_ALGOS))()
        count = c_int(0)
        self.call("cudnnGetConvolutionForwardAlgorithm_v7",
                  [c_void_p] * 5 + [c_int, ctypes.POINTER(c_int), ctypes.POINTER(FwdAlgoPerf)],
                  handle, x, w, conv, y, len(FWD_ALGOS), ctypes.byref(count), results)
        return list(results[: max(0, min(count.value, len(FWD_ALGOS)))])

    def workspace_size(self, handle: int, x: int, w: int, conv: int, y: int, algo: int) -> int:
        size = c_size_t(0)
        self.call("cudnnGetConvolutionForwardWorkspaceSize", [c_void_p] * 5 + [c_int, ctypes.POINTER(c_size_t)],
                  handle, x, w, conv, y, algo, ctypes.byref(size))
        return size.value

    def forward(self, handle: int, x_desc: int, x: int, w_desc: int, w: int, conv: int, algo: int,
                workspace: int, workspace_bytes: int, y_desc: int, y: int) -> None:
        alpha, beta = ctypes.c_float(1.0), ctypes.c_float(0.0)  # y = 1·conv(x, w) + 0·y: y is never read
        self.call("cudnnConvolutionForward",
                  [c_void_p, c_void_p, c_void_p, c_void_p, c_void_p, c_void_p, c_void_p, c_int, c_void_p, c_size_t,
                   c_void_p, c_void_p, c_void_p],
                  handle, ctypes.byref(alpha), x_desc, x, w_desc, w, conv, algo, workspace or None, workspace_bytes,
                  ctypes.byref(beta), y_desc, y)
