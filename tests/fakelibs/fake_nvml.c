/* Fake libnvidia-ml.so.1 with the calls nvidia-ml-py makes for cudnn-doctor.
 * Configure with -DFAKE_DRIVER="\"580.95.05\"" -DFAKE_CUDA=13000 -DFAKE_GPUS='{...},{...}'
 * -DFAKE_INIT_RC=18 makes nvmlInit fail (18 = driver/library version mismatch);
 * -DFAKE_ALL_FAIL makes every query after init fail with NVML_ERROR_UNKNOWN;
 * -DCRASH_IN_INIT / -DHANG_IN_INIT make a driver library that segfaults or never answers. */
#include <string.h>
#include <stdio.h>
typedef struct { const char *name; int cc_major, cc_minor; unsigned long long mem_mib;
                 unsigned mig, compute_mode, procs; const char *uuid; } fake_gpu;
#ifndef FAKE_DRIVER
#define FAKE_DRIVER "580.95.05"
#endif
#ifndef FAKE_CUDA
#define FAKE_CUDA 13000
#endif
#ifndef FAKE_INIT_RC
#define FAKE_INIT_RC 0
#endif
#ifdef FAKE_GPUS
static const fake_gpu GPUS[] = { FAKE_GPUS };
static const unsigned NGPU = sizeof(GPUS) / sizeof(GPUS[0]);
#else
static const fake_gpu GPUS[1] = {{0}};
static const unsigned NGPU = 0;
#endif
#ifdef FAKE_ALL_FAIL
#define Q_RC 999
#else
#define Q_RC 0
#endif
typedef struct { unsigned long long total, free, used; } mem_t;
static int copy(char *dst, unsigned len, const char *src) {
    if (strlen(src) + 1 > len) return 7; /* insufficient size */
    strcpy(dst, src); return 0;
}
#include <signal.h>
#include <unistd.h>
int nvmlInitWithFlags(unsigned flags) {
    (void)flags;
#ifdef CRASH_IN_INIT
    raise(SIGSEGV);
#endif
#ifdef HANG_IN_INIT
    for (;;) sleep(1000);
#endif
    return FAKE_INIT_RC;
}
int nvmlInit_v2(void) { return FAKE_INIT_RC; }
int nvmlShutdown(void) { return 0; }
const char *nvmlErrorString(int rc) {
    switch (rc) {
    case 9: return "Driver Not Loaded";
    case 12: return "NVML Shared Library Not Found";
    case 18: return "Driver/library version mismatch";
    case 999: return "Unknown Error";
    default: return "Fake NVML error";
    }
}
int nvmlSystemGetDriverVersion(char *buf, unsigned len) { if (Q_RC) return Q_RC; return copy(buf, len, FAKE_DRIVER); }
int nvmlSystemGetCudaDriverVersion(int *v) { if (Q_RC) return Q_RC; *v = FAKE_CUDA; return 0; }
int nvmlSystemGetCudaDriverVersion_v2(int *v) { if (Q_RC) return Q_RC; *v = FAKE_CUDA; return 0; }
int nvmlDeviceGetCount_v2(unsigned *n) { if (Q_RC) return Q_RC; *n = NGPU; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h) {
    if (Q_RC) return Q_RC; if (i >= NGPU) return 2; *h = (void *)&GPUS[i]; return 0; }
#define G ((const fake_gpu *)h)
int nvmlDeviceGetName(void *h, char *buf, unsigned len) { if (Q_RC) return Q_RC; return copy(buf, len, G->name); }
int nvmlDeviceGetUUID(void *h, char *buf, unsigned len) { if (Q_RC) return Q_RC; return copy(buf, len, G->uuid); }
int nvmlDeviceGetCudaComputeCapability(void *h, int *ma, int *mi) {
    if (Q_RC) return Q_RC; *ma = G->cc_major; *mi = G->cc_minor; return 0; }
int nvmlDeviceGetMemoryInfo(void *h, mem_t *m) {
    if (Q_RC) return Q_RC; m->total = G->mem_mib << 20; m->free = m->total / 2; m->used = m->total - m->free; return 0; }
int nvmlDeviceGetMigMode(void *h, unsigned *cur, unsigned *pend) {
    if (Q_RC) return Q_RC; *cur = G->mig; *pend = G->mig; return 0; }
int nvmlDeviceGetComputeMode(void *h, int *mode) { if (Q_RC) return Q_RC; *mode = (int)G->compute_mode; return 0; }
int nvmlDeviceGetMaxMigDeviceCount(void *h, unsigned *n) { if (Q_RC) return Q_RC; *n = 0; (void)h; return 0; }
typedef struct { unsigned pid; unsigned long long used; unsigned gi, ci; } proc_t;
int nvmlDeviceGetComputeRunningProcesses_v3(void *h, unsigned *count, proc_t *infos) {
    if (Q_RC) return Q_RC;
    unsigned n = G->procs;
    if (n == 0) { *count = 0; return 0; }
    if (!infos || *count < n) { *count = n; return 7; }
    for (unsigned i = 0; i < n; i++) { infos[i].pid = 1000 + i; infos[i].used = 1 << 20; infos[i].gi = infos[i].ci = 0xFFFFFFFF; }
    *count = n; return 0;
}
