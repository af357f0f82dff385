/* ptx_smem.c - each function's static shared memory, laid out as ptxas lays it out: a kernel holds
 * the shared variables declared in the functions it reaches (itself and what it calls; every
 * function when a call goes through a pointer) and the module-scope ones those functions name, in
 * text order.  A module-scope variable that no reached function names takes no room in it (ptxas -v
 * counts the same: tests/c/test_ptx_smem.c), so one kernel's large static array does not count
 * against the module's other kernels.  Unsized .extern .shared arrays (dynamic shared memory) start
 * after a kernel's statics, at its dyn_offset. */
#include "frontend/ptx_mma.h"
#include "frontend/ptx_parser.h"
#include "frontend/ptx_tma.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* The shared variables one function names or declares (each once). */
typedef struct {
    uint32_t *v;
    size_t n, cap;
} var_list;

static int note(const mh_ptx_module *m, uint32_t *stamp, uint32_t mark, var_list *l, int32_t sym)
{
    if (sym < 0 || (uint32_t)sym >= m->nvars || m->vars[sym].space != MH_SP_SHARED || stamp[sym] == mark) return 0;
    stamp[sym] = mark;
    if (grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v)) return -1;
    l->v[l->n++] = (uint32_t)sym;
    return 0;
}

static int note_opnd(const mh_ptx_module *m, uint32_t *stamp, uint32_t mark, var_list *l, const mh_ptx_opnd *o)
{
    return (o->kind == MH_OPK_SYM || o->kind == MH_OPK_ADDR) ? note(m, stamp, mark, l, o->sym) : 0;
}

/* Whether `name` appears as a whole word in text[a, b) (an instruction kept as text). */
static int names(const char *text, uint32_t a, uint32_t b, const char *name)
{
    size_t n = strlen(name);
    for (const char *s = text + a, *end = text + b; s + n <= end; s++) {
        if (memcmp(s, name, n)) continue;
        int before = s > text + a && (isalnum((unsigned char)s[-1]) || s[-1] == '_' || s[-1] == '$');
        int after = s + n < end && (isalnum((unsigned char)s[n]) || s[n] == '_' || s[n] == '$');
        if (!before && !after) return 1;
    }
    return 0;
}

/* The module-scope shared variables function fi's code names (in operands, tensor-core and bulk-copy
 * records, and the text of instructions not decoded), added to its list.  shv: the module's shared
 * variables (nsh of them, in text order). */
static int direct_refs(const mh_ptx_module *m, uint32_t fi, const uint32_t *shv, uint32_t nsh, uint32_t *stamp, var_list *l)
{
    uint32_t mark = fi + 1;
    const mh_ptx_func *F = &m->funcs[fi];
    for (uint32_t i = 0; i < F->ncode; i++) {
        const mh_ptx_insn *in = &F->code[i];
        for (int k = 0; k < in->nopnds && k < MH_PTX_MAX_OPNDS; k++)
            if (note_opnd(m, stamp, mark, l, &in->o[k])) return -1;
        if (in->op == MH_OP_MMA && in->callee >= 0 && (uint32_t)in->callee < m->nmma) {
            const mh_ptx_mma *r = &m->mma[in->callee];
            if (note_opnd(m, stamp, mark, l, &r->addr) || note_opnd(m, stamp, mark, l, &r->desc_a) ||
                note_opnd(m, stamp, mark, l, &r->desc_b))
                return -1;
        } else if (in->op == MH_OP_TMA && in->callee >= 0 && (uint32_t)in->callee < m->ntma) {
            const mh_ptx_tma *r = &m->tma[in->callee];
            if (note_opnd(m, stamp, mark, l, &r->dst) || note_opnd(m, stamp, mark, l, &r->src) ||
                note_opnd(m, stamp, mark, l, &r->mbar))
                return -1;
        } else if (in->op == MH_OP_OPAQUE && in->text_end > in->text_off) {
            for (uint32_t k = 0; k < nsh; k++) {
                uint32_t v = shv[k];
                if (m->vars[v].func < 0 && stamp[v] != mark && names(m->text, in->text_off, in->text_end, m->vars[v].name) &&
                    note(m, stamp, mark, l, (int32_t)v))
                    return -1;
            }
        }
    }
    return 0;
}

/* The functions fi reaches through calls, itself included, into list (n of them); all of them when
 * a call goes through a pointer.  seen is all zeros before and after. */
static uint32_t reach(const mh_ptx_module *m, uint32_t fi, unsigned char *seen, uint32_t *todo, uint32_t *list)
{
    uint32_t n = 0, nl = 0;
    int any = 0;
    seen[fi] = 1;
    todo[n++] = list[nl++] = fi;
    while (n && !any) {
        const mh_ptx_func *F = &m->funcs[todo[--n]];
        for (uint32_t i = 0; i < F->ncode && !any; i++) {
            const mh_ptx_insn *in = &F->code[i];
            if (in->op != MH_OP_CALL && !(in->op == MH_OP_OPAQUE && (in->mods & MH_MOD_OPAQUE_CALL))) continue;
            if (in->callee < 0) any = 1;
            else if (!seen[in->callee]) {
                seen[in->callee] = 1;
                todo[n++] = list[nl++] = (uint32_t)in->callee;
            }
        }
    }
    for (uint32_t j = 0; j < nl; j++) seen[list[j]] = 0;
    if (any)
        for (nl = 0; nl < m->nfuncs; nl++) list[nl] = nl;
    return nl;
}

static void place(mh_ptx_var *v, uint64_t *at)
{
    *at = (*at + v->align - 1) / v->align * v->align;
    v->offset = *at;
    *at += v->size;
}

int layout_shared(mh_ptx_module *m)
{
    uint32_t nf = m->nfuncs, nv = m->nvars, nslots = 0, nsh = 0;
    var_list *refs = calloc(nf ? nf : 1, sizeof *refs);
    uint32_t *stamp = calloc(nv ? nv : 1, sizeof *stamp), *todo = malloc((nf ? nf : 1) * sizeof *todo);
    uint32_t *list = malloc((nf ? nf : 1) * sizeof *list), *shv = malloc((nv ? nv : 1) * sizeof *shv);
    unsigned char *seen = calloc(nf ? nf : 1, 1);
    int rc = !refs || !stamp || !todo || !list || !shv || !seen ? -1 : 0;
    for (uint32_t i = 0; !rc && i < nv; i++) {
        mh_ptx_var *v = &m->vars[i];
        if (v->space != MH_SP_SHARED) continue;
        shv[nsh++] = i;
        if (v->size) v->shared_slot = (int32_t)nslots++;
        /* a function's own shared variables are its, named or not (ptxas counts them) */
        if (v->func >= 0 && (uint32_t)v->func < nf) rc = note(m, stamp, (uint32_t)v->func + 1, &refs[v->func], (int32_t)i);
    }
    for (uint32_t fi = 0; !rc && fi < nf; fi++) rc = direct_refs(m, fi, shv, nsh, stamp, &refs[fi]);
    if (!rc) memset(stamp, 0, (nv ? nv : 1) * sizeof *stamp);
    for (uint32_t fi = 0; !rc && fi < nf; fi++) {
        mh_ptx_func *F = &m->funcs[fi];
        uint32_t nl = reach(m, fi, seen, todo, list), mark = fi + 1;
        for (uint32_t j = 0; j < nl; j++) {
            const var_list *r = &refs[list[j]];
            for (size_t k = 0; k < r->n; k++) stamp[r->v[k]] = mark;
        }
        if (F->is_entry && nslots && !(F->shared_offsets = malloc(nslots * sizeof *F->shared_offsets))) {
            rc = -1;
            break;
        }
        for (uint32_t s = 0; F->shared_offsets && s < nslots; s++) F->shared_offsets[s] = UINT64_MAX;
        /* the statics in text order; then the dynamic arrays, all at one offset aligned to the
         * largest alignment of them (16 at least) */
        uint64_t shared = 0, a = 16;
        for (uint32_t k = 0; k < nsh; k++) {
            mh_ptx_var *v = &m->vars[shv[k]];
            if (stamp[shv[k]] != mark) continue;
            if (!v->size) {
                if (v->align > a) a = v->align;
                continue;
            }
            place(v, &shared); /* v->offset: the last function's; a kernel's own are in shared_offsets */
            if (F->shared_offsets) F->shared_offsets[v->shared_slot] = v->offset;
        }
        uint64_t dyn = (shared + a - 1) / a * a;
        for (uint32_t k = 0; k < nsh; k++)
            if (!m->vars[shv[k]].size && stamp[shv[k]] == mark) m->vars[shv[k]].offset = dyn;
        F->dyn_offset = dyn;
        F->shared_bytes = dyn > shared ? dyn : shared;
    }
    for (uint32_t fi = 0; refs && fi < nf; fi++) free(refs[fi].v);
    free(refs);
    free(stamp);
    free(todo);
    free(list);
    free(shv);
    free(seen);
    return rc;
}
