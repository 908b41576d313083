/* Fake libcudnn: reports a chosen version. -DCRASH_ON_LOAD / -DHANG_ON_LOAD make a hostile library. */
#include <stddef.h>
#include <signal.h>
#include <unistd.h>
#ifndef CUDNN_V
#define CUDNN_V 7605
#endif
#ifndef CUDART_V
#define CUDART_V 10020
#endif
#if defined(CRASH_ON_LOAD) || defined(HANG_ON_LOAD)
__attribute__((constructor)) static void misbehave(void) {
#ifdef CRASH_ON_LOAD
    raise(SIGSEGV);
#else
    for (;;) sleep(1000);
#endif
}
#endif
size_t cudnnGetVersion(void) { return CUDNN_V; }
#ifndef NO_CUDART_VERSION
size_t cudnnGetCudartVersion(void) { return CUDART_V; }
#endif
