/* emu_fast.c - the interpreter's fast path: the common ALU instructions of a
 * converged warp (all 32 lanes on) as one loop over the lanes on typed
 * values, which the compiler vectorises, instead of operand decoding and a
 * type switch per lane; and which global loads and stores emu_exec.c's
 * emu_fast_mem runs the same way.  Which instructions qualify is decided once, when the
 * launch lays out its code (emu_fast_kind); the results are bit for bit what
 * emu_exec.c's general path computes (test_emu_ops runs both). */
#include "emu/emu_internal.h"

#include <math.h>

enum { /* operand shapes are checked by emu_fast_kind: destination a register, sources registers or immediates */
    FK_NONE = 0,
    FK_F32_ADD, FK_F32_SUB, FK_F32_MUL, FK_F32_FMA,
    FK_I32_ADD, FK_I32_SUB, FK_I32_MUL, FK_I32_MAD, FK_I32_AND, FK_I32_OR, FK_I32_XOR, FK_I32_SHL, FK_I32_SHRU,
    FK_I32_SHRS,
    FK_I64_ADD, FK_I64_SUB, FK_I64_MUL, FK_I64_MAD, FK_I64_AND, FK_I64_OR, FK_I64_XOR, FK_I64_SHL, FK_I64_SHRU,
    FK_MULWIDE_U32, FK_MULWIDE_S32,
    FK_MOV32, FK_MOV64,
    FK_SETP_S32, FK_SETP_U32, FK_SETP_S64, FK_SETP_U64, FK_SETP_F32,
    FK_SELP32, FK_SELP64,
    FK_CVT_U64_U32, FK_CVT_S64_S32,
};

static int plain_src(const mh_ptx_opnd *o)
{
    return (o->kind == MH_OPK_REG && !o->neg) || o->kind == MH_OPK_IMM;
}

static int srcs(const mh_ptx_insn *in, int n)
{
    if (in->nopnds != n + 1 || in->o[0].kind != MH_OPK_REG) return 0;
    for (int k = 1; k <= n; k++)
        if (!plain_src(&in->o[k])) return 0;
    return 1;
}

/* ld/st.global (or generic) of 1, 2 or 4 elements of 4 or 8 bytes at [register + offset], into
 * or from registers (a store's scalar may be an immediate): emu_fast_mem's kinds. */
static uint8_t mem_kind(const mh_ptx_insn *in)
{
    int store = in->op == MH_OP_ST, eb = mh_ptx_type_bits((mh_ptx_type)in->type) / 8;
    int n = in->vec ? in->vec : 1;
    const mh_ptx_opnd *ao = &in->o[store ? 0 : 1], *vo = &in->o[store ? 1 : 0];
    if (in->nopnds != 2 || (in->space != MH_SP_GLOBAL && in->space != MH_SP_GENERIC) || (eb != 4 && eb != 8) ||
        (n != 1 && n != 2 && n != 4) || ao->kind != MH_OPK_ADDR || ao->reg == UINT32_MAX || ao->sym >= 0 ||
        ao->param >= 0)
        return FK_NONE;
    if (vo->kind == MH_OPK_VEC) {
        if (vo->n != n) return FK_NONE;
        for (int k = 0; k < n; k++)
            if (vo->vec[k] != UINT32_MAX && (vo->vec[k] & MH_PTX_VEC_SREG)) return FK_NONE;
    } else if (n != 1 || (vo->kind != MH_OPK_REG && (!store || vo->kind != MH_OPK_IMM)) || vo->neg) {
        return FK_NONE;
    }
    int sgn = !store && eb == 4 && mh_ptx_type_is_signed((mh_ptx_type)in->type);
    return (uint8_t)(EMU_FK_MEM | (unsigned)store << 4 | (unsigned)sgn << 3 | (unsigned)(eb == 8) << 2 |
                     (unsigned)(n == 1 ? 0 : n == 2 ? 1 : 2));
}

uint8_t emu_fast_kind(const mh_ptx_insn *in)
{
    mh_ptx_type t = (mh_ptx_type)in->type;
    int bits = mh_ptx_type_bits(t), sgn = mh_ptx_type_is_signed(t), f32 = t == MH_PT_F32;
    int integer = !mh_ptx_type_is_float(t) && t != MH_PT_PRED && (bits == 32 || bits == 64);
    if (in->mods & MH_MOD_MARKER) return FK_NONE;
    switch (in->op) {
    case MH_OP_LD: case MH_OP_ST: return mem_kind(in);
    case MH_OP_ADD: case MH_OP_SUB: case MH_OP_MUL: case MH_OP_FMA: case MH_OP_MAD: {
        int three = in->op == MH_OP_FMA || in->op == MH_OP_MAD;
        if (!srcs(in, three ? 3 : 2)) return FK_NONE;
        if (f32) {
            if ((in->mods & (MH_MOD_FTZ | MH_MOD_SAT)) || (in->rnd != MH_RND_NONE && in->rnd != MH_RND_RN)) return FK_NONE;
            return in->op == MH_OP_ADD ? FK_F32_ADD : in->op == MH_OP_SUB ? FK_F32_SUB : in->op == MH_OP_MUL ? FK_F32_MUL
                                                                                                      : FK_F32_FMA;
        }
        if (!integer || in->op == MH_OP_FMA) return FK_NONE;
        if (in->op == MH_OP_MUL && (in->mods & MH_MOD_WIDE) && bits == 32 && !(in->mods & (MH_MOD_HI | MH_MOD_SAT)))
            return sgn ? FK_MULWIDE_S32 : FK_MULWIDE_U32;
        if (in->mods & (MH_MOD_SAT | MH_MOD_HI | MH_MOD_WIDE | MH_MOD_CC)) return FK_NONE;
        if (bits == 32)
            return in->op == MH_OP_ADD ? FK_I32_ADD : in->op == MH_OP_SUB ? FK_I32_SUB : in->op == MH_OP_MUL ? FK_I32_MUL
                                                                                                      : FK_I32_MAD;
        return in->op == MH_OP_ADD ? FK_I64_ADD : in->op == MH_OP_SUB ? FK_I64_SUB : in->op == MH_OP_MUL ? FK_I64_MUL
                                                                                                  : FK_I64_MAD;
    }
    case MH_OP_AND: case MH_OP_OR: case MH_OP_XOR:
        if (!integer || !srcs(in, 2)) return FK_NONE;
        if (bits == 32) return in->op == MH_OP_AND ? FK_I32_AND : in->op == MH_OP_OR ? FK_I32_OR : FK_I32_XOR;
        return in->op == MH_OP_AND ? FK_I64_AND : in->op == MH_OP_OR ? FK_I64_OR : FK_I64_XOR;
    case MH_OP_SHL: case MH_OP_SHR:
        if (!integer || !srcs(in, 2) || (in->mods & MH_MOD_SHIFTAMT)) return FK_NONE;
        if (in->op == MH_OP_SHL) return bits == 32 ? FK_I32_SHL : FK_I64_SHL;
        if (bits == 32) return sgn ? FK_I32_SHRS : FK_I32_SHRU;
        return sgn ? FK_NONE : FK_I64_SHRU;
    case MH_OP_MOV:
        if (!srcs(in, 1) || (!integer && !f32)) return FK_NONE;
        return bits == 32 ? FK_MOV32 : FK_MOV64;
    case MH_OP_CVTA: /* to or from the global space: the same address (emu_exec.c) */
        if (!srcs(in, 1) || in->space != MH_SP_GLOBAL || !integer || sgn) return FK_NONE;
        return bits == 32 ? FK_MOV32 : FK_MOV64;
    case MH_OP_SETP:
        if (in->nopnds != 3 || in->boolop || in->dst2 >= 0 || in->o[0].kind != MH_OPK_REG || !plain_src(&in->o[1]) ||
            !plain_src(&in->o[2]) || (in->mods & MH_MOD_FTZ))
            return FK_NONE;
        if (f32) return in->cmp <= MH_CMP_GE ? FK_SETP_F32 : FK_NONE;
        if (!integer || in->cmp > MH_CMP_HS) return FK_NONE;
        return bits == 32 ? (sgn ? FK_SETP_S32 : FK_SETP_U32) : (sgn ? FK_SETP_S64 : FK_SETP_U64);
    case MH_OP_SELP:
        if (!srcs(in, 3) || (!integer && !f32)) return FK_NONE;
        return bits == 32 ? FK_SELP32 : FK_SELP64;
    case MH_OP_CVT:
        if (!srcs(in, 1) || in->rnd != MH_RND_NONE || (in->mods & (MH_MOD_SAT | MH_MOD_FTZ))) return FK_NONE;
        if (t == MH_PT_U64 && in->type2 == MH_PT_U32) return FK_CVT_U64_U32;
        if (t == MH_PT_S64 && in->type2 == MH_PT_S32) return FK_CVT_S64_S32;
        return FK_NONE;
    default:
        return FK_NONE;
    }
}

/* The 32 lanes' values of a source: the register's row, or the immediate in buf. */
static inline const uint64_t *lanes_of(const warp *w, const mh_ptx_opnd *o, uint64_t *buf)
{
    if (o->kind == MH_OPK_REG) return &REG(w, o->reg, 0);
    for (int l = 0; l < WARP; l++) buf[l] = (uint64_t)o->imm;
    return buf;
}

static inline float f32_of(uint64_t v)
{
    uint32_t u = (uint32_t)v;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline uint64_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* A 32-bit result as put() stores it: sign-extended for .s32, else zero-extended. */
#define I32(sgn, r) ((sgn) ? (uint64_t)(int64_t)(int32_t)(uint32_t)(r) : (uint64_t)(uint32_t)(r))

#define LOOP for (int l = 0; l < WARP; l++)

/* x86-64: also compiled with FMA (and the AVX it implies), chosen at load time where the CPU has it
 * (the baseline x86-64 has no fused multiply-add instruction: fmaf would be a call per lane) */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("arch=x86-64-v4", "fma", "default")))
#endif
void emu_fast_exec(warp *w, const mh_ptx_insn *in, uint8_t kind)
{
    uint64_t ba[WARP], bb[WARP], bc[WARP];
    const mh_ptx_opnd *o = in->o;
    const uint64_t *a = lanes_of(w, &o[1], ba);
    const uint64_t *b = in->nopnds > 2 ? lanes_of(w, &o[2], bb) : a;
    const uint64_t *cc = in->nopnds > 3 ? lanes_of(w, &o[3], bc) : a;
    /* the result straight into the destination's row, or through tmp when it is also a source */
    uint64_t tmp[WARP], *dst = &REG(w, o[0].reg, 0);
    int alias = a == dst || b == dst || cc == dst;
    uint64_t *restrict r = alias ? tmp : dst;
    int s = mh_ptx_type_is_signed((mh_ptx_type)in->type);
    switch (kind) {
    case FK_F32_ADD: LOOP r[l] = bits_of(f32_of(a[l]) + f32_of(b[l])); break;
    case FK_F32_SUB: LOOP r[l] = bits_of(f32_of(a[l]) - f32_of(b[l])); break;
    case FK_F32_MUL: LOOP r[l] = bits_of(f32_of(a[l]) * f32_of(b[l])); break;
    case FK_F32_FMA: LOOP r[l] = bits_of(fmaf(f32_of(a[l]), f32_of(b[l]), f32_of(cc[l]))); break;
    case FK_I32_ADD: LOOP r[l] = I32(s, a[l] + b[l]); break;
    case FK_I32_SUB: LOOP r[l] = I32(s, a[l] - b[l]); break;
    case FK_I32_MUL: LOOP r[l] = I32(s, a[l] * b[l]); break;
    case FK_I32_MAD: LOOP r[l] = I32(s, a[l] * b[l] + cc[l]); break;
    case FK_I32_AND: LOOP r[l] = I32(s, a[l] & b[l]); break;
    case FK_I32_OR: LOOP r[l] = I32(s, a[l] | b[l]); break;
    case FK_I32_XOR: LOOP r[l] = I32(s, a[l] ^ b[l]); break;
    case FK_I32_SHL: LOOP { uint64_t k = b[l] & 0xffffffffu; r[l] = k >= 32 ? 0 : I32(s, a[l] << k); } break;
    case FK_I32_SHRU: LOOP { uint64_t k = b[l] & 0xffffffffu; r[l] = k >= 32 ? 0 : (uint32_t)a[l] >> k; } break;
    case FK_I32_SHRS:
        LOOP {
            uint64_t k = b[l] & 0xffffffffu;
            int32_t x = (int32_t)(uint32_t)a[l];
            r[l] = (uint64_t)(int64_t)(k >= 32 ? (x < 0 ? -1 : 0) : x >> k);
        }
        break;
    case FK_I64_ADD: LOOP r[l] = a[l] + b[l]; break;
    case FK_I64_SUB: LOOP r[l] = a[l] - b[l]; break;
    case FK_I64_MUL: LOOP r[l] = a[l] * b[l]; break;
    case FK_I64_MAD: LOOP r[l] = a[l] * b[l] + cc[l]; break;
    case FK_I64_AND: LOOP r[l] = a[l] & b[l]; break;
    case FK_I64_OR: LOOP r[l] = a[l] | b[l]; break;
    case FK_I64_XOR: LOOP r[l] = a[l] ^ b[l]; break;
    case FK_I64_SHL: LOOP { uint64_t k = b[l] & 0xffffffffu; r[l] = k >= 64 ? 0 : a[l] << k; } break;
    case FK_I64_SHRU: LOOP { uint64_t k = b[l] & 0xffffffffu; r[l] = k >= 64 ? 0 : a[l] >> k; } break;
    case FK_MULWIDE_U32: LOOP r[l] = (uint64_t)(uint32_t)a[l] * (uint32_t)b[l]; break;
    case FK_MULWIDE_S32:
        LOOP r[l] = (uint64_t)((int64_t)(int32_t)(uint32_t)a[l] * (int64_t)(int32_t)(uint32_t)b[l]);
        break;
    case FK_MOV32: LOOP r[l] = I32(s, a[l]); break;
    case FK_MOV64: LOOP r[l] = a[l]; break;
    case FK_SELP32: LOOP r[l] = I32(s, cc[l] ? a[l] : b[l]); break;
    case FK_SELP64: LOOP r[l] = cc[l] ? a[l] : b[l]; break;
    case FK_CVT_U64_U32: LOOP r[l] = (uint32_t)a[l]; break;
    case FK_CVT_S64_S32: LOOP r[l] = (uint64_t)(int64_t)(int32_t)(uint32_t)a[l]; break;
    case FK_SETP_F32: {
        int cmp = in->cmp;
        LOOP {
            float x = f32_of(a[l]), y = f32_of(b[l]);
            int v = cmp == MH_CMP_EQ ? x == y : cmp == MH_CMP_NE ? (x != y && x == x && y == y)
                  : cmp == MH_CMP_LT ? x < y : cmp == MH_CMP_LE ? x <= y : cmp == MH_CMP_GT ? x > y : x >= y;
            r[l] = (uint64_t)v;
        }
        break;
    }
    default: { /* integer setp */
        int cmp = in->cmp, sg = kind == FK_SETP_S32 || kind == FK_SETP_S64, w32 = kind == FK_SETP_S32 || kind == FK_SETP_U32;
        if (cmp >= MH_CMP_LO) sg = 0; /* lo/ls/hi/hs: unsigned */
        int c2 = cmp == MH_CMP_LO ? MH_CMP_LT : cmp == MH_CMP_LS ? MH_CMP_LE : cmp == MH_CMP_HI ? MH_CMP_GT
               : cmp == MH_CMP_HS ? MH_CMP_GE : cmp;
        LOOP {
            uint64_t x = w32 ? (uint32_t)a[l] : a[l], y = w32 ? (uint32_t)b[l] : b[l];
            int lt, eq = x == y;
            if (sg) lt = w32 ? (int32_t)(uint32_t)x < (int32_t)(uint32_t)y : (int64_t)x < (int64_t)y;
            else lt = x < y;
            r[l] = (uint64_t)(c2 == MH_CMP_EQ ? eq : c2 == MH_CMP_NE ? !eq : c2 == MH_CMP_LT ? lt
                            : c2 == MH_CMP_LE ? lt || eq : c2 == MH_CMP_GT ? !lt && !eq : !lt);
        }
        break;
    }
    }
    if (alias) memcpy(dst, tmp, sizeof tmp);
}

/* ---- launch constants and special registers ---------------------------------------------- */

/* Special registers whose value is the launch's, the same for every thread. */
/* Special registers whose value is the launch's, the same for every thread (emu_sreg's values):
 * 1 with it in *v. */
static int launch_sreg(const ctx *c, uint32_t id, uint64_t *v)
{
    switch (id) {
    case MH_SR_NTID_X: case MH_SR_NTID_Y: case MH_SR_NTID_Z: *v = c->block[id - MH_SR_NTID_X]; return 1;
    case MH_SR_NCTAID_X: case MH_SR_NCTAID_Y: case MH_SR_NCTAID_Z: *v = c->grid[id - MH_SR_NCTAID_X]; return 1;
    case MH_SR_NWARPID: *v = c->nwarps; return 1;
    case MH_SR_NSMID: *v = c->d->nsm; return 1;
    case MH_SR_DYNAMIC_SMEM_SIZE: *v = c->dyn_smem; return 1;
    case MH_SR_TOTAL_SMEM_SIZE: case MH_SR_AGGR_SMEM_SIZE: *v = c->shared_size; return 1;
    default: return 0;
    }
}

/* Special registers a warp computes from its block, its index and the lane. */
static int warp_sreg(uint32_t id)
{
    return id == MH_SR_TID_X || id == MH_SR_TID_Y || id == MH_SR_TID_Z || id == MH_SR_CTAID_X ||
           id == MH_SR_CTAID_Y || id == MH_SR_CTAID_Z || id == MH_SR_LANEID || id == MH_SR_WARPID || id == MH_SR_SMID;
}

void emu_fast_consts(ctx *c)
{
    const mh_ptx_func *F = c->f;
    uint32_t entry = c->base[F - c->m->funcs];
    for (uint32_t pc = entry; pc < entry + F->ncode; pc++) {
        const mh_ptx_insn *in = &c->code[pc];
        mh_ptx_type t = (mh_ptx_type)in->type;
        int bits = mh_ptx_type_bits(t);
        if (c->fast[pc] || (in->mods & MH_MOD_MARKER) || in->nopnds != 2 || in->o[0].kind != MH_OPK_REG ||
            t == MH_PT_PRED || (bits != 16 && bits != 32 && bits != 64))
            continue;
        const mh_ptx_opnd *o = &in->o[1];
        uint64_t k;
        if (in->op == MH_OP_LD && in->space == MH_SP_PARAM && in->vec <= 1 && o->kind == MH_OPK_ADDR && o->param >= 0 &&
            o->sym < 0 && o->reg == UINT32_MAX && o->imm >= 0 && (uint32_t)o->param < F->nparams) {
            /* ld.param of a kernel parameter, inside it (what param_ptr reads; it faults otherwise) */
            const mh_ptx_param *P = &F->params[o->param];
            uint64_t off = (uint64_t)o->imm, eb = (uint64_t)bits / 8;
            if (off > P->size || eb > P->size - off) continue;
            c->kconst[pc] = reg_value(ld_elem(c->params + P->offset + off, (int)eb), t);
            c->fast[pc] = EMU_FK_CONST;
        } else if (in->op == MH_OP_MOV && o->kind == MH_OPK_SREG && !o->neg && launch_sreg(c, o->reg, &k)) {
            c->kconst[pc] = reg_value(k, t);
            c->fast[pc] = EMU_FK_CONST;
        } else if (in->op == MH_OP_MOV && o->kind == MH_OPK_SREG && !o->neg && warp_sreg(o->reg)) {
            c->fast[pc] = EMU_FK_SREG;
        }
    }
}

void emu_fast_const(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t pc)
{
    if (c->fast[pc] == EMU_FK_DEAD) return; /* every reader has the value as an immediate */
    uint64_t *r = &REG(w, in->o[0].reg, 0), v;
    mh_ptx_type t = (mh_ptx_type)in->type;
    if (c->fast[pc] == EMU_FK_CONST) {
        v = c->kconst[pc];
        LOOP r[l] = v;
        return;
    }
    uint32_t id = in->o[1].reg, lin0 = w->index * WARP;
    switch (id) {
    case MH_SR_TID_X:
        if (c->block[1] == 1 && c->block[2] == 1) { /* one dimension: the thread's linear index */
            LOOP r[l] = reg_value(lin0 + (uint32_t)l, t);
            return;
        }
        LOOP r[l] = reg_value((lin0 + (uint32_t)l) % c->block[0], t);
        return;
    case MH_SR_TID_Y: LOOP r[l] = reg_value((lin0 + (uint32_t)l) / c->block[0] % c->block[1], t); return;
    case MH_SR_TID_Z: LOOP r[l] = reg_value((lin0 + (uint32_t)l) / (c->block[0] * c->block[1]), t); return;
    case MH_SR_LANEID: LOOP r[l] = reg_value((uint64_t)l, t); return;
    default: v = reg_value(emu_sreg(c, w, id, 0), t); /* the same for every lane of the warp */
    }
    LOOP r[l] = v;
}
