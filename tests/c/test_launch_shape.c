/* test_launch_shape.c - the sm_90 launch limits checked before either backend
 * launches: dimensions, threads per block, .maxntid / .reqntid, shared memory
 * per block (static + dynamic); and that emu applies them. */
#include "check.h"
#include "emu/emu.h"
#include "launch/launch_shape.h"
#include "frontend/ptx.h"

static const char SRC[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry any()\n{\nret;\n}\n"
    ".visible .entry max128() .maxntid 128, 1, 1\n{\nret;\n}\n"
    ".visible .entry req64x2() .reqntid 64, 2\n{\nret;\n}\n"
    ".visible .entry big()\n{\n.shared .align 4 .b8 s[200000];\nret;\n}\n";

static int shape(const mh_ptx_module *m, const char *k, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by,
                 uint32_t bz, uint64_t smem, mh_error *e)
{
    uint32_t g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
    mh_error_clear(e);
    return mh_launch_shape_check(mh_ptx_find(m, k), g, b, smem, MH_SMEM_PER_BLOCK_SM90, e);
}

int main(void)
{
    mh_ptx_module m;
    mh_error e;
    CHECK(mh_ptx_parse(&m, SRC, sizeof SRC - 1, "shape.ptx", &e) == 0);
    CHECK(shape(&m, "any", 1, 1, 1, 1024, 1, 1, 0, &e) == 0);
    CHECK(shape(&m, "any", 2147483647u, 65535, 65535, 32, 32, 1, 232448, &e) == 0); /* every maximum */
    CHECK(shape(&m, "any", 1, 1, 1, 1025, 1, 1, 0, &e) == MH_E_LAUNCH_FAILED);
    CHECK_CONTAINS(e.message, "any: block.x = 1025: it must be 1 to 1024");
    CHECK(shape(&m, "any", 1, 1, 1, 1, 1, 65, 0, &e) == MH_E_LAUNCH_FAILED);
    CHECK_CONTAINS(e.message, "block.z = 65: it must be 1 to 64");
    CHECK(shape(&m, "any", 1, 1, 1, 64, 32, 1, 0, &e) == MH_E_LAUNCH_FAILED);
    CHECK_CONTAINS(e.message, "any: block 64x32x1 has 2048 threads: at most 1024");
    CHECK(shape(&m, "any", 1, 65536, 1, 32, 1, 1, 0, &e) == MH_E_LAUNCH_FAILED);
    CHECK_CONTAINS(e.message, "grid.y = 65536: it must be 1 to 65535");
    CHECK(shape(&m, "any", 2147483648u, 1, 1, 32, 1, 1, 0, &e) == MH_E_LAUNCH_FAILED);
    CHECK_CONTAINS(e.message, "grid.x = 2147483648: it must be 1 to 2147483647");
    CHECK(shape(&m, "any", 1, 0, 1, 32, 1, 1, 0, &e) == MH_E_LAUNCH_FAILED);
    CHECK(shape(&m, "any", 1, 1, 1, 32, 1, 1, 232449, &e) == MH_E_LAUNCH_FAILED);
    CHECK_CONTAINS(e.message, "any: 232449 bytes of shared memory per block (0 static + 232449 dynamic); the device has 232448");
    CHECK(shape(&m, "max128", 1, 1, 1, 128, 1, 1, 0, &e) == 0);
    CHECK(shape(&m, "max128", 1, 1, 1, 64, 2, 1, 0, &e) == 0); /* .maxntid bounds the product */
    CHECK(shape(&m, "max128", 1, 1, 1, 256, 1, 1, 0, &e) == MH_E_LAUNCH_FAILED);
    CHECK_CONTAINS(e.message, "max128: 256 threads per block exceed its .maxntid 128x1x1");
    CHECK(shape(&m, "req64x2", 1, 1, 1, 64, 2, 1, 0, &e) == 0);
    CHECK(shape(&m, "req64x2", 1, 1, 1, 128, 1, 1, 0, &e) == MH_E_LAUNCH_FAILED); /* same count, other shape */
    CHECK_CONTAINS(e.message, "req64x2: block 128x1x1, but the kernel requires 64x2x1 (.reqntid)");
    CHECK(shape(&m, "big", 1, 1, 1, 32, 1, 1, 32448, &e) == 0);
    CHECK(shape(&m, "big", 1, 1, 1, 32, 1, 1, 32449, &e) == MH_E_LAUNCH_FAILED);
    CHECK_CONTAINS(e.message, "big: 232449 bytes of shared memory per block (200000 static + 32449 dynamic)");

    /* emu refuses what a GPU would, before running anything */
    mh_emu_opts o = {.num_sms = 2};
    mh_emu *d = mh_emu_create(&o, &e);
    mh_emu_launch l = {{1, 70000, 1}, {32, 1, 1}, 0, NULL, 0, 0};
    CHECK(d && mh_emu_run(d, &m, "any", &l, NULL, &e) == MH_E_LAUNCH_FAILED);
    CHECK_CONTAINS(e.message, "any: grid.y = 70000: it must be 1 to 65535");
    mh_emu_launch l2 = {{1, 1, 1}, {128, 1, 1}, 0, NULL, 0, 0};
    CHECK(mh_emu_run(d, &m, "req64x2", &l2, NULL, &e) == MH_E_LAUNCH_FAILED);
    mh_emu_launch l3 = {{1, 1, 1}, {64, 2, 1}, 0, NULL, 0, 0};
    CHECK(mh_emu_run(d, &m, "req64x2", &l3, NULL, &e) == 0);
    mh_emu_destroy(d);
    mh_ptx_free(&m);
    return check_report("test_launch_shape");
}
