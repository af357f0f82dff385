/* emu_regpack.c - a launch's registers packed by live range: registers whose values are never
 * needed at the same time share one row of a warp's register file (a liveness analysis over the
 * kernel's code, an interference graph, greedy colouring), and a block starts with only the rows
 * cleared that hold a register read before any write (live at the kernel's entry: it reads 0, as
 * without packing).  A warp's register file is then what the kernel keeps live, not what it
 * declares: less memory, fewer cache misses and less clearing per block.  Each lane reads exactly
 * the values it read without packing, so results and traces are the same.
 *
 * Tensor-core instructions name their registers in records (c->mma, lists in c->mma_regs): what
 * each kind reads and writes is below (mma_regs_of); a packed launch renames copies of them.
 *
 * Kernels it leaves alone (every register its own row, all cleared): strict mode (its checks and
 * messages name the module's registers), kernels that call functions, and instructions whose
 * registers are not all in o[], guard, dst2 or a tensor-core record (bulk copies, cp.async, opaque). */
#include "emu/emu_internal.h"
#include "frontend/ptx_effects.h"

#include <stdlib.h>

/* Packing's limits (a kernel past them keeps one row a register): the bitsets' memory. */
#define PACK_MAX_REGS 8192u
#define PACK_MAX_BITS (64ull << 23) /* liveness bits: 64 MiB */

typedef struct {
    uint32_t nregs, words;      /* registers, and 64-bit words of a set of them */
    uint32_t lo, hi;            /* the kernel's code [lo, hi) */
} pack;

static inline void set_bit(uint64_t *s, uint32_t r) { s[r >> 6] |= 1ull << (r & 63); }
static inline int has_bit(const uint64_t *s, uint32_t r) { return (int)(s[r >> 6] >> (r & 63) & 1); }

/* Calls f(r, dst, arg) for each register instruction `in` names (dst: it writes it); 0, or -1 when a
 * register is out of range. */
static int mma_regs_of(const pack *p, const ctx *c, const mh_ptx_insn *in, void (*f)(uint32_t, int, void *), void *arg);

static int each_reg(const pack *p, const ctx *c, const mh_ptx_insn *in, void (*f)(uint32_t, int, void *), void *arg)
{
    int wd = mh_ptx_writes_dst(in);
    if (in->op == MH_OP_MMA && mma_regs_of(p, c, in, f, arg)) return -1;
    if (in->guard >= 0) {
        if ((uint32_t)in->guard >= p->nregs) return -1;
        f((uint32_t)in->guard, 0, arg);
    }
    if (in->dst2 >= 0) {
        if ((uint32_t)in->dst2 >= p->nregs) return -1;
        f((uint32_t)in->dst2, 1, arg);
    }
    for (int k = 0; k < in->nopnds && k < MH_PTX_MAX_OPNDS; k++) {
        const mh_ptx_opnd *o = &in->o[k];
        int dst = wd && k == 0 && (o->kind == MH_OPK_REG || o->kind == MH_OPK_VEC);
        if (o->kind == MH_OPK_REG || (o->kind == MH_OPK_ADDR && o->reg != UINT32_MAX)) {
            if (o->reg >= p->nregs) return -1;
            f(o->reg, dst, arg);
        } else if (o->kind == MH_OPK_VEC) {
            for (int j = 0; j < o->n && j < 4; j++) {
                if (o->vec[j] == UINT32_MAX || (o->vec[j] & MH_PTX_VEC_SREG)) continue;
                if (o->vec[j] >= p->nregs) return -1;
                f(o->vec[j], dst, arg);
            }
        }
    }
    return 0;
}

typedef struct { uint64_t *use, *def, *src; } use_def;

/* use: read (or written only by some lanes: a guarded write keeps the others' values); def:
 * written by every lane that runs it; src: read */
static void note_use_def(uint32_t r, int dst, void *arg)
{
    use_def *u = arg;
    if (!dst) {
        set_bit(u->use, r);
        set_bit(u->src, r);
    } else {
        set_bit(u->def, r);
    }
}

/* A record's register (module numbering; UINT32_MAX: "_") to f as the kernel's: 0, or -1 when out of range. */
static int rec_reg(const pack *p, const ctx *c, uint32_t r, int dst, void (*f)(uint32_t, int, void *), void *arg)
{
    if (r == UINT32_MAX) return 0;
    if (r < c->reg_lo || r - c->reg_lo >= p->nregs) return -1;
    f(r - c->reg_lo, dst, arg);
    return 0;
}

static int rec_list(const pack *p, const ctx *c, const mh_mma_list *l, int dst, void (*f)(uint32_t, int, void *),
                    void *arg)
{
    for (uint32_t k = 0; k < l->n; k++)
        if (rec_reg(p, c, c->mma_regs[l->off + k], dst, f, arg)) return -1;
    return 0;
}

static int rec_opnd(const pack *p, const ctx *c, const mh_ptx_opnd *o, void (*f)(uint32_t, int, void *), void *arg)
{
    if (o->kind == MH_OPK_REG || (o->kind == MH_OPK_ADDR && o->reg != UINT32_MAX)) return rec_reg(p, c, o->reg, 0, f, arg);
    return o->kind == MH_OPK_VEC ? -1 : 0;
}

/* Calls f for each register a tensor-core instruction's record names (dst: it writes it, every lane:
 * emu_mma.c runs them for whole warps only); 0, or -1 when one is out of range or of an unknown kind.
 * A wgmma's accumulators are read and written (unless scale-d is 0: read taken as the worst case). */
static int mma_regs_of(const pack *p, const ctx *c, const mh_ptx_insn *in, void (*f)(uint32_t, int, void *), void *arg)
{
    if (in->callee < 0 || (uint32_t)in->callee >= c->m->nmma) return -1;
    const mh_ptx_mma *r = &c->mma[in->callee];
    switch (r->kind) {
    case MH_MMA_WG_FENCE: case MH_MMA_WG_COMMIT: case MH_MMA_WG_WAIT: case MH_MMA_SETMAXNREG: return 0;
    case MH_MMA_WGMMA:
        if (rec_list(p, c, &r->d, 0, f, arg) || rec_list(p, c, &r->d, 1, f, arg) || rec_opnd(p, c, &r->scale_d, f, arg) ||
            rec_opnd(p, c, &r->desc_b, f, arg))
            return -1;
        return r->a_regs ? rec_list(p, c, &r->a, 0, f, arg) : rec_opnd(p, c, &r->desc_a, f, arg);
    case MH_MMA_MMA: case MH_MMA_WMMA_MMA:
        if (rec_list(p, c, &r->a, 0, f, arg) || rec_list(p, c, &r->b, 0, f, arg) || rec_list(p, c, &r->c, 0, f, arg))
            return -1;
        return rec_list(p, c, &r->d, 1, f, arg);
    case MH_MMA_LDMATRIX: case MH_MMA_WMMA_LOAD:
        if (rec_opnd(p, c, &r->addr, f, arg) || (r->has_stride && rec_opnd(p, c, &r->stride, f, arg))) return -1;
        return rec_list(p, c, &r->d, 1, f, arg);
    case MH_MMA_STMATRIX: case MH_MMA_WMMA_STORE: /* they store their d list */
        if (rec_opnd(p, c, &r->addr, f, arg) || (r->has_stride && rec_opnd(p, c, &r->stride, f, arg))) return -1;
        return rec_list(p, c, &r->d, 0, f, arg);
    case MH_MMA_MOVMATRIX: return rec_list(p, c, &r->a, 0, f, arg) || rec_list(p, c, &r->d, 1, f, arg) ? -1 : 0;
    default: return -1;
    }
}

/* Whether pc's instruction is one packing understands (its registers all in o[], guard, dst2, or
 * a tensor-core record). */
static int packable(const mh_ptx_insn *in)
{
    switch (in->op) {
    case MH_OP_TMA: case MH_OP_CALL: case MH_OP_CP_ASYNC: case MH_OP_OPAQUE: return 0;
    default: return 1;
    }
}

int emu_insn_regs(const ctx *c, const mh_ptx_insn *in, void (*f)(uint32_t, int, void *), void *arg)
{
    pack p = {.nregs = c->nregs};
    return each_reg(&p, c, in, f, arg);
}

/* ---- launch constants as immediates ----
 * A register whose one write is an EMU_FK_CONST instruction (ld.param of a kernel parameter, mov of
 * %ntid and the like: the same value in every thread), and which is read only after it, either
 * in the kernel's entry stretch (the straight code before any branch, exit, call or branch target:
 * it runs once, before anything else) or in the same straight stretch as it, holds that value
 * wherever it is read.  When every read is a plain
 * source operand of a fast-path ALU instruction, the reads become immediates of the value (what
 * the register would hold: val() reads an immediate's bits as it reads a register's) and the write
 * a kind that issues as before but writes no row (EMU_FK_DEAD): a warp's ld.param and %ntid no
 * longer write a row that its next instructions read back.  The instruction still issues and
 * costs what it did; the general path (a divergent warp) still writes the register, whose row is
 * live nowhere after it (packing sees the write). */

/* per register: writes, reads, the first read's pc and the stretches of the first and last read
 * (UINT32_MAX: none yet) */
typedef struct { uint32_t *ndef, *nread, *first_read, *lo_st, *hi_st; uint32_t pc, stretch; } reg_counts;

static void count_reg(uint32_t r, int dst, void *arg)
{
    reg_counts *k = arg;
    if (dst) {
        k->ndef[r]++;
        return;
    }
    k->nread[r]++;
    if (k->first_read[r] > k->pc) k->first_read[r] = k->pc;
    if (k->lo_st[r] == UINT32_MAX || k->lo_st[r] > k->stretch) k->lo_st[r] = k->stretch;
    if (k->hi_st[r] == UINT32_MAX || k->hi_st[r] < k->stretch) k->hi_st[r] = k->stretch;
}

static int ends_stretch(const mh_ptx_insn *in)
{
    return in->op == MH_OP_BRA || in->op == MH_OP_RET || in->op == MH_OP_EXIT || in->op == MH_OP_TRAP ||
           in->op == MH_OP_CALL;
}

/* A fast-path ALU instruction whose sources are all immediates (after a fold) sets its register to
 * a launch constant: computed here by emu_fast_exec itself (so the bits are the fast path's), it
 * becomes an EMU_FK_CONST.  1 when it did. */
static int to_const(ctx *c, uint32_t pc)
{
    const mh_ptx_insn *in = &c->code[pc];
    if (!c->fast[pc] || c->fast[pc] >= EMU_FK_CONST || in->guard >= 0 || in->o[0].kind != MH_OPK_REG) return 0;
    for (int k = 1; k < in->nopnds && k < MH_PTX_MAX_OPNDS; k++)
        if (in->o[k].kind != MH_OPK_IMM) return 0;
    uint64_t row[WARP] = {0};
    mh_ptx_insn t = *in;
    t.o[0].reg = 0;
    warp fw = {.r = row};
    emu_fast_exec(&fw, &t, c->fast[pc]);
    c->kconst[pc] = row[0];
    c->fast[pc] = EMU_FK_CONST;
    return 1;
}

/* The operands of an instruction at pc (a fast-path ALU kind) that are plain reads of a register
 * in `cand` (the def's pc for each register, UINT32_MAX: none) become immediates of its value. */
static void fold_insn(const ctx *c, mh_ptx_insn *in, const uint32_t *cand)
{
    for (int k = 1; k < in->nopnds && k < MH_PTX_MAX_OPNDS; k++) {
        mh_ptx_opnd *o = &in->o[k];
        if (o->kind != MH_OPK_REG || o->neg || cand[o->reg] == UINT32_MAX) continue;
        o->imm = (int64_t)c->kconst[cand[o->reg]];
        o->kind = MH_OPK_IMM;
        o->fimm = 0;
    }
}

/* One round of the fold: 1 when it folded something, 0 when not, -1 out of memory. */
static int fold_round(ctx *c, const pack *p)
{
    uint32_t n = p->nregs, ncode = p->hi - p->lo;
    uint32_t *ndef = calloc(n, sizeof *ndef), *nread = calloc(n, sizeof *nread), *nok = calloc(n, sizeof *nok);
    uint32_t *first = malloc(n * sizeof *first), *cand = malloc(n * sizeof *cand);
    uint32_t *lo_st = malloc(n * sizeof *lo_st), *hi_st = malloc(n * sizeof *hi_st);
    uint32_t *stretch = malloc(ncode * sizeof *stretch);
    uint8_t *target = calloc(ncode, 1);
    int rc = ndef && nread && nok && first && cand && lo_st && hi_st && stretch && target ? 0 : -1, any = 0;
    if (rc) goto done;
    for (uint32_t r = 0; r < n; r++) first[r] = cand[r] = lo_st[r] = hi_st[r] = UINT32_MAX;
    /* straight stretches: a new one after a branch, exit or call and at each branch target */
    for (uint32_t pc = p->lo; pc < p->hi; pc++)
        if (c->code[pc].op == MH_OP_BRA) target[c->code[pc].o[0].reg - p->lo] = 1; /* (inside: packing checked) */
    for (uint32_t i = 0, st = 0; i < ncode; i++) {
        if (target[i] || (i && ends_stretch(&c->code[p->lo + i - 1]))) st++;
        stretch[i] = st;
    }
    for (uint32_t pc = p->lo; pc < p->hi; pc++) {
        reg_counts k = {ndef, nread, first, lo_st, hi_st, pc, stretch[pc - p->lo]};
        if (each_reg(p, c, &c->code[pc], count_reg, &k)) goto done; /* (packing says why) */
    }
    /* the reads a fold can take: plain sources of fast-path ALU instructions */
    for (uint32_t pc = p->lo; pc < p->hi; pc++) {
        const mh_ptx_insn *in = &c->code[pc];
        if (!c->fast[pc] || c->fast[pc] >= EMU_FK_CONST) continue;
        for (int k = 1; k < in->nopnds && k < MH_PTX_MAX_OPNDS; k++)
            if (in->o[k].kind == MH_OPK_REG && !in->o[k].neg && in->o[k].reg < n) nok[in->o[k].reg]++;
    }
    for (uint32_t pc = p->lo; pc < p->hi; pc++) {
        const mh_ptx_insn *in = &c->code[pc];
        uint32_t r = in->o[0].reg, st = stretch[pc - p->lo];
        if (c->fast[pc] != EMU_FK_CONST || in->guard >= 0 || in->o[0].kind != MH_OPK_REG || r >= n) continue;
        /* the entry stretch (no branch comes back to it) runs once before anything else: it
         * dominates every later read; another stretch only the reads after it within itself */
        int entry = st == 0 && !target[0];
        if (ndef[r] == 1 && nread[r] == nok[r] && first[r] > pc &&
            (!nread[r] || entry || (lo_st[r] == st && hi_st[r] == st)))
            cand[r] = pc, any = 1;
    }
    /* an instruction whose kind would change with immediates keeps its registers (and so do their
     * other reads: a register is folded everywhere or nowhere) */
    for (int changed = any; changed;) {
        changed = 0;
        for (uint32_t pc = p->lo; pc < p->hi; pc++) {
            mh_ptx_insn t = c->code[pc];
            if (!c->fast[pc] || c->fast[pc] >= EMU_FK_CONST) continue;
            fold_insn(c, &t, cand);
            if (emu_fast_kind(&t) == c->fast[pc]) continue;
            for (int k = 1; k < t.nopnds && k < MH_PTX_MAX_OPNDS; k++) {
                const mh_ptx_opnd *o = &c->code[pc].o[k];
                if (o->kind == MH_OPK_REG && o->reg < n && cand[o->reg] != UINT32_MAX) cand[o->reg] = UINT32_MAX, changed = 1;
            }
        }
    }
    any = 0;
    for (uint32_t pc = p->lo; pc < p->hi; pc++)
        if (c->fast[pc] && c->fast[pc] < EMU_FK_CONST) fold_insn(c, &c->code[pc], cand);
    for (uint32_t r = 0; r < n; r++)
        if (cand[r] != UINT32_MAX) c->fast[cand[r]] = EMU_FK_DEAD, any = 1;
    /* what the fold made constant (a cvta or add of folded values) is folded in the next round */
    for (uint32_t pc = p->lo; any && pc < p->hi; pc++) to_const(c, pc);
done:
    free(ndef);
    free(nread);
    free(nok);
    free(first);
    free(cand);
    free(lo_st);
    free(hi_st);
    free(stretch);
    free(target);
    return rc ? rc : any;
}

/* 0, or -1 out of memory. */
static int fold_consts(ctx *c, const pack *p)
{
    for (int round = 0; round < 8; round++) {
        int rc = fold_round(c, p);
        if (rc <= 0) return rc;
    }
    return 0;
}

static void rename_opnd(const ctx *c, mh_ptx_opnd *o, const uint32_t *color)
{
    if (o->kind == MH_OPK_REG || (o->kind == MH_OPK_ADDR && o->reg != UINT32_MAX)) o->reg = c->reg_lo + color[o->reg - c->reg_lo];
}

/* The launch's copies of the tensor-core records and lists, their registers renamed to rows (as the
 * module's numbers: reg_lo + row, what emu_mma.c reads them as); only the records the kernel's code
 * names (the others are never read); -1 out of memory. */
static int rename_mma(ctx *c, const pack *p, const uint32_t *color)
{
    const mh_ptx_module *m = c->m;
    int any = 0;
    for (uint32_t pc = p->lo; pc < p->hi && !any; pc++) any = c->code[pc].op == MH_OP_MMA;
    if (!any) return 0;
    c->own_mma = malloc((m->nmma ? m->nmma : 1) * sizeof *c->own_mma);
    c->own_mma_regs = malloc((m->nmma_regs ? m->nmma_regs : 1) * sizeof *c->own_mma_regs);
    uint8_t *done = calloc(m->nmma_regs ? m->nmma_regs : 1, 1);
    if (!c->own_mma || !c->own_mma_regs || !done) { free(done); return -1; }
    memcpy(c->own_mma, m->mma, m->nmma * sizeof *c->own_mma);
    memcpy(c->own_mma_regs, m->mma_regs, m->nmma_regs * sizeof *c->own_mma_regs);
    for (uint32_t pc = p->lo; pc < p->hi; pc++) {
        const mh_ptx_insn *in = &c->code[pc];
        if (in->op != MH_OP_MMA) continue;
        mh_ptx_mma *r = &c->own_mma[in->callee];
        const mh_mma_list *ls[4] = {&r->d, &r->a, &r->b, &r->c};
        for (int i = 0; i < 4; i++)
            for (uint32_t k = ls[i]->off; k < ls[i]->off + ls[i]->n; k++) {
                uint32_t rg = m->mma_regs[k];
                if (done[k] || rg == UINT32_MAX || rg < c->reg_lo || rg - c->reg_lo >= p->nregs) continue;
                done[k] = 1; /* (lists may share entries: renamed once) */
                c->own_mma_regs[k] = c->reg_lo + color[rg - c->reg_lo];
            }
        const mh_ptx_mma *orig = &m->mma[in->callee];
        mh_ptx_opnd *os[5] = {&r->desc_a, &r->desc_b, &r->scale_d, &r->addr, &r->stride};
        const mh_ptx_opnd *oo[5] = {&orig->desc_a, &orig->desc_b, &orig->scale_d, &orig->addr, &orig->stride};
        for (int i = 0; i < 5; i++) {
            *os[i] = *oo[i]; /* from the module's (a record named twice is renamed once) */
            if ((os[i]->kind == MH_OPK_REG || (os[i]->kind == MH_OPK_ADDR && os[i]->reg != UINT32_MAX)) &&
                (os[i]->reg < c->reg_lo || os[i]->reg - c->reg_lo >= p->nregs))
                continue;
            rename_opnd(c, os[i], color);
        }
    }
    free(done);
    c->mma = c->own_mma;
    c->mma_regs = c->own_mma_regs;
    return 0;
}

int emu_pack_registers(ctx *c)
{
    c->zero_rows = NULL;
    c->nzero_rows = 0;
    if (c->d->strict || c->calls || c->nregs > PACK_MAX_REGS) return 0;
    pack p = {.nregs = c->nregs, .words = (c->nregs + 63) / 64};
    uint32_t entry = (uint32_t)(c->f - c->m->funcs);
    p.lo = c->base[entry];
    p.hi = p.lo + c->f->ncode;
    uint32_t n = p.hi - p.lo, W = p.words;
    if (!n || (uint64_t)n * W * 64 * 4 > PACK_MAX_BITS) return 0;
    for (uint32_t pc = p.lo; pc < p.hi; pc++) {
        const mh_ptx_insn *in = &c->code[pc];
        if (!packable(in)) return 0;
        if (in->op == MH_OP_BRA && (in->o[0].reg < p.lo || in->o[0].reg >= p.hi)) return 0;
    }
    if (fold_consts(c, &p)) return -1;
    /* per instruction: use, def (a full write), src (read), and its live-in set */
    uint64_t *use = calloc((size_t)n * W, 8), *def = calloc((size_t)n * W, 8), *src = calloc((size_t)n * W, 8);
    uint64_t *live = calloc((size_t)n * W, 8), *out = calloc(W, 8);
    uint64_t *ig = calloc((size_t)p.nregs * W, 8); /* interference: a row of bits per register */
    uint32_t *color = malloc(p.nregs * sizeof *color), *order = malloc(p.nregs * sizeof *order);
    uint64_t *seen = calloc(W, 8), *taken = calloc(W, 8);
    int rc = 0, ok = use && def && src && live && out && ig && color && order && seen && taken;
    for (uint32_t i = 0; ok && i < n; i++) {
        const mh_ptx_insn *in = &c->code[p.lo + i];
        use_def u = {use + (size_t)i * W, def + (size_t)i * W, src + (size_t)i * W};
        if (each_reg(&p, c, in, note_use_def, &u)) { ok = 0; rc = 1; break; }
        if (in->guard >= 0) /* a guarded write: a use too (the lanes it does not write keep their values) */
            for (uint32_t k = 0; k < W; k++) { u.use[k] |= u.def[k]; }
    }
    /* liveness, backwards to a fixed point: live(i) = use(i) | (out(i) & ~def(i)) */
    for (int changed = ok; changed;) {
        changed = 0;
        for (uint32_t i = n; i-- > 0;) {
            const mh_ptx_insn *in = &c->code[p.lo + i];
            int term = (in->op == MH_OP_BRA || in->op == MH_OP_RET || in->op == MH_OP_EXIT || in->op == MH_OP_TRAP) &&
                       in->guard < 0;
            memset(out, 0, (size_t)W * 8);
            if (!term && i + 1 < n)
                for (uint32_t k = 0; k < W; k++) out[k] |= live[(size_t)(i + 1) * W + k];
            if (in->op == MH_OP_BRA)
                for (uint32_t k = 0; k < W; k++) out[k] |= live[(size_t)(in->o[0].reg - p.lo) * W + k];
            uint64_t *li = live + (size_t)i * W;
            const uint64_t *ui = use + (size_t)i * W, *di = def + (size_t)i * W;
            for (uint32_t k = 0; k < W; k++) {
                uint64_t v = ui[k] | (out[k] & ~di[k]);
                if (v != li[k]) { li[k] = v; changed = 1; }
            }
        }
    }
    /* interference: what an instruction writes with what is live after it, with the other registers
     * it writes and with what it reads (no instruction's result shares a row with its sources) */
    for (uint32_t i = 0; ok && i < n; i++) {
        const mh_ptx_insn *in = &c->code[p.lo + i];
        int term = (in->op == MH_OP_BRA || in->op == MH_OP_RET || in->op == MH_OP_EXIT || in->op == MH_OP_TRAP) &&
                   in->guard < 0;
        memset(out, 0, (size_t)W * 8);
        if (!term && i + 1 < n)
            for (uint32_t k = 0; k < W; k++) out[k] |= live[(size_t)(i + 1) * W + k];
        if (in->op == MH_OP_BRA)
            for (uint32_t k = 0; k < W; k++) out[k] |= live[(size_t)(in->o[0].reg - p.lo) * W + k];
        const uint64_t *di = def + (size_t)i * W, *si = src + (size_t)i * W;
        for (uint32_t k = 0; k < W; k++) out[k] |= di[k] | si[k];
        for (uint32_t k = 0; k < W; k++)
            for (uint64_t m = di[k]; m; m &= m - 1) {
                uint32_t d = k * 64 + (uint32_t)__builtin_ctzll(m);
                uint64_t *row = ig + (size_t)d * W;
                for (uint32_t j = 0; j < W; j++) row[j] |= out[j];
                for (uint32_t j = 0; j < W; j++)
                    for (uint64_t x = out[j]; x; x &= x - 1) set_bit(ig + (size_t)(j * 64 + (uint32_t)__builtin_ctzll(x)) * W, d);
            }
        for (uint32_t k = 0; k < W; k++) seen[k] |= di[k] | si[k] | use[(size_t)i * W + k];
    }
    if (ok) {
        /* registers live at the entry (read before any write: they read 0) interfere with one another
         * only through writes, as the rest; they are the rows a block starts with cleared */
        uint32_t norder = 0, ncolors = 0;
        for (uint32_t r = 0; r < p.nregs; r++) {
            color[r] = UINT32_MAX;
            if (has_bit(seen, r)) order[norder++] = r;
        }
        for (uint32_t i = 0; i < norder; i++) { /* greedy, in the registers' order */
            uint32_t r = order[i];
            memset(taken, 0, (size_t)W * 8);
            const uint64_t *row = ig + (size_t)r * W;
            for (uint32_t k = 0; k < W; k++)
                for (uint64_t x = row[k]; x; x &= x - 1) {
                    uint32_t s = k * 64 + (uint32_t)__builtin_ctzll(x);
                    if (s != r && color[s] != UINT32_MAX) set_bit(taken, color[s]);
                }
            uint32_t col = 0;
            while (has_bit(taken, col)) col++;
            color[r] = col;
            if (col + 1 > ncolors) ncolors = col + 1;
        }
        c->zero_rows = calloc(ncolors ? ncolors : 1, sizeof *c->zero_rows);
        if (!c->zero_rows) { rc = -1; goto done; }
        memset(taken, 0, (size_t)W * 8);
        for (uint32_t r = 0; r < p.nregs; r++)
            if (has_bit(live, r) && color[r] != UINT32_MAX && !has_bit(taken, color[r])) {
                set_bit(taken, color[r]);
                c->zero_rows[c->nzero_rows++] = color[r];
            }
        for (uint32_t r = 0; r < p.nregs; r++)
            if (color[r] == UINT32_MAX) color[r] = 0; /* never named by the kernel's code */
        for (uint32_t pc = p.lo; pc < p.hi; pc++) { /* the kernel's code renamed to rows */
            mh_ptx_insn *in = &c->code[pc];
            if (in->guard >= 0) in->guard = (int32_t)color[in->guard];
            if (in->dst2 >= 0) in->dst2 = (int32_t)color[in->dst2];
            for (int k = 0; k < in->nopnds && k < MH_PTX_MAX_OPNDS; k++) {
                mh_ptx_opnd *o = &in->o[k];
                if (o->kind == MH_OPK_REG || (o->kind == MH_OPK_ADDR && o->reg != UINT32_MAX)) o->reg = color[o->reg];
                else if (o->kind == MH_OPK_VEC)
                    for (int j = 0; j < o->n && j < 4; j++)
                        if (o->vec[j] != UINT32_MAX && !(o->vec[j] & MH_PTX_VEC_SREG)) o->vec[j] = color[o->vec[j]];
            }
        }
        if (rename_mma(c, &p, color)) { rc = -1; goto done; }
        c->nregs = ncolors ? ncolors : 1;
        c->packed = 1;
    }
done:
    free(use);
    free(def);
    free(src);
    free(live);
    free(out);
    free(ig);
    free(color);
    free(order);
    free(seen);
    free(taken);
    if (!ok && !rc) return -1; /* out of memory */
    return rc < 0 ? -1 : 0;
}
