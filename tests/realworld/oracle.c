/* The real-world oracle: loads cuDNN the way a framework library does, with the real glibc loader, no GPU.
 * argv[1]: a shim library whose RPATH/RUNPATH copies the framework library's (its dlopen calls come FROM it);
 * argv[2]: the soname the framework asks for ("libcudnn.so.9"). Prints one fact per line:
 *   OPEN <soname> <path> | ERROR <dlerror text>, VERSION <cudnnGetVersion()>, CHECK <fn> <status>,
 *   MAP <path> for every mapped libcudnn* file. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

typedef void *(*open_fn)(const char *);
typedef size_t (*version_fn)(void);
typedef int (*check_fn)(void);

/* cuDNN's shim loads each sub-library on first use; each *VersionCheck goes through the shim into one. */
static const char *CHECKS[] = {
    "cudnnGraphVersionCheck", "cudnnOpsVersionCheck", "cudnnCnnVersionCheck", "cudnnAdvVersionCheck",
    "cudnnOpsInferVersionCheck", "cudnnOpsTrainVersionCheck", "cudnnCnnInferVersionCheck",
    "cudnnCnnTrainVersionCheck", "cudnnAdvInferVersionCheck", "cudnnAdvTrainVersionCheck", NULL};

/* Every libcudnn* file mapped so far (printed after each step: a mixed copy may crash the next one). */
static void dump_maps(void) {
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096], last[4096] = "";
    while (maps && fgets(line, sizeof line, maps)) {
        char *path = strchr(line, '/');
        if (!path || !strstr(path, "libcudnn")) continue;
        path[strcspn(path, "\n")] = 0;
        if (strcmp(path, last)) printf("MAP %s\n", path);
        strcpy(last, path);
    }
    if (maps) fclose(maps);
    fflush(stdout);
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    void *shim = dlopen(argv[1], RTLD_NOW);
    if (!shim) { printf("SHIMERROR %s\n", dlerror()); return 2; }
    open_fn open_from_framework = (open_fn)dlsym(shim, "open_from_framework");
    void *h = open_from_framework(argv[2]);
    if (!h) {
        printf("ERROR %s\n", dlerror());
    } else {
        struct link_map *map = NULL;
        dlinfo(h, RTLD_DI_LINKMAP, &map);
        printf("OPEN %s %s\n", argv[2], map->l_name);
        fflush(stdout);  /* cudnnGetVersion may already load (and abort in) a sub-library */
        version_fn v = (version_fn)dlsym(h, "cudnnGetVersion");
        if (v) printf("VERSION %zu\n", v());
        dump_maps();
        for (int i = 0; CHECKS[i]; i++) {
            check_fn c = (check_fn)dlsym(h, CHECKS[i]);
            if (c) { int s = c(); printf("CHECK %s %d\n", CHECKS[i], s); dump_maps(); }
        }
    }
    dump_maps();
    return 0;
}
