/* writes.c - a flow-insensitive taint analysis over one kernel's code (see
 * writes.h).  Each register gets the set of parameters its value may derive
 * from (ld.param [p] starts one; every other instruction gives its
 * destinations the union of its sources); a value loaded from memory or
 * returned by an atomic is of unknown origin.  A store, atom or red to
 * global or generic memory then names the parameters its address derives
 * from, or makes the answer "unknown" when it derives from none or from an
 * unknown origin.  Over-approximating is safe (more is restored than
 * needed), so registers reused for other values and branches need no care. */
#include "launch/writes.h"
#include "frontend/ptx_effects.h"

#include <stdlib.h>

#define T_UNKNOWN (1ull << 63) /* loaded from memory, an atomic's old value */
#define T_VAR (1ull << 62)     /* the address of a module or function variable */
#define T_PARAMS (T_VAR - 1)

static uint64_t opnd_taint(const mh_ptx_opnd *o, const uint64_t *taint)
{
    uint64_t t = 0;
    switch (o->kind) {
    case MH_OPK_REG: return taint[o->reg];
    case MH_OPK_SYM: return T_VAR;
    case MH_OPK_ADDR:
        if (o->param >= 0) t |= o->param < 62 ? 1ull << o->param : T_UNKNOWN;
        if (o->sym >= 0) t |= T_VAR;
        if (o->reg != UINT32_MAX) t |= taint[o->reg];
        return t;
    case MH_OPK_VEC:
        for (int k = 0; k < o->n; k++)
            if (o->vec[k] != UINT32_MAX && !(o->vec[k] & MH_PTX_VEC_SREG)) t |= taint[o->vec[k]];
        return t;
    default: return 0;
    }
}

/* The taint an instruction gives its destinations. */
static uint64_t result_taint(const mh_ptx_insn *in, const uint64_t *taint)
{
    if (in->op == MH_OP_LD) {
        const mh_ptx_opnd *a = &in->o[1];
        if (in->space == MH_SP_PARAM && a->kind == MH_OPK_ADDR && a->param >= 0) return opnd_taint(a, taint);
        return T_UNKNOWN;
    }
    if (in->op == MH_OP_ATOM) return T_UNKNOWN;
    uint64_t t = 0;
    for (int k = 1; k < in->nopnds; k++) t |= opnd_taint(&in->o[k], taint);
    return t;
}

static int set_taint(uint64_t *taint, uint32_t r, uint64_t t)
{
    if ((taint[r] | t) == taint[r]) return 0;
    taint[r] |= t;
    return 1;
}

uint64_t mh_kernel_written_params(const mh_ptx_module *m, const mh_ptx_func *f)
{
    if (f->nparams > 62) return MH_WRITES_UNKNOWN;
    for (uint32_t i = 0; i < f->ncode; i++)
        if (f->code[i].op == MH_OP_CALL || f->code[i].op == MH_OP_OPAQUE || f->code[i].op == MH_OP_TMA)
            return MH_WRITES_UNKNOWN; /* TMA: a store's address is inside its tensor map */
    uint64_t *taint = calloc(m->nregs ? m->nregs : 1, sizeof *taint);
    if (!taint) return MH_WRITES_UNKNOWN;
    for (int changed = 1; changed;) {
        changed = 0;
        for (uint32_t i = 0; i < f->ncode; i++) {
            const mh_ptx_insn *in = &f->code[i];
            if (!mh_ptx_writes_dst(in) || !in->nopnds) continue;
            uint64_t t = result_taint(in, taint);
            const mh_ptx_opnd *d = &in->o[0];
            if (d->kind == MH_OPK_REG) changed |= set_taint(taint, d->reg, t);
            if (d->kind == MH_OPK_VEC)
                for (int k = 0; k < d->n; k++)
                    if (d->vec[k] != UINT32_MAX && !(d->vec[k] & MH_PTX_VEC_SREG)) changed |= set_taint(taint, d->vec[k], t);
            if (in->dst2 >= 0) changed |= set_taint(taint, (uint32_t)in->dst2, t);
        }
    }
    uint64_t written = 0;
    for (uint32_t i = 0; i < f->ncode && written != MH_WRITES_UNKNOWN; i++) {
        const mh_ptx_insn *in = &f->code[i];
        const mh_ptx_opnd *a = mh_ptx_store_address(in);
        if (!a || (in->space != MH_SP_GLOBAL && in->space != MH_SP_GENERIC)) continue;
        uint64_t t = opnd_taint(a, taint);
        if (t & T_UNKNOWN || !(t & (T_PARAMS | T_VAR))) written = MH_WRITES_UNKNOWN;
        else written |= t & T_PARAMS; /* an address of a variable alone is no argument's */
    }
    free(taint);
    return written;
}
