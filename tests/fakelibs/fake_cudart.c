/* Fake libcudart: cudaRuntimeGetVersion reports CUDART_V (1000*major + 10*minor). */
#ifndef CUDART_V
#define CUDART_V 12040
#endif
int cudaRuntimeGetVersion(int *v) { *v = CUDART_V; return 0; }
