/* Fake libcuda for `bench`: fake_cuda_mem.c plus memory info, device copies, streams and wall-clock events.
 * No graph-capture entry points: bench must fall back to timing a plain loop.
 *
 * -DSM_COUNT=n     CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT (default 132)
 * -DFREE_BYTES=n   cuMemGetInfo_v2's free memory (default 80 GiB)
 */
#define cuDeviceGetAttribute base_cuDeviceGetAttribute
#include "fake_cuda_mem.c"
#undef cuDeviceGetAttribute
#include <time.h>

#ifndef SM_COUNT
#define SM_COUNT 132
#endif
#ifndef FREE_BYTES
#define FREE_BYTES (80ULL << 30)
#endif

int cuDeviceGetAttribute(int *out, int attr, int dev) {
    if (attr == 16) {
        if (dev < 0 || dev >= NDEV) return 101;
        *out = SM_COUNT;
        return 0;
    }
    return base_cuDeviceGetAttribute(out, attr, dev);
}

int cuMemGetInfo_v2(size_t *free_bytes, size_t *total) {
    *free_bytes = (size_t)FREE_BYTES;
    *total = (size_t)FREE_BYTES + (1ULL << 30);
    return current ? 0 : 201;
}

int cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
    memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
    return 0;
}

int cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, void *stream) {
    (void)stream;
    return cuMemcpyDtoD_v2(dst, src, n);
}

int cuStreamCreate(void **stream, unsigned int flags) {
    (void)flags;
    *stream = malloc(1);
    return current ? 0 : 201;
}

int cuStreamSynchronize(void *stream) { (void)stream; return 0; }

typedef struct { double t; } event_t;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int cuEventCreate(void **ev, unsigned int flags) {
    (void)flags;
    *ev = calloc(1, sizeof(event_t));
    return 0;
}

int cuEventRecord(void *ev, void *stream) {
    (void)stream;
    ((event_t *)ev)->t = now_ms();
    return 0;
}

int cuEventSynchronize(void *ev) { (void)ev; return 0; }

int cuEventElapsedTime(float *ms, void *start, void *end) {
    *ms = (float)(((event_t *)end)->t - ((event_t *)start)->t);
    return 0;
}
