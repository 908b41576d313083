/* Fake libcuda for the smoke test: the driver API calls it makes, with "device" memory from malloc.
 *
 * -DINITRC=n        cuInit returns n (100 no device, 34 stub, 804 compat, 999 unknown, ...)
 * -DDRV=n           cuDriverGetVersion (default 13000)
 * -DNDEV=n          device count (default 1); cuDeviceGet beyond it returns 101
 * -DGPU_NAME="..."  -DCC_MAJOR=n -DCC_MINOR=n
 * -DFAIL_ALLOC_OVER=n  cuMemAlloc_v2 of more than n bytes returns 2 (out of memory)
 * -DSYNC_RC=n       cuCtxSynchronize returns n (e.g. 700 illegal address)
 */
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#ifndef INITRC
#define INITRC 0
#endif
#ifndef DRV
#define DRV 13000
#endif
#ifndef NDEV
#define NDEV 1
#endif
#ifndef GPU_NAME
#define GPU_NAME "Fake GPU"
#endif
#ifndef CC_MAJOR
#define CC_MAJOR 9
#endif
#ifndef CC_MINOR
#define CC_MINOR 0
#endif
#ifndef SYNC_RC
#define SYNC_RC 0
#endif

typedef unsigned long long CUdeviceptr;
static int initialised = 0;
static int current = 0;

int cuDriverGetVersion(int *v) { *v = DRV; return 0; }

int cuInit(unsigned int flags) {
    if (flags != 0) return 1;
    if (INITRC == 0) initialised = 1;
    return INITRC;
}

int cuDeviceGetCount(int *n) { if (!initialised) return 3; *n = NDEV; return 0; }

int cuDeviceGet(int *dev, int ordinal) {
    if (!initialised) return 3;
    if (ordinal < 0 || ordinal >= NDEV) return 101;
    *dev = ordinal;
    return 0;
}

int cuDeviceGetName(char *name, int len, int dev) {
    if (dev < 0 || dev >= NDEV || len <= 0) return 101;
    strncpy(name, GPU_NAME, (size_t)len - 1);
    name[len - 1] = 0;
    return 0;
}

int cuDeviceGetAttribute(int *out, int attr, int dev) {
    if (dev < 0 || dev >= NDEV) return 101;
    *out = attr == 75 ? CC_MAJOR : attr == 76 ? CC_MINOR : 0;
    return 0;
}

int cuDevicePrimaryCtxRetain(void **ctx, int dev) {
    if (dev < 0 || dev >= NDEV) return 101;
    *ctx = (void *)(uintptr_t)(0x1000 + dev);
    return 0;
}

int cuDevicePrimaryCtxRelease_v2(int dev) { (void)dev; return 0; }
int cuDevicePrimaryCtxRelease(int dev) { (void)dev; return 0; }

int cuCtxSetCurrent(void *ctx) { current = ctx != 0; return 0; }

int cuMemAlloc_v2(CUdeviceptr *ptr, size_t n) {
    if (!current) return 201;
#ifdef FAIL_ALLOC_OVER
    if (n > (size_t)FAIL_ALLOC_OVER) return 2;
#endif
    void *p = malloc(n ? n : 1);
    if (!p) return 2;
    *ptr = (CUdeviceptr)(uintptr_t)p;
    return 0;
}

int cuMemFree_v2(CUdeviceptr ptr) { free((void *)(uintptr_t)ptr); return 0; }

int cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) {
    memcpy((void *)(uintptr_t)dst, src, n);
    return 0;
}

int cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) {
    memcpy(dst, (const void *)(uintptr_t)src, n);
    return 0;
}

int cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t n) {
    memset((void *)(uintptr_t)dst, value, n);
    return 0;
}

int cuCtxSynchronize(void) { return current ? SYNC_RC : 201; }
