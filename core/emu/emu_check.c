/* emu_check.c - what emu can run: a kernel and the functions it calls are
 * checked before a launch (and a module when it loads), naming the file,
 * line and instruction of what emu does not execute (instructions the front
 * end kept as text, calls without a body, recursion, special registers of
 * clusters, half-precision forms ...). */
#include "emu/emu_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

/* 1 when function f reaches itself through calls (recursion needs register
 * frames, which emu does not have). */
static int recursive(const mh_ptx_module *m, uint32_t f, uint32_t at, int depth)
{
    if (depth > (int)m->nfuncs) return 1;
    const mh_ptx_func *F = &m->funcs[at];
    for (uint32_t i = 0; i < F->ncode; i++) {
        const mh_ptx_insn *in = &F->code[i];
        if (in->op != MH_OP_CALL) continue;
        if ((uint32_t)in->callee == f || recursive(m, f, (uint32_t)in->callee, depth + 1)) return 1;
    }
    return 0;
}

static int c_var_func(const mh_ptx_module *m, int32_t v) { return m->vars[v].func; }

/* Whether function fi's code is something emu can run (calls are checked
 * here; the functions they reach by the caller). */
static int check_function(const mh_ptx_module *m, uint32_t fi, mh_error *e)
{
    const mh_ptx_func *f = &m->funcs[fi];
    for (uint32_t i = 0; i < f->ncode; i++) {
        const mh_ptx_insn *in = &f->code[i];
        char why[300] = "";
        if (in->op == MH_OP_MATCH && in->type != MH_PT_B32 && in->type != MH_PT_B64) {
            snprintf(why, sizeof why, "match.sync on .%s: only .b32 and .b64", mh_ptx_type_name((mh_ptx_type)in->type));
        } else if (in->op == MH_OP_REDUX && in->type != MH_PT_U32 && in->type != MH_PT_S32 && in->type != MH_PT_B32) {
            snprintf(why, sizeof why, "redux.sync on .%s is not supported by emu (u32, s32, b32)",
                     mh_ptx_type_name((mh_ptx_type)in->type));
        } else if (in->op == MH_OP_OPAQUE && (in->mods & MH_MOD_OPAQUE_CALL)) {
            if (in->callee >= 0)
                snprintf(why, sizeof why, "call to %s with more than %d parameters and returns: not supported by emu "
                         "(the cuda backend runs it)", m->funcs[in->callee].name, MH_PTX_MAX_OPNDS);
            else
                snprintf(why, sizeof why, "call through a function pointer: not supported by emu (the cuda backend "
                         "runs it)");
        } else if (in->op == MH_OP_OPAQUE) {
            const char *t = m->text + in->text_off, *s = t;
            if (*s == '@') /* past the guard */
                while (*s && !isspace((unsigned char)*s)) s++;
            while (*s == ' ' || *s == '\t') s++;
            size_t n = strcspn(s, " \t\n;");
            snprintf(why, sizeof why, "instruction '%.*s' is not supported by emu (the cuda backend runs it)",
                     (int)(n < 120 ? n : 120), s);
        } else if (in->op == MH_OP_CALL) {
            const mh_ptx_func *g = &m->funcs[in->callee];
            int args = in->nopnds - in->cmp;
            int known = !g->defined && ((!strcmp(g->name, "vprintf") && args == 2 && in->cmp <= 1) ||
                                        (!strcmp(g->name, "__assertfail") && args == 5 && in->cmp == 0));
            if (known) {
                for (int k = 0; k < in->nopnds; k++)
                    if (in->o[k].kind != MH_OPK_SYM || in->o[k].sym < 0 || c_var_func(m, in->o[k].sym) < 0)
                        snprintf(why, sizeof why, "call to %s with an argument that is not a .param variable", g->name);
            } else if (!g->defined)
                snprintf(why, sizeof why, "call to %s, which has no body in this module (of the extern functions emu "
                         "runs vprintf and __assertfail: printf and assert)", g->name);
            else if ((uint32_t)(in->nopnds - in->cmp) != g->nparams || (uint32_t)in->cmp > g->nrets)
                snprintf(why, sizeof why, "call to %s passes %d arguments and %d returns; it declares %u and %u",
                         g->name, in->nopnds - in->cmp, in->cmp, g->nparams, g->nrets);
            else if (recursive(m, (uint32_t)in->callee, (uint32_t)in->callee, 0))
                snprintf(why, sizeof why, "%s is recursive: recursion is not supported by emu", g->name);
        } else if (in->rnd >= MH_RND_RZ && in->rnd <= MH_RND_RP &&
                   (in->type == MH_PT_F16 || in->type == MH_PT_BF16 || in->type == MH_PT_F16X2 || in->type == MH_PT_BF16X2) &&
                   !(in->op == MH_OP_CVT && (in->type == MH_PT_F16 || in->type == MH_PT_BF16) && !(in->mods & MH_MOD_SAT))) {
            snprintf(why, sizeof why, "rounding modifier .%s on a half-precision result is not supported by emu "
                     "(only .rn, except cvt to f16/bf16; .rz/.rm/.rp are computed for f32 and f64)",
                     in->rnd == MH_RND_RZ ? "rz" : in->rnd == MH_RND_RM ? "rm" : "rp");
        } else if ((in->type == MH_PT_F16X2 || in->type == MH_PT_BF16X2) &&
                   !(in->op == MH_OP_MOV || in->op == MH_OP_LD || in->op == MH_OP_ST || in->op == MH_OP_CVT || in->op == MH_OP_ADD ||
                     in->op == MH_OP_SUB || in->op == MH_OP_MUL || in->op == MH_OP_FMA || in->op == MH_OP_MIN ||
                     in->op == MH_OP_MAX || in->op == MH_OP_NEG || in->op == MH_OP_ABS || in->op == MH_OP_EX2 ||
                     in->op == MH_OP_TANH || in->op == MH_OP_SETP || in->op == MH_OP_SET)) {
            snprintf(why, sizeof why, "%s on packed f16x2/bf16x2 is not supported by emu yet",
                     mh_ptx_op_name((mh_ptx_op)in->op));
        }
        for (int k = 0; !why[0] && in->op != MH_OP_OPAQUE && k < in->nopnds; k++) {
            /* special registers of clusters, reserved shared memory, the driver: not on emu */
            const mh_ptx_opnd *o = &in->o[k];
            int sr = o->kind == MH_OPK_SREG ? (int)o->reg : -1;
            for (int j = 0; o->kind == MH_OPK_VEC && j < 4; j++)
                if (o->vec[j] != UINT32_MAX && (o->vec[j] & MH_PTX_VEC_SREG)) sr = (int)(o->vec[j] & ~MH_PTX_VEC_SREG);
            if (o->kind == MH_OPK_PARAM_ADDR && !f->is_entry) {
                snprintf(why, sizeof why, "takes the address of parameter %s of a .func: not supported by emu (a "
                         "kernel's parameters' addresses are)", f->params[o->param].name);
            } else if (o->kind == MH_OPK_FUNC) {
                snprintf(why, sizeof why, "takes the address of function %s: function pointers are not supported by "
                         "emu (the cuda backend runs them)", m->funcs[o->reg].name);
            } else if (sr >= MH_SR_NOT_ON_EMU_ && sr != MH_SR_ENVREG0 + 1 && sr != MH_SR_ENVREG0 + 2) {
                char name[32];
                snprintf(why, sizeof why, "special register %s is not available on emu (the cuda backend runs it)",
                         mh_ptx_sreg_name(sr, name, sizeof name));
            }
        }
        if (why[0]) {
            e->line = in->line;
            if (in->op == MH_OP_OPAQUE) return mh_fail(e, MH_E_PTX_UNSUPPORTED, "%.200s:%u: %s", m->path, in->line, why);
            return mh_fail(e, MH_E_PTX_UNSUPPORTED, "%.200s:%u: %s: %s", m->path, in->line,
                           mh_ptx_op_name((mh_ptx_op)in->op), why);
        }
    }
    return 0;
}

int mh_emu_check_module(const mh_ptx_module *m, mh_error *e)
{
    for (uint32_t fi = 0; fi < m->nfuncs; fi++)
        if (check_function(m, fi, e)) return (int)e->code;
    return 0;
}

int mh_emu_check_kernel(const mh_ptx_module *m, const mh_ptx_func *f, mh_error *e)
{
    for (uint32_t i = 0; i < m->nvars; i++)
        if (m->vars[i].address_init_line) {
            e->line = m->vars[i].address_init_line;
            return mh_fail(e, MH_E_PTX_UNSUPPORTED, "%.200s:%u: %s is initialised with an address (generic(...)): not "
                           "supported by emu (the cuda backend's driver fills it in)", m->path,
                           m->vars[i].address_init_line, m->vars[i].name);
        }
    /* the kernel and every function it reaches through calls */
    unsigned char *seen = calloc(m->nfuncs, 1);
    uint32_t *todo = malloc(m->nfuncs * sizeof *todo), n = 0;
    int rc = 0;
    if (!seen || !todo) rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    else {
        todo[n++] = (uint32_t)(f - m->funcs);
        seen[todo[0]] = 1;
    }
    while (!rc && n) {
        uint32_t fi = todo[--n];
        rc = check_function(m, fi, e);
        for (uint32_t i = 0; !rc && i < m->funcs[fi].ncode; i++) {
            const mh_ptx_insn *in = &m->funcs[fi].code[i];
            if (in->op == MH_OP_CALL && in->callee >= 0 && !seen[in->callee]) {
                seen[in->callee] = 1;
                todo[n++] = (uint32_t)in->callee;
            }
        }
    }
    free(seen);
    free(todo);
    return rc;
}

