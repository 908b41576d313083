/* Fake libcudnn for the smoke test: the legacy convolution API computed on the CPU.
 *
 * "Device" pointers are host pointers (fake_cuda_mem.c allocates with malloc). Descriptors are checked
 * and their values (layout, type, padding, stride, dilation, mode) really drive the computation, so a
 * marshalling mistake in the caller gives wrong numbers or a BAD_PARAM, as the real library would.
 *
 * -DCUDNN_V=7605|8907|90100   version flavour: status numbering, FMA math (8+), cudnnGetLastErrorString (9+)
 * -DCUDART_V=n                cudnnGetCudartVersion
 * -DFAIL_AT='"stage"' -DFAIL_STATUS=n   return n from a stage: create tensor filter conv math outdim algo
 *                             wsize forward, or forward_ws (forward fails only for algorithms with workspace)
 * -DCRASH_AT='"stage"' / -DHANG_AT='"stage"'   SIGSEGV / sleep forever at that stage
 * -DGARBAGE          slightly wrong output (relative error ~1e-4)
 * -DNO_WRITE         report success without writing the output
 * -DPARTIAL_WRITE    leave the last output element unwritten
 * -DWS_BYTES=n       workspace of the preferred algorithm (default 0); -DPREFERRED_ALGO=n (default 1)
 * -DPERF_TENSOR_OP   heuristics list a tensor-op (TF32) algorithm first
 * -DSUBLIB='"name"'  cudnnCreate dlopens this sub-library by bare name, as cuDNN 9's shim does, and
 *                    fails with SUBLIBRARY_LOADING_FAILED (1008) when the loader cannot find it
 */
#include <dlfcn.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef CUDNN_V
#define CUDNN_V 90100
#endif
#ifndef CUDART_V
#define CUDART_V 12040
#endif
#ifndef WS_BYTES
#define WS_BYTES 0
#endif
#ifndef PREFERRED_ALGO
#define PREFERRED_ALGO 1
#endif

#if CUDNN_V >= 90000
#define ST_BAD_PARAM 2000
#define ST_NOT_SUPPORTED 3000
#else
#define ST_BAD_PARAM 3
#define ST_NOT_SUPPORTED 9
#endif

enum { MAGIC_HANDLE = 0x4841, MAGIC_TENSOR = 0x5445, MAGIC_FILTER = 0x4649, MAGIC_CONV = 0x434f };

typedef struct { int magic; } handle_t;
typedef struct { int magic, set, format, dtype, n, c, h, w; } tensor_t;
typedef struct { int magic, set, dtype, format, k, c, r, s; } filter_t;
typedef struct { int magic, set, pad_h, pad_w, u, v, dil_h, dil_w, mode, compute, math; } conv_t;
typedef struct { int algo; int status; float time; size_t memory; int determinism; int mathType; int reserved[3]; } perf_t;

static char last_error[256] = "";

static int stage_is(const char *want, const char *stage) { return want && strcmp(want, stage) == 0; }

/* Every entry point calls this first: the hostile variants and the failure injection live here. */
static int enter(const char *stage) {
    snprintf(last_error, sizeof last_error, "fake cudnn: %s", stage);
#ifdef CRASH_AT
    if (stage_is(CRASH_AT, stage)) raise(SIGSEGV);
#endif
#ifdef HANG_AT
    if (stage_is(HANG_AT, stage)) for (;;) sleep(1000);
#endif
#if defined(FAIL_AT) && defined(FAIL_STATUS)
    if (stage_is(FAIL_AT, stage)) return FAIL_STATUS;
#endif
    return 0;
}

size_t cudnnGetVersion(void) { return CUDNN_V; }
size_t cudnnGetCudartVersion(void) { return CUDART_V; }

const char *cudnnGetErrorString(int status) {
    static char text[64];
    snprintf(text, sizeof text, "FAKE_CUDNN_STATUS_%d", status);
    return text;
}

#if CUDNN_V >= 90000
void cudnnGetLastErrorString(char *message, size_t max_size) {
    if (max_size) { strncpy(message, last_error, max_size - 1); message[max_size - 1] = 0; }
}
#endif

int cudnnCreate(void **handle) {
    int rc = enter("create");
    if (rc) return rc;
#ifdef SUBLIB
    if (!dlopen(SUBLIB, RTLD_NOW | RTLD_LOCAL)) {
        snprintf(last_error, sizeof last_error, "%s", dlerror());
        return 1008;
    }
#endif
    handle_t *h = malloc(sizeof *h);
    h->magic = MAGIC_HANDLE;
    *handle = h;
    return 0;
}

int cudnnDestroy(void *handle) {
    handle_t *h = handle;
    if (!h || h->magic != MAGIC_HANDLE) return ST_BAD_PARAM;
    h->magic = 0;
    free(h);
    return 0;
}

int cudnnCreateTensorDescriptor(void **d) {
    tensor_t *t = calloc(1, sizeof *t);
    t->magic = MAGIC_TENSOR;
    *d = t;
    return 0;
}

int cudnnSetTensor4dDescriptor(void *d, int format, int dtype, int n, int c, int h, int w) {
    int rc = enter("tensor");
    tensor_t *t = d;
    if (rc) return rc;
    if (!t || t->magic != MAGIC_TENSOR || n <= 0 || c <= 0 || h <= 0 || w <= 0 || format < 0 || format > 2)
        return ST_BAD_PARAM;
    if (format != 0 || dtype != 0) return ST_NOT_SUPPORTED; /* the fake computes NCHW float only */
    t->format = format; t->dtype = dtype; t->n = n; t->c = c; t->h = h; t->w = w; t->set = 1;
    return 0;
}

int cudnnDestroyTensorDescriptor(void *d) {
    tensor_t *t = d;
    if (!t || t->magic != MAGIC_TENSOR) return ST_BAD_PARAM;
    t->magic = 0;
    free(t);
    return 0;
}

int cudnnCreateFilterDescriptor(void **d) {
    filter_t *f = calloc(1, sizeof *f);
    f->magic = MAGIC_FILTER;
    *d = f;
    return 0;
}

int cudnnSetFilter4dDescriptor(void *d, int dtype, int format, int k, int c, int r, int s) {
    int rc = enter("filter");
    filter_t *f = d;
    if (rc) return rc;
    if (!f || f->magic != MAGIC_FILTER || k <= 0 || c <= 0 || r <= 0 || s <= 0) return ST_BAD_PARAM;
    if (format != 0 || dtype != 0) return ST_NOT_SUPPORTED;
    f->dtype = dtype; f->format = format; f->k = k; f->c = c; f->r = r; f->s = s; f->set = 1;
    return 0;
}

int cudnnDestroyFilterDescriptor(void *d) {
    filter_t *f = d;
    if (!f || f->magic != MAGIC_FILTER) return ST_BAD_PARAM;
    f->magic = 0;
    free(f);
    return 0;
}

int cudnnCreateConvolutionDescriptor(void **d) {
    conv_t *c = calloc(1, sizeof *c);
    c->magic = MAGIC_CONV;
    *d = c;
    return 0;
}

int cudnnSetConvolution2dDescriptor(void *d, int pad_h, int pad_w, int u, int v, int dil_h, int dil_w, int mode,
                                    int compute) {
    int rc = enter("conv");
    conv_t *c = d;
    if (rc) return rc;
    if (!c || c->magic != MAGIC_CONV || pad_h < 0 || pad_w < 0 || u <= 0 || v <= 0 || dil_h <= 0 || dil_w <= 0 ||
        (mode != 0 && mode != 1) || compute != 0)
        return ST_BAD_PARAM;
    c->pad_h = pad_h; c->pad_w = pad_w; c->u = u; c->v = v; c->dil_h = dil_h; c->dil_w = dil_w;
    c->mode = mode; c->compute = compute; c->set = 1;
    return 0;
}

int cudnnSetConvolutionMathType(void *d, int math) {
    int rc = enter("math");
    conv_t *c = d;
    if (rc) return rc;
    if (!c || c->magic != MAGIC_CONV || math < 0 || math > 3) return ST_BAD_PARAM;
    if (CUDNN_V < 8000 && math == 3) return ST_BAD_PARAM; /* CUDNN_FMA_MATH arrived in 8.0 */
    c->math = math;
    return 0;
}

int cudnnDestroyConvolutionDescriptor(void *d) {
    conv_t *c = d;
    if (!c || c->magic != MAGIC_CONV) return ST_BAD_PARAM;
    c->magic = 0;
    free(c);
    return 0;
}

static int out_dim(int in, int pad, int dil, int k, int stride) { return (in + 2 * pad - dil * (k - 1) - 1) / stride + 1; }

static int valid(const conv_t *c, const tensor_t *x, const filter_t *f) {
    return c && c->magic == MAGIC_CONV && c->set && x && x->magic == MAGIC_TENSOR && x->set && f &&
           f->magic == MAGIC_FILTER && f->set && x->c == f->c;
}

int cudnnGetConvolution2dForwardOutputDim(void *cd, void *xd, void *wd, int *n, int *c, int *h, int *w) {
    int rc = enter("outdim");
    conv_t *cv = cd; tensor_t *x = xd; filter_t *f = wd;
    if (rc) return rc;
    if (!valid(cv, x, f)) return ST_BAD_PARAM;
    *n = x->n; *c = f->k;
    *h = out_dim(x->h, cv->pad_h, cv->dil_h, f->r, cv->u);
    *w = out_dim(x->w, cv->pad_w, cv->dil_w, f->s, cv->v);
    return 0;
}

static int valid_y(const conv_t *cv, const tensor_t *x, const filter_t *f, const tensor_t *y) {
    return valid(cv, x, f) && y && y->magic == MAGIC_TENSOR && y->set && y->n == x->n && y->c == f->k &&
           y->h == out_dim(x->h, cv->pad_h, cv->dil_h, f->r, cv->u) &&
           y->w == out_dim(x->w, cv->pad_w, cv->dil_w, f->s, cv->v);
}

static size_t workspace_for(int algo) { return algo == 0 ? 0 : (size_t)WS_BYTES; }

int cudnnGetConvolutionForwardAlgorithm_v7(void *handle, void *xd, void *wd, void *cd, void *yd, int requested,
                                           int *returned, perf_t *results) {
    int rc = enter("algo");
    conv_t *cv = cd;
    perf_t list[3];
    int n = 0, i;
    if (rc) return rc;
    if (!handle || ((handle_t *)handle)->magic != MAGIC_HANDLE || !valid_y(cv, xd, wd, yd) || requested <= 0)
        return ST_BAD_PARAM;
    memset(list, 0, sizeof list);
#ifdef PERF_TENSOR_OP
    list[n].algo = 6; list[n].memory = 4096; list[n].determinism = 1; list[n].mathType = 1; n++;
#endif
    list[n].algo = PREFERRED_ALGO; list[n].memory = workspace_for(PREFERRED_ALGO); list[n].determinism = 1;
    list[n].mathType = cv->math; n++;
    if (PREFERRED_ALGO != 0) {
        list[n].algo = 0; list[n].determinism = 1; list[n].mathType = cv->math; n++;
    }
    for (i = 0; i < n; i++) list[i].time = -1.0f;
    *returned = n < requested ? n : requested;
    memcpy(results, list, sizeof(perf_t) * (size_t)*returned);
    return 0;
}

int cudnnGetConvolutionForwardWorkspaceSize(void *handle, void *xd, void *wd, void *cd, void *yd, int algo,
                                            size_t *size) {
    int rc = enter("wsize");
    if (rc) return rc;
    if (!handle || !valid_y(cd, xd, wd, yd) || algo < 0 || algo > 7) return ST_BAD_PARAM;
    *size = workspace_for(algo);
    return 0;
}

/* TF32 keeps 10 mantissa bits: what DEFAULT_MATH may do to float32 on cuDNN 8+ (Ampere and newer). */
static float tf32(float v) {
    union { float f; uint32_t u; } b = {v};
    b.u &= 0xFFFFE000u;
    return b.f;
}

int cudnnConvolutionForward(void *handle, const void *alpha, void *xd, const void *x, void *wd, const void *w,
                            void *cd, int algo, void *workspace, size_t ws_size, const void *beta, void *yd, void *y) {
    tensor_t *xt = xd, *yt = yd;
    filter_t *f = wd;
    conv_t *cv = cd;
    const float *xs = x, *ws = w;
    float *ys = y;
    float a, b;
    int rc, n, k, p, q, c, r, s, total, i;
    int lossy = CUDNN_V >= 8000 && cv && cv->math != 3;
    rc = enter("forward");
    if (rc) return rc;
#if defined(FAIL_AT) && defined(FAIL_STATUS)
    if (algo != 0 && stage_is(FAIL_AT, "forward_ws")) return FAIL_STATUS;
#endif
    if (!handle || ((handle_t *)handle)->magic != MAGIC_HANDLE || !alpha || !beta || !x || !w || !y ||
        !valid_y(cv, xt, f, yt) || algo < 0 || algo > 7)
        return ST_BAD_PARAM;
    if (workspace_for(algo) && (!workspace || ws_size < workspace_for(algo))) return ST_BAD_PARAM;
    a = *(const float *)alpha;
    b = *(const float *)beta;
    total = yt->n * yt->c * yt->h * yt->w;
#ifdef NO_WRITE
    (void)a; (void)b; (void)total; (void)lossy;
    return 0;
#endif
    for (n = 0; n < yt->n; n++)
        for (k = 0; k < yt->c; k++)
            for (p = 0; p < yt->h; p++)
                for (q = 0; q < yt->w; q++) {
                    float acc = 0.0f;
                    for (c = 0; c < xt->c; c++)
                        for (r = 0; r < f->r; r++)
                            for (s = 0; s < f->s; s++) {
                                int ih = p * cv->u - cv->pad_h + r * cv->dil_h;
                                int iw = q * cv->v - cv->pad_w + s * cv->dil_w;
                                int fr = cv->mode == 0 ? f->r - 1 - r : r; /* CUDNN_CONVOLUTION flips the filter */
                                int fs = cv->mode == 0 ? f->s - 1 - s : s;
                                float xv, wv;
                                if (ih < 0 || ih >= xt->h || iw < 0 || iw >= xt->w) continue;
                                xv = xs[((n * xt->c + c) * xt->h + ih) * xt->w + iw];
                                wv = ws[((k * f->c + c) * f->r + fr) * f->s + fs];
                                acc += lossy ? tf32(xv) * tf32(wv) : xv * wv;
                            }
                    i = ((n * yt->c + k) * yt->h + p) * yt->w + q;
#ifdef PARTIAL_WRITE
                    if (i == total - 1) continue;
#endif
                    ys[i] = a * acc + (b != 0.0f ? b * ys[i] : 0.0f); /* beta == 0: y is never read */
#ifdef GARBAGE
                    ys[i] += 1e-4f * (float)(i % 7);
#endif
                }
    return 0;
}
