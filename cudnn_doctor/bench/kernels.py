"""The seed network's layers as plain CUDA C (no cuDNN): compiled with NVRTC and launched by the bench child.

One thread per output element, direct loops, float32 NCHW: what "CUDA without cuDNN" meant in the seed.
"""

SOURCE = r'''
extern "C" {
__global__ void conv_fwd(const float* x, const float* w, float* y, int N, int C, int H, int W, int K, int R, int S,
                         int P, int Q, int st, int pad) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i >= (long)N * K * P * Q) return;
    int q = i % Q, p = (i / Q) % P, k = (i / ((long)P * Q)) % K, n = i / ((long)K * P * Q);
    float acc = 0.f;
    for (int c = 0; c < C; c++)
        for (int r = 0; r < R; r++) {
            int ih = p * st - pad + r;
            if (ih < 0 || ih >= H) continue;
            for (int s = 0; s < S; s++) {
                int iw = q * st - pad + s;
                if (iw >= 0 && iw < W) acc += x[((n * C + c) * H + ih) * W + iw] * w[((k * C + c) * R + r) * S + s];
            }
        }
    y[i] = acc;
}

__global__ void conv_bwd_data(const float* dy, const float* w, float* dx, int N, int C, int H, int W, int K, int R,
                              int S, int P, int Q, int st, int pad) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i >= (long)N * C * H * W) return;
    int iw = i % W, ih = (i / W) % H, c = (i / ((long)H * W)) % C, n = i / ((long)C * H * W);
    float acc = 0.f;
    for (int k = 0; k < K; k++)
        for (int r = 0; r < R; r++) {
            int t = ih + pad - r;
            if (t < 0 || t % st) continue;
            int p = t / st;
            if (p >= P) continue;
            for (int s = 0; s < S; s++) {
                int u = iw + pad - s;
                if (u < 0 || u % st) continue;
                int q = u / st;
                if (q < Q) acc += dy[((n * K + k) * P + p) * Q + q] * w[((k * C + c) * R + r) * S + s];
            }
        }
    dx[i] = acc;
}

__global__ void conv_bwd_filter(const float* x, const float* dy, float* dw, int N, int C, int H, int W, int K, int R,
                                int S, int P, int Q, int st, int pad) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i >= (long)K * C * R * S) return;
    int s = i % S, r = (i / S) % R, c = (i / ((long)R * S)) % C, k = i / ((long)C * R * S);
    float acc = 0.f;
    for (int n = 0; n < N; n++)
        for (int p = 0; p < P; p++) {
            int ih = p * st - pad + r;
            if (ih < 0 || ih >= H) continue;
            for (int q = 0; q < Q; q++) {
                int iw = q * st - pad + s;
                if (iw >= 0 && iw < W) acc += x[((n * C + c) * H + ih) * W + iw] * dy[((n * K + k) * P + p) * Q + q];
            }
        }
    dw[i] = acc;
}

__global__ void relu_fwd(const float* x, float* y, long count) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < count) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

__global__ void relu_bwd(const float* x, const float* dy, float* dx, long count) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < count) dx[i] = x[i] > 0.f ? dy[i] : 0.f;
}

__global__ void pool_fwd(const float* x, float* y, int N, int C, int H, int W, int win) {
    int PH = H / win, PW = W / win;
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i >= (long)N * C * PH * PW) return;
    int pw = i % PW, ph = (i / PW) % PH;
    long plane = i / ((long)PH * PW);
    const float* base = x + plane * H * W;
    float m = base[(ph * win) * W + pw * win];
    for (int u = 0; u < win; u++)
        for (int v = 0; v < win; v++) m = fmaxf(m, base[(ph * win + u) * W + pw * win + v]);
    y[i] = m;
}

/* One thread per input element: the gradient goes to the first maximum of its window, zero elsewhere. */
__global__ void pool_bwd(const float* x, const float* dy, float* dx, int N, int C, int H, int W, int win) {
    int PH = H / win, PW = W / win;
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i >= (long)N * C * H * W) return;
    int iw = i % W, ih = (i / W) % H;
    long plane = i / ((long)H * W);
    int ph = ih / win, pw = iw / win;
    float g = 0.f;
    if (ph < PH && pw < PW) {
        const float* base = x + plane * H * W;
        int best = (ph * win) * W + pw * win;
        for (int u = 0; u < win; u++)
            for (int v = 0; v < win; v++) {
                int j = (ph * win + u) * W + pw * win + v;
                if (base[j] > base[best]) best = j;
            }
        if (best == ih * W + iw) g = dy[(plane * PH + ph) * PW + pw];
    }
    dx[i] = g;
}
}
'''

KERNELS = ("conv_fwd", "conv_bwd_data", "conv_bwd_filter", "relu_fwd", "relu_bwd", "pool_fwd", "pool_bwd")
