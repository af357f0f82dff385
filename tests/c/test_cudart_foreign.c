/* test_cudart_foreign.c - a program that loads one of NVIDIA's CUDA libraries (a library named
 * libcublas.so.13, fake_cublas.c) is told so by the runtime stand-in at its first call, naming the
 * library, once: cuBLAS itself only says "CUBLAS initialization error" on emu (cuda-samples'
 * simpleCUBLAS), and the libcuda.so.1 stand-in it loads says nothing more.  Also the
 * libcuda.so.1 stand-in, loaded afterwards, stays quiet (once per process).  And NVIDIA's runtime
 * (a program of plain nvcc's default -cudart static) asking that stand-in for the driver's entry
 * points is told, once, to build with `mgpu-harness nvcc` (it said only "insufficient driver"). */
#include "check.h"
#include "cudart/cudart.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int mgpu_test_fake_cublas(void);
cudaError_t cudaGetDeviceCount(int *n);

static char *slurp(const char *path)
{
    static char buf[8192];
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    return buf;
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    CHECK(mgpu_test_fake_cublas() == 13); /* linked: it is in the process */
    unsetenv("MGPU_CUDART_FOREIGN_SAID");
    char err[] = "/tmp/mgpu-foreign-XXXXXX";
    int fd = mkstemp(err);
    CHECK(fd >= 0);
    int saved = dup(2);
    dup2(fd, 2);
    int n = 0;
    cudaError_t rc = cudaGetDeviceCount(&n);
    void *cuda = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL); /* the libcuda.so.1 stand-in, as cuBLAS opens it */
    rc = rc == cudaSuccess && cudaGetDeviceCount(&n) == cudaSuccess ? cudaSuccess : rc;
    /* NVIDIA's runtime (nvcc's default -cudart static) asks for the driver's entry points */
    typedef int (*gpa_fn)(const char *, void **, int, unsigned long long, int *);
    gpa_fn gpa = cuda ? (gpa_fn)dlsym(cuda, "cuGetProcAddress_v2") : NULL;
    void *fn = (void *)1;
    int miss = gpa ? gpa("", &fn, 13000, 0, NULL) + gpa("cuGetProcAddress", &fn, 13000, 0, NULL) +
                         gpa("cuCtxGetCurrent", &fn, 13000, 0, NULL) : -1;
    int hit = gpa ? gpa("cuTensorMapEncodeTiled", &fn, 13000, 0, NULL) : -1;
    fflush(stderr);
    dup2(saved, 2);
    close(fd);
    const char *text = slurp(err);
    unlink(err);
    fprintf(stderr, "%s", text);
    CHECK(cuda != NULL);
    CHECK(rc == cudaSuccess && n == 1); /* the runtime itself works */
    CHECK(strstr(text, "mgpu cudart: this program loads NVIDIA's libcublas.so.13, which runs its own GPU code "
                       "through NVIDIA's runtime and driver, not the stand-in: its calls fail on emu") != NULL);
    const char *first = strstr(text, "this program loads");
    CHECK(first && !strstr(first + 1, "this program loads")); /* once */
    CHECK(miss == 3 * 500 && hit == 0 && fn != NULL);
    CHECK(strstr(text, "mgpu cudart: cuGetProcAddress(\"cuGetProcAddress\"): the libcuda.so.1 stand-in serves only "
                       "cuTensorMapEncodeTiled") != NULL);
    CHECK(strstr(text, "build the program with `mgpu-harness nvcc`, or nvcc -cudart shared") != NULL);
    CHECK(!strstr(text, "cuGetProcAddress(\"cuCtxGetCurrent\")")); /* once */
    if (cuda) dlclose(cuda);
    return check_report("test_cudart_foreign");
}
