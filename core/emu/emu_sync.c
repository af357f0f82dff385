/* emu_sync.c - what makes threads wait for or talk to each other: atomics,
 * mbarrier objects (arrivals, transaction bytes, phases), barriers with a
 * thread count (bar.sync a, b; bar.arrive), and the calls without a body emu
 * runs (vprintf and __assertfail: printf and assert). */
#include "emu/emu_internal.h"

#include <stdio.h>
#include <stdlib.h>

uint64_t emu_atomic(mh_ptx_aop op, mh_ptx_type t, unsigned char *p, uint64_t b, uint64_t cv)
{
    int bytes = elem_bytes(t), bits = bytes * 8;
    uint64_t old = ld_elem(p, bytes), r = old;
    int sgn = mh_ptx_type_is_signed(t);
    switch (op) {
    case AOP_ADD:
        if (mh_ptx_type_is_float(t)) r = fput(fget(old, t) + fget(b, t), t);
        else r = old + b;
        break;
    case AOP_MIN: case AOP_MAX:
        if (mh_ptx_type_is_float(t)) { /* f16/bf16 (cp.reduce.async.bulk): by value, a NaN loses, -0 below +0 */
            double x = fget(old, t), y = fget(b, t);
            int take_b = x != x || (y == y && (op == AOP_MIN ? (y < x || (y == x && (b >> (bits - 1) & 1)))
                                                          : (y > x || (y == x && !(b >> (bits - 1) & 1)))));
            r = take_b ? b : old;
            break;
        }
        if (op == AOP_MAX) {
            r = sgn ? (sext(old, bits) > sext(b, bits) ? old : b) : ((old & mask_bits(bits)) > (b & mask_bits(bits)) ? old : b);
            break;
        }
        r = sgn ? (sext(old, bits) < sext(b, bits) ? old : b) : ((old & mask_bits(bits)) < (b & mask_bits(bits)) ? old : b); break;
    case AOP_INC: r = (old & mask_bits(bits)) >= (b & mask_bits(bits)) ? 0 : old + 1; break;
    case AOP_DEC: r = ((old & mask_bits(bits)) == 0 || (old & mask_bits(bits)) > (b & mask_bits(bits))) ? b : old - 1; break;
    case AOP_AND: r = old & b; break;
    case AOP_OR: r = old | b; break;
    case AOP_XOR: r = old ^ b; break;
    case AOP_EXCH: r = b; break;
    case AOP_CAS: r = (old & mask_bits(bits)) == (b & mask_bits(bits)) ? cv : old; break;
    }
    memcpy(p, &r, (size_t)bytes);
    return old;
}

/* An mbarrier's transaction count and pending arrivals after a change (b.tx, b.pending already
 * updated): refuses what the ISA leaves undefined, completes the phase when neither is pending. */
static int mb_settle(ctx *c, warp *w, int l, unsigned char *p, mbar b, int completes)
{
    if (b.pending < 0)
        return emu_fault(c, w, l, "mbarrier: more arrivals than the %lld it expects per phase", (long long)b.expected), -1;
    if (b.tx > 0xFFFFF || b.tx < -0xFFFFF)
        return emu_fault(c, w, l, "mbarrier: transaction count %lld out of range", (long long)b.tx), -1;
    if (b.pending == 0 && b.tx == 0 && completes) { /* the phase completes */
        b.phase ^= 1;
        b.pending = b.expected;
        if (c->hz) emu_hz_phase(c, w, p);
        if (c->flows) emu_flows_complete(c, w, l, p);
    }
    mb_store(p, b);
    return 0;
}

int emu_mbar_tx(ctx *c, warp *w, int l, uint64_t addr, int64_t bytes)
{
    unsigned char *p = emu_mem(c, w, l, MH_SP_SHARED, addr, 8, 1);
    return p ? emu_mbar_tx_host(c, w, l, p, bytes) : -1;
}

int emu_mbar_tx_host(ctx *c, warp *w, int l, unsigned char *p, int64_t bytes)
{
    mbar b = mb_load(p);
    b.tx -= bytes;
    c->progress++;
    return mb_settle(c, w, l, p, b, 1);
}

/* What one instruction's arrivals on an mbarrier cost beyond its issue: lanes arriving on one
 * mbarrier (every thread of a libcu++ cuda::barrier) are read-modify-writes of one word, which the
 * SM's memory pipe does one after another, not merged as a load's broadcast (the model's
 * mbar_lane_clk cycles a lane beyond the first, emu_model.c); one lane's arrival costs nothing more. */
static uint64_t arrivals_cost(ctx *c, const warp *w, const mh_ptx_opnd *a, uint32_t emask)
{
    uint64_t ad[WARP];
    uint32_t n = 0, most = 1, same = 1;
    for (int l = 0; l < WARP; l++)
        if (emask >> l & 1) ad[n++] = address(c, w, a, l);
    while (same < n && ad[same] == ad[0]) same++;
    if (same == n) most = n; /* (the common case: every lane on one barrier) */
    else
        for (uint32_t i = 0; i < n; i++) {
            uint32_t k = 1;
            for (uint32_t j = i + 1; j < n; j++) k += ad[j] == ad[i];
            if (k > most) most = k;
        }
    uint32_t extra = (uint32_t)((most - 1) * c->d->model->mbar_lane_clk + 0.5);
    return extra ? emu_pipe_cost(c, 1 + extra) : 0;
}

/* mbarrier.arrive(_drop)(.expect_tx) / expect_tx / complete_tx / test_wait / try_wait /
 * pending_count / inval and cp.async.mbarrier.arrive (emu's cp.async copies at issue, so it
 * arrives at once).  A phase completes when no arrival and no transaction byte is pending; a
 * wait that finds its phase not complete sets its predicate false and the lane yields, so the
 * other warps run before it tries again.  The state an arrive returns is emu's own: the phase
 * it arrived at in bit 63, the arrivals then still pending in the low bits (pending_count). */
int emu_exec_mbarrier(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t emask)
{
    const mh_ptx_opnd *o = in->o;
    int k = in->cmp, ai = mh_mb_addr_opnd(k);
    c->cost += 2;
    if ((k == MH_MB_ARRIVE || k == MH_MB_ARRIVE_DROP || k == MH_MB_ARRIVE_EXPECT_TX || k == MH_MB_ARRIVE_DROP_EXPECT_TX) &&
        (emask & (emask - 1)) && c->d->model->mbar_lane_clk > 0) /* (the model's 0: no lane costs more, no scan) */
        c->cost += arrivals_cost(c, w, &o[ai], emask);
    if (emu_tma_settle(c, w, w->b, c->now)) return -1; /* bulk copies that ended by now */
    for (int l = 0; l < WARP; l++) {
        if (!(emask >> l & 1)) continue;
        if (ai < 0) { /* pending_count d, state */
            put(c, w, o[0].reg, l, val(c, w, &o[1], l) & MH_MB_FIELD, MH_PT_B32);
            continue;
        }
        int wait = k == MH_MB_TEST_WAIT || k == MH_MB_TRY_WAIT;
        unsigned char *p = emu_mem(c, w, l, in->space ? in->space : MH_SP_SHARED, address(c, w, &o[ai], l), 8, !wait);
        if (!p) return -1;
        if (k == MH_MB_INVAL) { /* the object is no longer an mbarrier: emu zeroes it */
            memset(p, 0, 8);
            continue;
        }
        mbar b = mb_load(p);
        int64_t arrive = 0;
        switch (k) {
        case MH_MB_ARRIVE: case MH_MB_ARRIVE_DROP: arrive = in->nopnds > 2 ? (int64_t)val(c, w, &o[2], l) : 1; break;
        case MH_MB_ARRIVE_EXPECT_TX: case MH_MB_ARRIVE_DROP_EXPECT_TX: b.tx += (int64_t)val(c, w, &o[2], l); arrive = 1;
            if (c->hz) emu_hz_expect(c, w, p);
            break;
        case MH_MB_EXPECT_TX: b.tx += (int64_t)val(c, w, &o[1], l);
            if (c->hz) emu_hz_expect(c, w, p);
            break;
        case MH_MB_COMPLETE_TX: b.tx -= (int64_t)val(c, w, &o[1], l); break;
        case MH_MB_CP_ASYNC_ARRIVE: arrive = (in->mods & MH_MOD_NOINC) ? 1 : 0; break; /* without .noinc: +1 then -1 */
        default: { /* test_wait / try_wait: is the phase of the state (or of the parity) complete? */
            uint64_t s = val(c, w, &o[2], l);
            int waited = (in->mods & MH_MOD_PARITY) ? (int)(s & 1) : (int)(s >> 63);
            int done = waited != b.phase;
            put(c, w, o[0].reg, l, (uint64_t)done, MH_PT_PRED);
            if (!done) w->st[l] = LANE_YIELD; /* its pc moves on: the loop around it asks again */
            else if (c->hz) emu_hz_observe(c, w, p);
            if (c->flows) emu_flows_wait(c, w, l, p, done);
            continue;
        }
        }
        if (arrive < 0 || arrive > 0xFFFFF)
            return emu_fault(c, w, l, "mbarrier: an arrival count of %lld (1 to 2^20 - 1)", (long long)arrive), -1;
        int phase = b.phase;
        b.pending -= arrive;
        if (k == MH_MB_ARRIVE_DROP || k == MH_MB_ARRIVE_DROP_EXPECT_TX) { /* this phase's and the next ones' */
            b.expected -= arrive;
            if (b.expected < 0)
                return emu_fault(c, w, l, "mbarrier: arrive_drop below an expected count of 0"), -1;
        }
        int64_t left = b.pending;
        if (mb_settle(c, w, l, p, b, arrive || k == MH_MB_COMPLETE_TX)) return -1;
        if (arrive && o[0].kind == MH_OPK_REG) /* the state: the phase arrived at, the arrivals then pending */
            put(c, w, o[0].reg, l, (uint64_t)phase << 63 | ((uint64_t)left & MH_MB_FIELD), MH_PT_B64);
    }
    return 0;
}

/* bar.sync a, b (wait) and bar.arrive a, b (go on): b threads, a multiple of
 * 32, arriving at barrier a release the ones waiting there. */
int emu_bar_counted(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t emask)
{
    int l0 = __builtin_ctz(emask);
    uint64_t id = val(c, w, &in->o[0], l0);
    uint64_t need = in->nopnds > 1 ? val(c, w, &in->o[1], l0) : c->nthreads;
    if (id >= NUM_BARRIERS) return emu_fault(c, w, l0, "barrier %llu: there are %d", (unsigned long long)id, NUM_BARRIERS), -1;
    if (need == 0 || need % WARP || need > (uint64_t)c->nwarps * WARP)
        return emu_fault(c, w, l0, "barrier %llu: a thread count of %llu (a multiple of 32, at most the block's %u)",
                     (unsigned long long)id, (unsigned long long)need, c->nwarps * WARP), -1;
    int wait = in->cmp != 2;
    for (int l = 0; l < WARP; l++)
        if (emask >> l & 1) {
            c->bar_arrived[id]++;
            if (wait) {
                w->st[l] = LANE_NBARRIER;
                w->bar[l] = (uint8_t)id;
            }
        }
    if (c->bar_arrived[id] < need) return 0;
    c->bar_arrived[id] = 0; /* complete: everyone waiting there goes on */
    for (uint32_t i = 0; i < c->nwarps; i++)
        for (int l = 0; l < WARP; l++)
            if (c->warps[i].st[l] == LANE_NBARRIER && c->warps[i].bar[l] == id) c->warps[i].st[l] = LANE_ACTIVE;
    c->released = 1; /* the scheduler wakes the warps that have lanes going on */
    return 0;
}

/* ---- calls without a body: printf and assert ---------------------------------- */

typedef struct {
    ctx *c;
    const warp *w;
    int lane;
    uint64_t args;          /* the argument buffer's address */
} printf_ctx;

static int pf_arg(void *p, uint64_t off, void *dst, uint32_t size)
{
    printf_ctx *x = p;
    const unsigned char *s = emu_mem(x->c, x->w, x->lane, MH_SP_GENERIC, x->args + off, size, 0);
    if (!s) return -1;
    memcpy(dst, s, size);
    return 0;
}

/* a NUL-terminated string at a generic address, cut at cap - 1 bytes */
static int pf_str(void *p, uint64_t addr, char *dst, size_t cap)
{
    printf_ctx *x = p;
    size_t i = 0;
    for (; i + 1 < cap; i++) {
        const unsigned char *s = emu_mem(x->c, x->w, x->lane, MH_SP_GENERIC, addr + i, 1, 0);
        if (!s) return -1;
        if (!*s) break;
        dst[i] = (char)*s;
    }
    dst[i] = 0;
    return 0;
}

/* argument k of a call (a .param variable of the caller's call sequence), up to 8 bytes */
static uint64_t call_arg(ctx *c, const warp *w, int lane, const mh_ptx_insn *in, int k)
{
    const mh_ptx_var *v = &c->m->vars[in->o[in->cmp + k].sym];
    uint64_t x = 0;
    memcpy(&x, frame(c, w, lane, (uint32_t)v->func, 2) + v->offset, v->size < 8 ? v->size : 8);
    return x;
}

/* vprintf(format, args) and __assertfail(message, file, line, function, char size): the
 * only functions without a body emu runs (mh_emu_check_kernel refuses the others).  The
 * lanes print in lane order; what they print comes out after the launch. */
int emu_extern_call(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t emask)
{
    const mh_ptx_func *g = &c->m->funcs[in->callee];
    int assert_fail = !strcmp(g->name, "__assertfail");
    for (int l = 0; l < WARP; l++) {
        if (!(emask >> l & 1)) continue;
        printf_ctx x = {c, w, l, 0};
        mh_printf_io io = {&x, pf_arg, pf_str};
        if (assert_fail) {
            char msg[512], file[512], fn[512];
            uint32_t line = (uint32_t)call_arg(c, w, l, in, 2);
            if (pf_str(&x, call_arg(c, w, l, in, 0), msg, sizeof msg) ||
                pf_str(&x, call_arg(c, w, l, in, 1), file, sizeof file) ||
                pf_str(&x, call_arg(c, w, l, in, 3), fn, sizeof fn))
                return -1;
            emu_fault(c, w, l, "assertion `%.200s` failed at %.150s:%u in %.150s", msg, file, line, fn);
            return -1;
        }
        char fmt[4096];
        uint64_t f = call_arg(c, w, l, in, 0);
        x.args = call_arg(c, w, l, in, 1);
        int32_t n = -1; /* printf's result: the arguments, -1 for a NULL format */
        if (f) {
            if (pf_str(&x, f, fmt, sizeof fmt)) return -1;
            n = mh_emu_printf(fmt, &io, &c->out);
            if (n < 0) return -1;
        }
        if (in->cmp) { /* the return value */
            const mh_ptx_var *v = &c->m->vars[in->o[0].sym];
            memcpy(frame(c, w, l, (uint32_t)v->func, 2) + v->offset, &n, v->size < 4 ? v->size : 4);
        }
    }
    return 0;
}

/* The grid-wide stall check's record of a load (or an atomic that changed nothing): the
 * span of addresses the warp's loads touched since the last progress, and where it is. */
