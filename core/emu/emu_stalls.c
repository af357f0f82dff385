/* emu_stalls.c - stall reasons per instruction (launch{stats = true}, issue 34): every cycle of a
 * warp's life between two of its issues is charged to one of Nsight Compute's reasons
 * (smsp__pcsamp_warps_issue_stalled_*), as warp-cycles, to the instruction that made it wait:
 * - the issue cycle itself: selected, to the instruction issued;
 * - cycles the warp could have issued but its sub-partition issued another warp's instruction:
 *   not_selected, to the instruction that then issued;
 * - the cost of its previous instruction beyond the issue cycle (a load's, a barrier's latency
 *   delays its warp's next issue, whatever that is), to that instruction:
 *   long_scoreboard (global, local, generic loads and atomics), short_scoreboard (shared loads and
 *   atomics, ldmatrix), lg_throttle / mio_throttle (global / shared stores, cp.async), math_pipe_throttle
 *   (mma, wmma, wgmma and its wait_group), membar (fences), wait (any other fixed latency);
 * - the cycles the next instruction waited for a row a pipe's instruction writes (the register
 *   scoreboard, emu_scoreboard.c): wait, to the previous instruction as well (emu_stall_defer);
 * - then, where the warp waited for others, to the instruction it waited at: barrier (bar.sync,
 *   barrier.cluster.wait, warp-synchronous instructions), sleeping (mbarrier try_wait / test_wait
 *   finding the phase incomplete), misc (setmaxnreg.inc waiting for registers).
 * Called only when counting (the scheduler tests c->counts): nothing is paid otherwise. */
#include "emu/emu_internal.h"
#include "emu/emu_counters.h"
#include "frontend/ptx_mma.h"
#include "frontend/ptx_tma.h"

/* The reason of the cycles instruction `in` costs its warp beyond its issue cycle. */
static uint8_t cost_reason(const ctx *c, const mh_ptx_insn *in)
{
    switch (in->op) {
    case MH_OP_LD:
        if (in->space == MH_SP_SHARED) return MH_CT_STALL_SHORT_SB;
        return in->space == MH_SP_PARAM ? MH_CT_STALL_WAIT : MH_CT_STALL_LONG_SB;
    case MH_OP_ATOM: case MH_OP_RED:
        return in->space == MH_SP_SHARED ? MH_CT_STALL_SHORT_SB : MH_CT_STALL_LONG_SB;
    case MH_OP_ST: return in->space == MH_SP_SHARED ? MH_CT_STALL_MIO_THROTTLE : MH_CT_STALL_LG_THROTTLE;
    case MH_OP_CP_ASYNC: return MH_CT_STALL_LG_THROTTLE;
    case MH_OP_MEMBAR: return MH_CT_STALL_MEMBAR;
    case MH_OP_BRA: return MH_CT_STALL_BRANCH;
    case MH_OP_MMA: {
        int k = c->mma[in->callee].kind;
        if (k == MH_MMA_LDMATRIX || k == MH_MMA_WMMA_LOAD) return MH_CT_STALL_SHORT_SB;
        if (k == MH_MMA_STMATRIX || k == MH_MMA_WMMA_STORE) return MH_CT_STALL_MIO_THROTTLE;
        return k == MH_MMA_SETMAXNREG ? MH_CT_STALL_MISC : MH_CT_STALL_MATH;
    }
    case MH_OP_TMA: return c->m->tma[in->callee].kind == MH_TMA_WAIT ? MH_CT_STALL_LONG_SB : MH_CT_STALL_WAIT;
    default: return MH_CT_STALL_WAIT;
    }
}

/* The reason of the cycles the warp waits for others after instruction `in` (its lanes at a
 * barrier, an incomplete mbarrier phase, ...). */
static uint8_t wait_reason(const mh_ptx_insn *in)
{
    switch (in->op) {
    case MH_OP_MBARRIER: return MH_CT_STALL_SLEEPING;
    case MH_OP_BAR: case MH_OP_CLUSTER: case MH_OP_SHFL: case MH_OP_VOTE: case MH_OP_REDUX: case MH_OP_MATCH:
        return MH_CT_STALL_BARRIER;
    default: return MH_CT_STALL_MISC;
    }
}

void emu_stall_issue(ctx *c, warp *w, uint64_t t)
{
    uint32_t pc = (uint32_t)(c->cur - c->code);
    uint64_t *v = c->counts + (size_t)pc * MH_CT_COUNT, ready = w->ready;
    if (w->st_pc != EMU_NO_PC && ready > w->st_last + 1) { /* the previous instruction's latency, then its wait */
        uint64_t *p = c->counts + (size_t)w->st_pc * MH_CT_COUNT, from = w->st_last + 1;
        uint64_t cost_to = w->st_end < ready ? w->st_end : ready;
        if (cost_to > from) p[w->st_cost_why] += cost_to - from;
        if (ready > w->st_end && ready > from) p[w->st_wait_why] += ready - (w->st_end > from ? w->st_end : from);
    }
    if (t > ready) v[MH_CT_STALL_NOT_SELECTED] += t - ready;
    v[MH_CT_STALL_SELECTED]++;
    const mh_ptx_insn *in = c->cur;
    w->st_last = t;
    w->st_end = t + (c->cost ? c->cost : 1);
    w->st_pc = pc;
    w->st_cost_why = cost_reason(c, in);
    w->st_wait_why = wait_reason(in);
}

void emu_stall_defer(ctx *c, warp *w, uint64_t until)
{
    if (w->st_pc == EMU_NO_PC || until <= w->st_end) return;
    uint64_t from = w->st_last + 1;
    if (w->st_end > from) { /* the previous instruction's own cost first, under its reason */
        c->counts[(size_t)w->st_pc * MH_CT_COUNT + w->st_cost_why] += w->st_end - from;
        w->st_last = w->st_end - 1;
    }
    w->st_end = until;
    w->st_cost_why = MH_CT_STALL_WAIT;
}
