/* emu_sched.c - emu's scheduler: the issue model of one SM (resident blocks,
 * four sub-partitions issuing the warp ready longest, barriers and mbarrier
 * waits, warp-synchronous groups), the device's SMs advanced in virtual-time
 * order with blocks dispatched in blockIdx order, and the grid-wide stall
 * check that turns a deadlock into a fault naming its lines. */
#include "emu/emu_internal.h"
#include "emu/emu_counters.h"
#include "emu/emu_memtime.h"
#include "frontend/ptx_source.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- the issue model ------------------------------------------------------------ */
/* A virtual SM holds as many blocks as a GPU's would (threads, warps, blocks, shared
 * memory and, where ptxas told them, registers per SM: emu_occupancy.c); the rest of
 * its blocks wait for one to finish, so a large grid runs in waves.  Its warps sit in
 * 4 sub-partitions (warp slot % 4); each cycle every sub-partition issues one
 * instruction of the warp that has been ready longest, and that instruction's cost
 * (1 cycle, more for memory: see exec_insn) delays only its warp's next issue.
 * Instructions run in the order of their issue cycles (sub-partition number breaks a
 * tie), so the warps of an SM interleave as on a GPU, deterministically.  A block's
 * warps start one a cycle; which SM gets which block, and when, is the device
 * scheduler's (below). */

/* Rounds of mbarrier waits without a memory write before emu calls it a deadlock (a wait
 * loop may also watch %globaltimer, so one round is not proof): STALLED_ROUNDS of the grid's
 * blocks in all, at least BLOCK_ROUNDS of them the reporting block's own, so the cost of the
 * check does not grow with the grid (issue 36: 264 blocks took 67 s at 10000 rounds each). */
#define STALLED_ROUNDS 10000
#define BLOCK_ROUNDS 16

static inline void enter_block(ctx *c, blk *b)
{
    if (c->cb == b) return;
    c->cb = b;
    c->shared = b->shared;
    c->local = b->local;
    c->frames = b->frames;
    c->warps = b->warps;
    c->bar_arrived = b->bar_arrived;
    memcpy(c->ctaid, b->ctaid, sizeof c->ctaid);
    c->cs = b->sm;
    c->sm = b->sm->id;
    c->clock0 = b->sm->clock0;
}

static void sp_add(ctx *c, warp *w)
{
    (void)c;
    subpart *s = &w->b->sm->sps[w->sp];
    w->spi = (uint8_t)s->n;
    s->ready[s->n] = w->ready;
    s->slot[s->n] = w->slot;
    s->w[s->n++] = w;
    s->best = NULL;
}

static void sp_remove(ctx *c, warp *w)
{
    (void)c;
    subpart *s = &w->b->sm->sps[w->sp];
    uint32_t i = w->spi, last = --s->n;
    if (i != last) {
        s->w[i] = s->w[last];
        s->ready[i] = s->ready[last];
        s->slot[i] = s->slot[last];
        s->w[i]->spi = (uint8_t)i;
    }
    s->best = NULL;
}

/* The warp that has waited longest (the earliest ready; the lower slot on a tie), from the
 * sub-partition's own copies of its warps' ready and slot. */
static warp *sp_find(subpart *s)
{
    uint32_t b = 0;
    for (uint32_t i = 1; i < s->n; i++)
        if (s->ready[i] < s->ready[b] || (s->ready[i] == s->ready[b] && s->slot[i] < s->slot[b])) b = i;
    s->bi = (uint8_t)b;
    s->pf = 0;
    __builtin_prefetch(s->w[b]); /* its issue fields (the first 64 bytes), wanted soon */
    return s->best = s->w[b];
}

/* The CPU's cache asked for the register rows warp w's next instruction names (w's first line
 * was prefetched when it became its sub-partition's next): a cache hint, nothing else. */
static void prefetch_row(const ctx *c, const warp *w, uint32_t r)
{
    if (r >= c->nregs) return;
    const char *row = (const char *)&REG(w, r, 0);
    for (int j = 0; j < WARP * 8; j += 64) __builtin_prefetch(row + j);
}
static void prefetch_rows(const ctx *c, const warp *w)
{
    if (!w->known || w->kpc >= c->ncode) return;
    const mh_ptx_insn *in = &c->code[w->kpc];
    for (int k = 0; k < in->nopnds && k < 4; k++)
        if (in->o[k].kind == MH_OPK_REG || in->o[k].kind == MH_OPK_ADDR) prefetch_row(c, w, in->o[k].reg);
    if (in->guard >= 0) prefetch_row(c, w, (uint32_t)in->guard);
}

static void wake(ctx *c, warp *w, uint64_t when)
{
    emu_sync_pcs(w);
    w->sched = W_RUN;
    w->known = 0;
    if (w->ready < when) w->ready = when;
    w->b->running++;
    sp_add(c, w);
}

/* Warps of block b waiting at a barrier that now have lanes going on (a counted barrier
 * completed by another warp) issue again from `when`. */
static void wake_released(ctx *c, blk *b, uint64_t when)
{
    for (uint32_t i = 0; i < c->nwarps; i++) {
        warp *w = &b->warps[i];
        if (w->sched != W_WAIT) continue;
        for (int l = 0; l < WARP; l++)
            if (w->st[l] == LANE_ACTIVE) {
                wake(c, w, when);
                break;
            }
    }
}

/* Parked warps (all their lanes at an incomplete mbarrier phase) try again. */
static void unpark(ctx *c, blk *b, uint64_t when)
{
    for (uint32_t i = 0; i < c->nwarps && b->parked; i++) {
        warp *w = &b->warps[i];
        if (w->sched != W_PARK) continue;
        for (int l = 0; l < WARP; l++)
            if (w->st[l] == LANE_YIELD) w->st[l] = LANE_ACTIVE;
        b->parked--;
        wake(c, w, when);
    }
    b->park_writes = c->writes;
}

/* The sizes of a slot's buffers (the same for every slot of a launch). */
enum { SB_SHARED, SB_FRAMES, SB_REGS, SB_WRITTEN, SB_WARPS, SB_STACKS, SB_RDY, SB_N };
static size_t slot_bytes(const ctx *c, int which)
{
    size_t nw = c->nwarps, nregs = c->nregs;
    switch (which) {
    case SB_SHARED: return c->shared_size ? c->shared_size : 1;
    case SB_FRAMES: return c->frames_used ? nw * WARP * (c->frame_bytes ? c->frame_bytes : 1) : 1;
    case SB_REGS: return nw * nregs * WARP * sizeof(uint64_t);
    case SB_WRITTEN: return 2 * nw * nregs * sizeof(uint32_t); /* warp's written, then their acc */
    case SB_WARPS: return nw * sizeof(warp);
    case SB_RDY: return nw * nregs * sizeof(uint64_t); /* the scoreboard's ready cycles (emu_scoreboard.c) */
    default: return nw * WARP * sizeof(call_frame[MAX_CALL_DEPTH]);
    }
}

/* The memory of slot b, taken when the slot first gets a block: from the buffers earlier launches
 * gave back where it can (start_block clears what a block must find zeroed). */
static int slot_memory(ctx *c, blk *b)
{
    if (b->warps) return 0;
    mh_emu *d = c->d;
    /* a buffer the pool did not have is new from calloc: zeroed, its pages not touched yet (the
     * first block leaves them so: a launch of few large blocks paid a page fault for each page of
     * every slot's registers and shared memory, most of them never used) */
    size_t had = d->npool;
    b->shared = emu_pool_get(d, slot_bytes(c, SB_SHARED));
    b->fresh = (uint8_t)(d->npool == had ? FRESH_SHARED : 0);
    b->local = emu_local_alloc(c->local_stride * c->nwarps * WARP + 1);
    b->frames = emu_pool_get(d, slot_bytes(c, SB_FRAMES));
    had = d->npool;
    b->regs = emu_pool_get(d, slot_bytes(c, SB_REGS));
    b->fresh |= (uint8_t)(d->npool == had ? FRESH_REGS : 0);
    b->written = d->strict ? emu_pool_get(d, slot_bytes(c, SB_WRITTEN)) : NULL;
    b->warps = emu_pool_get(d, slot_bytes(c, SB_WARPS));
    b->rdy = emu_pool_get(d, slot_bytes(c, SB_RDY));
    b->stacks = c->calls ? emu_pool_get(d, slot_bytes(c, SB_STACKS)) : NULL;
    if (b->shared && b->local && b->frames && b->regs && (!d->strict || b->written) && b->warps && b->rdy &&
        (!c->calls || b->stacks)) {
        memset(b->warps, 0, slot_bytes(c, SB_WARPS));
        return 0;
    }
    emu_slot_release(c, b); /* what it got */
    mh_fail(c->e, MH_E_NO_MEMORY, "emu: out of memory for block %llu's registers and memory (%u warps)",
            (unsigned long long)c->next_block, c->nwarps);
    c->faulted = 1;
    return -1;
}

void emu_slot_release(ctx *c, blk *b)
{
    mh_emu *d = c->d;
    emu_pool_put(d, b->shared, slot_bytes(c, SB_SHARED));
    emu_local_free(b->local, c->local_stride * c->nwarps * WARP + 1);
    emu_pool_put(d, b->frames, slot_bytes(c, SB_FRAMES));
    emu_pool_put(d, b->regs, slot_bytes(c, SB_REGS));
    emu_pool_put(d, b->written, slot_bytes(c, SB_WRITTEN));
    emu_pool_put(d, b->warps, slot_bytes(c, SB_WARPS));
    emu_pool_put(d, b->rdy, slot_bytes(c, SB_RDY));
    emu_pool_put(d, b->stacks, slot_bytes(c, SB_STACKS));
    b->shared = b->local = b->frames = NULL;
    b->regs = NULL;
    b->written = NULL;
    b->rdy = NULL;
    b->warps = NULL;
    b->stacks = NULL;
}

static int start_block(ctx *c, blk *b, uint64_t linear, uint64_t when)
{
    if (slot_memory(c, b)) return -1;
    uint32_t nregs = c->nregs, entry = (uint32_t)(c->f - c->m->funcs);
    /* blocks in CUDA's order: x fastest */
    b->ctaid[0] = (uint32_t)(linear % c->grid[0]);
    b->ctaid[1] = (uint32_t)(linear / c->grid[0] % c->grid[1]);
    b->ctaid[2] = (uint32_t)(linear / ((uint64_t)c->grid[0] * c->grid[1]));
    if (!(b->fresh & FRESH_SHARED)) memset(b->shared, 0, c->shared_size);
    if (b->fresh & FRESH_REGS)
        ; /* zeroed */
    else if (c->packed && !b->written) /* only the rows read before a write (emu_regpack.c) */
        for (uint32_t i = 0; i < c->nwarps; i++)
            for (uint32_t k = 0; k < c->nzero_rows; k++)
                memset(b->regs + ((size_t)i * nregs + c->zero_rows[k]) * WARP, 0, WARP * sizeof *b->regs);
    else
        memset(b->regs, 0, (size_t)c->nwarps * nregs * WARP * sizeof *b->regs);
    if (b->written) memset(b->written, 0, slot_bytes(c, SB_WRITTEN));
    memset(b->rdy, 0, slot_bytes(c, SB_RDY)); /* every row ready: an earlier block's latencies are not its */
    if (c->frames_used) memset(b->frames, 0, (size_t)c->nwarps * WARP * c->frame_bytes);
    memset(b->bar_arrived, 0, sizeof b->bar_arrived);
    b->red_true = b->red_all = 0;
    b->fresh = 0; /* the next block of this slot finds what this one leaves */
    b->running = b->live = c->nwarps;
    b->parked = 0;
    b->done = 0;
    if (b->tma_n) emu_tma_forget(c, b);
    b->cl_arrived = 0;
    b->cl_phase = 0;
    b->reg_free = 0; /* every warp holds its launch count */
    b->rank = 0;
    b->peer[0] = b;
    b->stalled = 0;
    b->park_writes = b->round_writes = c->writes;
    b->end = when;
    b->busy = 1;
    b->vacant = 0;
    uint32_t slot0 = (uint32_t)(b - b->sm->blks) * c->nwarps;
    for (uint32_t i = 0; i < c->nwarps; i++) {
        warp *w = &b->warps[i];
        w->r = b->regs + (size_t)i * nregs * WARP;
        w->stack = b->stacks ? b->stacks + (size_t)i * WARP : NULL;
        w->written = b->written ? b->written + (size_t)i * nregs : NULL;
        w->rdy = b->rdy + (size_t)i * nregs;
        w->sb_pc = EMU_NO_PC;
        w->acc = b->written ? b->written + ((size_t)c->nwarps + i) * nregs : NULL;
        w->mma.retired = w->mma.wgdone = w->mma.base = w->mma.ngroups; /* nothing of an earlier block's in flight */
        w->mma.waits = 0;
        w->mma.wgdone_at = 0;
        w->nreg = c->regs;
        w->nsetmax = w->nwgmma = 0;
        w->tile_live = 0; /* (its tile, if any, kept for the slot's next blocks) */
        w->st_pc = EMU_NO_PC;
        w->fl_wait = NULL;
        w->index = i;
        w->b = b;
        w->ready = when + i; /* the SM launches a block's warps one a cycle */
        w->known = 0;
        w->pc_stale = 0;
        w->cl_arrived = w->cl_phase = 0;
        memset(&w->bulk, 0, sizeof w->bulk);
        w->sched = W_RUN;
        w->slot = (uint16_t)(slot0 + i);
        w->sp = (uint8_t)((slot0 + i) % SUBPARTS);
        for (int ln = 0; ln < WARP; ln++) {
            w->pc[ln] = c->base[entry];
            w->depth[ln] = 0;
            w->st[ln] = i * WARP + (uint32_t)ln < c->nthreads ? LANE_ACTIVE : LANE_EXITED;
        }
        sp_add(c, w);
    }
    return 0;
}

/* Slot b's block has finished (at `end`): the grid's next block is owed to it. */
static void slot_free(ctx *c, blk *b, uint64_t end)
{
    vsm *sm = b->sm;
    b->busy = 0;
    b->end = end;
    if (b->end > sm->end) sm->end = b->end;
    if (c->next_block < c->nblocks) {
        b->vacant = 1;
        if (b->end < sm->vacant_at) sm->vacant_at = b->end;
    }
}

/* Whether a block of b's cluster other than b has a warp that can issue (b waits for it). */
static int peer_runs(const ctx *c, const blk *b)
{
    for (uint32_t r = 0; c->cluster_n > 1 && r < c->cluster_n; r++)
        if (b->peer[r] != b && b->peer[r]->running) return 1;
    return 0;
}

/* A finished block whose warpgroups' warps ran different numbers of setmaxnreg or of
 * wgmma.mma_async (one skipped it: the PTX ISA has every warp of a warpgroup run the same one,
 * .sync.aligned): a fault naming the line. */
__attribute__((noinline, cold)) static int setmaxnreg_uneven(ctx *c, blk *b)
{
    for (uint32_t g0 = 0; g0 < c->nwarps; g0 += 4)
        for (uint32_t i = g0 + 1; i < g0 + 4 && i < c->nwarps; i++) {
            const warp *a = &b->warps[g0], *x = &b->warps[i];
            if (a->nwgmma != x->nwgmma) {
                const warp *more = a->nwgmma > x->nwgmma ? a : x, *less = more == a ? x : a;
                enter_block(c, b);
                c->cur = &c->code[more->wgmma_pc];
                return emu_fault(c, more, 0, "wgmma.mma_async: warp %u ran %u (the last at line %u), warp %u of the "
                                 "same warpgroup %u: every warp of a warpgroup runs each wgmma.mma_async (.sync.aligned)",
                                 more->index, more->nwgmma, c->code[more->wgmma_pc].line, less->index, less->nwgmma), -1;
            }
            if (a->nsetmax == x->nsetmax) continue;
            const warp *more = a->nsetmax > x->nsetmax ? a : x, *less = more == a ? x : a;
            enter_block(c, b);
            return emu_fault(c, more, 0, "setmaxnreg: warp %u ran %u (the last at line %u), warp %u of the same "
                             "warpgroup %u: every warp of a warpgroup runs the same setmaxnreg", more->index,
                             more->nsetmax, c->code[more->setmax_pc].line, less->index, less->nsetmax), -1;
        }
    return 0;
}

/* Block b has no warp that can issue. */
static int block_stuck(ctx *c, blk *b)
{
    uint64_t when = c->now + c->cost;
    if (!b->live) { /* finished: the grid's next block is owed to this slot (the scheduler dispatches) */
        if (setmaxnreg_uneven(c, b)) return -1;
        c->progress++;
        if (c->cluster_n > 1) { /* a cluster's slots are given back together, when all its blocks are done */
            b->done = 1;
            uint64_t end = 0;
            for (uint32_t r = 0; r < c->cluster_n; r++) {
                if (!b->peer[r]->done) return 0;
                if (b->peer[r]->end > end) end = b->peer[r]->end;
            }
            for (uint32_t r = 0; r < c->cluster_n; r++) slot_free(c, b->peer[r], end);
            return 0;
        }
        slot_free(c, b, b->end);
        return 0;
    }
    if (b->parked) {
        /* lanes that found an mbarrier phase incomplete try again first; a bar.sync
         * opens only when no lane can go on otherwise (every live lane is at it) */
        b->stalled = c->writes == b->round_writes && !peer_runs(c, b) ? b->stalled + 1 : 0;
        uint64_t due = emu_tma_next_due(c, b);
        if (due != UINT64_MAX) { /* a bulk copy still to land: the waits look again when it has */
            b->stalled = 0;
            if (due > when) when = due;
        }
        b->round_writes = c->writes;
        if (c->quiet_writes != c->writes) {
            c->quiet_writes = c->writes;
            c->quiet_rounds = 0;
        }
        if (b->stalled) c->quiet_rounds++;
        if (b->stalled > BLOCK_ROUNDS && c->quiet_rounds > STALLED_ROUNDS) {
            for (uint32_t i = 0; i < c->nwarps; i++)
                for (int l = 0; l < WARP; l++)
                    if (b->warps[i].st[l] == LANE_YIELD)
                        return emu_fault(c, &b->warps[i], l, "deadlock: every warp waits (mbarrier phases that nothing "
                                     "completes, a setmaxnreg.inc for registers no warpgroup frees, a wgmma.wait_group for a "
                                     "group another warp of the warpgroup never commits, or a bar.sync "
                                     "the waiting warps never reach)"), -1;
        }
        unpark(c, b, when);
        return 0;
    }
    /* no lane can go on: a block-wide bar.sync opens, from the last warp's arrival, when every
     * waiting thread waits there; threads at another barrier (a counted one, or bar.sync with
     * another id) never arrive: a deadlock, as on a GPU */
    int any = 0;
    const warp *at0 = NULL, *other = NULL;
    int l0 = 0, lo = 0;
    for (uint32_t i = 0; i < c->nwarps; i++) {
        warp *w = &b->warps[i];
        if (w->sched != W_WAIT) continue;
        for (int l = 0; l < WARP; l++) {
            if (w->st[l] == LANE_BARRIER) {
                if (!at0) { at0 = w; l0 = l; }
                else if (w->bar[l] != at0->bar[l0] && !other) { other = w; lo = l; }
                if (w->ready > when) when = w->ready;
                any = 1;
            } else if (w->st[l] == LANE_NBARRIER && !other) {
                other = w;
                lo = l;
            }
        }
    }
    if (at0 && other) {
        uint32_t t0[3], t1[3];
        thread_of(c, at0, l0, t0);
        thread_of(c, other, lo, t1);
        return emu_fault(c, at0, l0, "deadlock: thread (%u,%u,%u) waits at bar.sync %u for every thread of the block, "
                         "while thread (%u,%u,%u) waits at %s %u, which it never leaves", t0[0], t0[1], t0[2],
                         at0->bar[l0], t1[0], t1[1], t1[2], other->st[lo] == LANE_NBARRIER ? "the counted barrier"
                         : "bar.sync", other->bar[lo]), -1;
    }
    if (!any) /* only counted barriers, short of their counts: nothing will come */
        for (uint32_t i = 0; i < c->nwarps; i++)
            for (int l = 0; l < WARP; l++)
                if (b->warps[i].st[l] == LANE_NBARRIER)
                    return emu_fault(c, &b->warps[i], l, "deadlock: waiting at barrier %u, where %u threads have "
                                 "arrived and no other thread can run", b->warps[i].bar[l],
                                 b->bar_arrived[b->warps[i].bar[l]]), -1;
    for (uint32_t i = 0; i < c->nwarps; i++) {
        warp *w = &b->warps[i];
        if (w->sched != W_WAIT) continue;
        int go = 0;
        const mh_ptx_insn *red = w->red; /* bar.red: the block's reduction into each waiting lane's d */
        uint64_t v = !red ? 0 : red->boolop == 1 ? b->red_true : red->boolop == 2 ? b->red_true == b->red_all : b->red_true != 0;
        for (int l = 0; l < WARP; l++)
            if (w->st[l] == LANE_BARRIER) {
                w->st[l] = LANE_ACTIVE;
                if (red && red->o[0].kind == MH_OPK_REG) REG(w, red->o[0].reg, l) = v;
                go = 1;
            }
        w->red = NULL;
        if (go) wake(c, w, when);
    }
    b->red_true = b->red_all = 0;
    return 0;
}

/* A warp with no active lane: it waits (a barrier), is parked (mbarrier waits), has
 * finished, or goes on (lanes at a warp-synchronous instruction it can release). */
static int settle(ctx *c, warp *w)
{
    int yield = 0, wsync = 0, live = 0;
    for (int l = 0; l < WARP; l++) {
        uint8_t s = w->st[l];
        if (s == LANE_ACTIVE) return 0;
        yield |= s == LANE_YIELD;
        wsync |= s == LANE_WSYNC;
        live |= s != LANE_EXITED;
    }
    if (wsync && !yield) return 0;
    blk *b = w->b;
    sp_remove(c, w);
    b->running--;
    if (yield) {
        w->sched = W_PARK;
        b->parked++;
        b->park_writes = c->writes;
    } else if (!live) {
        w->sched = W_DONE;
        b->live--;
        if (w->ready > b->end) b->end = w->ready;
    } else {
        w->sched = W_WAIT;
    }
    return b->running ? 0 : block_stuck(c, b);
}

/* Issues warp w's next instruction: 1 when it did and the warp has active lanes left,
 * 2 when it did and has none, 0 when it had none to issue, 3 when it holds before a strong operation
 * (c->hold: run it in the quantum's serial part, emu_workers.c), -1 on a fault. */
/* Counting (launch{stats = true}) of an instruction the fast paths ran for a converged warp:
 * what emu_count_insn counts for an instruction without memory traffic, inline. */
static inline void count_fast(ctx *c, uint32_t pc, uint32_t pred_on)
{
    uint64_t *v = c->counts + (size_t)pc * MH_CT_COUNT;
    v[MH_CT_INST]++;
    v[MH_CT_THREAD_INST] += WARP;
    v[MH_CT_PRED_ON] += pred_on;
}

/* After an instruction issued: the device's instruction budget, and every few thousand
 * instructions a stop request or the time limit (-1: the launch stops). */
static inline int issued(ctx *c, const warp *w, int lane)
{
    if (c->d->max_warp_insns && c->warp_insns > c->d->max_warp_insns) {
        emu_fault(c, w, lane, "the launch ran more than %llu warp instructions, the device's max_insns budget "
                  "(endless loop?)", (unsigned long long)c->d->max_warp_insns);
        return -1;
    }
    return __builtin_expect((c->warp_insns & 0x3fff) == 0, 0) && emu_poll_stop(c) ? -1 : 0;
}

/* The end of a fast path's instruction: the converged warp goes on at kpc (its lanes' pc[]
 * written later, emu_sync_pcs), costing what c->cost says. */
static inline int fast_done(ctx *c, warp *w, uint32_t kpc)
{
    w->known = 1;
    w->kpc = kpc;
    w->kmask = 0xffffffffu;
    w->pc_stale = 1;
    return issued(c, w, 0) ? -1 : 1;
}

static int step_warp(ctx *c, warp *w)
{
    const mh_ptx_insn *code = c->code;
    for (;;) {
        int forced = 0; /* a warp-synchronous group released without all members */
        uint32_t pc = w->kpc, mask = w->kmask;
        if (!w->known) {
            pc = UINT32_MAX;
            mask = 0;
            for (int l = 0; l < WARP; l++) {
                if (w->st[l] != LANE_ACTIVE) continue;
                if (w->pc[l] < pc) { pc = w->pc[l]; mask = 1u << l; }
                else if (w->pc[l] == pc) mask |= 1u << l;
            }
        }
        if (!mask) {
            /* nothing can run: lanes still waiting at a warp-synchronous
             * instruction for members that will not come go on without them
             * (unless some only yielded at an mbarrier wait: they come back) */
            for (int l = 0; l < WARP; l++)
                if (w->st[l] == LANE_YIELD) return 0;
            pc = UINT32_MAX;
            for (int l = 0; l < WARP; l++)
                if (w->st[l] == LANE_WSYNC && w->pc[l] < pc) pc = w->pc[l];
            if (pc == UINT32_MAX) return 0;
            for (int l = 0; l < WARP; l++)
                if (w->st[l] == LANE_WSYNC && w->pc[l] == pc) { w->st[l] = LANE_ACTIVE; mask |= 1u << l; }
            forced = 1;
        }
        if (pc >= c->ncode) { /* fell off the end: like ret */
            emu_sync_pcs(w);
            for (int l = 0; l < WARP; l++) if (mask >> l & 1) w->st[l] = LANE_EXITED;
            w->known = 0;
            continue;
        }
        const mh_ptx_insn *in = &code[pc];
        if ((pc != w->sb_pc || !w->known) && !forced && c->sb[pc].nsrc) { /* the scoreboard: operands ready? */
            uint64_t at = emu_sb_ready(c, w, pc);
            if (at > c->now) {
                c->sb_until = at;
                return 4;
            }
        }
        if (__builtin_expect(c->hold, 0) && c->strong[pc]) return 3; /* held: run in the quantum's serial part */
        c->cur = in;
        if (__builtin_expect(w->tile_live, 0) && c->acc_touch[pc]) emu_acc_flush(c, w); /* emu_mma.c */
        if (mask == 0xffffffffu && in->op == MH_OP_BRA && !w->written && !(in->mods & MH_MOD_MARKER)) {
            /* a converged warp's branch that every lane takes or none does (a loop's back edge):
             * no lane loop of the general path; a divergent one goes there */
            int uniform = 1, taken = 1;
            if (in->guard >= 0) { /* the lanes whose guard is on, as a mask (a loop that vectorises) */
                const uint64_t *g = &REG(w, (uint32_t)in->guard, 0);
                uint32_t on = 0;
                for (int l = 0; l < WARP; l++) on |= (uint32_t)(g[l] != 0) << l;
                if (in->guard_neg) on = ~on;
                taken = on != 0;
                uniform = on == 0 || on == 0xffffffffu;
            }
            uint32_t to = taken ? in->o[0].reg : pc + 1;
            if (uniform) {
                c->warp_insns++;
                c->thread_insns += taken ? WARP : 0; /* the lanes its guard let through, as the general path counts */
                c->cost = 1;
                if (c->counts) { /* counting: the instruction and its stall reasons (emu_stalls.c) */
                    count_fast(c, pc, taken ? WARP : 0);
                    emu_stall_issue(c, w, c->now);
                }
                return fast_done(c, w, to);
            }
        }
        if (mask == 0xffffffffu && c->fast[pc] >= EMU_FK_MEM && in->guard < 0 && !w->written) {
            /* a converged warp's global load or store inside the allocation it touched last */
            if (emu_fast_mem(c, w, in, c->fast[pc])) return fast_done(c, w, pc + 1);
        } else if (mask == 0xffffffffu && c->fast[pc] && in->guard < 0 && !w->written) {
            /* the fast path (emu_fast.c): a converged warp's common ALU instruction, which
             * changes no lane's state and costs its warp one cycle */
            c->warp_insns++;
            c->thread_insns += WARP;
            c->cost = 1;
            if (c->counts) {
                count_fast(c, pc, WARP);
                emu_stall_issue(c, w, c->now);
            }
            if (c->fast[pc] >= EMU_FK_CONST) emu_fast_const(c, w, in, pc);
            else emu_fast_exec(w, in, c->fast[pc]);
            return fast_done(c, w, pc + 1);
        }
        if (mask == 0xffffffffu && (in->op == MH_OP_LD || in->op == MH_OP_ST) && in->space == MH_SP_SHARED &&
            in->guard < 0 && !c->slow && !w->written && emu_fast_shared(c, w, in)) /* emu_exec.c */
            return fast_done(c, w, pc + 1);
        emu_sync_pcs(w); /* the general path reads and moves pc[] */
        if (in->mods & MH_MOD_MARKER) { /* a marker comment: not an instruction, free */
            if (__builtin_expect(c->regions != NULL, 0)) emu_regions_marker(c, w, in, mask); /* who enters it */
            for (int l = 0; l < WARP; l++) w->pc[l] += (mask >> l) & 1;
            w->kpc = pc + 1; /* still right when it was known */
            continue;
        }
        int elect = in->op == MH_OP_CLUSTER && in->cmp == MH_CL_ELECT;
        int wsync = in->op == MH_OP_SHFL || in->op == MH_OP_VOTE || in->op == MH_OP_REDUX || in->op == MH_OP_MATCH ||
                    (in->op == MH_OP_BAR && in->cmp == 1) || in->op == MH_OP_MMA || elect; /* mma: the whole warp */
        if (wsync && !forced) {
            /* wait until every live lane of the member mask has arrived */
            int mi = in->op == MH_OP_SHFL ? 4 : in->op == MH_OP_VOTE || in->op == MH_OP_REDUX || in->op == MH_OP_MATCH ? 2
                   : elect ? 1 : 0;
            uint32_t members = 0; /* every arrived lane's mask: they may differ */
            for (int l = 0; l < WARP; l++)
                if (mask >> l & 1) members |= emu_member_mask(c, w, in, mi, l);
            uint32_t live = 0, here = mask;
            for (int l = 0; l < WARP; l++) {
                live |= (uint32_t)(w->st[l] != LANE_EXITED) << l;
                if (w->st[l] == LANE_WSYNC && w->pc[l] == pc) here |= 1u << l;
            }
            if ((here & members & live) != (members & live)) {
                for (int l = 0; l < WARP; l++) if (mask >> l & 1) w->st[l] = LANE_WSYNC;
                w->known = 0;
                continue;
            }
            /* with the arrivals go the waiting lanes whose own group is all here (a lane of another,
             * still incomplete group waits on: it must not run over the lanes it has) */
            uint32_t run = mask;
            for (int l = 0; l < WARP; l++) {
                if (!((here & ~mask) >> l & 1)) continue;
                uint32_t own = emu_member_mask(c, w, in, mi, l);
                if ((here & own & live) == (own & live)) run |= 1u << l;
            }
            for (int l = 0; l < WARP; l++) if ((run >> l & 1) && w->st[l] == LANE_WSYNC) w->st[l] = LANE_ACTIVE;
            mask = run;
        }
        if (__builtin_expect(c->slow, 0)) {
            if (w->written && emu_strict_sources(c, w, in, mask)) return -1;
            if (c->counts) emu_count_insn(c, w, in, mask);
        }
        uint32_t next;
        c->cost = 0;
        int rc = emu_exec_insn(c, w, in, mask, &next);
        if (rc < 0 || c->faulted) return -1;
        if (__builtin_expect(c->slow, 0)) {
            if (w->written) emu_strict_dests(c, w, in, mask);
            if (c->counts) emu_stall_issue(c, w, c->now); /* its cost is known now */
        }
        /* still converged when the lanes that ran are all the active ones and
         * went on together (exec_insn says so with rc == 1; with 3, the fast path,
         * also that no lane's state changed) */
        uint32_t active = mask;
        if (rc != 3) {
            active = 0;
            for (int l = 0; l < WARP; l++) active |= (uint32_t)(w->st[l] == LANE_ACTIVE) << l;
        }
        w->known = rc == 3 || (rc == 1 && active == mask);
        w->kpc = next;
        w->kmask = mask;
        if (issued(c, w, __builtin_ctz(mask))) return -1;
        return active ? 1 : 2;
    }
}


/* ---- the device: every SM in virtual-time order ----------------------------------- */
/* Every SM with work advances in turn: the one whose next event (an instruction's issue or a
 * slot's dispatch) comes first runs for a quantum, until it passes the next SM's time by
 * QUANTUM cycles, so a block spinning on a flag another SM's block stores sees the store
 * about when a GPU would (within QUANTUM cycles).  Blocks are dispatched in blockIdx order:
 * the first wave block j to SM j % SMs at cycle j (one block a cycle, round the SMs), then
 * each next block to the slot that freed first (the lower SM on a tie), decided only once
 * every SM has reached that cycle, so the order is the GPU's and the same every run.  An SM
 * stops issuing at a vacancy until it is dispatched, so one SM's issue order is exactly what
 * the per-SM issue model gives: a launch's trace does not depend on the quantum. */
#define QUANTUM 256
#define LONE_QUANTUM 4096

/* Cycles and warp instructions without progress anywhere before emu looks for a grid-wide
 * stall; and the span of addresses a waiting warp's loads may cover (a poll of flags).  A
 * stall is a deadlock when every live warp waits at a barrier or an mbarrier or spins: polls
 * twice more at one pc with all its registers unchanged (checked for at most STALL_INSNS
 * more warp instructions; a loop over a small tile changes its registers and is not one). */
#define STALL_CYCLES (1ull << 14)
#define STALL_INSNS (1ull << 18)
#define POLL_SPAN 4096
/* A spin that counts (`while (flag[0] == 0) n++;` changes a register each poll): a warp whose
 * loads since the last progress all read one word at one pc, while no warp of the grid made
 * progress for SPIN_INSNS warp instructions and every other live warp waits too, is taken for
 * a spin (issue 36; a computation that rereads one word for that long without a store is not). */
#define SPIN_INSNS (1ull << 22)

/* The cycle of SM sm's next event: its next issue or its earliest vacancy. */
static uint64_t sm_next_event(vsm *sm)
{
    uint64_t t = sm->vacant_at;
    for (int i = 0; i < SUBPARTS; i++) {
        subpart *p = &sm->sps[i];
        if (!p->n) continue;
        warp *w = p->best ? p->best : sp_find(p);
        uint64_t ti = w->ready > p->free ? w->ready : p->free;
        if (ti < t) t = ti;
    }
    return t;
}

/* The blocks of the grid's next cluster (blocks in dispatch order from `first`) to the slots
 * b[0..n), rank by rank, each knowing the others; they start at `when`. */
static int start_cluster(ctx *c, blk **b, uint64_t first, uint64_t when)
{
    uint32_t n = emu_cluster_size(c);
    for (uint32_t r = 0; r < n; r++)
        if (start_block(c, b[r], emu_cluster_block_of(c, first + r), when < b[r]->end ? b[r]->end : when)) return -1;
    for (uint32_t r = 0; r < n; r++) {
        b[r]->rank = r;
        for (uint32_t k = 0; k < n; k++) b[r]->peer[k] = b[k];
    }
    return 0;
}

/* With clusters: SM sm's earliest vacancy waits until n slots (on any SMs) are free; then the
 * next cluster takes the n that freed first (the lower SM on a tie), from when the last did. */
static int dispatch_cluster(ctx *c, vsm *sm)
{
    blk *b = NULL;
    for (uint32_t s = 0; s < c->resident; s++) {
        blk *x = &sm->blks[s];
        if (x->vacant == 1 && (!b || x->end < b->end)) b = x;
    }
    if (b) {
        b->vacant = 2; /* waiting for a whole cluster's slots */
        c->cluster_waiting++;
    }
    sm->vacant_at = UINT64_MAX;
    for (uint32_t s = 0; s < c->resident; s++)
        if (sm->blks[s].vacant == 1 && sm->blks[s].end < sm->vacant_at) sm->vacant_at = sm->blks[s].end;
    uint32_t n = c->cluster_n;
    while (c->cluster_waiting >= n && c->next_block < c->nblocks) {
        blk *pick[MH_EMU_MAX_CLUSTER];
        uint64_t when = 0;
        for (uint32_t r = 0; r < n; r++) {
            blk *best = NULL;
            for (uint32_t i = 0; i < c->nsms; i++)
                for (uint32_t s = 0; s < c->resident; s++) {
                    blk *x = &c->sms[i].blks[s];
                    if (x->vacant == 2 && (!best || x->end < best->end)) best = x;
                }
            best->vacant = 0;
            pick[r] = best;
            if (best->end > when) when = best->end;
        }
        c->cluster_waiting -= n;
        if (start_cluster(c, pick, c->next_block, when)) return -1;
        c->next_block += n;
        for (uint32_t r = 0; r < n; r++) pick[r]->sm->next = 0; /* recomputed by the caller's loop */
    }
    if (c->next_block >= c->nblocks) { /* nothing more to hand out: the vacancies stay empty */
        for (uint32_t i = 0; i < c->nsms; i++) {
            for (uint32_t s = 0; s < c->resident; s++) c->sms[i].blks[s].vacant = 0;
            c->sms[i].vacant_at = UINT64_MAX;
        }
        c->cluster_waiting = 0;
    }
    c->cb = NULL;
    return 0;
}

/* The grid's next block to SM sm's earliest vacant slot. */
static int dispatch(ctx *c, vsm *sm)
{
    if (c->cluster_n > 1) return dispatch_cluster(c, sm);
    blk *b = NULL;
    for (uint32_t s = 0; s < c->resident; s++) {
        blk *x = &sm->blks[s];
        if (x->vacant && (!b || x->end < b->end)) b = x;
    }
    int rc = 0;
    if (b && c->next_block < c->nblocks) rc = start_block(c, b, c->next_block++, b->end);
    if (c->next_block >= c->nblocks) /* nothing more to hand out: the vacancies stay empty */
        for (uint32_t s = 0; s < c->resident; s++) sm->blks[s].vacant = 0;
    else if (b)
        b->vacant = 0;
    sm->vacant_at = UINT64_MAX;
    for (uint32_t s = 0; s < c->resident; s++)
        if (sm->blks[s].vacant && sm->blks[s].end < sm->vacant_at) sm->vacant_at = sm->blks[s].end;
    c->cb = NULL;
    return rc;
}

/* Runs SM sm through the issue model until its next issue would pass `limit` or reach a
 * vacancy; sm->next is then its next event. */
int emu_run_sm(ctx *c, vsm *sm, uint64_t limit)
{
    for (;;) {
        /* the sub-partition that issues first, and its warp */
        uint64_t t = UINT64_MAX;
        subpart *s = NULL;
        for (int i = 0; i < SUBPARTS; i++) {
            subpart *p = &sm->sps[i];
            if (!p->n) continue;
            if (!p->best) sp_find(p);
            else if (!p->pf) { /* found at an earlier issue: its first line should be here by now */
                prefetch_rows(c, p->best);
                p->pf = 1;
            }
            uint64_t ready = p->ready[p->bi];
            uint64_t ti = ready > p->free ? ready : p->free;
            if (ti < t) { t = ti; s = p; }
        }
        if (!s || t >= sm->vacant_at || t > limit) {
            sm->next = t < sm->vacant_at ? t : sm->vacant_at;
            return 0;
        }
        warp *w = s->best;
        blk *b = w->b;
        c->now = t;
        c->cost = 0;
        enter_block(c, b);
        int rc = step_warp(c, w);
        if (rc < 0) return -1;
        if (rc == 4) { /* a source not ready (emu_scoreboard.c): the warp waits, the sub-partition issues another */
            if (__builtin_expect(c->counts != NULL, 0)) emu_stall_defer(c, w, c->sb_until);
            w->ready = s->ready[w->spi] = c->sb_until;
            s->best = NULL;
            continue;
        }
        if (rc == 3) { /* a strong operation: the SM waits for the quantum's serial part (emu_workers.c) */
            sm->held = 1;
            sm->next = t;
            return 0;
        }
        if (rc) {
            uint64_t go = t; /* its pipe takes it (emu_model.c's rates): a warp behind another on it waits */
            uint32_t pc = (uint32_t)(c->cur - c->code);
            uint16_t pp = c->pipe[pc];
            if (pp) {
                uint64_t *pf = &s->pipe_free[pp >> 8];
                if (*pf > go) go = *pf;
                *pf = go + (pp & 0xff);
                if (__builtin_expect(c->counts != NULL, 0) && go > t) { /* counted as Nsight's math pipe throttle */
                    w->st_end += go - t;
                    w->st_cost_why = MH_CT_STALL_MATH;
                }
            }
            emu_sb_issued(c, w, pc, go);
            s->free = t + 1;
            uint64_t ready = go + c->cost;
            w->sb_pc = EMU_NO_PC;
            if (w->known && w->kpc <= c->ncode) {
                /* the next instruction's operands (emu_scoreboard.c), looked at now rather than when
                 * the warp comes up again and finds them not ready (c->sb has an empty entry at ncode) */
                if (c->sb[w->kpc].nsrc) {
                    uint64_t at = emu_sb_ready(c, w, w->kpc);
                    if (__builtin_expect(c->counts != NULL, 0) && at > ready) emu_stall_defer(c, w, at);
                    ready = at > ready ? at : ready;
                }
                w->sb_pc = w->kpc;
            }
            w->ready = s->ready[w->spi] = ready;
            s->best = NULL;
        }
        if (c->released) {
            c->released = 0;
            wake_released(c, b, t + c->cost);
        }
        if (rc != 1 && settle(c, w)) return -1;
        if (b->parked && c->writes != b->park_writes) unpark(c, b, t + c->cost);
    }
}

/* A warp that may wait: at a barrier or an mbarrier, or polling a few addresses since the last
 * progress; `confirmed` asks more of a polling warp: it polled at the same pc twice more with the
 * same registers (a spin: a loop whose state does not change, not a loop over a small tile). */
static int warp_waits(const ctx *c, const warp *w, int confirmed)
{
    if (w->sched == W_WAIT || w->sched == W_PARK) return 1;
    if (!(w->ld_epoch == c->epoch && w->ld_hi - w->ld_lo <= POLL_SPAN)) return 0;
    return !confirmed || w->spins >= 2;
}

/* During a verification: warp w polls at pc; its registers (every lane) the same as at its last poll there? */
void emu_spin_observe(ctx *c, warp *w, uint32_t pc)
{
    emu_sync_pcs(w);
    if (w->tile_live) emu_acc_flush(c, w);
    uint32_t nregs = c->nregs;
    uint64_t h = 1469598103934665603ull ^ pc;
    for (size_t i = 0; i < (size_t)nregs * WARP; i++) h = (h ^ w->r[i]) * 1099511628211ull;
    for (int l = 0; l < WARP; l++) h = (h ^ w->pc[l] ^ (uint64_t)w->st[l] << 32) * 1099511628211ull;
    if (pc == w->ld_pc && h == w->spin_hash) w->spins++;
    else w->spins = 0;
    w->spin_hash = h;
}

/* Whether every live warp of the resident blocks waits (confirmed: see warp_waits). */
static int all_wait(const ctx *c, int confirmed)
{
    for (uint32_t i = 0; i < c->nsms; i++)
        for (uint32_t s = 0; s < c->resident; s++) {
            const blk *b = &c->sms[i].blks[s];
            if (!b->busy) continue;
            for (uint32_t k = 0; k < c->nwarps; k++)
                if (b->warps[k].sched != W_DONE && !warp_waits(c, &b->warps[k], confirmed)) return 0;
        }
    return 1;
}

/* Whether every live warp waits at a barrier or an mbarrier, or polls one word at one pc. */
static int all_poll_word(const ctx *c)
{
    for (uint32_t i = 0; i < c->nsms; i++)
        for (uint32_t s = 0; s < c->resident; s++) {
            const blk *b = &c->sms[i].blks[s];
            if (!b->busy) continue;
            for (uint32_t k = 0; k < c->nwarps; k++) {
                const warp *w = &b->warps[k];
                if (w->sched == W_DONE || w->sched == W_WAIT || w->sched == W_PARK) continue;
                if (w->ld_epoch != c->epoch || w->ld_lo != w->ld_hi || w->ld_pcs) return 0;
            }
        }
    return 1;
}

/* Where warp w waits: the pc of its poll, or of its first waiting lane. */
static uint32_t wait_pc(warp *w)
{
    if (w->sched == W_RUN) return w->ld_pc;
    emu_sync_pcs(w);
    for (int l = 0; l < WARP; l++)
        if (w->st[l] != LANE_EXITED) return w->pc[l];
    return w->pc[0];
}

/* A deadlock, verified: the fault names the lines the blocks wait at (up to 6 of them, with
 * their first blocks) and the blocks not yet resident. */
static int deadlock(ctx *c, uint64_t now)
{
    uint32_t lines[6], pcs[6], nblk[6], nl = 0, waiting = 0;
    char who[6][160];
    for (uint32_t s = 0; s < c->resident; s++) /* slot by slot: the first wave in blockIdx order */
        for (uint32_t i = 0; i < c->nsms; i++) {
            blk *b = &c->sms[i].blks[s];
            if (!b->busy) continue;
            warp *rep = NULL;
            for (uint32_t k = 0; k < c->nwarps; k++) {
                warp *w = &b->warps[k];
                if (w->sched == W_DONE) continue;
                if (!rep || (rep->sched != W_RUN && w->sched == W_RUN)) rep = w;
            }
            if (!rep) continue;
            waiting++;
            uint32_t pc = wait_pc(rep), line = pc < c->ncode ? c->code[pc].line : 0, j = 0;
            while (j < nl && lines[j] != line) j++;
            if (j == nl && nl < 6) {
                lines[nl] = line;
                pcs[nl] = pc;
                nblk[nl] = 0;
                who[nl][0] = 0;
                const char *op = pc < c->ncode ? mh_ptx_op_name((mh_ptx_op)c->code[pc].op) : "?";
                snprintf(who[nl], sizeof who[nl], "%s", op);
                nl++;
            }
            if (j < nl) {
                size_t n = strlen(who[j]);
                if (nblk[j] < 4)
                    snprintf(who[j] + n, sizeof who[j] - n, "%s(%u,%u,%u)", nblk[j] ? ", " : ") block ",
                             b->ctaid[0], b->ctaid[1], b->ctaid[2]);
                nblk[j]++;
            }
        }
    if (!waiting) return 0;
    char msg[4000];
    size_t n = (size_t)snprintf(msg, sizeof msg, "deadlock: no warp has made progress (a store, an atomic that changed "
                                "memory, a barrier arrival, an exit) for %llu cycles while every warp waits:",
                                (unsigned long long)(now - c->quiet_t));
    for (uint32_t j = 0; j < nl && n < sizeof msg; j++)
    {
        char where[1000];
        mh_ptx_where(c->m, pcs[j] < c->ncode ? c->code[pcs[j]].text_off : 0, lines[j], where, sizeof where);
        n += (size_t)snprintf(msg + n, sizeof msg - n, "%s %s (%s%s (%u block%s)", j ? ";" : "", where, who[j],
                              nblk[j] > 4 ? ", ..." : "", nblk[j], nblk[j] == 1 ? "" : "s");
    }
    if (c->next_block < c->nblocks && n < sizeof msg)
        snprintf(msg + n, sizeof msg - n, "; %llu blocks of the grid are not resident yet (an SM holds %u at once, "
                 "%u SMs: blocks that wait for later blocks need a cooperative launch or fewer blocks)",
                 (unsigned long long)(c->nblocks - c->next_block), c->resident, c->nsms);
    c->e->line = nl ? lines[0] : 0;
    mh_fail(c->e, MH_E_KERNEL_FAULT, "%.200s: %s: %s", c->m->path, c->f->short_name, msg);
    c->faulted = 1;
    return 1;
}

static int device_loop(ctx *c, uint32_t *run);

/* Runs the whole grid: the first wave, then every SM in virtual-time order; the longest
 * SM's end in *longest. */
int emu_run_grid(ctx *c, uint64_t *longest)
{
    uint64_t first = c->nblocks < (uint64_t)c->nsms * c->resident ? c->nblocks : (uint64_t)c->nsms * c->resident;
    for (uint32_t i = 0; i < c->nsms; i++) {
        vsm *sm = &c->sms[i];
        sm->id = i;
        sm->clock0 = (uint64_t)i * 1000003ull; /* SMs' %clock values are not aligned */
        sm->vacant_at = UINT64_MAX;
        for (uint32_t s = 0; s < c->resident; s++) sm->blks[s].sm = sm;
    }
    uint32_t cn = emu_cluster_size(c);
    first -= first % cn; /* whole clusters (emu_cluster_setup made sure one fits) */
    if (cn == 1) {
        for (uint64_t j = 0; j < first; j++) /* the first wave: one block a cycle, round the SMs */
            if (start_block(c, &c->sms[j % c->nsms].blks[j / c->nsms], j, j)) return -1;
    } else {
        for (uint64_t j = 0; j < first; j += cn) { /* a cluster's blocks on consecutive SMs */
            blk *pick[MH_EMU_MAX_CLUSTER];
            for (uint32_t r = 0; r < cn; r++) pick[r] = &c->sms[(j + r) % c->nsms].blks[(j + r) / c->nsms];
            if (start_cluster(c, pick, j, j)) return -1;
        }
    }
    c->next_block = first;
    c->epoch = 1;
    for (uint32_t i = 0; i < c->nsms; i++) c->sms[i].next = sm_next_event(&c->sms[i]);
    uint32_t *run = malloc((c->nsms ? c->nsms : 1) * sizeof *run);
    /* a kernel that reads the grid workspace (cg::this_grid()): known from its code, not from which
     * SM read it first, so that a trap's message does not depend on the order SMs ran in */
    for (uint32_t pc = 0; pc < c->ncode && !c->envreg_read; pc++)
        for (uint32_t k = 0; k < c->code[pc].nopnds; k++)
            if (c->code[pc].o[k].kind == MH_OPK_SREG &&
                (c->code[pc].o[k].reg == MH_SR_ENVREG0 + 1 || c->code[pc].o[k].reg == MH_SR_ENVREG0 + 2))
                c->envreg_read = 1;
    c->workers = 1;
    if (emu_flows_sms(c)) {
        free(run);
        run = NULL;
    }
    c->serial = emu_par_serial_reason(c);
    if (run && !c->serial) {
        if (emu_par_start(c, c->d->threads)) {
            emu_par_stop(c);
            free(run);
            run = NULL;
        } else
            c->workers = emu_par_workers(c);
    }
    if (!run) {
        mh_fail(c->e, MH_E_NO_MEMORY, "emu: out of memory for the launch");
        c->faulted = 1;
        return -1;
    }
    int rc = device_loop(c, run);
    emu_par_stop(c);
    free(run);
    if (rc) return -1;
    *longest = 0;
    for (uint32_t i = 0; i < c->nsms; i++)
        if (c->sms[i].end > *longest) *longest = c->sms[i].end;
    return 0;
}

/* Every SM in quanta until the grid is done (emu_run_grid's loop): 0, or -1.  The earliest event
 * (the lower SM on a tie) is found; a vacancy is dispatched then (so blocks go to slots in the
 * order their vacancies come, as before); an issue starts a quantum: every SM whose next event
 * is at most QUANTUM cycles later runs to that cycle (or to its next vacancy), one after another in
 * SM order or on the launch's workers (emu_workers.c), seeing the L2's and the bandwidths' state as
 * it was at the quantum's start plus its own changes (emu_memtime.c).  Then those changes are
 * applied in SM order and the grid-wide stall check looks. */
static int device_loop(ctx *c, uint32_t *run)
{
    for (;;) {
        vsm *a = NULL;
        uint32_t busy = 0;
        for (uint32_t i = 0; i < c->nsms; i++) {
            vsm *sm = &c->sms[i];
            if (sm->next == UINT64_MAX) continue;
            busy++;
            if (!a || sm->next < a->next) a = sm;
        }
        if (!a) break;
        uint64_t t1 = a->next;
        if (a->vacant_at <= t1) {
            if (dispatch(c, a)) return -1;
            if (c->cluster_n > 1) /* a cluster may have started on other SMs too */
                for (uint32_t i = 0; i < c->nsms; i++) c->sms[i].next = sm_next_event(&c->sms[i]);
            else
                a->next = sm_next_event(a);
            continue;
        }
        /* alone (one SM with work) it still comes back every LONE_QUANTUM cycles, so the stall
         * check below runs: a deadlock inside one SM is found too (issue 21's hostile round) */
        uint64_t limit = t1 + (busy == 1 ? LONE_QUANTUM : QUANTUM);
        uint32_t nrun = 0;
        for (uint32_t i = 0; i < c->nsms; i++)
            if (c->sms[i].next <= limit && c->sms[i].next < c->sms[i].vacant_at) run[nrun++] = i;
        int rc = 0;
        if (c->par) rc = emu_par_quantum(c, run, nrun, limit);
        else
            for (uint32_t i = 0; i < nrun && !rc; i++) {
                rc = emu_run_sm(c, &c->sms[run[i]], limit);
                /* a launch that never runs on workers: the SMs after it in this quantum see its L2
                 * lines and bandwidth at once (a miss in flight is waited for, not fetched again),
                 * as before threads; the same for any N, since it is on one worker for any N */
                if (c->serial) emu_mt_sm_end(c, run[i]);
            }
        emu_mt_quantum_end(c);
        if (rc || emu_flows_quantum_end(c)) return -1;
        if (c->progress != c->seen_progress) {
            c->seen_progress = c->progress;
            c->epoch++;
            c->progress_t = t1;
            c->progress_insns = c->quiet_insns = c->warp_insns;
            c->quiet_t = t1;
            c->verify = 0;
        } else if (c->verify) {
            if (all_wait(c, 1)) return deadlock(c, t1), -1;
            if (c->warp_insns - c->verify_insns > STALL_INSNS) { /* some warp's state changes: it works */
                c->verify = 0;
                c->epoch++;
                c->progress_t = t1;
                c->progress_insns = c->warp_insns;
            }
        } else if (t1 - c->progress_t > STALL_CYCLES && c->warp_insns - c->progress_insns > STALL_INSNS) {
            if (c->warp_insns - c->quiet_insns > SPIN_INSNS && all_poll_word(c)) return deadlock(c, t1), -1;
            if (all_wait(c, 0)) { /* every warp seems to wait: verify that the pollers spin */
                c->verify = 1;
                c->verify_insns = c->warp_insns;
                for (uint32_t i = 0; i < c->nsms; i++)
                    for (uint32_t s = 0; s < c->resident; s++)
                        for (uint32_t k = 0; c->sms[i].blks[s].busy && k < c->nwarps; k++)
                            c->sms[i].blks[s].warps[k].spins = 0;
            } else { /* some warp works: look again after another stretch */
                c->epoch++;
                c->progress_t = t1;
                c->progress_insns = c->warp_insns;
            }
        }
    }
    return 0;
}
