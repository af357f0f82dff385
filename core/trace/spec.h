/* spec.h - the trace spec: launch shape, scope and entries_per_warpgroup, and
 * everything derived from it (number of traces, buffer size, where trace t
 * lives).  Layout as in docs/DESIGN.md "The trace buffer". */
#ifndef MH_SPEC_H
#define MH_SPEC_H

#include <stdint.h>
#include "base/error.h"

#define MH_HEADER_WORDS 3u           /* start, smid, n */
#define MH_CALIB_WORDS 4             /* an instrumented trace's clock calibration: %clock and
                                      * %globaltimer_lo at its start, then at its exit */
#define MH_EXIT_BIT 0x80000000u      /* tag bit 31: end of a region */
#define MH_NAME_ID_MASK 0x7fffffffu
#define MH_NAME_ID_MAX 0x7fffffffu   /* largest interned name id */

typedef enum { MH_SCOPE_WARP = 32, MH_SCOPE_WARPGROUP = 128 } mh_scope;

typedef struct mh_spec {
    uint64_t grid[3];
    uint64_t block[3];
    mh_scope scope;
    uint64_t entries;          /* entries_per_warpgroup (words per trace) */
    int partial;               /* 1: a block whose thread count is not a multiple of the scope has one
                                * more trace for its last, partial warp or warpgroup (an instrumented
                                * launch: its lowest thread writes it); 0: such a block is refused */
    /* derived by mh_spec_validate */
    uint64_t num_blocks;
    uint64_t traces_per_block;
    uint64_t num_traces;
    uint64_t words;            /* num_traces * entries */
    uint64_t bytes;            /* words * 4 */
} mh_spec;

/* Fills an mh_spec with 1-D grid/block (the rest 1). */
void mh_spec_init(mh_spec *s, uint64_t grid_x, uint64_t block_x, mh_scope scope,
                  uint64_t entries);

/* Checks every field (no zero sizes, block a multiple of the scope unless
 * partial, header fits, no 64-bit overflow) and computes the derived sizes:
 * traces_per_block is threads / scope, rounded up when partial. */
int mh_spec_validate(mh_spec *s, mh_error *e);

/* "warp" / "warpgroup"; parse returns 0 on success. */
const char *mh_scope_name(mh_scope s);
int mh_scope_parse(const char *name, mh_scope *out);

/* Where trace t lives: linear block (Mosaic order (bx*gy+by)*gz+bz), its
 * 3-D coordinates and the trace index inside the block. */
typedef struct { uint64_t block, bx, by, bz, local; } mh_trace_loc;
mh_trace_loc mh_spec_locate(const mh_spec *s, uint64_t trace);

/* Checked arithmetic: returns 0 and sets *r, or 1 on overflow. */
int mh_mul_u64(uint64_t a, uint64_t b, uint64_t *r);

#endif
