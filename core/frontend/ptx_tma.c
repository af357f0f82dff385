/* ptx_tma.c - decoding of Hopper's bulk copies (cp.async.bulk, cp.async.bulk.tensor,
 * cp.reduce.async.bulk(.tensor)) into mh_ptx_tma records, their bulk_group commit/wait and
 * prefetch forms, and the tensor-map edits (tensormap.replace, tensormap.cp_fenceproxy); a form
 * emu does not run (im2col, .cp_mask, tensormap.replace of .rank or an enumerated field) is kept
 * as text, so emu refuses it by name. */
#include "frontend/ptx_parser.h"
#include "frontend/ptx_tma.h"

#include <string.h>

static int is(const char *s, size_t n, const char *w) { return strlen(w) == n && !memcmp(s, w, n); }

int tma_mnemonic(const mh_ptx_tok *t)
{
    if (t->kind != MH_TK_IDENT) return 0;
    return (t->len > 13 && !memcmp(t->s, "cp.async.bulk", 13) && (t->s[13] == '.' || t->len == 13)) ||
           (t->len > 20 && !memcmp(t->s, "cp.reduce.async.bulk", 20)) ||
           (t->len > 18 && !memcmp(t->s, "tensormap.replace.", 18)) ||
           (t->len > 24 && !memcmp(t->s, "tensormap.cp_fenceproxy.", 24));
}

typedef struct {
    int is_addr;            /* [..] */
    mh_ptx_opnd o;          /* the address (is_addr) or the value */
    mh_ptx_opnd coord[5];   /* [map, {c0, ...}]: the coordinates */
    int ncoords;            /* -1: none given */
} tma_opnd;

/* A register or an immediate integer. */
static int value(parser *P, mh_ptx_opnd *o)
{
    memset(o, 0, sizeof *o);
    o->sym = o->param = -1;
    o->reg = UINT32_MAX;
    int neg = 0;
    if (mh_ptx_tok_punct(TOK, '-')) { neg = 1; NEXT(); }
    uint64_t v;
    if (TOK->kind == MH_TK_INT && !parse_u64(TOK, &v)) {
        o->kind = MH_OPK_IMM;
        o->imm = neg ? -(int64_t)v : (int64_t)v;
        NEXT();
        return 0;
    }
    uint32_t r;
    if (!neg && TOK->kind == MH_TK_IDENT && !lookup_reg(P, TOK->s, TOK->len, &r)) {
        o->kind = MH_OPK_REG;
        o->reg = r;
        NEXT();
        return 0;
    }
    return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected a register or an integer, found '%.*s'", (int)TOK->len, TOK->s);
}

/* [reg|var|param (+-off)] or [reg, {c0, ...}] */
static int operand(parser *P, tma_opnd *x)
{
    memset(x, 0, sizeof *x);
    x->ncoords = -1;
    if (!mh_ptx_tok_punct(TOK, '[')) return value(P, &x->o);
    NEXT();
    x->is_addr = 1;
    mh_ptx_opnd *o = &x->o;
    o->kind = MH_OPK_ADDR;
    o->sym = o->param = -1;
    o->reg = UINT32_MAX;
    uint32_t r;
    int v;
    uint64_t off;
    if (TOK->kind == MH_TK_IDENT) {
        if (!lookup_reg(P, TOK->s, TOK->len, &r)) o->reg = r;
        else if ((v = find_var(P, TOK->s, TOK->len)) >= 0) o->sym = v;
        else if ((v = find_param(P, TOK->s, TOK->len)) >= 0) o->param = v;
        else return perr(P, TOK->line, MH_E_PTX_SYNTAX, "unknown name '%.*s' in an address", (int)TOK->len, TOK->s);
        NEXT();
        if (mh_ptx_tok_punct(TOK, '+') || mh_ptx_tok_punct(TOK, '-')) {
            int neg = mh_ptx_tok_punct(TOK, '-');
            NEXT();
            if (TOK->kind != MH_TK_INT || parse_u64(TOK, &off))
                return perr(P, TOK->line, MH_E_PTX_SYNTAX, "bad address offset '%.*s'", (int)TOK->len, TOK->s);
            o->imm = neg ? -(int64_t)off : (int64_t)off;
            NEXT();
        }
    } else if (TOK->kind == MH_TK_INT && !parse_u64(TOK, &off)) {
        o->imm = (int64_t)off;
        NEXT();
    } else {
        return perr(P, TOK->line, MH_E_PTX_SYNTAX, "bad address '%.*s'", (int)TOK->len, TOK->s);
    }
    if (mh_ptx_tok_punct(TOK, ',')) { /* a tensor map and its coordinates */
        NEXT();
        if (expect_punct(P, '{')) return -1;
        x->ncoords = 0;
        while (!mh_ptx_tok_punct(TOK, '}')) {
            if (x->ncoords == 5) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "more than 5 tensor coordinates");
            if (value(P, &x->coord[x->ncoords++])) return -1;
            if (mh_ptx_tok_punct(TOK, ',')) NEXT();
            else if (!mh_ptx_tok_punct(TOK, '}'))
                return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected ',' or '}' in tensor coordinates, found '%.*s'",
                            (int)TOK->len, TOK->s);
        }
        NEXT();
    }
    return expect_punct(P, ']');
}

/* The operands up to the statement's ';' (at most max of them) into o[], and the ';' taken:
 * how many, or -1 (the message set). */
static int operands(parser *P, mh_ptx_insn *in, const mh_ptx_tok *mn, tma_opnd *o, int max)
{
    int n = 0;
    while (!mh_ptx_tok_punct(TOK, ';')) {
        if (n == max) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "too many operands for '%.*s'", (int)mn->len, mn->s);
        if (operand(P, &o[n++])) return -1;
        if (mh_ptx_tok_punct(TOK, ',')) NEXT();
        else if (!mh_ptx_tok_punct(TOK, ';'))
            return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected ',' or ';' after an operand of '%.*s', found '%.*s'",
                        (int)mn->len, mn->s, (int)TOK->len, TOK->s);
    }
    in->text_end = (uint32_t)(TOK->s - P->m->text) + 1;
    NEXT();
    return n;
}

/* The mnemonic into the record.  0: decoded; 1: a form not decoded (kept as text);
 * 2: commit_group or wait_group (their operand, if any, still to read); 3: a hint (prefetch). */
static int decode(const mh_ptx_tok *t, mh_ptx_tma *r, int *policy, int *mbar, int *group)
{
    static const char *const ops[] = {"add", "min", "max", "inc", "dec", "and", "or", "xor", NULL};
    static const int aops[] = {AOP_ADD, AOP_MIN, AOP_MAX, AOP_INC, AOP_DEC, AOP_AND, AOP_OR, AOP_XOR};
    int tensor = 0, reduce = 0, nsp = 0, sp[2] = {0, 0}, cluster_dst = 0, hasop = 0;
    for (const char *p = t->s, *end = t->s + t->len; p < end;) {
        const char *q = memchr(p, '.', (size_t)(end - p));
        size_t n = (size_t)((q ? q : end) - p);
        const char *s = p;
        p = q ? q + 1 : end;
        if (is(s, n, "cp") || is(s, n, "async") || is(s, n, "bulk") || is(s, n, "tile")) continue;
        if (is(s, n, "commit_group")) { r->kind = MH_TMA_COMMIT; return 2; }
        if (is(s, n, "wait_group")) {
            r->kind = MH_TMA_WAIT;
            r->to_global = p < end && is(p, (size_t)(end - p), "read");
            return p >= end || r->to_global ? 2 : 1;
        }
        if (is(s, n, "prefetch")) return 3;
        if (is(s, n, "reduce")) { reduce = 1; continue; }
        if (is(s, n, "tensor")) { tensor = 1; continue; }
        if (n == 2 && s[1] == 'd' && s[0] >= '1' && s[0] <= '5') { r->dim = (uint8_t)(s[0] - '0'); continue; }
        int space = is(s, n, "global") ? MH_SP_GLOBAL : (is(s, n, "shared::cluster") || is(s, n, "shared::cta") ||
                                                         is(s, n, "shared")) ? MH_SP_SHARED : -1;
        if (space >= 0 && nsp < 2) {
            if (nsp == 0) cluster_dst = is(s, n, "shared::cluster");
            sp[nsp++] = space;
            continue;
        }
        if (is(s, n, "mbarrier::complete_tx::bytes")) { *mbar = 1; continue; }
        if (is(s, n, "bulk_group")) { *group = 1; continue; }
        if (is(s, n, "multicast::cluster")) { r->multicast = 1; continue; }
        if (is(s, n, "L2::cache_hint")) { *policy = 1; continue; }
        if (is(s, n, "noftz")) { r->noftz = 1; continue; }
        int k = -1;
        for (int i = 0; ops[i]; i++)
            if (is(s, n, ops[i])) k = i;
        if (k >= 0 && reduce && !hasop) { r->redop = (uint8_t)aops[k]; hasop = 1; continue; }
        mh_ptx_type ty = type_of(s, n);
        if (ty != MH_PT_NONE && reduce && !tensor && !r->type) { r->type = (uint8_t)ty; continue; }
        return 1; /* im2col, .cp_mask, another space: not decoded */
    }
    if (nsp != 2 || (tensor && !r->dim) || (!tensor && r->dim) || (reduce && !hasop) || (reduce && !tensor && !r->type))
        return 1;
    if (tensor && reduce) r->kind = MH_TMA_TENSOR_RED;
    else if (tensor) r->kind = sp[0] == MH_SP_SHARED && sp[1] == MH_SP_GLOBAL ? MH_TMA_TENSOR_LOAD : MH_TMA_TENSOR_STORE;
    else if (reduce) r->kind = MH_TMA_BULK_RED, r->to_global = sp[0] == MH_SP_GLOBAL;
    else if (sp[0] == MH_SP_SHARED && sp[1] == MH_SP_GLOBAL) r->kind = MH_TMA_BULK_LOAD;
    else if (sp[0] == MH_SP_GLOBAL && sp[1] == MH_SP_SHARED) r->kind = MH_TMA_BULK_STORE;
    else if (sp[0] == MH_SP_SHARED && sp[1] == MH_SP_SHARED && cluster_dst) r->kind = MH_TMA_BULK_S2S;
    else return 1;
    int loads = r->kind == MH_TMA_BULK_LOAD || r->kind == MH_TMA_TENSOR_LOAD || r->kind == MH_TMA_BULK_S2S ||
                (r->kind == MH_TMA_BULK_RED && !r->to_global);
    if (loads ? (!*mbar || *group) : (*mbar || !*group)) return 1; /* the completion each form has */
    if (r->kind == MH_TMA_TENSOR_STORE && !(sp[0] == MH_SP_GLOBAL && sp[1] == MH_SP_SHARED)) return 1;
    if (r->multicast && r->kind != MH_TMA_BULK_LOAD && r->kind != MH_TMA_TENSOR_LOAD) return 1;
    return 0;
}

/* r as the module's next TMA record, in its instruction (MH_OP_TMA, the record's index in callee). */
static int add_record(parser *P, mh_ptx_insn *in, const mh_ptx_tok *mn, const mh_ptx_tma *r)
{
    mh_ptx_module *m = P->m;
    if (grow((void **)&m->tma, &P->cap_tma, (size_t)m->ntma + 1, sizeof *m->tma))
        return perr(P, mn->line, MH_E_NO_MEMORY, "out of memory");
    m->tma[m->ntma] = *r;
    in->op = MH_OP_TMA;
    in->callee = (int32_t)m->ntma++;
    in->cmp = r->kind;
    return 0;
}

/* The mnemonic of tensormap.replace / tensormap.cp_fenceproxy into the record.  0: decoded; 1: a
 * form not decoded (kept as text); -1: refused (the message set). */
static int decode_tensormap(parser *P, const mh_ptx_tok *t, mh_ptx_tma *r)
{
    static const char *const fields[] = {"global_address", "box_dim", "global_dim", "global_stride", "element_stride", NULL};
    static const char *const copy[] = {"tensormap", "cp_fenceproxy", "global", "shared::cta", "tensormap::generic",
                                       "release", NULL};
    const char *part[12];
    size_t len[12];
    int n = mh_ptx_tok_parts(t, part, len, 12);
    if (is(part[1], len[1], "cp_fenceproxy")) {
        r->kind = MH_TMA_MAP_COPY;
        for (int i = 0; copy[i]; i++)
            if (i >= n || !is(part[i], len[i], copy[i])) return 1;
        if (n != 9 || !(is(part[6], len[6], "cta") || is(part[6], len[6], "cluster") || is(part[6], len[6], "gpu") ||
                        is(part[6], len[6], "sys")) || !is(part[7], len[7], "sync") || !is(part[8], len[8], "aligned"))
            return 1;
        return 0;
    }
    r->kind = MH_TMA_MAP_REPLACE;
    if (n != 7 || !is(part[2], len[2], "tile")) return 1;
    int f = -1;
    for (int i = 0; fields[i]; i++)
        if (is(part[3], len[3], fields[i])) f = i;
    if (f < 0) return 1; /* .rank, the enumerated fields: not run by emu */
    r->field = (uint8_t)f;
    if (is(part[4], len[4], "global")) r->to_global = 1;
    else if (!is(part[4], len[4], "shared::cta")) return 1;
    int wide = f == MH_TMAP_ADDRESS || f == MH_TMAP_STRIDE;
    const char *what = NULL;
    if (!is(part[5], len[5], "b1024")) what = "a tensor map is .b1024";
    else if (!is(part[6], len[6], wide ? "b64" : "b32"))
        what = wide ? ".global_address and .global_stride are .b64" : ".box_dim, .global_dim and .element_stride are .b32";
    if (what) return perr(P, t->line, MH_E_PTX_SYNTAX, "'%.*s': %s", (int)t->len, t->s, what), -1;
    r->type = (uint8_t)(wide ? MH_PT_B64 : MH_PT_B32);
    return 0;
}

/* tensormap.replace [map], {ord,} value; tensormap.cp_fenceproxy [global], [shared], 128 */
static int parse_tensormap(parser *P, mh_ptx_insn *in, const mh_ptx_tok *mn)
{
    mh_ptx_tma r;
    memset(&r, 0, sizeof r);
    int d = decode_tensormap(P, mn, &r);
    if (d < 0) return -1;
    if (d) { /* kept as text: emu refuses it by name */
        in->op = MH_OP_OPAQUE;
        return skip_opaque(P, in, mn);
    }
    tma_opnd o[3];
    int n = operands(P, in, mn, o, 3);
    if (n < 0) return -1;
    int has_ord = r.kind == MH_TMA_MAP_REPLACE && r.field != MH_TMAP_ADDRESS;
    int want = r.kind == MH_TMA_MAP_COPY ? 3 : 2 + has_ord;
    const char *what = NULL;
    if (n != want) what = "wrong number of operands";
    else if (!o[0].is_addr || o[0].ncoords >= 0) what = "the tensor map must be an address [..]";
    else if (r.kind == MH_TMA_MAP_COPY) {
        if (!o[1].is_addr || o[1].ncoords >= 0) what = "the source must be a shared address [..]";
        else if (o[2].is_addr || o[2].o.kind != MH_OPK_IMM || o[2].o.imm != 128) what = "the size must be 128";
        r.src = o[1].o;
        r.size = o[2].o;
    } else {
        if (has_ord && (o[1].is_addr || o[1].o.kind != MH_OPK_IMM || o[1].o.imm < 0 ||
                        o[1].o.imm > (r.field == MH_TMAP_STRIDE ? 3 : 4)))
            what = r.field == MH_TMAP_STRIDE ? "the ordinal must be an integer 0..3" : "the ordinal must be an integer 0..4";
        else if (o[1 + has_ord].is_addr) what = "the new value must be a register or an immediate";
        r.ord = has_ord ? (uint8_t)o[1].o.imm : 0;
        r.size = o[1 + has_ord].o;
    }
    r.dst = o[0].o;
    if (what) return perr(P, in->line, MH_E_PTX_SYNTAX, "'%.*s': %s", (int)mn->len, mn->s, what);
    if (add_record(P, in, mn, &r)) return -1;
    in->nopnds = 0;
    return 0;
}

int parse_tma(parser *P, mh_ptx_insn *in, const mh_ptx_tok *mn)
{
    if (mn->len > 10 && !memcmp(mn->s, "tensormap.", 10)) return parse_tensormap(P, in, mn);
    mh_ptx_tma r;
    memset(&r, 0, sizeof r);
    int policy = 0, mbar = 0, group = 0;
    int d = decode(mn, &r, &policy, &mbar, &group);
    if (d == 2) { /* commit_group; wait_group N */
        if (r.kind == MH_TMA_WAIT) {
            uint64_t v;
            if (TOK->kind != MH_TK_INT || parse_u64(TOK, &v) || v > 63)
                return perr(P, TOK->line, MH_E_PTX_SYNTAX, "'%.*s': the group count must be an integer 0..63", (int)mn->len, mn->s);
            r.size.kind = MH_OPK_IMM;
            r.size.imm = (int64_t)v;
            r.size.reg = UINT32_MAX;
            NEXT();
        }
        in->text_end = (uint32_t)(TOK->s - P->m->text) + 1;
        if (expect_punct(P, ';')) return -1;
        return add_record(P, in, mn, &r);
    }
    if (d) { /* kept as text (emu refuses it), or a hint emu needs no operands of */
        in->op = MH_OP_OPAQUE;
        if (skip_opaque(P, in, mn)) return -1;
        if (d == 3) in->op = MH_OP_PREFETCH;
        return 0;
    }
    tma_opnd o[6];
    int n = operands(P, in, mn, o, 6);
    if (n < 0) return -1;
    int tensor = r.kind == MH_TMA_TENSOR_LOAD || r.kind == MH_TMA_TENSOR_STORE || r.kind == MH_TMA_TENSOR_RED;
    int want = (tensor ? 2 : 3) + mbar + r.multicast + policy;
    const char *what = NULL;
    int k = 0;
    if (n != want) what = "wrong number of operands";
    else if (r.kind == MH_TMA_TENSOR_LOAD) {
        if (!o[0].is_addr || o[0].ncoords >= 0) what = "the destination must be a shared address [..]";
        else if (!o[1].is_addr || o[1].ncoords != r.dim) what = "the source must be [tensorMap, {coordinates}], one per dimension";
        r.dst = o[0].o;
        r.map = o[1].o;
        memcpy(r.coord, o[1].coord, sizeof r.coord);
        k = 2;
    } else if (tensor) {
        if (!o[0].is_addr || o[0].ncoords != r.dim) what = "the destination must be [tensorMap, {coordinates}], one per dimension";
        else if (!o[1].is_addr || o[1].ncoords >= 0) what = "the source must be a shared address [..]";
        r.map = o[0].o;
        memcpy(r.coord, o[0].coord, sizeof r.coord);
        r.src = o[1].o;
        k = 2;
    } else {
        if (!o[0].is_addr || !o[1].is_addr || o[0].ncoords >= 0 || o[1].ncoords >= 0) what = "the source and destination must be addresses [..]";
        else if (o[2].is_addr) what = "the size must be a register or an immediate";
        r.dst = o[0].o;
        r.src = o[1].o;
        r.size = o[2].o;
        k = 3;
    }
    if (!what && mbar) {
        if (!o[k].is_addr || o[k].ncoords >= 0) what = "the mbarrier must be an address [..]";
        r.mbar = o[k++].o;
    }
    if (!what && r.multicast) {
        if (o[k].is_addr) what = "the CTA mask must be a register or an immediate";
        r.mask = o[k++].o;
    }
    if (!what && policy && o[k].is_addr) what = "the cache policy must be a register";
    if (what) return perr(P, in->line, MH_E_PTX_SYNTAX, "'%.*s': %s", (int)mn->len, mn->s, what);
    if (add_record(P, in, mn, &r)) return -1;
    in->nopnds = 0;
    return 0;
}
