/* ptx_decl.c - declarations: .reg (ranges and inline-asm scopes), variables with their
 * initialisers and alignment, parameters and parameter lists. */
#include "frontend/ptx_parser.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- declarations ------------------------------------------------------- */

/* .reg .TYPE name, name<N>, ...;  .reg .v2/.v4 .TYPE v: a vector register, one register per element
 * (v.x, v.y, ...; cutlass's top-K epilogue declares `.reg .v2 .f32 mx` in inline asm). */
int parse_reg_decl(parser *P)
{
    NEXT(); /* .reg */
    mh_ptx_type t = MH_PT_NONE;
    uint32_t width = 0;
    while (TOK->kind == MH_TK_IDENT && TOK->s[0] == '.') {
        mh_ptx_type tt = type_of(TOK->s + 1, TOK->len - 1);
        if (tt != MH_PT_NONE) t = tt;
        else if (mh_ptx_tok_is(TOK, ".v2")) width = 2;
        else if (mh_ptx_tok_is(TOK, ".v4")) width = 4;
        else
            return perr(P, TOK->line, MH_E_PTX_SYNTAX, "unknown register type '%.*s'", (int)TOK->len, TOK->s);
        NEXT();
    }
    if (t == MH_PT_NONE) return perr(P, TOK->line, MH_E_PTX_SYNTAX, ".reg without a type");
    if (width && t == MH_PT_PRED) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "a vector of predicates (.reg .v%u .pred)", width);
    for (;;) {
        if (TOK->kind != MH_TK_IDENT) return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected a register name");
        const char *name = TOK->s;
        size_t len = TOK->len;
        uint32_t line = TOK->line;
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
            if (width) return perr(P, line, MH_E_PTX_SYNTAX, "a range of vector registers (%.*s<%u>) is not supported", (int)len, name, count);
        }
        if (grow((void **)&P->decls, &P->cap_decls, P->ndecls + 1, sizeof *P->decls))
            return perr(P, TOK->line, MH_E_NO_MEMORY, "out of memory");
        if (check_new_name(P, name, len, "register", line, count)) return -1; /* (ptxas: "Duplicate definition") */
        int32_t hidden = index_get(&P->regs, name, len, count ? 1 : 0);
        reg_decl *d = &P->decls[P->ndecls++];
        d->name = name;
        d->len = len;
        d->count = count;
        d->depth = P->depth;
        d->prev = hidden;
        d->line = line;
        d->base = 0;
        d->width = width;
        uint32_t first = 0;
        if (width) { /* one register per element, named v.x .. v.w */
            char buf[96];
            for (uint32_t i = 0; i < width; i++) {
                int k = snprintf(buf, sizeof buf, "%.*s.%c", (int)(len < 80 ? len : 80), name, "xyzw"[i]);
                uint32_t r;
                if (new_reg(P, buf, (size_t)k, t, &r)) return -1;
                if (i == 0) first = r;
            }
        } else if (count == 0) {
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
            else /* ptxas: "Initial value type mismatch" (and a double past int64 has no integer) */
                return perr(P, TOK->line, MH_E_PTX_SYNTAX, "a floating-point initialiser for the integer variable %s",
                            v->name);
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
int parse_var(parser *P, int linkage)
{
    mh_ptx_var v;
    memset(&v, 0, sizeof v);
    v.func = P->func;
    v.is_extern = linkage == PTX_LINK_EXTERN;
    v.line = TOK->line;
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
        if (mh_ptx_tok_is(TOK, ".attribute")) { /* .attribute(.managed): memory the host shares (emu: any global) */
            NEXT();
            if (expect_punct(P, '(')) return -1;
            if (!mh_ptx_tok_is(TOK, ".managed"))
                return perr(P, TOK->line, MH_E_PTX_UNSUPPORTED, "variable attribute '%.*s' is not supported "
                            "(.managed is)", (int)TOK->len, TOK->s);
            NEXT();
            if (expect_punct(P, ')')) return -1;
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
    const mh_ptx_tok name_tok = *TOK;
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
    /* local to its block (a function's) or the module's; two of a name in one scope are refused as
     * ptxas refuses them, but for .extern declarations of a module variable */
    int32_t scope = P->func >= 0 ? P->block_base + P->block : -1, old = index_get(&P->vars, name_tok.s, name_tok.len, scope);
    if (old >= 0 && P->func < 0 && P->m->vars[old].is_extern && linkage == PTX_LINK_STATIC) { /* as ptxas */
        free(v.name);
        free(v.init);
        return perr(P, v.line, MH_E_PTX_SYNTAX, "'%.*s' was declared .extern (line %u): its definition must be .visible "
                    "(or .weak), not static", (int)(name_tok.len < 64 ? name_tok.len : 64), name_tok.s, P->m->vars[old].line);
    }
    if (!(old >= 0 && P->func < 0 && (v.is_extern || P->m->vars[old].is_extern)) &&
        check_new_name(P, name_tok.s, name_tok.len, "variable", v.line, 0)) {
        free(v.name);
        free(v.init);
        return -1;
    }
    int32_t *slot = v.name ? index_put(&P->vars, v.name, strlen(v.name), scope) : NULL;
    if (!slot) {
        free(v.name);
        free(v.init);
        return perr(P, line, MH_E_NO_MEMORY, "out of memory");
    }
    *slot = (int32_t)P->m->nvars; /* (of a module variable declared .extern and defined: the latest) */
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

int parse_param_list(parser *P, mh_ptx_param **out, uint32_t *n, uint32_t *bytes)
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

