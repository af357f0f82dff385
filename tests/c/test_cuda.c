/* test_cuda.c - the cuda backend's core without a GPU, through a fake
 * driver (tests/fake/fake_cuda.c) loaded by path: no driver, device facts,
 * JIT errors with the PTX line, memory, the mapping of driver errors, an
 * assert after which the context is reset and the next launch runs, the
 * faults after which the device is lost for the process (and refuses every
 * call), the shared-memory limit, non-portable clusters, the order of the
 * timing calls and back-to-back launches, tensor-map rules, and libcuda
 * never closed.
 *   test_cuda FAKE_LIBCUDA             everything, against the fake
 *   test_cuda FAKE_LIBCUDA OLD_FAKE    a driver without cuEventElapsedTime_v2 (before 12.8) */
#include "check.h"
#include "cuda/cuda.h"

#include <dlfcn.h>
#include <stdlib.h>

static const unsigned G1[3] = {1, 1, 1}, B32[3] = {32, 1, 1};

/* A device of its own and a module with kernel `name`, for the tests of one fault each. */
static mh_cuda_dev *open_with(mh_cuda *c, const char *name, mh_cuda_module **m, void **fn, mh_error *e)
{
    mh_cuda_dev *d = NULL;
    mh_cuda_jit jit = {4, 0, "sm_90"};
    *m = NULL;
    CHECK(mh_cuda_open(c, 0, &d, e) == 0);
    if (!d) return NULL;
    CHECK(mh_cuda_load_ptx(d, ".version 8.0\n", "f.ptx", &jit, m, NULL, e) == 0);
    CHECK(*m && mh_cuda_kernel(*m, name, fn, NULL, e) == 0);
    return d;
}

/* The driver before cuEventElapsedTime_v2 (CUDA 12.8): the old name is used. */
static int old_driver(const char *old)
{
    mh_cuda *c = NULL;
    mh_cuda_dev *d = NULL;
    mh_cuda_module *m = NULL;
    mh_error e;
    void *fn;
    float ms = 0;
    mh_error_clear(&e);
    CHECK(mh_cuda_load(old, &c, &e) == 0);
    if (!c) return check_report("test_cuda (old driver)");
    void *lib = dlopen(old, RTLD_NOW | RTLD_NOLOAD);
    CHECK(lib && !dlsym(lib, "cuEventElapsedTime_v2"));
    int *calls = lib ? dlsym(lib, "fake_elapsed_calls") : NULL;
    d = open_with(c, "k", &m, &fn, &e);
    CHECK(d && mh_cuda_launch(d, fn, "k", G1, B32, NULL, 0, NULL, &ms, &e) == 0 && ms == 0.125f);
    CHECK(calls && calls[0] == 1 && calls[1] == 0);
    mh_cuda_unload_module(m);
    mh_cuda_close(d);
    mh_cuda_unload(c);
    return check_report("test_cuda (old driver)");
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    const char *fake = argv[1];
    if (argc > 2) return old_driver(argv[2]);
    mh_cuda *c;
    mh_error e;
    mh_error_clear(&e);

    CHECK(mh_cuda_load("/nonexistent/libcuda.so.1", &c, &e) == MH_E_NO_DEVICE);
    CHECK_CONTAINS(e.message, "cannot load the CUDA driver (/nonexistent/libcuda.so.1)");

    /* libcuda is never closed: after an unload it is still there (nothing else here holds it) */
    CHECK(dlopen(fake, RTLD_NOW | RTLD_NOLOAD) == NULL);
    CHECK(mh_cuda_load(fake, &c, &e) == 0);
    mh_cuda_unload(c);
    CHECK(dlopen(fake, RTLD_NOW | RTLD_NOLOAD) != NULL);

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
    char *calls = dlsym(lib, "fake_calls");
    int *elapsed = dlsym(lib, "fake_elapsed_calls");
    CHECK(calls && elapsed);
    if (!calls || !elapsed) return check_report("test_cuda");
    calls[0] = 0;
    CHECK(mh_cuda_launch(d, fn, "k", g, b, NULL, 0, NULL, &ms, &e) == 0 && ms == 0.125f);
    /* synchronised before the first event; CUDA 13's cuEventElapsedTime_v2 where the driver has it */
    CHECK_STR(calls, "SRLRWT");
    CHECK(elapsed[1] == 1 && elapsed[0] == 0);
    /* N launches back to back between one pair of events: the mean of them */
    calls[0] = 0;
    CHECK(mh_cuda_launch_n(d, fn, "k", g, b, NULL, 0, NULL, 4, &ms, &e) == 0 && ms == 0.125f / 4);
    CHECK_STR(calls, "SRLLLLRWT");
    calls[0] = 0;
    CHECK(mh_cuda_launch_n(d, fn, "k", g, b, NULL, 0, NULL, 3, NULL, &e) == 0); /* untimed: launches, one sync */
    CHECK_STR(calls, "LLLS");
    calls[0] = 0;
    CHECK(mh_cuda_launch_n(d, fn, "k", g, b, NULL, 0, NULL, 0, &ms, &e) == 0 && ms == 0.125f); /* 0: once */
    CHECK_STR(calls, "SRLRWT");
    /* shared memory: the limit is raised when static + dynamic exceed the 48 KiB a block gets by
     * default (the fake refuses the launch otherwise, as the driver does) */
    int *smem_limit = dlsym(lib, "fake_max_dynamic_smem");
    CHECK(mh_cuda_launch(d, fn, "k", g, b, NULL, 48 * 1024, NULL, &ms, &e) == 0 && smem_limit && *smem_limit == 0);
    CHECK(mh_cuda_launch(d, fn, "k", g, b, NULL, 100000, NULL, &ms, &e) == 0 && smem_limit && *smem_limit == 100000);
    setenv("FAKE_CUDA_STATIC_SMEM", "16384", 1);
    void *fs;
    CHECK(mh_cuda_kernel(m, "smem_static", &fs, NULL, &e) == 0);
    *smem_limit = 0;
    CHECK(mh_cuda_launch(d, fs, "smem_static", g, b, NULL, 32 * 1024, NULL, &ms, &e) == 0 && *smem_limit == 0); /* 48 KiB */
    CHECK(mh_cuda_launch(d, fs, "smem_static", g, b, NULL, 40000, NULL, &ms, &e) == 0); /* 16384 + 40000 > 48 KiB */
    CHECK(*smem_limit == 40000);
    CHECK(mh_cuda_launch(d, fs, "smem_static", g, b, NULL, 220000, NULL, &ms, &e) == MH_E_LAUNCH_FAILED);
    CHECK_CONTAINS(e.message, "smem_static: 220000 bytes of dynamic shared memory (with 16384 static, 236384 in all) "
                              "refused: CUDA_ERROR_INVALID_VALUE (1)");
    unsetenv("FAKE_CUDA_STATIC_SMEM");
    int *records = dlsym(lib, "fake_event_records"), before = records ? *records : -1;
    CHECK(mh_cuda_launch(d, fn, "k", g, b, NULL, 0, NULL, NULL, &e) == 0); /* untimed: no events */
    CHECK(records && *records == before);
    /* a device-side assert: the context must be destroyed (cuda.h), so it is reset, and the next
     * launch runs */
    void *ffault;
    int *resets = dlsym(lib, "fake_resets");
    CHECK(resets && *resets == 0);
    CHECK(mh_cuda_kernel(m, "fault_710", &ffault, NULL, &e) == 0);
    unsigned gen = mh_cuda_generation(d);
    CHECK(mh_cuda_launch(d, ffault, "fault_710", g, b, NULL, 0, NULL, &ms, &e) == MH_E_KERNEL_FAULT);
    CHECK_CONTAINS(e.message, "fault_710 faulted: CUDA_ERROR_ASSERT (710)");
    CHECK_CONTAINS(e.message, "the device's context was reset (its modules and memory are gone) so the next launch can run");
    CHECK(mh_cuda_generation(d) == gen + 1 && resets && *resets == 1 && !mh_cuda_lost(d));
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
    CHECK(mh_cuda_launch(d, fn, "k", g2, b, cl_bad, 0, NULL, &ms, &e) == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "grid 4x1x1 is not a whole number of 3x1x1 clusters");
    /* more than sm_90's portable 8 blocks: allowed on the function first (the fake refuses it
     * otherwise); more than the hardware takes is the driver's error */
    unsigned g16[3] = {32, 2, 1}, cl16[3] = {16, 1, 1}, cl8[3] = {4, 2, 1}, cl32[3] = {32, 1, 1};
    void *fc;
    CHECK(mh_cuda_kernel(m, "wide_clusters", &fc, NULL, &e) == 0);
    CHECK(mh_cuda_launch(d, fc, "wide_clusters", g16, b, cl8, 0, NULL, &ms, &e) == 0);
    int np = -1;
    int (*get_attr)(int *, int, void *) = (int (*)(int *, int, void *))dlsym(lib, "cuFuncGetAttribute");
    CHECK(get_attr && get_attr(&np, 14, fc) == 0 && np == 0); /* 8 blocks: portable, nothing set */
    CHECK(mh_cuda_launch(d, fc, "wide_clusters", g16, b, cl16, 0, NULL, &ms, &e) == 0);
    CHECK(last[0] == 16 && get_attr && get_attr(&np, 14, fc) == 0 && np == 1);
    CHECK(mh_cuda_launch(d, fc, "wide_clusters", g16, b, cl32, 0, NULL, &ms, &e) == MH_E_LAUNCH_FAILED);
    CHECK_CONTAINS(e.message, "launching wide_clusters: CUDA_ERROR_INVALID_CLUSTER_SIZE (912)");
    /* a cooperative launch: cuLaunchKernelEx with the cooperative attribute, after the occupancy check
     * (the fake: 2048 threads an SM, 132 SMs); a grid that cannot be resident at once is refused first */
    int *coop = dlsym(lib, "fake_last_cooperative");
    unsigned gc[3] = {132 * 32, 1, 1}, gc_big[3] = {132 * 32 + 1, 1, 1}, b32[3] = {32, 1, 1};
    CHECK(mh_cuda_launch_ex(d, fn, "k", gc, b32, NULL, 0, NULL, 1, 1, &ms, &e) == 0 && coop && *coop == 1);
    CHECK(mh_cuda_launch_ex(d, fn, "k", g2, b, cl, 0, NULL, 1, 1, &ms, &e) == 0 && *coop == 1 && last[0] == 2);
    CHECK(mh_cuda_launch_ex(d, fn, "k", gc, b32, NULL, 0, NULL, 1, 0, &ms, &e) == 0); /* plain: cuLaunchKernel */
    CHECK(mh_cuda_launch(d, fc, "wide_clusters", g16, b, cl8, 0, NULL, &ms, &e) == 0 && *coop == 0);
    *coop = 7;
    CHECK(mh_cuda_launch_ex(d, fn, "k", gc_big, b32, NULL, 0, NULL, 1, 1, &ms, &e) == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "k: a cooperative grid of 4225 blocks cannot be resident at once: 32 blocks per SM x 132 SMs = 4224");
    CHECK(*coop == 7); /* refused before launching */
    mh_cuda_unload_module(m);
    int *refs = dlsym(lib, "fake_ctx_refs");
    CHECK(refs && *refs == 2); /* the open's retain, and the one after the reset */
    mh_cuda_close(d);
    CHECK(refs && *refs == 0); /* all released */

    /* the faults after which cuda.h says the process must be terminated and relaunched: the device
     * is lost for the process, the fault says so, nothing is reset, and every later call on the
     * device is refused with the reason instead of reaching the driver */
    static const struct { int code; const char *name; } lost[] = {
        {700, "CUDA_ERROR_ILLEGAL_ADDRESS"}, {702, "CUDA_ERROR_LAUNCH_TIMEOUT"}, {714, "CUDA_ERROR_HARDWARE_STACK_ERROR"},
        {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION"}, {716, "CUDA_ERROR_MISALIGNED_ADDRESS"},
        {717, "CUDA_ERROR_INVALID_ADDRESS_SPACE"}, {718, "CUDA_ERROR_INVALID_PC"}, {719, "CUDA_ERROR_LAUNCH_FAILED"},
        {721, "CUDA_ERROR_TENSOR_MEMORY_LEAK"}, {226, "CUDA_ERROR_CONTAINED"}, {911, "CUDA_ERROR_EXTERNAL_DEVICE"},
    };
    void (*set_sticky)(int) = (void (*)(int))dlsym(lib, "fake_set_sticky");
    int (*driver_reset)(int) = (int (*)(int))dlsym(lib, "cuDevicePrimaryCtxReset_v2");
    int (*driver_free)(uint64_t) = (int (*)(uint64_t))dlsym(lib, "cuMemFree_v2");
    CHECK(set_sticky && driver_reset);
    if (!set_sticky || !driver_reset) return check_report("test_cuda");
    for (size_t i = 0; i < sizeof lost / sizeof *lost; i++) {
        char kname[32], want[160];
        snprintf(kname, sizeof kname, i == 0 ? "fault" : "fault_%d", lost[i].code);
        void *kf;
        mh_cuda_module *mf;
        mh_cuda_dev *dl = open_with(c, kname, &mf, &kf, &e);
        if (!dl) break;
        int resets_before = *resets;
        uint64_t addr = 0;
        CHECK(mh_cuda_alloc(dl, 64, &addr, &e) == 0);
        CHECK(mh_cuda_launch(dl, kf, kname, g, b, NULL, 0, NULL, &ms, &e) == MH_E_KERNEL_FAULT);
        snprintf(want, sizeof want, "%s faulted: %s (%d)", kname, lost[i].name, lost[i].code);
        CHECK_CONTAINS(e.message, want);
        CHECK_CONTAINS(e.message, "the device is lost for this process: the driver says a process must be terminated "
                                  "and relaunched to use CUDA again after this error");
        CHECK(mh_cuda_lost(dl) == lost[i].code && *resets == resets_before && mh_cuda_generation(dl) == 0);
        snprintf(want, sizeof want, "the CUDA device is lost for this process: %s faulted with %s (%d)", kname,
                 lost[i].name, lost[i].code);
        char buf[16];
        unsigned char map[MH_TMAP_BYTES];
        mh_tensor_map_spec ts = {.data_type = MH_TMAP_FLOAT32, .elem_size = 4, .rank = 1, .address = addr, .bytes = 64,
                                 .dims = {16}, .box = {16}, .elem_strides = {1}};
        mh_cuda_module *m2 = NULL;
        void *f2;
        int refused[9] = {
            mh_cuda_alloc(dl, 64, &addr, &e), mh_cuda_write(dl, addr, buf, 16, &e), mh_cuda_read(dl, addr, buf, 16, &e),
            mh_cuda_memset(dl, addr, 0, 16, &e), mh_cuda_launch(dl, kf, kname, g, b, NULL, 0, NULL, &ms, &e),
            mh_cuda_load_ptx(dl, ".version 8.0\n", "ok.ptx", &jit, &m2, NULL, &e), mh_cuda_kernel(mf, "k", &f2, NULL, &e),
            mh_cuda_tensor_map(dl, &ts, map, &e), mh_cuda_free(dl, addr, &e)};
        for (int k = 0; k < 9; k++) CHECK(refused[k] == MH_E_NO_DEVICE);
        CHECK_CONTAINS(e.message, want);
        CHECK_CONTAINS(e.message, "a new process can use the GPU");
        mh_cuda_unload_module(mf);
        mh_cuda_close(dl);
        CHECK(*refs == 0);
        driver_reset(0); /* the fake's state for the next one (the harness never resets a lost device) */
        if (driver_free) driver_free(addr); /* the fake's host memory (a lost device frees nothing) */
    }
    /* an error the harness did not launch, found by another call: the device is lost too */
    {
        void *kf;
        mh_cuda_module *mf;
        mh_cuda_dev *dl = open_with(c, "k", &mf, &kf, &e);
        uint64_t addr;
        set_sticky(700);
        CHECK(dl && mh_cuda_alloc(dl, 64, &addr, &e) == MH_E_KERNEL_FAULT);
        CHECK_CONTAINS(e.message, "cuMemAlloc failed: CUDA_ERROR_ILLEGAL_ADDRESS (700)");
        CHECK_CONTAINS(e.message, "the device is lost for this process");
        CHECK(dl && mh_cuda_launch(dl, kf, "k", g, b, NULL, 0, NULL, &ms, &e) == MH_E_NO_DEVICE);
        CHECK_CONTAINS(e.message, "lost for this process: cuMemAlloc failed with CUDA_ERROR_ILLEGAL_ADDRESS (700)");
        /* a timed launch whose synchronise before the first event finds it: not this kernel's fault */
        mh_cuda_unload_module(mf);
        mh_cuda_close(dl);
        /* another handle of the device in the same process: the driver still answers the error */
        mh_cuda_dev *d2 = NULL;
        CHECK(mh_cuda_open(c, 0, &d2, &e) == MH_E_NO_DEVICE && !d2);
        CHECK_CONTAINS(e.message, "opening the device's primary context: CUDA_ERROR_ILLEGAL_ADDRESS (700): CUDA is lost "
                                  "for this process after an earlier fault");
        set_sticky(0);
        dl = open_with(c, "k", &mf, &kf, &e);
        CHECK(dl && mh_cuda_launch(dl, kf, "k", g, b, NULL, 0, NULL, &ms, &e) == 0); /* its events made */
        set_sticky(700);
        CHECK(dl && mh_cuda_launch(dl, kf, "k", g, b, NULL, 0, NULL, &ms, &e) == MH_E_KERNEL_FAULT);
        CHECK_CONTAINS(e.message, "the work before launching k failed: CUDA_ERROR_ILLEGAL_ADDRESS (700)");
        mh_cuda_unload_module(mf);
        mh_cuda_close(dl);
        driver_reset(0);
    }

    /* tensor maps: the driver's rules (cuda.h, cuTensorMapEncodeTiled) */
    {
        mh_cuda_dev *dt = NULL;
        CHECK(mh_cuda_open(c, 0, &dt, &e) == 0);
        uint64_t addr = 0;
        CHECK(dt && mh_cuda_alloc(dt, 1 << 16, &addr, &e) == 0);
        mh_tensor_map_spec ts = {.data_type = MH_TMAP_FLOAT32, .elem_size = 4, .rank = 2, .address = addr,
                                 .bytes = 1 << 16, .dims = {8, 4}, .box = {64, 32}, .elem_strides = {1, 1}};
        mh_tensor_map_contiguous(&ts);
        unsigned char map[MH_TMAP_BYTES];
        /* a box larger than the tensor: TMA fills what lies outside, the driver takes it */
        CHECK(mh_cuda_tensor_map(dt, &ts, map, &e) == 0);
        ts.oob = MH_TMAP_OOB_NAN;
        CHECK(mh_tensor_map_check(&ts, &e) == 0);
        ts.data_type = MH_TMAP_UINT32;
        CHECK(mh_tensor_map_check(&ts, &e) == MH_E_BAD_ARGUMENT);
        CHECK_CONTAINS(e.message, "tensor map: oob = \"nan\" is for floating-point data; this tensor's elements are "
                                  "uint32 (use oob = \"zero\")");
        ts.data_type = MH_TMAP_BFLOAT16;
        ts.elem_size = 2;
        mh_tensor_map_contiguous(&ts);
        CHECK(mh_tensor_map_check(&ts, &e) == 0);
        /* interleaved: 32B needs the 32B swizzle */
        mh_tensor_map_spec ti = {.data_type = MH_TMAP_FLOAT16, .elem_size = 2, .rank = 3, .address = (addr + 31) & ~31ull,
                                 .bytes = (1 << 16) - 32, /* 32B interleave: a 32-byte aligned address */ .dims = {16, 8, 8}, .box = {16, 8, 8}, .elem_strides = {1, 1, 1},
                                 .interleave = MH_TMAP_INTERLEAVE_32B};
        mh_tensor_map_contiguous(&ti);
        CHECK(mh_tensor_map_check(&ti, &e) == MH_E_BAD_ARGUMENT);
        CHECK_CONTAINS(e.message, "tensor map: interleave = \"32B\" needs swizzle = \"32B\" (the driver's rule), got "
                                  "swizzle = \"none\"");
        ti.swizzle = MH_TMAP_SWIZZLE_128B;
        CHECK(mh_tensor_map_check(&ti, &e) == MH_E_BAD_ARGUMENT);
        CHECK_CONTAINS(e.message, "got swizzle = \"128B\"");
        ti.swizzle = MH_TMAP_SWIZZLE_32B;
        CHECK(mh_cuda_tensor_map(dt, &ti, map, &e) == 0); /* the fake wants the map 128-byte aligned */
        ti.interleave = MH_TMAP_INTERLEAVE_16B;
        ti.swizzle = MH_TMAP_SWIZZLE_128B; /* other interleaves take any swizzle */
        CHECK(mh_tensor_map_check(&ti, &e) == 0);
        /* only cuda.h's rules: strides need not grow outwards (a 3D map whose third stride is less than
         * the bytes of the two inside it, a 5D one of size-1 dimensions with stride 0), each a multiple
         * of 16 below 2^40; the tensor's last byte inside the array */
        mh_tensor_map_spec t3 = {.data_type = MH_TMAP_BFLOAT16, .elem_size = 2, .rank = 3, .address = addr,
                                 .bytes = 1 << 16, .dims = {64, 8, 4}, .strides = {128, 128}, .box = {64, 8, 4},
                                 .elem_strides = {1, 1, 1}, .swizzle = MH_TMAP_SWIZZLE_128B};
        CHECK(mh_tensor_map_check(&t3, &e) == 0);
        CHECK(mh_cuda_tensor_map(dt, &t3, map, &e) == 0);
        mh_tensor_map_spec t5 = {.data_type = MH_TMAP_FLOAT32, .elem_size = 4, .rank = 5, .address = addr,
                                 .bytes = 1 << 16, .dims = {32, 16, 1, 2, 1}, .strides = {128, 0, 2048, 0},
                                 .box = {32, 16, 1, 2, 1}, .elem_strides = {1, 1, 1, 1, 1}};
        CHECK(mh_tensor_map_check(&t5, &e) == 0);
        CHECK(mh_cuda_tensor_map(dt, &t5, map, &e) == 0);
        t5.strides[1] = 8; /* not a multiple of 16 */
        CHECK(mh_tensor_map_check(&t5, &e) == MH_E_BAD_ARGUMENT);
        CHECK_CONTAINS(e.message, "tensor map: strides[2] = 8 bytes (a multiple of 16 below 2^40)");
        t5.strides[1] = 0;
        t5.dims[3] = 32; /* 31 x 2048 + 15 x 128 + 128 bytes: the whole 64 KiB array, no more */
        CHECK(mh_tensor_map_check(&t5, &e) == 0);
        t5.dims[3] = 33;
        CHECK(mh_tensor_map_check(&t5, &e) == MH_E_BAD_ARGUMENT);
        CHECK_CONTAINS(e.message, "tensor map: the tensor spans 67584 bytes, the array has 65536");
        CHECK(dt && mh_cuda_free(dt, addr, &e) == 0);
        mh_cuda_close(dt);
    }
    mh_cuda_unload(c);

    /* a driver with no device */
    setenv("FAKE_CUDA_DEVICES", "0", 1);
    CHECK(mh_cuda_load(fake, &c, &e) == 0);
    CHECK(mh_cuda_open(c, 0, &d, &e) == MH_E_NO_DEVICE);
    CHECK_CONTAINS(e.message, "no CUDA device 0 (0 devices)");
    mh_cuda_unload(c);
    return check_report("test_cuda");
}
