/* fuzz_ptx.c - libFuzzer target: arbitrary text through the PTX front end,
 * and every kernel that parses run on emu (one block of 64 threads, a
 * 4 KiB buffer for each pointer parameter, an instruction budget).  Any
 * outcome is fine except a crash, a sanitizer report or a leak. */
#include <stdlib.h>
#include <string.h>
#include "emu/emu.h"
#include "frontend/ptx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mh_ptx_module m;
    mh_error e;
    if (mh_ptx_parse(&m, (const char *)data, size, "fuzz.ptx", &e)) return 0;
    mh_emu_opts o = {.num_sms = 4, .max_warp_insns = 20000};
    mh_emu *d = mh_emu_create(&o, &e);
    for (uint32_t i = 0; i < m.nfuncs; i++) {
        const mh_ptx_func *f = &m.funcs[i];
        if (!f->is_entry || !f->defined || f->nparams > 8) continue;
        uint64_t vals[8];
        mh_emu_arg args[8];
        for (uint32_t k = 0; k < f->nparams; k++) {
            vals[k] = 0;
            if (f->params[k].size == 8) mh_emu_alloc(d, 4096, &vals[k], &e);
            args[k].data = &vals[k];
            args[k].size = f->params[k].size <= 8 ? f->params[k].size : 8;
        }
        mh_emu_launch l = {.grid = {2, 1, 1}, .block = {64, 1, 1}, .dynamic_smem = 256, .args = args, .nargs = f->nparams};
        mh_emu_run(d, &m, f->name, &l, NULL, &e);
    }
    mh_emu_destroy(d);
    mh_ptx_free(&m);
    return 0;
}
