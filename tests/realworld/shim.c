/* Compiled per case with the framework library's RPATH or RUNPATH: glibc searches for a dlopen made here with this
 * object's search path, as it does for the framework's own dlopen (or DT_NEEDED) of cuDNN. */
#include <dlfcn.h>
void *open_from_framework(const char *soname) { return dlopen(soname, RTLD_NOW | RTLD_GLOBAL); }
