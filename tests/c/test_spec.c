/* test_spec.c - trace spec validation, sizes and trace locations. */
#include "check.h"
#include "trace/spec.h"

static int validate(mh_spec *s, mh_error *e)
{
    mh_error_clear(e);
    return mh_spec_validate(s, e);
}

int main(void)
{
    mh_spec s;
    mh_error e;

    mh_spec_init(&s, 1056, 256, MH_SCOPE_WARP, 2051);
    CHECK(validate(&s, &e) == 0);
    CHECK(s.traces_per_block == 8 && s.num_traces == 8448);
    CHECK(s.words == 8448ull * 2051 && s.bytes == s.words * 4);

    mh_spec_init(&s, 264, 128, MH_SCOPE_WARPGROUP, 256);
    CHECK(validate(&s, &e) == 0 && s.num_traces == 264 && s.bytes == 264 * 256 * 4);

    mh_spec_init(&s, 2, 96, MH_SCOPE_WARPGROUP, 64);
    CHECK(validate(&s, &e) == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "96 threads is not a multiple of the warpgroup size (128");

    mh_spec_init(&s, 2, 96, MH_SCOPE_WARP, 64);
    CHECK(validate(&s, &e) == 0 && s.num_traces == 6);

    mh_spec_init(&s, 0, 128, MH_SCOPE_WARP, 64);
    CHECK(validate(&s, &e) == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "grid.x is 0");
    mh_spec_init(&s, 1, 128, MH_SCOPE_WARP, 64);
    s.block[2] = 0;
    CHECK(validate(&s, &e) == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "block.z is 0");

    mh_spec_init(&s, 1, 128, MH_SCOPE_WARP, 2);
    CHECK(validate(&s, &e) == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "at least 3");

    mh_spec_init(&s, 1, 128, (mh_scope)64, 8);
    CHECK(validate(&s, &e) == MH_E_BAD_ARGUMENT);

    /* 64-bit overflow at each product */
    mh_spec_init(&s, 1ull << 40, 1ull << 30, MH_SCOPE_WARP, 1ull << 20);
    CHECK(validate(&s, &e) == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "overflows 64 bits");
    mh_spec_init(&s, 1, 128, MH_SCOPE_WARP, 1ull << 62);
    CHECK(validate(&s, &e) == MH_E_BAD_ARGUMENT); /* bytes = words * 4 overflows */
    mh_spec_init(&s, 1ull << 32, 128, MH_SCOPE_WARP, 8);
    s.grid[1] = 1ull << 32;
    CHECK(validate(&s, &e) == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "block count overflows");
    mh_spec_init(&s, 1, 1ull << 32, MH_SCOPE_WARP, 8);
    s.block[1] = 1ull << 32;
    CHECK(validate(&s, &e) == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "thread count overflows");

    /* Mosaic's block order: (bx*gy + by)*gz + bz */
    mh_spec_init(&s, 4, 256, MH_SCOPE_WARPGROUP, 8);
    s.grid[1] = 3;
    s.grid[2] = 2;
    CHECK(validate(&s, &e) == 0 && s.num_traces == 4 * 3 * 2 * 2);
    uint64_t block = (2 * 3 + 1) * 2 + 1; /* bx=2, by=1, bz=1 */
    mh_trace_loc l = mh_spec_locate(&s, block * 2 + 1);
    CHECK(l.block == block && l.bx == 2 && l.by == 1 && l.bz == 1 && l.local == 1);

    mh_scope sc;
    CHECK(mh_scope_parse("warp", &sc) == 0 && sc == MH_SCOPE_WARP);
    CHECK(mh_scope_parse("warpgroup", &sc) == 0 && sc == MH_SCOPE_WARPGROUP);
    CHECK(mh_scope_parse("block", &sc) != 0);
    return check_report("test_spec");
}
