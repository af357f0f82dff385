/* ptx_parse.c - PTX parser and decoder: module directives, variables,
 * entries and .funcs with parameters, register declarations (ranges and
 * inline-asm scopes), labels, and every instruction decoded into a
 * ptx_insn.  See ptx.h. */
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
} reg_decl;

typedef struct {
    const char *name;
    size_t len;
    uint32_t insn;
} label_ref;

typedef struct {
    ptx_lexer lx;
    ptx_module *m;
    mh_error *e;
    reg_decl *decls;
    size_t ndecls, cap_decls;
    int depth;
    int func;              /* index of the function being parsed */
    ptx_insn *code;
    size_t ncode, cap_code;
    label_ref *labels, *fixups;
    size_t nlabels, cap_labels, nfixups, cap_fixups;
    label_ref *calls;      /* call sites: name of the callee; insn = function << 20 | index */
    size_t ncalls, cap_calls;
    const char *last_close;  /* the '}' that ended the last block */
    size_t next_marker;      /* markers of the lexer already placed */
} parser;

/* ---- helpers ------------------------------------------------------------ */

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
#define NEXT() ptx_lex_next(&P->lx)

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

static char *tokdup(const ptx_tok *t)
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
    if (!ptx_tok_punct(TOK, c))
        return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected '%c', found '%.*s'", c, (int)TOK->len, TOK->s);
    NEXT();
    return 0;
}

static int parse_u64(const ptx_tok *t, uint64_t *out)
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
static double parse_float(const ptx_tok *t)
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

static const struct { const char *name; ptx_type t; } type_names[] = {
    {"b8", PT_B8}, {"b16", PT_B16}, {"b32", PT_B32}, {"b64", PT_B64},
    {"u8", PT_U8}, {"u16", PT_U16}, {"u32", PT_U32}, {"u64", PT_U64},
    {"s8", PT_S8}, {"s16", PT_S16}, {"s32", PT_S32}, {"s64", PT_S64},
    {"f16", PT_F16}, {"f16x2", PT_F16X2}, {"bf16", PT_BF16}, {"bf16x2", PT_BF16X2},
    {"f32", PT_F32}, {"f64", PT_F64}, {"pred", PT_PRED},
};

static ptx_type type_of(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof type_names / sizeof *type_names; i++)
        if (strlen(type_names[i].name) == n && !memcmp(type_names[i].name, s, n)) return type_names[i].t;
    return PT_NONE;
}

const char *ptx_type_name(ptx_type t)
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
    SP("global", SP_GLOBAL);
    SP("shared", SP_SHARED);
    SP("local", SP_LOCAL);
    SP("param", SP_PARAM);
    SP("const", SP_CONST);
#undef SP
    return -1;
}

static const char *const op_names[OP_COUNT_] = {
    [OP_NOP] = "nop", [OP_MOV] = "mov", [OP_LD] = "ld", [OP_ST] = "st", [OP_CVTA] = "cvta", [OP_CVT] = "cvt",
    [OP_ADD] = "add", [OP_SUB] = "sub", [OP_MUL] = "mul", [OP_MAD] = "mad", [OP_FMA] = "fma", [OP_DIV] = "div",
    [OP_REM] = "rem", [OP_ABS] = "abs", [OP_NEG] = "neg", [OP_MIN] = "min", [OP_MAX] = "max", [OP_AND] = "and",
    [OP_OR] = "or", [OP_XOR] = "xor", [OP_NOT] = "not", [OP_CNOT] = "cnot", [OP_SHL] = "shl", [OP_SHR] = "shr",
    [OP_SETP] = "setp", [OP_SELP] = "selp", [OP_SET] = "set", [OP_SQRT] = "sqrt", [OP_RSQRT] = "rsqrt",
    [OP_RCP] = "rcp", [OP_EX2] = "ex2", [OP_LG2] = "lg2", [OP_SIN] = "sin", [OP_COS] = "cos", [OP_TANH] = "tanh",
    [OP_CLZ] = "clz", [OP_POPC] = "popc", [OP_BREV] = "brev", [OP_BFE] = "bfe", [OP_BFI] = "bfi",
    [OP_PRMT] = "prmt", [OP_LOP3] = "lop3", [OP_MUL24] = "mul24", [OP_MAD24] = "mad24", [OP_SAD] = "sad",
    [OP_COPYSIGN] = "copysign", [OP_TESTP] = "testp", [OP_BRA] = "bra", [OP_RET] = "ret", [OP_EXIT] = "exit",
    [OP_BAR] = "bar", [OP_MEMBAR] = "membar", [OP_ATOM] = "atom", [OP_RED] = "red", [OP_SHFL] = "shfl",
    [OP_VOTE] = "vote", [OP_ACTIVEMASK] = "activemask", [OP_MBARRIER_INIT] = "mbarrier.init", [OP_CP_ASYNC] = "cp.async",
    [OP_PREFETCH] = "prefetch", [OP_TRAP] = "trap", [OP_CALL] = "call", [OP_REDUX] = "redux",
    [OP_MBARRIER] = "mbarrier",
    [OP_MATCH] = "match",
    /* OP_OPAQUE has no name: no mnemonic decodes to it */
};

const char *ptx_op_name(ptx_op op) { return (unsigned)op < OP_COUNT_ && op_names[op] ? op_names[op] : "?"; }

static int op_of(const char *s, size_t n)
{
    if (n == 7 && !memcmp(s, "barrier", 7)) return OP_BAR;
    if (n == 5 && !memcmp(s, "fence", 5)) return OP_MEMBAR;
    /* nanosleep sleeps "about t ns, in [0, 2t]": no sleep at all is a valid one */
    if (n == 9 && !memcmp(s, "nanosleep", 9)) return OP_MEMBAR;
    if (n == 3 && !memcmp(s, "ldu", 3)) return OP_LD;
    for (int i = 0; i < OP_COUNT_; i++)
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
/* testp's classes, in the order of ptx_testp */
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

static int new_reg(parser *P, const char *name, size_t len, ptx_type t, uint32_t *out)
{
    ptx_module *m = P->m;
    size_t cap = m->nregs; /* capacity tracked by powers of two */
    if ((m->nregs & (m->nregs - 1)) == 0 || m->nregs == 0) {
        size_t c = m->nregs ? m->nregs * 2 : 64;
        (void)cap;
        ptx_type *rt = realloc(m->reg_type, c * sizeof *rt);
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

static int lookup_reg(parser *P, const char *s, size_t n, uint32_t *out)
{
    for (size_t i = P->ndecls; i-- > 0;) {
        reg_decl *d = &P->decls[i];
        if (d->count == 0) {
            if (d->len == n && !memcmp(d->name, s, n)) { *out = d->base; return 0; }
        } else if (n > d->len && !memcmp(d->name, s, d->len)) {
            uint64_t v = 0;
            size_t k = d->len;
            for (; k < n && s[k] >= '0' && s[k] <= '9' && v < UINT32_MAX; k++) v = v * 10 + (uint64_t)(s[k] - '0');
            if (k == n && v < d->count && (n == d->len + 1 || s[d->len] != '0')) {
                *out = d->base + (uint32_t)v;
                return 0;
            }
        }
    }
    return -1;
}

static const struct { const char *name; ptx_sreg id; } sreg_names[] = {
    {"%tid.x", SR_TID_X}, {"%tid.y", SR_TID_Y}, {"%tid.z", SR_TID_Z},
    {"%ntid.x", SR_NTID_X}, {"%ntid.y", SR_NTID_Y}, {"%ntid.z", SR_NTID_Z},
    {"%ctaid.x", SR_CTAID_X}, {"%ctaid.y", SR_CTAID_Y}, {"%ctaid.z", SR_CTAID_Z},
    {"%nctaid.x", SR_NCTAID_X}, {"%nctaid.y", SR_NCTAID_Y}, {"%nctaid.z", SR_NCTAID_Z},
    {"%laneid", SR_LANEID}, {"%warpid", SR_WARPID}, {"%nwarpid", SR_NWARPID}, {"%smid", SR_SMID},
    {"%nsmid", SR_NSMID}, {"%clock", SR_CLOCK}, {"%clock_hi", SR_CLOCK_HI}, {"%clock64", SR_CLOCK64},
    {"%globaltimer", SR_GLOBALTIMER}, {"%globaltimer_lo", SR_GLOBALTIMER_LO},
    {"%globaltimer_hi", SR_GLOBALTIMER_HI}, {"%lanemask_eq", SR_LANEMASK_EQ}, {"%lanemask_lt", SR_LANEMASK_LT},
    {"%lanemask_le", SR_LANEMASK_LE}, {"%lanemask_gt", SR_LANEMASK_GT}, {"%lanemask_ge", SR_LANEMASK_GE},
    {"%dynamic_smem_size", SR_DYNAMIC_SMEM_SIZE}, {"%total_smem_size", SR_TOTAL_SMEM_SIZE},
    {"%gridid", SR_GRIDID}, {"%aggr_smem_size", SR_AGGR_SMEM_SIZE},
    {"%clusterid.x", SR_CLUSTERID_X}, {"%clusterid.y", SR_CLUSTERID_Y}, {"%clusterid.z", SR_CLUSTERID_Z},
    {"%nclusterid.x", SR_NCLUSTERID_X}, {"%nclusterid.y", SR_NCLUSTERID_Y}, {"%nclusterid.z", SR_NCLUSTERID_Z},
    {"%cluster_ctaid.x", SR_CLUSTER_CTAID_X}, {"%cluster_ctaid.y", SR_CLUSTER_CTAID_Y},
    {"%cluster_ctaid.z", SR_CLUSTER_CTAID_Z}, {"%cluster_nctaid.x", SR_CLUSTER_NCTAID_X},
    {"%cluster_nctaid.y", SR_CLUSTER_NCTAID_Y}, {"%cluster_nctaid.z", SR_CLUSTER_NCTAID_Z},
    {"%cluster_ctarank", SR_CLUSTER_CTARANK}, {"%cluster_nctarank", SR_CLUSTER_NCTARANK},
    {"%is_explicit_cluster", SR_IS_EXPLICIT_CLUSTER},
    {"%reserved_smem_offset_begin", SR_RESERVED_SMEM_BEGIN}, {"%reserved_smem_offset_end", SR_RESERVED_SMEM_END},
    {"%reserved_smem_offset_cap", SR_RESERVED_SMEM_CAP}, {"%reserved_smem_offset_0", SR_RESERVED_SMEM_0},
    {"%reserved_smem_offset_1", SR_RESERVED_SMEM_1}, {"%current_graph_exec", SR_CURRENT_GRAPH_EXEC},
};

/* "%envreg0".."%envreg31", "%pm0".."%pm7", "%pm0_64".."%pm7_64": numbered families */
static int numbered_sreg(const char *s, size_t n)
{
    static const struct { const char *prefix, *suffix; int base, count; } fam[] = {
        {"%envreg", "", SR_ENVREG0, 32}, {"%pm", "_64", SR_PM0_64, 8}, {"%pm", "", SR_PM0, 8},
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

const char *ptx_sreg_name(int id, char *buf, size_t len)
{
    for (size_t i = 0; i < sizeof sreg_names / sizeof *sreg_names; i++)
        if ((int)sreg_names[i].id == id) return sreg_names[i].name;
    if (id >= SR_ENVREG0 && id < SR_PM0) snprintf(buf, len, "%%envreg%d", id - SR_ENVREG0);
    else if (id >= SR_PM0 && id < SR_PM0_64) snprintf(buf, len, "%%pm%d", id - SR_PM0);
    else if (id >= SR_PM0_64 && id < SR_COUNT_) snprintf(buf, len, "%%pm%d_64", id - SR_PM0_64);
    else snprintf(buf, len, "special register %d", id);
    return buf;
}

static int find_var(parser *P, const char *s, size_t n)
{
    for (uint32_t i = P->m->nvars; i-- > 0;) {
        ptx_var *v = &P->m->vars[i];
        if ((v->func == -1 || v->func == P->func) && strlen(v->name) == n && !memcmp(v->name, s, n)) return (int)i;
    }
    return -1;
}

static int find_param(parser *P, const char *s, size_t n)
{
    ptx_func *f = &P->m->funcs[P->func];
    for (uint32_t i = 0; i < f->nparams; i++)
        if (strlen(f->params[i].name) == n && !memcmp(f->params[i].name, s, n)) return (int)i;
    for (uint32_t i = 0; i < f->nrets; i++)
        if (strlen(f->rets[i].name) == n && !memcmp(f->rets[i].name, s, n)) return -2 - (int)i;
    return -1;
}

/* ---- declarations ------------------------------------------------------- */

/* .reg .TYPE name, name<N>, ...; */
static int parse_reg_decl(parser *P)
{
    NEXT(); /* .reg */
    ptx_type t = PT_NONE;
    while (TOK->kind == TK_IDENT && TOK->s[0] == '.') {
        ptx_type tt = type_of(TOK->s + 1, TOK->len - 1);
        if (tt != PT_NONE) t = tt;
        else if (!ptx_tok_is(TOK, ".v2") && !ptx_tok_is(TOK, ".v4"))
            return perr(P, TOK->line, MH_E_PTX_SYNTAX, "unknown register type '%.*s'", (int)TOK->len, TOK->s);
        NEXT();
    }
    if (t == PT_NONE) return perr(P, TOK->line, MH_E_PTX_SYNTAX, ".reg without a type");
    for (;;) {
        if (TOK->kind != TK_IDENT) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected a register name");
        const char *name = TOK->s;
        size_t len = TOK->len;
        NEXT();
        uint32_t count = 0;
        if (ptx_tok_punct(TOK, '<')) {
            NEXT();
            uint64_t c;
            if (TOK->kind != TK_INT || parse_u64(TOK, &c) || c == 0 || c > 1000000)
                return perr(P, TOK->line, MH_E_PTX_SYNTAX, "bad register count in %.*s<...>", (int)len, name);
            count = (uint32_t)c;
            NEXT();
            if (expect_punct(P, '>')) return -1;
        }
        if (grow((void **)&P->decls, &P->cap_decls, P->ndecls + 1, sizeof *P->decls))
            return perr(P, TOK->line, MH_E_NO_MEMORY, "out of memory");
        reg_decl *d = &P->decls[P->ndecls++];
        d->name = name;
        d->len = len;
        d->count = count;
        d->depth = P->depth;
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
        if (ptx_tok_punct(TOK, ',')) { NEXT(); continue; }
        return expect_punct(P, ';');
    }
}

/* Initialiser: = value or = {v, v, ...}; integers or floats into init bytes. */
static int parse_init(parser *P, ptx_var *v, ptx_type t)
{
    int bits = ptx_type_bits(t), esize = bits / 8;
    if (esize == 0) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "initialiser of a variable without a size");
    v->init = calloc(v->size ? v->size : 1, 1);
    if (!v->init) return perr(P, TOK->line, MH_E_NO_MEMORY, "out of memory");
    int brace = ptx_tok_punct(TOK, '{');
    if (brace) NEXT();
    uint64_t at = 0;
    for (;;) {
        int neg = 0;
        if (ptx_tok_punct(TOK, '-')) { neg = 1; NEXT(); }
        uint64_t bitsv = 0;
        if (TOK->kind == TK_INT) {
            if (parse_u64(TOK, &bitsv)) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "bad integer");
            if (neg) bitsv = 0 - bitsv;
            if (ptx_type_is_float(t)) {
                double d = neg ? -(double)(0 - bitsv) : (double)bitsv;
                if (t == PT_F32) { float f = (float)d; uint32_t b; memcpy(&b, &f, 4); bitsv = b; }
                else memcpy(&bitsv, &d, 8);
            }
        } else if (TOK->kind == TK_FLOAT) {
            double d = parse_float(TOK);
            if (neg) d = -d;
            if (t == PT_F32) { float f = (float)d; uint32_t b; memcpy(&b, &f, 4); bitsv = b; }
            else if (t == PT_F64) memcpy(&bitsv, &d, 8);
            else bitsv = (uint64_t)(int64_t)d;
        } else if (ptx_tok_punct(TOK, '{')) {
            return perr(P, TOK->line, MH_E_PTX_UNSUPPORTED, "nested initialisers are not supported");
        } else if (TOK->kind == TK_IDENT && !neg) {
            /* an address (generic(x), x, x+8): kept for the driver to fill in; its bytes stay 0 here
             * and emu refuses the module's kernels */
            if (!v->address_init_line) v->address_init_line = TOK->line;
            int depth = 0;
            while (TOK->kind != TK_EOF && !(depth == 0 && (ptx_tok_punct(TOK, ',') || ptx_tok_punct(TOK, '}') ||
                                                           ptx_tok_punct(TOK, ';')))) {
                if (ptx_tok_punct(TOK, '(')) depth++;
                else if (ptx_tok_punct(TOK, ')')) depth--;
                NEXT();
            }
            at += (uint64_t)esize;
            if (brace && ptx_tok_punct(TOK, ',')) { NEXT(); continue; }
            break;
        } else {
            return perr(P, TOK->line, MH_E_PTX_UNSUPPORTED, "initialiser '%.*s' is not supported", (int)TOK->len, TOK->s);
        }
        NEXT();
        if (at + (uint64_t)esize <= v->size) memcpy(v->init + at, &bitsv, (size_t)esize); /* little-endian host */
        at += (uint64_t)esize;
        if (brace && ptx_tok_punct(TOK, ',')) { NEXT(); continue; }
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
    if (TOK->kind != TK_INT || parse_u64(TOK, &a) || a == 0 || (a & (a - 1)) || a > 4096)
        return perr(P, TOK->line, MH_E_PTX_SYNTAX, "bad .align: a power of two up to 4096 expected");
    *out = (uint32_t)a;
    NEXT();
    return 0;
}

/* [.extern|.visible] .shared/.global/.const/.local [.align N] .TYPE name[[N]] [= init]; */
static int parse_var(parser *P, int is_extern)
{
    ptx_var v;
    memset(&v, 0, sizeof v);
    v.func = P->func;
    v.is_extern = is_extern;
    v.align = 0;
    ptx_type t = PT_NONE;
    uint32_t line = TOK->line;
    v.space = (ptx_space)space_of(TOK->s + 1, TOK->len - 1);
    NEXT();
    while (TOK->kind == TK_IDENT && TOK->s[0] == '.') {
        if (ptx_tok_is(TOK, ".align")) {
            if (parse_align(P, &v.align)) return -1;
            continue;
        }
        ptx_type tt = type_of(TOK->s + 1, TOK->len - 1);
        if (tt == PT_NONE && !ptx_tok_is(TOK, ".v2") && !ptx_tok_is(TOK, ".v4"))
            return perr(P, TOK->line, MH_E_PTX_UNSUPPORTED, "variable qualifier '%.*s' is not supported",
                        (int)TOK->len, TOK->s);
        if (tt != PT_NONE) t = tt;
        NEXT();
    }
    if (TOK->kind != TK_IDENT) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected a variable name");
    v.name = tokdup(TOK);
    NEXT();
    uint32_t esize = (uint32_t)ptx_type_bits(t) / 8;
    if (!esize) esize = 1;
    v.size = esize;
    if (!v.align) v.align = esize;
    while (ptx_tok_punct(TOK, '[')) {
        NEXT();
        if (ptx_tok_punct(TOK, ']')) {
            v.size = 0; /* unsized: dynamic shared memory */
            NEXT();
            continue;
        }
        uint64_t n;
        if (TOK->kind != TK_INT || parse_u64(TOK, &n) || n > (1ull << 40)) {
            free(v.name);
            return perr(P, TOK->line, MH_E_PTX_SYNTAX, "bad array size");
        }
        v.size *= n;
        NEXT();
        if (expect_punct(P, ']')) { free(v.name); return -1; }
    }
    if (ptx_tok_punct(TOK, '=')) {
        NEXT();
        if (parse_init(P, &v, t)) { free(v.name); free(v.init); return -1; }
    }
    if (expect_punct(P, ';')) { free(v.name); free(v.init); return -1; }
    if ((int)v.space < 0) { free(v.name); free(v.init); return perr(P, line, MH_E_PTX_SYNTAX, "bad state space"); }
    /* variables are few: grow one at a time */
    ptx_var *nv = realloc(P->m->vars, (P->m->nvars + 1) * sizeof *nv);
    if (!nv) { free(v.name); free(v.init); return perr(P, line, MH_E_NO_MEMORY, "out of memory"); }
    P->m->vars = nv;
    nv[P->m->nvars++] = v;
    return 0;
}

/* .param [.TYPE] [.ptr [.space] [.align N]] [.align N] name[[N]] */
static int parse_param(parser *P, ptx_param *p)
{
    memset(p, 0, sizeof *p);
    if (!ptx_tok_is(TOK, ".param") && !ptx_tok_is(TOK, ".reg"))
        return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected .param, found '%.*s'", (int)TOK->len, TOK->s);
    NEXT();
    while (TOK->kind == TK_IDENT && TOK->s[0] == '.') {
        if (ptx_tok_is(TOK, ".align")) {
            if (parse_align(P, &p->align)) return -1;
            continue;
        } else if (ptx_tok_is(TOK, ".ptr")) {
            p->is_ptr = 1;
        } else {
            int sp = space_of(TOK->s + 1, TOK->len - 1);
            ptx_type t = type_of(TOK->s + 1, TOK->len - 1);
            if (sp >= 0) p->ptr_space = (ptx_space)sp;
            else if (t != PT_NONE) p->type = t;
            else return perr(P, TOK->line, MH_E_PTX_SYNTAX, "unknown parameter qualifier '%.*s'", (int)TOK->len, TOK->s);
        }
        NEXT();
    }
    if (TOK->kind != TK_IDENT) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected a parameter name");
    p->name = tokdup(TOK);
    NEXT();
    uint32_t esize = (uint32_t)ptx_type_bits(p->type) / 8;
    if (!esize) esize = 1;
    p->size = esize;
    if (ptx_tok_punct(TOK, '[')) {
        NEXT();
        uint64_t n;
        if (TOK->kind != TK_INT || parse_u64(TOK, &n) || n == 0 || n > (1u << 20))
            return perr(P, TOK->line, MH_E_PTX_SYNTAX, "bad parameter array size");
        p->size = esize * (uint32_t)n;
        NEXT();
        if (expect_punct(P, ']')) return -1;
    }
    if (!p->align) p->align = esize;
    return 0;
}

static int parse_param_list(parser *P, ptx_param **out, uint32_t *n, uint32_t *bytes)
{
    if (expect_punct(P, '(')) return -1;
    uint32_t off = 0;
    while (!ptx_tok_punct(TOK, ')')) {
        ptx_param p;
        if (parse_param(P, &p)) {
            free(p.name);
            return -1;
        }
        off = (off + p.align - 1) / p.align * p.align;
        p.offset = off;
        off += p.size;
        ptx_param *np = realloc(*out, (*n + 1) * sizeof *np);
        if (!np) { free(p.name); return perr(P, TOK->line, MH_E_NO_MEMORY, "out of memory"); }
        *out = np;
        np[(*n)++] = p;
        if (ptx_tok_punct(TOK, ',')) NEXT();
        else if (!ptx_tok_punct(TOK, ')'))
            return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected ',' or ')' in a parameter list");
    }
    NEXT();
    if (bytes) *bytes = off;
    return 0;
}

/* ---- instructions --------------------------------------------------------- */

static int parse_operand(parser *P, ptx_insn *in, ptx_opnd *o)
{
    memset(o, 0, sizeof *o);
    o->sym = -1;
    o->param = -1;
    o->reg = UINT32_MAX;
    if (ptx_tok_punct(TOK, '!')) { o->neg = 1; NEXT(); }
    if (ptx_tok_punct(TOK, '[')) {
        NEXT();
        o->kind = OPK_ADDR;
        if (TOK->kind == TK_IDENT) {
            uint32_t r;
            int v, pi;
            if (!lookup_reg(P, TOK->s, TOK->len, &r)) o->reg = r;
            else if ((v = find_var(P, TOK->s, TOK->len)) >= 0) o->sym = v;
            else if ((pi = find_param(P, TOK->s, TOK->len)) != -1) o->param = pi;
            else return perr(P, TOK->line, MH_E_PTX_SYNTAX, "unknown name '%.*s' in an address", (int)TOK->len, TOK->s);
            NEXT();
            if (ptx_tok_punct(TOK, '+') || ptx_tok_punct(TOK, '-')) {
                int neg = ptx_tok_punct(TOK, '-');
                NEXT();
                if (ptx_tok_punct(TOK, '-')) { neg = !neg; NEXT(); }
                uint64_t off;
                if (TOK->kind != TK_INT || parse_u64(TOK, &off))
                    return perr(P, TOK->line, MH_E_PTX_SYNTAX, "bad address offset '%.*s'", (int)TOK->len, TOK->s);
                o->imm = neg ? -(int64_t)off : (int64_t)off;
                NEXT();
            }
        } else if (TOK->kind == TK_INT) {
            uint64_t a;
            if (parse_u64(TOK, &a)) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "bad address");
            o->imm = (int64_t)a;
            NEXT();
        } else {
            return perr(P, TOK->line, MH_E_PTX_SYNTAX, "bad address '%.*s'", (int)TOK->len, TOK->s);
        }
        return expect_punct(P, ']');
    }
    if (ptx_tok_punct(TOK, '{')) {
        NEXT();
        o->kind = OPK_VEC;
        while (!ptx_tok_punct(TOK, '}')) {
            if (o->n == 4) return perr(P, TOK->line, MH_E_PTX_UNSUPPORTED, "vectors of more than 4 elements");
            uint32_t r;
            int sr;
            if (ptx_tok_is(TOK, "_")) r = UINT32_MAX;
            else if (TOK->kind == TK_IDENT && !lookup_reg(P, TOK->s, TOK->len, &r))
                ;
            else if (TOK->kind == TK_IDENT && (sr = sreg_of(TOK->s, TOK->len)) >= 0)
                r = PTX_VEC_SREG | (uint32_t)sr;
            else
                return perr(P, TOK->line, MH_E_PTX_SYNTAX, "unknown register '%.*s' in a vector", (int)TOK->len, TOK->s);
            o->vec[o->n++] = r;
            NEXT();
            if (ptx_tok_punct(TOK, ',')) NEXT();
        }
        NEXT();
        return 0;
    }
    int neg = 0;
    if (ptx_tok_punct(TOK, '-')) { neg = 1; NEXT(); }
    if (TOK->kind == TK_INT) {
        uint64_t v;
        if (parse_u64(TOK, &v)) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "bad integer '%.*s'", (int)TOK->len, TOK->s);
        o->kind = OPK_IMM;
        o->imm = neg ? -(int64_t)v : (int64_t)v;
        NEXT();
        return 0;
    }
    if (TOK->kind == TK_FLOAT) {
        double d = parse_float(TOK);
        if (neg) d = -d;
        o->kind = OPK_IMM;
        o->fimm = 1;
        memcpy(&o->imm, &d, 8);
        NEXT();
        return 0;
    }
    if (neg) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "'-' before '%.*s'", (int)TOK->len, TOK->s);
    if (TOK->kind != TK_IDENT) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "bad operand '%.*s'", (int)TOK->len, TOK->s);
    if (ptx_tok_is(TOK, "_")) { o->kind = OPK_SINK; NEXT(); return 0; }
    uint32_t r;
    int v;
    if (TOK->s[0] == '%') {
        if (!lookup_reg(P, TOK->s, TOK->len, &r)) {
            o->kind = OPK_REG;
            o->reg = r;
        } else if ((v = sreg_of(TOK->s, TOK->len)) >= 0) {
            o->kind = OPK_SREG;
            o->reg = (uint32_t)v;
        } else {
            return perr(P, TOK->line, MH_E_PTX_SYNTAX, "undeclared register '%.*s'", (int)TOK->len, TOK->s);
        }
        NEXT();
        return 0;
    }
    if (in->op == OP_BRA || in->op == OP_CALL) {
        o->kind = OPK_LABEL;
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
        o->kind = OPK_REG;
        o->reg = r;
        NEXT();
        return 0;
    }
    if ((v = find_var(P, TOK->s, TOK->len)) >= 0) {
        o->kind = OPK_SYM;
        o->sym = v;
        NEXT();
        return 0;
    }
    if ((v = find_param(P, TOK->s, TOK->len)) >= 0) { /* mov.b64 %rd, k_param_0: a __grid_constant__ parameter */
        o->kind = OPK_PARAM_ADDR;
        o->param = v;
        NEXT();
        return 0;
    }
    for (uint32_t k = 0; k < P->m->nfuncs; k++) /* a function's address (mov.u64 %rd, f): a function pointer */
        if (strlen(P->m->funcs[k].name) == TOK->len && !memcmp(P->m->funcs[k].name, TOK->s, TOK->len)) {
            o->kind = OPK_FUNC;
            o->reg = k;
            NEXT();
            return 0;
        }
    return perr(P, TOK->line, MH_E_PTX_SYNTAX, "unknown name '%.*s'", (int)TOK->len, TOK->s);
}

/* Splits the mnemonic at '.' and fills op, types, space and modifiers. */
static int decode_mnemonic(parser *P, const ptx_tok *t, ptx_insn *in)
{
    const char *s = t->s, *end = t->s + t->len;
    const char *dot = memchr(s, '.', t->len);
    size_t n0 = dot ? (size_t)(dot - s) : t->len;
    int op = op_of(s, n0);
    if (op == OP_MBARRIER_INIT || op == OP_MBARRIER || (n0 == 8 && !memcmp(s, "mbarrier", 8))) {
        /* the mbarrier forms emu runs; others (arrive_drop, pending_count, inval, ...) stay text */
        static const struct { const char *w; int kind; } forms[] = {
            {"mbarrier.init", -1}, {"mbarrier.arrive.expect_tx", MB_ARRIVE_EXPECT_TX}, {"mbarrier.arrive", MB_ARRIVE},
            {"mbarrier.expect_tx", MB_EXPECT_TX}, {"mbarrier.complete_tx", MB_COMPLETE_TX},
            {"mbarrier.test_wait", MB_TEST_WAIT}, {"mbarrier.try_wait", MB_TRY_WAIT}, {NULL, 0},
        };
        op = -1;
        for (int k = 0; forms[k].w; k++) {
            size_t n = strlen(forms[k].w);
            if (t->len >= n && !memcmp(s, forms[k].w, n) && (t->len == n || s[n] == '.')) {
                op = forms[k].kind < 0 ? OP_MBARRIER_INIT : OP_MBARRIER;
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
            if (t->len == strlen(waits[k]) && !memcmp(s, waits[k], t->len)) op = OP_MEMBAR;
        if (t->len > 12 && (!memcmp(s, "cp.async.ca.", 12) || !memcmp(s, "cp.async.cg.", 12))) {
            op = OP_CP_ASYNC;
            dot = s + 8; /* from ".ca" / ".cg" */
        }
        if (t->len > 24 && !memcmp(s, "cp.async.mbarrier.arrive.", 25)) { /* arrives when its cp.asyncs are done */
            op = OP_MBARRIER;
            in->cmp = MB_CP_ASYNC_ARRIVE;
            dot = s + 24;
        }
    }
    if (op < 0) { /* not decoded: kept as text (emu refuses it, the GPU runs it) */
        in->op = OP_OPAQUE;
        return 0;
    }
    in->op = (uint16_t)op;
    in->vec = 1;
    if (op == OP_MEMBAR || op == OP_PREFETCH) return 0; /* ordering / hints only */
    int ntypes = 0;
    for (const char *p = dot; p && p < end;) {
        const char *q = p + 1, *nx = memchr(q, '.', (size_t)(end - q));
        /* a part like "L1::evict_last" or "param::entry" contains no dot */
        size_t n = (size_t)((nx ? nx : end) - q);
        p = nx;
        ptx_type ty = type_of(q, n);
        int k;
        if (ty != PT_NONE) {
            if (ntypes == 0) in->type = (uint8_t)ty;
            else in->type2 = (uint8_t)ty;
            ntypes++;
        } else if ((k = space_of(q, n)) >= 0 && (op == OP_LD || op == OP_ST || op == OP_ATOM || op == OP_RED ||
                                                   op == OP_CVTA || op == OP_MBARRIER_INIT || op == OP_PREFETCH || op == OP_CP_ASYNC ||
                                                   op == OP_MBARRIER)) {
            in->space = (uint8_t)k;
        } else if (n == 2 && q[0] == 'v' && (q[1] == '2' || q[1] == '4')) {
            in->vec = (uint8_t)(q[1] - '0');
        } else if ((op == OP_SETP || op == OP_SET) && (k = word_in(q, n, cmp_names)) >= 0 && !in->mods) {
            in->cmp = (uint8_t)k;
            in->mods |= MOD_CC; /* comparison seen */
        } else if ((op == OP_SETP || op == OP_SET) && (k = word_in(q, n, (const char *const[]){"and", "or", "xor", NULL})) >= 0) {
            in->boolop = (uint8_t)(k + 1);
        } else if ((op == OP_ATOM || op == OP_RED || op == OP_REDUX) && (k = word_in(q, n, aop_names)) >= 0) {
            in->cmp = (uint8_t)k;
        } else if (op == OP_SHFL && (k = word_in(q, n, (const char *const[]){"up", "down", "bfly", "idx", NULL})) >= 0) {
            in->cmp = (uint8_t)k;
        } else if (op == OP_MATCH && (k = word_in(q, n, (const char *const[]){"any", "all", NULL})) >= 0) {
            in->cmp = (uint8_t)k;
        } else if (op == OP_VOTE && (k = word_in(q, n, (const char *const[]){"all", "any", "uni", "ballot", NULL})) >= 0) {
            in->cmp = (uint8_t)k;
        } else if (op == OP_TESTP && (k = word_in(q, n, testp_names)) >= 0) {
            in->cmp = (uint8_t)k;
            in->mods |= MOD_CC; /* class seen */
        } else if ((k = word_in(q, n, rnd_names)) > 0) {
            in->rnd = (uint8_t)k;
        } else if (n == 2 && !memcmp(q, "hi", 2)) in->mods |= MOD_HI;
        else if (n == 2 && !memcmp(q, "lo", 2)) in->mods |= MOD_LO;
        else if (n == 4 && !memcmp(q, "wide", 4)) in->mods |= MOD_WIDE;
        else if (n == 3 && !memcmp(q, "sat", 3)) in->mods |= MOD_SAT;
        else if (n == 3 && !memcmp(q, "ftz", 3)) in->mods |= MOD_FTZ;
        else if (n == 6 && !memcmp(q, "approx", 6)) in->mods |= MOD_APPROX;
        else if (n == 4 && !memcmp(q, "full", 4)) in->mods |= MOD_FULL;
        else if (n == 3 && !memcmp(q, "uni", 3)) in->mods |= MOD_UNI;
        else if (n == 2 && !memcmp(q, "to", 2) && op == OP_CVTA) in->mods |= MOD_TO;
        else if (n == 5 && !memcmp(q, "shiftamt", 5)) in->mods |= MOD_SHIFTAMT;
        else if (op == OP_BAR && (n == 4 && !memcmp(q, "warp", 4))) in->cmp = 1; /* bar.warp.sync */
        else if (op == OP_BAR && (n == 6 && !memcmp(q, "arrive", 6))) in->cmp = 2; /* bar.arrive a, b */
        else if (op == OP_MBARRIER && n == 6 && !memcmp(q, "parity", 6)) in->mods |= MOD_PARITY;
        else if (op == OP_MBARRIER && n == 5 && !memcmp(q, "noinc", 5)) in->mods |= MOD_NOINC;
        else if (word_in(q, n, ignorable) >= 0 || (n > 4 && (!memcmp(q, "L1::", 4) || !memcmp(q, "L2::", 4))))
            ;
        else if (op == OP_BRA || op == OP_RET || op == OP_EXIT || op == OP_CALL || op == OP_TRAP)
            /* control flow must be understood: the instrumentation follows it */
            return perr(P, t->line, MH_E_PTX_UNSUPPORTED, "'%.*s': modifier '.%.*s' is not supported", (int)t->len, s,
                        (int)n, q);
        else { /* a form not decoded (e.g. .sync.aligned variants emu lacks): kept as text */
            memset(in, 0, offsetof(ptx_insn, guard));
            in->op = OP_OPAQUE;
            return 0;
        }
    }
    if (op == OP_TESTP && (!(in->mods & MOD_CC) || (in->type != PT_F32 && in->type != PT_F64)))
        return perr(P, t->line, MH_E_PTX_SYNTAX, "'%.*s': testp needs a class (.finite, .infinite, .number, "
                    ".notanumber, .normal, .subnormal) and .f32 or .f64", (int)t->len, s);
    if (op == OP_BAR && in->cmp == 0) {
        /* bar.sync / barrier.sync (cmp 0), bar.arrive / barrier.arrive (cmp 2); bar.red is not supported */
        if (!strstr_n(s, t->len, "sync")) in->op = OP_OPAQUE; /* bar.red: not decoded */
    }
    if (op == OP_BAR && strstr_n(s, t->len, "cluster")) in->op = OP_OPAQUE; /* barrier.cluster.*: not a CTA barrier */
    return 0;
}

/* Converts float-literal immediates to the bits of the type they are used at. */
static int settle_immediates(parser *P, ptx_insn *in)
{
    for (int i = 0; i < in->nopnds; i++) {
        ptx_opnd *o = &in->o[i];
        if (o->kind != OPK_IMM || !o->fimm) continue;
        ptx_type t = (ptx_type)(in->op == OP_CVT && i == 1 ? in->type2 : in->type);
        double d;
        memcpy(&d, &o->imm, 8);
        if (t == PT_F32 || t == PT_B32) {
            float f = (float)d;
            uint32_t b;
            memcpy(&b, &f, 4);
            o->imm = b;
        } else if (t == PT_F64 || t == PT_B64) {
            /* already double bits */
        } else {
            return perr(P, in->line, MH_E_PTX_UNSUPPORTED, "float literal used with .%s", ptx_type_name(t));
        }
        o->fimm = 0;
    }
    return 0;
}

/* One variable name of a call's return or argument list, as an OPK_SYM operand. */
static int call_var(parser *P, ptx_insn *in)
{
    int v = TOK->kind == TK_IDENT ? find_var(P, TOK->s, TOK->len) : -1;
    if (v < 0 || P->m->vars[v].space != SP_PARAM)
        return perr(P, TOK->line, MH_E_PTX_SYNTAX, "call argument '%.*s' is not a .param variable", (int)TOK->len, TOK->s);
    if (in->nopnds == PTX_MAX_OPNDS) { /* more than an instruction holds: the call is kept as text */
        in->mods |= MOD_OPAQUE_CALL;
        NEXT();
        return 0;
    }
    ptx_opnd *o = &in->o[in->nopnds++];
    memset(o, 0, sizeof *o);
    o->kind = OPK_SYM;
    o->sym = v;
    o->param = -1;
    o->reg = UINT32_MAX;
    NEXT();
    return 0;
}

/* An instruction kept as text: its operands up to the ';' (braces of vector
 * operands balanced), which it consumes, text_end set past it. */
static int skip_opaque(parser *P, ptx_insn *in, const ptx_tok *mn)
{
    int depth = 0;
    while (TOK->kind != TK_EOF && !(depth == 0 && ptx_tok_punct(TOK, ';'))) {
        if (ptx_tok_punct(TOK, '{')) depth++;
        else if (ptx_tok_punct(TOK, '}') && --depth < 0) break;
        NEXT();
    }
    if (!ptx_tok_punct(TOK, ';'))
        return perr(P, in->line, MH_E_PTX_SYNTAX, "'%.*s': no ';' ends it", (int)mn->len, mn->s);
    in->text_end = (uint32_t)(TOK->s - P->m->text) + 1;
    NEXT();
    return 0;
}

/* call[.uni] [(ret),] name[, (arg, ...)];  (an indirect call becomes OP_OPAQUE) */
static int parse_call(parser *P, ptx_insn *in, const ptx_tok *mn)
{
    if (ptx_tok_punct(TOK, '(')) {
        NEXT();
        while (!ptx_tok_punct(TOK, ')')) {
            if (call_var(P, in)) return -1;
            in->cmp++;
            if (ptx_tok_punct(TOK, ',')) NEXT();
        }
        NEXT();
        if (expect_punct(P, ',')) return -1;
    }
    if (TOK->kind == TK_IDENT && TOK->s[0] == '%') {
        /* through a register (with a .callprototype or a list of targets): kept as text, like
         * an instruction the front end does not decode; any function may run there */
        in->op = OP_OPAQUE;
        in->mods |= MOD_OPAQUE_CALL;
        in->nopnds = 0;
        in->cmp = 0;
        return skip_opaque(P, in, mn);
    }
    if (TOK->kind != TK_IDENT)
        return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected the called function, found '%.*s'", (int)TOK->len, TOK->s);
    if (grow((void **)&P->calls, &P->cap_calls, P->ncalls + 1, sizeof *P->calls))
        return perr(P, TOK->line, MH_E_NO_MEMORY, "out of memory");
    P->calls[P->ncalls].name = TOK->s;
    P->calls[P->ncalls].len = TOK->len;
    P->calls[P->ncalls].insn = (uint32_t)P->func << 20 | (uint32_t)P->ncode;
    P->ncalls++;
    NEXT();
    if (ptx_tok_punct(TOK, ',')) {
        NEXT();
        if (expect_punct(P, '(')) return -1;
        while (!ptx_tok_punct(TOK, ')')) {
            if (call_var(P, in)) return -1;
            if (ptx_tok_punct(TOK, ',')) NEXT();
        }
        NEXT();
    }
    in->text_end = (uint32_t)(TOK->s - P->m->text) + 1;
    if (in->mods & MOD_OPAQUE_CALL) { /* too many parameters: kept as text, its callee known */
        in->op = OP_OPAQUE;
        in->nopnds = 0;
        in->cmp = 0;
    }
    return expect_punct(P, ';');
}

/* Operand shapes the executor relies on: enough operands, a register (or
 * a vector of registers) where a result goes, an address where memory is
 * accessed, a type where one is needed. */
static int validate_insn(parser *P, const ptx_insn *in, const ptx_tok *mn)
{
    static const unsigned char min_opnds[OP_COUNT_] = {
        [OP_MOV] = 2, [OP_LD] = 2, [OP_ST] = 2, [OP_CVTA] = 2, [OP_CVT] = 2, [OP_ADD] = 3, [OP_SUB] = 3,
        [OP_MUL] = 3, [OP_MAD] = 4, [OP_FMA] = 4, [OP_DIV] = 3, [OP_REM] = 3, [OP_ABS] = 2, [OP_NEG] = 2,
        [OP_MIN] = 3, [OP_MAX] = 3, [OP_AND] = 3, [OP_OR] = 3, [OP_XOR] = 3, [OP_NOT] = 2, [OP_CNOT] = 2,
        [OP_SHL] = 3, [OP_SHR] = 3, [OP_SETP] = 3, [OP_SELP] = 4, [OP_SET] = 3, [OP_SQRT] = 2, [OP_RSQRT] = 2,
        [OP_RCP] = 2, [OP_EX2] = 2, [OP_LG2] = 2, [OP_SIN] = 2, [OP_COS] = 2, [OP_TANH] = 2, [OP_CLZ] = 2,
        [OP_POPC] = 2, [OP_BREV] = 2, [OP_BFE] = 4, [OP_BFI] = 5, [OP_PRMT] = 4, [OP_LOP3] = 5, [OP_MUL24] = 3,
        [OP_MAD24] = 4, [OP_SAD] = 4, [OP_COPYSIGN] = 3, [OP_TESTP] = 2, [OP_BRA] = 1, [OP_ATOM] = 3, [OP_RED] = 2,
        [OP_SHFL] = 4, [OP_VOTE] = 2, [OP_ACTIVEMASK] = 1, [OP_MBARRIER_INIT] = 2, [OP_CP_ASYNC] = 3,
        [OP_REDUX] = 3, [OP_MATCH] = 3, [OP_MBARRIER] = 1,
    };
    int op = in->op;
    const char *what = NULL;
    int need = min_opnds[op] + (op == OP_SETP && in->boolop) + (op == OP_ATOM && in->cmp == AOP_CAS);
    int no_type = op == OP_BRA || op == OP_RET || op == OP_EXIT || op == OP_BAR || op == OP_MEMBAR ||
                  op == OP_PREFETCH || op == OP_TRAP || op == OP_CALL || op == OP_NOP || op == OP_CP_ASYNC ||
                  op == OP_MBARRIER;
    int writes = !no_type && op != OP_ST && op != OP_RED && op != OP_MBARRIER_INIT;
    if (op == OP_MBARRIER) { /* [addr] first, or a state/predicate (arrive: may be the sink "_") then [addr] */
        int k = in->cmp, ai = k == MB_EXPECT_TX || k == MB_COMPLETE_TX || k == MB_CP_ASYNC_ARRIVE ? 0 : 1;
        int extra = k == MB_ARRIVE_EXPECT_TX || k == MB_TEST_WAIT || k == MB_TRY_WAIT || k == MB_EXPECT_TX ||
                    k == MB_COMPLETE_TX;
        if (in->nopnds < ai + 1 + extra) what = "too few operands";
        else if (in->o[ai].kind != OPK_ADDR) what = "the mbarrier must be an address [..]";
        else if (ai && in->o[0].kind != OPK_REG && in->o[0].kind != OPK_SINK) what = "the destination must be a register";
        if (what) return perr(P, in->line, MH_E_PTX_SYNTAX, "'%.*s': %s", (int)mn->len, mn->s, what);
    }
    if (in->nopnds < need) what = "too few operands";
    else if (!no_type && in->type == PT_NONE) what = "a type is needed (e.g. .u32)";
    else if (op == OP_CVT && in->type2 == PT_NONE) what = "cvt needs a destination and a source type";
    else if (writes && in->o[0].kind != OPK_REG && !(in->o[0].kind == OPK_VEC && (op == OP_LD || op == OP_MOV)))
        what = "the destination must be a register";
    else if ((op == OP_LD || op == OP_ATOM || op == OP_CP_ASYNC) && in->o[1].kind != OPK_ADDR)
        what = "the source must be an address [..]";
    else if ((op == OP_ST || op == OP_RED || op == OP_MBARRIER_INIT || op == OP_CP_ASYNC) && in->o[0].kind != OPK_ADDR)
        what = "the destination must be an address [..]";
    else if (op == OP_CP_ASYNC && (in->o[2].kind != OPK_IMM || (in->o[2].imm != 4 && in->o[2].imm != 8 && in->o[2].imm != 16)))
        what = "the copy size must be 4, 8 or 16";
    else if (op == OP_BRA && in->o[0].kind != OPK_LABEL) what = "the target must be a label";
    else if ((op == OP_LD || op == OP_ST) && in->vec > 1 && in->o[op == OP_LD ? 0 : 1].kind != OPK_VEC)
        what = "a vector access needs a {...} register list";
    else if (in->o[0].kind == OPK_VEC && writes)
        for (int k = 0; k < in->o[0].n; k++)
            if (in->o[0].vec[k] != UINT32_MAX && (in->o[0].vec[k] & PTX_VEC_SREG)) what = "a special register cannot be written";
    if (what) return perr(P, in->line, MH_E_PTX_SYNTAX, "'%.*s': %s", (int)mn->len, mn->s, what);
    return 0;
}

/* A marker comment inside a statement (before its ';') would have the
 * instrumentation's code inserted into the middle of it. */
static int marker_inside(parser *P, size_t first_marker, const ptx_insn *in)
{
    for (size_t k = first_marker; k < P->lx.nmarkers; k++) {
        const char *s = P->lx.markers[k].s;
        if (s > P->m->text + in->text_off && s < P->m->text + in->text_end)
            return perr(P, P->lx.markers[k].line, MH_E_PTX_SYNTAX, "a marker inside the statement that starts on "
                        "line %u (no ';' before it)", in->line);
    }
    return 0;
}

/* Appends an instruction to the function's code (no marker may sit inside it). */
static int push_insn(parser *P, size_t first_marker, const ptx_insn *in)
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
    ptx_insn in;
    memset(&in, 0, sizeof in);
    in.guard = -1;
    in.dst2 = -1;
    in.callee = -1;
    in.line = TOK->line;
    in.text_off = (uint32_t)(TOK->s - P->m->text);
    if (ptx_tok_punct(TOK, '@')) {
        NEXT();
        if (ptx_tok_punct(TOK, '!')) { in.guard_neg = 1; NEXT(); }
        uint32_t r;
        if (TOK->kind != TK_IDENT || lookup_reg(P, TOK->s, TOK->len, &r))
            return perr(P, TOK->line, MH_E_PTX_SYNTAX, "bad guard predicate '%.*s'", (int)TOK->len, TOK->s);
        in.guard = (int32_t)r;
        NEXT();
    }
    if (TOK->kind != TK_IDENT) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected an instruction, found '%.*s'",
                                           (int)TOK->len, TOK->s);
    ptx_tok mn = *TOK;
    if (decode_mnemonic(P, &mn, &in)) return -1;
    NEXT();
    if (in.op == OP_OPAQUE) return skip_opaque(P, &in, &mn) || push_insn(P, first_marker, &in) ? -1 : 0;
    if (in.op == OP_MEMBAR || in.op == OP_PREFETCH) {
        const char *semi = memchr(P->m->text + in.text_off, ';', strlen(P->m->text + in.text_off));
        in.text_end = semi ? (uint32_t)(semi - P->m->text) + 1 : in.text_off;
        ptx_lex_skip_statement(&P->lx); /* ordering and hints: no operands the emulator uses */
    } else if (in.op == OP_CALL) {
        if (parse_call(P, &in, &mn)) return -1;
        if (in.op == OP_OPAQUE) return push_insn(P, first_marker, &in); /* a call kept as text: nothing to validate */
    } else {
        while (!ptx_tok_punct(TOK, ';')) {
            if (in.nopnds == PTX_MAX_OPNDS)
                return perr(P, TOK->line, MH_E_PTX_SYNTAX, "too many operands for '%.*s'", (int)mn.len, mn.s);
            if (parse_operand(P, &in, &in.o[in.nopnds])) return -1;
            in.nopnds++;
            if (in.nopnds == 1 && ptx_tok_punct(TOK, '|')) {
                NEXT();
                uint32_t r;
                if (TOK->kind != TK_IDENT || lookup_reg(P, TOK->s, TOK->len, &r))
                    return perr(P, TOK->line, MH_E_PTX_SYNTAX, "bad second destination '%.*s'", (int)TOK->len, TOK->s);
                in.dst2 = (int32_t)r;
                NEXT();
            }
            if (ptx_tok_punct(TOK, ',')) NEXT();
            else if (!ptx_tok_punct(TOK, ';'))
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

/* parse_block, also giving where its closing '}' is. */
static int parse_block_at(parser *P, const char **close_at)
{
    int rc = parse_block(P);
    *close_at = P->last_close;
    return rc;
}

/* Places the marker comments met before the current token as OP_NOP
 * pseudo-instructions, so labels and control flow see where they are. */
static int place_markers(parser *P)
{
    while (P->next_marker < P->lx.nmarkers && P->lx.markers[P->next_marker].s < TOK->s) {
        const ptx_marker_pos *mp = &P->lx.markers[P->next_marker++];
        if (P->func < 0) continue;
        ptx_insn in;
        memset(&in, 0, sizeof in);
        in.op = OP_NOP;
        in.mods = MOD_MARKER;
        in.guard = in.dst2 = in.callee = -1;
        in.line = mp->line;
        in.text_off = (uint32_t)(mp->s - P->m->text);
        const char *eol = strchr(mp->s, '\n');
        in.text_end = eol ? (uint32_t)(eol - P->m->text) : in.text_off;
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
        if (ptx_tok_punct(TOK, '}')) break;
        if (TOK->kind == TK_EOF) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "unexpected end of file inside a function");
        if (ptx_tok_punct(TOK, '{')) {
            NEXT();
            if (parse_block(P)) return -1;
            continue;
        }
        if (TOK->kind == TK_IDENT && TOK->s[0] == '.') {
            if (ptx_tok_is(TOK, ".reg")) {
                if (parse_reg_decl(P)) return -1;
            } else if (ptx_tok_is(TOK, ".shared") || ptx_tok_is(TOK, ".local") || ptx_tok_is(TOK, ".global") ||
                       ptx_tok_is(TOK, ".const")) {
                if (parse_var(P, 0)) return -1;
            } else if (ptx_tok_is(TOK, ".param")) {
                /* a call sequence's argument or return variable */
                if (parse_var(P, 0)) return -1;
            } else if (ptx_tok_is(TOK, ".loc") || ptx_tok_is(TOK, ".pragma") || ptx_tok_is(TOK, ".maxnreg") ||
                       ptx_tok_is(TOK, ".file")) {
                /* debug info, hints */
                uint32_t line = TOK->line;
                while (TOK->kind != TK_EOF && TOK->line == line && !ptx_tok_punct(TOK, ';')) NEXT();
                if (ptx_tok_punct(TOK, ';')) NEXT();
            } else if (ptx_tok_is(TOK, ".callprototype") || ptx_tok_is(TOK, ".calltargets")) {
                /* "label: .callprototype ...;": what indirect calls (kept as text) may call */
                while (TOK->kind != TK_EOF && !ptx_tok_punct(TOK, ';')) NEXT();
                if (expect_punct(P, ';')) return -1;
            } else {
                return perr(P, TOK->line, MH_E_PTX_UNSUPPORTED, "directive '%.*s' inside a function is not supported",
                            (int)TOK->len, TOK->s);
            }
            continue;
        }
        /* label? */
        if (TOK->kind == TK_IDENT && TOK->s[0] != '%') {
            /* look one token ahead; on the way back restore the position only
             * (the marker list may have grown and moved meanwhile) */
            const char *save_p = P->lx.p;
            uint32_t save_line = P->lx.line;
            size_t save_markers = P->lx.nmarkers;
            ptx_tok name = *TOK;
            NEXT();
            if (ptx_tok_punct(TOK, ':')) {
                NEXT();
                if (grow((void **)&P->labels, &P->cap_labels, P->nlabels + 1, sizeof *P->labels))
                    return perr(P, name.line, MH_E_NO_MEMORY, "out of memory");
                P->labels[P->nlabels].name = name.s;
                P->labels[P->nlabels].len = name.len;
                P->labels[P->nlabels].insn = (uint32_t)P->ncode;
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
    P->ndecls = decls_at_entry; /* registers declared in this scope go out of scope */
    return 0;
}

static int resolve_labels(parser *P, ptx_func *f)
{
    for (size_t i = 0; i < P->nfixups; i++) {
        label_ref *r = &P->fixups[i];
        ptx_insn *in = &P->code[r->insn];
        size_t k = 0;
        for (; k < P->nlabels; k++)
            if (P->labels[k].len == r->len && !memcmp(P->labels[k].name, r->name, r->len)) break;
        if (k == P->nlabels) {
            if (in->op == OP_CALL) continue;
            return perr(P, in->line, MH_E_PTX_SYNTAX, "branch to undefined label '%.*s'", (int)r->len, r->name);
        }
        for (int j = 0; j < in->nopnds; j++)
            if (in->o[j].kind == OPK_LABEL) in->o[j].reg = P->labels[k].insn;
    }
    (void)f;
    return 0;
}

/* nvcc does not mark pointer parameters (.ptr); a .u64/.b64 parameter whose
 * loaded value is converted with cvta or used as an address is one. */
static void infer_pointers(ptx_module *m, ptx_func *f)
{
    for (uint32_t i = 0; i < f->ncode; i++) {
        const ptx_insn *ld = &f->code[i];
        if (ld->op != OP_LD || ld->space != SP_PARAM || ld->o[1].param < 0 || ld->o[0].kind != OPK_REG) continue;
        ptx_param *p = &f->params[ld->o[1].param];
        if (p->is_ptr || ptx_type_bits(p->type) != 64 || ptx_type_is_float(p->type)) continue;
        uint32_t r = ld->o[0].reg;
        for (uint32_t j = i + 1; j < f->ncode && !p->is_ptr; j++) {
            const ptx_insn *u = &f->code[j];
            if (u->op == OP_CVTA && u->o[1].kind == OPK_REG && u->o[1].reg == r) p->is_ptr = 1;
            for (int k = 0; k < u->nopnds; k++)
                if (u->o[k].kind == OPK_ADDR && u->o[k].reg == r && u->space != SP_PARAM) p->is_ptr = 1;
        }
    }
    (void)m;
}

/* [.visible|.extern|.weak] .entry|.func [(rets)] name (params) [perf directives] { body } | ; */
static int parse_function(parser *P, int visible)
{
    ptx_module *m = P->m;
    int is_entry = ptx_tok_is(TOK, ".entry");
    uint32_t line = TOK->line;
    NEXT();
    ptx_func f;
    memset(&f, 0, sizeof f);
    f.is_entry = is_entry;
    f.visible = visible;
    f.line = line;
    f.first_reg = m->nregs;
    ptx_func *nf = realloc(m->funcs, (m->nfuncs + 1) * sizeof *nf);
    if (!nf) return perr(P, line, MH_E_NO_MEMORY, "out of memory");
    m->funcs = nf;
    P->func = (int)m->nfuncs;
    m->nfuncs++;
    ptx_func *F = &m->funcs[P->func];
    *F = f;
    if (!is_entry && ptx_tok_punct(TOK, '(')) {
        if (parse_param_list(P, &F->rets, &F->nrets, &F->ret_bytes)) return -1;
    }
    if (TOK->kind != TK_IDENT) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected a function name");
    F->name = tokdup(TOK);
    NEXT();
    if (ptx_tok_punct(TOK, '(')) {
        if (parse_param_list(P, &F->params, &F->nparams, &F->param_bytes)) return -1;
        F = &m->funcs[P->func];
        /* the token before the current one was ')' */
        const char *q = TOK->s;
        while (q > m->text && *q != ')') q--;
        F->params_close = (uint32_t)(q - m->text);
    }
    F->maxntid[0] = F->maxntid[1] = F->maxntid[2] = 0;
    while (TOK->kind == TK_IDENT && TOK->s[0] == '.') {
        int is_maxntid = ptx_tok_is(TOK, ".maxntid") || ptx_tok_is(TOK, ".reqntid");
        if (ptx_tok_is(TOK, ".reqntid")) F->reqntid = 1;
        NEXT();
        for (int i = 0; TOK->kind == TK_INT; i++) {
            uint64_t v = 0;
            parse_u64(TOK, &v);
            if (is_maxntid && i < 3) F->maxntid[i] = (uint32_t)v;
            NEXT();
            if (ptx_tok_punct(TOK, ',')) NEXT();
        }
    }
    if (ptx_tok_punct(TOK, ';')) { /* a declaration: what follows is module scope again */
        NEXT();
        P->func = -1;
        return 0;
    }
    if (!ptx_tok_punct(TOK, '{')) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected '{' or ';' after a function header");
    F->body_open = (uint32_t)(TOK->s - m->text) + 1;
    NEXT();
    P->ncode = P->nlabels = P->nfixups = 0;
    P->ndecls = 0;
    P->depth = 0;
    const char *close_at = NULL;
    if (parse_block_at(P, &close_at)) return -1;
    F = &m->funcs[P->func];
    F->body_close = (uint32_t)(close_at - m->text);
    if (resolve_labels(P, F)) return -1;
    /* every function ends in a return */
    ptx_insn ret;
    memset(&ret, 0, sizeof ret);
    ret.op = OP_RET;
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
    if (F->is_entry) infer_pointers(m, F);
    P->func = -1;
    return 0;
}

static void place(ptx_var *v, uint64_t *at)
{
    *at = (*at + v->align - 1) / v->align * v->align;
    v->offset = *at;
    *at += v->size;
}

static void layout_vars(ptx_module *m)
{
    /* .local: one layout for the whole module, the module's variables and then
     * each function's after the previous ones, so a kernel and the .funcs it
     * calls never share bytes (calls cannot recurse) and every launch gets
     * room for all of them per thread */
    uint64_t local = 0;
    for (int fi = -1; fi < (int)m->nfuncs; fi++)
        for (uint32_t i = 0; i < m->nvars; i++)
            if (m->vars[i].func == fi && m->vars[i].space == SP_LOCAL && m->vars[i].size) place(&m->vars[i], &local);
    /* module-scope shared/const/global variables first, then each function's */
    for (uint32_t fi = 0; fi < m->nfuncs; fi++) {
        uint64_t shared = 0;
        for (uint32_t i = 0; i < m->nvars; i++) {
            ptx_var *v = &m->vars[i];
            if (v->func != -1 && v->func != (int)fi) continue;
            uint64_t *at = v->space == SP_SHARED ? &shared
                         : v->space == SP_PARAM && v->func == (int)fi ? &m->funcs[fi].callarea_bytes : NULL;
            if (!at || v->size == 0) continue;
            place(v, at);
        }
        /* unsized (dynamic) shared arrays start after the static ones */
        uint64_t dyn = shared;
        for (uint32_t i = 0; i < m->nvars; i++) {
            ptx_var *v = &m->vars[i];
            if ((v->func == -1 || v->func == (int)fi) && v->space == SP_SHARED && v->size == 0) {
                uint64_t a = v->align > 16 ? v->align : 16;
                dyn = (shared + a - 1) / a * a;
                v->offset = dyn;
            }
        }
        m->funcs[fi].shared_bytes = dyn > shared ? dyn : shared;
        m->funcs[fi].local_bytes = local;
    }
    /* global/const variables: offsets in a module data segment */
    uint64_t data = 0;
    for (uint32_t i = 0; i < m->nvars; i++) {
        ptx_var *v = &m->vars[i];
        if (v->space != SP_GLOBAL && v->space != SP_CONST) continue;
        place(v, &data);
    }
}

int ptx_parse(ptx_module *m, const char *text, size_t len, const char *path, mh_error *e)
{
    parser Pv, *P = &Pv;
    memset(m, 0, sizeof *m);
    memset(P, 0, sizeof *P);
    m->path = strdup(path ? path : "<ptx>");
    m->text = malloc(len + 1);
    if (!m->path || !m->text) {
        ptx_free(m);
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
        ptx_free(m);
        return rc;
    }
    m->address_size = 64;
    P->m = m;
    P->e = e;
    P->func = -1;
    mh_error_clear(e);
    ptx_lex_init(&P->lx, m->text, len);
    int rc = 0;
    while (!rc && TOK->kind != TK_EOF) {
        P->next_marker = P->lx.nmarkers; /* markers outside bodies are the instrumenter's to report */
        if (TOK->kind != TK_IDENT) {
            rc = perr(P, TOK->line, MH_E_PTX_SYNTAX, "unexpected '%.*s' at module level", (int)TOK->len, TOK->s);
            break;
        }
        if (ptx_tok_is(TOK, ".version")) {
            NEXT();
            if (TOK->kind == TK_FLOAT || TOK->kind == TK_INT) {
                m->version_major = (uint32_t)atoi(TOK->s);
                const char *d = memchr(TOK->s, '.', TOK->len);
                m->version_minor = d ? (uint32_t)atoi(d + 1) : 0;
                NEXT();
            }
        } else if (ptx_tok_is(TOK, ".target")) {
            NEXT();
            if (TOK->kind == TK_IDENT) snprintf(m->target, sizeof m->target, "%.*s", (int)TOK->len, TOK->s);
            NEXT();
            while (ptx_tok_punct(TOK, ',')) { NEXT(); NEXT(); }
        } else if (ptx_tok_is(TOK, ".address_size")) {
            NEXT();
            uint64_t a = 0;
            parse_u64(TOK, &a);
            m->address_size = (uint32_t)a;
            if (a != 64) rc = perr(P, TOK->line, MH_E_PTX_UNSUPPORTED, ".address_size %llu (only 64 is supported)",
                                   (unsigned long long)a);
            NEXT();
        } else if (ptx_tok_is(TOK, ".file") || ptx_tok_is(TOK, ".loc")) {
            uint32_t line = TOK->line;
            while (TOK->kind != TK_EOF && TOK->line == line) NEXT();
        } else if (ptx_tok_is(TOK, ".section")) {
            NEXT();
            NEXT();
            ptx_lex_skip_statement(&P->lx);
        } else if (ptx_tok_is(TOK, ".alias")) { /* .alias f2, f1; a second name of a function */
            NEXT();
            ptx_lex_skip_statement(&P->lx);
        } else if (ptx_tok_is(TOK, ".visible") || ptx_tok_is(TOK, ".extern") || ptx_tok_is(TOK, ".weak") ||
                   ptx_tok_is(TOK, ".common")) { /* linkage: .common is a .weak that may differ in size */
            int vis = ptx_tok_is(TOK, ".visible"), ext = ptx_tok_is(TOK, ".extern");
            NEXT();
            if (ptx_tok_is(TOK, ".entry") || ptx_tok_is(TOK, ".func")) rc = parse_function(P, vis);
            else if (TOK->kind == TK_IDENT && space_of(TOK->s + 1, TOK->len - 1) >= 0) rc = parse_var(P, ext);
            else rc = perr(P, TOK->line, MH_E_PTX_SYNTAX, "unexpected '%.*s'", (int)TOK->len, TOK->s);
        } else if (ptx_tok_is(TOK, ".entry") || ptx_tok_is(TOK, ".func")) {
            rc = parse_function(P, 0);
        } else if (ptx_tok_is(TOK, ".global") || ptx_tok_is(TOK, ".const") || ptx_tok_is(TOK, ".shared")) {
            rc = parse_var(P, 0);
        } else {
            rc = perr(P, TOK->line, MH_E_PTX_UNSUPPORTED, "module directive '%.*s' is not supported", (int)TOK->len, TOK->s);
        }
    }
    for (size_t i = 0; !rc && i < P->ncalls; i++) {
        label_ref *r = &P->calls[i];
        ptx_insn *in = &m->funcs[r->insn >> 20].code[r->insn & 0xfffff];
        for (uint32_t k = 0; k < m->nfuncs; k++)
            if (strlen(m->funcs[k].name) == r->len && !memcmp(m->funcs[k].name, r->name, r->len)) {
                /* prefer the definition over a prototype */
                if (in->callee < 0 || m->funcs[k].defined) in->callee = (int32_t)k;
            }
        if (in->callee < 0) rc = perr(P, in->line, MH_E_PTX_SYNTAX, "call to undeclared function '%.*s'", (int)r->len, r->name);
    }
    if (!rc) layout_vars(m);
    free(P->decls);
    free(P->code);
    free(P->labels);
    free(P->fixups);
    free(P->calls);
    ptx_lex_free(&P->lx);
    if (rc) {
        ptx_free(m);
        return (int)e->code;
    }
    return 0;
}

void ptx_free(ptx_module *m)
{
    for (uint32_t i = 0; i < m->nfuncs; i++) {
        ptx_func *f = &m->funcs[i];
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
    free(m->path);
    free(m->text);
    memset(m, 0, sizeof *m);
}

const ptx_func *ptx_find(const ptx_module *m, const char *name)
{
    for (uint32_t i = 0; i < m->nfuncs; i++)
        if (m->funcs[i].name && !strcmp(m->funcs[i].name, name) && m->funcs[i].defined) return &m->funcs[i];
    return NULL;
}
