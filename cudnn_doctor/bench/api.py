"""ctypes bindings bench adds to smoke's: streams, events, CUDA graphs, NVRTC modules, and cuDNN's data types,
NHWC, the three convolution directions with cudnnFind*Ex, pooling and activation.

Runs only inside the bench child (a crash there cannot take the doctor down); imported by file location.
"""
import ctypes

import bindings as base  # smoke's bindings: the child puts smoke's folder on sys.path

c_int, c_uint, c_size_t, c_void_p = ctypes.c_int, ctypes.c_uint, ctypes.c_size_t, ctypes.c_void_p
c_float = ctypes.c_float
P = ctypes.POINTER
ApiError, MissingSymbol = base.ApiError, base.MissingSymbol

# cudnnDataType_t, cudnnTensorFormat_t, cudnnMathType_t
DATA = {"fp32": 0, "tf32": 0, "fp16": 2, "bf16": 9}
ELEMENT_BYTES = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2}
NCHW, NHWC = 0, 1
MATH = {"fp32": 3, "tf32": 1, "fp16": 1, "bf16": 1}  # FMA (no TF32) for fp32; TENSOR_OP for the rest
ALGOS = {
    "fwd": ("IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING", "WINOGRAD",
            "WINOGRAD_NONFUSED"),
    "bwd_data": ("ALGO_0", "ALGO_1", "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"),
    "bwd_filter": ("ALGO_0", "ALGO_1", "FFT", "ALGO_3", "WINOGRAD", "WINOGRAD_NONFUSED", "FFT_TILING"),
}
CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1


class AlgoPerf(ctypes.Structure):
    """cudnnConvolution{Fwd,BwdData,BwdFilter}AlgoPerf_t share this layout (7.x to 9.x)."""

    _fields_ = [("algo", c_int), ("status", c_int), ("time", c_float), ("memory", c_size_t),
                ("determinism", c_int), ("mathType", c_int), ("reserved", c_int * 3)]


class Driver(base.Driver):
    """The driver API calls bench adds: memory info, copies, streams, events, graphs, NVRTC modules."""

    def attribute(self, attr, dev):
        out = c_int(0)
        self.call("cuDeviceGetAttribute", [P(c_int), c_int, c_int], ctypes.byref(out), attr, dev)
        return out.value

    def mem_info(self):
        free, total = c_size_t(0), c_size_t(0)
        self.call("cuMemGetInfo_v2", [P(c_size_t), P(c_size_t)], ctypes.byref(free), ctypes.byref(total))
        return free.value, total.value

    def copy(self, dst, src, nbytes):
        self.call("cuMemcpyDtoD_v2", [base.CUdeviceptr, base.CUdeviceptr, c_size_t], dst, src, nbytes)

    def copy_async(self, dst, src, nbytes, stream):
        self.call("cuMemcpyDtoDAsync_v2", [base.CUdeviceptr, base.CUdeviceptr, c_size_t, c_void_p], dst, src, nbytes,
                  stream)

    def stream(self):
        out = c_void_p()
        # A blocking stream: ordered with the legacy default stream that smoke's copies and memsets use.
        self.call("cuStreamCreate", [P(c_void_p), c_uint], ctypes.byref(out), 0)
        return out.value or 0

    def stream_sync(self, stream):
        self.call("cuStreamSynchronize", [c_void_p], stream)

    def event(self):
        out = c_void_p()
        self.call("cuEventCreate", [P(c_void_p), c_uint], ctypes.byref(out), 0)
        return out.value or 0

    def record(self, event, stream):
        self.call("cuEventRecord", [c_void_p, c_void_p], event, stream)

    def elapsed_ms(self, start, end):
        self.call("cuEventSynchronize", [c_void_p], end)
        out = c_float(0.0)
        self.call("cuEventElapsedTime", [P(c_float), c_void_p, c_void_p], ctypes.byref(out), start, end)
        return out.value

    def begin_capture(self, stream):
        self.call("cuStreamBeginCapture_v2", [c_void_p, c_int], stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)

    def end_capture(self, stream):
        graph = c_void_p()
        self.call("cuStreamEndCapture", [c_void_p, P(c_void_p)], stream, ctypes.byref(graph))
        exe = c_void_p()
        try:
            self.call("cuGraphInstantiateWithFlags", [P(c_void_p), c_void_p, ctypes.c_ulonglong],
                      ctypes.byref(exe), graph, 0)
        finally:
            self.call("cuGraphDestroy", [c_void_p], graph)
        return exe.value or 0

    def launch_graph(self, exe, stream):
        self.call("cuGraphLaunch", [c_void_p, c_void_p], exe, stream)

    def destroy_graph(self, exe):
        self.call("cuGraphExecDestroy", [c_void_p], exe)

    def load_module(self, image):
        mod = c_void_p()
        self.call("cuModuleLoadData", [P(c_void_p), c_void_p], ctypes.byref(mod), image)
        return mod.value or 0

    def function(self, module, name):
        fn = c_void_p()
        self.call("cuModuleGetFunction", [P(c_void_p), c_void_p, ctypes.c_char_p], ctypes.byref(fn), module,
                  name.encode())
        return fn.value or 0

    def launch(self, fn, grid, block, stream, args):
        """args: ctypes values; cuLaunchKernel takes an array of pointers to them."""
        holders = (c_void_p * len(args))(*[ctypes.cast(ctypes.pointer(a), c_void_p) for a in args])
        self.call("cuLaunchKernel", [c_void_p] + [c_uint] * 7 + [c_void_p, P(c_void_p), c_void_p],
                  fn, grid, 1, 1, block, 1, 1, 0, stream, holders, None)


class Nvrtc(base._Lib):
    """libnvrtc: compiles the no-cuDNN kernels to PTX for this GPU at run time."""

    api = "nvrtc"

    def compile(self, source, name, arch):
        prog = c_void_p()
        self.call("nvrtcCreateProgram", [P(c_void_p), ctypes.c_char_p, ctypes.c_char_p, c_int, c_void_p, c_void_p],
                  ctypes.byref(prog), source.encode(), name.encode(), 0, None, None)
        try:
            opts = [b"--gpu-architecture=compute_%s" % arch.encode(), b"-default-device", b"--use_fast_math"]
            arr = (ctypes.c_char_p * len(opts))(*opts)
            rc = int(self.fn("nvrtcCompileProgram", [c_void_p, c_int, P(ctypes.c_char_p)])(prog, len(opts), arr))
            if rc != 0:
                size = c_size_t(0)
                self.call("nvrtcGetProgramLogSize", [c_void_p, P(c_size_t)], prog, ctypes.byref(size))
                log = ctypes.create_string_buffer(size.value + 1)
                self.call("nvrtcGetProgramLog", [c_void_p, ctypes.c_char_p], prog, log)
                raise ApiError("nvrtc", "nvrtcCompileProgram", rc, detail=log.value.decode("utf-8", "replace")[:500])
            size = c_size_t(0)
            self.call("nvrtcGetPTXSize", [c_void_p, P(c_size_t)], prog, ctypes.byref(size))
            ptx = ctypes.create_string_buffer(size.value)
            self.call("nvrtcGetPTX", [c_void_p, ctypes.c_char_p], prog, ptx)
            return ptx
        finally:
            self.call("nvrtcDestroyProgram", [P(c_void_p)], ctypes.byref(prog))


class Cudnn(base.Cudnn):
    """cuDNN calls bench adds to smoke's: typed and NHWC descriptors, all three directions, pooling, ReLU."""

    def set_stream(self, handle, stream):
        self.call("cudnnSetStream", [c_void_p, c_void_p], handle, stream)

    def tensor_of(self, dtype, fmt, n, c, h, w):
        desc = self._new("Tensor")
        self.call("cudnnSetTensor4dDescriptor", [c_void_p, c_int, c_int] + [c_int] * 4,
                  desc, fmt, DATA[dtype], n, c, h, w)
        return desc

    def filter_of(self, dtype, fmt, k, c, r, s):
        desc = self._new("Filter")
        self.call("cudnnSetFilter4dDescriptor", [c_void_p, c_int, c_int] + [c_int] * 4,
                  desc, DATA[dtype], fmt, k, c, r, s)
        return desc

    def conv_of(self, pad, stride, math_type):
        desc = self._new("Convolution")
        # Half and bfloat16 accumulate in float, as frameworks configure them.
        self.call("cudnnSetConvolution2dDescriptor", [c_void_p] + [c_int] * 8,
                  desc, pad, pad, stride, stride, 1, 1, base.CUDNN_CROSS_CORRELATION, 0)
        self.call("cudnnSetConvolutionMathType", [c_void_p, c_int], desc, math_type)
        return desc

    _FIND = {
        "fwd": "cudnnFindConvolutionForwardAlgorithmEx",
        "bwd_data": "cudnnFindConvolutionBackwardDataAlgorithmEx",
        "bwd_filter": "cudnnFindConvolutionBackwardFilterAlgorithmEx",
    }
    _WSIZE = {
        "fwd": "cudnnGetConvolutionForwardWorkspaceSize",
        "bwd_data": "cudnnGetConvolutionBackwardDataWorkspaceSize",
        "bwd_filter": "cudnnGetConvolutionBackwardFilterWorkspaceSize",
    }
    _RUN = {
        "fwd": "cudnnConvolutionForward",
        "bwd_data": "cudnnConvolutionBackwardData",
        "bwd_filter": "cudnnConvolutionBackwardFilter",
    }

    @staticmethod
    def _operands(direction, op):
        """(in1 desc, in1, in2 desc, in2, out desc, out) in each call's own argument order."""
        if direction == "fwd":
            return op.xd, op.x, op.wd, op.w, op.yd, op.y
        if direction == "bwd_data":
            return op.wd, op.w, op.yd, op.dy, op.xd, op.dx
        return op.xd, op.x, op.yd, op.dy, op.wd, op.dw

    def find(self, handle, direction, op, workspace, ws_bytes):
        """cudnnFind*AlgorithmEx: every algorithm run and timed by cuDNN on these buffers, fastest first."""
        a, ap, b, bp, o, op_ = self._operands(direction, op)
        results = (AlgoPerf * 16)()
        count = c_int(0)
        self.call(self._FIND[direction], [c_void_p] * 8 + [c_int, P(c_int), P(AlgoPerf), c_void_p, c_size_t],
                  handle, a, ap, b, bp, op.cd, o, op_, 16, ctypes.byref(count), results, workspace or None, ws_bytes)
        return list(results[: max(0, min(count.value, 16))])

    def workspace_for(self, handle, direction, op, algo):
        a, _, b, _, o, _ = self._operands(direction, op)
        size = c_size_t(0)
        self.call(self._WSIZE[direction], [c_void_p] * 5 + [c_int, P(c_size_t)],
                  handle, a, b, op.cd, o, algo, ctypes.byref(size))
        return size.value

    def set_math(self, op, math_type):
        """Find reports each algorithm with the math type it was timed under; it must be set to run it so."""
        if op.math != math_type:
            self.call("cudnnSetConvolutionMathType", [c_void_p, c_int], op.cd, math_type)
            op.math = math_type

    def run(self, handle, direction, op, algo, workspace, ws_bytes):
        a, ap, b, bp, o, op_ = self._operands(direction, op)
        alpha, beta = c_float(1.0), c_float(0.0)  # float scalars: every data type here computes in float
        self.call(self._RUN[direction], [c_void_p] * 7 + [c_int, c_void_p, c_size_t, c_void_p, c_void_p, c_void_p],
                  handle, ctypes.byref(alpha), a, ap, b, bp, op.cd, algo, workspace or None, ws_bytes,
                  ctypes.byref(beta), o, op_)

    def pooling(self, window, stride):
        desc = c_void_p()
        self.call("cudnnCreatePoolingDescriptor", [P(c_void_p)], ctypes.byref(desc))
        self.call("cudnnSetPooling2dDescriptor", [c_void_p] + [c_int] * 8, desc, 0, 0, window, window, 0, 0,
                  stride, stride)  # CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN
        return desc.value

    def relu(self):
        desc = c_void_p()
        self.call("cudnnCreateActivationDescriptor", [P(c_void_p)], ctypes.byref(desc))
        self.call("cudnnSetActivationDescriptor", [c_void_p, c_int, c_int, ctypes.c_double], desc.value, 1, 0, 0.0)
        return desc.value

    def pool_forward(self, handle, pd, xd, x, yd, y):
        alpha, beta = c_float(1.0), c_float(0.0)
        self.call("cudnnPoolingForward", [c_void_p] * 8, handle, pd, ctypes.byref(alpha), xd, x, ctypes.byref(beta),
                  yd, y)

    def pool_backward(self, handle, pd, yd, y, dy, xd, x, dx):
        alpha, beta = c_float(1.0), c_float(0.0)
        self.call("cudnnPoolingBackward", [c_void_p] * 12, handle, pd, ctypes.byref(alpha), yd, y, yd, dy, xd, x,
                  ctypes.byref(beta), xd, dx)

    def relu_forward(self, handle, ad, xd, x, y):
        alpha, beta = c_float(1.0), c_float(0.0)
        self.call("cudnnActivationForward", [c_void_p] * 8, handle, ad, ctypes.byref(alpha), xd, x,
                  ctypes.byref(beta), xd, y)

    def relu_backward(self, handle, ad, xd, y, dy, x, dx):
        alpha, beta = c_float(1.0), c_float(0.0)
        self.call("cudnnActivationBackward", [c_void_p] * 12, handle, ad, ctypes.byref(alpha), xd, y, xd, dy, xd, x,
                  ctypes.byref(beta), xd, dx)

    def free_other(self, kind, desc):
        self.call("cudnnDestroy%sDescriptor" % kind, [c_void_p], desc)
