/* ptx_insn.c - instructions and operands: every instruction decoded into an mh_ptx_insn (its
 * mnemonic, modifiers, operands, calls), markers placed in the code, blocks of a function's body,
 * labels resolved, and the pointer parameters nvcc does not mark. */
#include "frontend/ptx_parser.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- instructions --------------------------------------------------------- */

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

/* One operand.  1: a vector the operand form cannot hold (more than 4 elements, a
 * constant other than 0 among them): the instruction is to be kept as text. */
int parse_operand(parser *P, mh_ptx_insn *in, mh_ptx_opnd *o)
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
        o->imm = (int64_t)(neg ? 0 - v : v); /* modulo 2^64, as ptxas takes -9223372036854775808 */
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
    uint32_t r, width;
    int v;
    if ((width = lookup_vec_reg(P, TOK->s, TOK->len, &r)) != 0) { /* a vector register: its elements */
        o->kind = MH_OPK_VEC;
        for (uint32_t i = 0; i < width; i++) o->vec[o->n++] = r + i;
        NEXT();
        return 0;
    }
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
        P->fixups[P->nfixups].block = P->block;
        P->fixups[P->nfixups].line = TOK->line;
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

/* The architecture number of the module's .target (sm_90a: 90), 0 when it names none. */
static int target_sm(const parser *P)
{
    const char *t = P->m->target;
    const char *u = strchr(t, '_');
    return u && (u[1] >= '0' && u[1] <= '9') ? atoi(u + 1) : 0;
}

/* cvt.rna{.satfinite}.tf32.f32 (sm_80), cvt.{rn,rz}{.relu}.tf32.f32 (sm_90) and with .satfinite
 * (sm_100), refused as ptxas refuses the rest; .rna, .satfinite or .relu on another cvt: kept as text
 * (emu refuses it, the GPU runs it). */
static int cvt_tf32(parser *P, const mh_ptx_tok *t, mh_ptx_insn *in)
{
    const char *what = NULL;
    int sm = target_sm(P);
    if (!(in->cmp & MH_CVT_TF32)) {
        memset(in, 0, offsetof(mh_ptx_insn, guard));
        in->op = MH_OP_OPAQUE;
        return 0;
    }
    if (in->type2 != MH_PT_F32) what = "cvt to .tf32 converts from .f32";
    else if (in->mods) what = ".ftz and .sat do not apply to cvt to .tf32 (.satfinite does)";
    else if (in->rnd == MH_RND_NONE) what = "cvt to .tf32 needs a rounding modifier (.rna, .rn or .rz)";
    else if (in->rnd != MH_RND_RNA && in->rnd != MH_RND_RN && in->rnd != MH_RND_RZ)
        what = "cvt to .tf32 rounds with .rna, .rn or .rz only";
    else if (in->rnd == MH_RND_RNA && (in->cmp & MH_CVT_RELU)) what = ".relu cannot be combined with .rna";
    else if (in->rnd != MH_RND_RNA && sm && sm < 90) what = "cvt.rn/.rz to .tf32 needs .target sm_90 or higher";
    else if (in->rnd != MH_RND_RNA && (in->cmp & MH_CVT_SATFINITE) && sm && sm < 100)
        what = ".satfinite on cvt.rn/.rz to .tf32 needs .target sm_100 or higher";
    if (what) return perr(P, t->line, MH_E_PTX_SYNTAX, "'%.*s': %s", (int)t->len, t->s, what);
    return 0;
}

/* cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.{f32,f16x2} and cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2} (sm_89),
 * refused as ptxas refuses the rest (the operand count is checked with the operands). */
static int cvt_f8x2(parser *P, const mh_ptx_tok *t, mh_ptx_insn *in)
{
    const char *what = NULL;
    int sm = target_sm(P), to = (in->cmp & MH_CVT_TO_F8X2) != 0;
    if ((in->cmp & MH_CVT_TO_F8X2) && (in->cmp & MH_CVT_FROM_F8X2)) what = "one side of cvt can be .e4m3x2/.e5m2x2";
    else if (in->cmp & MH_CVT_TF32) what = ".tf32 and .e4m3x2/.e5m2x2 do not mix";
    else if (in->mods) what = ".ftz and .sat do not apply to cvt with .e4m3x2/.e5m2x2 (.satfinite does)";
    else if (in->rnd != MH_RND_RN) what = "cvt with .e4m3x2/.e5m2x2 rounds with .rn";
    else if (to && in->type2 != MH_PT_F32 && in->type2 != MH_PT_F16X2)
        what = "cvt to .e4m3x2/.e5m2x2 converts from .f32 or .f16x2";
    else if (to && !(in->cmp & MH_CVT_SATFINITE)) what = "cvt to .e4m3x2/.e5m2x2 needs .satfinite";
    else if (!to && in->type != MH_PT_F16X2) what = "cvt from .e4m3x2/.e5m2x2 converts to .f16x2";
    else if (!to && (in->cmp & MH_CVT_SATFINITE)) what = ".satfinite does not apply to cvt from .e4m3x2/.e5m2x2";
    else if (sm && sm < 89) what = "cvt with .e4m3x2/.e5m2x2 needs .target sm_89 or higher";
    if (what) return perr(P, t->line, MH_E_PTX_SYNTAX, "'%.*s': %s", (int)t->len, t->s, what);
    return 0;
}

/* Splits the mnemonic at '.' and fills op, types, space and modifiers. */
static int decode_mnemonic(parser *P, const mh_ptx_tok *t, mh_ptx_insn *in)
{
    const char *s = t->s, *end = t->s + t->len;
    const char *dot = memchr(s, '.', t->len);
    size_t n0 = dot ? (size_t)(dot - s) : t->len;
    int op = op_of(s, n0);
    if (op == MH_OP_MBARRIER_INIT || op == MH_OP_MBARRIER || (n0 == 8 && !memcmp(s, "mbarrier", 8))) {
        /* the mbarrier forms emu runs; others stay text */
        static const struct { const char *w; int kind; } forms[] = {
            {"mbarrier.init", -1}, {"mbarrier.arrive.expect_tx", MH_MB_ARRIVE_EXPECT_TX}, {"mbarrier.arrive", MH_MB_ARRIVE},
            {"mbarrier.arrive_drop.expect_tx", MH_MB_ARRIVE_DROP_EXPECT_TX}, {"mbarrier.arrive_drop", MH_MB_ARRIVE_DROP},
            {"mbarrier.pending_count", MH_MB_PENDING_COUNT}, {"mbarrier.inval", MH_MB_INVAL},
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
    if ((op == MH_OP_BAR && t->len >= 15 && !memcmp(s, "barrier.cluster", 15) && (t->len == 15 || s[15] == '.')) ||
        (n0 == 4 && !memcmp(s, "mapa", 4)) || (n0 == 10 && !memcmp(s, "getctarank", 10)) ||
        (n0 == 5 && !memcmp(s, "elect", 5))) {
        /* clusters: barrier.cluster.{arrive,wait}, mapa, getctarank, elect.sync (cmp set below) */
        in->cmp = n0 == 4 ? MH_CL_MAPA : n0 == 10 ? MH_CL_GETCTARANK : n0 == 5 ? MH_CL_ELECT : 0xff;
        if (op == MH_OP_BAR) dot = t->len == 15 ? NULL : s + 15;
        op = MH_OP_CLUSTER;
    }
    if (n0 == 14 && !memcmp(s, "griddepcontrol", 14)) op = MH_OP_MEMBAR; /* one launch: only ordering */
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
        if (op == MH_OP_CVT && ((n == 4 && !memcmp(q, "tf32", 4)) || (n == 3 && !memcmp(q, "rna", 3)) ||
                                (n == 9 && !memcmp(q, "satfinite", 9)) || (n == 4 && !memcmp(q, "relu", 4)))) {
            if (q[0] == 't') { /* to tf32: an f32's bits in a .b32 register (cvt_tf32 checks the form) */
                if (ntypes)
                    return perr(P, t->line, MH_E_PTX_SYNTAX, "'%.*s': .tf32 is only a destination type of cvt "
                                "(cvt.rna.tf32.f32)", (int)t->len, s);
                in->type = MH_PT_B32;
                in->cmp |= MH_CVT_TF32;
                ntypes++;
            } else if (q[1] == 'n') in->rnd = MH_RND_RNA;
            else in->cmp |= q[0] == 's' ? MH_CVT_SATFINITE : MH_CVT_RELU;
            continue;
        }
        if (op == MH_OP_CVT && n == 6 && (!memcmp(q, "e4m3x2", 6) || !memcmp(q, "e5m2x2", 6))) {
            /* two fp8s in a .b16 register (cvt_f8x2 checks the form) */
            if (ntypes == 0) in->type = MH_PT_B16, in->cmp |= MH_CVT_TO_F8X2;
            else in->type2 = MH_PT_B16, in->cmp |= MH_CVT_FROM_F8X2;
            if (q[1] == '5') in->cmp |= MH_CVT_E5M2;
            ntypes++;
            continue;
        }
        mh_ptx_type ty = type_of(q, n);
        int k;
        if (ty != MH_PT_NONE) {
            if (ntypes == 0) in->type = (uint8_t)ty;
            else in->type2 = (uint8_t)ty;
            ntypes++;
        } else if ((k = space_of(q, n)) >= 0 && (op == MH_OP_LD || op == MH_OP_ST || op == MH_OP_ATOM || op == MH_OP_RED ||
                                                   op == MH_OP_CVTA || op == MH_OP_MBARRIER_INIT || op == MH_OP_PREFETCH || op == MH_OP_CP_ASYNC ||
                                                   op == MH_OP_MBARRIER || op == MH_OP_CLUSTER)) {
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
        else if ((op == MH_OP_MIN || op == MH_OP_MAX) && n == 3 && !memcmp(q, "NaN", 3)) in->cmp = MH_MINMAX_NAN;
        else if (n == 6 && !memcmp(q, "approx", 6)) in->mods |= MH_MOD_APPROX;
        else if (n == 4 && !memcmp(q, "full", 4)) in->mods |= MH_MOD_FULL;
        else if (n == 3 && !memcmp(q, "uni", 3)) in->mods |= MH_MOD_UNI;
        else if (n == 2 && !memcmp(q, "to", 2) && op == MH_OP_CVTA) in->mods |= MH_MOD_TO;
        else if (n == 8 && !memcmp(q, "shiftamt", 8) && op == MH_OP_BFIND) in->mods |= MH_MOD_SHIFTAMT;
        else if (op == MH_OP_BAR && (n == 4 && !memcmp(q, "warp", 4))) in->cmp = 1; /* bar.warp.sync */
        else if (op == MH_OP_BAR && (n == 6 && !memcmp(q, "arrive", 6))) in->cmp = 2; /* bar.arrive a, b */
        else if (op == MH_OP_BAR && (n == 3 && !memcmp(q, "red", 3))) in->cmp = MH_BAR_RED; /* bar.red.OP d, a, {!}c */
        else if (op == MH_OP_BAR && in->cmp == MH_BAR_RED && (k = word_in(q, n, (const char *const[]){"popc", "and", "or", NULL})) >= 0)
            in->boolop = (uint8_t)(k + 1);
        else if (op == MH_OP_MBARRIER && n == 6 && !memcmp(q, "parity", 6)) in->mods |= MH_MOD_PARITY;
        else if (op == MH_OP_CLUSTER && in->cmp == 0xff && n == 6 && !memcmp(q, "arrive", 6)) in->cmp = MH_CL_ARRIVE;
        else if (op == MH_OP_CLUSTER && in->cmp == 0xff && n == 4 && !memcmp(q, "wait", 4)) in->cmp = MH_CL_WAIT;
        else if (op == MH_OP_MBARRIER && n == 5 && !memcmp(q, "noinc", 5)) in->mods |= MH_MOD_NOINC;
        else if (op == MH_OP_LD && n == 2 && !memcmp(q, "cg", 2)) in->mods |= MH_MOD_CG; /* cache global: L2 only */
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
    if (op == MH_OP_CVT && (in->cmp & (MH_CVT_TO_F8X2 | MH_CVT_FROM_F8X2))) return cvt_f8x2(P, t, in);
    if (op == MH_OP_CVT && (in->cmp || in->rnd == MH_RND_RNA)) return cvt_tf32(P, t, in);
    if ((op == MH_OP_MIN || op == MH_OP_MAX) && in->cmp == MH_MINMAX_NAN && in->type != MH_PT_F32 &&
        in->type != MH_PT_F16 && in->type != MH_PT_F16X2 && in->type != MH_PT_BF16 && in->type != MH_PT_BF16X2)
        return perr(P, t->line, MH_E_PTX_SYNTAX, "'%.*s': .NaN applies to .f32, .f16, .f16x2, .bf16 and .bf16x2 only",
                    (int)t->len, s);
    if (op == MH_OP_TESTP && (!(in->mods & MH_MOD_CC) || (in->type != MH_PT_F32 && in->type != MH_PT_F64)))
        return perr(P, t->line, MH_E_PTX_SYNTAX, "'%.*s': testp needs a class (.finite, .infinite, .number, "
                    ".notanumber, .normal, .subnormal) and .f32 or .f64", (int)t->len, s);
    if (op == MH_OP_BAR && in->cmp == 0) {
        /* bar.sync / barrier.sync (cmp 0), bar.arrive / barrier.arrive (cmp 2), bar.red (MH_BAR_RED) */
        if (!strstr_n(s, t->len, "sync")) in->op = MH_OP_OPAQUE; /* not decoded */
    }
    if (op == MH_OP_BAR && in->cmp == MH_BAR_RED &&
        (!in->boolop || (in->boolop == 1) != (in->type == MH_PT_U32) || (in->boolop > 1) != (in->type == MH_PT_PRED)))
        return perr(P, t->line, MH_E_PTX_SYNTAX, "'%.*s': bar.red is .popc.u32, .and.pred or .or.pred", (int)t->len, s);
    if (op == MH_OP_CLUSTER && in->cmp == 0xff) { /* barrier.cluster without arrive or wait: not decoded */
        memset(in, 0, offsetof(mh_ptx_insn, guard));
        in->op = MH_OP_OPAQUE;
    }
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
int skip_opaque(parser *P, mh_ptx_insn *in, const mh_ptx_tok *mn)
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

/* Whether an operand the instruction reads (after its destination, when it writes one) is a
 * register list */
static int vec_source(const mh_ptx_insn *in, int writes)
{
    for (int k = writes ? 1 : 0; k < in->nopnds; k++)
        if (in->o[k].kind == MH_OPK_VEC) return 1;
    return 0;
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
        [MH_OP_REDUX] = 3, [MH_OP_MATCH] = 3, [MH_OP_MBARRIER] = 1, [MH_OP_BFIND] = 2,
    };
    int op = in->op;
    const char *what = NULL;
    int need = min_opnds[op] + (op == MH_OP_SETP && in->boolop) + (op == MH_OP_ATOM && in->cmp == AOP_CAS);
    int no_type = op == MH_OP_BRA || op == MH_OP_RET || op == MH_OP_EXIT || op == MH_OP_BAR || op == MH_OP_MEMBAR ||
                  op == MH_OP_PREFETCH || op == MH_OP_TRAP || op == MH_OP_CALL || op == MH_OP_NOP || op == MH_OP_CP_ASYNC ||
                  op == MH_OP_MBARRIER;
    int writes = !no_type && op != MH_OP_ST && op != MH_OP_RED && op != MH_OP_MBARRIER_INIT;
    if (op == MH_OP_MBARRIER) { /* [addr] first, or a state/predicate (arrive: may be the sink "_") then [addr] */
        int k = in->cmp, ai = mh_mb_addr_opnd(k);
        int extra = k == MH_MB_ARRIVE_EXPECT_TX || k == MH_MB_ARRIVE_DROP_EXPECT_TX || k == MH_MB_TEST_WAIT ||
                    k == MH_MB_TRY_WAIT || k == MH_MB_EXPECT_TX || k == MH_MB_COMPLETE_TX;
        if (ai < 0) { /* pending_count d, state */
            if (in->nopnds != 2) what = "pending_count takes a destination and a state";
            else if (in->o[0].kind != MH_OPK_REG) what = "the destination must be a register";
        } else if (in->nopnds < ai + 1 + extra) what = "too few operands";
        else if (in->o[ai].kind != MH_OPK_ADDR) what = "the mbarrier must be an address [..]";
        else if (ai && in->o[0].kind != MH_OPK_REG && in->o[0].kind != MH_OPK_SINK) what = "the destination must be a register";
        if (what) return perr(P, in->line, MH_E_PTX_SYNTAX, "'%.*s': %s", (int)mn->len, mn->s, what);
    }
    if (op == MH_OP_CLUSTER) { /* barrier.cluster: none; mapa d, a, rank; getctarank d, a; elect.sync d|p, members */
        static const int n_of[] = {[MH_CL_ARRIVE] = 0, [MH_CL_WAIT] = 0, [MH_CL_MAPA] = 3, [MH_CL_GETCTARANK] = 2, [MH_CL_ELECT] = 2};
        int k = in->cmp;
        if (in->nopnds != n_of[k]) what = "wrong number of operands";
        else if ((k == MH_CL_MAPA || k == MH_CL_GETCTARANK) && (in->o[0].kind != MH_OPK_REG || !in->type))
            what = "a typed register destination is needed (.u32 or .u64)";
        else if (k == MH_CL_ELECT && ((in->o[0].kind != MH_OPK_REG && in->o[0].kind != MH_OPK_SINK) || in->dst2 < 0))
            what = "elect.sync takes d|p, membermask";
        if (what) return perr(P, in->line, MH_E_PTX_SYNTAX, "'%.*s': %s", (int)mn->len, mn->s, what);
        return 0;
    }
    if (in->nopnds < need) what = "too few operands";
    else if (!no_type && in->type == MH_PT_NONE) what = "a type is needed (e.g. .u32)";
    else if (op == MH_OP_CVT && in->type2 == MH_PT_NONE) what = "cvt needs a destination and a source type";
    else if (op == MH_OP_CVT && (in->cmp & (MH_CVT_TO_F8X2 | MH_CVT_FROM_F8X2)) &&
             in->nopnds != ((in->cmp & MH_CVT_TO_F8X2) && in->type2 == MH_PT_F32 ? 3 : 2))
        what = (in->cmp & MH_CVT_TO_F8X2) && in->type2 == MH_PT_F32 ? "cvt to .e4m3x2/.e5m2x2 from .f32 takes d, a, b"
                                                                     : "cvt with .e4m3x2/.e5m2x2 takes d, a";
    else if (op == MH_OP_CVT && (in->cmp & MH_CVT_TF32) &&
             (in->o[0].kind != MH_OPK_REG || P->m->reg_type[in->o[0].reg] != MH_PT_B32))
        what = "the destination of cvt to .tf32 must be a .b32 register";
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
    else if ((op == MH_OP_LD || op == MH_OP_ST) && in->o[op == MH_OP_LD ? 0 : 1].kind == MH_OPK_VEC &&
             in->o[op == MH_OP_LD ? 0 : 1].n != (in->vec > 1 ? in->vec : 1))
        what = in->vec > 1 ? "the register list must have one register per element of the vector"
                           : "a register list ({...} or a .v2/.v4 register) needs a .v2/.v4 access";
    else if (op != MH_OP_LD && op != MH_OP_ST && op != MH_OP_MOV && vec_source(in, writes))
        what = "a register list ({...} or a .v2/.v4 register) is read only by ld, st and mov: name its elements";
    else if (in->o[0].kind == MH_OPK_VEC && writes && in->o[0].fimm) what = "a constant cannot be written";
    else if (in->o[0].kind == MH_OPK_VEC && writes)
        for (int k = 0; k < in->o[0].n; k++)
            if (in->o[0].vec[k] != UINT32_MAX && (in->o[0].vec[k] & MH_PTX_VEC_SREG)) what = "a special register cannot be written";
    if (what) return perr(P, in->line, MH_E_PTX_SYNTAX, "'%.*s': %s", (int)mn->len, mn->s, what);
    return 0;
}

/* createpolicy.{fractional,range,cvt}... policy, ...: the policy is a hint that loads and stores
 * with .L2::cache_hint pass on; emu has no caches, so it becomes "mov.b64 policy, 0" (its operands
 * still read, so an undeclared name is refused as ptxas refuses it). */
static int parse_createpolicy(parser *P, mh_ptx_insn *in, const mh_ptx_tok *mn)
{
    mh_ptx_opnd scratch;
    in->op = MH_OP_MOV;
    in->type = MH_PT_B64;
    in->vec = 1;
    while (!mh_ptx_tok_punct(TOK, ';')) {
        int rc = parse_operand(P, in, in->nopnds == 0 ? &in->o[0] : &scratch);
        if (rc) return rc < 0 ? -1 : perr(P, in->line, MH_E_PTX_SYNTAX, "'%.*s': a bad operand", (int)mn->len, mn->s);
        if (in->nopnds < 2) in->nopnds++;
        if (mh_ptx_tok_punct(TOK, ',')) NEXT();
        else if (!mh_ptx_tok_punct(TOK, ';'))
            return perr(P, TOK->line, MH_E_PTX_SYNTAX, "expected ',' or ';' after an operand of '%.*s', found '%.*s'",
                        (int)mn->len, mn->s, (int)TOK->len, TOK->s);
    }
    in->text_end = (uint32_t)(TOK->s - P->m->text) + 1;
    NEXT();
    if (in->nopnds < 1 || in->o[0].kind != MH_OPK_REG || mh_ptx_type_bits(P->m->reg_type[in->o[0].reg]) != 64)
        return perr(P, in->line, MH_E_PTX_SYNTAX, "'%.*s': the policy goes to a 64-bit register", (int)mn->len, mn->s);
    memset(&in->o[1], 0, sizeof in->o[1]);
    in->o[1].kind = MH_OPK_IMM;
    in->o[1].reg = UINT32_MAX;
    in->o[1].sym = in->o[1].param = -1;
    in->nopnds = 2;
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
    if (mma_mnemonic(&mn)) { /* tensor cores: their own operand forms (ptx_mma.c) */
        NEXT();
        return parse_mma(P, &in, &mn) || push_insn(P, first_marker, &in) ? -1 : 0;
    }
    if (tma_mnemonic(&mn)) { /* bulk copies: their own operand forms (ptx_tma.c) */
        NEXT();
        return parse_tma(P, &in, &mn) || push_insn(P, first_marker, &in) ? -1 : 0;
    }
    if (mn.len > 13 && !memcmp(mn.s, "createpolicy.", 13)) { /* a cache policy: an opaque 64-bit value */
        NEXT();
        return parse_createpolicy(P, &in, &mn) || push_insn(P, first_marker, &in) ? -1 : 0;
    }
    if (decode_mnemonic(P, &mn, &in)) return -1;
    NEXT();
    if (in.op == MH_OP_OPAQUE) return skip_opaque(P, &in, &mn) || push_insn(P, first_marker, &in) ? -1 : 0;
    if (in.op == MH_OP_MEMBAR) {
        const char *semi = memchr(P->m->text + in.text_off, ';', strlen(P->m->text + in.text_off));
        in.text_end = semi ? (uint32_t)(semi - P->m->text) + 1 : in.text_off;
        if (skip_statement(P, "instruction")) return -1; /* ordering and hints: no operands the emulator uses */
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

/* parse_block, also giving where its closing '}' is. */
int parse_block_at(parser *P, const char **close_at)
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

/* A label "name:" of the block being parsed; one of that name in the same block (of any kind of
 * name) is refused, as ptxas refuses it. */
static int define_label(parser *P, const mh_ptx_tok *name)
{
    if (check_new_name(P, name->s, name->len, "label", name->line, 0)) return -1;
    if (grow((void **)&P->labels, &P->cap_labels, P->nlabels + 1, sizeof *P->labels))
        return perr(P, name->line, MH_E_NO_MEMORY, "out of memory");
    P->labels[P->nlabels] = (label_ref){name->s, name->len, (uint32_t)P->ncode, 0, P->block, name->line};
    int32_t *slot = index_put(&P->labels_ix, name->s, name->len, P->block);
    if (!slot) return perr(P, name->line, MH_E_NO_MEMORY, "out of memory");
    *slot = (int32_t)P->nlabels; /* (before the next put, which may move the table) */
    int32_t *any = index_put(&P->labels_ix, name->s, name->len, -1);
    if (!any) return perr(P, name->line, MH_E_NO_MEMORY, "out of memory");
    if (*any < 0) *any = (int32_t)P->nlabels;
    P->nlabels++;
    return 0;
}

/* Statements until the closing '}' of the current scope: a block of its own (ptx.h's
 * mh_ptx_block), whose names go out of scope at its end. */
static int parse_block(parser *P)
{
    size_t decls_at_entry = P->ndecls, decls_from = P->decls_from;
    int32_t outer = P->block;
    if (grow((void **)&P->blocks, &P->cap_blocks, P->nblocks + 1, sizeof *P->blocks))
        return perr(P, TOK->line, MH_E_NO_MEMORY, "out of memory");
    P->block = (int32_t)P->nblocks++;
    P->blocks[P->block] = (mh_ptx_block){(uint32_t)(P->lx.prev_end - P->m->text), 0, outer};
    P->decls_from = P->ndecls;
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
                if (parse_var(P, PTX_LINK_STATIC)) return -1;
            } else if (mh_ptx_tok_is(TOK, ".param")) {
                /* a call sequence's argument or return variable */
                if (parse_var(P, PTX_LINK_STATIC)) return -1;
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
                if (marker_inside_span(P, save_markers, &name, "label") || define_label(P, &name)) return -1;
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
    P->blocks[P->block].close = (uint32_t)(TOK->s - P->m->text);
    NEXT();
    P->depth--;
    decls_truncate(P, decls_at_entry); /* registers declared in this scope go out of scope */
    P->decls_from = decls_from;
    P->block = outer;
    return 0;
}

/* Each branch goes to the innermost label of its name in sight: in its block or an enclosing one,
 * before or after it in the text (a label inside a block that does not enclose the branch is out
 * of sight, as ptxas has it: "Unknown symbol"). */
int resolve_labels(parser *P, mh_ptx_func *f)
{
    for (size_t i = 0; i < P->nfixups; i++) {
        label_ref *r = &P->fixups[i];
        mh_ptx_insn *in = &P->code[r->insn];
        int32_t k = -1;
        for (int32_t b = r->block; b >= 0 && k < 0; b = P->blocks[b].parent) k = index_get(&P->labels_ix, r->name, r->len, b);
        if (k < 0) {
            if (in->op == MH_OP_CALL) continue;
            int32_t any = index_get(&P->labels_ix, r->name, r->len, -1);
            if (any >= 0)
                return perr(P, r->line, MH_E_PTX_SYNTAX, "branch to label '%.*s', which is not in sight here: it is "
                            "defined at line %u inside a block that does not hold this branch", (int)r->len, r->name,
                            P->labels[any].line);
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
int infer_pointers(mh_ptx_module *m, mh_ptx_func *f)
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

