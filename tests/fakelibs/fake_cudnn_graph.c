/* cuDNN's backend (graph) API for the bench fake, over its legacy CPU convolutions. Included by
 * fake_cudnn_bench.c unless -DNO_GRAPH_API.
 *
 * Descriptors keep the attributes they are given and check each one's type, count and owner, as cuDNN does,
 * so a marshalling mistake in the caller is a BAD_PARAM. The instant heuristics offer three engines:
 * 0 (plain, no workspace), 1 (tensor-core note, workspace 4096) and 2 (down-converts its inputs); the
 * fallback list offers engine 0 again. A plan runs the legacy convolution of its direction on the CPU; only
 * packed NCHW float32 graphs are supported (others fail at plan finalize with NOT_SUPPORTED, as an engine
 * that cannot run a graph does).
 *
 * An engine's run takes 1 ms more than the legacy CPU code: slower than the legacy algorithm that uses workspace,
 * faster than the one without, so which contender wins is known.
 * -DGRAPH_BAD   engine 0 writes slightly wrong numbers and is the fastest contender (a fast wrong answer)
 */
enum { BK_CONV = 1, BK_ENGINE = 2, BK_CFG = 3, BK_HEUR = 4, BK_PLAN = 5, BK_FWD = 10, BK_BWD_FILTER = 11,
       BK_BWD_DATA = 12, BK_GRAPH = 15, BK_PACK = 16, BK_TENSOR = 17, MAGIC_BK = 0x424b };
enum { AT_HANDLE = 0, AT_DATA_TYPE = 1, AT_INT64 = 3, AT_FLOAT = 4, AT_VOID_PTR = 6, AT_CONV_MODE = 7,
       AT_HEUR_MODE = 8, AT_NOTE = 11, AT_DESC = 15, AT_BEHAVIOR = 19 };

typedef struct bk bk_t;
struct bk {
    int magic, type, final;
    int dtype; int64_t dims[4], strides[4], uid;                  /* tensor */
    int64_t pre[2], post[2], stride[2], dil[2]; int mode, comp;   /* convolution */
    bk_t *in1, *in2, *out, *conv; float alpha, beta; int scalars; /* operation: tensors by role, see op_role */
    bk_t *op; void *handle;                                       /* operation graph (and plan: handle) */
    bk_t *graph; int heur_mode;                                   /* heuristics; cfg and engine: graph */
    int engine;                                                   /* engine config, engine */
    bk_t *cfg; int64_t ws;                                        /* plan */
    int64_t uids[4]; void *ptrs[4]; int nuids, nptrs; void *wsp;  /* variant pack */
};

static int is_bk(const void *d, int type) {
    const bk_t *b = d;
    return b && b->magic == MAGIC_BK && (type < 0 || b->type == type);
}

int cudnnBackendCreateDescriptor(int type, void **out) {
    bk_t *b;
    if (!out || !(type == BK_CONV || type == BK_ENGINE || type == BK_CFG || type == BK_HEUR || type == BK_PLAN ||
                  type == BK_FWD || type == BK_BWD_FILTER || type == BK_BWD_DATA || type == BK_GRAPH ||
                  type == BK_PACK || type == BK_TENSOR))
        return ST_BAD_PARAM;
    b = calloc(1, sizeof *b);
    b->magic = MAGIC_BK; b->type = type; b->engine = -1;
    *out = b;
    return 0;
}

int cudnnBackendDestroyDescriptor(void *d) {
    if (!is_bk(d, -1)) return ST_BAD_PARAM;
    ((bk_t *)d)->magic = 0;
    free(d);
    return 0;
}

/* The slot an operation attribute fills: 1 = in1, 2 = in2, 3 = out, 4 = conv, 5 = alpha, 6 = beta, 0 = none.
 * Forward: x, w -> y; backward data: w, dy -> dx; backward filter: x, dy -> dw (the legacy calls' order). */
static int op_role(int type, int name) {
    static const int fwd[] = {5, 6, 4, 2, 1, 3}, bdata[] = {5, 6, 4, 1, 3, 2}, bfilt[] = {5, 6, 4, 3, 1, 2};
    if (type == BK_FWD && name >= 700 && name <= 705) return fwd[name - 700];
    if (type == BK_BWD_DATA && name >= 706 && name <= 711) return bdata[name - 706];
    if (type == BK_BWD_FILTER && name >= 712 && name <= 717) return bfilt[name - 712];
    return 0;
}

#define WANT(t, n) do { if (type != (t) || count != (n) || !values) return ST_BAD_PARAM; } while (0)

int cudnnBackendSetAttribute(void *d, int name, int type, int64_t count, const void *values) {
    bk_t *b = d;
    const int64_t *i64 = values;
    int k;
    if (!is_bk(b, -1) || b->final) return ST_BAD_PARAM;
    switch (b->type) {
    case BK_TENSOR:
        if (name == 901) { WANT(AT_DATA_TYPE, 1); b->dtype = *(const int *)values; return 0; }
        if (name == 902 || name == 903) {
            WANT(AT_INT64, 4);
            for (k = 0; k < 4; k++) (name == 902 ? b->dims : b->strides)[k] = i64[k];
            return 0;
        }
        if (name == 906) { WANT(AT_INT64, 1); b->uid = i64[0]; return 0; }
        if (name == 900) { WANT(AT_INT64, 1); return 0; }
        return ST_BAD_PARAM;
    case BK_CONV:
        if (name == 100) { WANT(AT_DATA_TYPE, 1); b->comp = *(const int *)values; return 0; }
        if (name == 101) { WANT(AT_CONV_MODE, 1); b->mode = *(const int *)values; return 0; }
        if (name == 106) { WANT(AT_INT64, 1); return i64[0] == 2 ? 0 : ST_NOT_SUPPORTED; }
        if (name >= 102 && name <= 105) {
            int64_t *dst = name == 102 ? b->dil : name == 103 ? b->stride : name == 104 ? b->post : b->pre;
            WANT(AT_INT64, 2);
            dst[0] = i64[0]; dst[1] = i64[1];
            return 0;
        }
        return ST_BAD_PARAM;
    case BK_FWD: case BK_BWD_DATA: case BK_BWD_FILTER:
        switch (op_role(b->type, name)) {
        case 5: WANT(AT_FLOAT, 1); b->alpha = *(const float *)values; b->scalars |= 1; return 0;
        case 6: WANT(AT_FLOAT, 1); b->beta = *(const float *)values; b->scalars |= 2; return 0;
        case 4: WANT(AT_DESC, 1); if (!is_bk(*(void *const *)values, BK_CONV)) return ST_BAD_PARAM;
                b->conv = *(bk_t *const *)values; return 0;
        case 1: case 2: case 3: {
            bk_t *t = *(bk_t *const *)values;
            WANT(AT_DESC, 1);
            if (!is_bk(t, BK_TENSOR) || !t->final) return ST_BAD_PARAM;
            k = op_role(b->type, name);
            *(k == 1 ? &b->in1 : k == 2 ? &b->in2 : &b->out) = t;
            return 0;
        }
        }
        return ST_BAD_PARAM;
    case BK_GRAPH:
        if (name == 800) { WANT(AT_HANDLE, 1); b->handle = *(void *const *)values; return 0; }
        if (name == 801) { WANT(AT_DESC, 1); b->op = *(bk_t *const *)values; return 0; }
        return ST_BAD_PARAM;
    case BK_HEUR:
        if (name == 200) { WANT(AT_HEUR_MODE, 1); b->heur_mode = *(const int *)values; return 0; }
        if (name == 201) { WANT(AT_DESC, 1); b->graph = *(bk_t *const *)values; return 0; }
        return ST_BAD_PARAM;
    case BK_PLAN:
        if (name == 400) { WANT(AT_HANDLE, 1); b->handle = *(void *const *)values; return 0; }
        if (name == 401) { WANT(AT_DESC, 1); b->cfg = *(bk_t *const *)values; return 0; }
        return ST_BAD_PARAM;
    case BK_PACK:
        if (name == 1000 && type == AT_INT64 && count > 0 && count <= 4) {
            for (k = 0; k < count; k++) b->uids[k] = i64[k];
            b->nuids = (int)count;
            return 0;
        }
        if (name == 1001 && type == AT_VOID_PTR && count > 0 && count <= 4) {
            for (k = 0; k < count; k++) b->ptrs[k] = ((void *const *)values)[k];
            b->nptrs = (int)count;
            return 0;
        }
        if (name == 1003) { WANT(AT_VOID_PTR, 1); b->wsp = *(void *const *)values; return 0; }
        return ST_BAD_PARAM;
    }
    return ST_BAD_PARAM;
}

static int packed_nchw(const bk_t *t) {
    return t->strides[3] == 1 && t->strides[2] == t->dims[3] && t->strides[1] == t->dims[2] * t->dims[3] &&
           t->strides[0] == t->dims[1] * t->dims[2] * t->dims[3];
}

static const int64_t engine_ws[3] = {0, 4096, 0};

int cudnnBackendFinalize(void *d) {
    bk_t *b = d;
    if (!is_bk(b, -1) || b->final) return ST_BAD_PARAM;
    switch (b->type) {
    case BK_TENSOR:
        if (b->uid <= 0 || b->dims[0] <= 0 || b->strides[3] <= 0) return ST_BAD_PARAM;
        break;
    case BK_FWD: case BK_BWD_DATA: case BK_BWD_FILTER:
        if (!b->in1 || !b->in2 || !b->out || !b->conv || b->scalars != 3) return ST_BAD_PARAM;
        break;
    case BK_GRAPH:
        if (!b->handle || !is_bk(b->op, -1) || !b->op->final) return ST_BAD_PARAM;
        break;
    case BK_HEUR:
        if (!is_bk(b->graph, BK_GRAPH) || !b->graph->final || (b->heur_mode != 0 && b->heur_mode != 2))
            return ST_BAD_PARAM;
        break;
    case BK_PLAN: {
        bk_t *op;
        if (!b->handle || !is_bk(b->cfg, BK_CFG) || !b->cfg->final) return ST_BAD_PARAM;
        op = b->cfg->graph->op;
        if (!packed_nchw(op->in1) || !packed_nchw(op->in2) || !packed_nchw(op->out) || op->in1->dtype != 0)
            return ST_NOT_SUPPORTED; /* this fake computes packed NCHW float only */
        b->ws = engine_ws[b->cfg->engine];
        break;
    }
    case BK_PACK:
        if (b->nuids != 3 || b->nptrs != 3) return ST_BAD_PARAM;
        break;
    }
    b->final = 1;
    return 0;
}

static int put_i64(int64_t value, int type, int64_t requested, int64_t *count, void *out) {
    if (type != AT_INT64 || !count) return ST_BAD_PARAM;
    *count = 1;
    if (requested >= 1 && out) *(int64_t *)out = value;
    return 0;
}

int cudnnBackendGetAttribute(void *d, int name, int type, int64_t requested, int64_t *count, void *out) {
    bk_t *b = d;
    int k;
    if (!is_bk(b, -1) || !count) return ST_BAD_PARAM;
    if (b->type == BK_HEUR && name == 202) {
        /* instant: engines 0, 1, 2; fallback: engine 0 again */
        int n = b->heur_mode == 0 ? 3 : 1;
        if (type != AT_DESC || !b->final) return ST_BAD_PARAM;
        *count = n;
        for (k = 0; k < n && k < requested; k++) {
            bk_t *cfg = ((bk_t **)out)[k];
            if (!is_bk(cfg, BK_CFG)) return ST_BAD_PARAM;
            cfg->engine = k; cfg->graph = b->graph; cfg->final = 1;
        }
        if (requested < n) *count = requested > 0 ? requested : n;
        return 0;
    }
    if (b->type == BK_CFG && name == 300) {
        bk_t *eng;
        if (type != AT_DESC || !b->final || requested != 1) return ST_BAD_PARAM;
        eng = *(bk_t **)out;
        if (!is_bk(eng, BK_ENGINE)) return ST_BAD_PARAM;
        eng->engine = b->engine; eng->graph = b->graph; eng->final = 1;
        *count = 1;
        return 0;
    }
    if (b->type == BK_ENGINE && name == 1301) return put_i64(b->engine, type, requested, count, out);
    if (b->type == BK_ENGINE && name == 1303) {
        if (type != AT_NOTE) return ST_BAD_PARAM;
        *count = b->engine == 0 ? 0 : 1;
        if (b->engine > 0 && requested >= 1) *(int *)out = b->engine == 1 ? 0 : 1; /* TENSOR_CORE, DOWN_CONVERT */
        return 0;
    }
    if (b->type == BK_ENGINE && name == 1305) { /* behaviour notes: engine 1 compiles its kernel at plan build */
        if (type != AT_BEHAVIOR) return ST_BAD_PARAM;
        *count = b->engine == 1 ? 1 : 0;
        if (b->engine == 1 && requested >= 1) *(int *)out = 0; /* RUNTIME_COMPILATION */
        return 0;
    }
    if (b->type == BK_PLAN && name == 402 && b->final) return put_i64(b->ws, type, requested, count, out);
    return ST_BAD_PARAM;
}

static void *pack_ptr(const bk_t *pack, const bk_t *t) {
    int k;
    for (k = 0; k < pack->nuids; k++)
        if (pack->uids[k] == t->uid) return pack->ptrs[k];
    return NULL;
}

static void legacy_tensor(tensor_t *t, const bk_t *b) {
    t->magic = MAGIC_TENSOR; t->set = 1; t->format = 0; t->dtype = 0;
    t->n = (int)b->dims[0]; t->c = (int)b->dims[1]; t->h = (int)b->dims[2]; t->w = (int)b->dims[3];
}

static void legacy_filter(filter_t *f, const bk_t *b) {
    f->magic = MAGIC_FILTER; f->set = 1; f->format = 0; f->dtype = 0;
    f->k = (int)b->dims[0]; f->c = (int)b->dims[1]; f->r = (int)b->dims[2]; f->s = (int)b->dims[3];
}

int cudnnBackendExecute(void *handle, void *plan, void *pack) {
    bk_t *p = plan, *v = pack, *op;
    tensor_t ta, tb; filter_t f; conv_t cv;
    void *a, *b2, *o, *ws;
    static char scratch[FIND_WS];
    int rc = enter("execute");
    if (rc) return rc;
    if (!handle || ((handle_t *)handle)->magic != MAGIC_HANDLE || !is_bk(p, BK_PLAN) || !p->final ||
        !is_bk(v, BK_PACK) || !v->final)
        return ST_BAD_PARAM;
    op = p->cfg->graph->op;
    a = pack_ptr(v, op->in1); b2 = pack_ptr(v, op->in2); o = pack_ptr(v, op->out);
    if (!a || !b2 || !o || (p->ws && !v->wsp)) return ST_BAD_PARAM;
    ws = v->wsp ? v->wsp : scratch;
    memset(&cv, 0, sizeof cv);
    cv.magic = MAGIC_CONV; cv.set = 1; cv.pad_h = (int)op->conv->pre[0]; cv.pad_w = (int)op->conv->pre[1];
    cv.u = (int)op->conv->stride[0]; cv.v = (int)op->conv->stride[1]; cv.dil_h = (int)op->conv->dil[0];
    cv.dil_w = (int)op->conv->dil[1]; cv.mode = op->conv->mode; cv.math = 3; /* engines here are exact float */
#ifndef GRAPH_BAD
    usleep(1000); /* slower than the legacy algorithm with workspace, faster than the one without */
#endif
    in_graph = 1;
    if (op->type == BK_FWD) {
        legacy_tensor(&ta, op->in1); legacy_filter(&f, op->in2); legacy_tensor(&tb, op->out);
        rc = base_cudnnConvolutionForward(handle, &op->alpha, &ta, a, &f, b2, &cv, 1, ws, FIND_WS, &op->beta, &tb, o);
    } else if (op->type == BK_BWD_DATA) {
        legacy_filter(&f, op->in1); legacy_tensor(&tb, op->in2); legacy_tensor(&ta, op->out);
        rc = cudnnConvolutionBackwardData(handle, &op->alpha, &f, a, &tb, b2, &cv, 1, ws, FIND_WS, &op->beta, &ta, o);
    } else {
        legacy_tensor(&ta, op->in1); legacy_tensor(&tb, op->in2); legacy_filter(&f, op->out);
        rc = cudnnConvolutionBackwardFilter(handle, &op->alpha, &ta, a, &tb, b2, &cv, 1, ws, FIND_WS, &op->beta, &f, o);
    }
    in_graph = 0;
#ifdef GRAPH_BAD
    if (rc == 0 && p->cfg->engine == 0) {
        long i, n = op->out->dims[0] * op->out->dims[1] * op->out->dims[2] * op->out->dims[3];
        for (i = 0; i < n; i++) ((float *)o)[i] *= 1.01f;
    }
#endif
    return rc;
}
