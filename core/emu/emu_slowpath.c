/* emu_slowpath.c - the checks around an instruction that run only when asked:
 * strict mode (a read of a register no instruction wrote stops the launch)
 * and counting (exact per-instruction counters of memory traffic, the rules
 * in emu_counters.h).  Kept out of the interpreter's hot path. */
#include "emu/emu_internal.h"
#include "emu/emu_counters.h"
#include "frontend/ptx_effects.h"

/* ---- strict mode: reads of registers nothing wrote ---------------------------- */
/* Kept out of exec_insn: these run before and after an instruction only when
 * the device is strict, so the interpreter's hot path does not pay for them. */

static int writes_o0(const mh_ptx_insn *in) { return mh_ptx_writes_dst(in); }

/* Lanes of mask that the guard lets through (the guard itself must be written). */
static uint32_t strict_guard(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t mask, int *bad)
{
    if (in->guard < 0) return mask;
    uint32_t g = (uint32_t)in->guard, em = 0;
    for (int l = 0; l < WARP; l++) {
        if (!(mask >> l & 1)) continue;
        if (!(w->written[g] >> l & 1)) {
            emu_uninitialised(c, w, g, l);
            *bad = 1;
            return 0;
        }
        if ((REG(w, g, l) != 0) ^ in->guard_neg) em |= 1u << l;
    }
    return em;
}

int emu_strict_pending(ctx *c, const warp *w, uint32_t r, int write)
{
    if (w->acc[r] <= w->mma.retired) return 0;
    emu_fault(c, w, 0, "%s register %s, an accumulator or A fragment of a wgmma.mma_async not yet waited for: "
              "wgmma.commit_group and wgmma.wait_group must come first (the PTX ISA leaves the access "
              "undefined; strict mode)", write ? "write of" : "read of", c->m->reg_name[r + c->reg_lo]);
    return 1;
}

static int check_reg(ctx *c, const warp *w, uint32_t r, uint32_t lanes)
{
    uint32_t missing = lanes & ~w->written[r];
    if (!missing) return 0;
    emu_uninitialised(c, w, r, __builtin_ctz(missing));
    return 1;
}

/* The registers an operand names into r[] (a register, an address's base, a vector's elements
 * but its sinks and special registers): how many. */
static int opnd_regs(const mh_ptx_opnd *o, uint32_t r[4])
{
    int n = 0;
    if (o->kind == MH_OPK_REG || (o->kind == MH_OPK_ADDR && o->reg != UINT32_MAX)) r[n++] = o->reg;
    for (int j = 0; o->kind == MH_OPK_VEC && j < o->n && j < 4; j++)
        if (o->vec[j] != UINT32_MAX && !(o->vec[j] & MH_PTX_VEC_SREG)) r[n++] = o->vec[j];
    return n;
}

/* Every register operand o reads, written by the lanes of `lanes` (1: one was not; faulted). */
static int check_opnd(ctx *c, const warp *w, const mh_ptx_opnd *o, uint32_t lanes)
{
    uint32_t r[4];
    for (int j = 0, n = opnd_regs(o, r); j < n; j++)
        if (check_reg(c, w, r[j], lanes)) return 1;
    return 0;
}

int emu_strict_sources(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t mask)
{
    int bad = 0;
    uint32_t em = strict_guard(c, w, in, mask, &bad);
    if (bad || !em || (in->mods & MH_MOD_MARKER)) return bad;
    uint32_t r[4];
    if (in->op != MH_OP_MMA) /* a wgmma's registers in flight (the tensor-core instructions: emu_mma.c) */
        for (int k = 0; k < in->nopnds; k++) {
            int wr = k == 0 && writes_o0(in) && in->o[0].kind != MH_OPK_ADDR;
            for (int j = 0, n = opnd_regs(&in->o[k], r); j < n; j++)
                if (emu_strict_pending(c, w, r[j], wr)) return 1;
        }
    if (in->dst2 >= 0 && emu_strict_pending(c, w, (uint32_t)in->dst2, 1)) return 1;
    /* the sources, then the address of a destination in memory */
    int w0 = writes_o0(in);
    for (int k = w0 ? 1 : 0; k < in->nopnds; k++)
        if (check_opnd(c, w, &in->o[k], em)) return 1;
    if (w0 && in->o[0].kind == MH_OPK_ADDR && check_opnd(c, w, &in->o[0], em)) return 1;
    return c->hz && emu_hz_insn(c, w, in, em) ? 1 : 0; /* Hopper's hazards (emu_hazards.c) */
}

void emu_strict_dests(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t mask)
{
    (void)c;
    if (!writes_o0(in)) return;
    uint32_t em = mask;
    if (in->guard >= 0) {
        em = 0;
        for (int l = 0; l < WARP; l++)
            if ((mask >> l & 1) && ((REG(w, (uint32_t)in->guard, l) != 0) ^ in->guard_neg)) em |= 1u << l;
    }
    const mh_ptx_opnd *o = &in->o[0];
    if (o->kind == MH_OPK_REG) w->written[o->reg] |= em;
    if (o->kind == MH_OPK_VEC)
        for (int j = 0; j < o->n; j++)
            if (o->vec[j] != UINT32_MAX && !(o->vec[j] & MH_PTX_VEC_SREG)) w->written[o->vec[j]] |= em;
    if (in->dst2 >= 0) w->written[in->dst2] |= em;
}

/* ---- counting (mh_emu_launch.stats; the rules: emu_counters.h) ------------------ */
/* Called before the instruction runs (its address registers may be its destination),
 * from step_warp's slow path only: with counting off the interpreter does not pay. */
void emu_count_insn(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t mask)
{
    uint64_t *v = c->counts + (size_t)(in - c->code) * MH_CT_COUNT;
    uint32_t em = mask;
    if (in->guard >= 0) {
        em = 0;
        for (int l = 0; l < WARP; l++)
            if ((mask >> l & 1) && ((REG(w, (uint32_t)in->guard, l) != 0) ^ in->guard_neg)) em |= 1u << l;
    }
    v[MH_CT_INST]++;
    v[MH_CT_THREAD_INST] += (uint64_t)__builtin_popcount(mask);
    v[MH_CT_PRED_ON] += (uint64_t)__builtin_popcount(em);
    if (!em) return;
    const mh_ptx_opnd *ao;
    uint32_t size = (uint32_t)elem_bytes((mh_ptx_type)in->type);
    int kind = in->op; /* LD, ST, ATOM, RED, CP_ASYNC */
    switch (in->op) {
    case MH_OP_LD:
        if (in->space == MH_SP_PARAM || in->space == MH_SP_CONST) return;
        ao = &in->o[1];
        size *= in->vec ? in->vec : 1;
        break;
    case MH_OP_ST:
        if (in->space == MH_SP_PARAM) return;
        ao = &in->o[0];
        size *= in->vec ? in->vec : 1;
        break;
    case MH_OP_ATOM: ao = &in->o[1]; break;
    case MH_OP_RED: ao = &in->o[0]; break;
    case MH_OP_CP_ASYNC: ao = &in->o[1]; size = (uint32_t)in->o[2].imm; break;
    default: return;
    }
    uint64_t ga[WARP], sa[WARP], ls[WARP * 8];
    uint8_t sl[WARP];
    uint32_t ng = 0, ns = 0, nl = 0;
    int pred4 = kind == MH_OP_CP_ASYNC && in->nopnds > 3 && in->o[3].kind == MH_OPK_REG &&
                c->m->reg_type[in->o[3].reg + c->reg_lo] == MH_PT_PRED;
    for (int l = 0; l < WARP; l++) {
        if (!(em >> l & 1)) continue;
        if (kind == MH_OP_CP_ASYNC && in->nopnds > 3) { /* a source size of 0 (or ignore-src) reads nothing */
            uint64_t sz = val(c, w, &in->o[3], l);
            if (pred4 ? sz != 0 : sz == 0) continue;
        }
        uint64_t a = address(c, w, ao, l);
        int sp = kind == MH_OP_CP_ASYNC ? MH_SP_GLOBAL : in->space;
        if (sp == MH_SP_GENERIC) {
            if (a - SHARED_WIN < WIN_SIZE) { sp = MH_SP_SHARED; a -= SHARED_WIN; }
            else if (a - LOCAL_WIN < WIN_SIZE) { sp = MH_SP_LOCAL; a = (a - LOCAL_WIN) % (c->local_stride ? c->local_stride : 1); }
            else sp = MH_SP_GLOBAL;
        }
        if (sp == MH_SP_GLOBAL) ga[ng++] = a >> 5; /* an aligned access of up to 16 bytes is in one sector */
        else if (sp == MH_SP_SHARED) { sa[ns] = a; sl[ns++] = (uint8_t)l; }
        else if (sp == MH_SP_LOCAL) /* word k of lane l lies at (k * 32 + l) * 4 in the warp's local memory */
            for (uint64_t k = a / 4; k <= (a + size - 1) / 4; k++) ls[nl++] = (k * 32 + (uint64_t)l) * 4 >> 5;
    }
    if (ng) {
        uint64_t sec = mh_ct_distinct(ga, ng);
        int r = kind == MH_OP_LD ? MH_CT_GLD_REQ : kind == MH_OP_ST ? MH_CT_GST_REQ : kind == MH_OP_ATOM ? MH_CT_GATOM_REQ
              : kind == MH_OP_RED ? MH_CT_GRED_REQ : MH_CT_LDGSTS_REQ;
        v[r]++;
        v[r + 1] += sec;
        if (kind == MH_OP_LD || kind == MH_OP_ST) v[r + 2] += (uint64_t)ng * size;
    }
    if (ns) {
        uint32_t phases, wf = mh_ct_wavefronts(sa, sl, ns, size, &phases);
        if (kind == MH_OP_LD) { v[MH_CT_SLD_REQ]++; v[MH_CT_SLD_WF] += wf; v[MH_CT_SLD_BC] += wf - phases; }
        else if (kind == MH_OP_ST) { v[MH_CT_SST_REQ]++; v[MH_CT_SST_WF] += wf; v[MH_CT_SST_BC] += wf - phases; }
        else if (kind == MH_OP_ATOM || kind == MH_OP_RED) { v[MH_CT_SATOM_REQ]++; v[MH_CT_SATOM_WF] += wf; }
    }
    if (nl && (kind == MH_OP_LD || kind == MH_OP_ST)) {
        uint64_t sec = mh_ct_distinct(ls, nl);
        int r = kind == MH_OP_LD ? MH_CT_LLD_REQ : MH_CT_LST_REQ;
        v[r]++;
        v[r + 1] += sec;
    }
}

