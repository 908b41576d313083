"""ctypes bindings to cuDNN's backend (graph) API for one convolution: the engines frameworks reach through
cudnn-frontend (torch's `cudnn.benchmark`), which the legacy cudnnFind* does not try.

One GraphConv describes a convolution direction as an operation graph, asks cuDNN's heuristics for engine
configurations, builds an execution plan for each and runs a plan through cudnnBackendExecute. Enum values are
cuDNN's own (cudnn_graph.h, stable across 8.x and 9.x). Runs only inside the bench child; imported by file location.
"""
import ctypes

import api  # bench's bindings (ApiError, data types)

c_int, c_int64, c_void_p, c_float = ctypes.c_int, ctypes.c_int64, ctypes.c_void_p, ctypes.c_float
P = ctypes.POINTER

# cudnnBackendDescriptorType_t
CONVOLUTION, ENGINE, ENGINECFG, ENGINEHEUR, EXECUTION_PLAN = 1, 2, 3, 4, 5
OP_FWD, OP_BWD_FILTER, OP_BWD_DATA, OPERATIONGRAPH, VARIANT_PACK, TENSOR = 10, 11, 12, 15, 16, 17
# cudnnBackendAttributeType_t
T_HANDLE, T_DATA_TYPE, T_INT64, T_FLOAT, T_VOID_PTR, T_CONV_MODE, T_HEUR_MODE = 0, 1, 3, 4, 6, 7, 8
T_NUMERICAL_NOTE, T_DESCRIPTOR, T_BEHAVIOR_NOTE = 11, 15, 19
# cudnnBackendAttributeName_t
CONV_COMP_TYPE, CONV_MODE, CONV_DILATIONS, CONV_STRIDES, CONV_POST_PAD, CONV_PRE_PAD, CONV_DIMS = range(100, 107)
HEUR_MODE, HEUR_GRAPH, HEUR_RESULTS = 200, 201, 202
CFG_ENGINE = 300
PLAN_HANDLE, PLAN_CONFIG, PLAN_WORKSPACE = 400, 401, 402
GRAPH_HANDLE, GRAPH_OPS = 800, 801
TENSOR_ALIGN, TENSOR_DTYPE, TENSOR_DIMS, TENSOR_STRIDES, TENSOR_UID = 900, 901, 902, 903, 906
PACK_UIDS, PACK_POINTERS, PACK_WORKSPACE = 1000, 1001, 1003
ENGINE_INDEX, ENGINE_NOTES, ENGINE_BEHAVIOR = 1301, 1303, 1305
# Each operation's attributes: alpha, beta, conv desc, then its three tensors by role.
OPS = {
    "fwd": (OP_FWD, 700, {"w": 703, "x": 704, "y": 705}),
    "bwd_data": (OP_BWD_DATA, 706, {"w": 709, "dx": 710, "dy": 711}),
    "bwd_filter": (OP_BWD_FILTER, 712, {"dw": 715, "x": 716, "dy": 717}),
}
HEUR_INSTANT, HEUR_FALLBACK = 0, 2  # cudnnBackendHeurMode_t: torch's benchmark mode asks both
NOTE_TENSOR_CORE, NOTE_DOWN_CONVERT_INPUTS = 0, 1  # cudnnBackendNumericalNote_t
RUNTIME_COMPILATION = 0  # cudnnBackendBehaviorNote_t: the plan compiles its kernel when it is built
CROSS_CORRELATION = 1
FLOAT = 0  # compute type: every data type here accumulates in float, as frameworks configure it


def available(dnn):
    return dnn.has("cudnnBackendCreateDescriptor") and dnn.has("cudnnBackendExecute")


class Engine:
    """One engine configuration the heuristics offered, with what its engine is known for."""

    def __init__(self, cfg, index, notes):
        self.cfg, self.index, self.notes = cfg, index, notes
        self.compiles = False
        self.plan, self.workspace, self.packs = None, 0, {}

    @property
    def name(self):
        return "graph eng%d" % self.index


class GraphConv:
    """One convolution direction as a backend operation graph, its engines and their execution plans."""

    def __init__(self, dnn, handle, op, direction, fmt):
        self.dnn, self.handle, self.direction = dnn, handle, direction
        self.owned = []  # every descriptor made here, destroyed by close()
        g, dtype = op.g, op.dtype
        kind, alpha_attr, roles = OPS[direction]
        nchw = fmt == 0
        shapes = {"x": (g.n, g.c, g.h, g.w), "dx": (g.n, g.c, g.h, g.w), "w": (g.k, g.c, g.r, g.s),
                  "dw": (g.k, g.c, g.r, g.s), "y": (g.n, g.k, g.p, g.q), "dy": (g.n, g.k, g.p, g.q)}
        pointers = {"x": op.x, "dx": op.dx, "w": op.w, "dw": op.dw, "y": op.y, "dy": op.dy}
        self.uids, self.pointers = [], []
        op_desc = self._new(kind)
        for uid, (role, attr) in enumerate(sorted(roles.items()), start=1):
            tensor = self._tensor(shapes[role], _strides(shapes[role], nchw), api.DATA[dtype], uid)
            self._set(op_desc, attr, T_DESCRIPTOR, c_void_p, [tensor])
            self.uids.append(uid)
            self.pointers.append(pointers[role])
        conv = self._new(CONVOLUTION)
        self._set(conv, CONV_COMP_TYPE, T_DATA_TYPE, c_int, [FLOAT])
        self._set(conv, CONV_MODE, T_CONV_MODE, c_int, [CROSS_CORRELATION])
        self._set(conv, CONV_DIMS, T_INT64, c_int64, [2])
        self._set(conv, CONV_DILATIONS, T_INT64, c_int64, [1, 1])
        self._set(conv, CONV_STRIDES, T_INT64, c_int64, [g.stride, g.stride])
        self._set(conv, CONV_PRE_PAD, T_INT64, c_int64, [g.pad, g.pad])
        self._set(conv, CONV_POST_PAD, T_INT64, c_int64, [g.pad, g.pad])
        self._finalize(conv)
        self._set(op_desc, alpha_attr, T_FLOAT, c_float, [1.0])
        self._set(op_desc, alpha_attr + 1, T_FLOAT, c_float, [0.0])
        self._set(op_desc, alpha_attr + 2, T_DESCRIPTOR, c_void_p, [conv])
        self._finalize(op_desc)
        self.graph = self._new(OPERATIONGRAPH)
        self._set(self.graph, GRAPH_OPS, T_DESCRIPTOR, c_void_p, [op_desc])
        self._set(self.graph, GRAPH_HANDLE, T_HANDLE, c_void_p, [handle])
        self._finalize(self.graph)

    # --- descriptors ---------------------------------------------------------------------------------------

    def _new(self, kind, owned=True):
        out = c_void_p()
        self.dnn.call("cudnnBackendCreateDescriptor", [c_int, P(c_void_p)], kind, ctypes.byref(out))
        if owned:
            self.owned.append(out.value)
        return out.value

    def _set(self, desc, name, typ, ctype, values):
        arr = (ctype * len(values))(*values)
        self.dnn.call("cudnnBackendSetAttribute", [c_void_p, c_int, c_int, c_int64, c_void_p], desc, name, typ,
                      len(values), ctypes.cast(arr, c_void_p))

    def _get(self, desc, name, typ, ctype, most):
        arr = (ctype * max(most, 1))()
        count = c_int64(0)
        self.dnn.call("cudnnBackendGetAttribute", [c_void_p, c_int, c_int, c_int64, P(c_int64), c_void_p],
                      desc, name, typ, most, ctypes.byref(count), ctypes.cast(arr, c_void_p) if most else None)
        return list(arr[: max(0, min(count.value, most))]) if most else count.value

    def _finalize(self, desc):
        self.dnn.call("cudnnBackendFinalize", [c_void_p], desc)

    def _tensor(self, dims, strides, dtype, uid):
        t = self._new(TENSOR)
        self._set(t, TENSOR_DTYPE, T_DATA_TYPE, c_int, [dtype])
        self._set(t, TENSOR_DIMS, T_INT64, c_int64, list(dims))
        self._set(t, TENSOR_STRIDES, T_INT64, c_int64, list(strides))
        self._set(t, TENSOR_UID, T_INT64, c_int64, [uid])
        self._set(t, TENSOR_ALIGN, T_INT64, c_int64, [16])
        self._finalize(t)
        return t

    # --- engines and plans -------------------------------------------------------------------------------

    def engines(self, keep, modes=(HEUR_INSTANT, HEUR_FALLBACK), most=10):
        """The configurations the heuristics offer, then the fallback list, that ``keep(engine)`` accepts, in that
        order, at most ``most``: filtered before the cut, as torch's cudnn.benchmark does (its benchmark_limit is
        10). An engine can come several times with other knob choices (tile sizes), which can be faster."""
        found = []
        for mode in modes:
            heur = self._new(ENGINEHEUR)
            self._set(heur, HEUR_GRAPH, T_DESCRIPTOR, c_void_p, [self.graph])
            self._set(heur, HEUR_MODE, T_HEUR_MODE, c_int, [mode])
            try:
                self._finalize(heur)
                count = self._get(heur, HEUR_RESULTS, T_DESCRIPTOR, c_void_p, 0)
            except api.ApiError:
                continue  # a mode this version lacks
            cfgs = [self._new(ENGINECFG) for _ in range(count)]
            for cfg in cfgs[: self._get_descriptors(heur, HEUR_RESULTS, cfgs)]:
                engine = self._new(ENGINE)
                self._get_descriptors(cfg, CFG_ENGINE, [engine])
                index = self._get(engine, ENGINE_INDEX, T_INT64, c_int64, 1)
                candidate = Engine(cfg, index[0] if index else -1,
                                   set(self._get(engine, ENGINE_NOTES, T_NUMERICAL_NOTE, c_int, 16)))
                candidate.compiles = RUNTIME_COMPILATION in self._get(engine, ENGINE_BEHAVIOR, T_BEHAVIOR_NOTE, c_int,
                                                                      8)
                if keep(candidate):
                    found.append(candidate)
                    if len(found) >= most:
                        return found
        return found

    def _get_descriptors(self, desc, name, into):
        """Fill the descriptors ``into`` (made by the caller, as the API wants) from a descriptor-array attribute."""
        arr = (c_void_p * max(len(into), 1))(*into)
        got = c_int64(0)
        self.dnn.call("cudnnBackendGetAttribute", [c_void_p, c_int, c_int, c_int64, P(c_int64), c_void_p],
                      desc, name, T_DESCRIPTOR, len(into), ctypes.byref(got), ctypes.cast(arr, c_void_p))
        return min(got.value, len(into))

    def build(self, engine):
        """Finalize ``engine``'s execution plan; False when this engine cannot run this graph here."""
        plan = self._new(EXECUTION_PLAN)
        self._set(plan, PLAN_HANDLE, T_HANDLE, c_void_p, [self.handle])
        self._set(plan, PLAN_CONFIG, T_DESCRIPTOR, c_void_p, [engine.cfg])
        try:
            self._finalize(plan)
        except api.ApiError:
            return False
        engine.plan = plan
        engine.workspace = int(self._get(plan, PLAN_WORKSPACE, T_INT64, c_int64, 1)[0])
        return True

    def execute(self, engine, workspace):
        """Enqueue ``engine``'s plan on the handle's stream."""
        pack = engine.packs.get(workspace)
        if pack is None:
            pack = self._new(VARIANT_PACK)
            self._set(pack, PACK_UIDS, T_INT64, c_int64, self.uids)
            self._set(pack, PACK_POINTERS, T_VOID_PTR, c_void_p, self.pointers)
            self._set(pack, PACK_WORKSPACE, T_VOID_PTR, c_void_p, [workspace or None])
            self._finalize(pack)
            engine.packs[workspace] = pack
        self.dnn.call("cudnnBackendExecute", [c_void_p, c_void_p, c_void_p], self.handle, engine.plan, pack)

    def close(self):
        for desc in reversed(self.owned):
            try:
                self.dnn.call("cudnnBackendDestroyDescriptor", [c_void_p], desc)
            except api.ApiError:
                pass
        self.owned = []


def _strides(dims, nchw):
    """Packed strides of an (N, C, H, W) tensor in NCHW or NHWC order (filters: KCRS or KRSC)."""
    n, c, h, w = dims
    return (c * h * w, h * w, w, 1) if nchw else (h * w * c, 1, w * c, c)


def usable(engine, dtype):
    """torch's filter for cudnn.benchmark: no engine that converts inputs down, and for strict float32 none that
    uses tensor cores (that would be TF32 math)."""
    if NOTE_DOWN_CONVERT_INPUTS in engine.notes:
        return False
    return not (dtype == "fp32" and NOTE_TENSOR_CORE in engine.notes)
