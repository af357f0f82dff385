/* test_ptx_cache.c - the cache qualifiers and cache instructions (issue 30, item 3):
 * tests/ptx/cache_hints.ptx holds every form the PTX ISA lists for sm_90 (ld/st with
 * .L2::64B/128B/256B, .L1::evict_*, .L2::cache_hint and its 64-bit policy operand, .nc;
 * createpolicy; prefetch and prefetchu with their levels; discard; applypriority; atom and red
 * with a cache hint).  The front end takes them all (it refused ld.global.L2::128B: the lexer
 * cut the name at the digit), emu runs them as what they are for a machine without caches,
 * hints: out[k] = in[k] for k < 32, out[32] = in[0] + 1, out[33] = 1.
 * argv[1]: the source folder. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "emu/emu.h"
#include "emu_util.h"
#include "frontend/ptx.h"

enum { N = 34 };

int main(int argc, char **argv)
{
    const char *root = argc > 1 ? argv[1] : ".";
    mh_ptx_module m;
    int parsed = parse_ptx_file(&m, root, "tests/ptx/cache_hints.ptx") == 0;
    CHECK(parsed);
    if (!parsed) return check_report("test_ptx_cache");
    mh_error e;
    int ok = mh_emu_check_module(&m, &e) == 0;
    CHECK(ok);
    if (!ok) fprintf(stderr, "  %s\n", e.message);
    mh_emu_opts o = {.num_sms = 1};
    mh_emu *d = mh_emu_create(&o, &e);
    CHECK(d != NULL);
    uint32_t in[64], out[N];
    for (uint32_t k = 0; k < 64; k++) in[k] = 0x1000u + k * 7u;
    memset(out, 0, sizeof out);
    uint64_t din = emu_upload(d, in, sizeof in), dout = emu_upload(d, NULL, sizeof out);
    mh_emu_arg args[2] = {ARG(dout), ARG(din)};
    mh_emu_launch l = {{1, 1, 1}, {1, 1, 1}, 0, args, 2, 10.0};
    int rc = mh_emu_run(d, &m, "cache_forms", &l, NULL, &e);
    CHECK(rc == 0);
    if (rc) fprintf(stderr, "  %s\n", e.message);
    CHECK(mh_emu_read(d, dout, out, sizeof out, &e) == 0);
    for (uint32_t k = 0; k < 32; k++) {
        CHECK(out[k] == in[k]);
        if (out[k] != in[k]) fprintf(stderr, "  out[%u] = 0x%x, expected 0x%x\n", k, out[k], in[k]);
    }
    CHECK(out[32] == in[0] + 1);
    CHECK(out[33] == 1);
    mh_emu_destroy(d);
    mh_ptx_free(&m);
    return check_report("test_ptx_cache");
}
