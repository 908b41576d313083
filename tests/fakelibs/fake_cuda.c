/* Fake libcuda (driver API): cuDriverGetVersion reports DRV; cuInit returns INITRC. */
#ifndef DRV
#define DRV 13000
#endif
#ifndef INITRC
#define INITRC 0
#endif
int cuDriverGetVersion(int *v) { *v = DRV; return 0; }
int cuInit(unsigned int flags) { (void)flags; return INITRC; }
