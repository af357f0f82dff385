/* ptx_mma.c - decoding of the tensor-core and warpgroup instructions (wgmma, mma, wmma,
 * ldmatrix, stmatrix, movmatrix, setmaxnreg) into mh_ptx_mma records; the forms emu does
 * not run (sparse, b1, other shapes) are kept as text, so emu refuses them by name. */
#include "frontend/ptx_parser.h"
#include "frontend/ptx_mma.h"

#include <stdlib.h>
#include <string.h>

static const char *const mt_names[] = {"", "f16", "bf16", "tf32", "f32", "f64", "e4m3", "e5m2", "s8", "u8", "s32", "b16", "u32", NULL};

const char *mh_mma_type_name(int t) { return t > 0 && t <= MH_MT_U32 ? mt_names[t] : "?"; }

static int mt_of(const char *s, size_t n)
{
    for (int i = 1; mt_names[i]; i++)
        if (strlen(mt_names[i]) == n && !memcmp(mt_names[i], s, n)) return i;
    return 0;
}

static int is(const char *s, size_t n, const char *w) { return strlen(w) == n && !memcmp(s, w, n); }

int mma_mnemonic(const mh_ptx_tok *t)
{
    static const char *const heads[] = {"wgmma", "mma", "wmma", "ldmatrix", "stmatrix", "movmatrix", "setmaxnreg", NULL};
    if (t->kind != MH_TK_IDENT) return 0;
    const char *dot = memchr(t->s, '.', t->len);
    size_t n = dot ? (size_t)(dot - t->s) : t->len;
    for (int i = 0; heads[i]; i++)
        if (is(t->s, n, heads[i])) return 1;
    return 0;
}

/* "m16n8k16" -> 16, 8, 16 (0: not a shape) */
static int shape_of(const char *s, size_t n, uint16_t *m, uint16_t *nn, uint16_t *k)
{
    char buf[24];
    if (n >= sizeof buf || n < 6 || s[0] != 'm') return 0;
    memcpy(buf, s, n);
    buf[n] = 0;
    char *p = buf + 1, *e;
    long a = strtol(p, &e, 10);
    if (*e != 'n') return 0;
    long b = strtol(e + 1, &e, 10);
    if (*e != 'k') return 0;
    long c = strtol(e + 1, &e, 10);
    if (*e || a <= 0 || b <= 0 || c <= 0 || a > 256 || b > 256 || c > 256) return 0;
    *m = (uint16_t)a;
    *nn = (uint16_t)b;
    *k = (uint16_t)c;
    return 1;
}

/* The mnemonic's parts into the record.  0: decoded; 1: a form not decoded (kept as text). */
static int decode(const mh_ptx_tok *t, mh_ptx_mma *r)
{
    const char *part[24];
    size_t len[24];
    int np = mh_ptx_tok_parts(t, part, len, 24);
    int types[4], nt = 0, layouts[2], nl = 0, shaped = 0;
    const char *head = part[0];
    size_t hn = len[0];
    int first = 1;
    if (is(head, hn, "wgmma")) {
        if (np < 2) return 1;
        if (is(part[1], len[1], "fence")) r->kind = MH_MMA_WG_FENCE;
        else if (is(part[1], len[1], "commit_group")) r->kind = MH_MMA_WG_COMMIT;
        else if (is(part[1], len[1], "wait_group")) r->kind = MH_MMA_WG_WAIT;
        else if (is(part[1], len[1], "mma_async")) r->kind = MH_MMA_WGMMA;
        else return 1;
        first = 2;
    } else if (is(head, hn, "mma")) {
        r->kind = MH_MMA_MMA;
    } else if (is(head, hn, "wmma")) {
        if (np < 3) return 1;
        if (is(part[1], len[1], "load") && len[2] == 1 && (part[2][0] == 'a' || part[2][0] == 'b' || part[2][0] == 'c')) {
            r->kind = MH_MMA_WMMA_LOAD;
            r->frag = (uint8_t)part[2][0];
            first = 3;
        } else if (is(part[1], len[1], "store") && is(part[2], len[2], "d")) {
            r->kind = MH_MMA_WMMA_STORE;
            r->frag = 'd';
            first = 3;
        } else if (is(part[1], len[1], "mma")) {
            r->kind = MH_MMA_WMMA_MMA;
            first = 2;
        } else return 1;
    } else if (is(head, hn, "ldmatrix")) r->kind = MH_MMA_LDMATRIX;
    else if (is(head, hn, "stmatrix")) r->kind = MH_MMA_STMATRIX;
    else if (is(head, hn, "movmatrix")) r->kind = MH_MMA_MOVMATRIX;
    else if (is(head, hn, "setmaxnreg")) r->kind = MH_MMA_SETMAXNREG;
    else return 1;
    r->space = MH_SP_GENERIC;
    for (int i = first; i < np; i++) {
        const char *q = part[i];
        size_t n = len[i];
        int ty;
        if (is(q, n, "sync") || is(q, n, "aligned")) continue;
        if (is(q, n, "satfinite")) r->satfinite = 1;
        else if (is(q, n, "row") || is(q, n, "col")) {
            if (nl == 2) return 1;
            layouts[nl++] = q[0] == 'c';
        } else if (is(q, n, "trans")) r->trans = 1;
        else if (is(q, n, "x1") || is(q, n, "x2") || is(q, n, "x4")) r->num = (uint8_t)(q[1] - '0');
        else if (is(q, n, "inc") || is(q, n, "dec")) r->inc = q[0] == 'i';
        else if (is(q, n, "shared") || is(q, n, "shared::cta")) r->space = MH_SP_SHARED;
        else if (is(q, n, "global")) r->space = MH_SP_GLOBAL;
        else if (!shaped && is(q, n, "m8n8")) shaped = 1, r->m = r->n = 8; /* ldmatrix, stmatrix, movmatrix */
        else if (!shaped && shape_of(q, n, &r->m, &r->n, &r->k)) shaped = 1;
        else if ((ty = mt_of(q, n)) && nt < 4) types[nt++] = ty;
        else return 1; /* .sp, .b1, .kind::, .block_scale, .shared::cluster, ...: not decoded */
    }
    switch (r->kind) {
    case MH_MMA_WG_FENCE: case MH_MMA_WG_COMMIT: case MH_MMA_WG_WAIT: return nt || shaped || nl;
    case MH_MMA_SETMAXNREG: return !(nt == 1 && types[0] == MH_MT_U32) || shaped || nl;
    case MH_MMA_WGMMA:
        if (!shaped || nt != 3 || nl || r->m != 64 || r->n % 8 || r->n > 256) return 1;
        r->dtype = r->ctype = (uint8_t)types[0];
        r->atype = (uint8_t)types[1];
        r->btype = (uint8_t)types[2];
        return 0;
    case MH_MMA_MMA:
        if (!shaped || nt != 4 || nl != 2) return 1;
        r->dtype = (uint8_t)types[0];
        r->atype = (uint8_t)types[1];
        r->btype = (uint8_t)types[2];
        r->ctype = (uint8_t)types[3];
        r->alayout = (uint8_t)layouts[0];
        r->blayout = (uint8_t)layouts[1];
        return 0;
    case MH_MMA_LDMATRIX: case MH_MMA_STMATRIX: case MH_MMA_MOVMATRIX:
        if (r->kind == MH_MMA_MOVMATRIX) r->num = 1;
        return !shaped || r->m != 8 || r->n != 8 || nt != 1 || types[0] != MH_MT_B16 || !r->num || nl ||
               (r->kind == MH_MMA_MOVMATRIX && !r->trans) || (r->kind != MH_MMA_MOVMATRIX && r->space != MH_SP_SHARED &&
                                                              r->space != MH_SP_GENERIC);
    case MH_MMA_WMMA_LOAD: case MH_MMA_WMMA_STORE:
        if (!shaped || nt != 1 || nl != 1) return 1;
        r->atype = (uint8_t)types[0];
        r->alayout = (uint8_t)layouts[0];
        return 0;
    case MH_MMA_WMMA_MMA:
        if (!shaped || nl != 2 || (nt != 2 && nt != 4)) return 1;
        r->alayout = (uint8_t)layouts[0];
        r->blayout = (uint8_t)layouts[1];
        r->dtype = (uint8_t)types[0];
        r->ctype = (uint8_t)types[nt - 1];
        r->atype = r->btype = nt == 2 ? MH_MT_F16 : (uint8_t)types[1];
        if (nt == 4 && types[2] != types[1]) return 1;
        return 0;
    default: return 1;
    }
}

/* Registers per lane of an operand, or 0 when the shape and types are not a form emu runs. */
static int wmma_regs(const mh_ptx_mma *r, int frag, int t)
{
    int M = r->m, N = r->n, K = r->k;
    int ok = (M == 16 && N == 16 && K == 16) || (M == 32 && N == 8 && K == 16) || (M == 8 && N == 32 && K == 16) ||
             (M == 16 && N == 16 && K == 8);
    if (!ok) return 0;
    int elems = frag == 'a' ? M * K : frag == 'b' ? K * N : M * N;
    if (K == 8 && t != MH_MT_TF32 && frag != 'c' && frag != 'd') return 0;
    if (t == MH_MT_F16 && (frag == 'a' || frag == 'b')) return 8; /* f16 fragments: 8 f16x2 in every shape */
    int bits = mh_mma_type_bits(t);
    if (!bits || bits == 64) return 0;
    return elems * bits / 32 / 32;
}

static int mma_regs(const mh_ptx_mma *r, int which)
{
    int M = r->m, N = r->n, K = r->k;
    int t = which == 'a' ? r->atype : which == 'b' ? r->btype : which == 'c' ? r->ctype : r->dtype;
    int elems = which == 'a' ? M * K : which == 'b' ? K * N : M * N;
    int bits = mh_mma_type_bits(t);
    if (!bits) return 0;
    if (bits == 64) return elems / 32;
    return elems * bits / 32 / 32;
}

/* Whether the shape and types are a dense form emu computes (the others are kept as text). */
static int supported(const mh_ptx_mma *r)
{
    int a = r->atype, c = r->ctype, d = r->dtype;
    int f8 = a == MH_MT_E4M3 || a == MH_MT_E5M2, i8 = a == MH_MT_S8 || a == MH_MT_U8;
    int f8b = r->btype == MH_MT_E4M3 || r->btype == MH_MT_E5M2, i8b = r->btype == MH_MT_S8 || r->btype == MH_MT_U8;
    switch (r->kind) {
    case MH_MMA_WGMMA: {
        int k = (a == MH_MT_F16 || a == MH_MT_BF16) ? 16 : a == MH_MT_TF32 ? 8 : (f8 || i8) ? 32 : 0;
        if (!k || r->k != k) return 0;
        if (a == MH_MT_F16 || a == MH_MT_BF16 || a == MH_MT_TF32) {
            if (r->btype != a) return 0;
            if (d != MH_MT_F32 && !(d == MH_MT_F16 && a == MH_MT_F16)) return 0;
        } else if (f8) {
            if (!f8b || (d != MH_MT_F32 && d != MH_MT_F16)) return 0;
        } else if (!i8b || d != MH_MT_S32) return 0;
        return !r->satfinite || i8;
    }
    case MH_MMA_MMA: {
        if (r->btype != a && !(f8 && f8b) && !(i8 && i8b)) return 0;
        if (r->alayout != 0 || r->blayout != 1) return 0; /* row.col: the only layout past m8n8k4 */
        int ok = 0;
        if (a == MH_MT_F16 && r->m == 16 && r->n == 8 && (r->k == 8 || r->k == 16))
            ok = (d == MH_MT_F32 || d == MH_MT_F16) && (c == MH_MT_F32 || c == MH_MT_F16);
        else if (a == MH_MT_BF16 && r->m == 16 && r->n == 8 && (r->k == 8 || r->k == 16)) ok = d == MH_MT_F32 && c == MH_MT_F32;
        else if (a == MH_MT_TF32 && r->m == 16 && r->n == 8 && (r->k == 4 || r->k == 8)) ok = d == MH_MT_F32 && c == MH_MT_F32;
        else if (i8 && r->m == 16 && r->n == 8 && (r->k == 16 || r->k == 32)) ok = d == MH_MT_S32 && c == MH_MT_S32;
        else if (f8 && r->m == 16 && r->n == 8 && r->k == 32) ok = (d == MH_MT_F32 && c == MH_MT_F32) || (d == MH_MT_F16 && c == MH_MT_F16);
        else if (a == MH_MT_F64 && r->m == 8 && r->n == 8 && r->k == 4) ok = d == MH_MT_F64 && c == MH_MT_F64;
        return ok && (!r->satfinite || i8);
    }
    case MH_MMA_WMMA_LOAD: case MH_MMA_WMMA_STORE:
        return wmma_regs(r, r->frag, r->atype) > 0;
    case MH_MMA_WMMA_MMA: {
        if (a == MH_MT_F16) { if ((d != MH_MT_F16 && d != MH_MT_F32) || (c != MH_MT_F16 && c != MH_MT_F32)) return 0; }
        else if (a == MH_MT_BF16 || a == MH_MT_TF32) { if (d != MH_MT_F32 || c != MH_MT_F32) return 0; }
        else if (i8) { if (d != MH_MT_S32 || c != MH_MT_S32) return 0; }
        else return 0;
        if ((a == MH_MT_TF32) != (r->k == 8)) return 0;
        return wmma_regs(r, 'a', a) > 0 && (!r->satfinite || i8);
    }
    default: return 1;
    }
}

/* One operand: a {..} register list (into m->mma_regs) or an ordinary operand. */
typedef struct { int is_list; mh_mma_list l; mh_ptx_opnd o; } raw_opnd;

static int mma_operand(parser *P, mh_ptx_insn *in, raw_opnd *ro)
{
    memset(ro, 0, sizeof *ro);
    if (!mh_ptx_tok_punct(TOK, '{')) return parse_operand(P, in, &ro->o) ? -1 : 0;
    NEXT();
    ro->is_list = 1;
    mh_ptx_module *m = P->m;
    ro->l.off = (uint32_t)m->nmma_regs;
    while (!mh_ptx_tok_punct(TOK, '}')) {
        uint32_t reg;
        if (mh_ptx_tok_is(TOK, "_")) reg = UINT32_MAX;
        else if (TOK->kind != MH_TK_IDENT || lookup_reg(P, TOK->s, TOK->len, &reg))
            return perr(P, TOK->line, MH_E_PTX_SYNTAX, "'%.*s' in a register list of a tensor-core instruction is not a "
                        "register", (int)TOK->len, TOK->s);
        if (ro->l.n == 256) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "more than 256 registers in a list");
        if (grow((void **)&m->mma_regs, &P->cap_mma_regs, m->nmma_regs + 1, sizeof *m->mma_regs))
            return perr(P, TOK->line, MH_E_NO_MEMORY, "out of memory");
        m->mma_regs[m->nmma_regs++] = reg;
        ro->l.n++;
        NEXT();
        if (mh_ptx_tok_punct(TOK, ',')) NEXT();
        else if (!mh_ptx_tok_punct(TOK, '}'))
            return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected ',' or '}' in a register list, found '%.*s'", (int)TOK->len,
                        TOK->s);
    }
    NEXT();
    return 0;
}

static int want_list(parser *P, const mh_ptx_tok *mn, const raw_opnd *ro, int n, const char *what)
{
    if (!ro->is_list || (n && ro->l.n != n))
        return perr(P, mn->line, MH_E_PTX_SYNTAX, "'%.*s': %s must be a list of %d registers", (int)mn->len, mn->s, what, n);
    return 0;
}

static int want_imm(parser *P, const mh_ptx_tok *mn, const raw_opnd *ro, const char *what)
{
    if (ro->is_list || ro->o.kind != MH_OPK_IMM)
        return perr(P, mn->line, MH_E_PTX_SYNTAX, "'%.*s': %s must be an integer constant", (int)mn->len, mn->s, what);
    return 0;
}

static int want_reg(parser *P, const mh_ptx_tok *mn, const raw_opnd *ro, const char *what)
{
    if (ro->is_list || (ro->o.kind != MH_OPK_REG && ro->o.kind != MH_OPK_IMM))
        return perr(P, mn->line, MH_E_PTX_SYNTAX, "'%.*s': %s must be a register", (int)mn->len, mn->s, what);
    return 0;
}

static int assign(parser *P, const mh_ptx_tok *mn, mh_ptx_mma *r, raw_opnd *o, int n)
{
#define NEED(lo, hi) do { if (n < (lo) || n > (hi)) return perr(P, mn->line, MH_E_PTX_SYNTAX, "'%.*s': %d operands, " \
                          "expected %d to %d", (int)mn->len, mn->s, n, lo, hi); } while (0)
    switch (r->kind) {
    case MH_MMA_WG_FENCE: case MH_MMA_WG_COMMIT: NEED(0, 0); return 0;
    case MH_MMA_WG_WAIT: case MH_MMA_SETMAXNREG:
        NEED(1, 1);
        if (want_imm(P, mn, &o[0], "the count")) return -1;
        r->imm = (uint32_t)o[0].o.imm;
        return 0;
    case MH_MMA_WGMMA: {
        int f16 = r->atype == MH_MT_F16 || r->atype == MH_MT_BF16, fl = r->atype != MH_MT_S8 && r->atype != MH_MT_U8;
        int dn = r->n * 64 / 128 * (r->dtype == MH_MT_F16 ? 1 : 2) / 2;
        r->a_regs = o[1].is_list;
        int max = !fl ? 4 : !f16 ? 6 : r->a_regs ? 7 : 8;
        NEED(4, max);
        if (want_list(P, mn, &o[0], dn, "the accumulator") || (r->a_regs && want_list(P, mn, &o[1], 4, "A")) ||
            (!r->a_regs && want_reg(P, mn, &o[1], "A's descriptor")) || want_reg(P, mn, &o[2], "B's descriptor"))
            return -1;
        r->d = o[0].l;
        if (r->a_regs) r->a = o[1].l;
        else r->desc_a = o[1].o;
        r->desc_b = o[2].o;
        if (o[3].is_list) return want_reg(P, mn, &o[3], "scale-d");
        r->scale_d = o[3].o;
        r->scale_a = r->scale_b = 1;
        int8_t *scales[2] = {&r->scale_a, &r->scale_b};
        uint8_t *trans[2] = {&r->trans_a, &r->trans_b};
        for (int i = 4; i < n; i++) {
            if (want_imm(P, mn, &o[i], "an immediate scale or transpose")) return -1;
            int64_t v = o[i].o.imm;
            if (i < 6) {
                if (v != 1 && v != -1) return perr(P, mn->line, MH_E_PTX_SYNTAX, "'%.*s': imm-scale must be 1 or -1", (int)mn->len, mn->s);
                *scales[i - 4] = (int8_t)v;
            } else {
                if (v != 0 && v != 1) return perr(P, mn->line, MH_E_PTX_SYNTAX, "'%.*s': imm-trans must be 0 or 1", (int)mn->len, mn->s);
                *trans[r->a_regs ? 1 : i - 6] = (uint8_t)v;
            }
        }
        if (r->a_regs && n == 8) return perr(P, mn->line, MH_E_PTX_SYNTAX, "'%.*s': imm-trans-a with A in registers", (int)mn->len, mn->s);
        return 0;
    }
    case MH_MMA_MMA:
        NEED(4, 4);
        if (want_list(P, mn, &o[0], mma_regs(r, 'd'), "D") || want_list(P, mn, &o[1], mma_regs(r, 'a'), "A") ||
            want_list(P, mn, &o[2], mma_regs(r, 'b'), "B") || want_list(P, mn, &o[3], mma_regs(r, 'c'), "C"))
            return -1;
        r->d = o[0].l, r->a = o[1].l, r->b = o[2].l, r->c = o[3].l;
        return 0;
    case MH_MMA_WMMA_MMA: {
        int a = r->atype;
        NEED(4, 4);
        if (want_list(P, mn, &o[0], wmma_regs(r, 'd', r->dtype), "D") || want_list(P, mn, &o[1], wmma_regs(r, 'a', a), "A") ||
            want_list(P, mn, &o[2], wmma_regs(r, 'b', a), "B") || want_list(P, mn, &o[3], wmma_regs(r, 'c', r->ctype), "C"))
            return -1;
        r->d = o[0].l, r->a = o[1].l, r->b = o[2].l, r->c = o[3].l;
        return 0;
    }
    case MH_MMA_WMMA_LOAD: case MH_MMA_WMMA_STORE: {
        int st = r->kind == MH_MMA_WMMA_STORE;
        NEED(2, 3);
        const raw_opnd *ad = &o[st ? 0 : 1], *li = &o[st ? 1 : 0];
        if (want_list(P, mn, li, wmma_regs(r, r->frag, r->atype), "the fragment")) return -1;
        if (ad->is_list || ad->o.kind != MH_OPK_ADDR)
            return perr(P, mn->line, MH_E_PTX_SYNTAX, "'%.*s': the address must be [..]", (int)mn->len, mn->s);
        r->d = li->l;
        r->addr = ad->o;
        if (n == 3) {
            if (want_reg(P, mn, &o[2], "the stride")) return -1;
            r->stride = o[2].o;
            r->has_stride = 1;
        }
        return 0;
    }
    case MH_MMA_LDMATRIX: case MH_MMA_STMATRIX: {
        int st = r->kind == MH_MMA_STMATRIX;
        NEED(2, 2);
        const raw_opnd *ad = &o[st ? 0 : 1], *li = &o[st ? 1 : 0];
        if (want_list(P, mn, li, r->num, "the fragment")) return -1;
        if (ad->is_list || ad->o.kind != MH_OPK_ADDR)
            return perr(P, mn->line, MH_E_PTX_SYNTAX, "'%.*s': the address must be [..]", (int)mn->len, mn->s);
        r->d = li->l;
        r->addr = ad->o;
        return 0;
    }
    case MH_MMA_MOVMATRIX: {
        NEED(2, 2);
        mh_ptx_module *m = P->m;
        for (int i = 0; i < 2; i++) {
            if (o[i].is_list || o[i].o.kind != MH_OPK_REG) return want_reg(P, mn, &o[i], "an operand") ? -1 : perr(P, mn->line,
                                                             MH_E_PTX_SYNTAX, "'%.*s': operands must be registers", (int)mn->len, mn->s);
            if (grow((void **)&m->mma_regs, &P->cap_mma_regs, m->nmma_regs + 1, sizeof *m->mma_regs))
                return perr(P, mn->line, MH_E_NO_MEMORY, "out of memory");
            mh_mma_list l = {(uint32_t)m->nmma_regs, 1};
            m->mma_regs[m->nmma_regs++] = o[i].o.reg;
            if (i == 0) r->d = l;
            else r->a = l;
        }
        return 0;
    }
    default: return -1;
    }
#undef NEED
}

int parse_mma(parser *P, mh_ptx_insn *in, const mh_ptx_tok *mn)
{
    mh_ptx_mma r;
    memset(&r, 0, sizeof r);
    if (decode(mn, &r) || !supported(&r)) { /* kept as text: emu refuses it by name */
        in->op = MH_OP_OPAQUE;
        return skip_opaque(P, in, mn);
    }
    raw_opnd o[10];
    int n = 0;
    while (!mh_ptx_tok_punct(TOK, ';')) {
        if (n == 10) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "too many operands for '%.*s'", (int)mn->len, mn->s);
        if (mma_operand(P, in, &o[n++])) return -1;
        if (mh_ptx_tok_punct(TOK, ',')) NEXT();
        else if (!mh_ptx_tok_punct(TOK, ';'))
            return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected ',' or ';' after an operand of '%.*s', found '%.*s'",
                        (int)mn->len, mn->s, (int)TOK->len, TOK->s);
    }
    in->text_end = (uint32_t)(TOK->s - P->m->text) + 1;
    NEXT();
    if (assign(P, mn, &r, o, n)) return -1;
    mh_ptx_module *m = P->m;
    if (grow((void **)&m->mma, &P->cap_mma, (size_t)m->nmma + 1, sizeof *m->mma))
        return perr(P, mn->line, MH_E_NO_MEMORY, "out of memory");
    m->mma[m->nmma] = r;
    in->op = MH_OP_MMA;
    in->callee = (int32_t)m->nmma++;
    in->nopnds = 0;
    in->cmp = r.kind;
    if (r.kind == MH_MMA_LDMATRIX || r.kind == MH_MMA_STMATRIX || r.kind == MH_MMA_WMMA_LOAD || r.kind == MH_MMA_WMMA_STORE) {
        /* the address also as o[0], for what reads operands (strict mode, the parameters a kernel writes) */
        in->o[0] = r.addr;
        in->nopnds = 1;
        in->space = r.space;
    }
    return 0;
}
