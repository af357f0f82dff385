/* test_backend.c - the backend interface (launch/backend.h) with both
 * adapters: the same launch description through emu's table (which runs
 * it) and cuda's against the fake driver (which records what it was
 * given); the optional operations each lacks refused in one place; and
 * devices opened by name. */
#include "check.h"
#include "backends.h"
#include "cuda/cuda_backend.h"
#include "emu/emu_backend.h"
#include "dump_util.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

static const char ptx_text[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry fill(.param .u64 out, .param .u32 v)\n{\n"
    "  .reg .b32 %r<4>;\n  .reg .b64 %rd<5>;\n"
    "  ld.param.u64 %rd1, [out];\n  ld.param.u32 %r1, [v];\n"
    "  cvta.to.global.u64 %rd2, %rd1;\n  mov.u32 %r2, %tid.x;\n"
    "  mul.wide.u32 %rd3, %r2, 4;\n  add.s64 %rd4, %rd2, %rd3;\n"
    "  add.u32 %r3, %r1, %r2;\n  st.global.u32 [%rd4], %r3;\n  ret;\n}\n";

/* The warp-specialised Hopper GEMM (tests/ptx/hopper_gemm.ptx, a __cluster_dims__(2, 1, 1) kernel) and
 * cluster_regs (tests/ptx/hopper_cluster.ptx, no cluster of its own) through the cuda adapter and the
 * fake driver: the three tensor maps reach the launch as 128-byte parameters, the kernel's own cluster
 * is the driver's to apply (no attribute), another one is refused before the driver is asked, and a
 * launch{cluster=} on a kernel without one reaches cuLaunchKernelEx as its cluster attribute. */
static void hopper_on_cuda(mh_device *cu, void *lib, const char *root)
{
    mh_error e;
    char path[1024];
    mh_ptx_module gm, cm;
    snprintf(path, sizeof path, "%s/tests/ptx/hopper_gemm.ptx", root);
    char *text = read_file_all(path, NULL);
    CHECK(text && mh_ptx_parse(&gm, text, strlen(text), path, &e) == 0);
    free(text);
    snprintf(path, sizeof path, "%s/tests/ptx/hopper_cluster.ptx", root);
    text = read_file_all(path, NULL);
    CHECK(text && mh_ptx_parse(&cm, text, strlen(text), path, &e) == 0);
    free(text);
    mh_module_source gs = {.ptx = &gm, .opt_level = 4}, cs = {.ptx = &cm, .opt_level = 4};
    void *gmod = NULL, *cmod = NULL;
    CHECK(mh_device_module_load(cu, &gs, &gmod, &e) == 0 && mh_device_module_load(cu, &cs, &cmod, &e) == 0);
    const mh_ptx_func *gf = mh_ptx_find(&gm, "ws_gemm"), *cf = mh_ptx_find(&cm, "cluster_regs");
    CHECK(gf && cf && gf->reqcluster[0] == 2 && gf->explicitcluster);
    uint64_t a, b, c;
    CHECK(mh_device_alloc(cu, 256 * 256 * 2, &a, &e) == 0 && mh_device_alloc(cu, 128 * 256 * 2, &b, &e) == 0 &&
          mh_device_alloc(cu, 256 * 128 * 4, &c, &e) == 0);
    mh_tensor_map_spec sa = {.data_type = MH_TMAP_BFLOAT16, .elem_size = 2, .rank = 2, .address = a, .bytes = 256 * 256 * 2,
                             .dims = {256, 256}, .box = {64, 128}, .elem_strides = {1, 1}, .swizzle = MH_TMAP_SWIZZLE_128B};
    mh_tensor_map_spec sb = sa, sc = sa;
    sb.address = b, sb.bytes = 128 * 256 * 2, sb.dims[1] = 128, sb.box[1] = 32;
    sc.data_type = MH_TMAP_FLOAT32, sc.elem_size = 4, sc.address = c, sc.bytes = 256 * 128 * 4, sc.dims[0] = 128;
    sc.swizzle = MH_TMAP_SWIZZLE_NONE;
    mh_tensor_map_contiguous(&sa), mh_tensor_map_contiguous(&sb), mh_tensor_map_contiguous(&sc);
    _Alignas(128) unsigned char maps[3][MH_TMAP_BYTES];
    CHECK(mh_device_tensor_map(cu, &sa, maps[0], &e) == 0 && mh_device_tensor_map(cu, &sb, maps[1], &e) == 0 &&
          mh_device_tensor_map(cu, &sc, maps[2], &e) == 0);
    uint32_t K = 256;
    const void *params[4] = {maps[0], maps[1], maps[2], &K};
    unsigned *last = dlsym(lib, "fake_last_launch"), *cl = dlsym(lib, "fake_last_cluster");
    void **last_params = dlsym(lib, "fake_last_params");
    setenv("FAKE_CUDA_RECORD_PARAMS", "4", 1);
    mh_launch_desc l = {.grid = {2, 2, 1}, .block = {384, 1, 1}, .cluster = {1, 1, 1}, .dynamic_smem = 106496,
                        .params = params, .nparams = 4, .timed = 1};
    mh_launch_stats st;
    cl[0] = cl[1] = cl[2] = 0;
    CHECK(mh_device_launch(cu, gmod, &gm, gf, &l, &st, &e) == 0);
    CHECK(last[0] == 2 && last[1] == 2 && last[3] == 384 && last[6] == 106496);
    CHECK(last_params[0] == maps[0] && last_params[1] == maps[1] && last_params[2] == maps[2] && *(uint32_t *)last_params[3] == 256);
    uint64_t w[16];
    memcpy(w, maps[1], sizeof w); /* the fake writes its arguments into the map: address, type, rank, dims, ... */
    CHECK(w[0] == b && w[1] == MH_TMAP_BFLOAT16 && w[2] == 2 && w[3] == 256 && w[4] == 128);
    CHECK(cl[0] == 0); /* the kernel's own cluster: no attribute */
    l.cluster[0] = 2; /* the same as the kernel's: taken */
    CHECK(mh_device_launch(cu, gmod, &gm, gf, &l, &st, &e) == 0 && cl[0] == 2 && cl[1] == 1);
    l.cluster[0] = 4;
    CHECK(mh_device_launch(cu, gmod, &gm, gf, &l, &st, &e) != 0 && e.code == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "ws_gemm declares .reqnctapercluster 2, 1, 1; the launch asks for clusters of 4x1x1");
    uint64_t out;
    CHECK(mh_device_alloc(cu, 16 * 16 * 4, &out, &e) == 0);
    const void *cp[1] = {&out};
    mh_launch_desc lc = {.grid = {4, 4, 1}, .block = {32, 1, 1}, .cluster = {2, 2, 1}, .params = cp, .nparams = 1, .timed = 1};
    cl[0] = cl[1] = cl[2] = 0;
    CHECK(mh_device_launch(cu, cmod, &cm, cf, &lc, &st, &e) == 0 && cl[0] == 2 && cl[1] == 2 && cl[2] == 1);
    lc.cluster[0] = 32, lc.grid[0] = 32;
    CHECK(mh_device_launch(cu, cmod, &cm, cf, &lc, &st, &e) != 0 && e.code == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "a cluster of 32x2x1 = 64 blocks (sm_90 takes at most 16)");
    mh_device_free(cu, out, &e), mh_device_free(cu, a, &e), mh_device_free(cu, b, &e), mh_device_free(cu, c, &e);
    mh_device_module_free(cu, gmod);
    mh_device_module_free(cu, cmod);
    mh_ptx_free(&gm);
    mh_ptx_free(&cm);
}

/* Runs fill(out, 7) on 32 threads through d's table; the description is the same for both. */
static int launch_fill(mh_device *d, const mh_ptx_module *m, void *mod, uint64_t out, uint32_t *v, void ***params_out,
                       mh_error *e)
{
    static uint64_t addr;
    static uint32_t value;
    static const void *params[2];
    addr = out;
    value = *v;
    params[0] = &addr;
    params[1] = &value;
    *params_out = (void **)params;
    mh_launch_desc l = {.grid = {1, 1, 1}, .block = {32, 1, 1}, .cluster = {1, 1, 1}, .dynamic_smem = 16,
                        .params = params, .nparams = 2, .timed = 1};
    mh_launch_stats st;
    int rc = mh_device_launch(d, mod, m, mh_ptx_find(m, "fill"), &l, &st, e);
    if (!rc && d->facts.virtual_time) CHECK(st.counted && st.warp_insns > 0 && st.time_ns > 0);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    mh_error e;
    mh_error_clear(&e);
    mh_ptx_module m;
    CHECK(mh_ptx_parse(&m, ptx_text, strlen(ptx_text), "fill.ptx", &e) == 0);
    const mh_ptx_func *f = mh_ptx_find(&m, "fill");
    CHECK(f != NULL);
    if (!f) return check_report("test_backend");
    mh_module_source src = {.ptx = &m, .opt_level = 4};
    uint32_t seven = 7;
    void **params;

    /* emu: runs it */
    mh_device_opts o = {0};
    mh_device emu;
    CHECK(mh_emu_backend.open(&o, &emu, &e) == 0);
    CHECK_STR(emu.facts.backend, "emu");
    CHECK(emu.facts.virtual_time == 1 && emu.facts.sms == 132 && emu.facts.max_smem == 232448);
    void *emod = (void *)1;
    /* emu builds nothing; its module keeps what ptxas says of the kernels, asked when needed */
    CHECK(mh_device_module_load(&emu, &src, &emod, &e) == 0 && emod != NULL);
    CHECK(mh_device_kernel_check(&emu, &m, f, &e) == 0);
    uint64_t out;
    CHECK(mh_device_alloc(&emu, 128, &out, &e) == 0);
    CHECK(launch_fill(&emu, &m, emod, out, &seven, &params, &e) == 0);
    uint32_t got[32];
    CHECK(mh_device_read(&emu, out, got, sizeof got, &e) == 0);
    CHECK(got[0] == 7 && got[31] == 38);
    CHECK(mh_device_host(&emu, out, 128, &e) != NULL);
    CHECK(mh_device_generation(&emu) == 0);
    /* tensor maps: emu's own encoding, after the same checks as the cuda backend's */
    unsigned char map[MH_TMAP_BYTES];
    mh_tensor_map_spec ts;
    memset(&ts, 0, sizeof ts);
    CHECK(mh_device_tensor_map(&emu, &ts, map, &e) == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "tensor map: rank 0 (1 to 5 dimensions)");
    ts = (mh_tensor_map_spec){.data_type = MH_TMAP_FLOAT32, .elem_size = 4, .rank = 1, .address = out, .bytes = 128,
                              .dims = {32}, .box = {32}, .elem_strides = {1}};
    CHECK(mh_device_tensor_map(&emu, &ts, map, &e) == 0 && !memcmp(map, "MGPUTMAP", 8));
    /* what emu does not have is refused by backend.c, naming the backend */
    CHECK(mh_device_takes_images(&emu, "k.cubin", &e) == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "k.cubin: a cubin/fatbin runs on the cuda backend only; emu runs PTX");
    mh_kernel_facts kf;
    CHECK(mh_device_kernel_facts(&emu, emod, f, &kf, &e) == 0 && kf.max_threads == 1024 && !kf.jit_target);
    CHECK(mh_device_free(&emu, out, &e) == 0);
    mh_device_module_free(&emu, emod);
    mh_device_close(&emu);

    /* cuda against the fake driver: the same description reaches cuLaunchKernel */
    o.driver = argv[1];
    mh_device cu;
    mh_error_clear(&e);
    CHECK(mh_cuda_backend.open(&o, &cu, &e) == 0);
    if (!cu.ops) return check_report("test_backend");
    CHECK_STR(cu.facts.backend, "cuda");
    CHECK_STR(cu.facts.name, "Fake GPU 0");
    CHECK(cu.facts.virtual_time == 0 && cu.facts.major == 9 && cu.facts.clock_ghz > 1.97 && cu.facts.clock_ghz < 1.99);
    void *cmod = NULL;
    CHECK(mh_device_module_load(&cu, &src, &cmod, &e) == 0 && cmod != NULL);
    CHECK(mh_device_kernel_check(&cu, &m, f, &e) == 0); /* cuda has no check of its own: NULL op */
    CHECK(mh_device_alloc(&cu, 128, &out, &e) == 0);
    setenv("FAKE_CUDA_RECORD_PARAMS", "2", 1);
    CHECK(launch_fill(&cu, &m, cmod, out, &seven, &params, &e) == 0);
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD);
    unsigned *last = lib ? dlsym(lib, "fake_last_launch") : NULL;
    void **last_params = lib ? dlsym(lib, "fake_last_params") : NULL;
    CHECK(last && last_params);
    if (last && last_params) {
        CHECK(last[0] == 1 && last[3] == 32 && last[6] == 16);
        CHECK(last_params[0] == params[0] && last_params[1] == params[1]); /* the same bytes, not copies */
        CHECK(*(uint64_t *)last_params[0] == out && *(uint32_t *)last_params[1] == 7);
    }
    CHECK(mh_device_host(&cu, out, 128, &e) == NULL && e.code == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "GPU memory has no host address");
    CHECK(mh_device_kernel_facts(&cu, cmod, f, &kf, &e) == 0 && kf.jit_target != NULL);
    CHECK(mh_device_takes_images(&cu, "k.cubin", &e) == 0);
    /* repeat: the launches back to back between one pair of events (after a synchronise), time_ns their mean */
    char *calls = lib ? dlsym(lib, "fake_calls") : NULL;
    CHECK(calls != NULL);
    if (calls) {
        calls[0] = 0;
        mh_launch_desc lr = {.grid = {1, 1, 1}, .block = {32, 1, 1}, .cluster = {1, 1, 1}, .params = (const void *const *)params,
                             .nparams = 2, .timed = 1, .repeat = 5};
        mh_launch_stats st;
        CHECK(mh_device_launch(&cu, cmod, &m, f, &lr, &st, &e) == 0);
        CHECK_STR(calls, "SRLLLLLRWT");
        CHECK(st.time_ns > 24999.9 && st.time_ns < 25000.1); /* the fake's 0.125 ms over 5 */
    }
    if (lib && argc > 2) hopper_on_cuda(&cu, lib, argv[2]);
    CHECK(mh_device_free(&cu, out, &e) == 0);
    mh_device_module_free(&cu, cmod);
    /* a fault that loses the device (CUDA_ERROR_ILLEGAL_ADDRESS): a kernel_fault saying so, and the
     * adapter compiles nothing again: every later operation is refused with the reason */
    static const char fault_text[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                                     ".visible .entry fault(.param .u64 out)\n{\n  ret;\n}\n";
    mh_ptx_module fm;
    CHECK(mh_ptx_parse(&fm, fault_text, strlen(fault_text), "fault.ptx", &e) == 0);
    mh_module_source fsrc = {.ptx = &fm, .opt_level = 4};
    void *fmod = NULL;
    CHECK(mh_device_module_load(&cu, &fsrc, &fmod, &e) == 0);
    const mh_ptx_func *ff = mh_ptx_find(&fm, "fault");
    CHECK(ff != NULL);
    if (ff && fmod) {
        mh_launch_desc lf = {.grid = {1, 1, 1}, .block = {32, 1, 1}, .cluster = {1, 1, 1},
                             .params = (const void *const *)params, .nparams = 1, .timed = 1};
        mh_launch_stats st;
        unsigned gen = mh_device_generation(&cu);
        CHECK(mh_device_launch(&cu, fmod, &fm, ff, &lf, &st, &e) != 0 && e.code == MH_E_KERNEL_FAULT);
        CHECK_CONTAINS(e.message, "the device is lost for this process");
        CHECK(mh_device_generation(&cu) == gen); /* nothing was reset */
        CHECK(mh_device_launch(&cu, fmod, &fm, ff, &lf, &st, &e) != 0 && e.code == MH_E_NO_DEVICE);
        CHECK_CONTAINS(e.message, "the CUDA device is lost for this process: fault faulted with CUDA_ERROR_ILLEGAL_ADDRESS");
        CHECK(mh_device_alloc(&cu, 128, &out, &e) != 0 && e.code == MH_E_NO_DEVICE);
        CHECK(mh_device_kernel_facts(&cu, fmod, ff, &kf, &e) != 0 && e.code == MH_E_NO_DEVICE);
        void *fmod2 = NULL;
        CHECK(mh_device_module_load(&cu, &fsrc, &fmod2, &e) != 0 && e.code == MH_E_NO_DEVICE);
    }
    mh_device_module_free(&cu, fmod);
    mh_ptx_free(&fm);
    mh_device_close(&cu);
    int (*driver_reset)(int) = lib ? (int (*)(int))dlsym(lib, "cuDevicePrimaryCtxReset_v2") : NULL;
    if (driver_reset) driver_reset(0); /* the fake's state for what follows (the harness never resets a lost device) */

    /* by name */
    mh_device d;
    mh_device_opts o2 = {0};
    CHECK(mh_device_open("emu", &o2, &d, &e) == 0 && !strcmp(d.facts.backend, "emu"));
    mh_device_close(&d);
    CHECK(mh_device_open("cuda:x", &o2, &d, &e) != 0 && e.code == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "unknown backend \"cuda:x\" (auto, emu, cuda, cuda:N)");
    CHECK(mh_device_open("emu:1", &o2, &d, &e) != 0 && e.code == MH_E_BAD_ARGUMENT);
    CHECK(mh_device_open("vulkan", &o2, &d, &e) != 0 && e.code == MH_E_BAD_ARGUMENT);
    o2.driver = "/nonexistent/libcuda.so.1";
    CHECK(mh_device_open("cuda", &o2, &d, &e) != 0 && e.code == MH_E_NO_DEVICE);
    CHECK(mh_device_open("auto", &o2, &d, &e) == 0 && !strcmp(d.facts.backend, "emu")); /* falls back */
    mh_device_close(&d);
    o2.driver = argv[1];
    CHECK(mh_device_open("cuda:0", &o2, &d, &e) == 0 && !strcmp(d.facts.backend, "cuda"));
    mh_device_close(&d);
    mh_backend_probe p;
    mh_cuda_backend.probe(&o2, &p);
    CHECK(p.available && p.devices == 1);
    CHECK_STR(p.facts[0].name, "Fake GPU 0");
    mh_ptx_free(&m);
    return check_report("test_backend");
}
