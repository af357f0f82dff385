/* emu_memtime.h - the memory hierarchy and tensor cores in virtual time (emu_memtime.c):
 * an L1 per SM, the device's L2 and HBM with their bandwidths shared by every SM, the
 * SM-to-SM network, and one tensor core per sub-partition shared by its warps; every
 * parameter from the launch's device model (emu_model.c).  The hooks return cycles; the
 * callers (emu_exec.c, emu_tma.c, emu_mma.c) add them where costs were charged before. */
#ifndef MH_EMU_MEMTIME_H
#define MH_EMU_MEMTIME_H

#include "emu/emu_internal.h"

/* ASYNC: cp.async (no latency to the warp); LD_CG: a load of ld.cg, cached in L2 only (the PTX ISA's
 * "cache at global level": not looked up in, nor allocated in, the SM's L1) */
enum { EMU_MT_LD, EMU_MT_ST, EMU_MT_ATOM, EMU_MT_ASYNC, EMU_MT_LD_CG };
/* or'ed into access_cost's op by atom and red: in shared memory, the lanes on one word serialise */
#define EMU_MT_RMW 0x100
enum { EMU_MT_TMA_LOAD, EMU_MT_TMA_STORE, EMU_MT_TMA_DSMEM };

int emu_mt_start(ctx *c);   /* -1: out of memory */
void emu_mt_free(ctx *c);
/* The end of a quantum: each SM's changes to the L2's tags and the shared bandwidths (which it saw
 * alone during the quantum) applied to the device's, in SM order. */
void emu_mt_quantum_end(ctx *c);
/* One SM's changes applied at once, after its turn: for launches that always run on one worker
 * (emu_par_serial_reason), where the next SM may see them without depending on the workers. */
void emu_mt_sm_end(ctx *c, uint32_t sm);

/* A warp's access of global memory at ad[0..n) (size bytes a lane), issued at c->now: the cycles
 * it keeps its warp beyond the issue and the L1 pipe (latency of the level that serves it and the
 * queueing for the shared bandwidths; a store or cp.async only the queueing). */
uint64_t emu_mt_global(ctx *c, const uint64_t *ad, uint32_t n, uint32_t size, int op);
/* A hint only (nothing changes): the model's cache sets that emu_mt_global(c, ad, n, .., op) will
 * read, fetched into the CPU's cache, so that a caller with other work before it (the data's copy)
 * overlaps their misses with that work. */
void emu_mt_prefetch(const ctx *c, const uint64_t *ad, uint32_t n, int op);
/* The same for shared memory (shared::cta offsets or shared::cluster addresses at sa[0..n)):
 * shared memory's latency, or another block's through the SM-to-SM network. */
uint64_t emu_mt_shared(ctx *c, const uint64_t *sa, uint32_t n, uint32_t size, int op);

/* A TMA copy: emu_mt_tma_begin, then emu_mt_touch for each global byte address it reads or writes
 * (in any order; consecutive ones in a line cost one compare), then emu_mt_tma_end gives the cycle
 * its last byte lands.  Touches after the end are not recorded (a multicast's other blocks). */
void emu_mt_tma_begin(ctx *c);
void emu_mt_touch_slow(ctx *c, uint64_t ga);
static inline void emu_mt_touch(ctx *c, uint64_t ga)
{
    if (c->mt && (ga >> 7) != c->mt_last_line) emu_mt_touch_slow(c, ga);
}
void emu_mt_touch_range(ctx *c, uint64_t ga, uint64_t bytes);
uint64_t emu_mt_tma_end(ctx *c, vsm *sm, uint64_t now, uint64_t bytes, int kind);

/* A tensor-core operation of `macs` multiply-adds of type atype on warp w's sub-partition, issued
 * at c->now: the cycle it ends (it starts when that tensor core is free and its operands are there,
 * `fetch` cycles after issue: a wgmma reads them from shared memory, the model's smem_lat). */
uint64_t emu_mt_mma(ctx *c, const warp *w, int atype, uint64_t macs, uint32_t fetch);

#endif
