/* Fake libnvidia-ml.so.1 with the calls nvidia-ml-py makes for cudnn-doctor.
 * Configure with -DFAKE_DRIVER="\"580.95.05\"" -DFAKE_CUDA=13000 -DFAKE_GPUS='{...},{...}'
 * -DFAKE_INIT_RC=18 makes nvmlInit fail (18 = driver/library version mismatch);
 * -DFAKE_ALL_FAIL makes every query after init fail with NVML_ERROR_UNKNOWN;
 * -DCRASH_IN_INIT / -DHANG_IN_INIT make a driver library that segfaults or never answers.
 * Health (one entry per GPU, in order; healthy when absent): -DFAKE_HEALTH='{...},{...}' (fake_health below);
 * -DFAKE_P2P=n the P2P status of every pair (0 OK), -DFAKE_TOPO=n their common ancestor (nvml.h levels),
 * -DFAKE_FABRIC=n the fabric state of every GPU (3 completed; absent: not supported);
 * -DCRASH_IN_HEALTH makes the row remapping read segfault; -DFAKE_NVSWITCH joins the GPUs' links to NVSwitches. */
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
static int gpu_lost(unsigned i);
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
    case 2: return "Invalid Argument";
    case 3: return "Not Supported";
    case 5: return "Not Found";
    case 9: return "Driver Not Loaded";
    case 12: return "NVML Shared Library Not Found";
    case 15: return "GPU is lost";
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
    if (Q_RC) return Q_RC; if (i >= NGPU) return 2; if (gpu_lost(i)) return 15; *h = (void *)&GPUS[i]; return 0; }
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

/* --- health: ECC, row remapping, clock events, PCIe, NVLink, P2P, topology, fabric --- */
typedef struct { unsigned persist, ecc, ecc_pending; unsigned long long ecc_unc;
                 unsigned remap_pending, remap_failed, remap_corr, remap_unc; unsigned long long reasons;
                 unsigned gen, gen_max, width, width_max, nvlinks, nvlinks_down;
                 unsigned long long nvlink_replay; unsigned lost, no_remap, retired_pending; } fake_health;
#ifdef FAKE_HEALTH
static const fake_health HEALTH[] = { FAKE_HEALTH };
static const unsigned NHEALTH = sizeof(HEALTH) / sizeof(HEALTH[0]);
#else
static const fake_health HEALTH[1] = {{0}};
static const unsigned NHEALTH = 0;
#endif
static const fake_health HEALTHY = {1, 1, 1, 0, 0, 0, 0, 0, 0, 5, 5, 16, 16, 0, 0, 0, 0, 0, 0};
static unsigned gpu_index(void *h) { return (unsigned)((const fake_gpu *)h - GPUS); }
static const fake_health *H(void *h) { unsigned i = gpu_index(h); return i < NHEALTH ? &HEALTH[i] : &HEALTHY; }
static int gpu_lost(unsigned i) { return i < NHEALTH && HEALTH[i].lost; }
typedef struct { char legacy[16]; unsigned domain, bus, device, pci_id, subsys; char bus_id[32]; } pci_t;
static void fill_pci(unsigned i, pci_t *p) {
    memset(p, 0, sizeof(*p)); p->bus = 0x10 * (i + 1);
    snprintf(p->bus_id, sizeof(p->bus_id), "00000000:%02X:00.0", p->bus);
    snprintf(p->legacy, sizeof(p->legacy), "0000:%02X:00.0", p->bus);
}
int nvmlDeviceGetPciInfo_v3(void *h, pci_t *p) { if (Q_RC) return Q_RC; fill_pci(gpu_index(h), p); return 0; }
int nvmlDeviceGetPersistenceMode(void *h, unsigned *m) { if (Q_RC) return Q_RC; *m = H(h)->persist; return 0; }
int nvmlDeviceGetEccMode(void *h, unsigned *cur, unsigned *pend) {
    if (Q_RC) return Q_RC; *cur = H(h)->ecc; *pend = H(h)->ecc_pending; return 0; }
int nvmlDeviceGetTotalEccErrors(void *h, int type, int counter, unsigned long long *n) {
    if (Q_RC) return Q_RC; (void)counter; *n = type == 1 ? H(h)->ecc_unc : 0; return 0; }
int nvmlDeviceGetRemappedRows(void *h, unsigned *corr, unsigned *unc, unsigned *pend, unsigned *fail) {
#ifdef CRASH_IN_HEALTH
    raise(SIGSEGV);
#endif
    if (Q_RC) return Q_RC; if (H(h)->no_remap) return 3;
    *corr = H(h)->remap_corr; *unc = H(h)->remap_unc; *pend = H(h)->remap_pending; *fail = H(h)->remap_failed; return 0; }
int nvmlDeviceGetRetiredPagesPendingStatus(void *h, unsigned *pend) {
    if (Q_RC) return Q_RC; *pend = H(h)->retired_pending; return 0; }
int nvmlDeviceGetCurrentClocksEventReasons(void *h, unsigned long long *r) { if (Q_RC) return Q_RC; *r = H(h)->reasons; return 0; }
int nvmlDeviceGetCurrentClocksThrottleReasons(void *h, unsigned long long *r) { if (Q_RC) return Q_RC; *r = H(h)->reasons; return 0; }
int nvmlDeviceGetCurrPcieLinkGeneration(void *h, unsigned *v) { if (Q_RC) return Q_RC; *v = H(h)->gen; return 0; }
int nvmlDeviceGetMaxPcieLinkGeneration(void *h, unsigned *v) { if (Q_RC) return Q_RC; *v = H(h)->gen_max; return 0; }
int nvmlDeviceGetCurrPcieLinkWidth(void *h, unsigned *v) { if (Q_RC) return Q_RC; *v = H(h)->width; return 0; }
int nvmlDeviceGetMaxPcieLinkWidth(void *h, unsigned *v) { if (Q_RC) return Q_RC; *v = H(h)->width_max; return 0; }
int nvmlDeviceGetNvLinkState(void *h, unsigned link, unsigned *up) {
    if (Q_RC) return Q_RC; if (H(h)->nvlinks == 0) return 3; if (link >= H(h)->nvlinks) return 2;
    *up = link >= H(h)->nvlinks_down; return 0; }
int nvmlDeviceGetNvLinkErrorCounter(void *h, unsigned link, int counter, unsigned long long *n) {
    if (Q_RC) return Q_RC; (void)link; *n = counter == 0 ? H(h)->nvlink_replay : 0; return 0; }
typedef struct { unsigned field, scope; long long timestamp, latency; unsigned type, rc;
                 unsigned long long value; } field_t;
int nvmlDeviceGetFieldValues(void *h, int count, field_t *values) {  /* one link's DL counters: 161 replay,
    162 recovery, 163 CRC, with the link as the scope (what nvidia-smi nvlink -e prints); no other field */
    if (Q_RC) return Q_RC;
    for (int i = 0; i < count; i++) {
        unsigned f = values[i].field, up = values[i].scope >= H(h)->nvlinks_down && values[i].scope < H(h)->nvlinks;
        values[i].type = 3; values[i].value = 0; values[i].rc = f >= 161 && f <= 163 ? 0 : 3;
        if (f == 161 && up) values[i].value = H(h)->nvlink_replay;
    }
    return 0;
}
int nvmlDeviceGetNvLinkRemotePciInfo_v2(void *h, unsigned link, pci_t *p) {
    if (Q_RC) return Q_RC; (void)link;
#ifdef FAKE_NVSWITCH  /* every link ends at an NVSwitch (bus 0x05 + link / 5, as an HGX board's four) */
    memset(p, 0, sizeof(*p)); snprintf(p->bus_id, sizeof(p->bus_id), "00000000:%02X:00.0", 0x05 + link / 5);
    return 0;
#endif
    fill_pci(gpu_index(h) ^ 1, p); return 0; }  /* else pairs of GPUs joined link to link (0-1, 2-3, ...) */
#ifndef FAKE_P2P
#define FAKE_P2P 0
#endif
#ifndef FAKE_TOPO
#define FAKE_TOPO 40
#endif
int nvmlDeviceGetP2PStatus(void *a, void *b, int index, int *status) {
    if (Q_RC) return Q_RC; (void)a; (void)b; *status = index == 2 && H(a)->nvlinks == 0 ? 5 : FAKE_P2P; return 0; }
int nvmlDeviceGetTopologyCommonAncestor(void *a, void *b, int *level) {
    if (Q_RC) return Q_RC; (void)a; (void)b; *level = FAKE_TOPO; return 0; }
typedef struct { unsigned char cluster[16]; unsigned status, clique, state; } fabric_t;
int nvmlDeviceGetGpuFabricInfo(void *h, fabric_t *f) {
#ifdef FAKE_FABRIC
    if (Q_RC) return Q_RC; (void)h; memset(f, 0, sizeof(*f)); f->state = FAKE_FABRIC; f->status = 0; return 0;
#else
    (void)h; (void)f; return 3;
#endif
}
