/* ptx_tables.c - the module's tables: the name index (registers, variables, parameters, labels,
 * functions), type, space, opcode and special-register names, registers in scope, variables
 * and parameters by name, the variables' layout, and mh_ptx_free / mh_ptx_find. */
#include "frontend/ptx_parser.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t name_hash(const char *s, size_t n, int32_t scope)
{
    uint32_t h = 2166136261u ^ (uint32_t)scope;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static name_ent *index_find(const name_index *x, const char *s, size_t n, int32_t scope, uint32_t h)
{
    if (!x->cap) return NULL;
    for (size_t i = h & (x->cap - 1);; i = (i + 1) & (x->cap - 1)) {
        name_ent *e = &x->e[i];
        if (!e->s) return e;
        if (e->hash == h && e->scope == scope && e->len == n && !memcmp(e->s, s, n)) return e;
    }
}

/* The value slot of (s, scope) if it is there (no allocation), else NULL. */
static int32_t *index_slot(const name_index *x, const char *s, size_t n, int32_t scope)
{
    name_ent *e = index_find(x, s, n, scope, name_hash(s, n, scope));
    return e && e->s ? &e->val : NULL;
}

int32_t index_get(const name_index *x, const char *s, size_t n, int32_t scope)
{
    const int32_t *v = index_slot(x, s, n, scope);
    return v ? *v : -1;
}

/* The value slot of (s, scope), made (with the value -1) if new; NULL: out of memory. */
int32_t *index_put(name_index *x, const char *s, size_t n, int32_t scope)
{
    if (n > UINT32_MAX) return NULL;
    if (2 * (x->n + 1) > x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 64;
        name_ent *ne = cap <= SIZE_MAX / sizeof *ne ? calloc(cap, sizeof *ne) : NULL;
        if (!ne) return NULL;
        name_index nx = {ne, cap, x->n};
        for (size_t i = 0; i < x->cap; i++)
            if (x->e[i].s) *index_find(&nx, x->e[i].s, x->e[i].len, x->e[i].scope, x->e[i].hash) = x->e[i];
        free(x->e);
        *x = nx;
    }
    uint32_t h = name_hash(s, n, scope);
    name_ent *e = index_find(x, s, n, scope, h);
    if (!e->s) {
        *e = (name_ent){s, (uint32_t)n, h, scope, -1};
        x->n++;
    }
    return &e->val;
}

void index_free(name_index *x)
{
    free(x->e);
    x->e = NULL;
    x->cap = x->n = 0;
}

/* ---- types, spaces, names --------------------------------------------- */

static const struct { const char *name; mh_ptx_type t; } type_names[] = {
    {"b8", MH_PT_B8}, {"b16", MH_PT_B16}, {"b32", MH_PT_B32}, {"b64", MH_PT_B64},
    {"u8", MH_PT_U8}, {"u16", MH_PT_U16}, {"u32", MH_PT_U32}, {"u64", MH_PT_U64},
    {"s8", MH_PT_S8}, {"s16", MH_PT_S16}, {"s32", MH_PT_S32}, {"s64", MH_PT_S64},
    {"f16", MH_PT_F16}, {"f16x2", MH_PT_F16X2}, {"bf16", MH_PT_BF16}, {"bf16x2", MH_PT_BF16X2},
    {"f32", MH_PT_F32}, {"f64", MH_PT_F64}, {"pred", MH_PT_PRED},
};

mh_ptx_type type_of(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof type_names / sizeof *type_names; i++)
        if (strlen(type_names[i].name) == n && !memcmp(type_names[i].name, s, n)) return type_names[i].t;
    return MH_PT_NONE;
}

const char *mh_ptx_type_name(mh_ptx_type t)
{
    for (size_t i = 0; i < sizeof type_names / sizeof *type_names; i++)
        if (type_names[i].t == t) return type_names[i].name;
    return "?";
}

/* ".shared", "shared::cta" ... -> space; -1 if not a space name. */
int space_of(const char *s, size_t n)
{
    size_t k = 0;
    while (k < n && s[k] != ':') k++;
#define SP(str, v) if (k == sizeof(str) - 1 && !memcmp(s, str, k)) return v
    SP("global", MH_SP_GLOBAL);
    SP("shared", MH_SP_SHARED);
    SP("local", MH_SP_LOCAL);
    SP("param", MH_SP_PARAM);
    SP("const", MH_SP_CONST);
#undef SP
    return -1;
}

static const char *const op_names[MH_OP_COUNT_] = {
    [MH_OP_NOP] = "nop", [MH_OP_MOV] = "mov", [MH_OP_LD] = "ld", [MH_OP_ST] = "st", [MH_OP_CVTA] = "cvta", [MH_OP_CVT] = "cvt",
    [MH_OP_ADD] = "add", [MH_OP_SUB] = "sub", [MH_OP_MUL] = "mul", [MH_OP_MAD] = "mad", [MH_OP_FMA] = "fma", [MH_OP_DIV] = "div",
    [MH_OP_REM] = "rem", [MH_OP_ABS] = "abs", [MH_OP_NEG] = "neg", [MH_OP_MIN] = "min", [MH_OP_MAX] = "max", [MH_OP_AND] = "and",
    [MH_OP_OR] = "or", [MH_OP_XOR] = "xor", [MH_OP_NOT] = "not", [MH_OP_CNOT] = "cnot", [MH_OP_SHL] = "shl", [MH_OP_SHR] = "shr",
    [MH_OP_SETP] = "setp", [MH_OP_SELP] = "selp", [MH_OP_SET] = "set", [MH_OP_SQRT] = "sqrt", [MH_OP_RSQRT] = "rsqrt",
    [MH_OP_RCP] = "rcp", [MH_OP_EX2] = "ex2", [MH_OP_LG2] = "lg2", [MH_OP_SIN] = "sin", [MH_OP_COS] = "cos", [MH_OP_TANH] = "tanh",
    [MH_OP_CLZ] = "clz", [MH_OP_POPC] = "popc", [MH_OP_BREV] = "brev", [MH_OP_BFE] = "bfe", [MH_OP_BFI] = "bfi",
    [MH_OP_PRMT] = "prmt", [MH_OP_LOP3] = "lop3", [MH_OP_MUL24] = "mul24", [MH_OP_MAD24] = "mad24", [MH_OP_SAD] = "sad",
    [MH_OP_COPYSIGN] = "copysign", [MH_OP_TESTP] = "testp", [MH_OP_BRA] = "bra", [MH_OP_RET] = "ret", [MH_OP_EXIT] = "exit",
    [MH_OP_BAR] = "bar", [MH_OP_MEMBAR] = "membar", [MH_OP_ATOM] = "atom", [MH_OP_RED] = "red", [MH_OP_SHFL] = "shfl",
    [MH_OP_VOTE] = "vote", [MH_OP_ACTIVEMASK] = "activemask", [MH_OP_MBARRIER_INIT] = "mbarrier.init", [MH_OP_CP_ASYNC] = "cp.async",
    [MH_OP_PREFETCH] = "prefetch", [MH_OP_TRAP] = "trap", [MH_OP_CALL] = "call", [MH_OP_REDUX] = "redux",
    [MH_OP_MBARRIER] = "mbarrier",
    [MH_OP_MATCH] = "match", [MH_OP_MMA] = "tensor-core", [MH_OP_TMA] = "cp.async.bulk", [MH_OP_CLUSTER] = "cluster",
    [MH_OP_BFIND] = "bfind",
    /* MH_OP_OPAQUE has no name: no mnemonic decodes to it */
};

const char *mh_ptx_op_name(mh_ptx_op op) { return (unsigned)op < MH_OP_COUNT_ && op_names[op] ? op_names[op] : "?"; }

int op_of(const char *s, size_t n)
{
    if (n == 7 && !memcmp(s, "barrier", 7)) return MH_OP_BAR;
    if (n == 5 && !memcmp(s, "fence", 5)) return MH_OP_MEMBAR;
    /* nanosleep sleeps "about t ns, in [0, 2t]": no sleep at all is a valid one */
    if (n == 9 && !memcmp(s, "nanosleep", 9)) return MH_OP_MEMBAR;
    if (n == 3 && !memcmp(s, "ldu", 3)) return MH_OP_LD;
    /* cache hints: the uniform cache's prefetch, a line's data discarded (its value may stay: a
     * valid outcome), a priority applied; emu has no caches, so none changes what a kernel computes */
    if ((n == 9 && !memcmp(s, "prefetchu", 9)) || (n == 7 && !memcmp(s, "discard", 7)) ||
        (n == 13 && !memcmp(s, "applypriority", 13)))
        return MH_OP_PREFETCH;
    for (int i = 0; i < MH_OP_COUNT_; i++)
        if (op_names[i] && strlen(op_names[i]) == n && !memcmp(op_names[i], s, n)) return i;
    return -1;
}

/* ---- registers and names ---------------------------------------------- */

int new_reg(parser *P, const char *name, size_t len, mh_ptx_type t, uint32_t *out)
{
    mh_ptx_module *m = P->m;
    if (m->nregs >= MH_PTX_MAX_REGS)
        return perr(P, TOK->line, MH_E_PTX_SYNTAX, "more than %u registers in the module", MH_PTX_MAX_REGS);
    size_t cap = m->nregs; /* capacity tracked by powers of two */
    if ((m->nregs & (m->nregs - 1)) == 0 || m->nregs == 0) {
        size_t c = m->nregs ? m->nregs * 2 : 64;
        (void)cap;
        mh_ptx_type *rt = realloc(m->reg_type, c * sizeof *rt);
        if (rt) m->reg_type = rt;
        char **rn = realloc(m->reg_name, c * sizeof *rn);
        if (rn) m->reg_name = rn;
        if (!rt || !rn) return perr(P, TOK->line, MH_E_NO_MEMORY, "out of memory for registers");
    }
    char *nm = malloc(len + 1);
    if (!nm) return perr(P, TOK->line, MH_E_NO_MEMORY, "out of memory for registers");
    memcpy(nm, name, len);
    nm[len] = 0;
    m->reg_type[m->nregs] = t;
    m->reg_name[m->nregs] = nm;
    *out = m->nregs++;
    return 0;
}

/* The register a name means: the latest declaration in scope that covers it, a single
 * one of that name or a range "prefix<N>" with the name's number below N (leading zeros
 * and all, as ptxas reads it).  Through the index: the single name, and each way of splitting
 * the name's trailing digits off as a range's number, walking the hidden declarations
 * of a prefix (at most one per enclosing scope) until one covers the number. */
static int32_t lookup_decl(parser *P, const char *s, size_t n, uint32_t *out)
{
    int32_t best = index_get(&P->regs, s, n, 0);
    uint32_t at = best >= 0 ? P->decls[best].base : 0;
    size_t k = n;
    while (k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9') k--;
    for (size_t p = k; p < n; p++) { /* the prefix s[0, p), the number s[p, n) */
        if (n - p > 10) continue; /* leading zeros are the number's: ptxas takes %r01 as %r1 of %r<20> */
        uint64_t v = 0;
        for (size_t q = p; q < n; q++) v = v * 10 + (uint64_t)(s[q] - '0');
        for (int32_t d = index_get(&P->regs, s, p, 1); d > best; d = P->decls[d].prev)
            if (v < P->decls[d].count) {
                best = d;
                at = P->decls[d].base + (uint32_t)v;
                break;
            }
    }
    if (best >= 0) *out = at;
    return best;
}

/* A vector register's element (v.x, v.y, v.z, v.w or v.r, v.g, v.b, v.a) or a scalar register;
 * the vector's name alone is no scalar register. */
int lookup_reg(parser *P, const char *s, size_t n, uint32_t *out)
{
    int32_t d = lookup_decl(P, s, n, out);
    if (d >= 0) return P->decls[d].width ? -1 : 0;
    if (n < 3 || s[n - 2] != '.') return -1;
    const char *at = strchr("xyzwrgba", s[n - 1]);
    uint32_t base, width = lookup_vec_reg(P, s, n - 2, &base);
    if (!at || !s[n - 1] || !width) return -1;
    uint32_t i = (uint32_t)(at - "xyzwrgba") % 4;
    if (i >= width) return -1;
    *out = base + i;
    return 0;
}

uint32_t lookup_vec_reg(parser *P, const char *s, size_t n, uint32_t *base)
{
    uint32_t r;
    int32_t d = lookup_decl(P, s, n, &r);
    if (d < 0 || !P->decls[d].width) return 0;
    *base = P->decls[d].base;
    return P->decls[d].width;
}

/* 1 when the register name s is the range d's prefix followed by a number below its count, as
 * lookup_decl reads it; leading zeros are part of the number (ptxas: %r007 is %r7 of %r<20>, a second
 * definition of it). */
static int range_covers(const reg_decl *d, const char *s, size_t n)
{
    if (n <= d->len || memcmp(s, d->name, d->len)) return 0;
    size_t z = d->len;
    while (z + 1 < n && s[z] == '0') z++; /* the zeros before the number's digits */
    if (n - z > 10) return 0;
    uint64_t v = 0;
    for (size_t q = z; q < n; q++) {
        if (s[q] < '0' || s[q] > '9') return 0;
        v = v * 10 + (uint64_t)(s[q] - '0');
    }
    return v < d->count;
}

static int duplicate(parser *P, const char *s, size_t n, const char *what, uint32_t line, const char *first,
                     uint32_t first_line, const char *range)
{
    int same = !strcmp(what, first);
    return perr(P, line, MH_E_PTX_SYNTAX, "%s '%.*s%s' is defined twice in one scope (first at line %u%s%s)", what,
                (int)(n < 64 ? n : 64), s, range, first_line, same ? "" : ", as a ", same ? "" : first);
}

int check_new_name(parser *P, const char *s, size_t n, const char *what, uint32_t line, uint32_t range)
{
    int32_t k;
    uint32_t r;
    const char *rs = range ? "<>" : "";
    if (P->func < 0) { /* module scope: variables and functions */
        if ((k = index_get(&P->vars, s, n, -1)) >= 0) return duplicate(P, s, n, what, line, "variable", P->m->vars[k].line, rs);
        if ((k = index_get(&P->funcs, s, n, 0)) >= 0) return duplicate(P, s, n, what, line, "function", P->m->funcs[k].line, rs);
        return 0;
    }
    if (!range && (k = index_get(&P->labels_ix, s, n, P->block)) >= 0)
        return duplicate(P, s, n, what, line, "label", P->labels[k].line, rs);
    if (!range && (k = index_get(&P->vars, s, n, P->block_base + P->block)) >= 0)
        return duplicate(P, s, n, what, line, "variable", P->m->vars[k].line, rs);
    /* a register: any of the block's that the name means (a range covers it); a label or a variable
     * meets only a single register of its name (ptxas takes "L1:" beside ".reg .b32 L<4>") */
    int is_reg = !strcmp(what, "register");
    if (!range && (k = is_reg ? lookup_decl(P, s, n, &r) : index_get(&P->regs, s, n, 0)) >= 0 &&
        P->decls[k].depth == P->depth)
        return duplicate(P, s, n, what, line, "register", P->decls[k].line, rs);
    if (range && (k = index_get(&P->regs, s, n, 1)) >= 0 && P->decls[k].depth == P->depth)
        return duplicate(P, s, n, what, line, "register", P->decls[k].line, rs);
    if (range) /* the block's single registers the new range covers */
        for (size_t d = P->decls_from; d < P->ndecls; d++) {
            reg_decl probe = {.name = s, .len = n, .count = range, .prev = -1};
            if (!P->decls[d].count && range_covers(&probe, P->decls[d].name, P->decls[d].len))
                return perr(P, line, MH_E_PTX_SYNTAX, "register range '%.*s<%u>' covers the register '%.*s' of the same "
                            "scope (line %u): one is defined twice", (int)(n < 64 ? n : 64), s, range,
                            (int)(P->decls[d].len < 64 ? P->decls[d].len : 64), P->decls[d].name, P->decls[d].line);
        }
    if (!range && P->block == 0 && (k = find_param(P, s, n)) != -1)
        return duplicate(P, s, n, what, line, "parameter", P->m->funcs[P->func].line, rs);
    return 0;
}

/* Ends the scopes of the declarations past the first n: the index shows what they hid. */
void decls_truncate(parser *P, size_t n)
{
    while (P->ndecls > n) {
        reg_decl *d = &P->decls[--P->ndecls];
        int32_t *slot = index_slot(&P->regs, d->name, d->len, d->count ? 1 : 0);
        if (slot && *slot == (int32_t)P->ndecls) *slot = d->prev;
    }
}

static const struct { const char *name; mh_ptx_sreg id; } sreg_names[] = {
    {"%tid.x", MH_SR_TID_X}, {"%tid.y", MH_SR_TID_Y}, {"%tid.z", MH_SR_TID_Z},
    {"%ntid.x", MH_SR_NTID_X}, {"%ntid.y", MH_SR_NTID_Y}, {"%ntid.z", MH_SR_NTID_Z},
    {"%ctaid.x", MH_SR_CTAID_X}, {"%ctaid.y", MH_SR_CTAID_Y}, {"%ctaid.z", MH_SR_CTAID_Z},
    {"%nctaid.x", MH_SR_NCTAID_X}, {"%nctaid.y", MH_SR_NCTAID_Y}, {"%nctaid.z", MH_SR_NCTAID_Z},
    {"%laneid", MH_SR_LANEID}, {"%warpid", MH_SR_WARPID}, {"%nwarpid", MH_SR_NWARPID}, {"%smid", MH_SR_SMID},
    {"%nsmid", MH_SR_NSMID}, {"%clock", MH_SR_CLOCK}, {"%clock_hi", MH_SR_CLOCK_HI}, {"%clock64", MH_SR_CLOCK64},
    {"%globaltimer", MH_SR_GLOBALTIMER}, {"%globaltimer_lo", MH_SR_GLOBALTIMER_LO},
    {"%globaltimer_hi", MH_SR_GLOBALTIMER_HI}, {"%lanemask_eq", MH_SR_LANEMASK_EQ}, {"%lanemask_lt", MH_SR_LANEMASK_LT},
    {"%lanemask_le", MH_SR_LANEMASK_LE}, {"%lanemask_gt", MH_SR_LANEMASK_GT}, {"%lanemask_ge", MH_SR_LANEMASK_GE},
    {"%dynamic_smem_size", MH_SR_DYNAMIC_SMEM_SIZE}, {"%total_smem_size", MH_SR_TOTAL_SMEM_SIZE},
    {"%gridid", MH_SR_GRIDID}, {"%aggr_smem_size", MH_SR_AGGR_SMEM_SIZE},
    {"%clusterid.x", MH_SR_CLUSTERID_X}, {"%clusterid.y", MH_SR_CLUSTERID_Y}, {"%clusterid.z", MH_SR_CLUSTERID_Z},
    {"%nclusterid.x", MH_SR_NCLUSTERID_X}, {"%nclusterid.y", MH_SR_NCLUSTERID_Y}, {"%nclusterid.z", MH_SR_NCLUSTERID_Z},
    {"%cluster_ctaid.x", MH_SR_CLUSTER_CTAID_X}, {"%cluster_ctaid.y", MH_SR_CLUSTER_CTAID_Y},
    {"%cluster_ctaid.z", MH_SR_CLUSTER_CTAID_Z}, {"%cluster_nctaid.x", MH_SR_CLUSTER_NCTAID_X},
    {"%cluster_nctaid.y", MH_SR_CLUSTER_NCTAID_Y}, {"%cluster_nctaid.z", MH_SR_CLUSTER_NCTAID_Z},
    {"%cluster_ctarank", MH_SR_CLUSTER_CTARANK}, {"%cluster_nctarank", MH_SR_CLUSTER_NCTARANK},
    {"%is_explicit_cluster", MH_SR_IS_EXPLICIT_CLUSTER},
    {"%reserved_smem_offset_begin", MH_SR_RESERVED_SMEM_BEGIN}, {"%reserved_smem_offset_end", MH_SR_RESERVED_SMEM_END},
    {"%reserved_smem_offset_cap", MH_SR_RESERVED_SMEM_CAP}, {"%reserved_smem_offset_0", MH_SR_RESERVED_SMEM_0},
    {"%reserved_smem_offset_1", MH_SR_RESERVED_SMEM_1}, {"%current_graph_exec", MH_SR_CURRENT_GRAPH_EXEC},
};

/* "%envreg0".."%envreg31", "%pm0".."%pm7", "%pm0_64".."%pm7_64": numbered families */
static int numbered_sreg(const char *s, size_t n)
{
    static const struct { const char *prefix, *suffix; int base, count; } fam[] = {
        {"%envreg", "", MH_SR_ENVREG0, 32}, {"%pm", "_64", MH_SR_PM0_64, 8}, {"%pm", "", MH_SR_PM0, 8},
    };
    for (size_t f = 0; f < sizeof fam / sizeof *fam; f++) {
        size_t pl = strlen(fam[f].prefix), sl = strlen(fam[f].suffix);
        if (n <= pl + sl || memcmp(s, fam[f].prefix, pl) || memcmp(s + n - sl, fam[f].suffix, sl)) continue;
        int v = 0;
        size_t i = pl;
        for (; i < n - sl && isdigit((unsigned char)s[i]) && v < 100; i++) v = v * 10 + (s[i] - '0');
        if (i == n - sl && i > pl && (i == pl + 1 || s[pl] != '0') && v < fam[f].count) return fam[f].base + v;
    }
    return -1;
}

int sreg_of(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof sreg_names / sizeof *sreg_names; i++)
        if (strlen(sreg_names[i].name) == n && !memcmp(sreg_names[i].name, s, n)) return (int)sreg_names[i].id;
    return numbered_sreg(s, n);
}

const char *mh_ptx_sreg_name(int id, char *buf, size_t len)
{
    for (size_t i = 0; i < sizeof sreg_names / sizeof *sreg_names; i++)
        if ((int)sreg_names[i].id == id) return sreg_names[i].name;
    if (id >= MH_SR_ENVREG0 && id < MH_SR_PM0) snprintf(buf, len, "%%envreg%d", id - MH_SR_ENVREG0);
    else if (id >= MH_SR_PM0 && id < MH_SR_PM0_64) snprintf(buf, len, "%%pm%d", id - MH_SR_PM0);
    else if (id >= MH_SR_PM0_64 && id < MH_SR_COUNT_) snprintf(buf, len, "%%pm%d_64", id - MH_SR_PM0_64);
    else snprintf(buf, len, "special register %d", id);
    return buf;
}

int find_var(parser *P, const char *s, size_t n)
{
    for (int32_t b = P->func >= 0 ? P->block : -1; b >= 0; b = P->blocks[b].parent) {
        int v = index_get(&P->vars, s, n, P->block_base + b);
        if (v >= 0) return v;
    }
    return index_get(&P->vars, s, n, -1);
}

/* A parameter of the function being parsed (its index), or a return parameter (-2 - index). */
int find_param(parser *P, const char *s, size_t n)
{
    int i = index_get(&P->params, s, n, 0);
    if (i >= 0) return i;
    i = index_get(&P->params, s, n, 1);
    return i >= 0 ? -2 - i : -1;
}

/* Indexes the parameters of the function being parsed (the first of a name wins). */
int index_params(parser *P)
{
    const mh_ptx_func *f = &P->m->funcs[P->func];
    index_free(&P->params);
    for (int r = 0; r < 2; r++)
        for (uint32_t i = 0; i < (r ? f->nrets : f->nparams); i++) {
            const char *name = r ? f->rets[i].name : f->params[i].name;
            int32_t *slot = index_put(&P->params, name, strlen(name), r);
            if (!slot) return -1;
            if (*slot < 0) *slot = (int32_t)i;
        }
    return 0;
}

static void place(mh_ptx_var *v, uint64_t *at)
{
    *at = (*at + v->align - 1) / v->align * v->align;
    v->offset = *at;
    *at += v->size;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Each function's local_bytes: the .local bytes a thread of it needs, its own variables, those
 * of the functions it calls (directly or not; a call through a register may reach any) and the
 * module's, laid out afresh in text order (what a kernel:info reports; the driver's
 * LOCAL_SIZE_BYTES counts a kernel's frame likewise, not the module's).  start/by: the
 * variables bucketed by function, start[0] the module's, start[f + 1] function f's, before
 * layout_vars compacts the module's bucket.  -1: out of memory. */
static int function_locals(mh_ptx_module *m, const uint32_t *start, const uint32_t *by)
{
    uint32_t nf = m->nfuncs;
    unsigned char *seen = calloc(nf ? nf : 1, 1);
    uint32_t *todo = malloc((nf ? nf : 1) * sizeof *todo), *list = malloc((nf ? nf : 1) * sizeof *list);
    if (!seen || !todo || !list) {
        free(seen);
        free(todo);
        free(list);
        return -1;
    }
    /* the module's .local variables come first in every function's layout: placed once */
    uint64_t at_mod = 0;
    for (uint32_t k = start[0]; k < start[1]; k++) {
        mh_ptx_var *v = &m->vars[by[k]];
        if (v->space != MH_SP_LOCAL || !v->size) continue;
        uint64_t off = v->offset; /* place() sets it: the module layout's offset stays */
        place(v, &at_mod);
        v->offset = off;
    }
    for (uint32_t fi = 0; fi < nf; fi++) {
        uint32_t n = 0, nl = 0;
        seen[fi] = 1;
        todo[n++] = list[nl++] = fi;
        int any = 0; /* a call through a register: every function may run */
        while (n && !any) {
            const mh_ptx_func *F = &m->funcs[todo[--n]];
            for (uint32_t i = 0; i < F->ncode && !any; i++) {
                const mh_ptx_insn *in = &F->code[i];
                int call = in->op == MH_OP_CALL || (in->op == MH_OP_OPAQUE && (in->mods & MH_MOD_OPAQUE_CALL));
                if (!call) continue;
                if (in->callee < 0) any = 1;
                else if (!seen[in->callee]) {
                    seen[in->callee] = 1;
                    todo[n++] = list[nl++] = (uint32_t)in->callee;
                }
            }
        }
        for (uint32_t j = 0; j < nl; j++) seen[list[j]] = 0; /* clean for the next function */
        uint64_t at = at_mod;
        /* after the module's variables, each reached function's own, in text order */
        if (any) {
            nl = 0;
            for (uint32_t g = 0; g < nf; g++) list[nl++] = g;
        } else qsort(list, nl, sizeof *list, cmp_u32);
        for (uint32_t j = 1; j <= nl; j++) {
            uint32_t b = list[j - 1] + 1; /* bucket b: start[b] .. start[b + 1] */
            for (uint32_t k = start[b]; k < start[b + 1]; k++) {
                mh_ptx_var *v = &m->vars[by[k]];
                if (v->space != MH_SP_LOCAL || !v->size) continue;
                uint64_t off = v->offset; /* place() sets it: the module layout's offset stays */
                place(v, &at);
                v->offset = off;
            }
        }
        m->funcs[fi].local_bytes = at;
    }
    free(seen);
    free(todo);
    free(list);
    return 0;
}

/* Offsets of the variables: .local (one module layout, and each function's figure), each
 * function's call area, the shared layouts (ptx_smem.c), the data segment.  The variables are
 * bucketed by function first, so the work is the variables plus the functions, not functions x
 * all variables.  -1: out of memory. */
int layout_vars(mh_ptx_module *m)
{
    uint32_t nf = m->nfuncs, nv = m->nvars;
    /* by[start[f + 1] .. start[f + 2]): the variables of function f (f = -1: module scope), in order */
    uint32_t *start = calloc((size_t)nf + 3, sizeof *start), *by = malloc(((size_t)nv + 1) * sizeof *by);
    if (!start || !by) {
        free(start);
        free(by);
        return -1;
    }
    for (uint32_t i = 0; i < nv; i++) start[m->vars[i].func + 2]++;
    for (uint32_t f = 0; f < nf + 2; f++) start[f + 1] += start[f];
    for (uint32_t i = 0; i < nv; i++) by[start[m->vars[i].func + 1]++] = i;
    for (uint32_t f = nf + 2; f > 0; f--) start[f] = start[f - 1];
    start[0] = 0;
    /* .local: one layout for the whole module, the module's variables and then
     * each function's after the previous ones, so a kernel and the .funcs it
     * calls never share bytes (calls cannot recurse) and every launch gets
     * room for all of them per thread */
    uint64_t local = 0;
    for (uint32_t k = 0; k < nv; k++)
        if (m->vars[by[k]].space == MH_SP_LOCAL && m->vars[by[k]].size) place(&m->vars[by[k]], &local);
    /* each function's own figure (kernel:info), while the buckets are whole */
    if (function_locals(m, start, by)) {
        free(start);
        free(by);
        return -1;
    }
    /* each function's own call-area (.param) variables */
    for (uint32_t fi = 0; fi < nf; fi++)
        for (uint32_t k = start[fi + 1]; k < start[fi + 2]; k++) {
            mh_ptx_var *v = &m->vars[by[k]];
            if (v->space == MH_SP_PARAM && v->func == (int)fi && v->size) place(v, &m->funcs[fi].callarea_bytes);
        }
    free(start);
    free(by);
    if (layout_shared(m)) return -1;
    /* global/const variables: offsets in a module data segment */
    uint64_t data = 0;
    for (uint32_t i = 0; i < m->nvars; i++) {
        mh_ptx_var *v = &m->vars[i];
        if (v->space != MH_SP_GLOBAL && v->space != MH_SP_CONST) continue;
        place(v, &data);
    }
    return 0;
}

void mh_ptx_free(mh_ptx_module *m)
{
    for (uint32_t i = 0; i < m->nfuncs; i++) {
        mh_ptx_func *f = &m->funcs[i];
        free(f->name);
        free(f->short_name);
        for (uint32_t k = 0; k < f->nparams; k++) free(f->params[k].name);
        for (uint32_t k = 0; k < f->nrets; k++) free(f->rets[k].name);
        free(f->params);
        free(f->rets);
        free(f->code);
        free(f->blocks);
        free(f->shared_offsets);
    }
    for (uint32_t i = 0; i < m->nvars; i++) {
        free(m->vars[i].name);
        free(m->vars[i].init);
    }
    for (uint32_t i = 0; i < m->nregs; i++) free(m->reg_name[i]);
    free(m->reg_name);
    free(m->reg_type);
    free(m->funcs);
    free(m->vars);
    free(m->markers);
    free(m->mma);
    free(m->mma_regs);
    free(m->tma);
    free(m->path);
    free(m->text);
    memset(m, 0, sizeof *m);
}

uint32_t mh_ptx_block_at(const mh_ptx_func *f, uint32_t off)
{
    /* the last block opened at or before off (blocks are in text order), then out to one that holds it */
    uint32_t lo = 0, hi = f->nblocks;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (f->blocks[mid].open <= off) lo = mid;
        else hi = mid;
    }
    int32_t b = f->nblocks ? (int32_t)lo : -1;
    while (b > 0 && !(f->blocks[b].open <= off && off < f->blocks[b].close)) b = f->blocks[b].parent;
    return b > 0 ? (uint32_t)b : 0;
}

const mh_ptx_func *mh_ptx_find(const mh_ptx_module *m, const char *name)
{
    for (uint32_t i = 0; i < m->nfuncs; i++)
        if (m->funcs[i].name && !strcmp(m->funcs[i].name, name) && m->funcs[i].defined) return &m->funcs[i];
    return NULL;
}
