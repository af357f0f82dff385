/* test_cuda.c - the cuda backend's core without a GPU, through a fake
 * driver (tests/fake/fake_cuda.c) loaded by path: no driver, device facts,
 * JIT errors with the PTX line, memory, the mapping of driver errors, and a
 * sticky fault after which the next launch runs. */
#include "check.h"
#include "cuda/cuda.h"

#include <dlfcn.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    const char *fake = argv[1];
    mh_cuda *c;
    mh_error e;
    mh_error_clear(&e);

    CHECK(mh_cuda_load("/nonexistent/libcuda.so.1", &c, &e) == MH_E_NO_DEVICE);
    CHECK_CONTAINS(e.message, "cannot load the CUDA driver (/nonexistent/libcuda.so.1)");

    CHECK(mh_cuda_load(fake, &c, &e) == 0);
    if (!c) return check_report("test_cuda");
    int n = 0, v = 0;
    CHECK(mh_cuda_device_count(c, &n, &e) == 0 && n == 1);
    CHECK(mh_cuda_driver_version(c, &v, &e) == 0 && v == 13000);
    mh_cuda_devinfo info;
    CHECK(mh_cuda_device_info(c, 0, &info, &e) == 0);
    CHECK_STR(info.name, "Fake GPU 0");
    CHECK(info.major == 9 && info.minor == 0 && info.sms == 132 && info.clock_khz == 1980000);
    CHECK(info.smem_optin == 232448 && info.memory == (uint64_t)141 << 30);

    mh_cuda_dev *d;
    CHECK(mh_cuda_open(c, 1, &d, &e) == MH_E_NO_DEVICE);
    CHECK_CONTAINS(e.message, "no CUDA device 1 (1 device)");
    CHECK(mh_cuda_open(c, 0, &d, &e) == 0);

    /* JIT errors carry the log and the PTX line */
    mh_cuda_module *m = NULL;
    char *log = NULL;
    mh_cuda_jit jit = {4, 0, "sm_90"};
    const char bad[] = ".version 8.0\n.target sm_90\nFAKE_JIT_ERROR\n";
    CHECK(mh_cuda_load_ptx(d, bad, "bad.ptx", &jit, &m, NULL, &e) == MH_E_JIT_FAILED);
    CHECK(e.line == 3);
    CHECK_CONTAINS(e.message, "bad.ptx: the JIT refused the module: CUDA_ERROR_INVALID_PTX (218)");
    CHECK_CONTAINS(e.message, "line 3; error   : Unknown symbol");
    CHECK(mh_cuda_load_ptx(d, ".version 8.0\n", "ok.ptx", &jit, &m, &log, &e) == 0);
    CHECK_CONTAINS(log, "ptxas info");
    free(log);
    mh_cuda_unload_module(m);

    /* architecture-specific PTX (Mosaic's sm_90a): compiled for compute_90a;
     * from the context where the driver does not take the option; refused
     * before any JIT on a device it cannot run on */
    void *lib = dlopen(fake, RTLD_NOW | RTLD_NOLOAD);
    int *last_target = lib ? dlsym(lib, "fake_last_jit_target") : NULL;
    CHECK(last_target != NULL);
    if (!last_target) return check_report("test_cuda");
    const char arch[] = ".version 9.0\n.target sm_90a\n.address_size 64\n";
    mh_cuda_jit jit_a = {4, 0, "sm_90a"};
    CHECK(mh_cuda_load_ptx(d, arch, "a.ptx", &jit_a, &m, NULL, &e) == 0);
    CHECK(*last_target == 0x1005a); /* CU_TARGET_COMPUTE_90A */
    CHECK_STR(mh_cuda_module_target(m), "compute_90a");
    mh_cuda_unload_module(m);
    mh_cuda_jit jit_none = {4, 0, NULL};
    CHECK(mh_cuda_load_ptx(d, arch, "a.ptx", &jit_none, &m, NULL, &e) == MH_E_JIT_FAILED);
    CHECK_CONTAINS(e.message, "cannot be compiled for architecture 'sm_90'");
    /* a real error in sm_90a PTX: the compute_90a try's log (the line) is the one shown, not the
     * context try's "cannot be compiled for sm_90" */
    const char arch_err[] = ".version 9.0\n.target sm_90a\nFAKE_JIT_ERROR\n";
    CHECK(mh_cuda_load_ptx(d, arch_err, "ae.ptx", &jit_a, &m, NULL, &e) == MH_E_JIT_FAILED);
    CHECK(e.line == 3);
    CHECK_CONTAINS(e.message, "line 3; error   : Unknown symbol 'FAKE_JIT_ERROR'");
    CHECK_CONTAINS(e.message, "(compiled for compute_90a; from the context's target too: CUDA_ERROR_INVALID_PTX (218))");
    setenv("FAKE_CUDA_ARCH_FROM_CONTEXT", "1", 1);
    CHECK(mh_cuda_load_ptx(d, arch, "a.ptx", &jit_a, &m, NULL, &e) == 0);
    CHECK(*last_target == -1); /* the second try, from the context */
    CHECK_STR(mh_cuda_module_target(m), "context");
    mh_cuda_unload_module(m);
    const char arch_bad[] = ".version 9.0\n.target sm_90a\nFAKE_JIT_ERROR\n";
    CHECK(mh_cuda_load_ptx(d, arch_bad, "a.ptx", &jit_a, &m, NULL, &e) == MH_E_JIT_FAILED); /* both tries fail */
    CHECK(e.line == 3);
    CHECK_CONTAINS(e.message, "CUDA_ERROR_INVALID_PTX (218)\nptxas application ptx input, line 3");
    CHECK_CONTAINS(e.message, "(for compute_90a first: CUDA_ERROR_INVALID_VALUE (1))");
    unsetenv("FAKE_CUDA_ARCH_FROM_CONTEXT");
    /* a plain target newer than the device, an "a" target of another one */
    *last_target = 12345;
    mh_cuda_jit jit_100 = {4, 0, "sm_100"}, jit_80a = {4, 0, "sm_80a"}, jit_100f = {4, 0, "sm_100f"};
    CHECK(mh_cuda_load_ptx(d, arch, "new.ptx", &jit_100, &m, NULL, &e) == MH_E_JIT_FAILED);
    CHECK_CONTAINS(e.message, "new.ptx: the PTX targets sm_100, which needs compute capability 10.0 or newer; this device is sm_90");
    CHECK(mh_cuda_load_ptx(d, arch, "a.ptx", &jit_80a, &m, NULL, &e) == MH_E_JIT_FAILED);
    CHECK_CONTAINS(e.message, "the PTX targets sm_80a, which runs only on compute capability 8.0; this device is sm_90");
    CHECK(mh_cuda_load_ptx(d, arch, "f.ptx", &jit_100f, &m, NULL, &e) == MH_E_JIT_FAILED);
    CHECK_CONTAINS(e.message, "sm_100f, which runs on compute capability 10.0 up to the next major");
    CHECK(*last_target == 12345); /* none of them reached the JIT */
    mh_cuda_jit jit_80 = {4, 0, "sm_80"};
    CHECK(mh_cuda_load_ptx(d, ".version 8.0\n", "old.ptx", &jit_80, &m, NULL, &e) == 0); /* older: runs */
    CHECK(*last_target == -1);
    mh_cuda_unload_module(m);
    CHECK(mh_cuda_load_ptx(d, ".version 99.0\n", "v99.ptx", &jit, &m, NULL, &e) == MH_E_JIT_FAILED);
    CHECK_CONTAINS(e.message, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222)");
    CHECK_CONTAINS(e.message, "this driver is CUDA 13.0: the PTX's .version needs a newer one");
    CHECK(mh_cuda_load_ptx(d, ".version 8.0\n", "ok.ptx", &jit, &m, NULL, &e) == 0);

    void *fn;
    mh_cuda_kernel_info ki;
    CHECK(mh_cuda_kernel(m, "missing", &fn, &ki, &e) == MH_E_NOT_FOUND);
    CHECK_CONTAINS(e.message, "no kernel named \"missing\"");
    CHECK(mh_cuda_kernel(m, "k", &fn, &ki, &e) == 0 && ki.regs == 32);

    /* memory */
    uint64_t a;
    CHECK(mh_cuda_alloc(d, (uint64_t)2 << 30, &a, &e) == MH_E_NO_MEMORY);
    CHECK_CONTAINS(e.message, "CUDA_ERROR_OUT_OF_MEMORY");
    CHECK(mh_cuda_alloc(d, 64, &a, &e) == 0);
    char in[64], out[64];
    for (int i = 0; i < 64; i++) in[i] = (char)i;
    CHECK(mh_cuda_write(d, a, in, 64, &e) == 0 && mh_cuda_read(d, a, out, 64, &e) == 0 && !memcmp(in, out, 64));
    CHECK(mh_cuda_free(d, a, &e) == 0);

    /* launches: timing, then a sticky fault, then the next launch runs */
    unsigned g[3] = {1, 1, 1}, b[3] = {32, 1, 1};
    float ms = 0;
    CHECK(mh_cuda_launch(d, fn, "k", g, b, NULL, 0, NULL, &ms, &e) == 0 && ms == 0.125f);
    /* above 48 KiB of dynamic shared memory the kernel's limit is raised first */
    int *smem_limit = dlsym(lib, "fake_max_dynamic_smem");
    CHECK(mh_cuda_launch(d, fn, "k", g, b, NULL, 48 * 1024, NULL, &ms, &e) == 0 && smem_limit && *smem_limit == 0);
    CHECK(mh_cuda_launch(d, fn, "k", g, b, NULL, 100000, NULL, &ms, &e) == 0 && smem_limit && *smem_limit == 100000);
    int *records = dlsym(lib, "fake_event_records"), before = records ? *records : -1;
    CHECK(mh_cuda_launch(d, fn, "k", g, b, NULL, 0, NULL, NULL, &e) == 0); /* untimed: no events */
    CHECK(records && *records == before);
    void *ffault;
    CHECK(mh_cuda_kernel(m, "fault", &ffault, NULL, &e) == 0);
    unsigned gen = mh_cuda_generation(d);
    CHECK(mh_cuda_launch(d, ffault, "fault", g, b, NULL, 0, NULL, &ms, &e) == MH_E_KERNEL_FAULT);
    CHECK_CONTAINS(e.message, "fault faulted: CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access");
    CHECK(mh_cuda_generation(d) == gen + 1);
    CHECK(mh_cuda_kernel(m, "k", &fn, NULL, &e) == MH_E_LAUNCH_FAILED); /* the old module is gone */
    CHECK_CONTAINS(e.message, "load it again");
    mh_cuda_unload_module(m);
    CHECK(mh_cuda_load_ptx(d, ".version 8.0\n", "ok.ptx", &jit, &m, NULL, &e) == 0);
    CHECK(mh_cuda_kernel(m, "k", &fn, NULL, &e) == 0);
    CHECK(mh_cuda_launch(d, fn, "k", g, b, NULL, 0, NULL, &ms, &e) == 0);
    /* cluster launches go through cuLaunchKernelEx with the cluster dimensions */
    unsigned g2[3] = {4, 1, 1}, cl[3] = {2, 1, 1}, cl_bad[3] = {3, 1, 1};
    CHECK(mh_cuda_launch(d, fn, "k", g2, b, cl, 0, NULL, &ms, &e) == 0);
    unsigned *last = dlsym(lib, "fake_last_cluster");
    CHECK(last && last[0] == 2 && last[1] == 1 && last[2] == 1);
    CHECK(mh_cuda_launch(d, fn, "k", g2, b, cl_bad, 0, NULL, &ms, &e) == MH_E_LAUNCH_FAILED);
    CHECK_CONTAINS(e.message, "grid 4x1x1 is not a whole number of 3x1x1 clusters");
    mh_cuda_unload_module(m);
    int *refs = dlsym(lib, "fake_ctx_refs");
    CHECK(refs && *refs == 2); /* the open's retain, and the one after the reset */
    mh_cuda_close(d);
    CHECK(refs && *refs == 0); /* all released */
    mh_cuda_unload(c);

    /* a driver with no device */
    setenv("FAKE_CUDA_DEVICES", "0", 1);
    CHECK(mh_cuda_load(fake, &c, &e) == 0);
    CHECK(mh_cuda_open(c, 0, &d, &e) == MH_E_NO_DEVICE);
    CHECK_CONTAINS(e.message, "no CUDA device 0 (0 devices)");
    mh_cuda_unload(c);
    return check_report("test_cuda");
}
