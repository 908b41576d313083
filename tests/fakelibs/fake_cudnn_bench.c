/* Fake libcudnn for `bench`: fake_cudnn_conv.c plus what bench calls: streams, cudnnFind*Ex for all three
 * directions, backward data and filter computed on the CPU, max pooling and ReLU forward and backward.
 * float32 NCHW only, like the base fake (other types and layouts return NOT_SUPPORTED).
 *
 * -DBAD_BWD_DATA     backward data returns slightly wrong numbers (a fast wrong answer)
 * -DFIND_WS=n        workspace Find reports for the fastest algorithm (default 4096; algorithm 0 needs none)
 * -DNO_GRAPH_API     leave out cuDNN's backend (graph) API, as in a library older than 8.0
 * -DGRAPH_BAD        see fake_cudnn_graph.c
 */
#pragma GCC optimize("O2") /* the seed network's step convolves on the CPU here: keep the tests quick */
#define cudnnConvolutionForward base_cudnnConvolutionForward
#include "fake_cudnn_conv.c"
#undef cudnnConvolutionForward

static int in_graph; /* inside cudnnBackendExecute, which runs the legacy CPU code (fake_cudnn_graph.c) */

/* Algorithm 0 (no workspace) really is slower, so timing the candidates agrees with Find. */
static void slow_if_no_workspace(int algo) {
#ifdef GRAPH_BAD
    if (!in_graph) { usleep(3000); return; } /* every legacy algorithm is slower than the wrong engine */
#endif
    if (algo == 0 && !in_graph) usleep(2000);
}

int cudnnConvolutionForward(void *handle, const void *alpha, void *xd, const void *x, void *wd, const void *w,
                            void *cd, int algo, void *workspace, size_t ws_size, const void *beta, void *yd, void *y) {
    slow_if_no_workspace(algo);
    return base_cudnnConvolutionForward(handle, alpha, xd, x, wd, w, cd, algo, workspace, ws_size, beta, yd, y);
}

#ifndef FIND_WS
#define FIND_WS 4096
#endif

enum { MAGIC_POOL = 0x504f, MAGIC_ACT = 0x4143 };
typedef struct { int magic, win, stride; } pool_t;
typedef struct { int magic, mode; } act_t;

int cudnnSetStream(void *handle, void *stream) {
    (void)stream;
    return handle && ((handle_t *)handle)->magic == MAGIC_HANDLE ? 0 : ST_BAD_PARAM;
}

/* Find: the "fast" algorithm 1 needs FIND_WS bytes, algorithm 0 none and is twice as slow. */
static int find(const char *stage, void *handle, int requested, int *returned, perf_t *results, size_t ws_size,
                int math) {
    int rc = enter(stage), n = 0;
    if (rc) return rc;
    if (!handle || ((handle_t *)handle)->magic != MAGIC_HANDLE || requested < 2) return ST_BAD_PARAM;
    memset(results, 0, sizeof(perf_t) * 2);
    if (ws_size >= (size_t)FIND_WS) {
        results[n].algo = 1; results[n].time = 1.0f; results[n].memory = FIND_WS; results[n].mathType = math; n++;
    }
    results[n].algo = 0; results[n].time = 2.0f; results[n].memory = 0; results[n].mathType = math; n++;
    *returned = n;
    return 0;
}

int cudnnFindConvolutionForwardAlgorithmEx(void *h, void *xd, const void *x, void *wd, const void *w, void *cd,
                                           void *yd, void *y, int req, int *ret, perf_t *res, void *ws, size_t wss) {
    if (!valid_y(cd, xd, wd, yd) || !x || !w || !y) return ST_BAD_PARAM;
    (void)ws;
    return find("find_fwd", h, req, ret, res, wss, ((conv_t *)cd)->math);
}

int cudnnFindConvolutionBackwardDataAlgorithmEx(void *h, void *wd, const void *w, void *dyd, const void *dy,
                                                void *cd, void *dxd, void *dx, int req, int *ret, perf_t *res,
                                                void *ws, size_t wss) {
    if (!valid_y(cd, dxd, wd, dyd) || !w || !dy || !dx) return ST_BAD_PARAM;
    (void)ws;
    return find("find_bwd_data", h, req, ret, res, wss, ((conv_t *)cd)->math);
}

int cudnnFindConvolutionBackwardFilterAlgorithmEx(void *h, void *xd, const void *x, void *dyd, const void *dy,
                                                  void *cd, void *dwd, void *dw, int req, int *ret, perf_t *res,
                                                  void *ws, size_t wss) {
    if (!valid_y(cd, xd, dwd, dyd) || !x || !dy || !dw) return ST_BAD_PARAM;
    (void)ws;
    return find("find_bwd_filter", h, req, ret, res, wss, ((conv_t *)cd)->math);
}

static size_t find_ws(int algo) { return algo == 1 ? (size_t)FIND_WS : 0; }

int cudnnGetConvolutionBackwardDataWorkspaceSize(void *h, void *wd, void *dyd, void *cd, void *dxd, int algo,
                                                 size_t *size) {
    if (!h || !valid_y(cd, dxd, wd, dyd) || algo < 0 || algo > 5) return ST_BAD_PARAM;
    *size = find_ws(algo);
    return 0;
}

int cudnnGetConvolutionBackwardFilterWorkspaceSize(void *h, void *xd, void *dyd, void *cd, void *dwd, int algo,
                                                   size_t *size) {
    if (!h || !valid_y(cd, xd, dwd, dyd) || algo < 0 || algo > 6) return ST_BAD_PARAM;
    *size = find_ws(algo);
    return 0;
}

/* x index, or -1 outside the input (zero padding) */
static long x_at(const tensor_t *x, const conv_t *cv, int n, int c, int p, int q, int r, int s) {
    int ih = p * cv->u - cv->pad_h + r * cv->dil_h, iw = q * cv->v - cv->pad_w + s * cv->dil_w;
    if (ih < 0 || ih >= x->h || iw < 0 || iw >= x->w) return -1;
    return ((long)(n * x->c + c) * x->h + ih) * x->w + iw;
}

static int checked(void *handle, const void *alpha, const void *beta, const void *ws, size_t ws_size, int algo) {
    if (!handle || ((handle_t *)handle)->magic != MAGIC_HANDLE || !alpha || !beta) return ST_BAD_PARAM;
    if (find_ws(algo) && (!ws || ws_size < find_ws(algo))) return ST_BAD_PARAM;
    return 0;
}

int cudnnConvolutionBackwardData(void *handle, const void *alpha, void *wd, const void *w, void *dyd, const void *dy,
                                 void *cd, int algo, void *ws, size_t ws_size, const void *beta, void *dxd, void *dx) {
    tensor_t *xt = dxd, *yt = dyd; filter_t *f = wd; conv_t *cv = cd;
    const float *wv = w, *dyv = dy; float *dxv = dx;
    long i, total;
    int n, k, p, q, c, r, s, rc = enter("bwd_data");
    if (rc) return rc;
    slow_if_no_workspace(algo);
    if ((rc = checked(handle, alpha, beta, ws, ws_size, algo))) return rc;
    if (!valid_y(cv, xt, f, yt) || !w || !dy || !dx) return ST_BAD_PARAM;
    total = (long)xt->n * xt->c * xt->h * xt->w;
    for (i = 0; i < total; i++) dxv[i] = 0.0f;
    for (n = 0; n < yt->n; n++)
        for (k = 0; k < yt->c; k++)
            for (p = 0; p < yt->h; p++)
                for (q = 0; q < yt->w; q++) {
                    float g = dyv[((n * yt->c + k) * yt->h + p) * yt->w + q];
                    for (c = 0; c < xt->c; c++)
                        for (r = 0; r < f->r; r++)
                            for (s = 0; s < f->s; s++) {
                                long xi = x_at(xt, cv, n, c, p, q, r, s);
                                if (xi >= 0) dxv[xi] += g * wv[((k * f->c + c) * f->r + r) * f->s + s];
                            }
                }
#ifdef BAD_BWD_DATA
    for (i = 0; i < total; i++) dxv[i] *= 1.01f;
#endif
    return 0;
}

int cudnnConvolutionBackwardFilter(void *handle, const void *alpha, void *xd, const void *x, void *dyd,
                                   const void *dy, void *cd, int algo, void *ws, size_t ws_size, const void *beta,
                                   void *dwd, void *dw) {
    tensor_t *xt = xd, *yt = dyd; filter_t *f = dwd; conv_t *cv = cd;
    const float *xv = x, *dyv = dy; float *dwv = dw;
    long i, total;
    int n, k, p, q, c, r, s, rc = enter("bwd_filter");
    if (rc) return rc;
    slow_if_no_workspace(algo);
    if ((rc = checked(handle, alpha, beta, ws, ws_size, algo))) return rc;
    if (!valid_y(cv, xt, f, yt) || !x || !dy || !dw) return ST_BAD_PARAM;
    total = (long)f->k * f->c * f->r * f->s;
    for (i = 0; i < total; i++) dwv[i] = 0.0f;
    for (n = 0; n < yt->n; n++)
        for (k = 0; k < yt->c; k++)
            for (p = 0; p < yt->h; p++)
                for (q = 0; q < yt->w; q++) {
                    float g = dyv[((n * yt->c + k) * yt->h + p) * yt->w + q];
                    for (c = 0; c < xt->c; c++)
                        for (r = 0; r < f->r; r++)
                            for (s = 0; s < f->s; s++) {
                                long xi = x_at(xt, cv, n, c, p, q, r, s);
                                if (xi >= 0) dwv[((k * f->c + c) * f->r + r) * f->s + s] += g * xv[xi];
                            }
                }
    return 0;
}

int cudnnCreatePoolingDescriptor(void **d) {
    pool_t *p = calloc(1, sizeof *p);
    p->magic = MAGIC_POOL;
    *d = p;
    return 0;
}

int cudnnSetPooling2dDescriptor(void *d, int mode, int nan, int wh, int ww, int ph, int pw, int sh, int sw) {
    pool_t *p = d;
    if (!p || p->magic != MAGIC_POOL || mode != 0 || nan != 0 || wh != ww || ph || pw || sh != sw) return ST_BAD_PARAM;
    p->win = wh; p->stride = sh;
    return 0;
}

int cudnnDestroyPoolingDescriptor(void *d) { free(d); return 0; }

static int pool_ok(const pool_t *p, const tensor_t *x, const tensor_t *y) {
    return p && p->magic == MAGIC_POOL && x && x->set && y && y->set && p->win == p->stride && y->n == x->n &&
           y->c == x->c && y->h == x->h / p->win && y->w == x->w / p->win;
}

/* first maximum of a window, as a flat x index */
static long window_max(const tensor_t *x, const float *xv, int win, int n, int c, int i, int j) {
    long best = ((long)(n * x->c + c) * x->h + i * win) * x->w + j * win;
    int u, v;
    for (u = 0; u < win; u++)
        for (v = 0; v < win; v++) {
            long k = ((long)(n * x->c + c) * x->h + i * win + u) * x->w + j * win + v;
            if (xv[k] > xv[best]) best = k;
        }
    return best;
}

int cudnnPoolingForward(void *h, void *pd, const void *alpha, void *xd, const void *x, const void *beta, void *yd,
                        void *y) {
    pool_t *p = pd; tensor_t *xt = xd, *yt = yd;
    int n, c, i, j, rc = enter("pool_fwd");
    if (rc) return rc;
    if (!h || !alpha || !beta || !pool_ok(p, xt, yt)) return ST_BAD_PARAM;
    for (n = 0; n < yt->n; n++)
        for (c = 0; c < yt->c; c++)
            for (i = 0; i < yt->h; i++)
                for (j = 0; j < yt->w; j++)
                    ((float *)y)[((n * yt->c + c) * yt->h + i) * yt->w + j] =
                        ((const float *)x)[window_max(xt, x, p->win, n, c, i, j)];
    return 0;
}

int cudnnPoolingBackward(void *h, void *pd, const void *alpha, void *yd, const void *y, void *dyd, const void *dy,
                         void *xd, const void *x, const void *beta, void *dxd, void *dx) {
    pool_t *p = pd; tensor_t *xt = xd, *yt = yd;
    long k, total;
    int n, c, i, j, rc = enter("pool_bwd");
    (void)y; (void)dyd; (void)dxd;
    if (rc) return rc;
    if (!h || !alpha || !beta || !pool_ok(p, xt, yt)) return ST_BAD_PARAM;
    total = (long)xt->n * xt->c * xt->h * xt->w;
    for (k = 0; k < total; k++) ((float *)dx)[k] = 0.0f;
    for (n = 0; n < yt->n; n++)
        for (c = 0; c < yt->c; c++)
            for (i = 0; i < yt->h; i++)
                for (j = 0; j < yt->w; j++)
                    ((float *)dx)[window_max(xt, x, p->win, n, c, i, j)] +=
                        ((const float *)dy)[((n * yt->c + c) * yt->h + i) * yt->w + j];
    return 0;
}

int cudnnCreateActivationDescriptor(void **d) {
    act_t *a = calloc(1, sizeof *a);
    a->magic = MAGIC_ACT;
    *d = a;
    return 0;
}

int cudnnSetActivationDescriptor(void *d, int mode, int nan, double coef) {
    act_t *a = d;
    (void)coef;
    if (!a || a->magic != MAGIC_ACT || mode != 1 || nan != 0) return ST_BAD_PARAM; /* RELU only */
    a->mode = mode;
    return 0;
}

int cudnnDestroyActivationDescriptor(void *d) { free(d); return 0; }

static long count_of(const tensor_t *t) { return (long)t->n * t->c * t->h * t->w; }

int cudnnActivationForward(void *h, void *ad, const void *alpha, void *xd, const void *x, const void *beta, void *yd,
                           void *y) {
    long i, n;
    int rc = enter("act_fwd");
    if (rc) return rc;
    if (!h || !ad || !alpha || !beta || !xd || !yd || !((tensor_t *)xd)->set) return ST_BAD_PARAM;
    n = count_of(xd);
    for (i = 0; i < n; i++) ((float *)y)[i] = ((const float *)x)[i] > 0 ? ((const float *)x)[i] : 0.0f;
    return 0;
}

int cudnnActivationBackward(void *h, void *ad, const void *alpha, void *yd, const void *y, void *dyd, const void *dy,
                            void *xd, const void *x, const void *beta, void *dxd, void *dx) {
    long i, n;
    int rc = enter("act_bwd");
    (void)dyd; (void)xd; (void)x; (void)dxd;
    if (rc) return rc;
    if (!h || !ad || !alpha || !beta || !yd || !((tensor_t *)yd)->set) return ST_BAD_PARAM;
    n = count_of(yd);
    for (i = 0; i < n; i++) ((float *)dx)[i] = ((const float *)y)[i] > 0 ? ((const float *)dy)[i] : 0.0f;
    return 0;
}

#ifndef NO_GRAPH_API
#include "fake_cudnn_graph.c"
#endif
