/* ptx_parse.c - the PTX parser's entry (see ptx.h): module directives, entries and .funcs with
 * their parameters, call targets, and the token helpers the other parts use (ptx_parser.h):
 * declarations in ptx_decl.c, instructions in ptx_insn.c, the module's tables in ptx_tables.c. */
#include "frontend/ptx_parser.h"
#include "base/demangle.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------ */

int perr(parser *P, uint32_t line, mh_code code, const char *fmt, ...)
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

int grow(void **v, size_t *cap, size_t need, size_t elem)
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

char *tokdup(const mh_ptx_tok *t)
{
    char *s = malloc(t->len + 1);
    if (s) {
        memcpy(s, t->s, t->len);
        s[t->len] = 0;
    }
    return s;
}

int expect_punct(parser *P, char c)
{
    if (!mh_ptx_tok_punct(TOK, c))
        return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected '%c', found '%.*s'", c, (int)TOK->len, TOK->s);
    NEXT();
    return 0;
}

int parse_u64(const mh_ptx_tok *t, uint64_t *out)
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
double parse_float(const mh_ptx_tok *t)
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


/* .loc FILE LINE COLUMN [, function_name LABEL [+ N]] [, inlined_at FILE LINE COLUMN]
 * (the current token is .loc).  No ';' ends it (ptxas refuses one), and it may span
 * lines: the grammar, not the line, says where it ends. */
int skip_loc(parser *P)
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
    int32_t var = index_get(&P->vars, TOK->s, TOK->len, -1);
    if (var >= 0) /* (ptxas: "Duplicate definition of function") */
        return perr(P, TOK->line, MH_E_PTX_SYNTAX, "function '%.*s' is defined twice in one scope (first at line %u, as a "
                    "variable)", (int)(TOK->len < 64 ? TOK->len : 64), TOK->s, m->vars[var].line);
    F->name = tokdup(TOK);
    F->short_name = F->name ? mh_short_name(F->name) : NULL;
    int32_t *first = F->name && F->short_name ? index_put(&P->funcs, F->name, strlen(F->name), 0) : NULL;
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
        int is_cluster = mh_ptx_tok_is(TOK, ".reqnctapercluster"), is_rank = mh_ptx_tok_is(TOK, ".maxclusterrank");
        if (mh_ptx_tok_is(TOK, ".reqntid")) F->reqntid = 1;
        if (mh_ptx_tok_is(TOK, ".explicitcluster")) F->explicitcluster = 1;
        if (is_cluster) F->reqcluster[0] = F->reqcluster[1] = F->reqcluster[2] = 1;
        NEXT();
        for (int i = 0; TOK->kind == MH_TK_INT; i++) {
            uint64_t v = 0;
            parse_u64(TOK, &v);
            if (is_maxntid && i < 3) F->maxntid[i] = (uint32_t)v;
            if (is_cluster && i < 3) F->reqcluster[i] = v > 0xffff ? 0xffff : (uint32_t)v;
            if (is_rank && i == 0) F->maxclusterrank = v > 0xffff ? 0xffff : (uint32_t)v;
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
    P->block_base += (int32_t)P->nblocks; /* the previous function's blocks: their scopes stay apart */
    P->nblocks = 0;
    P->block = -1;
    decls_truncate(P, 0);
    P->decls_from = 0;
    index_free(&P->labels_ix);
    if (index_params(P)) return perr(P, line, MH_E_NO_MEMORY, "out of memory");
    P->depth = 0;
    const char *close_at = NULL;
    if (parse_block_at(P, &close_at)) return -1;
    F = &m->funcs[P->func];
    F->body_close = (uint32_t)(close_at - m->text);
    if (resolve_labels(P, F)) return -1;
    F->blocks = malloc(P->nblocks * sizeof *F->blocks);
    if (!F->blocks) return perr(P, line, MH_E_NO_MEMORY, "out of memory");
    memcpy(F->blocks, P->blocks, P->nblocks * sizeof *F->blocks);
    F->nblocks = (uint32_t)P->nblocks;
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
    if (*defined >= 0 && (F->is_entry || m->funcs[*defined].is_entry)) /* ptxas: a duplicate definition */
        return perr(P, F->line, MH_E_PTX_SYNTAX, "%s '%s' is defined twice (first at line %u)",
                    F->is_entry ? "kernel" : "function", F->name, m->funcs[*defined].line);
    *defined = P->func; /* the last definition of a .func name is the one calls reach */
    P->func = -1;
    return 0;
}

int skip_statement(parser *P, const char *what)
{
    uint32_t line = TOK->line;
    int r = mh_ptx_lex_skip_statement(&P->lx);
    if (r == -1) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "braces nested deeper than %d", MH_PTX_MAX_NESTING);
    if (r == -2)
        return perr(P, line, MH_E_PTX_SYNTAX, "the module ends inside this %s (a '{' never closed, or no ';'): "
                    "is it cut short?", what);
    if (r == -3) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "a string in this %s is not closed on its line", what);
    return 0;
}

/* A .target name ptxas knows: an architecture (sm_90, sm_90a, sm_100f, compute_90) or an option. */
static int known_target(const mh_ptx_tok *t)
{
    static const char *const options[] = {"texmode_unified", "texmode_independent", "debug", "map_f64_to_f32"};
    if (t->kind != MH_TK_IDENT) return 0;
    for (size_t i = 0; i < sizeof options / sizeof *options; i++)
        if (t->len == strlen(options[i]) && !memcmp(t->s, options[i], t->len)) return 1;
    size_t k = t->len > 3 && !memcmp(t->s, "sm_", 3) ? 3 : t->len > 8 && !memcmp(t->s, "compute_", 8) ? 8 : 0, d = k;
    if (!k) return 0;
    while (d < t->len && isdigit((unsigned char)t->s[d])) d++;
    return d > k && (d == t->len || (d + 1 == t->len && (t->s[d] == 'a' || t->s[d] == 'f')));
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
    P->block = -1;
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
            for (int first = 1; !rc; first = 0) { /* .target sm_90a[, texmode_unified, debug, ...] */
                if (!known_target(TOK)) {
                    rc = perr(P, TOK->line, MH_E_PTX_SYNTAX, "unknown .target '%.*s' (sm_NN[a|f], compute_NN, or "
                              "the options texmode_unified, texmode_independent, debug, map_f64_to_f32)",
                              (int)(TOK->len < 60 ? TOK->len : 60), TOK->s);
                    break;
                }
                if (first) snprintf(m->target, sizeof m->target, "%.*s", (int)TOK->len, TOK->s);
                NEXT();
                if (!mh_ptx_tok_punct(TOK, ',')) break;
                NEXT();
            }
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
            rc = skip_statement(P, ".section");
        } else if (mh_ptx_tok_is(TOK, ".alias")) { /* .alias f2, f1; a second name of a function */
            NEXT();
            rc = skip_statement(P, ".alias");
        } else if (mh_ptx_tok_is(TOK, ".visible") || mh_ptx_tok_is(TOK, ".extern") || mh_ptx_tok_is(TOK, ".weak") ||
                   mh_ptx_tok_is(TOK, ".common")) { /* linkage: .common is a .weak that may differ in size */
            int vis = mh_ptx_tok_is(TOK, ".visible"), ext = mh_ptx_tok_is(TOK, ".extern");
            NEXT();
            if (mh_ptx_tok_is(TOK, ".entry") || mh_ptx_tok_is(TOK, ".func")) rc = parse_function(P, vis);
            else if (TOK->kind == MH_TK_IDENT && space_of(TOK->s + 1, TOK->len - 1) >= 0) rc = parse_var(P, ext ? PTX_LINK_EXTERN : PTX_LINK_VISIBLE);
            else rc = perr(P, TOK->line, MH_E_PTX_SYNTAX, "unexpected '%.*s'", (int)TOK->len, TOK->s);
        } else if (mh_ptx_tok_is(TOK, ".entry") || mh_ptx_tok_is(TOK, ".func")) {
            rc = parse_function(P, 0);
        } else if (mh_ptx_tok_is(TOK, ".global") || mh_ptx_tok_is(TOK, ".const") || mh_ptx_tok_is(TOK, ".shared")) {
            rc = parse_var(P, PTX_LINK_STATIC);
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
    if (!rc && P->lx.open_comment_line)
        rc = perr(P, P->lx.open_comment_line, MH_E_PTX_SYNTAX, "a /* comment opened here is never closed (the module "
                  "ends inside it)");
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
    free(P->blocks);
    mh_ptx_lex_free(&P->lx);
    if (rc) {
        mh_ptx_free(m);
        return (int)e->code;
    }
    return 0;
}

