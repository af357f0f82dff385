/* test_ptx_limits.c - the PTX front end on input that is real but unusual, or
 * hostile (issue 12):
 *  - directives written without a space before their qualifiers (".reg.b32 t;",
 *    as CUDA 13's cuda_fp16.hpp and cuda_bf16.hpp write their inline asm);
 *  - nesting deeper than MH_PTX_MAX_NESTING (braces of blocks, of an
 *    instruction's operands, of a skipped section, parentheses of an
 *    initialiser) is a ptx_syntax error naming the line, never a stack overflow;
 *  - growing arrays grow geometrically: a 100,000-parameter entry, 20,000
 *    functions and 20,000 variables take a few dozen reallocs, not one each
 *    (this test is linked with --wrap=realloc to count them), and parse in
 *    well under a second;
 *  - names are looked up through hash indexes: 100,000 parameters each loaded,
 *    30,000 labels, variables and registers each used, parse in seconds even
 *    under AddressSanitizer (they took minutes), with the scoping of registers
 *    as before (an inner declaration hides an outer one; a range covers the
 *    numbers below its count, without leading zeros) and a register declared
 *    twice in one scope refused, as ptxas refuses it;
 *  - a "// @mgpu" marker inside a directive or a label (between a .loc and its
 *    last number, a .reg and its ';', a label and its ':') is refused as one
 *    inside an instruction is, since the instrumentation's code would split it;
 *    a ';' after a .loc is not part of it (ptxas refuses it too), so the
 *    fuzzer's input where a marker sat between the two is refused.
 * argv[1]: the source folder (for tests/fuzz/corpus-ptx). */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include "check.h"
#include "frontend/ptx.h"
#include "instrument/instrument.h"

#ifndef MH_PTX_MAX_NESTING /* (before the limit existed) */
#define MH_PTX_MAX_NESTING 256
#endif

void *__real_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n);
static size_t realloc_calls;

void *__wrap_realloc(void *p, size_t n)
{
    realloc_calls++;
    return __real_realloc(p, n);
}

static const char HEAD[] = ".version 8.0\n.target sm_90\n.address_size 64\n"; /* 3 lines */

/* A growing text buffer. */
typedef struct {
    char *s;
    size_t n, cap;
} buf;

static void put(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(buf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (b->s && (size_t)k < b->cap - b->n) {
            b->n += (size_t)k;
            return;
        }
        b->cap = (b->cap + (size_t)k + 1) * 2;
        b->s = __real_realloc(b->s, b->cap);
        if (!b->s) abort();
    }
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int parse(mh_ptx_module *m, const char *text, mh_error *e)
{
    return mh_ptx_parse(m, text, strlen(text), "t.ptx", e);
}

/* ---- ".reg.b32 t;" -------------------------------------------------------- */

static void glued_directives(void)
{
    /* the shape of cuda_fp16.hpp's hsqrt and friends, and the other directives with
     * their qualifiers glued on (ptxas takes all of them) */
    static const char text[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".global.align 4 .u32 g;\n"                                            /* 4 */
        ".visible .entry k(.param .u64 .ptr.global.align 8 p, .param.u32 n)\n" /* 5 */
        "{\n"
        ".reg.b32 %r<3>;\n"
        ".reg.b16 %h<2>;\n"
        ".shared.align 4 .b8 s[16];\n"
        ".local.u32 l;\n"
        ".reg.v2.u32 v;\n"
        "{.reg.b32         f;        \n"
        " .reg.b16         r;        \n"
        " .reg.pred p0;\n"
        "  mov.b16         r,%h1;    \n"
        "  cvt.f32.f16     f,r;      \n"
        "  sqrt.approx.ftz.f32   f,f;  \n"
        "  cvt.rn.f16.f32      r,f;  \n"
        "  mov.b16         %h0,r;    \n"
        "}\n"
        "{ .reg.f32 a, b;\n mov.f32 a, 0f3f800000;\n add.f32 b, a, a;\n}\n"
        "ret;\n}\n";
    mh_ptx_module m;
    mh_error e;
    int rc = parse(&m, text, &e);
    CHECK(rc == 0);
    if (rc) {
        fprintf(stderr, "  %s\n", e.message);
        return;
    }
    const mh_ptx_func *f = mh_ptx_find(&m, "k");
    CHECK(f && f->nparams == 2);
    if (f && f->nparams == 2) {
        CHECK(f->params[0].is_ptr && f->params[0].ptr_space == MH_SP_GLOBAL && f->params[0].align == 8);
        CHECK(f->params[1].type == MH_PT_U32);
    }
    int found_f = 0, found_r = 0, found_a = 0;
    for (uint32_t i = 0; i < m.nregs; i++) {
        if (!strcmp(m.reg_name[i], "f")) found_f = m.reg_type[i] == MH_PT_B32;
        if (!strcmp(m.reg_name[i], "r")) found_r = m.reg_type[i] == MH_PT_B16;
        if (!strcmp(m.reg_name[i], "a")) found_a = m.reg_type[i] == MH_PT_F32;
    }
    CHECK(found_f && found_r && found_a);
    int vars = 0;
    for (uint32_t i = 0; i < m.nvars; i++) {
        const mh_ptx_var *v = &m.vars[i];
        if (!strcmp(v->name, "g")) vars += v->space == MH_SP_GLOBAL && v->align == 4 && v->size == 4;
        if (!strcmp(v->name, "s")) vars += v->space == MH_SP_SHARED && v->size == 16;
        if (!strcmp(v->name, "l")) vars += v->space == MH_SP_LOCAL && v->size == 4;
    }
    CHECK(vars == 3);
    mh_ptx_free(&m);

    /* cuda_bf16.hpp's "mov.b32 f, {0, h}": the constant 0 in a source vector reads as 0 (the sink's
     * encoding); another constant, or more than 4 elements, keep the instruction as text (emu refuses
     * it by name, the GPU runs it); a constant cannot be written */
    static const char vec[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                              ".visible .entry k()\n{\n.reg .b16 h<2>;\n.reg .b32 f<2>;\n.reg .b64 d;\n"
                              "mov.b32 f0, {0, h1};\n"            /* 0 (line 9) */
                              "mov.b32 f1, {h0, 0x3c00};\n"       /* 1: text */
                              "mov.b64 d, {h0, h1, h0, h1, 0};\n" /* 2: text */
                              "mov.b32 f1, {0x0, h1};\n"          /* 3 */
                              "ret;\n}\n";
    rc = parse(&m, vec, &e);
    CHECK(rc == 0);
    f = rc ? NULL : mh_ptx_find(&m, "k");
    if (f) {
        CHECK(f->code[0].op == MH_OP_MOV && f->code[0].o[1].kind == MH_OPK_VEC && f->code[0].o[1].n == 2 &&
              f->code[0].o[1].vec[0] == UINT32_MAX && f->code[0].o[1].vec[1] != UINT32_MAX);
        CHECK(f->code[1].op == MH_OP_OPAQUE && f->code[1].line == 10);
        CHECK(f->code[2].op == MH_OP_OPAQUE && f->code[2].line == 11);
        CHECK(f->code[3].op == MH_OP_MOV && f->code[3].o[1].vec[0] == UINT32_MAX);
        CHECK(f->ncode == 6); /* and ret, and the synthetic one */
        mh_ptx_free(&m);
    }
    static const char vec_dst[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                                  ".visible .entry k()\n{\n.reg .b16 h;\n.reg .b32 f;\nmov.b32 {0, h}, f;\nret;\n}\n";
    CHECK(parse(&m, vec_dst, &e) == MH_E_PTX_SYNTAX);
    CHECK_CONTAINS(e.message, "t.ptx:8: 'mov.b32': a constant cannot be written");

    /* a glued qualifier that is not one is still refused, naming it */
    static const char bad[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                              ".visible .entry k()\n{\n.reg.b33 x;\nret;\n}\n";
    CHECK(parse(&m, bad, &e) == MH_E_PTX_SYNTAX);
    CHECK_CONTAINS(e.message, "t.ptx:6: unknown register type '.b33'");
}

/* ---- nesting -------------------------------------------------------------- */

/* k nested blocks "{" ... "}" in an entry, one per line from line 6 */
static char *nested_blocks(int k)
{
    buf b = {0};
    put(&b, "%s.visible .entry k()\n", HEAD);
    for (int i = 0; i <= k; i++) put(&b, "{\n");
    put(&b, "ret;\n");
    for (int i = 0; i <= k; i++) put(&b, "}\n");
    return b.s;
}

static void nesting(void)
{
    mh_ptx_module m;
    mh_error e;
    char *t = nested_blocks(MH_PTX_MAX_NESTING - 1); /* the body's '{' is level 1 */
    CHECK(parse(&m, t, &e) == 0);
    mh_ptx_free(&m);
    free(t);
    t = nested_blocks(MH_PTX_MAX_NESTING);
    CHECK(parse(&m, t, &e) == MH_E_PTX_SYNTAX);
    char want[128];
    snprintf(want, sizeof want, "t.ptx:%d: blocks nested deeper than %d", 5 + MH_PTX_MAX_NESTING, MH_PTX_MAX_NESTING);
    CHECK_CONTAINS(e.message, want);
    CHECK(e.line == 5 + MH_PTX_MAX_NESTING);
    free(t);
    /* what overflowed the stack before */
    t = nested_blocks(50000);
    CHECK(parse(&m, t, &e) == MH_E_PTX_SYNTAX);
    CHECK_CONTAINS(e.message, "nested deeper than");
    free(t);

    /* braces in an operand list the front end skips (an undecoded instruction) */
    buf b = {0};
    put(&b, "%s.visible .entry k()\n{\nwmma.foo ", HEAD);
    for (int i = 0; i < 100000; i++) put(&b, "{");
    put(&b, ";\nret;\n}\n");
    CHECK(parse(&m, b.s, &e) == MH_E_PTX_SYNTAX);
    CHECK_CONTAINS(e.message, "t.ptx:6: braces nested deeper than");
    free(b.s);
    /* braces of a section the front end skips */
    b = (buf){0};
    put(&b, "%s.section .debug_info\n", HEAD); /* the braces on line 5 */
    for (int i = 0; i < 100000; i++) put(&b, "{");
    CHECK(parse(&m, b.s, &e) == MH_E_PTX_SYNTAX);
    CHECK_CONTAINS(e.message, "t.ptx:5: braces nested deeper than");
    free(b.s);
    /* parentheses of an address initialiser */
    b = (buf){0};
    put(&b, "%s.global .u32 x;\n.global .u64 y = generic", HEAD);
    for (int i = 0; i < 100000; i++) put(&b, "(");
    put(&b, "x;\n");
    CHECK(parse(&m, b.s, &e) == MH_E_PTX_SYNTAX);
    CHECK_CONTAINS(e.message, "t.ptx:5: parentheses nested deeper than");
    free(b.s);
    /* and a ')' without its '(' there */
    static const char close[] = ".version 8.0\n.target sm_90\n.address_size 64\n.global .u32 x;\n"
                                ".global .u64 y = generic(x));\n";
    CHECK(parse(&m, close, &e) == MH_E_PTX_SYNTAX);
    CHECK_CONTAINS(e.message, "t.ptx:5: ')' without its '('");
    /* a float initialiser of an integer variable (ptxas: "Initial value type mismatch"); a value
     * past int64 was converted to an integer, undefined behaviour (fuzz_ptx under UBSan) */
    static const char fint[] = ".version 8.0\n.target sm_90\n.address_size 64\n.global .s64 big = 9.66e21;\n";
    CHECK(parse(&m, fint, &e) == MH_E_PTX_SYNTAX);
    CHECK_CONTAINS(e.message, "t.ptx:4: a floating-point initialiser for the integer variable big");
    static const char fint2[] = ".version 8.0\n.target sm_90\n.address_size 64\n.global .u32 a[2] = {1, 2.5};\n";
    CHECK(parse(&m, fint2, &e) == MH_E_PTX_SYNTAX);
    CHECK_CONTAINS(e.message, "integer variable a");
}

/* ---- geometric growth ------------------------------------------------------ */

static void growth(void)
{
    enum { NP = 100000, NF = 20000, NV = 20000 };
    mh_ptx_module m;
    mh_error e;
    buf b = {0};
    put(&b, "%s.visible .entry k(\n", HEAD);
    for (int i = 0; i < NP; i++) put(&b, "\t.param .u32 k_param_%d%s\n", i, i + 1 < NP ? "," : "");
    put(&b, ")\n{\n.reg .b32 %%r<4>;\nld.param.u32 %%r1, [k_param_0];\nld.param.u32 %%r2, [k_param_%d];\nret;\n}\n", NP - 1);
    realloc_calls = 0;
    double t0 = now();
    int rc = parse(&m, b.s, &e);
    double dt = now() - t0;
    CHECK(rc == 0);
    const mh_ptx_func *f = rc ? NULL : mh_ptx_find(&m, "k");
    CHECK(f && f->nparams == NP && f->param_bytes == 4u * NP);
    fprintf(stderr, "  %d parameters: %zu reallocs, %.3f s\n", NP, realloc_calls, dt);
    CHECK(realloc_calls < 200);
    CHECK(dt < 5.0);
    if (!rc) mh_ptx_free(&m);
    free(b.s);

    b = (buf){0};
    put(&b, "%s", HEAD);
    for (int i = 0; i < NV; i++) put(&b, ".global .u32 g%d;\n", i);
    for (int i = 0; i < NF; i++) put(&b, ".func f%d()\n{\nret;\n}\n", i);
    put(&b, ".visible .entry k()\n{\n.reg .b64 %%rd<2>;\nmov.u64 %%rd1, g0;\ncall.uni f%d, ();\nret;\n}\n", NF - 1);
    realloc_calls = 0;
    t0 = now();
    rc = parse(&m, b.s, &e);
    dt = now() - t0;
    CHECK(rc == 0);
    CHECK(rc || (m.nfuncs == NF + 1 && m.nvars == NV));
    /* the call of the 20001st function reaches f19999 (call sites were once kept as function << 20 | index
     * in 32 bits: past 4096 functions another function's code was written) */
    const mh_ptx_func *k = rc ? NULL : mh_ptx_find(&m, "k");
    int calls = 0;
    for (uint32_t i = 0; k && i < k->ncode; i++)
        if (k->code[i].op == MH_OP_CALL) {
            calls++;
            CHECK(k->code[i].callee >= 0 && !strcmp(m.funcs[k->code[i].callee].name, "f19999"));
        }
    CHECK(calls == 1);
    fprintf(stderr, "  %d functions, %d variables: %zu reallocs, %.3f s\n", NF, NV, realloc_calls, dt);
    CHECK(realloc_calls < 400);
    CHECK(dt < 5.0);
    if (!rc) mh_ptx_free(&m);
    free(b.s);
}

/* ---- lookups ----------------------------------------------------------------- */

static double parse_timed(const char *text, const char *what, int want_rc)
{
    mh_ptx_module m;
    mh_error e;
    double t0 = now();
    int rc = parse(&m, text, &e);
    double dt = now() - t0;
    CHECK(rc == want_rc);
    if (rc != want_rc) fprintf(stderr, "  %s: %s\n", what, rc ? e.message : "parsed");
    if (!rc) mh_ptx_free(&m);
    fprintf(stderr, "  %s: %.3f s\n", what, dt);
    return dt;
}

/* the register operand o of instruction i of k, by name */
static const char *reg_of(const mh_ptx_module *m, const mh_ptx_func *k, uint32_t i, int o)
{
    return i < k->ncode && k->code[i].o[o].kind == MH_OPK_REG ? m->reg_name[k->code[i].o[o].reg] : "?";
}

static void lookups(void)
{
    enum { NP = 100000, N = 30000 };
    buf b = {0};
    put(&b, "%s.visible .entry k(\n", HEAD);
    for (int i = 0; i < NP; i++) put(&b, "\t.param .u64 k_param_%d%s\n", i, i + 1 < NP ? "," : "");
    put(&b, ")\n{\n.reg .b64 %%rd<4>;\n");
    for (int i = 0; i < NP; i++) put(&b, "ld.param.u64 %%rd1, [k_param_%d];\n", i);
    put(&b, "ret;\n}\n");
    CHECK(parse_timed(b.s, "100000 parameters, each loaded", 0) < 20);
    free(b.s);
    b = (buf){0};
    put(&b, "%s", HEAD);
    for (int i = 0; i < N; i++) put(&b, ".global .u32 g%d;\n", i);
    put(&b, ".visible .entry k()\n{\n.reg .pred %%p<2>;\n.reg .b64 %%rd<2>;\n");
    for (int i = 0; i < N; i++) put(&b, ".reg .b32 r%d;\n", i);
    for (int i = 0; i < N; i++) put(&b, "L%d:\nmov.u64 %%rd1, g%d;\nmov.u32 r%d, 1;\n@%%p1 bra L%d;\n", i, i, i, N - 1 - i);
    put(&b, "ret;\n}\n");
    CHECK(parse_timed(b.s, "30000 labels, variables and registers, each used", 0) < 20);
    free(b.s);

    /* scoping, as the linear search had it */
    static const char scopes[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry k()\n{\n"
        ".reg .b32 %r<10>;\n.reg .b32 %q1<20>;\n.reg .b32 x;\n"
        "{\n.reg .b32 %r<3>;\n.reg .b32 x;\n"
        "mov.u32 %r5, 0;\n"   /* 0: the outer range (the inner one has 3) */
        "mov.u32 %r1, 0;\n"   /* 1: the inner range */
        "mov.u32 x, 0;\n"     /* 2: the inner x */
        "mov.u32 %q15, 0;\n"  /* 3: %q1's number 5 */
        "{\n.reg .b32 %r5;\nmov.u32 %r5, 0;\n}\n" /* 4: the single %r5 */
        "}\n"
        "mov.u32 %r1, 0;\n"   /* 5: the outer range again */
        "mov.u32 x, 0;\n"     /* 6: the outer x */
        "ret;\n}\n";
    mh_ptx_module m;
    mh_error e;
    int rc = parse(&m, scopes, &e);
    CHECK(rc == 0);
    const mh_ptx_func *k = rc ? NULL : mh_ptx_find(&m, "k");
    if (k) {
        /* registers in declaration order: %r0-9 (0-9), %q10-119 (10-29), x (30), %r0-2 (31-33), x (34), %r5 (35) */
        static const uint32_t want[] = {5, 32, 34, 15, 35, 1, 30};
        for (uint32_t i = 0; i < 7; i++) {
            CHECK(k->code[i].o[0].kind == MH_OPK_REG && k->code[i].o[0].reg == want[i]);
            if (k->code[i].o[0].reg != want[i]) fprintf(stderr, "  insn %u: %s (%u)\n", i, reg_of(&m, k, i, 0), k->code[i].o[0].reg);
        }
        mh_ptx_free(&m);
    }
    static const char *const bad[][2] = {
        {"{\n.reg .b32 %r<3>;\nmov.u32 %r05, 0;\n}", "t.ptx:8: undeclared register '%r05'"},
        {"{\n.reg .b32 %r<3>;\nmov.u32 %r3, 0;\n}", "t.ptx:8: undeclared register '%r3'"},
        {".reg .b32 %r<3>;\n.reg .b32 %r<5>;", "t.ptx:7: register '%r<>' is defined twice in one scope (first at line 6)"},
        {".reg .b32 t;\n.reg .pred t;", "t.ptx:7: register 't' is defined twice in one scope (first at line 6)"},
    };
    for (int i = 0; i < 4; i++) {
        buf t = {0};
        put(&t, "%s.visible .entry k()\n{\n%s\nret;\n}\n", HEAD, bad[i][0]);
        CHECK(parse(&m, t.s, &e) == MH_E_PTX_SYNTAX);
        CHECK_CONTAINS(e.message, bad[i][1]);
        free(t.s);
    }
}

/* ---- markers inside directives and labels ----------------------------------- */

static void refused(const char *body, const char *want)
{
    buf b = {0};
    put(&b, "%s.file 1 \"a.cu\"\n.visible .entry k()\n{\n.reg .b32 %%r<3>;\n%s\nret;\n}\n", HEAD, body); /* body: line 8 */
    mh_ptx_module m;
    mh_error e;
    int rc = parse(&m, b.s, &e);
    CHECK(rc == MH_E_PTX_SYNTAX);
    CHECK_CONTAINS(e.message, want);
    if (!rc) mh_ptx_free(&m);
    free(b.s);
}

static void accepted(const char *body)
{
    buf b = {0};
    put(&b, "%s.file 1 \"a.cu\"\n.visible .entry k()\n{\n.reg .b32 %%r<3>;\n%s\nret;\n}\n", HEAD, body);
    mh_ptx_module m;
    mh_error e;
    int rc = parse(&m, b.s, &e);
    CHECK(rc == 0);
    if (rc) fprintf(stderr, "  %s\n", e.message);
    else mh_ptx_free(&m);
    free(b.s);
}

static void markers_in_directives(const char *srcdir)
{
    refused(".loc 1 2\n// @mgpu begin a\n3\nmov.u32 %r1, 1;\n// @mgpu end a",
            "t.ptx:9: a marker inside the directive '.loc' that starts on line 8");
    refused(".reg .b32\n// @mgpu begin a\nx;\n// @mgpu end a",
            "t.ptx:9: a marker inside the directive '.reg' that starts on line 8");
    refused(".pragma \"nounroll\"\n// @mgpu begin a\n;\n// @mgpu end a",
            "t.ptx:9: a marker inside the directive '.pragma' that starts on line 8");
    refused(".shared .u32\n// @mgpu begin a\ns;\n// @mgpu end a",
            "t.ptx:9: a marker inside the directive '.shared' that starts on line 8");
    refused("// @mgpu begin a\nL1\n// @mgpu end a\n:\nmov.u32 %r1, 1;",
            "t.ptx:10: a marker inside the label 'L1' that starts on line 9");
    /* the fuzzer's find: a ';' on a later line is not the .loc's (nor anything's) */
    refused(".loc 1 31 9\n// begin inline asm\n// @mgpu end a\n// end inline asm\n;",
            "t.ptx:12: expected an instruction, found ';'");
    refused(".loc 1 31 9;", "t.ptx:8: expected an instruction, found ';'");
    refused(".loc 1 31", "t.ptx:9: .loc needs a file, a line and a column, found 'ret'");
    refused(".loc 1 31 9, bogus 1", "t.ptx:8: unknown .loc attribute 'bogus'");
    /* what nvcc writes, and markers next to directives, are fine */
    accepted(".loc 1 31 9\n// @mgpu begin a\n.loc 1 13 5, function_name $L__info_string0, inlined_at 1 33 5\n"
             "mov.u32 %r1, 1;\n.loc 1 2 3 // @mgpu end a\n.pragma \"nounroll\";\n$L1: // @mgpu begin b\n"
             ".reg .b32 x; // @mgpu end b");
    accepted(".loc 1 2\n3\n.loc\t1 17 0, function_name $L__info_string0 + 12, inlined_at 1 22 9");

    /* the fuzzer's input itself (tests/fuzz/corpus-ptx/loc_marker_semicolon.ptx, a mutated
     * nvcc module): refused, at the first of its mutations the front end now sees (a label
     * copied into its function a second time, issue 30; then an empty .loc on line 160; the
     * stray ';' after a marker is on line 323), so no rewrite of it can come out broken */
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fuzz/corpus-ptx/loc_marker_semicolon.ptx", srcdir);
    FILE *fp = fopen(path, "rb");
    CHECK(fp != NULL);
    if (fp) {
        buf b = {0};
        char chunk[4096];
        size_t k;
        put(&b, "%s", "");
        while ((k = fread(chunk, 1, sizeof chunk, fp)) > 0) put(&b, "%.*s", (int)k, chunk);
        fclose(fp);
        mh_ptx_module m;
        mh_error e;
        int rc = mh_ptx_parse(&m, b.s, b.n, "crash1.ptx", &e);
        CHECK(rc == MH_E_PTX_SYNTAX);
        CHECK_CONTAINS(e.message, "crash1.ptx:156: label '$L__BB0_3' is defined twice in one scope (first at line 52)");
        if (!rc) mh_ptx_free(&m);
        free(b.s);
    }
}

/* ---- modules that used to be taken silently (issue 25) ---------------------- */

static void module_refused(const char *text, const char *want, uint32_t line)
{
    mh_ptx_module m;
    mh_error e;
    int rc = parse(&m, text, &e);
    CHECK(rc == MH_E_PTX_SYNTAX);
    CHECK_CONTAINS(e.message, want);
    CHECK(e.line == line);
    if (!rc) mh_ptx_free(&m);
}

static void silently_accepted(void)
{
#define H ".version 8.0\n.target sm_90\n.address_size 64\n" /* HEAD, as a literal */
#define K ".visible .entry k()\n{\nret;\n}\n"
    module_refused(H K K, "t.ptx:8: kernel 'k' is defined twice (first at line 4)", 8);
    module_refused(".version 8.0\n.target banana\n.address_size 64\n" K, "t.ptx:2: unknown .target 'banana'", 2);
    module_refused(".version 8.0\n.target sm_90, nonsense\n.address_size 64\n" K, "unknown .target 'nonsense'", 2);
    module_refused(H "/*" K, "t.ptx:4: a /* comment opened here is never closed", 4);
    module_refused(H K "/* trailing", "t.ptx:8: a /* comment opened here is never closed", 8);
    module_refused(H K ".section .debug_info\n{\n.b8 1,2,", "the module ends inside this .section", 9);
    module_refused(H K ".section .debug_str\n{\n.b8 \"abc\n}\n", "a string in this .section is not closed", 10);
    /* what ptxas takes stays taken */
    static const char ok[] = ".version 8.0\n.target sm_90a, texmode_independent, debug\n.address_size 64\n"
                             "/* a comment */\n" K ".section .debug_str\n{\n.b8 \"ab\"\n}\n";
    mh_ptx_module m;
    mh_error e;
    CHECK(parse(&m, ok, &e) == 0);
    mh_ptx_free(&m);
#undef K
#undef H
}

int main(int argc, char **argv)
{
    const char *srcdir = argc > 1 ? argv[1] : ".";
    glued_directives();
    nesting();
    growth();
    lookups();
    markers_in_directives(srcdir);
    silently_accepted();
    return check_report("test_ptx_limits");
}
