/* spec.c - trace spec validation and derived sizes. */
#include "trace/spec.h"

#include <string.h>

int mh_mul_u64(uint64_t a, uint64_t b, uint64_t *r)
{
    return __builtin_mul_overflow(a, b, r);
}

void mh_spec_init(mh_spec *s, uint64_t grid_x, uint64_t block_x, mh_scope scope,
                  uint64_t entries)
{
    memset(s, 0, sizeof *s);
    s->grid[0] = grid_x;
    s->grid[1] = s->grid[2] = 1;
    s->block[0] = block_x;
    s->block[1] = s->block[2] = 1;
    s->scope = scope;
    s->entries = entries;
}

const char *mh_scope_name(mh_scope s)
{
    return s == MH_SCOPE_WARP ? "warp" : s == MH_SCOPE_WARPGROUP ? "warpgroup" : "?";
}

int mh_scope_parse(const char *name, mh_scope *out)
{
    if (strcmp(name, "warp") == 0) { *out = MH_SCOPE_WARP; return 0; }
    if (strcmp(name, "warpgroup") == 0) { *out = MH_SCOPE_WARPGROUP; return 0; }
    return 1;
}

static int product3(const uint64_t v[3], uint64_t *r)
{
    uint64_t p;
    if (mh_mul_u64(v[0], v[1], &p) || mh_mul_u64(p, v[2], &p)) return 1;
    *r = p;
    return 0;
}

int mh_spec_validate(mh_spec *s, mh_error *e)
{
    static const char axis[3] = {'x', 'y', 'z'};
    uint64_t threads;
    for (int i = 0; i < 3; i++) {
        if (s->grid[i] == 0)
            return mh_fail(e, MH_E_BAD_ARGUMENT, "grid.%c is 0: every grid dimension must be at least 1", axis[i]);
        if (s->block[i] == 0)
            return mh_fail(e, MH_E_BAD_ARGUMENT, "block.%c is 0: every block dimension must be at least 1", axis[i]);
    }
    if (s->scope != MH_SCOPE_WARP && s->scope != MH_SCOPE_WARPGROUP)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "trace scope must be warp (32 threads) or warpgroup (128 threads)");
    if (s->entries < MH_HEADER_WORDS)
        return mh_fail(e, MH_E_BAD_ARGUMENT,
                       "entries_per_warpgroup is %llu: it must be at least 3 (the header: start time, SM id, count)",
                       (unsigned long long)s->entries);
    if (product3(s->block, &threads))
        return mh_fail(e, MH_E_BAD_ARGUMENT, "block %llux%llux%llu: thread count overflows 64 bits",
                       (unsigned long long)s->block[0], (unsigned long long)s->block[1],
                       (unsigned long long)s->block[2]);
    if (threads % (uint64_t)s->scope && !s->partial)
        return mh_fail(e, MH_E_BAD_ARGUMENT,
                       "block of %llu threads is not a multiple of the %s size (%d threads)",
                       (unsigned long long)threads, mh_scope_name(s->scope), (int)s->scope);
    if (product3(s->grid, &s->num_blocks))
        return mh_fail(e, MH_E_BAD_ARGUMENT, "grid %llux%llux%llu: block count overflows 64 bits",
                       (unsigned long long)s->grid[0], (unsigned long long)s->grid[1],
                       (unsigned long long)s->grid[2]);
    s->traces_per_block = threads / (uint64_t)s->scope + (threads % (uint64_t)s->scope != 0);
    if (mh_mul_u64(s->num_blocks, s->traces_per_block, &s->num_traces) ||
        mh_mul_u64(s->num_traces, s->entries, &s->words) ||
        mh_mul_u64(s->words, 4, &s->bytes))
        return mh_fail(e, MH_E_BAD_ARGUMENT,
                       "%llu blocks x %llu traces per block x %llu entries x 4 bytes overflows 64 bits",
                       (unsigned long long)s->num_blocks, (unsigned long long)s->traces_per_block,
                       (unsigned long long)s->entries);
    return 0;
}

mh_trace_loc mh_spec_locate(const mh_spec *s, uint64_t trace)
{
    mh_trace_loc l;
    l.block = trace / s->traces_per_block;
    l.local = trace % s->traces_per_block;
    l.bz = l.block % s->grid[2];
    l.by = (l.block / s->grid[2]) % s->grid[1];
    l.bx = l.block / (s->grid[2] * s->grid[1]);
    return l;
}
