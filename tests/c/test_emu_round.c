/* test_emu_round.c - directed rounding (.rz/.rm/.rp), .ftz and testp on emu:
 * tests/ptx/rounding.ptx (nvcc's __fadd_rz, __fma_rd, __ddiv_ru, ...) run on
 * emu, and each result checked against its definition rather than against
 * another rounding implementation: r rounded toward zero, down or up from
 * the exact value v means r is on the right side of v and r's neighbour in
 * the other direction is on the wrong side, decided with exact arithmetic
 * (products of two f32 are exact in f64, of two f64 in binary128).  Inline kernels check the
 * conversions to tf32 and to/from two fp8s, min/max.NaN and bfind bit by bit. */
#include <float.h>
#include <math.h>
#include "check.h"
#include "base/dtype.h"
#include "emu_util.h"
#include "emu/emu.h"
#include "frontend/ptx.h"

#define T 32
#define NF 24
#define ND 18
/* lanes 0..27 have operands of like magnitude, so binary128 holds every exact
 * sum and product; lanes 28..31 (subnormals, 1 + 2^-30) get known answers */
#define EXACT_LANES 28

#if defined(__SIZEOF_FLOAT128__)
typedef __float128 wide;
#define HAVE_WIDE 1
#elif LDBL_MANT_DIG >= 113
typedef long double wide;
#define HAVE_WIDE 1
#else
typedef double wide;
#define HAVE_WIDE 0
#endif

enum { RZ, RM, RP };

/* sign of (r - exact) for the operation at hand; exact arithmetic only */
typedef struct { char op; wide a, b, c; } exact_op;

static int sgn(wide d) { return d > 0 ? 1 : d < 0 ? -1 : 0; }

static int side(const exact_op *x, wide r)
{
    switch (x->op) {
    case 'a': return sgn(r - (x->a + x->b));
    case 'm': return sgn(r - x->a * x->b);
    case 'f': return sgn(r - (x->a * x->b + x->c));
    case 'd': return sgn(r * x->b - x->a) * sgn(x->b); /* r - a/b has the sign of (rb - a)/b */
    case 'q': return sgn(r * r - x->a) * (r >= 0 ? 1 : -1);
    default: return sgn(r - x->a);                      /* 'v': a value converted */
    }
}

/* is r (an f32 when f32, else an f64) the value rounded in `mode`? */
static int directed_ok(const exact_op *x, double r, int f32, int mode)
{
    if (isnan(r)) return 0;
    double up = f32 ? nextafterf((float)r, INFINITY) : nextafter(r, INFINITY);
    double down = f32 ? nextafterf((float)r, -INFINITY) : nextafter(r, -INFINITY);
    int s = side(x, r);
    if (s == 0) return 1; /* exact */
    int away_up = r > 0 || (r == 0 && s < 0);   /* rz: r below a positive value */
    if (mode == RZ) mode = away_up ? RM : RP;
    if (mode == RM) return s < 0 && side(x, up) > 0;
    return s > 0 && side(x, down) < 0;
}

/* Runs entry `name` of the inline PTX `src` (reported as NAME.ptx) as one
 * block of `threads` threads with two arguments: a buffer holding `in`, and
 * one of out_bytes read back into `out`. */
static void run_inline(const char *src, const char *name, const void *in, size_t in_bytes, void *out,
                       size_t out_bytes, unsigned threads)
{
    char file[64];
    snprintf(file, sizeof file, "%s.ptx", name);
    mh_ptx_module m;
    mh_error e;
    CHECK(mh_ptx_parse(&m, src, strlen(src), file, &e) == 0);
    CHECK(mh_emu_check_module(&m, &e) == 0);
    mh_emu *d = mh_emu_create(NULL, &e);
    uint64_t pi = 0, po = 0;
    CHECK(mh_emu_alloc(d, in_bytes, &pi, &e) == 0 && mh_emu_alloc(d, out_bytes, &po, &e) == 0);
    mh_emu_write(d, pi, in, in_bytes, &e);
    mh_emu_arg args[] = {{&pi, 8}, {&po, 8}};
    mh_emu_launch l = {{1, 1, 1}, {threads, 1, 1}, 0, args, 2, 0};
    int rc = mh_emu_run(d, &m, name, &l, NULL, &e);
    CHECK(rc == 0);
    if (rc) fprintf(stderr, "  %s\n", e.message);
    mh_emu_read(d, po, out, out_bytes, &e);
    mh_emu_destroy(d);
    mh_ptx_free(&m);
}

/* testp: each class of f32 values, and .normal in f64 of an f32 subnormal */
static void float_classes(void)
{
    static const char src[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry cls(.param .u64 pa, .param .u64 po)\n{\n"
        ".reg .pred %p<8>;\n.reg .b32 %r<16>;\n.reg .f32 %f<2>;\n.reg .f64 %fd<2>;\n.reg .b64 %rd<6>;\n"
        "ld.param.u64 %rd1, [pa];\nld.param.u64 %rd2, [po];\nmov.u32 %r1, %tid.x;\n"
        "mul.wide.u32 %rd3, %r1, 4;\nadd.s64 %rd4, %rd1, %rd3;\nld.global.f32 %f1, [%rd4];\n"
        "cvt.f64.f32 %fd1, %f1;\n"
        "testp.finite.f32 %p1, %f1;\ntestp.infinite.f32 %p2, %f1;\ntestp.number.f32 %p3, %f1;\n"
        "testp.notanumber.f32 %p4, %f1;\ntestp.normal.f32 %p5, %f1;\ntestp.subnormal.f32 %p6, %f1;\n"
        "testp.normal.f64 %p7, %fd1;\n"
        "selp.b32 %r2, 1, 0, %p1;\nselp.b32 %r3, 2, 0, %p2;\nselp.b32 %r4, 4, 0, %p3;\nselp.b32 %r5, 8, 0, %p4;\n"
        "selp.b32 %r6, 16, 0, %p5;\nselp.b32 %r7, 32, 0, %p6;\nselp.b32 %r8, 64, 0, %p7;\n"
        "or.b32 %r9, %r2, %r3;\nor.b32 %r10, %r9, %r4;\nor.b32 %r11, %r10, %r5;\nor.b32 %r12, %r11, %r6;\n"
        "or.b32 %r13, %r12, %r7;\nor.b32 %r14, %r13, %r8;\n"
        "add.s64 %rd5, %rd2, %rd3;\nst.global.u32 [%rd5], %r14;\nret;\n}\n";
    enum { NV = 8 };
    const float v[NV] = {1.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-39f, FLT_MAX, FLT_MIN};
    /* finite 1, infinite 2, number 4, notanumber 8, normal 16, subnormal 32, f64 normal 64 */
    const uint32_t want[NV] = {1 | 4 | 16 | 64, 1 | 4, 2 | 4, 2 | 4, 8, 1 | 4 | 32 | 64, 1 | 4 | 16 | 64, 1 | 4 | 16 | 64};
    uint32_t got[NV];
    run_inline(src, "cls", v, sizeof v, got, sizeof got, NV);
    for (int i = 0; i < NV; i++) {
        CHECK(got[i] == want[i]);
        if (got[i] != want[i]) fprintf(stderr, "  testp of %g: classes %#x, want %#x\n", (double)v[i], got[i], want[i]);
    }
    mh_ptx_module m;
    mh_error e;
    /* a testp without a class is refused by the front end, naming the line */
    static const char bad[] = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
                              ".reg .pred %p<2>;\n.reg .f32 %f<2>;\nmov.f32 %f1, 0f00000000;\n"
                              "testp.f32 %p1, %f1;\nret;\n}\n";
    CHECK(mh_ptx_parse(&m, bad, sizeof bad - 1, "t.ptx", &e) == MH_E_PTX_SYNTAX);
    CHECK_CONTAINS(e.message, "t.ptx:9");
    CHECK_CONTAINS(e.message, "needs a class");
}

/* fma and add on f16/bf16 round once: a*b on a tie of the half type plus a
 * tiny c must round away from the tie (via f32 or a nearest-rounded f64 it
 * lands on the tie and goes to even) */
static void half_single_rounding(void)
{
    static const char src[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry h(.param .u64 pin, .param .u64 pout)\n{\n"
        ".reg .b16 %h<16>;\n.reg .b64 %rd<3>;\n"
        "ld.param.u64 %rd1, [pin];\nld.param.u64 %rd2, [pout];\n"
        "ld.global.b16 %h1, [%rd1];\nld.global.b16 %h2, [%rd1+2];\nld.global.b16 %h3, [%rd1+4];\n"
        "ld.global.b16 %h4, [%rd1+6];\nld.global.b16 %h5, [%rd1+8];\nld.global.b16 %h6, [%rd1+10];\n"
        "ld.global.b16 %h7, [%rd1+12];\nld.global.b16 %h8, [%rd1+14];\n"
        "fma.rn.f16 %h10, %h1, %h2, %h3;\nfma.rn.bf16 %h11, %h4, %h5, %h6;\nadd.rn.bf16 %h12, %h7, %h8;\n"
        "st.global.b16 [%rd2], %h10;\nst.global.b16 [%rd2+2], %h11;\nst.global.b16 [%rd2+4], %h12;\n"
        /* f16 .ftz: 2^-15 + 2^-15 is 2^-14 (normal) but its inputs are subnormal; 2^-7 * 2^-8
         * rounds to a subnormal; without .ftz both keep their value */
        "mov.b16 %h13, 0x0200;\nadd.rn.ftz.f16 %h14, %h13, %h13;\nadd.rn.f16 %h15, %h13, %h13;\n"
        "st.global.b16 [%rd2+6], %h14;\nst.global.b16 [%rd2+8], %h15;\n"
        "mov.b16 %h13, 0x2000;\nmov.b16 %h9, 0x1c00;\nmul.rn.ftz.f16 %h14, %h13, %h9;\nmul.rn.f16 %h15, %h13, %h9;\n"
        "st.global.b16 [%rd2+10], %h14;\nst.global.b16 [%rd2+12], %h15;\nret;\n}\n";
    /* f16: 3 * (1 + 2^-10) = 3 + 1.5 * 2^-9 (a tie), minus 2^-24 -> 3 + 2^-9 (0x4201), not 0x4202;
     * bf16: 3 * (1 + 2^-7) = 3 + 1.5 * 2^-6, minus 2^-126 -> 3 + 2^-6 (0x4041), not 0x4042;
     * bf16 add: (1 + 2^-7) + 2^-8 is a tie between 0x3F81 and 0x3F82: to even, 0x3F82 */
    const uint16_t in[8] = {0x4200, 0x3C01, 0x8001, 0x4040, 0x3F81, 0x8080, 0x3F81, 0x3B80};
    uint16_t out[7] = {0};
    run_inline(src, "h", in, sizeof in, out, sizeof out, 1);
    CHECK(out[0] == 0x4201);
    CHECK(out[1] == 0x4041);
    CHECK(out[2] == 0x3F82);
    CHECK(out[3] == 0x0000 && out[4] == 0x0400); /* add.ftz.f16 of two subnormals: 0; plain: 2^-14 */
    CHECK(out[5] == 0x0000 && out[6] == 0x0200); /* mul.ftz.f16 to a subnormal: 0; plain: 2^-15 */
    if (out[0] != 0x4201 || out[1] != 0x4041) fprintf(stderr, "  half fma: %#x %#x\n", out[0], out[1]);
    /* the same single rounding for a double written into an f16/bf16 array (Lua numbers are doubles) */
    uint16_t hb = 0, bb = 0;
    mh_dtype_set(MH_F16, &hb, 0, 3.0029296875 - 0x1p-24);
    mh_dtype_set(MH_BF16, &bb, 0, 3.0234375 - 0x1p-40);
    CHECK(hb == 0x4201);
    CHECK(bb == 0x4041);
}

/* cvt to f16/bf16 under .rz/.rm/.rp: between two halves, beyond the largest, negative */
static void half_directed_cvt(void)
{
    static const char src[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry c(.param .u64 pin, .param .u64 pout)\n{\n"
        ".reg .b16 %h<4>;\n.reg .f32 %f<2>;\n.reg .b32 %r<3>;\n.reg .b64 %rd<6>;\n"
        "ld.param.u64 %rd1, [pin];\nld.param.u64 %rd2, [pout];\nmov.u32 %r1, %tid.x;\n"
        "mul.wide.u32 %rd3, %r1, 4;\nadd.s64 %rd4, %rd1, %rd3;\nld.global.f32 %f1, [%rd4];\n"
        "mul.wide.u32 %rd3, %r1, 8;\nadd.s64 %rd5, %rd2, %rd3;\n"
        "cvt.rz.f16.f32 %h1, %f1;\ncvt.rm.f16.f32 %h2, %f1;\ncvt.rp.f16.f32 %h3, %f1;\n"
        "st.global.b16 [%rd5], %h1;\nst.global.b16 [%rd5+2], %h2;\nst.global.b16 [%rd5+4], %h3;\n"
        "cvt.rp.bf16.f32 %h1, %f1;\nst.global.b16 [%rd5+6], %h1;\nret;\n}\n";
    enum { NV = 4 };
    const float v[NV] = {1.0f + 0x1p-12f, -(1.0f + 0x1p-12f), 70000.0f, 1.0f + 0x1p-9f};
    /* rz, rm, rp (f16), rp (bf16) */
    const uint16_t want[NV][4] = {{0x3C00, 0x3C00, 0x3C01, 0x3F81},
                                  {0xBC00, 0xBC01, 0xBC00, 0xBF80},
                                  {0x7BFF, 0x7BFF, 0x7C00, 0x4789},
                                  {0x3C02, 0x3C02, 0x3C02, 0x3F81}}; /* exact in f16, not in bf16 */
    uint16_t got[NV][4];
    run_inline(src, "c", v, sizeof v, got, sizeof got, NV);
    for (int i = 0; i < NV; i++)
        for (int k = 0; k < 4; k++) {
            CHECK(got[i][k] == want[i][k]);
            if (got[i][k] != want[i][k]) fprintf(stderr, "  cvt %d of %a: %#x, want %#x\n", k, (double)v[i], got[i][k], want[i][k]);
        }
}

/* cvt to tf32 (an f32's bits, the low 13 mantissa bits zero): .rna ties away from zero, .rn to even,
 * .rz truncates; .satfinite gives the largest tf32 for an infinity or an overflow, .relu +0 for a
 * negative value; NaNs stay NaNs; subnormals round like any value (no flush). Each expected pattern
 * computed by hand from the bits. */
static void tf32_cvt(void)
{
    static const char src[] =
        ".version 8.7\n.target sm_100a\n.address_size 64\n"
        ".visible .entry t(.param .u64 pin, .param .u64 pout)\n{\n"
        ".reg .f32 %f<2>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<6>;\n"
        "ld.param.u64 %rd1, [pin];\nld.param.u64 %rd2, [pout];\nmov.u32 %r1, %tid.x;\n"
        "mul.wide.u32 %rd3, %r1, 4;\nadd.s64 %rd4, %rd1, %rd3;\nld.global.f32 %f1, [%rd4];\n"
        "mul.wide.u32 %rd3, %r1, 32;\nadd.s64 %rd5, %rd2, %rd3;\n"
        "cvt.rna.tf32.f32 %r2, %f1;\ncvt.rna.satfinite.tf32.f32 %r3, %f1;\ncvt.rn.tf32.f32 %r4, %f1;\n"
        "cvt.rz.tf32.f32 %r5, %f1;\ncvt.rn.relu.tf32.f32 %r6, %f1;\ncvt.rz.satfinite.tf32.f32 %r7, %f1;\n"
        "st.global.v4.b32 [%rd5], {%r2, %r3, %r4, %r5};\nst.global.v2.b32 [%rd5+16], {%r6, %r7};\nret;\n}\n";
    enum { NV = 16 };
    const uint32_t v[NV] = {
        0x3f800000, /* 1: exact */
        0x3f801000, /* 1 + 2^-11: the tie between 0x3f800000 (even) and 0x3f802000 */
        0x3f803000, /* the tie between 0x3f802000 (odd) and 0x3f804000 (even) */
        0xbf801000, /* -(1 + 2^-11): a negative tie */
        0x3f800fff, /* just below the tie */
        0x3f801001, /* just above the tie */
        0x7f7fffff, /* the largest f32: rounds up to infinity */
        0x7f800000, /* +inf */
        0xff800000, /* -inf */
        0x7fc00000, /* a quiet NaN */
        0x7f800001, /* a signalling NaN whose payload is all in the dropped bits */
        0xffffffff, /* a negative NaN */
        0x00001000, /* a subnormal tie between 0 and 0x00002000 */
        0x007ff000, /* the largest subnormals' tie: up to the smallest normal */
        0x80003000, /* a negative subnormal tie (to odd 0x80002000 or even 0x80004000) */
        0x80000000, /* -0 */
    };
    /* rna, rna.satfinite, rn, rz, rn.relu, rz.satfinite */
    const uint32_t want[NV][6] = {
        {0x3f800000, 0x3f800000, 0x3f800000, 0x3f800000, 0x3f800000, 0x3f800000},
        {0x3f802000, 0x3f802000, 0x3f800000, 0x3f800000, 0x3f800000, 0x3f800000},
        {0x3f804000, 0x3f804000, 0x3f804000, 0x3f802000, 0x3f804000, 0x3f802000},
        {0xbf802000, 0xbf802000, 0xbf800000, 0xbf800000, 0x00000000, 0xbf800000},
        {0x3f800000, 0x3f800000, 0x3f800000, 0x3f800000, 0x3f800000, 0x3f800000},
        {0x3f802000, 0x3f802000, 0x3f802000, 0x3f800000, 0x3f802000, 0x3f800000},
        {0x7f800000, 0x7f7fe000, 0x7f800000, 0x7f7fe000, 0x7f800000, 0x7f7fe000},
        {0x7f800000, 0x7f7fe000, 0x7f800000, 0x7f800000, 0x7f800000, 0x7f7fe000},
        {0xff800000, 0xff7fe000, 0xff800000, 0xff800000, 0x00000000, 0xff7fe000},
        {0x7fc00000, 0x7fc00000, 0x7fc00000, 0x7fc00000, 0x7fffe000, 0x7fc00000},
        {0x7fc00000, 0x7fc00000, 0x7fc00000, 0x7fc00000, 0x7fffe000, 0x7fc00000},
        {0xffffe000, 0xffffe000, 0xffffe000, 0xffffe000, 0x7fffe000, 0xffffe000},
        {0x00002000, 0x00002000, 0x00000000, 0x00000000, 0x00000000, 0x00000000},
        {0x00800000, 0x00800000, 0x00800000, 0x007fe000, 0x00800000, 0x007fe000},
        {0x80004000, 0x80004000, 0x80004000, 0x80002000, 0x00000000, 0x80002000},
        {0x80000000, 0x80000000, 0x80000000, 0x80000000, 0x00000000, 0x80000000},
    };
    uint32_t got[NV][8];
    run_inline(src, "t", v, sizeof v, got, sizeof got, NV);
    static const char *const form[6] = {"rna", "rna.satfinite", "rn", "rz", "rn.relu", "rz.satfinite"};
    for (int i = 0; i < NV; i++)
        for (int k = 0; k < 6; k++) {
            CHECK(got[i][k] == want[i][k]);
            if (got[i][k] != want[i][k])
                fprintf(stderr, "  cvt.%s.tf32.f32 of %#x: %#x, want %#x\n", form[k], v[i], got[i][k], want[i][k]);
        }
    /* the forms ptxas refuses are refused, naming the line and why */
    static const struct { const char *target, *insn, *why; } bad[] = {
        {"sm_90a", "cvt.tf32.f32 %r1, %f1;", "needs a rounding modifier"},
        {"sm_90a", "cvt.rm.tf32.f32 %r1, %f1;", ".rna, .rn or .rz only"},
        {"sm_90a", "cvt.rna.relu.tf32.f32 %r1, %f1;", ".relu cannot be combined with .rna"},
        {"sm_90a", "cvt.rn.satfinite.tf32.f32 %r1, %f1;", "sm_100"},
        {"sm_80", "cvt.rn.tf32.f32 %r1, %f1;", "sm_90"},
        {"sm_90a", "cvt.rna.tf32.f32 %f1, %f1;", "must be a .b32 register"},
        {"sm_90a", "cvt.rna.ftz.tf32.f32 %r1, %f1;", ".ftz and .sat"},
        {"sm_90a", "cvt.rna.tf32.f16 %r1, %f1;", "from .f32"},
        {"sm_90a", "cvt.rna.f32.tf32 %f1, %r1;", "only a destination type"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, ".version 8.7\n.target %s\n.address_size 64\n.visible .entry k()\n{\n"
                 ".reg .b32 %%r<2>;\n.reg .f32 %%f<2>;\nmov.f32 %%f1, 0f3F800000;\n%s\nret;\n}\n", bad[i].target, bad[i].insn);
        mh_ptx_module m;
        mh_error e;
        int rc = mh_ptx_parse(&m, text, strlen(text), "b.ptx", &e);
        CHECK(rc == MH_E_PTX_SYNTAX);
        if (rc == 0) { fprintf(stderr, "  accepted: %s\n", bad[i].insn); mh_ptx_free(&m); continue; }
        CHECK_CONTAINS(e.message, "b.ptx:9");
        CHECK_CONTAINS(e.message, bad[i].why);
    }
}

/* Two fp8s in 16 bits (sm_89's cvt): from two f32s (a into the upper byte), back to f16x2 and from
 * f16x2, e4m3 (448 largest, no infinities, 0x7f NaN) and e5m2 (57344 largest); .satfinite clamps
 * overflows and infinities, .relu gives +0 for negatives, ties go to even (subnormal ones too).
 * Each expected byte worked out by hand from the formats. */
static void f8x2_cvt(void)
{
    static const char src[] =
        ".version 8.7\n.target sm_90a\n.address_size 64\n"
        ".visible .entry t(.param .u64 pin, .param .u64 pout)\n{\n"
        ".reg .f32 %f<3>;\n.reg .b16 %h<5>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<6>;\n"
        "ld.param.u64 %rd1, [pin];\nld.param.u64 %rd2, [pout];\nmov.u32 %r1, %tid.x;\n"
        "mul.wide.u32 %rd3, %r1, 8;\nadd.s64 %rd4, %rd1, %rd3;\nld.global.v2.f32 {%f1, %f2}, [%rd4];\n"
        "mul.wide.u32 %rd3, %r1, 32;\nadd.s64 %rd5, %rd2, %rd3;\n"
        "cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;\ncvt.rn.satfinite.e5m2x2.f32 %h2, %f1, %f2;\n"
        "cvt.rn.satfinite.relu.e4m3x2.f32 %h3, %f1, %f2;\ncvt.rn.f16x2.e4m3x2 %r2, %h1;\n"
        "cvt.rn.f16x2.e5m2x2 %r3, %h2;\ncvt.rn.relu.f16x2.e4m3x2 %r4, %h1;\ncvt.rn.satfinite.e4m3x2.f16x2 %h4, %r2;\n"
        "st.global.v4.b16 [%rd5], {%h1, %h2, %h3, %h4};\nst.global.v4.b32 [%rd5+16], {%r2, %r3, %r4, %r4};\nret;\n}\n";
    enum { NV = 7 };
    const float inf = INFINITY;
    const float v[NV][2] = {
        {1.0f, -2.0f},
        {1.0625f, 1.1875f},     /* e4m3: ties to 1 (even) and to 1.25 (even); e5m2: 1 and 1.25 */
        {448.0f, 1e6f},         /* e4m3's largest; an overflow clamped */
        {NAN, 0x1p-9f},         /* a NaN; e4m3's smallest subnormal */
        {0x1p-10f, 0x1.8p-9f},  /* subnormal ties: to 0 and to 2 steps (even) */
        {-0.0f, 0x1p-6f},       /* -0; e4m3's smallest normal */
        {-inf, -500.0f},        /* clamped to -448 (e4m3) and -57344; e5m2 rounds 500 to 512 */
    };
    /* e4m3, e5m2, relu e4m3, (e4m3 -> f16x2 -> e4m3 is the first) | e4m3 -> f16x2, e5m2 -> f16x2, relu */
    const uint16_t want_h[NV][3] = {
        {0x38c0, 0x3cc0, 0x3800}, {0x383a, 0x3c3d, 0x383a}, {0x7e7e, 0x5f7b, 0x7e7e}, {0x7f01, 0x7f18, 0x7f01},
        {0x0002, 0x141a, 0x0002}, {0x8008, 0x8024, 0x0008}, {0xfefe, 0xfbe0, 0x0000},
    };
    const uint32_t want_r[NV][3] = {
        {0x3c00c000, 0x3c00c000, 0x3c000000}, {0x3c003d00, 0x3c003d00, 0x3c003d00},
        {0x5f005f00, 0x5f007b00, 0x5f005f00}, {0x7fff1800, 0x7fff1800, 0x7fff1800},
        {0x00001c00, 0x14001a00, 0x00001c00}, {0x80002400, 0x80002400, 0x00002400},
        {0xdf00df00, 0xfb00e000, 0x00000000},
    };
    struct { uint16_t h[4]; uint32_t pad[2], r[4]; } got[NV]; /* 32 bytes a thread, as stored */
    run_inline(src, "t", v, sizeof v, got, sizeof got, NV);
    for (int i = 0; i < NV; i++) {
        for (int k = 0; k < 3; k++) {
            CHECK(got[i].h[k] == want_h[i][k]);
            CHECK(got[i].r[k] == want_r[i][k]);
            if (got[i].h[k] != want_h[i][k] || got[i].r[k] != want_r[i][k])
                fprintf(stderr, "  fp8 cvt %d of (%g, %g): %#x and %#x, want %#x and %#x\n", k, v[i][0], v[i][1],
                        got[i].h[k], got[i].r[k], want_h[i][k], want_r[i][k]);
        }
        CHECK(got[i].h[3] == want_h[i][0]); /* through f16x2 and back */
    }
    static const struct { const char *target, *insn, *why; } bad[] = {
        {"sm_90a", "cvt.rn.e4m3x2.f32 %h1, %f1, %f1;", "needs .satfinite"},
        {"sm_90a", "cvt.rz.satfinite.e4m3x2.f32 %h1, %f1, %f1;", "rounds with .rn"},
        {"sm_90a", "cvt.rn.satfinite.e4m3x2.f32 %h1, %f1;", "takes d, a, b"},
        {"sm_90a", "cvt.rn.satfinite.e5m2x2.f16 %h1, %h1;", "from .f32 or .f16x2"},
        {"sm_90a", "cvt.rn.f32.e4m3x2 %f1, %h1;", "to .f16x2"},
        {"sm_90a", "cvt.rn.satfinite.f16x2.e4m3x2 %r1, %h1;", ".satfinite does not apply"},
        {"sm_80", "cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f1;", "sm_89"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, ".version 8.7\n.target %s\n.address_size 64\n.visible .entry k()\n{\n"
                 ".reg .b16 %%h<2>;\n.reg .b32 %%r<2>;\n.reg .f32 %%f<2>;\n%s\nret;\n}\n", bad[i].target, bad[i].insn);
        mh_ptx_module m;
        mh_error e;
        int rc = mh_ptx_parse(&m, text, strlen(text), "f8.ptx", &e);
        CHECK(rc == MH_E_PTX_SYNTAX);
        if (rc == 0) { fprintf(stderr, "  accepted: %s\n", bad[i].insn); mh_ptx_free(&m); continue; }
        CHECK_CONTAINS(e.message, "f8.ptx:9");
        CHECK_CONTAINS(e.message, bad[i].why);
    }
}

/* min/max.NaN (sm_80): a NaN operand gives the canonical NaN (0x7fffffff, 0x7fff a half) where plain
 * min/max give the other operand; packed halves each on their own. */
/* max.ftz.NaN.f16x2 flushes each subnormal half to zero, as max.ftz.f16 does */
static void minmax_nan_ftz_f16x2(void)
{
    static const char src[] =
        ".version 8.7\n.target sm_90a\n.address_size 64\n"
        ".visible .entry t(.param .u64 pin, .param .u64 pout)\n{\n"
        ".reg .b32 %r<6>;\n.reg .b64 %rd<6>;\n"
        "ld.param.u64 %rd1, [pin];\nld.param.u64 %rd2, [pout];\nmov.u32 %r1, %tid.x;\n"
        "mul.wide.u32 %rd3, %r1, 8;\nadd.s64 %rd4, %rd1, %rd3;\nld.global.v2.b32 {%r2, %r3}, [%rd4];\n"
        "mul.wide.u32 %rd3, %r1, 8;\nadd.s64 %rd5, %rd2, %rd3;\n"
        "max.ftz.NaN.f16x2 %r4, %r2, %r3;\nmax.NaN.f16x2 %r5, %r2, %r3;\n"
        "st.global.v2.b32 [%rd5], {%r4, %r5};\nret;\n}\n";
    /* halves (hi, lo): a = (-tiny, +tiny) subnormals, b = (+0, +0); then a NaN half beside a subnormal */
    const uint32_t v[2][2] = {{0x80010001, 0x00000000}, {0x7e000002, 0x00000000}};
    const uint32_t want[2][2] = {{0x00000000, 0x00000001}, {0x7fff0000, 0x7fff0002}};
    uint32_t got[2][2];
    run_inline(src, "t", v, sizeof v, got, sizeof got, 2);
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++) {
            CHECK(got[i][k] == want[i][k]);
            if (got[i][k] != want[i][k])
                fprintf(stderr, "  max%s.NaN.f16x2 of (%#x, %#x): %#x, want %#x\n", k ? "" : ".ftz", v[i][0], v[i][1],
                        got[i][k], want[i][k]);
        }
}

static void minmax_nan(void)
{
    static const char src[] =
        ".version 8.7\n.target sm_90a\n.address_size 64\n"
        ".visible .entry t(.param .u64 pin, .param .u64 pout)\n{\n"
        ".reg .f32 %f<5>;\n.reg .b32 %r<6>;\n.reg .b64 %rd<6>;\n"
        "ld.param.u64 %rd1, [pin];\nld.param.u64 %rd2, [pout];\nmov.u32 %r1, %tid.x;\n"
        "mul.wide.u32 %rd3, %r1, 8;\nadd.s64 %rd4, %rd1, %rd3;\nld.global.v2.f32 {%f1, %f2}, [%rd4];\n"
        "mul.wide.u32 %rd3, %r1, 16;\nadd.s64 %rd5, %rd2, %rd3;\n"
        "max.NaN.f32 %f3, %f1, %f2;\nmin.NaN.f32 %f4, %f1, %f2;\nmov.b32 %r2, %f1;\nmov.b32 %r3, %f2;\n"
        "max.NaN.f16x2 %r4, %r2, %r3;\nmax.f32 %f1, %f1, %f2;\n"
        "st.global.v2.f32 [%rd5], {%f3, %f4};\nst.global.v2.b32 [%rd5+8], {%r4, %f1};\nret;\n}\n";
    enum { NV = 4 };
    const uint32_t v[NV][2] = {
        {0x3f800000, 0x7fc00000}, /* 1, NaN */
        {0xffc00001, 0x40000000}, /* a negative NaN, 2 */
        {0x3f800000, 0x40000000}, /* 1, 2 (as halves: (1.875, 0) and (2, 0)) */
        {0x7e003c00, 0x3c004000}, /* finite as f32; as halves (NaN, 1) and (1, 2) */
    };
    /* max.NaN, min.NaN, max.NaN.f16x2, plain max */
    const uint32_t want[NV][4] = {
        {0x7fffffff, 0x7fffffff, 0x7fff0000, 0x3f800000},
        {0x7fffffff, 0x7fffffff, 0x7fff0001, 0x40000000},
        {0x40000000, 0x3f800000, 0x40000000, 0x40000000},
        {0x7e003c00, 0x3c004000, 0x7fff4000, 0x7e003c00},
    };
    uint32_t got[NV][4];
    run_inline(src, "t", v, sizeof v, got, sizeof got, NV);
    for (int i = 0; i < NV; i++)
        for (int k = 0; k < 4; k++) {
            CHECK(got[i][k] == want[i][k]);
            if (got[i][k] != want[i][k])
                fprintf(stderr, "  min/max.NaN %d of (%#x, %#x): %#x, want %#x\n", k, v[i][0], v[i][1], got[i][k], want[i][k]);
        }
    static const char bad[] = ".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n"
                              ".reg .f64 %d<2>;\nmax.NaN.f64 %d1, %d1, %d1;\nret;\n}\n";
    mh_ptx_module m;
    mh_error e;
    int rc = mh_ptx_parse(&m, bad, sizeof bad - 1, "n.ptx", &e);
    CHECK(rc == MH_E_PTX_SYNTAX);
    if (rc == 0) mh_ptx_free(&m);
    else CHECK_CONTAINS(e.message, "n.ptx:7");
}

/* bfind (and .shiftamt): the most significant bit that differs from the sign (unsigned: the top set
 * bit), 0xffffffff when there is none, for u32, s32, u64, s64; .shiftamt gives bits - 1 - that. */
static void bfind_bits(void)
{
    static const char src[] =
        ".version 8.7\n.target sm_90a\n.address_size 64\n"
        ".visible .entry t(.param .u64 pin, .param .u64 pout)\n{\n"
        ".reg .b32 %r<12>;\n.reg .b64 %rd<8>;\n"
        "ld.param.u64 %rd1, [pin];\nld.param.u64 %rd2, [pout];\nmov.u32 %r1, %tid.x;\n"
        "mul.wide.u32 %rd3, %r1, 8;\nadd.s64 %rd4, %rd1, %rd3;\nld.global.u64 %rd5, [%rd4];\ncvt.u32.u64 %r2, %rd5;\n"
        "mul.wide.u32 %rd3, %r1, 32;\nadd.s64 %rd6, %rd2, %rd3;\n"
        "bfind.u32 %r3, %r2;\nbfind.s32 %r4, %r2;\nbfind.shiftamt.u32 %r5, %r2;\nbfind.shiftamt.s32 %r6, %r2;\n"
        "bfind.u64 %r7, %rd5;\nbfind.s64 %r8, %rd5;\nbfind.shiftamt.u64 %r9, %rd5;\nbfind.shiftamt.s64 %r10, %rd5;\n"
        "st.global.v4.b32 [%rd6], {%r3, %r4, %r5, %r6};\nst.global.v4.b32 [%rd6+16], {%r7, %r8, %r9, %r10};\nret;\n}\n";
    enum { NV = 6 };
    const uint64_t v[NV] = {0, 1, 0x80000000u, 0xffffffffu, 0x0000000100000010ull, 0xfffffffffffffff0ull};
    /* u32 s32 shiftamt.u32 shiftamt.s32 | u64 s64 shiftamt.u64 shiftamt.s64 */
    const uint32_t want[NV][8] = {
        {~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u},
        {0, 0, 31, 31, 0, 0, 63, 63},
        {31, 30, 0, 1, 31, 31, 32, 32},          /* s32: -2^31, its top non-sign bit is 30 */
        {31, ~0u, 0, ~0u, 31, 31, 32, 32},       /* s32: -1 has none */
        {4, 4, 27, 27, 32, 32, 31, 31},
        {31, 3, 0, 28, 63, 3, 0, 60},            /* -16: the top 0 bit is 3 */
    };
    uint32_t got[NV][8];
    run_inline(src, "t", v, sizeof v, got, sizeof got, NV);
    for (int i = 0; i < NV; i++)
        for (int k = 0; k < 8; k++) {
            CHECK(got[i][k] == want[i][k]);
            if (got[i][k] != want[i][k])
                fprintf(stderr, "  bfind form %d of %#llx: %#x, want %#x\n", k, (unsigned long long)v[i], got[i][k], want[i][k]);
        }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_emu_round SOURCE_DIR\n");
        return 2;
    }
    float a[T], b[T], c[T], fo[T * NF];
    double x[T], y[T], z[T], dout[T * ND];
    long long n[T];
    for (int i = 0; i < T; i++) {
        float s = i & 1 ? -1.0f : 1.0f;
        a[i] = s * (1.0f + (float)i * 0.1234567f);
        b[i] = 3.0f + (float)i * 0.7654321f;
        c[i] = (float)(i % 3 - 1) * 0.3333333f * a[i] * b[i];
        x[i] = (i & 2 ? -1.0 : 1.0) * (1.0 + i * 0.123456789012345);
        y[i] = 3.0 + i * 0.76543210987654321;
        z[i] = (i % 3 - 1) * x[i] * y[i] / 3.0;
        n[i] = (i & 1 ? -1 : 1) * ((1LL << 50) + i * 1234567891LL + 1);
    }
    /* .ftz lanes: subnormal inputs and a subnormal product */
    a[28] = 1e-39f;  b[28] = 2.0f;
    a[29] = 1e-20f;  b[29] = 1e-20f;
    a[30] = -1e-39f; b[30] = 5.0f;
    a[31] = 1.0f;    b[31] = 0x1p-30f;

    mh_ptx_module m;
    mh_error e;
    CHECK(parse_ptx_file(&m, argv[1], "tests/ptx/rounding.ptx") == 0);
    mh_emu *d = mh_emu_create(NULL, &e);
    CHECK(d != NULL);
    uint64_t p[9];
    size_t sz[9] = {sizeof a, sizeof b, sizeof c, sizeof fo, sizeof x, sizeof y, sizeof z, sizeof dout, sizeof n};
    const void *src[9] = {a, b, c, NULL, x, y, z, NULL, n};
    mh_emu_arg args[9];
    for (int k = 0; k < 9; k++) {
        CHECK(mh_emu_alloc(d, sz[k], &p[k], &e) == 0);
        if (src[k]) CHECK(mh_emu_write(d, p[k], src[k], sz[k], &e) == 0);
        args[k].data = &p[k];
        args[k].size = sizeof p[k];
    }
    mh_emu_launch l = {{1, 1, 1}, {T, 1, 1}, 0, args, 9, 0};
    int rc = mh_emu_run(d, &m, "rounding", &l, NULL, &e);
    CHECK(rc == 0);
    if (rc) fprintf(stderr, "  %s\n", e.message);
    mh_emu_read(d, p[3], fo, sizeof fo, &e);
    mh_emu_read(d, p[7], dout, sizeof dout, &e);

    int bad = 0, inexact = 0;
#define EXPECT(cond, what, lane)                                                                      \
    do {                                                                                              \
        if (!(cond)) { bad++; if (bad < 10) fprintf(stderr, "  lane %d: %s wrong\n", lane, what); } \
    } while (0)
    for (int i = 0; i < EXACT_LANES; i++) {
        const float *f = fo + i * NF;
        exact_op add = {'a', a[i], b[i], 0}, mul = {'m', a[i], b[i], 0}, fma3 = {'f', a[i], b[i], c[i]};
        exact_op div = {'d', a[i], b[i], 0}, sq = {'q', fabsf(a[i]), 0, 0}, rcp = {'d', 1, b[i], 0};
        exact_op nar = {'v', x[i], 0, 0}, ll = {'v', (wide)n[i], 0, 0};
        const exact_op *ops[] = {&add, &mul, &fma3, &div, &sq};
        const char *names[] = {"add.f32", "mul.f32", "fma.f32", "div.f32", "sqrt.f32"};
        for (int k = 0; k < 5; k++)
            for (int mode = RZ; mode <= RP; mode++) EXPECT(directed_ok(ops[k], f[3 * k + mode], 1, mode), names[k], i);
        EXPECT(directed_ok(&rcp, f[15], 1, RZ), "rcp.rz.f32", i);
        EXPECT(directed_ok(&nar, f[16], 1, RM), "cvt.rm.f32.f64", i);
        EXPECT(directed_ok(&nar, f[17], 1, RP), "cvt.rp.f32.f64", i);
        EXPECT(directed_ok(&ll, f[18], 1, RZ), "cvt.rz.f32.s64", i);
        EXPECT(directed_ok(&ll, f[19], 1, RP), "cvt.rp.f32.s64", i);
        inexact += f[1] != f[2]; /* the inputs must exercise the modes, not land exactly */
        if (HAVE_WIDE) {
            const double *g = dout + i * ND;
            exact_op dadd = {'a', x[i], y[i], 0}, dmul = {'m', x[i], y[i], 0}, dfma = {'f', x[i], y[i], z[i]};
            exact_op ddiv = {'d', x[i], y[i], 0}, dsq = {'q', fabs(x[i]), 0, 0}, drcp = {'d', 1, y[i], 0};
            exact_op dll = {'v', (wide)n[i] * 1025, 0, 0};
            const exact_op *dops[] = {&dadd, &dmul, &dfma, &ddiv, &dsq};
            const char *dnames[] = {"add.f64", "mul.f64", "fma.f64", "div.f64", "sqrt.f64"};
            for (int k = 0; k < 5; k++)
                for (int mode = RZ; mode <= RP; mode++)
                    EXPECT(directed_ok(dops[k], g[3 * k + mode], 0, mode), dnames[k], i);
            EXPECT(directed_ok(&drcp, g[15], 0, RM), "rcp.rm.f64", i);
            EXPECT(directed_ok(&dll, g[16], 0, RZ), "cvt.rz.f64.s64", i);
            EXPECT(directed_ok(&dll, g[17], 0, RP), "cvt.rp.f64.s64", i);
            inexact += g[1] != g[2];
        }
    }
    CHECK(bad == 0);
    CHECK(inexact >= EXACT_LANES); /* most lanes round: the checks above are not all exact cases */
    if (!HAVE_WIDE) fprintf(stderr, "  note: no binary128 type here, f64 results not checked\n");

    /* .ftz: subnormal inputs and results become zeros of their sign */
    const float *f28 = fo + 28 * NF, *f29 = fo + 29 * NF, *f30 = fo + 30 * NF, *f0 = fo;
    CHECK(f28[20] == 2.0f);                                      /* add.ftz(1e-39, 2) */
    CHECK(f28[21] == 0.0f && !signbit(f28[21]));                 /* mul.ftz(1e-39, 2) */
    CHECK(f28[23] == 0.0f);                                      /* setp.ne.ftz(1e-39, 0) false */
    CHECK(f29[21] == 0.0f && 1e-20f * 1e-20f != 0.0f);           /* subnormal product flushed */
    CHECK(f30[21] == 0.0f && signbit(f30[21]));                  /* -1e-39 * 5 -> -0 */
    CHECK(f30[22] == (float)c[30] || (c[30] == 0 && f30[22] == 0)); /* fma.ftz(-0, 5, c) */
    CHECK(f0[20] == a[0] + b[0] && f0[21] == a[0] * b[0] && f0[23] == 1.0f); /* normal lanes as usual */
    /* sums far below an ulp: 1 + 2^-30, 2 + 1e-39, 5 - 1e-39 in rz, rm, rp */
    const float *f31 = fo + 31 * NF;
    CHECK(f31[0] == 1.0f && f31[1] == 1.0f && f31[2] == nextafterf(1.0f, 2.0f));
    CHECK(f28[0] == 2.0f && f28[1] == 2.0f && f28[2] == nextafterf(2.0f, 3.0f));
    CHECK(f30[0] == nextafterf(5.0f, 0.0f) && f30[1] == nextafterf(5.0f, 0.0f) && f30[2] == 5.0f);
    CHECK(f28[3] == a[28] * 2.0f && f28[4] == f28[3] && f28[5] == f28[3]); /* 1e-39 * 2: exact, subnormal */

    /* half-precision results with a directed mode are refused, naming the line */
    static const char half[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                               ".visible .entry k()\n{\n.reg .b16 %h<3>;\nadd.rz.f16 %h1, %h2, %h2;\nret;\n}\n";
    mh_ptx_module hm;
    if (mh_ptx_parse(&hm, half, sizeof half - 1, "h.ptx", &e) == 0) {
        CHECK(mh_emu_check_module(&hm, &e) == MH_E_PTX_UNSUPPORTED);
        CHECK_CONTAINS(e.message, "h.ptx:7");
        CHECK_CONTAINS(e.message, ".rz");
        mh_ptx_free(&hm);
    } else {
        CHECK_CONTAINS(e.message, "h.ptx:7"); /* the parser refusing it is as good */
    }
    mh_emu_destroy(d);
    mh_ptx_free(&m);
    float_classes();
    half_single_rounding();
    half_directed_cvt();
    tf32_cvt();
    f8x2_cvt();
    minmax_nan();
    minmax_nan_ftz_f16x2();
    bfind_bits();
    return check_report("test_emu_round");
}
