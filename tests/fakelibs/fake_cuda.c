/* Fake libcuda (driver API): cuDriverGetVersion reports DRV; cuInit returns INITRC.
 * The readiness calls (cuDeviceGet .. cuCtxDestroy) run the shipped kernel's arithmetic on the host for NDEV GPUs:
 * -DCTX_RC=n fails cuCtxCreate with n, -DLOAD_RC=n fails cuModuleLoadData, -DWRONG_RESULT makes the kernel write
 * wrong values, -DHANG_IN_LAUNCH makes the launch never return (-DHANG_ON_GPU=n: only on GPU n's context),
 * -DINIT_ALL_RC=n fails cuInit with n when every GPU is visible (one GPU that takes the node's cuInit down) while a
 * process that sees only some GPUs starts. cuInit honours CUDA_VISIBLE_DEVICES as CUDA does
 * (ordinals, or the UUIDs tests/node/node_kit.py gives: GPU-<8-digit ordinal>-...; the list ends at the first entry
 * that names no GPU) unless -DIGNORE_VISIBLE; the bus ids are those of the fake NVML (0x10 * (ordinal + 1)). */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>
#ifndef DRV
#define DRV 13000
#endif
#ifndef INITRC
#define INITRC 0
#endif
#ifndef NDEV
#define NDEV 1
#endif
#ifndef CTX_RC
#define CTX_RC 0
#endif
#ifndef LOAD_RC
#define LOAD_RC 0
#endif
int cuDriverGetVersion(int *v) { *v = DRV; return 0; }
static int visible[NDEV], nvisible = -1;
static int gpu_named(const char *token, size_t len) {
    char buf[64]; int n = -1; char end = 0;
    if (len == 0 || len >= sizeof buf) return -1;
    memcpy(buf, token, len); buf[len] = 0;
    if (sscanf(buf, "GPU-%8d-%c", &n, &end) == 2 || sscanf(buf, "%d%c", &n, &end) == 1) return n < NDEV ? n : -1;
    return -1;
}
int cuInit(unsigned int flags) {
    (void)flags;
    if (INITRC) return INITRC;
    const char *list = getenv("CUDA_VISIBLE_DEVICES");
#ifdef INIT_ALL_RC
    if (!list) return INIT_ALL_RC;
#endif
    nvisible = 0;
#ifndef IGNORE_VISIBLE
    if (list) {
        while (*list && nvisible < NDEV) {
            size_t len = strcspn(list, ",");
            int n = gpu_named(list, len);
            if (n < 0) break;
            visible[nvisible++] = n;
            list += len + (list[len] == ',');
        }
        return nvisible ? 0 : 100;
    }
#endif
    for (; nvisible < NDEV; nvisible++) visible[nvisible] = nvisible;
    return 0;
}
int cuDeviceGetCount(int *n) { *n = nvisible < 0 ? 0 : nvisible; return nvisible < 0 ? 3 : 0; }
int cuDeviceGet(int *dev, int ordinal) { if (ordinal < 0 || ordinal >= nvisible) return 101; *dev = visible[ordinal]; return 0; }
int cuDeviceGetPCIBusId(char *buf, int len, int dev) { snprintf(buf, len, "00000000:%02X:00.0", 0x10 * (dev + 1)); return 0; }
int cuDeviceGetAttribute(int *v, int attr, int dev) { (void)dev; *v = attr == 75 ? 9 : 0; return 0; }
int cuCtxCreate_v2(void **ctx, unsigned flags, int dev) { (void)flags; (void)dev; *ctx = (void *)1; return CTX_RC; }
static size_t current_ctx;  /* the device of the current context, plus one */
int cuDevicePrimaryCtxRetain(void **ctx, int dev) { *ctx = (void *)(size_t)(dev + 1); return CTX_RC; }
int cuCtxSetCurrent(void *ctx) { current_ctx = (size_t)ctx; return 0; }
int cuModuleLoadData(void **mod, const void *image) {
    if (LOAD_RC) return LOAD_RC;
    if (!strstr((const char *)image, ".entry doctor_ready") || !strstr((const char *)image, ".target sm_")) return 218;
    *mod = (void *)2; return 0; }
int cuModuleGetFunction(void **fn, void *mod, const char *name) { (void)mod; *fn = (void *)3; return strcmp(name, "doctor_ready") ? 500 : 0; }
int cuMemAlloc_v2(unsigned long long *ptr, size_t size) { *ptr = (unsigned long long)(size_t)calloc(1, size); return 0; }
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shared, void *stream, void **params, void **extra) {
    (void)f; (void)gx; (void)gy; (void)gz; (void)by; (void)bz; (void)shared; (void)stream; (void)extra;
#if defined(HANG_ON_GPU)
    if (current_ctx == (size_t)HANG_ON_GPU + 1) for (;;) sleep(1000);
#elif defined(HANG_IN_LAUNCH)
    for (;;) sleep(1000);
#endif
    unsigned *out = (unsigned *)(size_t)*(unsigned long long *)params[0];
    for (unsigned i = 0; i < bx; i++) out[i] = i * 3 + 7;
#ifdef WRONG_RESULT
    out[bx - 1] = 0;
#endif
    return 0;
}
int cuCtxSynchronize(void) { return 0; }
int cuMemcpyDtoH_v2(void *dst, unsigned long long src, size_t n) { memcpy(dst, (void *)(size_t)src, n); return 0; }
int cuMemFree_v2(unsigned long long ptr) { free((void *)(size_t)ptr); return 0; }
int cuCtxDestroy_v2(void *ctx) { (void)ctx; return 0; }
int cuGetErrorName(int rc, const char **name) {
    switch (rc) {
    case 2: *name = "CUDA_ERROR_OUT_OF_MEMORY"; return 0;
    case 46: *name = "CUDA_ERROR_DEVICE_UNAVAILABLE"; return 0;
    case 100: *name = "CUDA_ERROR_NO_DEVICE"; return 0;
    case 101: *name = "CUDA_ERROR_INVALID_DEVICE"; return 0;
    case 218: *name = "CUDA_ERROR_INVALID_PTX"; return 0;
    case 999: *name = "CUDA_ERROR_UNKNOWN"; return 0;
    default: return 1;
    }
}
