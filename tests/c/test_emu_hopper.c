/* test_emu_hopper.c - Hopper on emu against host references: emu's tensor maps (encoding, the
 * checks, a map by value and in global memory), TMA tile loads/stores/reductions in 1d-5d with
 * every swizzle, element strides and out-of-bounds fill, cp.async.bulk and its reduction, and
 * every mbarrier form with its phases and transaction counts, clusters, the remaining forms
 * (relaxed arrives, waits by state token, atom.shared::cluster, generic stores/atoms into another
 * block, non-tensor bulk reductions, .maxclusterrank), two warp-specialised GEMMs and a TMA tile
 * read by wgmma in a dynamic shared array beside a static variable.  Kernels: tests/ptx/hopper_tma.cu,
 * hopper_cluster.cu, hopper_forms.cu, hopper_gemm.cu, hopper_gemm_st.cu, hopper_dynsmem.cu, and
 * hopper_exited.cu (a cluster peer that has exited: a warning, or a fault in strict mode); and an
 * inline kernel that edits a tensor map (tensormap.replace, tensormap.cp_fenceproxy) and loads through it. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include "check.h"
#include "emu_util.h"
#include "emu/emu.h"
#include "emu/emu_tma.h"
#include "frontend/ptx.h"
#include "base/fp16.h"

static mh_ptx_module tma_ptx, cl_ptx, gemm_ptx, forms_ptx, gemm_st_ptx, dyn_ptx, dyn1k_ptx, exited_ptx;
static mh_emu *dev;

static int run(const mh_ptx_module *m, const char *kernel, uint32_t block, uint32_t smem, const mh_emu_arg *args,
               uint32_t n, mh_error *e)
{
    mh_emu_launch l = {.grid = {1, 1, 1}, .block = {block, 1, 1}, .dynamic_smem = smem, .args = args, .nargs = n,
                       .timeout_s = 60};
    mh_emu_stats st;
    mh_error_clear(e);
    int rc = mh_emu_run(dev, m, kernel, &l, &st, e) ? (int)e->code : 0;
    if (rc && rc != MH_E_KERNEL_FAULT) fprintf(stderr, "  %s: %s\n", kernel, e->message);
    return rc;
}

/* A launch of a grid with clusters (cl: zeros for the kernel's own). */
static int run_grid(const mh_ptx_module *m, const char *kernel, const uint32_t grid[3], uint32_t block,
                    const uint32_t cl[3], uint32_t smem, const mh_emu_arg *args, uint32_t n, mh_error *e)
{
    mh_emu_launch l = {.grid = {grid[0], grid[1], grid[2]}, .block = {block, 1, 1}, .dynamic_smem = smem, .args = args,
                       .nargs = n, .timeout_s = 60};
    mh_emu_extra x = {.cluster = {cl[0], cl[1], cl[2]}};
    mh_emu_stats st;
    mh_error_clear(e);
    int rc = mh_emu_run_ex(dev, m, kernel, &l, &x, &st, e) ? (int)e->code : 0;
    free(st.output);
    if (rc && rc != MH_E_KERNEL_FAULT && rc != MH_E_BAD_ARGUMENT) fprintf(stderr, "  %s: %s\n", kernel, e->message);
    return rc;
}

/* ---- the host's reading of a tile copy (the CUDA driver API's and the PTX ISA's definition) ---- */

static uint64_t swz(uint64_t a, int sw)
{
    /* 16-byte chunk c of 128-byte row r of the pattern goes to chunk c ^ (r mod 2^sw) */
    if (!sw) return a;
    uint64_t row = a / 128 % (1u << sw), chunk = a / 16 % 8;
    return a - chunk * 16 + ((chunk ^ row) % 8) * 16;
}

/* The shared bytes a load of the box at c gives (fill for elements outside the tensor). */
static void ref_load(const mh_tensor_map_spec *s, const unsigned char *tensor, const int *c, uint64_t fill,
                     unsigned char *out, uint64_t *bytes)
{
    uint32_t n[5] = {1, 1, 1, 1, 1}, es[5] = {1, 1, 1, 1, 1};
    for (uint32_t i = 0; i < s->rank; i++) {
        es[i] = i == 0 && s->interleave == MH_TMAP_INTERLEAVE_NONE ? 1 : s->elem_strides[i];
        n[i] = (s->box[i] + es[i] - 1) / es[i];
    }
    uint64_t e = 0, esz = s->elem_size;
    for (uint32_t k4 = 0; k4 < n[4]; k4++)
        for (uint32_t k3 = 0; k3 < n[3]; k3++)
            for (uint32_t k2 = 0; k2 < n[2]; k2++)
                for (uint32_t k1 = 0; k1 < n[1]; k1++)
                    for (uint32_t k0 = 0; k0 < n[0]; k0++, e++) {
                        uint32_t k[5] = {k0, k1, k2, k3, k4};
                        int in = 1;
                        uint64_t off = 0;
                        for (uint32_t i = 0; i < s->rank; i++) {
                            int64_t g = (int64_t)c[i] + (int64_t)k[i] * es[i];
                            if (g < 0 || g >= (int64_t)s->dims[i]) in = 0;
                            else off += (uint64_t)g * (i ? s->strides[i - 1] : esz);
                        }
                        unsigned char *d = out + swz(e * esz, s->swizzle);
                        if (in) memcpy(d, tensor + off, esz);
                        else memcpy(d, &fill, esz);
                    }
    *bytes = e * esz;
}

static mh_tensor_map_spec spec(int dt, unsigned esz, uint32_t rank, uint64_t addr, uint64_t bytes, const uint64_t *dims,
                               const uint32_t *box)
{
    mh_tensor_map_spec s;
    memset(&s, 0, sizeof s);
    s.data_type = dt;
    s.elem_size = esz;
    s.rank = rank;
    s.address = addr;
    s.bytes = bytes;
    for (uint32_t i = 0; i < rank; i++) {
        s.dims[i] = dims[i];
        s.box[i] = box[i];
        s.elem_strides[i] = 1;
    }
    mh_tensor_map_contiguous(&s);
    return s;
}

/* Loads the box at c through tma_load and compares every shared byte with the reference. */
static void check_load(const char *what, const mh_tensor_map_spec *s, const unsigned char *tensor, const int *c)
{
    unsigned char map[MH_TMAP_BYTES], want[65536], *got = calloc(1, 65536);
    mh_error e;
    CHECK(mh_emu_tensor_map(s, map, &e) == 0);
    uint64_t bytes;
    memset(want, 0, sizeof want);
    uint64_t nan = s->elem_size == 2 ? 0x7fff : s->elem_size == 4 ? 0x7fffffff : 0x7fffffffffffffffull;
    ref_load(s, tensor, c, s->oob == MH_TMAP_OOB_NAN ? nan : 0, want, &bytes);
    /* a swizzle moves 16-byte chunks inside their 128-byte row: boxes of whole rows here */
    CHECK(!s->swizzle || bytes % 128 == 0);
    uint64_t out = emu_upload(dev, NULL, bytes);
    int rank = (int)s->rank, c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3], c4 = c[4];
    unsigned b = (unsigned)bytes;
    mh_emu_arg args[] = {{map, MH_TMAP_BYTES}, ARG(rank), ARG(c0), ARG(c1), ARG(c2), ARG(c3), ARG(c4), ARG(b), ARG(out)};
    int rc = run(&tma_ptx, "tma_load", 128, (uint32_t)bytes, args, 9, &e);
    if (rc) fprintf(stderr, "  %s: %s\n", what, e.message);
    CHECK(rc == 0);
    if (!rc) {
        CHECK(mh_emu_read(dev, out, got, bytes, &e) == 0);
        int bad = memcmp(got, want, bytes) != 0;
        if (bad) fprintf(stderr, "  %s: shared bytes differ from the reference\n", what);
        CHECK(!bad);
    }
    mh_emu_free(dev, out, &e);
    free(got);
}

static void tma_loads(void)
{
    mh_error e;
    /* a 2d f32 tensor of 40 x 24 (inner first) */
    float t2[24][40];
    for (int y = 0; y < 24; y++)
        for (int x = 0; x < 40; x++) t2[y][x] = (float)(y * 100 + x);
    uint64_t a2 = emu_upload(dev, t2, sizeof t2);
    uint64_t d2[] = {40, 24};
    /* every swizzle: the box's inner dimension the swizzle's span (8, 16, 32 floats), 8 rows;
     * one inside the tensor, one reaching past each edge (zero fill, then NaN fill) */
    static const uint32_t inner[4] = {8, 8, 16, 32};
    for (int sw = 0; sw < 4; sw++) {
        uint32_t box[] = {inner[sw], 8};
        mh_tensor_map_spec s = spec(MH_TMAP_FLOAT32, 4, 2, a2, sizeof t2, d2, box);
        s.swizzle = sw;
        int in[5] = {4, 8}, edge[5] = {36, -3}, far[5] = {-40, 100};
        char what[64];
        snprintf(what, sizeof what, "2d swizzle %d inside", sw);
        check_load(what, &s, (unsigned char *)t2, in);
        snprintf(what, sizeof what, "2d swizzle %d edge, zero", sw);
        check_load(what, &s, (unsigned char *)t2, edge);
        s.oob = MH_TMAP_OOB_NAN;
        snprintf(what, sizeof what, "2d swizzle %d edge, NaN", sw);
        check_load(what, &s, (unsigned char *)t2, edge);
        snprintf(what, sizeof what, "2d swizzle %d outside", sw);
        check_load(what, &s, (unsigned char *)t2, far);
    }
    /* the 128B swizzle by hand: row 1 of a box of 32 floats per row has its 16-byte chunk 0 at
     * chunk 1 (offset 128 + 16), row 3's chunk 2 at chunk 1 (offset 384 + 16) */
    {
        uint32_t box[] = {32, 8};
        mh_tensor_map_spec s = spec(MH_TMAP_FLOAT32, 4, 2, a2, sizeof t2, d2, box);
        s.swizzle = MH_TMAP_SWIZZLE_128B;
        unsigned char map[MH_TMAP_BYTES];
        CHECK(mh_emu_tensor_map(&s, map, &e) == 0);
        uint64_t out = emu_upload(dev, NULL, 1024);
        int rank = 2, c0 = 0, c1 = 0, z = 0;
        unsigned b = 1024;
        mh_emu_arg args[] = {{map, MH_TMAP_BYTES}, ARG(rank), ARG(c0), ARG(c1), ARG(z), ARG(z), ARG(z), ARG(b), ARG(out)};
        CHECK(run(&tma_ptx, "tma_load", 128, 1024, args, 9, &e) == 0);
        float got[256];
        CHECK(mh_emu_read(dev, out, got, sizeof got, &e) == 0);
        CHECK(got[0] == 0.0f && got[(128 + 16) / 4] == 100.0f && got[(128 + 16) / 4 + 3] == 103.0f);
        CHECK(got[(384 + 16) / 4] == 308.0f && got[(384 + 32) / 4] == 304.0f && got[128 / 4] == 104.0f);
        mh_emu_free(dev, out, &e);
    }
    /* 1d: 64 f16 inner, box 32 at -8 (8 zeros, then elements 0..23) */
    {
        uint16_t t1[64];
        for (int i = 0; i < 64; i++) t1[i] = (uint16_t)(0x3c00 + i);
        uint64_t a1 = emu_upload(dev, t1, sizeof t1);
        uint64_t d1[] = {64};
        uint32_t box[] = {32};
        mh_tensor_map_spec s = spec(MH_TMAP_FLOAT16, 2, 1, a1, sizeof t1, d1, box);
        int c[5] = {-8}, c2[5] = {48};
        check_load("1d zero fill", &s, (unsigned char *)t1, c);
        s.oob = MH_TMAP_OOB_NAN;
        check_load("1d NaN fill", &s, (unsigned char *)t1, c2);
    }
    unsigned char map32[MH_TMAP_BYTES];
    /* 3d with element strides {1, 2, 3}: every second row, every third plane; bf16 with the 64B swizzle */
    static uint16_t t3[7][12][32];
    for (int z = 0; z < 7; z++)
        for (int y = 0; y < 12; y++)
            for (int x = 0; x < 32; x++) t3[z][y][x] = (uint16_t)(z * 1000 + y * 40 + x);
    uint64_t a3 = emu_upload(dev, t3, sizeof t3);
    {
        uint64_t d3[] = {32, 12, 7};
        uint32_t box[] = {32, 8, 6};
        mh_tensor_map_spec s = spec(MH_TMAP_BFLOAT16, 2, 3, a3, sizeof t3, d3, box);
        s.elem_strides[1] = 2;
        s.elem_strides[2] = 3;
        s.swizzle = MH_TMAP_SWIZZLE_64B;
        int c[5] = {0, 3, 1}, c2[5] = {-16, -1, 4};
        check_load("3d element strides", &s, (unsigned char *)t3, c);
        check_load("3d element strides, outside", &s, (unsigned char *)t3, c2);
        s.elem_strides[0] = 2; /* ignored for dimension 0 without interleave (cuda.h) */
        check_load("3d element stride 0 ignored", &s, (unsigned char *)t3, c);
        /* interleave 16B: the innermost dimension is a 16-byte chunk (8 bf16 channels) */
        uint64_t di[] = {8, 48, 7};
        uint32_t bi[] = {8, 16, 2};
        mh_tensor_map_spec si = spec(MH_TMAP_BFLOAT16, 2, 3, a3, sizeof t3, di, bi);
        si.interleave = MH_TMAP_INTERLEAVE_16B;
        int ci[5] = {0, 5, 2};
        check_load("3d interleave 16B", &si, (unsigned char *)t3, ci);
        /* interleave 32B (with the 32B swizzle, the driver's rule): 16 bf16 channels a 32-byte chunk, each
         * 64-byte row of t3 two "pixels"; inside, past the edges, and every second pixel */
        uint64_t d32[] = {16, 24, 7};
        uint32_t b32[] = {16, 8, 2};
        mh_tensor_map_spec s32 = spec(MH_TMAP_BFLOAT16, 2, 3, a3, sizeof t3, d32, b32);
        s32.interleave = MH_TMAP_INTERLEAVE_32B;
        s32.swizzle = MH_TMAP_SWIZZLE_32B;
        int c32[5] = {0, 5, 2}, e32[5] = {0, 20, 6};
        check_load("3d interleave 32B", &s32, (unsigned char *)t3, c32);
        check_load("3d interleave 32B, edges", &s32, (unsigned char *)t3, e32);
        s32.elem_strides[1] = 2;
        check_load("3d interleave 32B, element stride 2", &s32, (unsigned char *)t3, c32);
        s32.elem_strides[0] = 2; /* with interleave, dimension 0's element stride counts (cuda.h) */
        s32.elem_strides[1] = 1;
        check_load("3d interleave 32B, element stride 2 in dimension 0", &s32, (unsigned char *)t3, c32);
        s32.elem_strides[0] = 1;
        s32.swizzle = MH_TMAP_SWIZZLE_NONE;
        CHECK(mh_emu_tensor_map(&s32, map32, &e) == MH_E_BAD_ARGUMENT);
        CHECK_CONTAINS(e.message, "interleave = \"32B\" needs swizzle = \"32B\"");
        /* a 3d view with rows that overlap (stride 32 bytes < 64 bytes of a row), cuda.h's rules only */
        uint64_t dv[] = {32, 20, 2};
        uint32_t bv[] = {32, 4, 2};
        mh_tensor_map_spec sv = spec(MH_TMAP_BFLOAT16, 2, 3, a3, sizeof t3, dv, bv);
        sv.strides[0] = 32;
        sv.strides[1] = 768;
        int cv[5] = {0, 3, 1};
        check_load("3d overlapping rows", &sv, (unsigned char *)t3, cv);
    }
    /* 4d and 5d (dimensions of size 1 with stride 0, an 8-byte element type) */
    {
        static uint64_t t5[4][3][16];
        for (int z = 0; z < 4; z++)
            for (int y = 0; y < 3; y++)
                for (int x = 0; x < 16; x++) t5[z][y][x] = (uint64_t)z << 40 | (uint64_t)y << 20 | (uint64_t)x;
        uint64_t a5 = emu_upload(dev, t5, sizeof t5);
        uint64_t d4[] = {16, 3, 4, 2};
        uint32_t b4[] = {8, 2, 3, 2};
        mh_tensor_map_spec s4 = spec(MH_TMAP_UINT64, 8, 4, a5, sizeof t5, d4, b4);
        s4.strides[2] = 0; /* the 4th dimension revisits the tensor */
        int c4[5] = {6, 2, 2, 0};
        check_load("4d", &s4, (unsigned char *)t5, c4);
        uint64_t d5[] = {16, 1, 3, 1, 4};
        uint32_t b5[] = {16, 1, 2, 1, 3};
        mh_tensor_map_spec s5 = spec(MH_TMAP_INT64, 8, 5, a5, sizeof t5, d5, b5);
        s5.strides[0] = 0;
        s5.strides[1] = 128;
        s5.strides[2] = 0;
        s5.strides[3] = 384;
        int c5[5] = {0, 0, 1, 0, 2};
        check_load("5d", &s5, (unsigned char *)t5, c5);
        mh_emu_free(dev, a5, &e);
    }
    /* a map in global memory */
    {
        uint32_t box[] = {32, 4};
        mh_tensor_map_spec s = spec(MH_TMAP_FLOAT32, 4, 2, a2, sizeof t2, d2, box);
        s.swizzle = MH_TMAP_SWIZZLE_128B;
        unsigned char map[MH_TMAP_BYTES], want[512];
        CHECK(mh_emu_tensor_map(&s, map, &e) == 0);
        uint64_t pm = emu_upload(dev, map, sizeof map), out = emu_upload(dev, NULL, 512), bytes;
        int c[5] = {8, 20};
        ref_load(&s, (unsigned char *)t2, c, 0, want, &bytes);
        CHECK(bytes == 512);
        unsigned b = 512;
        mh_emu_arg args[] = {ARG(pm), ARG(c[0]), ARG(c[1]), ARG(b), ARG(out)};
        CHECK(run(&tma_ptx, "tma_load_gmem_map", 64, 512, args, 5, &e) == 0);
        unsigned char got[512];
        CHECK(mh_emu_read(dev, out, got, 512, &e) == 0 && !memcmp(got, want, 512));
        /* bytes that are not emu's map: refused, naming why */
        memset(map, 0x5a, sizeof map);
        CHECK(mh_emu_write(dev, pm, map, sizeof map, &e) == 0);
        CHECK(run(&tma_ptx, "tma_load_gmem_map", 64, 512, args, 5, &e) == MH_E_KERNEL_FAULT);
        CHECK_CONTAINS(e.message, "the tensor map is not one dev:tensor_map made on emu");
        mh_emu_free(dev, pm, &e);
        mh_emu_free(dev, out, &e);
    }
    /* the encoding: documented fields at their places; the checks are the cuda backend's */
    {
        uint32_t box[] = {32, 8};
        mh_tensor_map_spec s = spec(MH_TMAP_FLOAT32, 4, 2, a2, sizeof t2, d2, box), back;
        s.swizzle = MH_TMAP_SWIZZLE_64B;
        unsigned char map[MH_TMAP_BYTES];
        CHECK(mh_emu_tensor_map(&s, map, &e) == MH_E_BAD_ARGUMENT);
        CHECK_CONTAINS(e.message, "the box's inner dimension is 128 bytes, more than the 64B swizzle takes");
        s.swizzle = MH_TMAP_SWIZZLE_128B;
        CHECK(mh_emu_tensor_map(&s, map, &e) == 0);
        uint64_t addr;
        memcpy(&addr, map + 16, 8);
        CHECK(!memcmp(map, "MGPUTMAP", 8) && map[8] == 1 && map[9] == 2 && map[10] == MH_TMAP_FLOAT32 && map[13] == 3 &&
              addr == a2);
        CHECK(mh_emu_tensor_map_decode(map, &back) == 0 && back.dims[1] == 24 && back.strides[0] == 160 &&
              back.box[0] == 32);
        map[9] = 9;
        CHECK(mh_emu_tensor_map_decode(map, &back) == -1);
    }
    mh_emu_free(dev, a2, &e);
    mh_emu_free(dev, a3, &e);
}

/* Every data type of cuda.h 13 by name, and the Driver API's rules for them (the packed 4/6-bit
 * types: a 32-byte aligned address and strides, dims[1] a multiple of 128 or 2, box[1] = 128, their
 * swizzles and interleave), a map based at an offset into its array; strides that do not cover the
 * dimension below are accepted (docs/DESIGN.md). */
static void tensor_map_types(void)
{
    mh_error e;
    static const char *const names[] = {"uint8", "uint16", "uint32", "int32", "uint64", "int64", "float16", "float32",
                                        "float64", "bfloat16", "float32_ftz", "tfloat32", "tfloat32_ftz",
                                        "16u4_align8b", "16u4_align16b", "16u6_align16b"};
    static const unsigned bits[] = {8, 16, 32, 32, 64, 64, 16, 32, 64, 16, 32, 32, 32, 4, 4, 6};
    for (int t = 0; t < MH_TMAP_NTYPES; t++) {
        CHECK(mh_tensor_map_type(names[t]) == t && !strcmp(mh_tensor_map_type_name(t), names[t]));
        CHECK(mh_tensor_map_elem_bits(t) == bits[t]);
    }
    CHECK(mh_tensor_map_type("tf32") == -1 && mh_tensor_map_elem_bits(MH_TMAP_NTYPES) == 0);
    uint64_t base = 0x10000, dims[] = {256, 4};
    uint32_t box[] = {128, 4};
    /* a packed type: 4 bits each, 128 bytes per row */
    mh_tensor_map_spec p = spec(MH_TMAP_16U4_ALIGN16B, 0, 2, base, 4096, dims, box);
    CHECK(p.strides[0] == 128 && mh_tensor_map_check(&p, &e) == 0);
    p.address = base + 16;
    CHECK(mh_tensor_map_check(&p, &e) == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "the tensor's address must be 32-byte aligned with data type 16u*_align16b");
    p.address = base, p.strides[0] = 144;
    CHECK(mh_tensor_map_check(&p, &e) == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "strides[1] = 144 bytes (a multiple of 32 below 2^40)");
    p.strides[0] = 128, p.dims[0] = 192;
    CHECK(mh_tensor_map_check(&p, &e) == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "dims[1] = 192: with data type 16u4_align16b a multiple of 128");
    p.dims[0] = 256, p.box[0] = 64;
    CHECK(mh_tensor_map_check(&p, &e) == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "box[1] = 64: with data type 16u4_align16b it must be 128");
    p.box[0] = 128, p.swizzle = MH_TMAP_SWIZZLE_64B;
    CHECK(mh_tensor_map_check(&p, &e) == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "data type 16u4_align16b takes swizzle \"none\" or \"128B\"");
    p.swizzle = MH_TMAP_SWIZZLE_NONE, p.oob = MH_TMAP_OOB_NAN;
    CHECK(mh_tensor_map_check(&p, &e) == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "oob = \"nan\" is for floating-point data; this tensor's elements are 16u4_align16b");
    p.oob = MH_TMAP_OOB_ZERO;
    unsigned char map[MH_TMAP_BYTES];
    CHECK(mh_emu_tensor_map(&p, map, &e) == MH_E_BAD_ARGUMENT); /* sm_100's, not emu's */
    CHECK_CONTAINS(e.message, "data type 16u4_align16b (packed values) is for sm_100 and later; emu runs sm_90");
    mh_tensor_map_spec q = spec(MH_TMAP_16U4_ALIGN8B, 0, 2, base, 4096, dims, box);
    q.dims[0] = 255;
    CHECK(mh_tensor_map_check(&q, &e) == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "dims[1] = 255: with data type 16u4_align8b a multiple of 2");
    q.dims[0] = 256, q.box[0] = 16; /* 8 bytes */
    CHECK(mh_tensor_map_check(&q, &e) == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "the box's inner dimension is 64 bits (box[1] x 4 bits): it must be a multiple of 16 bytes");
    mh_tensor_map_spec r = spec(MH_TMAP_16U6_ALIGN16B, 0, 3, base, 1 << 16, (uint64_t[]){128, 4, 4}, (uint32_t[]){128, 4, 4});
    CHECK(r.strides[0] == 96 && mh_tensor_map_check(&r, &e) == 0);
    r.interleave = MH_TMAP_INTERLEAVE_16B;
    CHECK(mh_tensor_map_check(&r, &e) == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "data type 16u6_align16b takes no interleave");
    /* a tensor based at an offset into its array: the address's alignment and the bytes left */
    mh_tensor_map_spec o = spec(MH_TMAP_TFLOAT32, 4, 2, base + 8, 4096 - 8, dims, box);
    o.offset = 8;
    CHECK(mh_tensor_map_check(&o, &e) == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "the tensor's address must be 16-byte aligned (0x10008, the array's start plus the offset)");
    o.address = base + 16, o.offset = 16, o.bytes = 4096 - 16;
    CHECK(mh_tensor_map_check(&o, &e) == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "the tensor spans 4096 bytes, the array has 4080 after the offset: TMA would read past");
    /* strides of 0, and ones that do not cover the dimension below, are the driver's to take */
    o.dims[0] = 64, o.strides[0] = 0;
    CHECK(mh_tensor_map_check(&o, &e) == 0);
    o.strides[0] = 128; /* 64 elements of 4 bytes are 256: rows overlap */
    CHECK(mh_tensor_map_check(&o, &e) == 0 && mh_emu_tensor_map(&o, map, &e) == 0);
    /* an element size that is not the type's */
    o.elem_size = 2;
    CHECK(mh_tensor_map_check(&o, &e) == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "elements of 2 bytes with data type tfloat32");
}

/* ---- stores and reductions ---- */

static uint32_t red_ref(int op, uint32_t old, uint32_t v)
{
    switch (op) {
    case 0: return old + v;
    case 1: return old < v ? old : v;
    case 2: return old > v ? old : v;
    case 3: return old >= v ? 0 : old + 1;
    case 4: return old == 0 || old > v ? v : old - 1;
    case 5: return old & v;
    case 6: return old | v;
    case 7: return old ^ v;
    default: return v;
    }
}

static void tma_stores(void)
{
    mh_error e;
    enum { W = 40, H = 24 };
    /* a 2d u32 tensor; a box of 32 x 8 with the 128B swizzle at (24, 20): columns 24..39 and rows
     * 20..23 inside, the rest outside (not written) */
    uint32_t base[H][W], src[8][32];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) base[y][x] = (uint32_t)(y * 64 + x + 5);
    for (int r = 0; r < 8; r++)
        for (int k = 0; k < 32; k++) src[r][k] = (uint32_t)(r * 7 + k * 3 + 1);
    uint64_t in = emu_upload(dev, src, sizeof src);
    for (int op = -1; op < 8; op++) {
        uint64_t t = emu_upload(dev, base, sizeof base);
        uint64_t d[] = {W, H};
        uint32_t box[] = {32, 8};
        mh_tensor_map_spec s = spec(MH_TMAP_UINT32, 4, 2, t, sizeof base, d, box);
        s.swizzle = MH_TMAP_SWIZZLE_128B;
        unsigned char map[MH_TMAP_BYTES];
        CHECK(mh_emu_tensor_map(&s, map, &e) == 0);
        int c0 = 24, c1 = 20;
        unsigned bytes = sizeof src;
        mh_emu_arg args[] = {{map, MH_TMAP_BYTES}, ARG(op), ARG(c0), ARG(c1), ARG(bytes), ARG(in)};
        CHECK(run(&tma_ptx, "tma_store", 128, sizeof src, args, 6, &e) == 0);
        uint32_t got[H][W];
        CHECK(mh_emu_read(dev, t, got, sizeof got, &e) == 0);
        int bad = 0;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                uint32_t want = base[y][x];
                int r = y - c1, k = x - c0;
                if (r >= 0 && r < 8 && k >= 0 && k < 32) {
                    /* the element of box (r, k) sits in shared memory at the swizzled offset */
                    uint64_t off = swz((uint64_t)(r * 32 + k) * 4, 3);
                    want = red_ref(op, want, ((uint32_t *)src)[off / 4]);
                }
                bad += got[y][x] != want;
            }
        if (bad) fprintf(stderr, "  tma_store op %d: %d elements differ\n", op, bad);
        CHECK(bad == 0);
        mh_emu_free(dev, t, &e);
    }
    /* f32 add: a float reduction; and/or on floats are not in the ISA */
    {
        float tf[8][8], sf[8][8];
        for (int i = 0; i < 64; i++) ((float *)tf)[i] = (float)i * 0.5f, ((float *)sf)[i] = 1.25f;
        uint64_t t = emu_upload(dev, tf, sizeof tf), si = emu_upload(dev, sf, sizeof sf);
        uint64_t d[] = {8, 8};
        uint32_t box[] = {8, 8};
        mh_tensor_map_spec s = spec(MH_TMAP_FLOAT32, 4, 2, t, sizeof tf, d, box);
        unsigned char map[MH_TMAP_BYTES];
        CHECK(mh_emu_tensor_map(&s, map, &e) == 0);
        int op = 0, c0 = 0, c1 = 0;
        unsigned bytes = sizeof sf;
        mh_emu_arg args[] = {{map, MH_TMAP_BYTES}, ARG(op), ARG(c0), ARG(c1), ARG(bytes), ARG(si)};
        CHECK(run(&tma_ptx, "tma_store", 64, sizeof sf, args, 6, &e) == 0);
        float got[64];
        CHECK(mh_emu_read(dev, t, got, sizeof got, &e) == 0);
        CHECK(got[0] == 1.25f && got[63] == 31.5f + 1.25f);
        op = 5;
        CHECK(run(&tma_ptx, "tma_store", 64, sizeof sf, args, 6, &e) == MH_E_KERNEL_FAULT);
        CHECK_CONTAINS(e.message, "cp.reduce.async.bulk.tensor .and on a tensor of f32 elements: not in the ISA");
        mh_emu_free(dev, t, &e);
        mh_emu_free(dev, si, &e);
    }
    /* f16 and bf16 min/max: by value (negative halves compare below positive ones) */
    for (int bf = 0; bf < 2; bf++)
        for (int op = 1; op <= 2; op++) {
            uint16_t th[8][16], sh[8][16], got[8][16];
            float tv[128], sv[128];
            for (int i = 0; i < 128; i++) {
                tv[i] = (float)((i * 37) % 23 - 11) * 0.75f, sv[i] = (float)((i * 53) % 19 - 9) * 1.25f;
                ((uint16_t *)th)[i] = bf ? mh_float_to_bf16(tv[i]) : mh_float_to_half(tv[i]);
                ((uint16_t *)sh)[i] = bf ? mh_float_to_bf16(sv[i]) : mh_float_to_half(sv[i]);
            }
            uint64_t t = emu_upload(dev, th, sizeof th), si = emu_upload(dev, sh, sizeof sh);
            uint64_t d[] = {16, 8};
            uint32_t box[] = {16, 8};
            mh_tensor_map_spec s = spec(bf ? MH_TMAP_BFLOAT16 : MH_TMAP_FLOAT16, 2, 2, t, sizeof th, d, box);
            unsigned char map[MH_TMAP_BYTES];
            CHECK(mh_emu_tensor_map(&s, map, &e) == 0);
            int c0 = 0, c1 = 0;
            unsigned bytes = sizeof sh;
            mh_emu_arg args[] = {{map, MH_TMAP_BYTES}, ARG(op), ARG(c0), ARG(c1), ARG(bytes), ARG(si)};
            CHECK(run(&tma_ptx, "tma_store", 64, sizeof sh, args, 6, &e) == 0);
            CHECK(mh_emu_read(dev, t, got, sizeof got, &e) == 0);
            int bad = 0;
            for (int i = 0; i < 128; i++) {
                float w = op == 1 ? (sv[i] < tv[i] ? sv[i] : tv[i]) : (sv[i] > tv[i] ? sv[i] : tv[i]);
                bad += ((uint16_t *)got)[i] != (bf ? mh_float_to_bf16(w) : mh_float_to_half(w));
            }
            if (bad) fprintf(stderr, "  tma_store %s %s: %d of 128 elements wrong\n", op == 1 ? "min" : "max", bf ? "bf16" : "f16", bad);
            CHECK(bad == 0);
            mh_emu_free(dev, t, &e);
            mh_emu_free(dev, si, &e);
        }
    /* 3d store: the box's last plane is outside the tensor and not written */
    {
        uint32_t t3[3][4][8], s3[2][4][8];
        for (int i = 0; i < 96; i++) ((uint32_t *)t3)[i] = 0xdead0000u + (uint32_t)i;
        for (int i = 0; i < 64; i++) ((uint32_t *)s3)[i] = (uint32_t)i;
        uint64_t t = emu_upload(dev, t3, sizeof t3), si = emu_upload(dev, s3, sizeof s3);
        uint64_t d[] = {8, 4, 3};
        uint32_t box[] = {8, 4, 2};
        mh_tensor_map_spec s = spec(MH_TMAP_UINT32, 4, 3, t, sizeof t3, d, box);
        unsigned char map[MH_TMAP_BYTES];
        CHECK(mh_emu_tensor_map(&s, map, &e) == 0);
        int c0 = 0, c1 = 0, c2 = 2;
        unsigned bytes = sizeof s3;
        mh_emu_arg args[] = {{map, MH_TMAP_BYTES}, ARG(c0), ARG(c1), ARG(c2), ARG(bytes), ARG(si)};
        CHECK(run(&tma_ptx, "tma_store_3d", 64, sizeof s3, args, 6, &e) == 0);
        uint32_t got[3][4][8];
        CHECK(mh_emu_read(dev, t, got, sizeof got, &e) == 0);
        CHECK(got[2][0][0] == 0 && got[2][3][7] == 31 && got[1][3][7] == 0xdead0000u + 63);
        mh_emu_free(dev, t, &e);
        mh_emu_free(dev, si, &e);
    }
    mh_emu_free(dev, in, &e);
}

/* ---- cp.async.bulk ---- */

static void bulk(void)
{
    mh_error e;
    uint32_t src[256], red0[256];
    for (int i = 0; i < 256; i++) src[i] = (uint32_t)(i * 2654435761u), red0[i] = (uint32_t)i;
    uint64_t s = emu_upload(dev, src, sizeof src), d = emu_upload(dev, NULL, sizeof src),
             r = emu_upload(dev, red0, sizeof red0);
    unsigned bytes = 1008; /* a multiple of 16, not of 128 */
    mh_emu_arg args[] = {ARG(s), ARG(d), ARG(r), ARG(bytes)};
    CHECK(run(&tma_ptx, "bulk_copies", 64, 2 * 1008, args, 4, &e) == 0);
    uint32_t got[256], gr[256];
    CHECK(mh_emu_read(dev, d, got, sizeof got, &e) == 0 && mh_emu_read(dev, r, gr, sizeof gr, &e) == 0);
    int bad = 0;
    for (int i = 0; i < 256; i++) {
        bad += got[i] != (i < 252 ? src[i] : 0);
        bad += gr[i] != (i < 252 ? red0[i] + src[i] : red0[i]);
    }
    CHECK(bad == 0);
    bytes = 1000; /* not a multiple of 16 */
    CHECK(run(&tma_ptx, "bulk_copies", 64, 2 * 1008, args, 4, &e) == MH_E_KERNEL_FAULT);
    CHECK_CONTAINS(e.message, "cp.async.bulk: size 1000");
    bytes = 2000; /* past the end of the 1024-byte source */
    CHECK(run(&tma_ptx, "bulk_copies", 64, 2 * 2000, args, 4, &e) == MH_E_KERNEL_FAULT);
    CHECK_CONTAINS(e.message, "cp.async.bulk of 2000 bytes at");
    CHECK_CONTAINS(e.message, "runs past the end of its allocation");
    mh_emu_free(dev, s, &e);
    mh_emu_free(dev, d, &e);
    mh_emu_free(dev, r, &e);
}

/* ---- virtual time: a copy's bytes at the SM's TMA bandwidth, then its latency ---- */

static long long tma_cycles(int mode, unsigned bytes)
{
    mh_error e;
    uint64_t src = emu_upload(dev, NULL, 16384), dst = emu_upload(dev, NULL, 16384), out = emu_upload(dev, NULL, 8);
    mh_emu_arg args[] = {ARG(src), ARG(dst), ARG(bytes), ARG(mode), ARG(out)};
    if (run(&tma_ptx, "tma_time", 32, 2 * 8192, args, 5, &e)) CHECK_STR(e.message, "");
    long long t = 0;
    CHECK(mh_emu_read(dev, out, &t, 8, &e) == 0);
    mh_emu_free(dev, src, &e), mh_emu_free(dev, dst, &e), mh_emu_free(dev, out, &e);
    return t;
}

static void tma_time(void)
{
    /* issue 32: a copy's bytes come from HBM (a cold L2) through the SM's port to L2, then the TMA
     * unit's own cost (emu_model.c): one load of 8 KiB = HBM latency + 8192 / port bytes a cycle +
     * tma_lat, + the instructions around it; half the bytes: 4096 / port fewer; two back to back
     * (the same source): the second's lines are in flight, its bytes follow the first's through
     * the port; a store waited for with wait_group: the L2's latency instead of the HBM's.  (Before
     * issue 32: 14 bytes a cycle and 500 cycles, whatever the level; two copies took 586 more.) */
    const mh_emu_model *m = mh_emu_model_find(NULL);
    long long port = (long long)(8192 / m->sm_port_bytes_per_clk), lat = m->hbm_lat + m->tma_lat;
    long long one = tma_cycles(0, 8192), half = tma_cycles(0, 4096), two = tma_cycles(1, 8192), st = tma_cycles(2, 8192);
    fprintf(stderr, "  tma time: 8 KiB %lld, 4 KiB %lld, two of 8 KiB %lld, a store of 8 KiB %lld cycles\n", one, half, two, st);
    CHECK(one >= lat + port && one < lat + port + 60);
    CHECK(one - half >= port / 2 - 2 && one - half <= port / 2 + 2);
    CHECK(two - one >= port - 2 && two - one < port + 30);
    CHECK(st >= m->l2_lat + m->tma_lat + port && st < m->l2_lat + m->tma_lat + port + 60);
}

/* ---- mbarriers: every form, phases and transaction counts ---- */

/* One thread of kernel k writes n words to its one argument: each must be want[]'s (a word that
 * differs is said). */
static void expect_words(const mh_ptx_module *m, const char *k, const uint32_t *want, int n)
{
    mh_error e;
    uint64_t out = emu_upload(dev, NULL, 64 * 4);
    mh_emu_arg args[] = {ARG(out)};
    uint32_t got[64];
    CHECK(n <= 64 && run(m, k, 1, 0, args, 1, &e) == 0);
    CHECK(mh_emu_read(dev, out, got, (size_t)n * 4, &e) == 0);
    for (int i = 0; i < n; i++)
        if (got[i] != want[i]) fprintf(stderr, "  %s[%d] = %u, want %u\n", k, i, got[i], want[i]);
    CHECK(!memcmp(got, want, (size_t)n * 4));
    mh_emu_free(dev, out, &e);
}

static void mbarriers(void)
{
    static const uint32_t want[17] = {2, 0, 0, 1, 1, 0, 2, 0, 0, 1, 1, 0, 1, 0, 1, 0, 0xfeed};
    expect_words(&tma_ptx, "mbar_forms", want, 17);
}

/* ---- clusters ---- */

static void clusters(void)
{
    mh_error e;
    /* the special registers: a 4 x 4 grid in clusters of 2 x 2, then without clusters */
    uint64_t out = emu_upload(dev, NULL, 16 * 16 * 4);
    mh_emu_arg args[] = {ARG(out)};
    uint32_t g44[3] = {4, 4, 1}, c22[3] = {2, 2, 1}, none[3] = {0, 0, 0};
    for (int with = 1; with >= 0; with--) {
        CHECK(run_grid(&cl_ptx, "cluster_regs", g44, 32, with ? c22 : none, 0, args, 1, &e) == 0);
        uint32_t got[16][16];
        CHECK(mh_emu_read(dev, out, got, sizeof got, &e) == 0);
        int bad = 0;
        for (uint32_t y = 0; y < 4; y++)
            for (uint32_t x = 0; x < 4; x++) {
                uint32_t cx = with ? 2 : 1, cy = with ? 2 : 1, *o = got[y * 4 + x];
                uint32_t want[16] = {x / cx, y / cy, 0, 4 / cx, 4 / cy, 1, x % cx, y % cy, 0, cx, cy, 1,
                                     x % cx + cx * (y % cy), cx * cy, (uint32_t)with, 0xc0de};
                bad += memcmp(o, want, sizeof want) != 0;
            }
        if (bad) fprintf(stderr, "  cluster_regs (clusters %d): %d blocks wrong\n", with, bad);
        CHECK(bad == 0);
    }
    uint32_t g3[3] = {3, 1, 1}, c2[3] = {2, 1, 1};
    CHECK(run_grid(&cl_ptx, "cluster_regs", g3, 32, c2, 0, args, 1, &e) == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "cluster_regs: grid 3x1x1 is not a whole number of 2x1x1 clusters");
    uint32_t c17[3] = {17, 1, 1}, g17[3] = {17, 1, 1};
    CHECK(run_grid(&cl_ptx, "cluster_regs", g17, 32, c17, 0, args, 1, &e) == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "a cluster of 17x1x1 = 17 blocks (sm_90 takes at most 16)");
    mh_emu_free(dev, out, &e);

    /* distributed shared memory: 64 clusters of 4 (.reqnctapercluster 4), more than 4 SMs hold at
     * once, so whole clusters are dispatched into freed slots */
    enum { NB = 256 };
    out = emu_upload(dev, NULL, NB * 256 * 4);
    mh_emu_arg dargs[] = {ARG(out)};
    uint32_t gd[3] = {NB, 1, 1};
    CHECK(run_grid(&cl_ptx, "dsmem", gd, 64, none, 0, dargs, 1, &e) == 0);
    uint32_t *got = malloc(NB * 256 * 4);
    CHECK(mh_emu_read(dev, out, got, NB * 256 * 4, &e) == 0);
    int bad = 0;
    for (uint32_t b = 0; b < NB; b++) {
        uint32_t rank = b % 4, right = (rank + 1) % 4, left = (rank + 3) % 4, *o = got + b * 256;
        for (uint32_t t = 0; t < 64; t++)
            bad += o[t] != right * 1000 + t || o[64 + t] != left * 1000 + t || o[128 + t] != left + 100;
        bad += o[192] != 4 * 64 || o[193] != left;
    }
    if (bad) fprintf(stderr, "  dsmem: %d values wrong\n", bad);
    CHECK(bad == 0);
    free(got);
    CHECK(run_grid(&cl_ptx, "dsmem", gd, 64, c2, 0, dargs, 1, &e) == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "dsmem declares .reqnctapercluster 4, 1, 1; the launch asks for clusters of 2x1x1");
    mh_emu_free(dev, out, &e);

    /* TMA multicast into both blocks of a cluster of 2, then cp.async.bulk from rank 1 into rank 0 */
    {
        float t2[8][32];
        for (int i = 0; i < 256; i++) ((float *)t2)[i] = (float)i + 0.5f;
        uint64_t a = emu_upload(dev, t2, sizeof t2);
        uint64_t d[] = {32, 8};
        uint32_t box[] = {32, 8};
        mh_tensor_map_spec sp = spec(MH_TMAP_FLOAT32, 4, 2, a, sizeof t2, d, box);
        sp.swizzle = MH_TMAP_SWIZZLE_128B;
        unsigned char map[MH_TMAP_BYTES], want[1024];
        CHECK(mh_emu_tensor_map(&sp, map, &e) == 0);
        uint64_t bytes;
        int c[5] = {0, 0};
        ref_load(&sp, (unsigned char *)t2, c, 0, want, &bytes);
        unsigned b = 1024;
        uint64_t o = emu_upload(dev, NULL, 2 * 1024 + 256);
        mh_emu_arg margs[] = {{map, MH_TMAP_BYTES}, ARG(b), ARG(o)};
        uint32_t g2[3] = {2, 1, 1};
        CHECK(run_grid(&cl_ptx, "multicast", g2, 64, none, 1024, margs, 3, &e) == 0);
        unsigned char gm[2 * 1024 + 256];
        CHECK(mh_emu_read(dev, o, gm, sizeof gm, &e) == 0);
        CHECK(!memcmp(gm, want, 1024) && !memcmp(gm + 1024, want, 1024) && !memcmp(gm + 2048, want, 256));
        mh_emu_free(dev, a, &e);
        mh_emu_free(dev, o, &e);
    }
    /* elect.sync */
    {
        uint64_t o = emu_upload(dev, NULL, 64 * 4);
        mh_emu_arg eargs[] = {ARG(o)};
        uint32_t g1[3] = {1, 1, 1};
        CHECK(run_grid(&cl_ptx, "elect", g1, 64, none, 0, eargs, 1, &e) == 0);
        uint32_t ge[64];
        CHECK(mh_emu_read(dev, o, ge, sizeof ge, &e) == 0);
        int wrong = 0;
        for (int t = 0; t < 64; t++) wrong += ge[t] != (t % 2 == 0 ? 0xffffu : t % 32 == 1 ? 3u : 2u);
        CHECK(wrong == 0);
        mh_emu_free(dev, o, &e);
    }
}

/* ---- the forms of tests/ptx/hopper_forms.cu ---- */

static void mbar_more(void)
{
    mh_error e;
    /* relaxed arrives (.cta, .cluster, a count, on a shared::cluster address), waits by state and by
     * parity, with and without a hint (the comments in hopper_forms.cu) */
    static const uint32_t want[17] = {1, 0, 1, 0, 0, 0, 1, 1, 1, 0, 1, 0, 1, 1, 0, 1, 0xfeed};
    expect_words(&forms_ptx, "mbar_relaxed", want, 17);
    /* a warp waiting by its state token (try_wait with a hint) sees what the other warp wrote before
     * its arrive */
    uint64_t out = emu_upload(dev, NULL, 64 * 4);
    uint32_t got[3];
    unsigned v = 77, spins = 3000;
    mh_emu_arg wargs[] = {ARG(v), ARG(spins), ARG(out)};
    CHECK(run(&forms_ptx, "mbar_state_wait", 64, 0, wargs, 3, &e) == 0);
    CHECK(mh_emu_read(dev, out, got, 3 * 4, &e) == 0);
    CHECK(got[0] == 77 && got[1] == 78 && got[2] == 0);
    mh_emu_free(dev, out, &e);
}

static void cluster_more(void)
{
    mh_error e;
    uint32_t none[3] = {0, 0, 0};
    /* barrier.cluster.arrive.relaxed + wait, twice: rank 0 reads rank 1's late store */
    {
        uint64_t out = emu_upload(dev, NULL, 4 * 4);
        unsigned spins = 2000;
        mh_emu_arg args[] = {ARG(spins), ARG(out)};
        uint32_t g2[3] = {2, 1, 1};
        CHECK(run_grid(&forms_ptx, "cluster_relaxed", g2, 64, none, 0, args, 2, &e) == 0);
        uint32_t got[4];
        CHECK(mh_emu_read(dev, out, got, sizeof got, &e) == 0);
        CHECK(got[0] == 101 && got[1] == 201 && got[2] == 100 && got[3] == 200);
        mh_emu_free(dev, out, &e);
    }
    /* atom.shared::cluster, every operation, and st/atom through generic addresses: 2 clusters of 4 */
    {
        enum { NB = 8 };
        uint32_t init[256];
        unsigned seed = 99;
        for (int i = 0; i < 256; i++) {
            seed = seed * 1103515245u + 12345u;
            init[i] = seed ^ (seed >> 13) * 2654435761u;
            if (i % 16 == 5 || i % 16 == 6) init[i] %= 80; /* inc/dec: both sides of the bound */
            if (i % 16 == 12) init[i] = mh_f32_bits((float)i + 0.5f); /* add.f32: ordinary floats */
        }
        uint32_t a32[NB][64], g[NB][64], old[NB][64], gold[NB][64];
        uint64_t a64[NB][64], old64[NB][64];
        for (int b = 0; b < NB; b++)
            for (int t = 0; t < 64; t++) {
                int r = b % 4;
                a32[b][t] = init[(r * 64 + t) % 256];
                a64[b][t] = (uint64_t)init[(r * 64 + t + 1) % 256] << 32 | init[(r * 64 + t + 2) % 256];
                g[b][t] = (uint32_t)(1000 * r + t);
            }
        memset(old, 0, sizeof old), memset(old64, 0, sizeof old64), memset(gold, 0, sizeof gold);
        for (int b = 0; b < NB; b++)
            for (int t = 0; t < 64; t++) {
                int r = b % 4, rb = b - r + (r + 1) % 4, lb = b - r + (r + 3) % 4; /* the right / left block */
                uint32_t v = init[(t * 7 + r) % 256], *p = &a32[rb][t], o = *p;
                uint64_t v64 = (uint64_t)v << 29 | (uint64_t)t, *q = &a64[rb][t], o64 = *q;
                switch (t % 16) {
                case 0: *p = o + v; break;
                case 1: *p = o < v ? o : v; break;
                case 2: *p = o > v ? o : v; break;
                case 3: *p = (int32_t)o < (int32_t)v ? o : v; break;
                case 4: *p = (int32_t)o > (int32_t)v ? o : v; break;
                case 5: *p = o >= v % 64 ? 0 : o + 1; break;
                case 6: *p = o == 0 || o > v % 64 ? v % 64 : o - 1; break;
                case 7: *p = o & v; break;
                case 8: *p = o | v; break;
                case 9: *p = o ^ v; break;
                case 10: *p = v; break;
                case 11: if (o == (r % 2 ? 7u : init[((rb % 4) * 64 + t) % 256])) *p = v; break;
                case 12: *p = mh_f32_bits(mh_f32_from_bits(o) + (float)(v % 1000) * 0.25f); break;
                case 13: *q = o64 + v64; break;
                case 14: *q = (int64_t)o64 > (int64_t)(v64 << 30) ? o64 : v64 << 30; break;
                default: if (o64 == a64[rb][t]) *q = v64; break; /* compared with what is there: swaps */
                }
                if (t % 16 < 13) old[b][t] = o;
                else old64[b][t] = o64;
                if (t % 2 == 0) g[lb][t] = (uint32_t)(r * 10 + t * 3);
                else gold[b][t] = g[lb][t], g[lb][t] += v;
            }
        uint64_t din = emu_upload(dev, init, sizeof init), out = emu_upload(dev, NULL, NB * 256 * 4),
                 out2 = emu_upload(dev, NULL, NB * 128 * 4);
        mh_emu_arg args[] = {ARG(din), ARG(out), ARG(out2)};
        uint32_t gd[3] = {NB, 1, 1};
        CHECK(run_grid(&forms_ptx, "dsmem_atoms", gd, 64, none, 0, args, 3, &e) == 0);
        uint32_t got[NB][256], got2[NB][128];
        CHECK(mh_emu_read(dev, out, got, sizeof got, &e) == 0 && mh_emu_read(dev, out2, got2, sizeof got2, &e) == 0);
        int bad = 0;
        for (int b = 0; b < NB; b++)
            for (int t = 0; t < 64; t++) {
                uint32_t w[6] = {old[b][t], (uint32_t)old64[b][t], a32[b][t], (uint32_t)a64[b][t], g[b][t],
                                 gold[b][t] + (uint32_t)(old64[b][t] >> 32)};
                uint32_t have[6] = {got[b][t], got[b][64 + t], got[b][128 + t], got[b][192 + t], got2[b][t], got2[b][64 + t]};
                for (int i = 0; i < 6; i++)
                    if (have[i] != w[i] && bad++ < 6)
                        fprintf(stderr, "  dsmem_atoms: block %d thread %d (op %d) value %d: %#x, want %#x\n", b, t, t % 16,
                                i, have[i], w[i]);
            }
        CHECK(bad == 0);
        mh_emu_free(dev, din, &e), mh_emu_free(dev, out, &e), mh_emu_free(dev, out2, &e);
    }
    /* .maxclusterrank 4: clusters of up to 4 blocks, or none; 8 refused */
    {
        uint64_t out = emu_upload(dev, NULL, 8 * 4);
        mh_emu_arg args[] = {ARG(out)};
        uint32_t g8[3] = {8, 1, 1}, c4[3] = {4, 1, 1}, c8[3] = {8, 1, 1};
        CHECK(run_grid(&forms_ptx, "max_rank", g8, 64, c4, 0, args, 1, &e) == 0);
        uint32_t got[8];
        CHECK(mh_emu_read(dev, out, got, sizeof got, &e) == 0);
        int bad = 0;
        for (uint32_t b = 0; b < 8; b++) bad += got[b] != 400 + b % 4;
        CHECK(bad == 0);
        CHECK(run_grid(&forms_ptx, "max_rank", g8, 64, none, 0, args, 1, &e) == 0);
        CHECK(mh_emu_read(dev, out, got, sizeof got, &e) == 0 && got[0] == 100 && got[7] == 100);
        CHECK(run_grid(&forms_ptx, "max_rank", g8, 64, c8, 0, args, 1, &e) == MH_E_BAD_ARGUMENT);
        CHECK_CONTAINS(e.message, "max_rank declares .maxclusterrank 4; clusters of 8x1x1 have 8 blocks");
        mh_emu_free(dev, out, &e);
    }
}

/* cp.reduce.async.bulk forms: op (the kernel's switch), element bytes, what it computes */
enum { R_ADD, R_ADDF, R_ADDD, R_ADDH, R_ADDB, R_MIN, R_MINS, R_MINH, R_MINB, R_MAX, R_MAXS, R_MAXH, R_MAXB, R_INC, R_DEC,
       R_AND, R_OR, R_XOR };
typedef struct { int op, size, kind; } bulk_red;

static uint64_t bulk_red_ref(const bulk_red *f, uint64_t d, uint64_t s)
{
    int bits = f->size * 8;
    uint64_t m = bits == 64 ? ~0ull : (1ull << bits) - 1;
    int64_t sd = bits == 64 ? (int64_t)d : (int64_t)(int32_t)(uint32_t)d, ss = bits == 64 ? (int64_t)s : (int64_t)(int32_t)(uint32_t)s;
    double hd = f->kind == R_ADDH || f->kind == R_MINH || f->kind == R_MAXH ? mh_half_to_float((uint16_t)d) : mh_bf16_to_float((uint16_t)d);
    double hs = f->kind == R_ADDH || f->kind == R_MINH || f->kind == R_MAXH ? mh_half_to_float((uint16_t)s) : mh_bf16_to_float((uint16_t)s);
    switch (f->kind) {
    case R_ADD: return (d + s) & m;
    case R_ADDF: return mh_f32_bits(mh_f32_from_bits((uint32_t)d) + mh_f32_from_bits((uint32_t)s));
    case R_ADDD: return mh_f64_bits(mh_f64_from_bits(d) + mh_f64_from_bits(s));
    case R_ADDH: return mh_double_to_half(hd + hs);
    case R_ADDB: return mh_double_to_bf16(hd + hs);
    case R_MIN: return d < s ? d : s;
    case R_MINS: return sd < ss ? d : s;
    case R_MINH: case R_MINB: return hd < hs ? d : s;
    case R_MAX: return d > s ? d : s;
    case R_MAXS: return sd > ss ? d : s;
    case R_MAXH: case R_MAXB: return hd > hs ? d : s;
    case R_INC: return d >= s ? 0 : d + 1;
    case R_DEC: return d == 0 || d > s ? s : d - 1;
    case R_AND: return d & s;
    case R_OR: return d | s;
    default: return d ^ s;
    }
}

static void bulk_reductions(void)
{
    static const bulk_red forms[] = {
        {0, 4, R_ADD},   {1, 4, R_ADD},   {2, 8, R_ADD},    {3, 4, R_ADDF},   {4, 8, R_ADDD},  {5, 2, R_ADDH},
        {6, 2, R_ADDB},  {7, 4, R_MIN},   {8, 4, R_MINS},   {9, 8, R_MIN},    {10, 8, R_MINS}, {11, 2, R_MINH},
        {12, 2, R_MINB}, {13, 4, R_MAX},  {14, 4, R_MAXS},  {15, 8, R_MAX},   {16, 8, R_MAXS}, {17, 2, R_MAXH},
        {18, 2, R_MAXB}, {19, 4, R_INC},  {20, 4, R_DEC},   {21, 4, R_AND},   {22, 8, R_AND},  {23, 4, R_OR},
        {24, 8, R_OR},   {25, 4, R_XOR},  {26, 8, R_XOR},
        {100, 4, R_ADD}, {101, 4, R_ADD}, {102, 8, R_ADD},  {103, 4, R_MIN},  {104, 4, R_MINS}, {105, 4, R_MAX},
        {106, 4, R_MAXS}, {107, 4, R_INC}, {108, 4, R_DEC}, {109, 4, R_AND},  {110, 4, R_OR},   {111, 4, R_XOR},
    };
    enum { BYTES = 256 };
    mh_error e;
    uint64_t ds = emu_upload(dev, NULL, BYTES), dd = emu_upload(dev, NULL, BYTES);
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        const bulk_red *f = &forms[i];
        unsigned char src[BYTES], dst[BYTES], got[BYTES];
        unsigned seed = 3u + (unsigned)i * 77u;
        int n = BYTES / f->size;
        for (int j = 0; j < n; j++) {
            uint64_t x[2];
            for (int h = 0; h < 2; h++) {
                seed = seed * 1103515245u + 12345u;
                uint64_t r = (uint64_t)seed << 32 | (seed * 2654435761u);
                float fl = (float)((int)(seed >> 8) % 20000 - 10000) / 64.0f + (h ? 0.125f : -0.0625f);
                switch (f->kind) {
                case R_ADDF: x[h] = mh_f32_bits(fl); break;
                case R_ADDD: x[h] = mh_f64_bits((double)fl / 3.0); break;
                case R_ADDH: case R_MINH: case R_MAXH: x[h] = mh_float_to_half(fl / 8); break;
                case R_ADDB: case R_MINB: case R_MAXB: x[h] = mh_float_to_bf16(fl); break;
                case R_INC: case R_DEC: x[h] = r % 40; break; /* both sides of the bound, and 0 */
                default: x[h] = j % 5 == 0 ? r >> 40 : r; /* small and large, both signs */
                }
            }
            memcpy(src + j * f->size, &x[0], (size_t)f->size);
            memcpy(dst + j * f->size, &x[1], (size_t)f->size);
        }
        CHECK(mh_emu_write(dev, ds, src, BYTES, &e) == 0 && mh_emu_write(dev, dd, dst, BYTES, &e) == 0);
        int op = f->op;
        unsigned bytes = BYTES;
        mh_emu_arg args[] = {ARG(ds), ARG(dd), ARG(op), ARG(bytes)};
        int rc = run(&forms_ptx, "bulk_reduce", 64, 2 * BYTES, args, 4, &e);
        if (rc) fprintf(stderr, "  bulk_reduce op %d: %s\n", op, e.message);
        CHECK(rc == 0);
        CHECK(mh_emu_read(dev, dd, got, BYTES, &e) == 0);
        int bad = 0;
        for (int j = 0; j < n && !rc; j++) {
            uint64_t d = 0, s = 0, g = 0;
            memcpy(&d, dst + j * f->size, (size_t)f->size);
            memcpy(&s, src + j * f->size, (size_t)f->size);
            memcpy(&g, got + j * f->size, (size_t)f->size);
            uint64_t w = bulk_red_ref(f, d, s);
            if (g != w && bad++ < 2)
                fprintf(stderr, "  bulk_reduce op %d: element %d: %#llx, want %#llx (dst %#llx, src %#llx)\n", op, j,
                        (unsigned long long)g, (unsigned long long)w, (unsigned long long)d, (unsigned long long)s);
        }
        CHECK(bad == 0);
    }
    mh_emu_free(dev, ds, &e), mh_emu_free(dev, dd, &e);
}

/* ---- the warp-specialised GEMM (tests/ptx/hopper_gemm.cu) ---- */

static uint16_t bf16(int v) { return mh_float_to_bf16((float)v); }

/* C = A B^T at M x N x K on device d (made for it when sms is not 0: that many SMs, strict or not),
 * checked element by element against the exact integer product. */
static void gemm_at(int M, int N, int K, uint32_t sms, int strict)
{
    enum { SMEM = 3 * (128 * 64 * 2 + 64 * 64 * 2) + 128 * 64 * 4 };
    mh_error e;
    mh_emu *keep = dev;
    if (sms) {
        mh_emu_opts o = {.num_sms = sms, .strict = strict};
        dev = mh_emu_create(&o, &e);
        CHECK(dev != NULL);
        if (!dev) { dev = keep; return; }
    }
    uint16_t *A = malloc((size_t)M * K * 2), *B = malloc((size_t)N * K * 2);
    float *C = malloc((size_t)M * N * 4), *ref = malloc((size_t)M * N * 4);
    int *ai = malloc((size_t)M * K * sizeof(int)), *bi = malloc((size_t)N * K * sizeof(int));
    unsigned seed = 7;
    for (int i = 0; i < M * K; i++) seed = seed * 1103515245u + 12345u, ai[i] = (int)(seed >> 16) % 9 - 4, A[i] = bf16(ai[i]);
    for (int i = 0; i < N * K; i++) seed = seed * 1103515245u + 12345u, bi[i] = (int)(seed >> 16) % 7 - 3, B[i] = bf16(bi[i]);
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            int acc = 0;
            for (int k = 0; k < K; k++) acc += ai[m * K + k] * bi[n * K + k];
            ref[m * N + n] = (float)acc;
        }
    uint64_t da = emu_upload(dev, A, (size_t)M * K * 2), db = emu_upload(dev, B, (size_t)N * K * 2),
             dc = emu_upload(dev, NULL, (size_t)M * N * 4);
    uint64_t dA[] = {K, M}, dB[] = {K, N}, dC[] = {N, M};
    uint32_t bA[] = {64, 128}, bB[] = {64, 32}, bC[] = {64, 128};
    mh_tensor_map_spec sa = spec(MH_TMAP_BFLOAT16, 2, 2, da, M * K * 2, dA, bA), sb = spec(MH_TMAP_BFLOAT16, 2, 2, db, N * K * 2, dB, bB),
                       sc = spec(MH_TMAP_FLOAT32, 4, 2, dc, M * N * 4, dC, bC);
    sa.swizzle = sb.swizzle = MH_TMAP_SWIZZLE_128B;
    unsigned char ma[MH_TMAP_BYTES], mb[MH_TMAP_BYTES], mc[MH_TMAP_BYTES];
    CHECK(mh_emu_tensor_map(&sa, ma, &e) == 0 && mh_emu_tensor_map(&sb, mb, &e) == 0 && mh_emu_tensor_map(&sc, mc, &e) == 0);
    int k = K;
    mh_emu_arg args[] = {{ma, MH_TMAP_BYTES}, {mb, MH_TMAP_BYTES}, {mc, MH_TMAP_BYTES}, ARG(k)};
    uint32_t grid[3] = {M / 128, N / 64, 1}, none[3] = {0, 0, 0};
    CHECK(run_grid(&gemm_ptx, "ws_gemm", grid, 384, none, SMEM, args, 4, &e) == 0);
    CHECK(mh_emu_read(dev, dc, C, M * N * 4, &e) == 0);
    int bad = 0;
    for (int i = 0; i < M * N; i++) bad += C[i] != ref[i];
    if (bad)
        fprintf(stderr, "  ws_gemm %dx%dx%d on %u SMs%s: %d of %d values differ (C[0] %g, want %g)\n", M, N, K, sms,
                strict ? " (strict)" : "", bad, M * N, C[0], ref[0]);
    CHECK(bad == 0);
    mh_emu_free(dev, da, &e);
    mh_emu_free(dev, db, &e);
    mh_emu_free(dev, dc, &e);
    free(A), free(B), free(C), free(ref), free(ai), free(bi);
    if (sms) mh_emu_destroy(dev), dev = keep;
}

/* The GEMM at 256 x 128 x 256 on the test's device; at 768^3 on 2 SMs (3 blocks a cluster's pair
 * of SMs runs in turn), where a consumer warp lagging its warpgroup found its stage refilled when
 * one thread released it for all four warps (hopper_gemm.cu before: 12327 of 589824 values wrong,
 * and in strict mode the async copy's write over the lagging warp's wgmma read). */
static void gemm(void)
{
    gemm_at(256, 128, 256, 0, 0);
    gemm_at(768, 768, 768, 2, 0);
    gemm_at(768, 768, 768, 2, 1);
}

/* The GEMM with everything together (tests/ptx/hopper_gemm_st.cu): TMA into a 4-stage ring with
 * multicast, setmaxnreg, wgmma, a stmatrix epilogue into a bf16 tile stored by TMA. */
static void gemm_st(void)
{
    enum { M = 256, N = 128, K = 512, SMEM = 4 * (128 * 64 * 2 + 64 * 64 * 2) + 128 * 64 * 2 };
    mh_error e;
    uint16_t *A = malloc(M * K * 2), *B = malloc(N * K * 2), *C = malloc(M * N * 2), *ref = malloc(M * N * 2);
    int *ai = malloc(M * K * sizeof(int)), *bi = malloc(N * K * sizeof(int));
    unsigned seed = 41;
    for (int i = 0; i < M * K; i++) seed = seed * 1103515245u + 12345u, ai[i] = (int)(seed >> 16) % 9 - 4, A[i] = bf16(ai[i]);
    for (int i = 0; i < N * K; i++) seed = seed * 1103515245u + 12345u, bi[i] = (int)(seed >> 16) % 7 - 3, B[i] = bf16(bi[i]);
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            int acc = 0;
            for (int k = 0; k < K; k++) acc += ai[m * K + k] * bi[n * K + k];
            ref[m * N + n] = bf16(acc); /* exact in f32, rounded once to bf16 */
        }
    uint64_t da = emu_upload(dev, A, M * K * 2), db = emu_upload(dev, B, N * K * 2), dc = emu_upload(dev, NULL, M * N * 2);
    uint64_t dA[] = {K, M}, dB[] = {K, N}, dC[] = {N, M};
    uint32_t bA[] = {64, 128}, bB[] = {64, 32}, bC[] = {64, 128};
    mh_tensor_map_spec sa = spec(MH_TMAP_BFLOAT16, 2, 2, da, M * K * 2, dA, bA), sb = spec(MH_TMAP_BFLOAT16, 2, 2, db, N * K * 2, dB, bB),
                       sc = spec(MH_TMAP_BFLOAT16, 2, 2, dc, M * N * 2, dC, bC);
    sa.swizzle = sb.swizzle = MH_TMAP_SWIZZLE_128B;
    unsigned char ma[MH_TMAP_BYTES], mb[MH_TMAP_BYTES], mc[MH_TMAP_BYTES];
    CHECK(mh_emu_tensor_map(&sa, ma, &e) == 0 && mh_emu_tensor_map(&sb, mb, &e) == 0 && mh_emu_tensor_map(&sc, mc, &e) == 0);
    int k = K;
    mh_emu_arg args[] = {{ma, MH_TMAP_BYTES}, {mb, MH_TMAP_BYTES}, {mc, MH_TMAP_BYTES}, ARG(k)};
    uint32_t grid[3] = {M / 128, N / 64, 1}, none[3] = {0, 0, 0};
    CHECK(run_grid(&gemm_st_ptx, "ws_gemm_st", grid, 384, none, SMEM, args, 4, &e) == 0);
    CHECK(mh_emu_read(dev, dc, C, M * N * 2, &e) == 0);
    int bad = 0;
    for (int i = 0; i < M * N; i++) bad += C[i] != ref[i];
    if (bad)
        fprintf(stderr, "  ws_gemm_st: %d of %d values differ (C[1] %g, want %g)\n", bad, M * N, mh_bf16_to_float(C[1]),
                mh_bf16_to_float(ref[1]));
    CHECK(bad == 0);
    mh_emu_free(dev, da, &e), mh_emu_free(dev, db, &e), mh_emu_free(dev, dc, &e);
    free(A), free(B), free(C), free(ref), free(ai), free(bi);
}

/* ---- the dynamic shared array beside a static variable (tests/ptx/hopper_dynsmem.cu) ---- */

/* A and B (64 x 64 bf16) by TMA with the 128B swizzle into `extern __shared__ __align__(align)`, an
 * mbarrier beside it, wgmma on them (base offset 0): D = A * B^T.  The array starts after the static
 * rounded up to its alignment (sm_90: 0x400 + that, the same modulo 1024, docs/DESIGN.md); with 128
 * it is not at a 1024-byte boundary and wgmma must read the swizzle by address bits as TMA wrote it. */
static void dyn_smem_tma_wgmma(const mh_ptx_module *m, uint32_t align)
{
    enum { T = 64 };
    mh_error e;
    uint16_t A[T * T], B[T * T];
    int ai[T * T], bi[T * T];
    float D[T * T];
    unsigned seed = 97 + align;
    for (int i = 0; i < T * T; i++) seed = seed * 1103515245u + 12345u, ai[i] = (int)(seed >> 16) % 9 - 4, A[i] = bf16(ai[i]);
    for (int i = 0; i < T * T; i++) seed = seed * 1103515245u + 12345u, bi[i] = (int)(seed >> 16) % 7 - 3, B[i] = bf16(bi[i]);
    uint64_t da = emu_upload(dev, A, sizeof A), db = emu_upload(dev, B, sizeof B), dd = emu_upload(dev, NULL, sizeof D),
             doffs = emu_upload(dev, NULL, 8);
    uint64_t dims[] = {T, T};
    uint32_t box[] = {T, T};
    mh_tensor_map_spec sa = spec(MH_TMAP_BFLOAT16, 2, 2, da, sizeof A, dims, box), sb = spec(MH_TMAP_BFLOAT16, 2, 2, db, sizeof B, dims, box);
    sa.swizzle = sb.swizzle = MH_TMAP_SWIZZLE_128B;
    unsigned char ma[MH_TMAP_BYTES], mb[MH_TMAP_BYTES];
    CHECK(mh_emu_tensor_map(&sa, ma, &e) == 0 && mh_emu_tensor_map(&sb, mb, &e) == 0);
    mh_emu_arg args[] = {{ma, MH_TMAP_BYTES}, {mb, MH_TMAP_BYTES}, ARG(dd), ARG(doffs)};
    CHECK(run(m, "dyn_tma_wgmma", 128, 2 * T * T * 2, args, 4, &e) == 0);
    uint32_t offs[2];
    CHECK(mh_emu_read(dev, dd, D, sizeof D, &e) == 0 && mh_emu_read(dev, doffs, offs, sizeof offs, &e) == 0);
    CHECK(offs[1] == 0 && offs[0] == align); /* the static at 0, the array at its alignment */
    int bad = 0;
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++) {
            int want = 0;
            for (int k = 0; k < T; k++) want += ai[i * T + k] * bi[j * T + k];
            bad += D[i * T + j] != (float)want;
        }
    if (bad) fprintf(stderr, "  dyn_tma_wgmma (__align__(%u)): %d of %d values differ from the product\n", align, bad, T * T);
    CHECK(bad == 0);
    mh_emu_free(dev, da, &e), mh_emu_free(dev, db, &e), mh_emu_free(dev, dd, &e), mh_emu_free(dev, doffs, &e);
}

/* ---- a cluster peer that has exited (tests/ptx/hopper_exited.cu) ---- */

/* Rank 0 arrives on, stores into and reads the shared memory of rank 1 after rank 1 exited without
 * a cluster barrier: by default each access lands with a warning naming its line (once per line,
 * in mh_emu_stats.warnings); in strict mode the first is a kernel_fault. */
static void exited_peer(void)
{
    mh_error e;
    for (int strict = 0; strict <= 1; strict++) {
        mh_emu_opts o = {.num_sms = 4, .strict = strict};
        mh_emu *d = mh_emu_create(&o, &e);
        CHECK(d != NULL);
        if (!d) return;
        uint64_t flag = emu_upload(d, NULL, 4), out = emu_upload(d, NULL, 8);
        mh_emu_arg args[] = {ARG(flag), ARG(out)};
        mh_emu_launch l = {.grid = {2, 1, 1}, .block = {32, 1, 1}, .args = args, .nargs = 2, .timeout_s = 60};
        mh_emu_stats st;
        int rc = mh_emu_run_ex(d, &exited_ptx, "exited_peer", &l, NULL, &st, &e) ? (int)e.code : 0;
        uint32_t got[2] = {0, 0};
        CHECK(mh_emu_read(d, out, got, sizeof got, &e) == 0);
        if (strict) {
            CHECK(rc == MH_E_KERNEL_FAULT);
            CHECK_CONTAINS(e.message, "hopper_exited.ptx:132): exited_peer: shared::cluster write at 0x"); /* the arrive (.cu line first) */
            CHECK_CONTAINS(e.message, "block rank 1 of the cluster has exited");
            CHECK(got[1] == 0);
        } else {
            if (rc) fprintf(stderr, "  exited_peer: %s\n", e.message);
            CHECK(rc == 0 && got[0] == 42 && got[1] == 1); /* the store landed and reads back */
            CHECK(st.warnings != NULL);
            if (st.warnings) {
                CHECK_CONTAINS(st.warnings, "hopper_exited.ptx:132): exited_peer: shared::cluster write at 0x"); /* arrive */
                CHECK_CONTAINS(st.warnings, "hopper_exited.ptx:137): exited_peer: shared::cluster write at 0x");
                CHECK_CONTAINS(st.warnings, "hopper_exited.ptx:141): exited_peer: shared::cluster read at 0x");
                CHECK_CONTAINS(st.warnings, "block rank 1 of the cluster has exited");
                CHECK_CONTAINS(st.warnings, "hopper_exited.cu:37 (PTX tests/ptx/hopper_exited.ptx:137)"); /* as faults name it */
                int lines = 0;
                for (const char *p = st.warnings; *p; p++) lines += *p == '\n';
                CHECK(lines == 3 && st.warnings_len == strlen(st.warnings));
            }
        }
        free(st.output);
        free(st.warnings);
        mh_emu_destroy(d);
    }
}

/* ---- what emu refuses by name ---- */

static void refusals(void)
{
    static const char src[] =
        ".version 8.0\n.target sm_90a\n.address_size 64\n"
        ".visible .entry k(.param .align 64 .b8 m[128], .param .u64 p)\n{\n"
        ".reg .b32 %r<4>;\n.reg .b64 %rd<3>;\n.reg .b16 %h<2>;\n"
        "mov.b64 %rd1, m;\n"
        "cp.async.bulk.tensor.2d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r1], {%h1};\n"
        "ret;\n}\n";
    mh_ptx_module m;
    mh_error e;
    CHECK(mh_ptx_parse(&m, src, sizeof src - 1, "refuse.ptx", &e) == 0);
    CHECK(mh_emu_check_module(&m, &e) == MH_E_PTX_UNSUPPORTED);
    CHECK_CONTAINS(e.message, "refuse.ptx:10: instruction 'cp.async.bulk.tensor.2d.shared::cluster.global.im2col");
    mh_ptx_free(&m);
}

/* tensormap.replace and tensormap.cp_fenceproxy (CUTLASS's grouped GEMMs): a map over a 16x16 f32
 * array copied to shared memory, re-pointed at an 8x4 array (address, dims, stride), copied to global
 * memory and used by a TMA load of an 8x8 box: rows 0-3 come from the new array at its stride, rows
 * 4-7 are outside its dims (zeros); then .global edits of a map in global memory (box, element
 * stride), and the forms emu does not run (.rank) or ptxas refuses. */
static void tensormap_edits(void)
{
    static const char src[] =
        ".version 8.3\n.target sm_90a\n.address_size 64\n"
        ".visible .entry edit(.param .u64 ptmpl, .param .u64 pws, .param .u64 paddr, .param .u64 pout)\n{\n"
        ".reg .b64 %rd<10>;\n.reg .b32 %r<10>;\n.reg .f32 %f<3>;\n.reg .pred %p<3>;\n"
        ".shared .align 128 .b8 smap[128];\n.shared .align 128 .b8 tile[256];\n.shared .align 8 .b64 mbar;\n"
        "ld.param.u64 %rd1, [ptmpl];\nld.param.u64 %rd2, [pws];\nld.param.u64 %rd3, [paddr];\nld.param.u64 %rd4, [pout];\n"
        "mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 16;\nmul.wide.u32 %rd5, %r1, 8;\nadd.s64 %rd6, %rd1, %rd5;\n"
        "mov.u32 %r2, smap;\ncvt.u32.u64 %r3, %rd5;\nadd.s32 %r4, %r2, %r3;\n"
        "@%p1 ld.global.u64 %rd7, [%rd6];\n@%p1 st.shared.u64 [%r4], %rd7;\nbar.sync 0;\n"
        "tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%r2], %rd3;\n"
        "tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%r2], 0, 8;\n"
        "tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%r2], 1, 4;\n"
        "tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%r2], 4, 99;\n" /* past the rank: not read */
        "tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%r2], 0, 32;\n"
        "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd2], [%r2], 128;\n"
        "fence.proxy.tensormap::generic.acquire.gpu [%rd2], 128;\n"
        "setp.eq.u32 %p1, %r1, 0;\nmov.u32 %r5, mbar;\nmov.u32 %r6, tile;\nmov.u32 %r7, 0;\n"
        "@%p1 mbarrier.init.shared::cta.b64 [%r5], 1;\nbar.sync 0;\n"
        "@%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r5], 256;\n"
        "@%p1 cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r6], [%rd2, {%r7, %r7}], [%r5];\n"
        "WAIT:\nmbarrier.try_wait.parity.shared::cta.b64 %p2, [%r5], 0;\n@!%p2 bra WAIT;\n"
        "add.s32 %r8, %r6, %r3;\nld.shared.v2.f32 {%f1, %f2}, [%r8];\nadd.s64 %rd8, %rd4, %rd5;\n"
        "st.global.v2.f32 [%rd8], {%f1, %f2};\nret;\n}\n"
        ".visible .entry gedit(.param .u64 pmap, .param .u64 paddr)\n{\n.reg .b64 %rd<4>;\n"
        "ld.param.u64 %rd1, [pmap];\nld.param.u64 %rd2, [paddr];\n"
        "tensormap.replace.tile.global_address.global.b1024.b64 [%rd1], %rd2;\n"
        "tensormap.replace.tile.box_dim.global.b1024.b32 [%rd1], 1, 2;\n"
        "tensormap.replace.tile.element_stride.global.b1024.b32 [%rd1], 0, 2;\nret;\n}\n";
    mh_ptx_module m;
    mh_error e;
    CHECK(mh_ptx_parse(&m, src, sizeof src - 1, "tm.ptx", &e) == 0);
    CHECK(mh_emu_check_module(&m, &e) == 0);
    if (e.code) fprintf(stderr, "  %s\n", e.message);
    float x[256], y[32], out[64];
    for (int i = 0; i < 256; i++) x[i] = (float)(1000 + i);
    for (int i = 0; i < 32; i++) y[i] = (float)i;
    uint64_t ax = 0, ay = 0, at = 0, aw = 0, ao = 0;
    CHECK(mh_emu_alloc(dev, sizeof x, &ax, &e) == 0 && mh_emu_alloc(dev, sizeof y, &ay, &e) == 0 &&
          mh_emu_alloc(dev, MH_TMAP_BYTES, &at, &e) == 0 && mh_emu_alloc(dev, MH_TMAP_BYTES, &aw, &e) == 0 &&
          mh_emu_alloc(dev, sizeof out, &ao, &e) == 0);
    mh_emu_write(dev, ax, x, sizeof x, &e);
    mh_emu_write(dev, ay, y, sizeof y, &e);
    mh_tensor_map_spec s = spec(MH_TMAP_FLOAT32, 4, 2, ax, sizeof x, (uint64_t[]){16, 16}, (uint32_t[]){8, 8});
    unsigned char map[MH_TMAP_BYTES];
    CHECK(mh_emu_tensor_map(&s, map, &e) == 0);
    mh_emu_write(dev, at, map, sizeof map, &e);
    mh_emu_arg args[] = {{&at, 8}, {&aw, 8}, {&ay, 8}, {&ao, 8}};
    CHECK(run(&m, "edit", 32, 0, args, 4, &e) == 0);
    mh_emu_read(dev, ao, out, sizeof out, &e);
    for (int r = 0; r < 8; r++)
        for (int col = 0; col < 8; col++) {
            float want = r < 4 ? y[r * 8 + col] : 0.0f;
            CHECK(out[r * 8 + col] == want);
            if (out[r * 8 + col] != want) fprintf(stderr, "  edited map: tile[%d][%d] = %g, want %g\n", r, col, out[r * 8 + col], want);
        }
    mh_tensor_map_spec back;
    unsigned char got[MH_TMAP_BYTES];
    mh_emu_arg gargs[] = {{&at, 8}, {&ay, 8}};
    CHECK(run(&m, "gedit", 1, 0, gargs, 2, &e) == 0);
    mh_emu_read(dev, at, got, sizeof got, &e);
    CHECK(mh_emu_tensor_map_decode(got, &back) == 0);
    CHECK(back.address == ay && back.box[1] == 2 && back.elem_strides[0] == 2 && back.dims[0] == 16 && back.box[0] == 8);
    mh_ptx_free(&m);
    /* a map edited out of range (a row stride of 36 bytes, not a multiple of 16): the copy says what is
     * wrong with it, not that edited maps are not read */
    {
        char bad_src[sizeof src];
        memcpy(bad_src, src, sizeof src);
        char *st = strstr(bad_src, "[%r2], 0, 32;");
        CHECK(st != NULL);
        if (st) memcpy(st, "[%r2], 0, 36;", 13);
        mh_emu_write(dev, at, map, sizeof map, &e);
        CHECK(mh_ptx_parse(&m, bad_src, sizeof bad_src - 1, "tm.ptx", &e) == 0);
        mh_error re;
        CHECK(run(&m, "edit", 32, 0, args, 4, &re) != 0);
        CHECK_CONTAINS(re.message, "the tensor map as it is now in memory (tensormap.replace, or a store) is not valid");
        CHECK_CONTAINS(re.message, "36");
        mh_ptx_free(&m);
    }
    /* the forms emu does not run are kept as text and refused by name; the ones ptxas refuses fail here */
    static const struct { const char *insn; int rc; const char *why; } bad[] = {
        {"tensormap.replace.tile.rank.global.b1024.b32 [%rd1], 1;", MH_E_PTX_UNSUPPORTED, "tensormap.replace.tile.rank"},
        {"tensormap.replace.tile.global_dim.global.b1024.b64 [%rd1], 0, %rd1;", MH_E_PTX_SYNTAX, "are .b32"},
        {"tensormap.replace.tile.global_stride.global.b1024.b64 [%rd1], 4, %rd1;", MH_E_PTX_SYNTAX, "0..3"},
        {"tensormap.replace.tile.global_address.global.b1024.b64 [%rd1], 0, %rd1;", MH_E_PTX_SYNTAX, "number of operands"},
        {"tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd1], [%rd1], 64;",
         MH_E_PTX_SYNTAX, "must be 128"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, ".version 8.3\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n"
                 ".reg .b64 %%rd<2>;\n%s\nret;\n}\n", bad[i].insn);
        mh_error be;
        int rc = mh_ptx_parse(&m, text, strlen(text), "tb.ptx", &be);
        if (!rc) {
            rc = mh_emu_check_module(&m, &be);
            mh_ptx_free(&m);
        }
        CHECK(rc == bad[i].rc);
        CHECK_CONTAINS(be.message, "tb.ptx:7");
        CHECK_CONTAINS(be.message, bad[i].why);
    }
}

int main(int argc, char **argv)
{
    const char *root = argc > 1 ? argv[1] : ".";
    if (parse_ptx_file(&tma_ptx, root, "tests/ptx/hopper_tma.ptx") ||
        parse_ptx_file(&cl_ptx, root, "tests/ptx/hopper_cluster.ptx") ||
        parse_ptx_file(&gemm_ptx, root, "tests/ptx/hopper_gemm.ptx") ||
        parse_ptx_file(&forms_ptx, root, "tests/ptx/hopper_forms.ptx") ||
        parse_ptx_file(&gemm_st_ptx, root, "tests/ptx/hopper_gemm_st.ptx") ||
        parse_ptx_file(&dyn_ptx, root, "tests/ptx/hopper_dynsmem.ptx") ||
        parse_ptx_file(&dyn1k_ptx, root, "tests/ptx/hopper_dynsmem_1k.ptx") ||
        parse_ptx_file(&exited_ptx, root, "tests/ptx/hopper_exited.ptx"))
        return 1;
    mh_error e;
    mh_emu_opts o = {.num_sms = 4, .strict = 1};
    dev = mh_emu_create(&o, &e);
    CHECK(dev != NULL);
    tma_loads();
    tensor_map_types();
    tma_stores();
    bulk();
    mbarriers();
    tma_time();
    clusters();
    mbar_more();
    cluster_more();
    bulk_reductions();
    gemm();
    gemm_st();
    dyn_smem_tma_wgmma(&dyn_ptx, 128);
    dyn_smem_tma_wgmma(&dyn1k_ptx, 1024);
    exited_peer();
    tensormap_edits();
    refusals();
    mh_emu_destroy(dev);
    mh_ptx_free(&tma_ptx);
    mh_ptx_free(&cl_ptx);
    mh_ptx_free(&gemm_ptx);
    mh_ptx_free(&forms_ptx);
    mh_ptx_free(&gemm_st_ptx);
    mh_ptx_free(&dyn_ptx);
    mh_ptx_free(&dyn1k_ptx);
    mh_ptx_free(&exited_ptx);
    return check_report("test_emu_hopper");
}
