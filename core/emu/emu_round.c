/* emu_round.c - rounding the executor cannot get from plain C arithmetic:
 * the CPU's own IEEE directed modes (fesetround) around one PTX float
 * operation with .rz/.rm/.rp, and the round-to-odd fma that lets f16/bf16
 * results be rounded once. Built with -frounding-math so the compiler
 * neither folds nor moves the arithmetic across the mode switches; the
 * interpreter calls the mode-switching functions only for instructions that
 * carry .rz/.rm/.rp, so its hot path keeps the default mode. */
#include "emu/emu_round.h"
#include "base/fp16.h"
#include "frontend/ptx.h"

#include <fenv.h>
#include <math.h>
#include <string.h>

static int fe_mode(int rnd)
{
    switch (rnd) {
    case MH_RND_RZ: return FE_TOWARDZERO;
    case MH_RND_RM: return FE_DOWNWARD;
    case MH_RND_RP: return FE_UPWARD;
    default: return FE_TONEAREST;
    }
}

static float op32(int op, float a, float b, float c)
{
    switch (op) {
    case 'a': return a + b;
    case 's': return a - b;
    case 'm': return a * b;
    case 'f': return fmaf(a, b, c);
    case 'd': return a / b;
    case 'q': return sqrtf(a);
    case 'r': return 1.0f / a;
    default: return 0;
    }
}

static double op64(int op, double a, double b, double c)
{
    switch (op) {
    case 'a': return a + b;
    case 's': return a - b;
    case 'm': return a * b;
    case 'f': return fma(a, b, c);
    case 'd': return a / b;
    case 'q': return sqrt(a);
    case 'r': return 1.0 / a;
    default: return 0;
    }
}

double mh_round_op(int op, int f64, int rnd, double a, double b, double c)
{
    int old = fegetround();
    fesetround(fe_mode(rnd));
    volatile double r = f64 ? op64(op, a, b, c) : (double)op32(op, (float)a, (float)b, (float)c);
    fesetround(old);
    return r;
}

double mh_round_narrow(int rnd, double x)
{
    int old = fegetround();
    fesetround(fe_mode(rnd));
    volatile float r = (float)x;
    fesetround(old);
    return r;
}

double mh_round_int(int rnd, int to_f32, int is_signed, uint64_t x)
{
    int old = fegetround();
    fesetround(fe_mode(rnd));
    volatile double r;
    if (to_f32) r = is_signed ? (float)(int64_t)x : (float)x;
    else r = is_signed ? (double)(int64_t)x : (double)x;
    fesetround(old);
    return r;
}

double mh_fma_odd(double a, double b, double c)
{
    /* a*b is exact (operands of at most 26 significant bits); the sum's
     * rounding error comes exactly from TwoSum (Knuth), so no mode switch */
    double p = a * b, s = p + c;
    if (!isfinite(s)) return s;
    double bv = s - p, e = (p - (s - bv)) + (c - bv);
    if (e == 0) return s;
    uint64_t u;
    memcpy(&u, &s, 8);
    if ((s > 0) != (e > 0) && s != 0) u -= 1; /* s is past the exact value: one step toward zero */
    u |= 1;                                   /* round to odd */
    memcpy(&s, &u, 8);
    return s;
}

uint32_t mh_round_tf32(uint32_t x, int rnd, int form)
{
    uint32_t sign = x & 0x80000000u, mag = x & 0x7fffffffu;
    if (mag > 0x7f800000u) return (form & MH_CVT_RELU) ? 0x7fffe000u : (x | 0x00400000u) & 0xffffe000u;
    if ((form & MH_CVT_RELU) && sign) return 0;
    if (mag == 0x7f800000u) return (form & MH_CVT_SATFINITE) ? sign | 0x7f7fe000u : x;
    /* the dropped 13 bits decide: adding half an ulp (less one, plus the kept lsb, for ties to even)
     * carries into the kept bits, and from the largest mantissa into the exponent */
    if (rnd == MH_RND_RNA) mag += 0x1000u;
    else if (rnd == MH_RND_RN) mag += 0xfffu + ((mag >> 13) & 1u);
    mag &= 0xffffe000u;
    if (mag >= 0x7f800000u && (form & MH_CVT_SATFINITE)) mag = 0x7f7fe000u;
    return sign | mag;
}

uint32_t mh_f8_from_double(double x, int e5m2, int form)
{
    const int mbits = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7, emin = 1 - bias;
    const double largest = e5m2 ? 57344.0 : 448.0;
    if (isnan(x)) return 0x7f;
    if ((form & MH_CVT_RELU) && signbit(x)) return 0; /* -0 too, as mh_round_tf32 */
    uint32_t sign = signbit(x) ? 0x80u : 0u;
    double a = fabs(x);
    if (a > largest) a = largest; /* .satfinite; an infinity too (rounding cannot bring either back in range) */
    int e = a >= ldexp(1, emin) ? ilogb(a) : emin;
    double step = ldexp(1, e - mbits), r = a / step, whole = floor(r), frac = r - whole; /* all exact */
    if (frac > 0.5 || (frac == 0.5 && fmod(whole, 2) == 1)) whole += 1;
    double v = whole * step;
    if (v > largest) v = largest;
    if (v < ldexp(1, emin)) return sign | (uint32_t)(v / ldexp(1, emin - mbits)); /* subnormal or zero */
    e = ilogb(v);
    return sign | (uint32_t)(e + bias) << mbits | (uint32_t)(v / ldexp(1, e - mbits) - ldexp(1, mbits));
}

uint16_t mh_f16_from_f8(uint32_t byte, int e5m2, int form)
{
    byte &= 0xffu;
    int negative = (byte & 0x80u) != 0;
    uint16_t h;
    if (e5m2) { /* the top byte of an f16 */
        h = (uint16_t)(byte << 8);
        if ((h & 0x7fffu) > 0x7c00u) return 0x7fff;
    } else {
        uint32_t e = byte >> 3 & 15u, m = byte & 7u;
        if (e == 15 && m == 7) return 0x7fff; /* e4m3 has no infinities; S.1111.111 is its NaN */
        double v = e ? ldexp(8 + m, (int)e - 10) : ldexp(m, -9);
        h = (uint16_t)((negative ? 0x8000u : 0u) | mh_double_to_half(v));
    }
    return (form & MH_CVT_RELU) && negative ? 0 : h;
}
