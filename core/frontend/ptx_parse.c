/* mh_ptx_parse.c - PTX parser and decoder: module directives, variables,
 * entries and .funcs with parameters, register declarations (ranges and
 * inline-asm scopes), labels, and every instruction decoded into a
 * mh_ptx_insn.  See ptx.h. */
#include "frontend/ptx.h"
#include "frontend/ptx_lex.h"

#include <ctype.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;   /* prefix for ranges, whole name otherwise */
    size_t len;
    uint32_t count;     /* 0: a single register */
    uint32_t base;
    int depth;
    int32_t prev;       /* the declaration this one hides (same name or prefix), -1: none */
} reg_decl;

/* A hash index of names: (name, scope) -> an int (-1: none), so that looking up a
 * register, variable, parameter, label or function costs the same in a module of
 * a hundred thousand of them as in a small one.  Keys point into strings that
 * outlive the index (the module text, names the module owns). */
typedef struct {
    const char *s;      /* NULL: an empty slot */
    uint32_t len, hash;
    int32_t scope, val;
} name_ent;
typedef struct {
    name_ent *e;
    size_t cap, n;      /* cap: a power of two (or 0), at most half full */
} name_index;

typedef struct {
    const char *name;
    size_t len;
    uint32_t insn;
    uint32_t func;      /* calls: the calling function */
} label_ref;

typedef struct {
    mh_ptx_lexer lx;
    mh_ptx_module *m;
    mh_error *e;
    reg_decl *decls;
    size_t ndecls, cap_decls;
    int depth;
    int func;              /* index of the function being parsed */
    mh_ptx_insn *code;
    size_t ncode, cap_code;
    label_ref *labels, *fixups;
    size_t nlabels, cap_labels, nfixups, cap_fixups;
    label_ref *calls;      /* call sites: name of the callee, the calling function and the call's index */
    size_t ncalls, cap_calls;
    const char *last_close;  /* the '}' that ended the last block */
    size_t next_marker;      /* markers of the lexer already placed */
    size_t cap_funcs, cap_vars; /* capacities of m->funcs and m->vars (they grow geometrically) */
    name_index regs;         /* register declarations in scope: (name, 0) single, (prefix, 1) range -> decl */
    name_index vars;         /* (name, function or -1) -> the latest variable */
    name_index params;       /* the function's (name, 0) parameters, (name, 1) return parameters -> index */
    name_index labels_ix;    /* the function's (label, 0) -> its first definition in P->labels */
    name_index funcs;        /* (name, 0) -> the first function of that name, (name, 1) -> the last defined */
} parser;

/* ---- helpers ------------------------------------------------------------ */

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

static int32_t index_get(const name_index *x, const char *s, size_t n, int32_t scope)
{
    const int32_t *v = index_slot(x, s, n, scope);
    return v ? *v : -1;
}

/* The value slot of (s, scope), made (with the value -1) if new; NULL: out of memory. */
static int32_t *index_put(name_index *x, const char *s, size_t n, int32_t scope)
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

static void index_free(name_index *x)
{
    free(x->e);
    x->e = NULL;
    x->cap = x->n = 0;
}

static int perr(parser *P, uint32_t line, mh_code code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int perr(parser *P, uint32_t line, mh_code code, const char *fmt, ...)
{
    char msg[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    P->e->line = line;
    mh_fail(P->e, code, "%.200s:%u: %s", P->m->path, line, msg);
    return -1;
}

#define TOK (&P->lx.cur)
#define NEXT() mh_ptx_lex_next(&P->lx)

static int grow(void **v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap * 2 : 16;
    while (c < need) c *= 2;
    void *n = realloc(*v, c * elem);
    if (!n) return -1;
    *v = n;
    *cap = c;
    return 0;
}

static char *tokdup(const mh_ptx_tok *t)
{
    char *s = malloc(t->len + 1);
    if (s) {
        memcpy(s, t->s, t->len);
        s[t->len] = 0;
    }
    return s;
}

static int expect_punct(parser *P, char c)
{
    if (!mh_ptx_tok_punct(TOK, c))
        return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected '%c', found '%.*s'", c, (int)TOK->len, TOK->s);
    NEXT();
    return 0;
}

static int parse_u64(const mh_ptx_tok *t, uint64_t *out)
{
    const char *s = t->s, *end = t->s + t->len;
    uint64_t v = 0;
    if (end > s && (end[-1] == 'U' || end[-1] == 'u')) end--;
    if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        for (s += 2; s < end; s++) {
            int d = *s <= '9' ? *s - '0' : (*s | 32) - 'a' + 10;
            if (v >> 60) return -1;
            v = v * 16 + (uint64_t)d;
        }
    } else {
        for (; s < end; s++) {
            if (*s < '0' || *s > '9') return -1;
            if (v > (UINT64_MAX - 9) / 10) return -1;
            v = v * 10 + (uint64_t)(*s - '0');
        }
    }
    *out = v;
    return 0;
}

/* 0fXXXXXXXX (f32 bits), 0dXXXXXXXXXXXXXXXX (f64 bits), or a decimal. */
static double parse_float(const mh_ptx_tok *t)
{
    char buf[64];
    size_t n = t->len < sizeof buf - 1 ? t->len : sizeof buf - 1;
    memcpy(buf, t->s, n);
    buf[n] = 0;
    if ((buf[1] | 32) == 'f' && buf[0] == '0') {
        uint32_t bits = (uint32_t)strtoul(buf + 2, NULL, 16);
        float f;
        memcpy(&f, &bits, 4);
        return f;
    }
    if ((buf[1] | 32) == 'd' && buf[0] == '0') {
        uint64_t bits = strtoull(buf + 2, NULL, 16);
        double d;
        memcpy(&d, &bits, 8);
        return d;
    }
    return strtod(buf, NULL);
}

/* ---- types, spaces, names --------------------------------------------- */

static const struct { const char *name; mh_ptx_type t; } type_names[] = {
    {"b8", MH_PT_B8}, {"b16", MH_PT_B16}, {"b32", MH_PT_B32}, {"b64", MH_PT_B64},
    {"u8", MH_PT_U8}, {"u16", MH_PT_U16}, {"u32", MH_PT_U32}, {"u64", MH_PT_U64},
    {"s8", MH_PT_S8}, {"s16", MH_PT_S16}, {"s32", MH_PT_S32}, {"s64", MH_PT_S64},
    {"f16", MH_PT_F16}, {"f16x2", MH_PT_F16X2}, {"bf16", MH_PT_BF16}, {"bf16x2", MH_PT_BF16X2},
    {"f32", MH_PT_F32}, {"f64", MH_PT_F64}, {"pred", MH_PT_PRED},
};

static mh_ptx_type type_of(const char *s, size_t n)
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
static int space_of(const char *s, size_t n)
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
    [MH_OP_MATCH] = "match",
    /* MH_OP_OPAQUE has no name: no mnemonic decodes to it */
};

const char *mh_ptx_op_name(mh_ptx_op op) { return (unsigned)op < MH_OP_COUNT_ && op_names[op] ? op_names[op] : "?"; }

static int op_of(const char *s, size_t n)
{
    if (n == 7 && !memcmp(s, "barrier", 7)) return MH_OP_BAR;
    if (n == 5 && !memcmp(s, "fence", 5)) return MH_OP_MEMBAR;
    /* nanosleep sleeps "about t ns, in [0, 2t]": no sleep at all is a valid one */
    if (n == 9 && !memcmp(s, "nanosleep", 9)) return MH_OP_MEMBAR;
    if (n == 3 && !memcmp(s, "ldu", 3)) return MH_OP_LD;
    for (int i = 0; i < MH_OP_COUNT_; i++)
        if (op_names[i] && strlen(op_names[i]) == n && !memcmp(op_names[i], s, n)) return i;
    return -1;
}

static int word_in(const char *s, size_t n, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (strlen(list[i]) == n && !memcmp(list[i], s, n)) return i;
    return -1;
}

static const char *const cmp_names[] = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu",
                                        "ltu", "leu", "gtu", "geu", "num", "nan", NULL};
static const char *const aop_names[] = {"add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas", NULL};
/* testp's classes, in the order of mh_ptx_testp */
static const char *const testp_names[] = {"finite", "infinite", "number", "notanumber", "normal", "subnormal", NULL};
static const char *const rnd_names[] = {"", "rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", NULL};
/* Memory-ordering, cache and scope qualifiers: no effect on a sequential emulator. */
static const char *const ignorable[] = {"ca", "cg", "cs", "lu", "cv", "wb", "wt", "nc", "volatile", "relaxed",
                                        "acquire", "release", "acq_rel", "weak", "sys", "gpu", "cta", "cluster",
                                        "mmio", "aligned", "sync", "sc", NULL};

static int strstr_n(const char *s, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (!memcmp(s + i, needle, k)) return 1;
    return 0;
}

/* ---- registers and names ---------------------------------------------- */

static int new_reg(parser *P, const char *name, size_t len, mh_ptx_type t, uint32_t *out)
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
 * one of that name or a range "prefix<N>" with the name's number below N (the number
 * without leading zeros).  Through the index: the single name, and each way of splitting
 * the name's trailing digits off as a range's number, walking the hidden declarations
 * of a prefix (at most one per enclosing scope) until one covers the number. */
static int lookup_reg(parser *P, const char *s, size_t n, uint32_t *out)
{
    int32_t best = index_get(&P->regs, s, n, 0);
    uint32_t at = best >= 0 ? P->decls[best].base : 0;
    size_t k = n;
    while (k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9') k--;
    for (size_t p = k; p < n; p++) { /* the prefix s[0, p), the number s[p, n) */
        if ((s[p] == '0' && n - p > 1) || n - p > 10) continue;
        uint64_t v = 0;
        for (size_t q = p; q < n; q++) v = v * 10 + (uint64_t)(s[q] - '0');
        for (int32_t d = index_get(&P->regs, s, p, 1); d > best; d = P->decls[d].prev)
            if (v < P->decls[d].count) {
                best = d;
                at = P->decls[d].base + (uint32_t)v;
                break;
            }
    }
    if (best < 0) return -1;
    *out = at;
    return 0;
}

/* Ends the scopes of the declarations past the first n: the index shows what they hid. */
static void decls_truncate(parser *P, size_t n)
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

static int sreg_of(const char *s, size_t n)
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

/* The latest variable of that name in the function being parsed, else at module scope. */
static int find_var(parser *P, const char *s, size_t n)
{
    int v = P->func >= 0 ? index_get(&P->vars, s, n, P->func) : -1;
    return v >= 0 ? v : index_get(&P->vars, s, n, -1);
}

/* A parameter of the function being parsed (its index), or a return parameter (-2 - index). */
static int find_param(parser *P, const char *s, size_t n)
{
    int i = index_get(&P->params, s, n, 0);
    if (i >= 0) return i;
    i = index_get(&P->params, s, n, 1);
    return i >= 0 ? -2 - i : -1;
}

/* Indexes the parameters of the function being parsed (the first of a name wins). */
static int index_params(parser *P)
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

/* ---- declarations ------------------------------------------------------- */

/* .reg .TYPE name, name<N>, ...; */
static int parse_reg_decl(parser *P)
{
    NEXT(); /* .reg */
    mh_ptx_type t = MH_PT_NONE;
    while (TOK->kind == MH_TK_IDENT && TOK->s[0] == '.') {
        mh_ptx_type tt = type_of(TOK->s + 1, TOK->len - 1);
        if (tt != MH_PT_NONE) t = tt;
        else if (!mh_ptx_tok_is(TOK, ".v2") && !mh_ptx_tok_is(TOK, ".v4"))
            return perr(P, TOK->line, MH_E_PTX_SYNTAX, "unknown register type '%.*s'", (int)TOK->len, TOK->s);
        NEXT();
    }
    if (t == MH_PT_NONE) return perr(P, TOK->line, MH_E_PTX_SYNTAX, ".reg without a type");
    for (;;) {
        if (TOK->kind != MH_TK_IDENT) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected a register name");
        const char *name = TOK->s;
        size_t len = TOK->len;
        NEXT();
        uint32_t count = 0;
        if (mh_ptx_tok_punct(TOK, '<')) {
            NEXT();
            uint64_t c;
            if (TOK->kind != MH_TK_INT || parse_u64(TOK, &c) || c == 0 || c > 1000000)
                return perr(P, TOK->line, MH_E_PTX_SYNTAX, "bad register count in %.*s<...>", (int)len, name);
            count = (uint32_t)c;
            NEXT();
            if (expect_punct(P, '>')) return -1;
        }
        if (grow((void **)&P->decls, &P->cap_decls, P->ndecls + 1, sizeof *P->decls))
            return perr(P, TOK->line, MH_E_NO_MEMORY, "out of memory");
        int32_t hidden = index_get(&P->regs, name, len, count ? 1 : 0);
        if (hidden >= 0 && P->decls[hidden].depth == P->depth) /* (ptxas: "Duplicate definition") */
            return perr(P, TOK->line, MH_E_PTX_SYNTAX, "register '%.*s%s' declared twice in the same scope",
                        (int)(len < 64 ? len : 64), name, count ? "<>" : "");
        reg_decl *d = &P->decls[P->ndecls++];
        d->name = name;
        d->len = len;
        d->count = count;
        d->depth = P->depth;
        d->prev = hidden;
        d->base = 0;
        uint32_t first = 0;
        if (count == 0) {
            if (new_reg(P, name, len, t, &first)) return -1;
        } else {
            char buf[96];
            for (uint32_t i = 0; i < count; i++) {
                int k = snprintf(buf, sizeof buf, "%.*s%u", (int)(len < 80 ? len : 80), name, i);
                uint32_t r;
                if (new_reg(P, buf, (size_t)k, t, &r)) return -1;
                if (i == 0) first = r;
            }
        }
        d->base = first;
        int32_t *slot = index_put(&P->regs, name, len, count ? 1 : 0);
        if (!slot) return perr(P, TOK->line, MH_E_NO_MEMORY, "out of memory");
        *slot = (int32_t)(P->ndecls - 1);
        if (mh_ptx_tok_punct(TOK, ',')) { NEXT(); continue; }
        return expect_punct(P, ';');
    }
}

/* Initialiser: = value or = {v, v, ...}; integers or floats into init bytes. */
static int parse_init(parser *P, mh_ptx_var *v, mh_ptx_type t)
{
    int bits = mh_ptx_type_bits(t), esize = bits / 8;
    if (esize == 0) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "initialiser of a variable without a size");
    v->init = calloc(v->size ? v->size : 1, 1);
    if (!v->init) return perr(P, TOK->line, MH_E_NO_MEMORY, "out of memory");
    int brace = mh_ptx_tok_punct(TOK, '{');
    if (brace) NEXT();
    uint64_t at = 0;
    for (;;) {
        int neg = 0;
        if (mh_ptx_tok_punct(TOK, '-')) { neg = 1; NEXT(); }
        uint64_t bitsv = 0;
        if (TOK->kind == MH_TK_INT) {
            if (parse_u64(TOK, &bitsv)) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "bad integer");
            if (neg) bitsv = 0 - bitsv;
            if (mh_ptx_type_is_float(t)) {
                double d = neg ? -(double)(0 - bitsv) : (double)bitsv;
                if (t == MH_PT_F32) { float f = (float)d; uint32_t b; memcpy(&b, &f, 4); bitsv = b; }
                else memcpy(&bitsv, &d, 8);
            }
        } else if (TOK->kind == MH_TK_FLOAT) {
            double d = parse_float(TOK);
            if (neg) d = -d;
            if (t == MH_PT_F32) { float f = (float)d; uint32_t b; memcpy(&b, &f, 4); bitsv = b; }
            else if (t == MH_PT_F64) memcpy(&bitsv, &d, 8);
            else bitsv = (uint64_t)(int64_t)d;
        } else if (mh_ptx_tok_punct(TOK, '{')) {
            return perr(P, TOK->line, MH_E_PTX_UNSUPPORTED, "nested initialisers are not supported");
        } else if (TOK->kind == MH_TK_IDENT && !neg) {
            /* an address (generic(x), x, x+8): kept for the driver to fill in; its bytes stay 0 here
             * and emu refuses the module's kernels */
            if (!v->address_init_line) v->address_init_line = TOK->line;
            int depth = 0;
            while (TOK->kind != MH_TK_EOF && !(depth == 0 && (mh_ptx_tok_punct(TOK, ',') || mh_ptx_tok_punct(TOK, '}') ||
                                                           mh_ptx_tok_punct(TOK, ';')))) {
                if (mh_ptx_tok_punct(TOK, '(') && ++depth > MH_PTX_MAX_NESTING)
                    return perr(P, TOK->line, MH_E_PTX_SYNTAX, "parentheses nested deeper than %d", MH_PTX_MAX_NESTING);
                else if (mh_ptx_tok_punct(TOK, ')') && --depth < 0)
                    return perr(P, TOK->line, MH_E_PTX_SYNTAX, "')' without its '(' in an initialiser");
                NEXT();
            }
            at += (uint64_t)esize;
            if (brace && mh_ptx_tok_punct(TOK, ',')) { NEXT(); continue; }
            break;
        } else {
            return perr(P, TOK->line, MH_E_PTX_UNSUPPORTED, "initialiser '%.*s' is not supported", (int)TOK->len, TOK->s);
        }
        NEXT();
        if (at + (uint64_t)esize <= v->size) memcpy(v->init + at, &bitsv, (size_t)esize); /* little-endian host */
        at += (uint64_t)esize;
        if (brace && mh_ptx_tok_punct(TOK, ',')) { NEXT(); continue; }
        break;
    }
    if (brace && expect_punct(P, '}')) return -1;
    return 0;
}

/* ".align N" (the current token is .align): a power of two up to 4096. */
static int parse_align(parser *P, uint32_t *out)
{
    NEXT();
    uint64_t a;
    if (TOK->kind != MH_TK_INT || parse_u64(TOK, &a) || a == 0 || (a & (a - 1)) || a > 4096)
        return perr(P, TOK->line, MH_E_PTX_SYNTAX, "bad .align: a power of two up to 4096 expected");
    *out = (uint32_t)a;
    NEXT();
    return 0;
}

/* [.extern|.visible] .shared/.global/.const/.local [.align N] .TYPE name[[N]] [= init]; */
static int parse_var(parser *P, int is_extern)
{
    mh_ptx_var v;
    memset(&v, 0, sizeof v);
    v.func = P->func;
    v.is_extern = is_extern;
    v.align = 0;
    mh_ptx_type t = MH_PT_NONE;
    uint32_t line = TOK->line;
    v.space = (mh_ptx_space)space_of(TOK->s + 1, TOK->len - 1);
    NEXT();
    while (TOK->kind == MH_TK_IDENT && TOK->s[0] == '.') {
        if (mh_ptx_tok_is(TOK, ".align")) {
            if (parse_align(P, &v.align)) return -1;
            continue;
        }
        mh_ptx_type tt = type_of(TOK->s + 1, TOK->len - 1);
        if (tt == MH_PT_NONE && !mh_ptx_tok_is(TOK, ".v2") && !mh_ptx_tok_is(TOK, ".v4"))
            return perr(P, TOK->line, MH_E_PTX_UNSUPPORTED, "variable qualifier '%.*s' is not supported",
                        (int)TOK->len, TOK->s);
        if (tt != MH_PT_NONE) t = tt;
        NEXT();
    }
    if (TOK->kind != MH_TK_IDENT) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected a variable name");
    v.name = tokdup(TOK);
    NEXT();
    uint32_t esize = (uint32_t)mh_ptx_type_bits(t) / 8;
    if (!esize) esize = 1;
    v.size = esize;
    if (!v.align) v.align = esize;
    while (mh_ptx_tok_punct(TOK, '[')) {
        NEXT();
        if (mh_ptx_tok_punct(TOK, ']')) {
            v.size = 0; /* unsized: dynamic shared memory */
            NEXT();
            continue;
        }
        uint64_t n;
        if (TOK->kind != MH_TK_INT || parse_u64(TOK, &n) || n > (1ull << 40)) {
            free(v.name);
            return perr(P, TOK->line, MH_E_PTX_SYNTAX, "bad array size");
        }
        v.size *= n;
        NEXT();
        if (expect_punct(P, ']')) { free(v.name); return -1; }
    }
    if (mh_ptx_tok_punct(TOK, '=')) {
        NEXT();
        if (parse_init(P, &v, t)) { free(v.name); free(v.init); return -1; }
    }
    if (expect_punct(P, ';')) { free(v.name); free(v.init); return -1; }
    if ((int)v.space < 0) { free(v.name); free(v.init); return perr(P, line, MH_E_PTX_SYNTAX, "bad state space"); }
    if (grow((void **)&P->m->vars, &P->cap_vars, (size_t)P->m->nvars + 1, sizeof *P->m->vars)) {
        free(v.name);
        free(v.init);
        return perr(P, line, MH_E_NO_MEMORY, "out of memory");
    }
    int32_t *slot = v.name ? index_put(&P->vars, v.name, strlen(v.name), v.func) : NULL;
    if (!slot) {
        free(v.name);
        free(v.init);
        return perr(P, line, MH_E_NO_MEMORY, "out of memory");
    }
    *slot = (int32_t)P->m->nvars; /* the latest of a name in a scope is the one in force */
    P->m->vars[P->m->nvars++] = v;
    return 0;
}

/* .param [.TYPE] [.ptr [.space] [.align N]] [.align N] name[[N]] */
static int parse_param(parser *P, mh_ptx_param *p)
{
    memset(p, 0, sizeof *p);
    if (!mh_ptx_tok_is(TOK, ".param") && !mh_ptx_tok_is(TOK, ".reg"))
        return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected .param, found '%.*s'", (int)TOK->len, TOK->s);
    NEXT();
    while (TOK->kind == MH_TK_IDENT && TOK->s[0] == '.') {
        if (mh_ptx_tok_is(TOK, ".align")) {
            if (parse_align(P, &p->align)) return -1;
            continue;
        } else if (mh_ptx_tok_is(TOK, ".ptr")) {
            p->is_ptr = 1;
        } else {
            int sp = space_of(TOK->s + 1, TOK->len - 1);
            mh_ptx_type t = type_of(TOK->s + 1, TOK->len - 1);
            if (sp >= 0) p->ptr_space = (mh_ptx_space)sp;
            else if (t != MH_PT_NONE) p->type = t;
            else return perr(P, TOK->line, MH_E_PTX_SYNTAX, "unknown parameter qualifier '%.*s'", (int)TOK->len, TOK->s);
        }
        NEXT();
    }
    if (TOK->kind != MH_TK_IDENT) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected a parameter name");
    p->name = tokdup(TOK);
    NEXT();
    uint32_t esize = (uint32_t)mh_ptx_type_bits(p->type) / 8;
    if (!esize) esize = 1;
    p->size = esize;
    if (mh_ptx_tok_punct(TOK, '[')) {
        NEXT();
        uint64_t n;
        if (TOK->kind != MH_TK_INT || parse_u64(TOK, &n) || n == 0 || n > (1u << 20))
            return perr(P, TOK->line, MH_E_PTX_SYNTAX, "bad parameter array size");
        p->size = esize * (uint32_t)n;
        NEXT();
        if (expect_punct(P, ']')) return -1;
    }
    if (!p->align) p->align = esize;
    return 0;
}

static int parse_param_list(parser *P, mh_ptx_param **out, uint32_t *n, uint32_t *bytes)
{
    if (expect_punct(P, '(')) return -1;
    uint32_t off = 0;
    size_t cap = *n; /* the list starts empty: its capacity is what it holds */
    while (!mh_ptx_tok_punct(TOK, ')')) {
        mh_ptx_param p;
        if (parse_param(P, &p)) {
            free(p.name);
            return -1;
        }
        off = (off + p.align - 1) / p.align * p.align;
        p.offset = off;
        off += p.size;
        if (off > UINT32_MAX / 2) { free(p.name); return perr(P, TOK->line, MH_E_PTX_SYNTAX, "parameter list too large"); }
        if (grow((void **)out, &cap, (size_t)*n + 1, sizeof **out)) {
            free(p.name);
            return perr(P, TOK->line, MH_E_NO_MEMORY, "out of memory");
        }
        (*out)[(*n)++] = p;
        if (mh_ptx_tok_punct(TOK, ',')) NEXT();
        else if (!mh_ptx_tok_punct(TOK, ')'))
            return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected ',' or ')' in a parameter list");
    }
    NEXT();
    if (bytes) *bytes = off;
    return 0;
}

/* ---- instructions --------------------------------------------------------- */

/* One operand.  1: a vector the operand form cannot hold (more than 4 elements, a
 * constant other than 0 among them): the instruction is to be kept as text. */
static int parse_operand(parser *P, mh_ptx_insn *in, mh_ptx_opnd *o)
{
    memset(o, 0, sizeof *o);
    o->sym = -1;
    o->param = -1;
    o->reg = UINT32_MAX;
    if (mh_ptx_tok_punct(TOK, '!')) { o->neg = 1; NEXT(); }
    if (mh_ptx_tok_punct(TOK, '[')) {
        NEXT();
        o->kind = MH_OPK_ADDR;
        if (TOK->kind == MH_TK_IDENT) {
            uint32_t r;
            int v, pi;
            if (!lookup_reg(P, TOK->s, TOK->len, &r)) o->reg = r;
            else if ((v = find_var(P, TOK->s, TOK->len)) >= 0) o->sym = v;
            else if ((pi = find_param(P, TOK->s, TOK->len)) != -1) o->param = pi;
            else return perr(P, TOK->line, MH_E_PTX_SYNTAX, "unknown name '%.*s' in an address", (int)TOK->len, TOK->s);
            NEXT();
            if (mh_ptx_tok_punct(TOK, '+') || mh_ptx_tok_punct(TOK, '-')) {
                int neg = mh_ptx_tok_punct(TOK, '-');
                NEXT();
                if (mh_ptx_tok_punct(TOK, '-')) { neg = !neg; NEXT(); }
                uint64_t off;
                if (TOK->kind != MH_TK_INT || parse_u64(TOK, &off))
                    return perr(P, TOK->line, MH_E_PTX_SYNTAX, "bad address offset '%.*s'", (int)TOK->len, TOK->s);
                o->imm = neg ? -(int64_t)off : (int64_t)off;
                NEXT();
            }
        } else if (TOK->kind == MH_TK_INT) {
            uint64_t a;
            if (parse_u64(TOK, &a)) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "bad address");
            o->imm = (int64_t)a;
            NEXT();
        } else {
            return perr(P, TOK->line, MH_E_PTX_SYNTAX, "bad address '%.*s'", (int)TOK->len, TOK->s);
        }
        return expect_punct(P, ']');
    }
    if (mh_ptx_tok_punct(TOK, '{')) {
        NEXT();
        o->kind = MH_OPK_VEC;
        while (!mh_ptx_tok_punct(TOK, '}')) {
            if (o->n == 4) { /* more than 4 elements: the instruction is kept as text (from past the '}') */
                while (TOK->kind != MH_TK_EOF && !mh_ptx_tok_punct(TOK, '}') && !mh_ptx_tok_punct(TOK, ';')) NEXT();
                if (mh_ptx_tok_punct(TOK, '}')) NEXT();
                return 1;
            }
            uint32_t r;
            int sr;
            uint64_t z;
            if (mh_ptx_tok_is(TOK, "_")) r = UINT32_MAX;
            else if (TOK->kind == MH_TK_INT) { /* "mov.b32 f, {0, h}" (cuda_bf16.hpp): the constant 0 */
                if (parse_u64(TOK, &z) || z) { /* another constant: kept as text (from past the '}') */
                    while (TOK->kind != MH_TK_EOF && !mh_ptx_tok_punct(TOK, '}') && !mh_ptx_tok_punct(TOK, ';')) NEXT();
                    if (mh_ptx_tok_punct(TOK, '}')) NEXT();
                    return 1;
                }
                r = UINT32_MAX;
                o->fimm = 1; /* (a constant among the elements: not a destination) */
            } else if (TOK->kind == MH_TK_IDENT && !lookup_reg(P, TOK->s, TOK->len, &r))
                ;
            else if (TOK->kind == MH_TK_IDENT && (sr = sreg_of(TOK->s, TOK->len)) >= 0)
                r = MH_PTX_VEC_SREG | (uint32_t)sr;
            else
                return perr(P, TOK->line, MH_E_PTX_SYNTAX, "unknown register '%.*s' in a vector", (int)TOK->len, TOK->s);
            o->vec[o->n++] = r;
            NEXT();
            if (mh_ptx_tok_punct(TOK, ',')) NEXT();
        }
        NEXT();
        return 0;
    }
    int neg = 0;
    if (mh_ptx_tok_punct(TOK, '-')) { neg = 1; NEXT(); }
    if (TOK->kind == MH_TK_INT) {
        uint64_t v;
        if (parse_u64(TOK, &v)) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "bad integer '%.*s'", (int)TOK->len, TOK->s);
        o->kind = MH_OPK_IMM;
        o->imm = neg ? -(int64_t)v : (int64_t)v;
        NEXT();
        return 0;
    }
    if (TOK->kind == MH_TK_FLOAT) {
        double d = parse_float(TOK);
        if (neg) d = -d;
        o->kind = MH_OPK_IMM;
        o->fimm = 1;
        memcpy(&o->imm, &d, 8);
        NEXT();
        return 0;
    }
    if (neg) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "'-' before '%.*s'", (int)TOK->len, TOK->s);
    if (TOK->kind != MH_TK_IDENT) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "bad operand '%.*s'", (int)TOK->len, TOK->s);
    if (mh_ptx_tok_is(TOK, "_")) { o->kind = MH_OPK_SINK; NEXT(); return 0; }
    if (mh_ptx_tok_is(TOK, "WARP_SZ")) { /* PTX's predefined constant (cuda_fp16.hpp's shuffles use it): 32 */
        o->kind = MH_OPK_IMM;
        o->imm = 32;
        NEXT();
        return 0;
    }
    uint32_t r;
    int v;
    if (TOK->s[0] == '%') {
        if (!lookup_reg(P, TOK->s, TOK->len, &r)) {
            o->kind = MH_OPK_REG;
            o->reg = r;
        } else if ((v = sreg_of(TOK->s, TOK->len)) >= 0) {
            o->kind = MH_OPK_SREG;
            o->reg = (uint32_t)v;
        } else {
            return perr(P, TOK->line, MH_E_PTX_SYNTAX, "undeclared register '%.*s'", (int)TOK->len, TOK->s);
        }
        NEXT();
        return 0;
    }
    if (in->op == MH_OP_BRA || in->op == MH_OP_CALL) {
        o->kind = MH_OPK_LABEL;
        if (grow((void **)&P->fixups, &P->cap_fixups, P->nfixups + 1, sizeof *P->fixups))
            return perr(P, TOK->line, MH_E_NO_MEMORY, "out of memory");
        P->fixups[P->nfixups].name = TOK->s;
        P->fixups[P->nfixups].len = TOK->len;
        P->fixups[P->nfixups].insn = (uint32_t)P->ncode;
        P->nfixups++;
        NEXT();
        return 0;
    }
    if (!lookup_reg(P, TOK->s, TOK->len, &r)) { /* a register declared without '%' (inline asm: .reg .pred p) */
        o->kind = MH_OPK_REG;
        o->reg = r;
        NEXT();
        return 0;
    }
    if ((v = find_var(P, TOK->s, TOK->len)) >= 0) {
        o->kind = MH_OPK_SYM;
        o->sym = v;
        NEXT();
        return 0;
    }
    if ((v = find_param(P, TOK->s, TOK->len)) >= 0) { /* mov.b64 %rd, k_param_0: a __grid_constant__ parameter */
        o->kind = MH_OPK_PARAM_ADDR;
        o->param = v;
        NEXT();
        return 0;
    }
    if ((v = index_get(&P->funcs, TOK->s, TOK->len, 0)) >= 0) { /* a function's address (mov.u64 %rd, f): a function pointer */
        o->kind = MH_OPK_FUNC;
        o->reg = (uint32_t)v;
        NEXT();
        return 0;
    }
    return perr(P, TOK->line, MH_E_PTX_SYNTAX, "unknown name '%.*s'", (int)TOK->len, TOK->s);
}

/* Splits the mnemonic at '.' and fills op, types, space and modifiers. */
static int decode_mnemonic(parser *P, const mh_ptx_tok *t, mh_ptx_insn *in)
{
    const char *s = t->s, *end = t->s + t->len;
    const char *dot = memchr(s, '.', t->len);
    size_t n0 = dot ? (size_t)(dot - s) : t->len;
    int op = op_of(s, n0);
    if (op == MH_OP_MBARRIER_INIT || op == MH_OP_MBARRIER || (n0 == 8 && !memcmp(s, "mbarrier", 8))) {
        /* the mbarrier forms emu runs; others (arrive_drop, pending_count, inval, ...) stay text */
        static const struct { const char *w; int kind; } forms[] = {
            {"mbarrier.init", -1}, {"mbarrier.arrive.expect_tx", MH_MB_ARRIVE_EXPECT_TX}, {"mbarrier.arrive", MH_MB_ARRIVE},
            {"mbarrier.expect_tx", MH_MB_EXPECT_TX}, {"mbarrier.complete_tx", MH_MB_COMPLETE_TX},
            {"mbarrier.test_wait", MH_MB_TEST_WAIT}, {"mbarrier.try_wait", MH_MB_TRY_WAIT}, {NULL, 0},
        };
        op = -1;
        for (int k = 0; forms[k].w; k++) {
            size_t n = strlen(forms[k].w);
            if (t->len >= n && !memcmp(s, forms[k].w, n) && (t->len == n || s[n] == '.')) {
                op = forms[k].kind < 0 ? MH_OP_MBARRIER_INIT : MH_OP_MBARRIER;
                in->cmp = (uint8_t)(forms[k].kind < 0 ? 0 : forms[k].kind);
                dot = t->len == n ? NULL : s + n;
                break;
            }
        }
    }
    if (n0 == 2 && !memcmp(s, "cp", 2)) {
        /* cp.async (Ampere's per-thread copy to shared memory): emu copies at issue, so the
         * commit and wait forms only order, like membar; the bulk (TMA) forms are not supported */
        static const char *const waits[] = {"cp.async.commit_group", "cp.async.wait_group", "cp.async.wait_all", NULL};
        op = -1;
        for (int k = 0; waits[k]; k++)
            if (t->len == strlen(waits[k]) && !memcmp(s, waits[k], t->len)) op = MH_OP_MEMBAR;
        if (t->len > 12 && (!memcmp(s, "cp.async.ca.", 12) || !memcmp(s, "cp.async.cg.", 12))) {
            op = MH_OP_CP_ASYNC;
            dot = s + 8; /* from ".ca" / ".cg" */
        }
        if (t->len > 24 && !memcmp(s, "cp.async.mbarrier.arrive.", 25)) { /* arrives when its cp.asyncs are done */
            op = MH_OP_MBARRIER;
            in->cmp = MH_MB_CP_ASYNC_ARRIVE;
            dot = s + 24;
        }
    }
    if (op < 0) { /* not decoded: kept as text (emu refuses it, the GPU runs it) */
        in->op = MH_OP_OPAQUE;
        return 0;
    }
    in->op = (uint16_t)op;
    in->vec = 1;
    if (op == MH_OP_MEMBAR || op == MH_OP_PREFETCH) return 0; /* ordering / hints only */
    int ntypes = 0;
    for (const char *p = dot; p && p < end;) {
        const char *q = p + 1, *nx = memchr(q, '.', (size_t)(end - q));
        /* a part like "L1::evict_last" or "param::entry" contains no dot */
        size_t n = (size_t)((nx ? nx : end) - q);
        p = nx;
        mh_ptx_type ty = type_of(q, n);
        int k;
        if (ty != MH_PT_NONE) {
            if (ntypes == 0) in->type = (uint8_t)ty;
            else in->type2 = (uint8_t)ty;
            ntypes++;
        } else if ((k = space_of(q, n)) >= 0 && (op == MH_OP_LD || op == MH_OP_ST || op == MH_OP_ATOM || op == MH_OP_RED ||
                                                   op == MH_OP_CVTA || op == MH_OP_MBARRIER_INIT || op == MH_OP_PREFETCH || op == MH_OP_CP_ASYNC ||
                                                   op == MH_OP_MBARRIER)) {
            in->space = (uint8_t)k;
        } else if (n == 2 && q[0] == 'v' && (q[1] == '2' || q[1] == '4')) {
            in->vec = (uint8_t)(q[1] - '0');
        } else if ((op == MH_OP_SETP || op == MH_OP_SET) && (k = word_in(q, n, cmp_names)) >= 0 && !in->mods) {
            in->cmp = (uint8_t)k;
            in->mods |= MH_MOD_CC; /* comparison seen */
        } else if ((op == MH_OP_SETP || op == MH_OP_SET) && (k = word_in(q, n, (const char *const[]){"and", "or", "xor", NULL})) >= 0) {
            in->boolop = (uint8_t)(k + 1);
        } else if ((op == MH_OP_ATOM || op == MH_OP_RED || op == MH_OP_REDUX) && (k = word_in(q, n, aop_names)) >= 0) {
            in->cmp = (uint8_t)k;
        } else if (op == MH_OP_SHFL && (k = word_in(q, n, (const char *const[]){"up", "down", "bfly", "idx", NULL})) >= 0) {
            in->cmp = (uint8_t)k;
        } else if (op == MH_OP_MATCH && (k = word_in(q, n, (const char *const[]){"any", "all", NULL})) >= 0) {
            in->cmp = (uint8_t)k;
        } else if (op == MH_OP_VOTE && (k = word_in(q, n, (const char *const[]){"all", "any", "uni", "ballot", NULL})) >= 0) {
            in->cmp = (uint8_t)k;
        } else if (op == MH_OP_TESTP && (k = word_in(q, n, testp_names)) >= 0) {
            in->cmp = (uint8_t)k;
            in->mods |= MH_MOD_CC; /* class seen */
        } else if ((k = word_in(q, n, rnd_names)) > 0) {
            in->rnd = (uint8_t)k;
        } else if (n == 2 && !memcmp(q, "hi", 2)) in->mods |= MH_MOD_HI;
        else if (n == 2 && !memcmp(q, "lo", 2)) in->mods |= MH_MOD_LO;
        else if (n == 4 && !memcmp(q, "wide", 4)) in->mods |= MH_MOD_WIDE;
        else if (n == 3 && !memcmp(q, "sat", 3)) in->mods |= MH_MOD_SAT;
        else if (n == 3 && !memcmp(q, "ftz", 3)) in->mods |= MH_MOD_FTZ;
        else if (n == 6 && !memcmp(q, "approx", 6)) in->mods |= MH_MOD_APPROX;
        else if (n == 4 && !memcmp(q, "full", 4)) in->mods |= MH_MOD_FULL;
        else if (n == 3 && !memcmp(q, "uni", 3)) in->mods |= MH_MOD_UNI;
        else if (n == 2 && !memcmp(q, "to", 2) && op == MH_OP_CVTA) in->mods |= MH_MOD_TO;
        else if (n == 5 && !memcmp(q, "shiftamt", 5)) in->mods |= MH_MOD_SHIFTAMT;
        else if (op == MH_OP_BAR && (n == 4 && !memcmp(q, "warp", 4))) in->cmp = 1; /* bar.warp.sync */
        else if (op == MH_OP_BAR && (n == 6 && !memcmp(q, "arrive", 6))) in->cmp = 2; /* bar.arrive a, b */
        else if (op == MH_OP_MBARRIER && n == 6 && !memcmp(q, "parity", 6)) in->mods |= MH_MOD_PARITY;
        else if (op == MH_OP_MBARRIER && n == 5 && !memcmp(q, "noinc", 5)) in->mods |= MH_MOD_NOINC;
        else if (word_in(q, n, ignorable) >= 0 || (n > 4 && (!memcmp(q, "L1::", 4) || !memcmp(q, "L2::", 4))))
            ;
        else if (op == MH_OP_BRA || op == MH_OP_RET || op == MH_OP_EXIT || op == MH_OP_CALL || op == MH_OP_TRAP)
            /* control flow must be understood: the instrumentation follows it */
            return perr(P, t->line, MH_E_PTX_UNSUPPORTED, "'%.*s': modifier '.%.*s' is not supported", (int)t->len, s,
                        (int)n, q);
        else { /* a form not decoded (e.g. .sync.aligned variants emu lacks): kept as text */
            memset(in, 0, offsetof(mh_ptx_insn, guard));
            in->op = MH_OP_OPAQUE;
            return 0;
        }
    }
    if (op == MH_OP_TESTP && (!(in->mods & MH_MOD_CC) || (in->type != MH_PT_F32 && in->type != MH_PT_F64)))
        return perr(P, t->line, MH_E_PTX_SYNTAX, "'%.*s': testp needs a class (.finite, .infinite, .number, "
                    ".notanumber, .normal, .subnormal) and .f32 or .f64", (int)t->len, s);
    if (op == MH_OP_BAR && in->cmp == 0) {
        /* bar.sync / barrier.sync (cmp 0), bar.arrive / barrier.arrive (cmp 2); bar.red is not supported */
        if (!strstr_n(s, t->len, "sync")) in->op = MH_OP_OPAQUE; /* bar.red: not decoded */
    }
    if (op == MH_OP_BAR && strstr_n(s, t->len, "cluster")) in->op = MH_OP_OPAQUE; /* barrier.cluster.*: not a CTA barrier */
    return 0;
}

/* Converts float-literal immediates to the bits of the type they are used at. */
static int settle_immediates(parser *P, mh_ptx_insn *in)
{
    for (int i = 0; i < in->nopnds; i++) {
        mh_ptx_opnd *o = &in->o[i];
        if (o->kind != MH_OPK_IMM || !o->fimm) continue;
        mh_ptx_type t = (mh_ptx_type)(in->op == MH_OP_CVT && i == 1 ? in->type2 : in->type);
        double d;
        memcpy(&d, &o->imm, 8);
        if (t == MH_PT_F32 || t == MH_PT_B32) {
            float f = (float)d;
            uint32_t b;
            memcpy(&b, &f, 4);
            o->imm = b;
        } else if (t == MH_PT_F64 || t == MH_PT_B64) {
            /* already double bits */
        } else {
            return perr(P, in->line, MH_E_PTX_UNSUPPORTED, "float literal used with .%s", mh_ptx_type_name(t));
        }
        o->fimm = 0;
    }
    return 0;
}

/* One variable name of a call's return or argument list, as an MH_OPK_SYM operand. */
static int call_var(parser *P, mh_ptx_insn *in)
{
    int v = TOK->kind == MH_TK_IDENT ? find_var(P, TOK->s, TOK->len) : -1;
    if (v < 0 || P->m->vars[v].space != MH_SP_PARAM)
        return perr(P, TOK->line, MH_E_PTX_SYNTAX, "call argument '%.*s' is not a .param variable", (int)TOK->len, TOK->s);
    if (in->nopnds == MH_PTX_MAX_OPNDS) { /* more than an instruction holds: the call is kept as text */
        in->mods |= MH_MOD_OPAQUE_CALL;
        NEXT();
        return 0;
    }
    mh_ptx_opnd *o = &in->o[in->nopnds++];
    memset(o, 0, sizeof *o);
    o->kind = MH_OPK_SYM;
    o->sym = v;
    o->param = -1;
    o->reg = UINT32_MAX;
    NEXT();
    return 0;
}

/* An instruction kept as text: its operands up to the ';' (braces of vector
 * operands balanced), which it consumes, text_end set past it. */
static int skip_opaque(parser *P, mh_ptx_insn *in, const mh_ptx_tok *mn)
{
    int depth = 0;
    while (TOK->kind != MH_TK_EOF && !(depth == 0 && mh_ptx_tok_punct(TOK, ';'))) {
        if (mh_ptx_tok_punct(TOK, '{') && ++depth > MH_PTX_MAX_NESTING)
            return perr(P, TOK->line, MH_E_PTX_SYNTAX, "braces nested deeper than %d", MH_PTX_MAX_NESTING);
        else if (mh_ptx_tok_punct(TOK, '}') && --depth < 0) break;
        NEXT();
    }
    if (!mh_ptx_tok_punct(TOK, ';'))
        return perr(P, in->line, MH_E_PTX_SYNTAX, "'%.*s': no ';' ends it", (int)mn->len, mn->s);
    in->text_end = (uint32_t)(TOK->s - P->m->text) + 1;
    NEXT();
    return 0;
}

/* call[.uni] [(ret),] name[, (arg, ...)];  (an indirect call becomes MH_OP_OPAQUE) */
static int parse_call(parser *P, mh_ptx_insn *in, const mh_ptx_tok *mn)
{
    if (mh_ptx_tok_punct(TOK, '(')) {
        NEXT();
        while (!mh_ptx_tok_punct(TOK, ')')) {
            if (call_var(P, in)) return -1;
            in->cmp++;
            if (mh_ptx_tok_punct(TOK, ',')) NEXT();
        }
        NEXT();
        if (expect_punct(P, ',')) return -1;
    }
    if (TOK->kind == MH_TK_IDENT && TOK->s[0] == '%') {
        /* through a register (with a .callprototype or a list of targets): kept as text, like
         * an instruction the front end does not decode; any function may run there */
        in->op = MH_OP_OPAQUE;
        in->mods |= MH_MOD_OPAQUE_CALL;
        in->nopnds = 0;
        in->cmp = 0;
        return skip_opaque(P, in, mn);
    }
    if (TOK->kind != MH_TK_IDENT)
        return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected the called function, found '%.*s'", (int)TOK->len, TOK->s);
    if (grow((void **)&P->calls, &P->cap_calls, P->ncalls + 1, sizeof *P->calls))
        return perr(P, TOK->line, MH_E_NO_MEMORY, "out of memory");
    P->calls[P->ncalls].name = TOK->s;
    P->calls[P->ncalls].len = TOK->len;
    P->calls[P->ncalls].insn = (uint32_t)P->ncode;
    P->calls[P->ncalls].func = (uint32_t)P->func;
    P->ncalls++;
    NEXT();
    if (mh_ptx_tok_punct(TOK, ',')) {
        NEXT();
        if (expect_punct(P, '(')) return -1;
        while (!mh_ptx_tok_punct(TOK, ')')) {
            if (call_var(P, in)) return -1;
            if (mh_ptx_tok_punct(TOK, ',')) NEXT();
        }
        NEXT();
    }
    in->text_end = (uint32_t)(TOK->s - P->m->text) + 1;
    if (in->mods & MH_MOD_OPAQUE_CALL) { /* too many parameters: kept as text, its callee known */
        in->op = MH_OP_OPAQUE;
        in->nopnds = 0;
        in->cmp = 0;
    }
    return expect_punct(P, ';');
}

/* Operand shapes the executor relies on: enough operands, a register (or
 * a vector of registers) where a result goes, an address where memory is
 * accessed, a type where one is needed. */
static int validate_insn(parser *P, const mh_ptx_insn *in, const mh_ptx_tok *mn)
{
    static const unsigned char min_opnds[MH_OP_COUNT_] = {
        [MH_OP_MOV] = 2, [MH_OP_LD] = 2, [MH_OP_ST] = 2, [MH_OP_CVTA] = 2, [MH_OP_CVT] = 2, [MH_OP_ADD] = 3, [MH_OP_SUB] = 3,
        [MH_OP_MUL] = 3, [MH_OP_MAD] = 4, [MH_OP_FMA] = 4, [MH_OP_DIV] = 3, [MH_OP_REM] = 3, [MH_OP_ABS] = 2, [MH_OP_NEG] = 2,
        [MH_OP_MIN] = 3, [MH_OP_MAX] = 3, [MH_OP_AND] = 3, [MH_OP_OR] = 3, [MH_OP_XOR] = 3, [MH_OP_NOT] = 2, [MH_OP_CNOT] = 2,
        [MH_OP_SHL] = 3, [MH_OP_SHR] = 3, [MH_OP_SETP] = 3, [MH_OP_SELP] = 4, [MH_OP_SET] = 3, [MH_OP_SQRT] = 2, [MH_OP_RSQRT] = 2,
        [MH_OP_RCP] = 2, [MH_OP_EX2] = 2, [MH_OP_LG2] = 2, [MH_OP_SIN] = 2, [MH_OP_COS] = 2, [MH_OP_TANH] = 2, [MH_OP_CLZ] = 2,
        [MH_OP_POPC] = 2, [MH_OP_BREV] = 2, [MH_OP_BFE] = 4, [MH_OP_BFI] = 5, [MH_OP_PRMT] = 4, [MH_OP_LOP3] = 5, [MH_OP_MUL24] = 3,
        [MH_OP_MAD24] = 4, [MH_OP_SAD] = 4, [MH_OP_COPYSIGN] = 3, [MH_OP_TESTP] = 2, [MH_OP_BRA] = 1, [MH_OP_ATOM] = 3, [MH_OP_RED] = 2,
        [MH_OP_SHFL] = 4, [MH_OP_VOTE] = 2, [MH_OP_ACTIVEMASK] = 1, [MH_OP_MBARRIER_INIT] = 2, [MH_OP_CP_ASYNC] = 3,
        [MH_OP_REDUX] = 3, [MH_OP_MATCH] = 3, [MH_OP_MBARRIER] = 1,
    };
    int op = in->op;
    const char *what = NULL;
    int need = min_opnds[op] + (op == MH_OP_SETP && in->boolop) + (op == MH_OP_ATOM && in->cmp == AOP_CAS);
    int no_type = op == MH_OP_BRA || op == MH_OP_RET || op == MH_OP_EXIT || op == MH_OP_BAR || op == MH_OP_MEMBAR ||
                  op == MH_OP_PREFETCH || op == MH_OP_TRAP || op == MH_OP_CALL || op == MH_OP_NOP || op == MH_OP_CP_ASYNC ||
                  op == MH_OP_MBARRIER;
    int writes = !no_type && op != MH_OP_ST && op != MH_OP_RED && op != MH_OP_MBARRIER_INIT;
    if (op == MH_OP_MBARRIER) { /* [addr] first, or a state/predicate (arrive: may be the sink "_") then [addr] */
        int k = in->cmp, ai = k == MH_MB_EXPECT_TX || k == MH_MB_COMPLETE_TX || k == MH_MB_CP_ASYNC_ARRIVE ? 0 : 1;
        int extra = k == MH_MB_ARRIVE_EXPECT_TX || k == MH_MB_TEST_WAIT || k == MH_MB_TRY_WAIT || k == MH_MB_EXPECT_TX ||
                    k == MH_MB_COMPLETE_TX;
        if (in->nopnds < ai + 1 + extra) what = "too few operands";
        else if (in->o[ai].kind != MH_OPK_ADDR) what = "the mbarrier must be an address [..]";
        else if (ai && in->o[0].kind != MH_OPK_REG && in->o[0].kind != MH_OPK_SINK) what = "the destination must be a register";
        if (what) return perr(P, in->line, MH_E_PTX_SYNTAX, "'%.*s': %s", (int)mn->len, mn->s, what);
    }
    if (in->nopnds < need) what = "too few operands";
    else if (!no_type && in->type == MH_PT_NONE) what = "a type is needed (e.g. .u32)";
    else if (op == MH_OP_CVT && in->type2 == MH_PT_NONE) what = "cvt needs a destination and a source type";
    else if (writes && in->o[0].kind != MH_OPK_REG && !(in->o[0].kind == MH_OPK_VEC && (op == MH_OP_LD || op == MH_OP_MOV)))
        what = "the destination must be a register";
    else if ((op == MH_OP_LD || op == MH_OP_ATOM || op == MH_OP_CP_ASYNC) && in->o[1].kind != MH_OPK_ADDR)
        what = "the source must be an address [..]";
    else if ((op == MH_OP_ST || op == MH_OP_RED || op == MH_OP_MBARRIER_INIT || op == MH_OP_CP_ASYNC) && in->o[0].kind != MH_OPK_ADDR)
        what = "the destination must be an address [..]";
    else if (op == MH_OP_CP_ASYNC && (in->o[2].kind != MH_OPK_IMM || (in->o[2].imm != 4 && in->o[2].imm != 8 && in->o[2].imm != 16)))
        what = "the copy size must be 4, 8 or 16";
    else if (op == MH_OP_BRA && in->o[0].kind != MH_OPK_LABEL) what = "the target must be a label";
    else if ((op == MH_OP_LD || op == MH_OP_ST) && in->vec > 1 && in->o[op == MH_OP_LD ? 0 : 1].kind != MH_OPK_VEC)
        what = "a vector access needs a {...} register list";
    else if (in->o[0].kind == MH_OPK_VEC && writes && in->o[0].fimm) what = "a constant cannot be written";
    else if (in->o[0].kind == MH_OPK_VEC && writes)
        for (int k = 0; k < in->o[0].n; k++)
            if (in->o[0].vec[k] != UINT32_MAX && (in->o[0].vec[k] & MH_PTX_VEC_SREG)) what = "a special register cannot be written";
    if (what) return perr(P, in->line, MH_E_PTX_SYNTAX, "'%.*s': %s", (int)mn->len, mn->s, what);
    return 0;
}

/* A marker comment inside a statement (before its ';') would have the
 * instrumentation's code inserted into the middle of it. */
static int marker_inside(parser *P, size_t first_marker, const mh_ptx_insn *in)
{
    for (size_t k = first_marker; k < P->lx.nmarkers; k++) {
        size_t off = P->lx.markers[k].off;
        if (off > in->text_off && off < in->text_end)
            return perr(P, P->lx.markers[k].line, MH_E_PTX_SYNTAX, "a marker inside the statement that starts on "
                        "line %u (no ';' before it)", in->line);
    }
    return 0;
}

/* Appends an instruction to the function's code (no marker may sit inside it). */
static int push_insn(parser *P, size_t first_marker, const mh_ptx_insn *in)
{
    if (marker_inside(P, first_marker, in)) return -1;
    if (grow((void **)&P->code, &P->cap_code, P->ncode + 1, sizeof *in))
        return perr(P, in->line, MH_E_NO_MEMORY, "out of memory");
    P->code[P->ncode++] = *in;
    return 0;
}

static int parse_instruction(parser *P)
{
    size_t first_marker = P->lx.nmarkers;
    mh_ptx_insn in;
    memset(&in, 0, sizeof in);
    in.guard = -1;
    in.dst2 = -1;
    in.callee = -1;
    in.line = TOK->line;
    in.text_off = (uint32_t)(TOK->s - P->m->text);
    if (mh_ptx_tok_punct(TOK, '@')) {
        NEXT();
        if (mh_ptx_tok_punct(TOK, '!')) { in.guard_neg = 1; NEXT(); }
        uint32_t r;
        if (TOK->kind != MH_TK_IDENT || lookup_reg(P, TOK->s, TOK->len, &r))
            return perr(P, TOK->line, MH_E_PTX_SYNTAX, "bad guard predicate '%.*s'", (int)TOK->len, TOK->s);
        in.guard = (int32_t)r;
        NEXT();
    }
    if (TOK->kind != MH_TK_IDENT) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected an instruction, found '%.*s'",
                                           (int)TOK->len, TOK->s);
    mh_ptx_tok mn = *TOK;
    if (decode_mnemonic(P, &mn, &in)) return -1;
    NEXT();
    if (in.op == MH_OP_OPAQUE) return skip_opaque(P, &in, &mn) || push_insn(P, first_marker, &in) ? -1 : 0;
    if (in.op == MH_OP_MEMBAR || in.op == MH_OP_PREFETCH) {
        const char *semi = memchr(P->m->text + in.text_off, ';', strlen(P->m->text + in.text_off));
        in.text_end = semi ? (uint32_t)(semi - P->m->text) + 1 : in.text_off;
        if (mh_ptx_lex_skip_statement(&P->lx)) /* ordering and hints: no operands the emulator uses */
            return perr(P, TOK->line, MH_E_PTX_SYNTAX, "braces nested deeper than %d", MH_PTX_MAX_NESTING);
    } else if (in.op == MH_OP_CALL) {
        if (parse_call(P, &in, &mn)) return -1;
        if (in.op == MH_OP_OPAQUE) return push_insn(P, first_marker, &in); /* a call kept as text: nothing to validate */
    } else {
        while (!mh_ptx_tok_punct(TOK, ';')) {
            if (in.nopnds == MH_PTX_MAX_OPNDS)
                return perr(P, TOK->line, MH_E_PTX_SYNTAX, "too many operands for '%.*s'", (int)mn.len, mn.s);
            int rc = parse_operand(P, &in, &in.o[in.nopnds]);
            if (rc > 0) { /* not representable: kept as text, like an instruction not decoded */
                memset(&in, 0, offsetof(mh_ptx_insn, guard));
                in.op = MH_OP_OPAQUE;
                return skip_opaque(P, &in, &mn) || push_insn(P, first_marker, &in) ? -1 : 0;
            }
            if (rc) return -1;
            in.nopnds++;
            if (in.nopnds == 1 && mh_ptx_tok_punct(TOK, '|')) {
                NEXT();
                uint32_t r;
                if (TOK->kind != MH_TK_IDENT || lookup_reg(P, TOK->s, TOK->len, &r))
                    return perr(P, TOK->line, MH_E_PTX_SYNTAX, "bad second destination '%.*s'", (int)TOK->len, TOK->s);
                in.dst2 = (int32_t)r;
                NEXT();
            }
            if (mh_ptx_tok_punct(TOK, ',')) NEXT();
            else if (!mh_ptx_tok_punct(TOK, ';'))
                return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected ',' or ';' after an operand of '%.*s', found '%.*s'",
                            (int)mn.len, mn.s, (int)TOK->len, TOK->s);
        }
        in.text_end = (uint32_t)(TOK->s - P->m->text) + 1;
        NEXT();
    }
    if (settle_immediates(P, &in) || validate_insn(P, &in, &mn)) return -1;
    return push_insn(P, first_marker, &in);
}

static int parse_block(parser *P);

/* A marker comment inside a directive or a label (before its last token, which
 * the lexer's prev_end ends), like one inside an instruction, would have the
 * instrumentation's code inserted into the middle of it. */
static int marker_inside_span(parser *P, size_t first_marker, const mh_ptx_tok *start, const char *what)
{
    size_t from = (size_t)(start->s - P->m->text), to = (size_t)(P->lx.prev_end - P->m->text);
    for (size_t k = first_marker; k < P->lx.nmarkers; k++) {
        size_t off = P->lx.markers[k].off;
        if (off > from && off < to)
            return perr(P, P->lx.markers[k].line, MH_E_PTX_SYNTAX, "a marker inside the %s '%.*s' that starts on line %u",
                        what, (int)(start->len < 64 ? start->len : 64), start->s, start->line);
    }
    return 0;
}

/* .loc FILE LINE COLUMN [, function_name LABEL [+ N]] [, inlined_at FILE LINE COLUMN]
 * (the current token is .loc).  No ';' ends it (ptxas refuses one), and it may span
 * lines: the grammar, not the line, says where it ends. */
static int skip_loc(parser *P)
{
    uint32_t line = TOK->line;
    NEXT();
    for (int i = 0; i < 3; i++) {
        if (TOK->kind != MH_TK_INT)
            return perr(P, TOK->kind == MH_TK_EOF ? line : TOK->line, MH_E_PTX_SYNTAX,
                        ".loc needs a file, a line and a column, found '%.*s'", (int)TOK->len, TOK->s);
        NEXT();
    }
    while (mh_ptx_tok_punct(TOK, ',')) {
        NEXT();
        if (mh_ptx_tok_is(TOK, "function_name")) {
            NEXT();
            if (TOK->kind != MH_TK_IDENT)
                return perr(P, TOK->line, MH_E_PTX_SYNTAX, ".loc: function_name needs a label, found '%.*s'",
                            (int)TOK->len, TOK->s);
            NEXT();
            if (mh_ptx_tok_punct(TOK, '+')) {
                NEXT();
                if (TOK->kind != MH_TK_INT)
                    return perr(P, TOK->line, MH_E_PTX_SYNTAX, ".loc: an offset after '+' expected, found '%.*s'",
                                (int)TOK->len, TOK->s);
                NEXT();
            }
        } else if (mh_ptx_tok_is(TOK, "inlined_at")) {
            NEXT();
            for (int i = 0; i < 3; i++) {
                if (TOK->kind != MH_TK_INT)
                    return perr(P, TOK->line, MH_E_PTX_SYNTAX, ".loc: inlined_at needs a file, a line and a column, "
                                "found '%.*s'", (int)TOK->len, TOK->s);
                NEXT();
            }
        } else {
            return perr(P, TOK->line, MH_E_PTX_SYNTAX, "unknown .loc attribute '%.*s'", (int)TOK->len, TOK->s);
        }
    }
    return 0;
}

/* parse_block, also giving where its closing '}' is. */
static int parse_block_at(parser *P, const char **close_at)
{
    int rc = parse_block(P);
    *close_at = P->last_close;
    return rc;
}

/* Places the marker comments met before the current token as MH_OP_NOP
 * pseudo-instructions, so labels and control flow see where they are. */
static int place_markers(parser *P)
{
    while (P->next_marker < P->lx.nmarkers && P->lx.markers[P->next_marker].off < (size_t)(TOK->s - P->m->text)) {
        const mh_ptx_marker *mp = &P->lx.markers[P->next_marker++];
        if (P->func < 0) continue;
        mh_ptx_insn in;
        memset(&in, 0, sizeof in);
        in.op = MH_OP_NOP;
        in.mods = MH_MOD_MARKER;
        in.guard = in.dst2 = in.callee = -1;
        in.line = mp->line;
        in.text_off = (uint32_t)mp->off;
        in.text_end = P->m->text[mp->eol] == '\n' ? (uint32_t)mp->eol : in.text_off;
        if (grow((void **)&P->code, &P->cap_code, P->ncode + 1, sizeof in))
            return perr(P, in.line, MH_E_NO_MEMORY, "out of memory");
        P->code[P->ncode++] = in;
    }
    return 0;
}

/* Statements until the closing '}' of the current scope. */
static int parse_block(parser *P)
{
    size_t decls_at_entry = P->ndecls;
    P->depth++;
    for (;;) {
        if (place_markers(P)) return -1;
        if (mh_ptx_tok_punct(TOK, '}')) break;
        if (TOK->kind == MH_TK_EOF) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "unexpected end of file inside a function");
        if (mh_ptx_tok_punct(TOK, '{')) {
            if (P->depth >= MH_PTX_MAX_NESTING)
                return perr(P, TOK->line, MH_E_PTX_SYNTAX, "blocks nested deeper than %d", MH_PTX_MAX_NESTING);
            NEXT();
            if (parse_block(P)) return -1;
            continue;
        }
        if (TOK->kind == MH_TK_IDENT && TOK->s[0] == '.') {
            mh_ptx_tok dir = *TOK;
            size_t first_marker = P->lx.nmarkers;
            if (mh_ptx_tok_is(TOK, ".reg")) {
                if (parse_reg_decl(P)) return -1;
            } else if (mh_ptx_tok_is(TOK, ".shared") || mh_ptx_tok_is(TOK, ".local") || mh_ptx_tok_is(TOK, ".global") ||
                       mh_ptx_tok_is(TOK, ".const")) {
                if (parse_var(P, 0)) return -1;
            } else if (mh_ptx_tok_is(TOK, ".param")) {
                /* a call sequence's argument or return variable */
                if (parse_var(P, 0)) return -1;
            } else if (mh_ptx_tok_is(TOK, ".loc")) { /* debug info: no ';' ends it */
                if (skip_loc(P)) return -1;
            } else if (mh_ptx_tok_is(TOK, ".pragma") || mh_ptx_tok_is(TOK, ".maxnreg") || mh_ptx_tok_is(TOK, ".file")) {
                /* hints */
                uint32_t line = TOK->line;
                while (TOK->kind != MH_TK_EOF && TOK->line == line && !mh_ptx_tok_punct(TOK, ';')) NEXT();
                if (mh_ptx_tok_punct(TOK, ';')) NEXT();
            } else if (mh_ptx_tok_is(TOK, ".callprototype") || mh_ptx_tok_is(TOK, ".calltargets")) {
                /* "label: .callprototype ...;": what indirect calls (kept as text) may call */
                while (TOK->kind != MH_TK_EOF && !mh_ptx_tok_punct(TOK, ';')) NEXT();
                if (expect_punct(P, ';')) return -1;
            } else {
                return perr(P, TOK->line, MH_E_PTX_UNSUPPORTED, "directive '%.*s' inside a function is not supported",
                            (int)TOK->len, TOK->s);
            }
            if (marker_inside_span(P, first_marker, &dir, "directive")) return -1;
            continue;
        }
        /* label? */
        if (TOK->kind == MH_TK_IDENT && TOK->s[0] != '%') {
            /* look one token ahead; on the way back restore the position and
             * forget the markers read meanwhile (they will be read again) */
            const char *save_p = P->lx.p;
            uint32_t save_line = P->lx.line;
            size_t save_markers = P->lx.nmarkers;
            mh_ptx_tok name = *TOK;
            NEXT();
            if (mh_ptx_tok_punct(TOK, ':')) {
                NEXT();
                if (marker_inside_span(P, save_markers, &name, "label")) return -1;
                if (grow((void **)&P->labels, &P->cap_labels, P->nlabels + 1, sizeof *P->labels))
                    return perr(P, name.line, MH_E_NO_MEMORY, "out of memory");
                P->labels[P->nlabels].name = name.s;
                P->labels[P->nlabels].len = name.len;
                P->labels[P->nlabels].insn = (uint32_t)P->ncode;
                int32_t *slot = index_put(&P->labels_ix, name.s, name.len, 0);
                if (!slot) return perr(P, name.line, MH_E_NO_MEMORY, "out of memory");
                if (*slot < 0) *slot = (int32_t)P->nlabels; /* the first definition of a label counts */
                P->nlabels++;
                continue;
            }
            P->lx.p = save_p;
            P->lx.line = save_line;
            P->lx.cur = name;
            P->lx.nmarkers = save_markers; /* they will be seen again */
        }
        if (parse_instruction(P)) return -1;
    }
    P->last_close = TOK->s;
    NEXT();
    P->depth--;
    decls_truncate(P, decls_at_entry); /* registers declared in this scope go out of scope */
    return 0;
}

static int resolve_labels(parser *P, mh_ptx_func *f)
{
    for (size_t i = 0; i < P->nfixups; i++) {
        label_ref *r = &P->fixups[i];
        mh_ptx_insn *in = &P->code[r->insn];
        int32_t k = index_get(&P->labels_ix, r->name, r->len, 0);
        if (k < 0) {
            if (in->op == MH_OP_CALL) continue;
            return perr(P, in->line, MH_E_PTX_SYNTAX, "branch to undefined label '%.*s'", (int)r->len, r->name);
        }
        for (int j = 0; j < in->nopnds; j++)
            if (in->o[j].kind == MH_OPK_LABEL) in->o[j].reg = P->labels[k].insn;
    }
    (void)f;
    return 0;
}

/* A use of register r as an address: the parameters loaded into it before are pointers. */
static void mark_loads(mh_ptx_func *f, int32_t *head, const int32_t *next, uint32_t r)
{
    if (r < f->first_reg || r - f->first_reg >= f->nregs) return;
    for (int32_t j = head[r - f->first_reg]; j >= 0; j = next[j]) f->params[f->code[j].o[1].param].is_ptr = 1;
    head[r - f->first_reg] = -1;
}

/* nvcc does not mark pointer parameters (.ptr); a .u64/.b64 parameter whose
 * loaded value is converted with cvta or used as an address (by a later
 * instruction) is one.  One pass: each register keeps the list of such loads
 * into it so far, which a use as an address marks and empties.  -1: out of memory. */
static int infer_pointers(mh_ptx_module *m, mh_ptx_func *f)
{
    int32_t *head = malloc(((size_t)f->nregs + 1) * sizeof *head), *next = malloc(((size_t)f->ncode + 1) * sizeof *next);
    if (!head || !next) {
        free(head);
        free(next);
        return -1;
    }
    memset(head, 0xff, ((size_t)f->nregs + 1) * sizeof *head);
    for (uint32_t i = 0; i < f->ncode; i++) {
        const mh_ptx_insn *u = &f->code[i];
        if (u->op == MH_OP_CVTA && u->o[1].kind == MH_OPK_REG) mark_loads(f, head, next, u->o[1].reg);
        for (int k = 0; k < u->nopnds; k++)
            if (u->o[k].kind == MH_OPK_ADDR && u->space != MH_SP_PARAM) mark_loads(f, head, next, u->o[k].reg);
        if (u->op != MH_OP_LD || u->space != MH_SP_PARAM || u->o[1].param < 0 || u->o[0].kind != MH_OPK_REG) continue;
        const mh_ptx_param *p = &f->params[u->o[1].param];
        uint32_t r = u->o[0].reg;
        if (p->is_ptr || mh_ptx_type_bits(p->type) != 64 || mh_ptx_type_is_float(p->type)) continue;
        if (r < f->first_reg || r - f->first_reg >= f->nregs) continue;
        next[i] = head[r - f->first_reg];
        head[r - f->first_reg] = (int32_t)i;
    }
    free(head);
    free(next);
    (void)m;
    return 0;
}

/* [.visible|.extern|.weak] .entry|.func [(rets)] name (params) [perf directives] { body } | ; */
static int parse_function(parser *P, int visible)
{
    mh_ptx_module *m = P->m;
    int is_entry = mh_ptx_tok_is(TOK, ".entry");
    uint32_t line = TOK->line;
    NEXT();
    mh_ptx_func f;
    memset(&f, 0, sizeof f);
    f.is_entry = is_entry;
    f.visible = visible;
    f.line = line;
    f.first_reg = m->nregs;
    if (grow((void **)&m->funcs, &P->cap_funcs, (size_t)m->nfuncs + 1, sizeof *m->funcs))
        return perr(P, line, MH_E_NO_MEMORY, "out of memory");
    P->func = (int)m->nfuncs;
    m->nfuncs++;
    mh_ptx_func *F = &m->funcs[P->func];
    *F = f;
    if (!is_entry && mh_ptx_tok_punct(TOK, '(')) {
        if (parse_param_list(P, &F->rets, &F->nrets, &F->ret_bytes)) return -1;
    }
    if (TOK->kind != MH_TK_IDENT) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected a function name");
    F->name = tokdup(TOK);
    int32_t *first = F->name ? index_put(&P->funcs, F->name, strlen(F->name), 0) : NULL;
    if (!first) return perr(P, line, MH_E_NO_MEMORY, "out of memory");
    if (*first < 0) *first = P->func;
    NEXT();
    if (mh_ptx_tok_punct(TOK, '(')) {
        if (parse_param_list(P, &F->params, &F->nparams, &F->param_bytes)) return -1;
        F = &m->funcs[P->func];
        /* the token before the current one was ')' */
        const char *q = TOK->s;
        while (q > m->text && *q != ')') q--;
        F->params_close = (uint32_t)(q - m->text);
    }
    F->maxntid[0] = F->maxntid[1] = F->maxntid[2] = 0;
    while (TOK->kind == MH_TK_IDENT && TOK->s[0] == '.') {
        int is_maxntid = mh_ptx_tok_is(TOK, ".maxntid") || mh_ptx_tok_is(TOK, ".reqntid");
        if (mh_ptx_tok_is(TOK, ".reqntid")) F->reqntid = 1;
        NEXT();
        for (int i = 0; TOK->kind == MH_TK_INT; i++) {
            uint64_t v = 0;
            parse_u64(TOK, &v);
            if (is_maxntid && i < 3) F->maxntid[i] = (uint32_t)v;
            NEXT();
            if (mh_ptx_tok_punct(TOK, ',')) NEXT();
        }
    }
    if (mh_ptx_tok_punct(TOK, ';')) { /* a declaration: what follows is module scope again */
        NEXT();
        P->func = -1;
        return 0;
    }
    if (!mh_ptx_tok_punct(TOK, '{')) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected '{' or ';' after a function header");
    F->body_open = (uint32_t)(TOK->s - m->text) + 1;
    NEXT();
    P->ncode = P->nlabels = P->nfixups = 0;
    decls_truncate(P, 0);
    index_free(&P->labels_ix);
    if (index_params(P)) return perr(P, line, MH_E_NO_MEMORY, "out of memory");
    P->depth = 0;
    const char *close_at = NULL;
    if (parse_block_at(P, &close_at)) return -1;
    F = &m->funcs[P->func];
    F->body_close = (uint32_t)(close_at - m->text);
    if (resolve_labels(P, F)) return -1;
    /* every function ends in a return */
    mh_ptx_insn ret;
    memset(&ret, 0, sizeof ret);
    ret.op = MH_OP_RET;
    ret.guard = ret.dst2 = ret.callee = -1;
    ret.line = TOK->line;
    if (grow((void **)&P->code, &P->cap_code, P->ncode + 1, sizeof ret)) return perr(P, line, MH_E_NO_MEMORY, "out of memory");
    P->code[P->ncode++] = ret;
    F->code = malloc(P->ncode * sizeof *F->code);
    if (!F->code) return perr(P, line, MH_E_NO_MEMORY, "out of memory");
    memcpy(F->code, P->code, P->ncode * sizeof *F->code);
    F->ncode = (uint32_t)P->ncode;
    F->nregs = m->nregs - F->first_reg;
    F->defined = 1;
    if (F->is_entry && infer_pointers(m, F)) return perr(P, line, MH_E_NO_MEMORY, "out of memory");
    int32_t *defined = index_put(&P->funcs, F->name, strlen(F->name), 1);
    if (!defined) return perr(P, line, MH_E_NO_MEMORY, "out of memory");
    *defined = P->func; /* the last definition of a name is the one calls reach */
    P->func = -1;
    return 0;
}

static void place(mh_ptx_var *v, uint64_t *at)
{
    *at = (*at + v->align - 1) / v->align * v->align;
    v->offset = *at;
    *at += v->size;
}

/* Offsets of the variables.  Each function's layout takes the module's shared
 * variables and its own, in text order; the variables are bucketed by function
 * first, so the work is the variables plus functions x module-scope shared
 * variables, not functions x all variables.  -1: out of memory. */
static int layout_vars(mh_ptx_module *m)
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
    const uint32_t *mod = by + start[0], *mod_end = by + start[1];
    /* .local: one layout for the whole module, the module's variables and then
     * each function's after the previous ones, so a kernel and the .funcs it
     * calls never share bytes (calls cannot recurse) and every launch gets
     * room for all of them per thread */
    uint64_t local = 0;
    for (uint32_t k = 0; k < nv; k++)
        if (m->vars[by[k]].space == MH_SP_LOCAL && m->vars[by[k]].size) place(&m->vars[by[k]], &local);
    /* the module-scope shared variables, in order */
    uint32_t nsh = 0;
    for (const uint32_t *q = mod; q < mod_end; q++)
        if (m->vars[*q].space == MH_SP_SHARED) by[start[0] + nsh++] = *q; /* compacted in place: mod stays sorted */
    mod_end = mod + nsh;
    /* module-scope shared variables and each function's own shared and call-area (.param) ones */
    for (uint32_t fi = 0; fi < nf; fi++) {
        uint64_t shared = 0;
        const uint32_t *own = by + start[fi + 1], *own_end = by + start[fi + 2], *q = mod, *o = own;
        while (q < mod_end || o < own_end) {
            mh_ptx_var *v = &m->vars[o == own_end || (q < mod_end && *q < *o) ? *q++ : *o++];
            uint64_t *at = v->space == MH_SP_SHARED ? &shared
                         : v->space == MH_SP_PARAM && v->func == (int)fi ? &m->funcs[fi].callarea_bytes : NULL;
            if (!at || v->size == 0) continue;
            place(v, at);
        }
        /* unsized (dynamic) shared arrays start after the static ones */
        uint64_t dyn = shared;
        for (q = mod, o = own; q < mod_end || o < own_end;) {
            mh_ptx_var *v = &m->vars[o == own_end || (q < mod_end && *q < *o) ? *q++ : *o++];
            if (v->space == MH_SP_SHARED && v->size == 0) {
                uint64_t a = v->align > 16 ? v->align : 16;
                dyn = (shared + a - 1) / a * a;
                v->offset = dyn;
            }
        }
        m->funcs[fi].shared_bytes = dyn > shared ? dyn : shared;
        m->funcs[fi].local_bytes = local;
    }
    free(start);
    free(by);
    /* global/const variables: offsets in a module data segment */
    uint64_t data = 0;
    for (uint32_t i = 0; i < m->nvars; i++) {
        mh_ptx_var *v = &m->vars[i];
        if (v->space != MH_SP_GLOBAL && v->space != MH_SP_CONST) continue;
        place(v, &data);
    }
    return 0;
}

int mh_ptx_parse(mh_ptx_module *m, const char *text, size_t len, const char *path, mh_error *e)
{
    parser Pv, *P = &Pv;
    memset(m, 0, sizeof *m);
    memset(P, 0, sizeof *P);
    m->path = strdup(path ? path : "<ptx>");
    m->text = malloc(len + 1);
    if (!m->path || !m->text) {
        mh_ptx_free(m);
        return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    }
    memcpy(m->text, text, len);
    m->text[len] = 0;
    const char *nul = memchr(text, 0, len);
    if (nul) { /* PTX is text: a binary would trip every offset taken with strlen */
        int line = 1;
        for (const char *q = text; q < nul; q++) line += *q == '\n';
        mh_error_clear(e);
        e->line = line;
        int rc = mh_fail(e, MH_E_PTX_SYNTAX, "%s:%d: a NUL byte at offset %zu: PTX is text (a cubin or fatbin is "
                         "loaded as an image, with its PTX for the signatures)", m->path, line, (size_t)(nul - text));
        mh_ptx_free(m);
        return rc;
    }
    m->address_size = 64;
    P->m = m;
    P->e = e;
    P->func = -1;
    mh_error_clear(e);
    mh_ptx_lex_init(&P->lx, m->text, len);
    int rc = 0;
    while (!rc && TOK->kind != MH_TK_EOF) {
        P->next_marker = P->lx.nmarkers; /* markers outside bodies are the instrumenter's to report */
        if (TOK->kind != MH_TK_IDENT) {
            rc = perr(P, TOK->line, MH_E_PTX_SYNTAX, "unexpected '%.*s' at module level", (int)TOK->len, TOK->s);
            break;
        }
        if (mh_ptx_tok_is(TOK, ".version")) {
            NEXT();
            if (TOK->kind == MH_TK_FLOAT || TOK->kind == MH_TK_INT) {
                m->version_major = (uint32_t)atoi(TOK->s);
                const char *d = memchr(TOK->s, '.', TOK->len);
                m->version_minor = d ? (uint32_t)atoi(d + 1) : 0;
                NEXT();
            }
        } else if (mh_ptx_tok_is(TOK, ".target")) {
            NEXT();
            if (TOK->kind == MH_TK_IDENT) snprintf(m->target, sizeof m->target, "%.*s", (int)TOK->len, TOK->s);
            NEXT();
            while (mh_ptx_tok_punct(TOK, ',')) { NEXT(); NEXT(); }
        } else if (mh_ptx_tok_is(TOK, ".address_size")) {
            NEXT();
            uint64_t a = 0;
            parse_u64(TOK, &a);
            m->address_size = (uint32_t)a;
            if (a != 64) rc = perr(P, TOK->line, MH_E_PTX_UNSUPPORTED, ".address_size %llu (only 64 is supported)",
                                   (unsigned long long)a);
            NEXT();
        } else if (mh_ptx_tok_is(TOK, ".file")) {
            uint32_t line = TOK->line;
            while (TOK->kind != MH_TK_EOF && TOK->line == line) NEXT();
        } else if (mh_ptx_tok_is(TOK, ".loc")) {
            rc = skip_loc(P);
        } else if (mh_ptx_tok_is(TOK, ".section")) {
            NEXT();
            NEXT();
            if (mh_ptx_lex_skip_statement(&P->lx))
                rc = perr(P, TOK->line, MH_E_PTX_SYNTAX, "braces nested deeper than %d", MH_PTX_MAX_NESTING);
        } else if (mh_ptx_tok_is(TOK, ".alias")) { /* .alias f2, f1; a second name of a function */
            NEXT();
            if (mh_ptx_lex_skip_statement(&P->lx))
                rc = perr(P, TOK->line, MH_E_PTX_SYNTAX, "braces nested deeper than %d", MH_PTX_MAX_NESTING);
        } else if (mh_ptx_tok_is(TOK, ".visible") || mh_ptx_tok_is(TOK, ".extern") || mh_ptx_tok_is(TOK, ".weak") ||
                   mh_ptx_tok_is(TOK, ".common")) { /* linkage: .common is a .weak that may differ in size */
            int vis = mh_ptx_tok_is(TOK, ".visible"), ext = mh_ptx_tok_is(TOK, ".extern");
            NEXT();
            if (mh_ptx_tok_is(TOK, ".entry") || mh_ptx_tok_is(TOK, ".func")) rc = parse_function(P, vis);
            else if (TOK->kind == MH_TK_IDENT && space_of(TOK->s + 1, TOK->len - 1) >= 0) rc = parse_var(P, ext);
            else rc = perr(P, TOK->line, MH_E_PTX_SYNTAX, "unexpected '%.*s'", (int)TOK->len, TOK->s);
        } else if (mh_ptx_tok_is(TOK, ".entry") || mh_ptx_tok_is(TOK, ".func")) {
            rc = parse_function(P, 0);
        } else if (mh_ptx_tok_is(TOK, ".global") || mh_ptx_tok_is(TOK, ".const") || mh_ptx_tok_is(TOK, ".shared")) {
            rc = parse_var(P, 0);
        } else {
            rc = perr(P, TOK->line, MH_E_PTX_UNSUPPORTED, "module directive '%.*s' is not supported", (int)TOK->len, TOK->s);
        }
    }
    for (size_t i = 0; !rc && i < P->ncalls; i++) {
        label_ref *r = &P->calls[i];
        mh_ptx_insn *in = &m->funcs[r->func].code[r->insn];
        /* the (last) definition over a prototype, else the first declaration */
        int32_t k = index_get(&P->funcs, r->name, r->len, 1);
        in->callee = k >= 0 ? k : index_get(&P->funcs, r->name, r->len, 0);
        if (in->callee < 0) rc = perr(P, in->line, MH_E_PTX_SYNTAX, "call to undeclared function '%.*s'", (int)r->len, r->name);
    }
    if (P->lx.nomem) /* a marker the lexer could not record ended the tokens: whatever failed after is its doing */
        rc = perr(P, P->lx.nomem_line, MH_E_NO_MEMORY, "out of memory for the marker records");
    if (!rc) {
        if (layout_vars(m)) rc = perr(P, 0, MH_E_NO_MEMORY, "out of memory");
        m->markers = P->lx.markers; /* the records, read once, go with the module */
        m->nmarkers = P->lx.nmarkers;
        P->lx.markers = NULL;
        P->lx.nmarkers = P->lx.cap_markers = 0;
    }
    index_free(&P->regs);
    index_free(&P->vars);
    index_free(&P->params);
    index_free(&P->labels_ix);
    index_free(&P->funcs);
    free(P->decls);
    free(P->code);
    free(P->labels);
    free(P->fixups);
    free(P->calls);
    mh_ptx_lex_free(&P->lx);
    if (rc) {
        mh_ptx_free(m);
        return (int)e->code;
    }
    return 0;
}

void mh_ptx_free(mh_ptx_module *m)
{
    for (uint32_t i = 0; i < m->nfuncs; i++) {
        mh_ptx_func *f = &m->funcs[i];
        free(f->name);
        for (uint32_t k = 0; k < f->nparams; k++) free(f->params[k].name);
        for (uint32_t k = 0; k < f->nrets; k++) free(f->rets[k].name);
        free(f->params);
        free(f->rets);
        free(f->code);
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
    free(m->path);
    free(m->text);
    memset(m, 0, sizeof *m);
}

const mh_ptx_func *mh_ptx_find(const mh_ptx_module *m, const char *name)
{
    for (uint32_t i = 0; i < m->nfuncs; i++)
        if (m->funcs[i].name && !strcmp(m->funcs[i].name, name) && m->funcs[i].defined) return &m->funcs[i];
    return NULL;
}
