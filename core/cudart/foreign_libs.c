/* foreign_libs.c - NVIDIA's CUDA libraries in a program on emu (foreign_libs.h).  Each carries
 * its kernels as machine code (SASS) and calls NVIDIA's runtime, linked into it, and driver:
 * neither is the stand-in, so cublasCreate and its kin fail with their library's own code.  Said
 * once per process, by the runtime stand-in at its first call and by the libcuda.so.1 stand-in
 * when a library loads it (the environment variable keeps the two copies from both saying it). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dl_iterate_phdr */
#endif
#include "cudart/foreign_libs.h"

#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the libraries that run GPU code of their own (not nvrtc, nvJitLink or cuFile: they compile, link or read
 * files on the host, and what they make a program loads through the stand-in) */
static const char *const libs[] = {"libcublas", "libcublasLt", "libcufft", "libcufftw", "libcurand", "libcusparse",
                                   "libcusolver", "libcusolverMg", "libcudnn", "libnccl", "libnpp", "libnvjpeg",
                                   "libcutensor", "libnvblas", NULL};

typedef struct {
    char names[512];
    int n;
} found;

static int look(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    found *f = arg;
    const char *path = info->dlpi_name, *base = path ? strrchr(path, '/') : NULL;
    base = base ? base + 1 : path;
    if (!base || !*base) return 0;
    for (int i = 0; libs[i]; i++) {
        size_t k = strlen(libs[i]);
        /* the name, then ".so", or a suffix NVIDIA's names take (libnppc, libcudnn_ops, libcublasLt) */
        if (strncmp(base, libs[i], k) || (base[k] != '.' && base[k] != '_' && !(base[k] >= 'a' && base[k] <= 'z')))
            continue;
        size_t len = strlen(f->names);
        snprintf(f->names + len, sizeof f->names - len, "%s%s", f->n ? ", " : "", base);
        f->n++;
        break;
    }
    return 0;
}

int cr_say_foreign_libraries(void)
{
    if (getenv("MGPU_CUDART_FOREIGN_SAID")) return 0;
    found f = {.names = "", .n = 0};
    dl_iterate_phdr(look, &f);
    if (!f.n) return 0;
    setenv("MGPU_CUDART_FOREIGN_SAID", "1", 1);
    int one = f.n == 1;
    fprintf(stderr, "mgpu cudart: this program loads NVIDIA's %s, which run%s %s own GPU code through NVIDIA's "
            "runtime and driver, not the stand-in: %s calls fail on emu (the program's own kernels and CUDA runtime "
            "calls run; docs/cudart.md)\n", f.names, one ? "s" : "", one ? "its" : "their", one ? "its" : "their");
    fflush(stderr);
    return f.n;
}
