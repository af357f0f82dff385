/* fuzz_dump.c - libFuzzer target: arbitrary trace buffers through both dump
 * modes.  The first bytes pick grid and block, the size picks the entries
 * per trace; the rest are the buffer's words (and, when data[3] & 2, clock
 * calibration words taken from them too).
 * Any outcome is fine except a crash, a sanitizer report or a leak. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "trace/dump.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4) return 0;
    static int devnull = -1;
    if (devnull < 0) devnull = open("/dev/null", O_WRONLY);
    mh_spec s;
    mh_error e;
    mh_scope scope = data[0] & 1 ? MH_SCOPE_WARP : MH_SCOPE_WARPGROUP;
    /* grid and block from the first bytes; entries from what the input holds */
    uint64_t grid = 1 + data[1] % 4, per_block = 1 + (data[2] & 3);
    size_t avail = (size - 4) / 4;
    uint64_t entries = avail / (grid * per_block);
    if (entries < 3) return 0;
    mh_spec_init(&s, grid, (uint64_t)scope * per_block, scope, entries);
    mh_error_clear(&e);
    if (mh_spec_validate(&s, &e)) return 0;
    size_t words = (size_t)s.words;
    uint32_t *w = malloc(words * 4 + 1);
    memcpy(w, data + 4, words * 4);
    /* keep name ids mostly valid so the dump gets past validation */
    if (data[3] & 1)
        for (size_t i = 3; i < words; i += 2) w[i] &= 0x80000003u;

    uint32_t *calib = NULL;
    if (data[3] & 2) { /* calibration words for every trace, from the input's words */
        calib = malloc((size_t)s.num_traces * 16);
        for (size_t i = 0; i < (size_t)s.num_traces * 4; i++) calib[i] = w[i % words];
    }

    mh_names names;
    mh_names_init(&names);
    mh_names_add(&names, "a", 0, &e);
    mh_names_add(&names, "b\"\\", 1, &e);
    mh_names_add(&names, "c", 2, &e);
    mh_names_add(&names, "d", 3, &e);
    mh_names_finish(&names, &e);

    for (int mode = 0; mode < 2; mode++) {
        mh_tracebuf b;
        mh_out o;
        mh_summary sum;
        mh_tracebuf_memory(&b, w, words);
        mh_tracebuf_bind(&b, &s, &e);
        mh_summary_init(&sum, &names, &e);
        mh_out_open_fd(&o, devnull, &e);
        mh_dump_opts opts = {.mode = (mh_dump_mode)mode, .clock_ghz = data[0] & 2 ? 1.98 : 0, .summary = &sum,
                             .calib = mode == MH_DUMP_DEFAULT ? calib : NULL,
                             .counter_bins = mode == MH_DUMP_DEFAULT && (data[0] & 4) ? 1u + data[0] % 13u : 0};
        if (mh_dump(&s, &names, &b, &opts, &o, NULL, &e) == 0) {
            mh_out_commit(&o, &e);
            mh_timeline_row tl; /* the timeline of whatever the dump took */
            if (mh_summary_timeline(&sum, &tl) && (tl.sm_done_min > tl.sm_done_max || tl.sms > tl.traces))
                __builtin_trap();
            for (size_t i = 0; i < names.n; i++) (void)mh_summary_row(&sum, i);
        }
        mh_out_abort(&o);
        mh_summary_free(&sum);
        mh_tracebuf_close(&b);
    }
    mh_names_free(&names);
    free(calib);
    free(w);
    return 0;
}
