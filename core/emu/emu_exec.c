/* emu_exec.c - one PTX instruction for the lanes of a warp: the arithmetic
 * (integer, floating point with PTX's rounding, conversions, comparisons,
 * bit operations), loads and stores, branches, calls and returns, warp-wide
 * operations (shfl, vote, redux, match), and the cost each one adds to its
 * warp's virtual time.  Barriers, mbarriers, atomics and printf/assert calls
 * are in emu_sync.c. */
#include "emu/emu_internal.h"
#include "emu/emu_memtime.h"
#include "emu/emu_counters.h"
#include "emu/emu_mma.h"
#include "emu/emu_round.h"
#include "frontend/ptx_effects.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The lanes a warp-synchronous instruction (vote, redux, match: its member mask is operand k) combines
 * for lane l: its own member mask, of the lanes that executed it (emask; the others exited: undefined
 * on a GPU); all of them for a form without a mask (vote.ballot). */
static uint32_t lane_members(ctx *c, const warp *w, const mh_ptx_insn *in, int k, int l, uint32_t emask)
{
    return emu_member_mask(c, w, in, k, l) & emask;
}

/* ---- arithmetic ------------------------------------------------------------ */

static uint64_t int_op(const mh_ptx_insn *in, uint64_t a, uint64_t b, uint64_t cc)
{
    mh_ptx_type t = (mh_ptx_type)in->type;
    int bits = mh_ptx_type_bits(t), sgn = mh_ptx_type_is_signed(t);
    int64_t sa = sext(a, bits), sb = sext(b, bits);
    uint64_t ua = a & mask_bits(bits), ub = b & mask_bits(bits);
    switch (in->op) {
    case MH_OP_ADD:
        if ((in->mods & MH_MOD_SAT) && t == MH_PT_S32) {
            int64_t r = sa + sb;
            return (uint64_t)(r > INT32_MAX ? INT32_MAX : r < INT32_MIN ? INT32_MIN : r);
        }
        return a + b;
    case MH_OP_SUB:
        if ((in->mods & MH_MOD_SAT) && t == MH_PT_S32) {
            int64_t r = sa - sb;
            return (uint64_t)(r > INT32_MAX ? INT32_MAX : r < INT32_MIN ? INT32_MIN : r);
        }
        return a - b;
    case MH_OP_MUL:
    case MH_OP_MAD: {
        uint64_t r;
        if (in->mods & MH_MOD_WIDE) r = sgn ? (uint64_t)(sa * sb) : ua * ub;
        else if (in->mods & MH_MOD_HI) {
            if (bits == 64) r = sgn ? (uint64_t)(((__int128)sa * sb) >> 64) : (uint64_t)(((unsigned __int128)ua * ub) >> 64);
            else r = sgn ? (uint64_t)((sa * sb) >> bits) : (ua * ub) >> bits;
        } else r = a * b;
        return in->op == MH_OP_MAD ? r + cc : r;
    }
    case MH_OP_MUL24:
    case MH_OP_MAD24: {
        uint64_t r = sgn ? (uint64_t)(sext(a, 24) * sext(b, 24)) : (ua & 0xffffff) * (ub & 0xffffff);
        if (in->mods & MH_MOD_HI) r >>= 16;
        return in->op == MH_OP_MAD24 ? r + cc : r;
    }
    case MH_OP_DIV:
        if (sgn) return sb == 0 ? ~0ull : (sa == INT64_MIN && sb == -1) ? (uint64_t)sa : (uint64_t)(sa / sb);
        return ub == 0 ? ~0ull : ua / ub;
    case MH_OP_REM:
        if (sgn) return sb == 0 ? (uint64_t)sa : (sb == -1) ? 0 : (uint64_t)(sa % sb);
        return ub == 0 ? ua : ua % ub;
    case MH_OP_MIN: return sgn ? (uint64_t)(sa < sb ? sa : sb) : (ua < ub ? ua : ub);
    case MH_OP_MAX: return sgn ? (uint64_t)(sa > sb ? sa : sb) : (ua > ub ? ua : ub);
    case MH_OP_ABS: return (uint64_t)(sa < 0 ? -sa : sa);
    case MH_OP_NEG: return (uint64_t)-sa;
    case MH_OP_AND: return t == MH_PT_PRED ? (a && b) : a & b;
    case MH_OP_OR: return t == MH_PT_PRED ? (a || b) : a | b;
    case MH_OP_XOR: return t == MH_PT_PRED ? ((a != 0) ^ (b != 0)) : a ^ b;
    case MH_OP_NOT: return t == MH_PT_PRED ? !a : ~a;
    case MH_OP_CNOT: return ua == 0;
    case MH_OP_SHL: { uint64_t s = b & 0xffffffffu; return s >= (uint64_t)bits ? 0 : a << s; }
    case MH_OP_SHR: {
        uint64_t s = b & 0xffffffffu;
        if (sgn) return (uint64_t)(s >= (uint64_t)bits ? (sa < 0 ? -1 : 0) : sa >> s);
        return s >= (uint64_t)bits ? 0 : ua >> s;
    }
    case MH_OP_CLZ: return bits == 64 ? (ua ? (uint64_t)__builtin_clzll(ua) : 64) : (ua ? (uint64_t)__builtin_clz((uint32_t)ua) : 32);
    case MH_OP_POPC: return (uint64_t)__builtin_popcountll(ua);
    case MH_OP_BFIND: { /* the top bit that differs from the sign (unsigned: the top set bit); none: 0xffffffff */
        uint64_t v = sgn && sa < 0 ? ~ua & mask_bits(bits) : ua;
        if (!v) return 0xffffffffu;
        uint64_t pos = 63 - (uint64_t)__builtin_clzll(v);
        return (in->mods & MH_MOD_SHIFTAMT) ? (uint64_t)bits - 1 - pos : pos;
    }
    case MH_OP_BREV: {
        uint64_t r = 0;
        for (int i = 0; i < bits; i++) r |= ((ua >> i) & 1) << (bits - 1 - i);
        return r;
    }
    case MH_OP_BFE: {
        uint32_t pos = (uint32_t)b & 0xff, len = (uint32_t)cc & 0xff;
        if (len == 0) return 0;
        uint64_t field = pos >= (uint32_t)bits ? 0 : ua >> pos;
        if (len < 64) field &= (1ull << len) - 1;
        if (sgn) {
            uint32_t msb = pos + len - 1 >= (uint32_t)bits ? (uint32_t)bits - 1 : pos + len - 1;
            int sbit = (int)((ua >> msb) & 1);
            if (len >= (uint32_t)bits || pos + len > (uint32_t)bits) {
                /* field runs past the top: sign fill from the source's sign bit */
                uint32_t keep = pos >= (uint32_t)bits ? 0 : (uint32_t)bits - pos;
                field = keep >= 64 ? ua >> pos : (ua >> pos) & ((1ull << keep) - 1);
                if (sbit) field |= ~0ull << keep;
                return field;
            }
            if (sbit) field |= ~0ull << len;
        }
        return field;
    }
    default: return 0;
    }
}

/* the op's letter for mh_round_op, or 0 when it has no rounding modifier */
static int round_letter(int op)
{
    switch (op) {
    case MH_OP_ADD: return 'a';
    case MH_OP_SUB: return 's';
    case MH_OP_MUL: return 'm';
    case MH_OP_FMA: case MH_OP_MAD: return 'f';
    case MH_OP_DIV: return 'd';
    case MH_OP_SQRT: return 'q';
    case MH_OP_RCP: return 'r';
    default: return 0;
    }
}

static inline double flt_op_plain(const mh_ptx_insn *in, double a, double b, double cc);

/* .ftz and directed rounding: kept out of the interpreter's hot path */
static __attribute__((noinline, cold)) double flt_op_special(const mh_ptx_insn *in, double a, double b, double cc)
{
    if ((in->mods & MH_MOD_FTZ) && in->type == MH_PT_F16) {
        /* f16 .ftz: subnormal inputs are zeros, and a result that rounds to a subnormal half */
        double r = flt_op_plain(in, mh_ftz(a, 0x1p-14), mh_ftz(b, 0x1p-14), mh_ftz(cc, 0x1p-14));
        uint16_t h = mh_double_to_half(r);
        return (h & 0x7c00) == 0 && (h & 0x3ff) ? copysign(0.0, r) : r;
    }
    int ftz = (in->mods & MH_MOD_FTZ) && in->type == MH_PT_F32;
    if (ftz) { a = mh_ftz32(a); b = mh_ftz32(b); cc = mh_ftz32(cc); }
    double r;
    if (in->rnd >= MH_RND_RZ && in->rnd <= MH_RND_RP && round_letter(in->op)) {
        /* directed rounding: only f32/f64 get here (mh_emu_check_module refuses the rest) */
        r = mh_round_op(round_letter(in->op), in->type == MH_PT_F64, in->rnd, a, b, cc);
        if (in->mods & MH_MOD_SAT) r = isnan(r) ? 0 : r < 0 ? 0 : r > 1 ? 1 : r;
    } else {
        r = flt_op_plain(in, a, b, cc);
    }
    return ftz ? mh_ftz32(r) : r;
}

static inline int flt_special(const mh_ptx_insn *in)
{
    return (in->mods & MH_MOD_FTZ) || (in->rnd >= MH_RND_RZ && in->rnd <= MH_RND_RP);
}

static inline double flt_op(const mh_ptx_insn *in, double a, double b, double cc)
{
    return flt_special(in) ? flt_op_special(in, a, b, cc) : flt_op_plain(in, a, b, cc);
}

static inline double flt_op_plain(const mh_ptx_insn *in, double a, double b, double cc)
{
    double r;
    switch (in->op) {
    /* a sum of two halves is exact in f64 or, when their bits lie more than 53
     * apart, cannot sit on a tie of the half type: one rounding (fput's) */
    case MH_OP_ADD: r = a + b; break;
    case MH_OP_SUB: r = a - b; break;
    case MH_OP_MUL: r = a * b; break;
    case MH_OP_FMA:
    case MH_OP_MAD:
        r = in->type == MH_PT_F64 ? fma(a, b, cc)
            : in->type == MH_PT_F32 ? (double)fmaf((float)a, (float)b, (float)cc)
            : mh_fma_odd(a, b, cc); /* f16/bf16: the caller's rounding to the half is the only one */
        break;
    case MH_OP_DIV: r = a / b; break;
    case MH_OP_MIN: r = isnan(a) ? b : isnan(b) ? a : (a < b || (a == b && signbit(a))) ? a : b; break;
    case MH_OP_MAX: r = isnan(a) ? b : isnan(b) ? a : (a > b || (a == b && !signbit(a))) ? a : b; break;
    case MH_OP_ABS: r = fabs(a); break;
    case MH_OP_NEG: r = -a; break;
    case MH_OP_SQRT: r = sqrt(a); break;
    case MH_OP_RSQRT: r = 1.0 / sqrt(a); break;
    case MH_OP_RCP: r = 1.0 / a; break;
    case MH_OP_EX2: r = exp2(a); break;
    case MH_OP_LG2: r = log2(a); break;
    case MH_OP_SIN: r = sin(a); break;
    case MH_OP_COS: r = cos(a); break;
    case MH_OP_TANH: r = tanh(a); break;
    case MH_OP_COPYSIGN: r = copysign(b, a); break;
    default: r = 0;
    }
    if (in->type == MH_PT_F32 && in->op != MH_OP_FMA && in->op != MH_OP_MAD) r = (float)r;
    if (in->mods & MH_MOD_SAT) r = isnan(r) ? 0 : r < 0 ? 0 : r > 1 ? 1 : r;
    return r;
}

/* min/max.NaN of a and b of type t (f32, or f16/bf16 and their packed pairs, each half on its own): the
 * canonical NaN of the type if either is a NaN, else plain min/max */
static uint64_t minmax_nan(const mh_ptx_insn *in, mh_ptx_type t, uint64_t a, uint64_t b)
{
    if (t == MH_PT_F16X2 || t == MH_PT_BF16X2) {
        mh_ptx_type h = t == MH_PT_F16X2 ? MH_PT_F16 : MH_PT_BF16;
        mh_ptx_insn half = *in; /* each half as the scalar form, so .ftz flushes a subnormal half as min.ftz.f16 does */
        half.type = h;
        return minmax_nan(&half, h, a >> 16 & 0xffff, b >> 16 & 0xffff) << 16 | minmax_nan(&half, h, a & 0xffff, b & 0xffff);
    }
    double x = fget(a, t), y = fget(b, t);
    if (isnan(x) || isnan(y)) return t == MH_PT_F32 ? 0x7fffffffu : 0x7fffu;
    return fput(flt_op(in, x, y, 0), t);
}

/* setp/set: a comparison result combined with predicate p (BoolOp 1 and, 2 or, 3 xor) */
static inline int bool_op(int op, int r, int p) { return op == 1 ? r && p : op == 2 ? r || p : r ^ p; }

/* What set writes for true into a destination (or a half) of type t: 1.0 of a
 * float type, all ones otherwise. */
static uint64_t set_true(mh_ptx_type t)
{
    return t == MH_PT_F32 ? mh_f32_bits(1.0f) : t == MH_PT_F16 ? 0x3c00 : t == MH_PT_BF16 ? 0x3f80 : mask_bits(mh_ptx_type_bits(t));
}

static int compare(mh_ptx_cmp cmp, mh_ptx_type t, uint64_t a, uint64_t b, int ftz)
{
    if (mh_ptx_type_is_float(t)) {
        double x = fget(a, t), y = fget(b, t);
        if (ftz && t == MH_PT_F32) { x = mh_ftz32(x); y = mh_ftz32(y); }
        if (ftz && t == MH_PT_F16) { /* subnormal halves compare as zeros */
            if (fabs(x) < 0x1p-14) x = copysign(0.0, x);
            if (fabs(y) < 0x1p-14) y = copysign(0.0, y);
        }
        int un = isnan(x) || isnan(y);
        switch (cmp) {
        case MH_CMP_EQ: return !un && x == y;
        case MH_CMP_NE: return !un && x != y;
        case MH_CMP_LT: return !un && x < y;
        case MH_CMP_LE: return !un && x <= y;
        case MH_CMP_GT: return !un && x > y;
        case MH_CMP_GE: return !un && x >= y;
        case MH_CMP_EQU: return un || x == y;
        case MH_CMP_NEU: return un || x != y;
        case MH_CMP_LTU: return un || x < y;
        case MH_CMP_LEU: return un || x <= y;
        case MH_CMP_GTU: return un || x > y;
        case MH_CMP_GEU: return un || x >= y;
        case MH_CMP_NUM: return !un;
        case MH_CMP_NAN: return un;
        default: return 0;
        }
    }
    int bits = mh_ptx_type_bits(t);
    int64_t sa = sext(a, bits), sb = sext(b, bits);
    uint64_t ua = a & mask_bits(bits), ub = b & mask_bits(bits);
    int sgn = mh_ptx_type_is_signed(t);
    switch (cmp) {
    case MH_CMP_EQ: return ua == ub;
    case MH_CMP_NE: return ua != ub;
    case MH_CMP_LT: return sgn ? sa < sb : ua < ub;
    case MH_CMP_LE: return sgn ? sa <= sb : ua <= ub;
    case MH_CMP_GT: return sgn ? sa > sb : ua > ub;
    case MH_CMP_GE: return sgn ? sa >= sb : ua >= ub;
    case MH_CMP_LO: return ua < ub;
    case MH_CMP_LS: return ua <= ub;
    case MH_CMP_HI: return ua > ub;
    case MH_CMP_HS: return ua >= ub;
    default: return 0;
    }
}

static double round_int(double x, int rnd)
{
    switch (rnd) {
    case MH_RND_RNI: return nearbyint(x);
    case MH_RND_RZI: return trunc(x);
    case MH_RND_RMI: return floor(x);
    case MH_RND_RPI: return ceil(x);
    default: return x;
    }
}

/* d to f16 (bf = 0) or bf16 under .rz/.rm/.rp: the nearest half, moved one
 * step toward d's other side when it lies past d in the mode's direction */
static uint16_t half_directed(double d, int rnd, int bf)
{
    uint16_t h = bf ? mh_double_to_bf16(d) : mh_double_to_half(d);
    double v = bf ? mh_bf16_to_float(h) : mh_half_to_float(h);
    if (isnan(d) || v == d) return h;
    int move = rnd == MH_RND_RZ ? fabs(v) > fabs(d) : rnd == MH_RND_RM ? v > d : v < d;
    if (!move) return h;
    int toward_minus = v > d, negative = (h & 0x8000) != 0;
    /* sign-magnitude bits: a larger magnitude is one more */
    return (uint16_t)(toward_minus == negative ? h + 1 : h - 1);
}

/* cvt: value a of type `from` converted to `to`. */
static uint64_t convert(const mh_ptx_insn *in, uint64_t a)
{
    if (in->cmp & MH_CVT_TF32) return mh_round_tf32((uint32_t)a, in->rnd, in->cmp); /* f32 to tf32's bits */
    mh_ptx_type to = (mh_ptx_type)in->type, from = (mh_ptx_type)in->type2;
    int tb = mh_ptx_type_bits(to), fb = mh_ptx_type_bits(from);
    if (!mh_ptx_type_is_float(from) && !mh_ptx_type_is_float(to)) {
        int64_t sv = mh_ptx_type_is_signed(from) ? sext(a, fb) : (int64_t)(a & mask_bits(fb));
        int from_unsigned_big = !mh_ptx_type_is_signed(from) && fb == 64 && (a >> 63);
        if (in->mods & MH_MOD_SAT) {
            if (mh_ptx_type_is_signed(to)) {
                int64_t lo = -(int64_t)(1ull << (tb - 1)), hi = (int64_t)((1ull << (tb - 1)) - 1);
                if (from_unsigned_big || sv > hi) return (uint64_t)hi;
                if (sv < lo) return (uint64_t)lo;
            } else {
                uint64_t hi = mask_bits(tb);
                if (!from_unsigned_big && sv < 0) return 0;
                if (from_unsigned_big ? a > hi : (uint64_t)sv > hi) return hi;
            }
        }
        return (uint64_t)sv;
    }
    int ftz = (in->mods & MH_MOD_FTZ) != 0;
    int directed = in->rnd >= MH_RND_RZ && in->rnd <= MH_RND_RP;
    if (mh_ptx_type_is_float(from) && !mh_ptx_type_is_float(to)) {
        double x = fget(a, from);
        if (ftz && from == MH_PT_F32) x = mh_ftz32(x);
        x = round_int(x, in->rnd ? in->rnd : MH_RND_RZI);
        if (isnan(x)) return 0;
        if (mh_ptx_type_is_signed(to)) {
            double lo = -ldexp(1, tb - 1), hi = ldexp(1, tb - 1) - 1;
            return (uint64_t)(int64_t)(x < lo ? lo : x > hi ? hi : x);
        }
        double hi = ldexp(1, tb) - 1;
        if (x <= 0) return 0;
        if (x >= hi) return mask_bits(tb);
        return (uint64_t)x;
    }
    if (!mh_ptx_type_is_float(from)) {
        int sgn = mh_ptx_type_is_signed(from);
        uint64_t v = sgn ? (uint64_t)sext(a, fb) : a & mask_bits(fb); /* the integer in 64 bits */
        double x = sgn ? (double)(int64_t)v : (double)v;                /* exact below 2^53 */
        if (directed && (to == MH_PT_F16 || to == MH_PT_BF16)) return half_directed(x, in->rnd, to == MH_PT_BF16);
        if (directed) return fput(mh_round_int(in->rnd, to == MH_PT_F32, sgn, v), to);
        if (fb == 64 && to == MH_PT_F32) /* one rounding, not two through double */
            return mh_f32_bits(sgn ? (float)(int64_t)v : (float)v);
        return fput(x, to);
    }
    double x = fget(a, from);
    if (ftz && from == MH_PT_F32) x = mh_ftz32(x);
    if (in->rnd >= MH_RND_RNI) x = round_int(x, in->rnd);
    if (directed && from == MH_PT_F64 && to == MH_PT_F32) x = mh_round_narrow(in->rnd, x);
    if (directed && (to == MH_PT_F16 || to == MH_PT_BF16) && !(in->mods & MH_MOD_SAT))
        return half_directed(x, in->rnd, to == MH_PT_BF16);
    if (in->mods & MH_MOD_SAT) x = isnan(x) ? 0 : x < 0 ? 0 : x > 1 ? 1 : x;
    if (ftz && to == MH_PT_F32) x = mh_ftz32((float)x);
    return fput(x, to);
}

static uint32_t prmt(uint32_t a, uint32_t b, uint32_t sel)
{
    uint64_t src = (uint64_t)b << 32 | a;
    uint32_t r = 0;
    for (int i = 0; i < 4; i++) {
        uint32_t s = (sel >> (4 * i)) & 0xf;
        uint8_t byte = (uint8_t)(src >> (8 * (s & 7)));
        if (s & 8) byte = (byte & 0x80) ? 0xff : 0;
        r |= (uint32_t)byte << (8 * i);
    }
    return r;
}

/* ---- the memory system's time ---------------------------------------------- */
/* A warp's memory access goes through its SM's memory pipe (L1 and shared memory, one
 * wavefront of 128 bytes a cycle, as Hopper's 128 B/clk/SM): it waits until the pipe is
 * free, occupies it one cycle per wavefront, and then its fixed latency follows (2 cycles
 * shared, 8 global, local, generic; the costs table in docs/DESIGN.md "emu's virtual time").
 * A global, local or generic access takes one wavefront per distinct 128-byte line its lanes
 * touch (a coalesced warp of 4-byte loads: 1; a stride of 128 bytes: 32), a shared one the
 * wavefronts of emu_counters.h's rule (bank conflicts serialise: a 32-way conflict is 32).
 * What the warp pays beyond the fixed latency: the wait for the pipe and wf - 1 (emu_pipe_cost). */

/* Distinct blocks of 2^shift bytes among n addresses (128-byte lines: 7, 32-byte sectors: 5): in
 * address order (the common case) the steps between neighbours, in a loop that vectorises;
 * otherwise exactly, on a copy (a[] is left as it is). */
static uint32_t blocks_of(const uint64_t *a, uint32_t n, int shift)
{
    uint64_t back = 0, steps = 0;
    for (uint32_t i = 1; i < n; i++) {
        back |= a[i] < a[i - 1];
        steps += (a[i] >> shift) != (a[i - 1] >> shift);
    }
    if (!back) return n ? (uint32_t)steps + 1 : 0;
    uint64_t b[WARP];
    for (uint32_t i = 0; i < n; i++) b[i] = a[i] >> shift;
    return mh_ct_distinct(b, n);
}

/* A load's kind for the memory hierarchy: ld.cg is cached in L2, not in L1 */
static inline int ld_op(const mh_ptx_insn *in) { return in->mods & MH_MOD_CG ? EMU_MT_LD_CG : EMU_MT_LD; }

/* The most lanes of the k at sa[] on one word (a read-modify-write in shared memory does them one
 * after another: a wavefront each, where lanes reading one word get it in one broadcast). */
static uint32_t same_word_lanes(const uint64_t *sa, uint32_t k)
{
    uint32_t most = k ? 1 : 0;
    for (uint32_t i = 0; i + most < k; i++) {
        uint32_t n = 1;
        for (uint32_t j = i + 1; j < k; j++) n += sa[j] == sa[i];
        if (n > most) most = n;
    }
    return most;
}

/* The cost beyond the issue of an access (op: EMU_MT_LD, _LD_CG, _ST, _ATOM, _ASYNC; | EMU_MT_RMW for atom and red) of `size` bytes a
 * lane at the addresses ad[] of the lanes in emask, in `space` (generic: the space of the first
 * lane's address): the memory pipe's, then the latency and queueing of the memory hierarchy
 * (emu_memtime.c, the device model's parameters). */
static uint64_t access_cost(ctx *c, int space, uint64_t *ad, uint32_t emask, uint32_t size, int op)
{
    if (!emask) return 0;
    int rmw = op & EMU_MT_RMW;
    op &= ~EMU_MT_RMW;
    uint64_t a0 = ad[__builtin_ctz(emask)];
    if (space == MH_SP_GENERIC)
        space = a0 - SHARED_WIN < WIN_SIZE ? MH_SP_SHARED : a0 - LOCAL_WIN < WIN_SIZE ? MH_SP_LOCAL : MH_SP_GLOBAL;
    uint32_t n = (uint32_t)__builtin_popcount(emask), wf;
    if (space == MH_SP_LOCAL) { /* the lanes' words interleave: each 4-byte word of a lane is 4 bytes of a line */
        wf = (size * n + 127) / 128;
    } else if (space == MH_SP_SHARED) {
        uint64_t sa[WARP];
        uint8_t sl[WARP];
        uint32_t k = 0, phases;
        for (int l = 0; l < WARP; l++)
            if (emask >> l & 1) {
                sa[k] = ad[l] >= SHARED_WIN ? ad[l] - SHARED_WIN : ad[l];
                sl[k++] = (uint8_t)l;
            }
        wf = mh_ct_wavefronts(sa, sl, k, size, &phases);
        if (rmw) {
            uint32_t same = same_word_lanes(sa, k);
            if (same > wf) wf = same;
        }
        return emu_pipe_cost(c, wf ? wf : 1) + emu_mt_shared(c, sa, k, size, op);
    } else {
        uint64_t ga[WARP];
        uint32_t k = 0;
        for (int l = 0; l < WARP; l++)
            if (emask >> l & 1) ga[k++] = ad[l];
        wf = blocks_of(ga, k, 7);
        return emu_pipe_cost(c, wf ? wf : 1) + emu_mt_global(c, ga, k, size, op);
    }
    uint64_t la[WARP]; /* local: through L1 and L2 as global memory is, the lanes' words side by side */
    uint32_t k = 0;
    for (; k < n; k++) la[k] = a0 + (uint64_t)k * size;
    return emu_pipe_cost(c, wf ? wf : 1) + emu_mt_global(c, la, k, size, op);
}

/* The bytes a lane accesses in an emu_fast_mem kind: 4 or 8 a element, 1, 2 or 4 elements. */
static inline uint32_t fk_mem_bytes(uint8_t kind) { return (kind & 4 ? 8u : 4u) << (kind & 3); }

/* A converged warp's ld/st.global (or generic) of emu_fast_mem's kinds (emu_fast.c decided the
 * operands' shapes once): every lane inside the allocation the instruction touched last time and
 * aligned, one range test for the warp instead of a lookup per lane.  The lanes' addresses go to
 * ad[]; the allocation, or NULL when it is not that case (the general path then runs and reports
 * what is wrong), with nothing touched. */
static const alloc *mem_addrs(const ctx *c, const warp *w, const mh_ptx_insn *in, uint8_t kind, uint64_t *ad)
{
    const alloc *al = c->icache[in - c->code];
    if (!al) return NULL;
    const mh_ptx_opnd *ao = &in->o[kind & 0x10 ? 0 : 1];
    uint64_t size = fk_mem_bytes(kind);
    const uint64_t *base = &REG(w, ao->reg, 0);
    uint64_t lo = UINT64_MAX, hi = 0, any = 0;
    for (int l = 0; l < WARP; l++) {
        uint64_t a = base[l] + (uint64_t)ao->imm;
        ad[l] = a;
        lo = a < lo ? a : lo;
        hi = a > hi ? a : hi;
        any |= a;
    }
    if ((any & (size - 1)) || lo < al->addr || al->size < size || hi - al->addr > al->size - size) return NULL;
    return al;
}

/* The copy itself, element by element of the vector (each a loop over the lanes, into or out of
 * a register's row); STORE, N, EB and SGN are constants where it is inlined.  Lanes' ranges are
 * aligned to their size, so they coincide or are disjoint: a higher lane's store wins, as in the
 * general path's lane order. */
static inline __attribute__((always_inline)) void mem_copy(warp *w, const mh_ptx_insn *in, const alloc *al,
                                                           const uint64_t *ad, int store, int n, int eb, int sgn)
{
    const mh_ptx_opnd *vo = &in->o[store ? 1 : 0];
    unsigned char *host = al->host - al->addr;
    int contig = 1; /* lane l at lane 0's address + l x the access (a coalesced warp): a constant stride,
                     * which the loops below (unswitched on it) vectorise */
    for (int l = 0; l < WARP; l++) contig &= ad[l] == ad[0] + (uint64_t)(l * n * eb);
    unsigned char *p0 = host + ad[0];
#define AT(l, k) ((contig ? p0 + (l) * n * eb : host + ad[l]) + (k) * eb)
    for (int k = 0; k < n; k++) {
        uint32_t r = vo->kind == MH_OPK_VEC ? vo->vec[k] : vo->reg;
        if (store) {
            if (vo->kind == MH_OPK_IMM || r == UINT32_MAX) {
                uint64_t v = vo->kind == MH_OPK_IMM ? (uint64_t)vo->imm : 0;
                for (int l = 0; l < WARP; l++) st_elem(AT(l, k), v, eb);
            } else {
                const uint64_t *row = &REG(w, r, 0);
                for (int l = 0; l < WARP; l++) st_elem(AT(l, k), row[l], eb);
            }
        } else if (r != UINT32_MAX) {
            uint64_t *row = &REG(w, r, 0);
            for (int l = 0; l < WARP; l++) {
                uint64_t v = ld_elem(AT(l, k), eb);
                row[l] = sgn ? (uint64_t)(int64_t)(int32_t)(uint32_t)v : v;
            }
        }
    }
#undef AT
}

static void mem_copy_kind(warp *w, const mh_ptx_insn *in, uint8_t kind, const alloc *al, const uint64_t *ad)
{
    switch (kind & 0x1f) { /* store << 4 | signed << 3 | 8-byte << 2 | log2(n) */
    case 0x00: mem_copy(w, in, al, ad, 0, 1, 4, 0); break;
    case 0x01: mem_copy(w, in, al, ad, 0, 2, 4, 0); break;
    case 0x02: mem_copy(w, in, al, ad, 0, 4, 4, 0); break;
    case 0x04: mem_copy(w, in, al, ad, 0, 1, 8, 0); break;
    case 0x05: mem_copy(w, in, al, ad, 0, 2, 8, 0); break;
    case 0x06: mem_copy(w, in, al, ad, 0, 4, 8, 0); break;
    case 0x08: mem_copy(w, in, al, ad, 0, 1, 4, 1); break;
    case 0x09: mem_copy(w, in, al, ad, 0, 2, 4, 1); break;
    case 0x0a: mem_copy(w, in, al, ad, 0, 4, 4, 1); break;
    case 0x10: mem_copy(w, in, al, ad, 1, 1, 4, 0); break;
    case 0x11: mem_copy(w, in, al, ad, 1, 2, 4, 0); break;
    case 0x12: mem_copy(w, in, al, ad, 1, 4, 4, 0); break;
    case 0x14: mem_copy(w, in, al, ad, 1, 1, 8, 0); break;
    case 0x15: mem_copy(w, in, al, ad, 1, 2, 8, 0); break;
    default: mem_copy(w, in, al, ad, 1, 4, 8, 0); break; /* 0x16 */
    }
}

/* The general path's use (a converged warp, strict mode on or the step not taken): 1 when done. */
static int fast_global(ctx *c, warp *w, const mh_ptx_insn *in, uint64_t *ad)
{
    uint8_t kind = c->fast[in - c->code];
    const alloc *al = kind >= EMU_FK_MEM ? mem_addrs(c, w, in, kind, ad) : NULL;
    if (!al) return 0;
    mem_copy_kind(w, in, kind, al, ad);
    return 1;
}

/* A converged warp's ld/st.shared at [register + offset] of its own block's shared memory, every
 * lane aligned and inside it: one check for the warp, then the copy in the general path's lane
 * order (a higher lane's store wins), instead of emu_mem a lane; what emu_mem counts (c->writes, a
 * lane each) too.  0 (nothing touched) when it is not that case: the general path runs and faults. */
static int fast_shared(ctx *c, warp *w, const mh_ptx_insn *in, uint64_t *ad, int store)
{
    const mh_ptx_opnd *ao = &in->o[store ? 0 : 1], *vo = &in->o[store ? 1 : 0];
    if (in->space != MH_SP_SHARED || ao->kind != MH_OPK_ADDR || ao->reg == UINT32_MAX || ao->sym >= 0 || ao->param >= 0)
        return 0;
    mh_ptx_type t = (mh_ptx_type)in->type;
    uint32_t eb = (uint32_t)elem_bytes(t), n = in->vec ? in->vec : 1, size = eb * n;
    if (vo->kind == MH_OPK_VEC ? vo->n != (int)n : n != 1) return 0;
    const uint64_t *base = &REG(w, ao->reg, 0);
    uint64_t bad = 0, lim = c->shared_size >= size ? c->shared_size - size : 0;
    for (int l = 0; l < WARP; l++) {
        uint64_t a = base[l] + (uint64_t)ao->imm;
        ad[l] = a;
        bad |= (a > lim) | (c->shared_size < size) | ((a & (size - 1)) != 0);
    }
    if (bad) return 0;
    unsigned char *sh = c->shared;
    c->writes += store ? WARP : 0;
    /* element by element of the vector, each a loop over the lanes (lanes' ranges are aligned to
     * their size: they coincide or are disjoint, so the lane order within an element decides) */
    for (uint32_t k = 0; k < n; k++) {
        uint32_t r = vo->kind == MH_OPK_VEC ? vo->vec[k] : vo->reg;
        if (store) {
            if (vo->kind != MH_OPK_VEC && !(vo->kind == MH_OPK_REG && !vo->neg)) { /* a scalar not a plain register */
                for (int l = 0; l < WARP; l++) st_elem(sh + ad[l], val(c, w, vo, l), (int)eb);
            } else if (r == UINT32_MAX || (vo->kind == MH_OPK_VEC && (r & MH_PTX_VEC_SREG))) {
                for (int l = 0; l < WARP; l++)
                    st_elem(sh + ad[l] + k * eb, r == UINT32_MAX ? 0 : emu_sreg(c, w, r & ~MH_PTX_VEC_SREG, l), (int)eb);
            } else {
                const uint64_t *row = &REG(w, r, 0);
                for (int l = 0; l < WARP; l++) st_elem(sh + ad[l] + k * eb, row[l], (int)eb);
            }
        } else if (r != UINT32_MAX) {
            uint64_t *row = &REG(w, r, 0);
            for (int l = 0; l < WARP; l++) row[l] = reg_value(ld_elem(sh + ad[l] + k * eb, (int)eb), t);
        }
    }
    return 1;
}

int emu_fast_shared(ctx *c, warp *w, const mh_ptx_insn *in)
{
    uint64_t ad[WARP];
    int store = in->op == MH_OP_ST;
    if (!fast_shared(c, w, in, ad, store)) return 0;
    /* what emu_exec_insn's MH_OP_LD / MH_OP_ST add for a converged, unguarded warp, in its order */
    uint32_t size = (uint32_t)(elem_bytes((mh_ptx_type)in->type) * in->vec);
    c->warp_insns++;
    c->thread_insns += WARP;
    c->cost = 1;
    if (store) {
        c->progress++;
        c->cost += access_cost(c, MH_SP_SHARED, ad, 0xffffffffu, size, EMU_MT_ST);
    } else {
        note_load(c, w, MH_SP_SHARED, ad[0]);
        c->cost += access_cost(c, MH_SP_SHARED, ad, 0xffffffffu, size, ld_op(in));
    }
    return 1;
}

int emu_fast_mem(ctx *c, warp *w, const mh_ptx_insn *in, uint8_t kind)
{
    uint64_t ad[WARP];
    const alloc *al = mem_addrs(c, w, in, kind, ad);
    if (!al) return 0;
    if (c->counts) { /* what emu_count_insn counts for a whole warp's global access */
        uint64_t *v = c->counts + (size_t)(in - c->code) * MH_CT_COUNT;
        int r = kind & 0x10 ? MH_CT_GST_REQ : MH_CT_GLD_REQ;
        v[MH_CT_INST]++;
        v[MH_CT_THREAD_INST] += WARP;
        v[MH_CT_PRED_ON] += WARP;
        v[r]++;
        v[r + 1] += blocks_of(ad, WARP, 5);
        v[r + 2] += (uint64_t)WARP * fk_mem_bytes(kind);
    }
    c->warp_insns++;
    c->thread_insns += WARP;
    int op = kind & 0x10 ? EMU_MT_ST : ld_op(in);
    emu_mt_prefetch(c, ad, WARP, op); /* the memory model's sets on their way while the data is copied */
    mem_copy_kind(w, in, kind, al, ad);
    /* what the general path costs and records: its issue, the memory pipe, the memory hierarchy */
    c->cost = 1;
    if (kind & 0x10) c->progress++;
    else note_load(c, w, in->space, ad[0]);
    c->cost += emu_pipe_cost(c, blocks_of(ad, WARP, 7)); /* access_cost's for a global access of the whole warp */
    c->cost += emu_mt_global(c, ad, WARP, fk_mem_bytes(kind), op);
    if (__builtin_expect(c->counts != NULL, 0)) emu_stall_issue(c, w, c->now); /* its stall reasons */
    return 1;
}

/* ---- one instruction for the lanes in `mask` ------------------------------- */

/* Host pointer of a .param access: kernel parameters, a .func's formal
 * parameters or returns, or a call-sequence variable. */
static unsigned char *param_ptr(ctx *c, const warp *w, int lane, const mh_ptx_opnd *o, uint32_t size, int write)
{
    uint32_t fi = c->insn_func[c->cur - c->code];
    const mh_ptx_func *F = &c->m->funcs[fi];
    uint64_t off = (uint64_t)o->imm, limit;
    unsigned char *base;
    const char *what;
    if (o->sym >= 0) {
        const mh_ptx_var *v = &c->m->vars[o->sym];
        if (v->space != MH_SP_PARAM || v->func < 0) /* ld.param [a_shared_variable] */
            return emu_fault(c, w, lane, "%s.param of %s, which is a %s variable, not a parameter", write ? "st" : "ld",
                         v->name, emu_space_name(v->space));
        base = frame(c, w, lane, (uint32_t)v->func, 2) + v->offset;
        limit = v->size;
        what = v->name;
    } else if (o->param >= 0 && F->is_entry) {
        if (write) return emu_fault(c, w, lane, "write to a kernel parameter");
        base = c->params + F->params[o->param].offset;
        limit = F->params[o->param].size;
        what = F->params[o->param].name;
    } else if (o->param >= 0) {
        base = frame(c, w, lane, fi, 0) + F->params[o->param].offset;
        limit = F->params[o->param].size;
        what = F->params[o->param].name;
    } else if (o->param <= -2) {
        const mh_ptx_param *r = &F->rets[-2 - o->param];
        base = frame(c, w, lane, fi, 1) + r->offset;
        limit = r->size;
        what = r->name;
    } else if (F->is_entry && o->reg != UINT32_MAX) { /* [%rd] of a kernel parameter's address (mov %rd, param) */
        off += REG(w, o->reg, lane);
        base = c->params;
        limit = F->param_bytes;
        what = "the kernel's parameters";
    } else {
        return emu_fault(c, w, lane, ".param access through a register is not supported");
    }
    if (off > limit || size > limit - off)
        return emu_fault(c, w, lane, "%s of %u bytes at offset %llu of .param %s (%llu bytes)", write ? "write" : "read", size,
                     (unsigned long long)off, what, (unsigned long long)limit);
    return base + off;
}

/* Returns -1 on a fault; 1 when every lane of mask went on to the same
 * *next pc (and none left the active state); 3 the same from the fast path
 * (no lane's state was touched); 0 otherwise. */
int emu_exec_insn(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t mask, uint32_t *next)
{
    const mh_ptx_type t = (mh_ptx_type)in->type;
    uint32_t emask = mask;
    if (in->guard >= 0) {
        emask = 0;
        for (int l = 0; l < WARP; l++)
            if ((mask >> l & 1) && ((REG(w, (uint32_t)in->guard, l) != 0) ^ in->guard_neg)) emask |= 1u << l;
    }
    if (in->mods & MH_MOD_MARKER) { /* a marker comment: not an instruction, free */
        for (int l = 0; l < WARP; l++)
            if (mask >> l & 1) w->pc[l]++;
        *next = (uint32_t)(c->cur - c->code) + 1;
        return 1;
    }
    c->warp_insns++;
    c->cost += 1;
    uint32_t pc = (uint32_t)(in - c->code);
    if (emask == 0xffffffffu) {
        c->thread_insns += 32;
        uint8_t fk = c->fast[pc];
        if (fk && fk < EMU_FK_MEM) { /* a converged warp's common ALU instruction: one loop over the lanes */
            if (fk >= EMU_FK_CONST) emu_fast_const(c, w, in, pc);
            else emu_fast_exec(w, in, fk);
            for (int l = 0; l < WARP; l++) w->pc[l]++;
            *next = pc + 1;
            return 3;
        }
    } else {
        c->thread_insns += (uint64_t)__builtin_popcount(emask);
    }
    int branch = 0;
    const mh_ptx_opnd *o = in->o;

#define LANES for (int l = 0; l < WARP; l++) if (emask >> l & 1)
    switch (in->op) {
    case MH_OP_NOP: case MH_OP_MEMBAR: case MH_OP_PREFETCH: break;
    case MH_OP_MMA: if (emu_mma_exec(c, w, in, mask, emask)) return -1; break; /* tensor cores: emu_mma.c */
    case MH_OP_TMA: if (emu_tma_exec(c, w, in, emask)) return -1; break; /* bulk copies: emu_tma.c */
    case MH_OP_CLUSTER: if (emu_cluster_exec(c, w, in, emask)) return -1; break; /* clusters: emu_cluster.c */
    case MH_OP_MOV:
        if (o[0].kind == MH_OPK_VEC) { /* unpack */
            int part = mh_ptx_type_bits(t) / o[0].n;
            LANES {
                uint64_t v = val(c, w, &o[1], l);
                for (int k = 0; k < o[0].n; k++)
                    if (o[0].vec[k] != UINT32_MAX) put(c, w, o[0].vec[k], l, (v >> (k * part)) & mask_bits(part), MH_PT_B64);
            }
        } else if (o[1].kind == MH_OPK_VEC) { /* pack */
            int part = mh_ptx_type_bits(t) / o[1].n;
            LANES {
                uint64_t v = 0;
                for (int k = 0; k < o[1].n; k++) {
                    uint32_t r = o[1].vec[k];
                    uint64_t x = r == UINT32_MAX ? 0 : (r & MH_PTX_VEC_SREG) ? emu_sreg(c, w, r & ~MH_PTX_VEC_SREG, l) : REG(w, r, l);
                    v |= (x & mask_bits(part)) << (k * part);
                }
                put(c, w, o[0].reg, l, v, t);
            }
        } else {
            LANES put(c, w, o[0].reg, l, val(c, w, &o[1], l), t);
        }
        break;
    case MH_OP_LD: {
        int eb = elem_bytes(t);
        uint64_t ad[WARP];
        c->cost += in->space == MH_SP_CONST ? 8 : 0; /* the others' latency: access_cost (emu_memtime.c) */
        if (!(emask == 0xffffffffu && (fast_global(c, w, in, ad) || fast_shared(c, w, in, ad, 0)))) LANES {
            unsigned char *p = in->space == MH_SP_PARAM
                                   ? param_ptr(c, w, l, &o[1], (uint32_t)(eb * in->vec), 0)
                                   : mem_fast(c, w, l, in->space, ad[l] = address(c, w, &o[1], l), (uint32_t)(eb * in->vec), 0);
            if (!p) return -1;
            if (o[0].kind == MH_OPK_VEC) {
                for (int k = 0; k < o[0].n; k++)
                    if (o[0].vec[k] != UINT32_MAX) put(c, w, o[0].vec[k], l, ld_elem(p + k * eb, eb), t);
            } else {
                put(c, w, o[0].reg, l, ld_elem(p, eb), t);
            }
        }
        if (emask && in->space != MH_SP_PARAM && in->space != MH_SP_CONST) {
            note_load(c, w, in->space, ad[__builtin_ctz(emask)]);
            c->cost += access_cost(c, in->space, ad, emask, (uint32_t)(eb * in->vec),
                                   ld_op(in));
        }
        break;
    }
    case MH_OP_ST: {
        int eb = elem_bytes(t);
        uint64_t ad[WARP];
        c->cost += in->space == MH_SP_PARAM ? 8 : 0; /* the others': access_cost */
        if (!(emask == 0xffffffffu && (fast_global(c, w, in, ad) || fast_shared(c, w, in, ad, 1)))) LANES {
            unsigned char *p = in->space == MH_SP_PARAM
                                   ? param_ptr(c, w, l, &o[0], (uint32_t)(eb * in->vec), 1)
                                   : mem_fast(c, w, l, in->space, ad[l] = address(c, w, &o[0], l), (uint32_t)(eb * in->vec), 1);
            if (!p) return -1;
            if (o[1].kind == MH_OPK_VEC) {
                for (int k = 0; k < o[1].n; k++) {
                    uint32_t r = o[1].vec[k];
                    uint64_t v = r == UINT32_MAX ? 0 : (r & MH_PTX_VEC_SREG) ? emu_sreg(c, w, r & ~MH_PTX_VEC_SREG, l) : REG(w, r, l);
                    st_elem(p + k * eb, v, eb);
                }
            } else {
                uint64_t v = val(c, w, &o[1], l);
                st_elem(p, v, eb);
            }
        }
        c->progress += in->space != MH_SP_PARAM;
        if (in->space != MH_SP_PARAM) c->cost += access_cost(c, in->space, ad, emask, (uint32_t)(eb * in->vec), EMU_MT_ST);
        break;
    }
    case MH_OP_CVTA:
        LANES {
            uint64_t a = val(c, w, &o[1], l), lin = w->index * WARP + (uint64_t)l;
            if (in->space == MH_SP_SHARED) a = (in->mods & MH_MOD_TO) ? a - SHARED_WIN : a + SHARED_WIN;
            else if (in->space == MH_SP_PARAM) a = (in->mods & MH_MOD_TO) ? a - PARAM_WIN : a + PARAM_WIN;
            else if (in->space == MH_SP_LOCAL)
                a = (in->mods & MH_MOD_TO) ? (a - LOCAL_WIN) % (c->local_stride ? c->local_stride : 1)
                                        : a + LOCAL_WIN + lin * c->local_stride;
            put(c, w, o[0].reg, l, a, t);
        }
        break;
    case MH_OP_CVT:
        if (in->cmp & (MH_CVT_TO_F8X2 | MH_CVT_FROM_F8X2)) { /* two fp8s in 16 bits: a (or a's upper half) high */
            int e5 = (in->cmp & MH_CVT_E5M2) != 0;
            mh_ptx_type from = (mh_ptx_type)in->type2;
            LANES {
                uint64_t a = val(c, w, &o[1], l), r;
                if (in->cmp & MH_CVT_FROM_F8X2)
                    r = (uint64_t)mh_f16_from_f8((uint32_t)a >> 8, e5, in->cmp) << 16 | mh_f16_from_f8((uint32_t)a, e5, in->cmp);
                else if (from == MH_PT_F32)
                    r = mh_f8_from_double(fget(a, MH_PT_F32), e5, in->cmp) << 8 |
                        mh_f8_from_double(fget(val(c, w, &o[2], l), MH_PT_F32), e5, in->cmp);
                else
                    r = mh_f8_from_double(mh_half_to_float((uint16_t)(a >> 16)), e5, in->cmp) << 8 |
                        mh_f8_from_double(mh_half_to_float((uint16_t)a), e5, in->cmp);
                put(c, w, o[0].reg, l, r, t);
            }
            break;
        }
        if ((t == MH_PT_F16X2 || t == MH_PT_BF16X2) && in->nopnds >= 3) {
            /* cvt.rn.f16x2.f32 d, a, b: a rounded into the upper half, b into the lower */
            mh_ptx_type h = t == MH_PT_F16X2 ? MH_PT_F16 : MH_PT_BF16;
            LANES {
                uint64_t hi = fput(fget(val(c, w, &o[1], l), (mh_ptx_type)in->type2), h);
                uint64_t lo = fput(fget(val(c, w, &o[2], l), (mh_ptx_type)in->type2), h);
                put(c, w, o[0].reg, l, hi << 16 | lo, MH_PT_B32);
            }
            break;
        }
        LANES put(c, w, o[0].reg, l, convert(in, val(c, w, &o[1], l)), t);
        break;
    case MH_OP_TESTP: /* testp.class.f32/f64 p, a (the PTX front end took the class) */
        LANES {
            double x = fget(val(c, w, &o[1], l), t);
            int r;
            switch (in->cmp) {
            case MH_TESTP_FINITE: r = isfinite(x); break;
            case MH_TESTP_INFINITE: r = isinf(x); break;
            case MH_TESTP_NUMBER: r = !isnan(x); break;
            case MH_TESTP_NOTANUMBER: r = isnan(x); break;
            case MH_TESTP_NORMAL: r = t == MH_PT_F32 ? isnormal((float)x) : isnormal(x); break;
            default: r = t == MH_PT_F32 ? fpclassify((float)x) == FP_SUBNORMAL : fpclassify(x) == FP_SUBNORMAL; break;
            }
            put(c, w, o[0].reg, l, r != 0, MH_PT_PRED);
        }
        break;
    case MH_OP_SETP:
    case MH_OP_SET: {
        /* on packed halves (PTX ISA 9.1, 9.7.7) each half is compared as its own type: setp's p
         * comes from the low halves and q from the high ones (q is not a complement there), set
         * writes each half of d; else q is the complement and set writes all of d */
        mh_ptx_type src = in->op == MH_OP_SET ? (mh_ptx_type)in->type2 : t;
        int packed = src == MH_PT_F16X2 || src == MH_PT_BF16X2;
        mh_ptx_type ct = !packed ? src : src == MH_PT_F16X2 ? MH_PT_F16 : MH_PT_BF16;
        uint64_t one = set_true(!packed ? t : t == MH_PT_F16X2 ? MH_PT_F16 : t == MH_PT_BF16X2 ? MH_PT_BF16 : MH_PT_B16);
        LANES {
            uint64_t a = val(c, w, &o[1], l), b = val(c, w, &o[2], l);
            int r = compare((mh_ptx_cmp)in->cmp, ct, packed ? a & 0xffff : a, packed ? b & 0xffff : b, in->mods & MH_MOD_FTZ);
            int r2 = packed ? compare((mh_ptx_cmp)in->cmp, ct, a >> 16 & 0xffff, b >> 16 & 0xffff, in->mods & MH_MOD_FTZ) : !r;
            if (in->boolop) {
                int p = val(c, w, &o[3], l) != 0;
                r = bool_op(in->boolop, r, p);
                r2 = bool_op(in->boolop, r2, p);
            }
            if (in->op == MH_OP_SETP) {
                put(c, w, o[0].reg, l, (uint64_t)r, MH_PT_PRED);
                if (in->dst2 >= 0) put(c, w, (uint32_t)in->dst2, l, (uint64_t)r2, MH_PT_PRED);
            } else if (packed) {
                put(c, w, o[0].reg, l, (r ? one : 0) | (r2 ? one : 0) << 16, MH_PT_B32);
            } else {
                put(c, w, o[0].reg, l, r ? one : 0, t);
            }
        }
        break;
    }
    case MH_OP_SELP: LANES put(c, w, o[0].reg, l, val(c, w, &o[3], l) ? val(c, w, &o[1], l) : val(c, w, &o[2], l), t); break;
    case MH_OP_BFI:
        LANES {
            uint64_t a = val(c, w, &o[1], l), b = val(c, w, &o[2], l);
            uint32_t pos = (uint32_t)val(c, w, &o[3], l) & 0xff, len = (uint32_t)val(c, w, &o[4], l) & 0xff;
            int bits = mh_ptx_type_bits(t);
            uint64_t r = b;
            if (len && pos < (uint32_t)bits) {
                uint64_t m = (len >= 64 ? ~0ull : (1ull << len) - 1) << pos;
                r = (b & ~m) | ((a << pos) & m);
            }
            put(c, w, o[0].reg, l, r, t);
        }
        break;
    case MH_OP_PRMT:
        LANES put(c, w, o[0].reg, l, prmt((uint32_t)val(c, w, &o[1], l), (uint32_t)val(c, w, &o[2], l),
                                          (uint32_t)val(c, w, &o[3], l)), t);
        break;
    case MH_OP_LOP3:
        LANES {
            uint64_t a = val(c, w, &o[1], l), b = val(c, w, &o[2], l), cc = val(c, w, &o[3], l);
            uint32_t lut = (uint32_t)val(c, w, &o[4], l), r = 0;
            for (int bit = 0; bit < 32; bit++) {
                int idx = (int)(((a >> bit) & 1) << 2 | ((b >> bit) & 1) << 1 | ((cc >> bit) & 1));
                r |= ((lut >> idx) & 1) << bit;
            }
            put(c, w, o[0].reg, l, r, t);
        }
        break;
    case MH_OP_BRA:
        LANES w->pc[l] = o[0].reg;
        branch = 1;
        break;
    case MH_OP_CALL: {
        const mh_ptx_func *callee = &c->m->funcs[in->callee];
        if (!callee->defined) { /* printf or assert: it runs here, the lanes go on */
            if (emu_extern_call(c, w, in, emask)) return -1;
            break;
        }
        int nret = in->cmp;
        LANES {
            if (w->depth[l] == MAX_CALL_DEPTH) return emu_fault(c, w, l, "call depth exceeds %d", MAX_CALL_DEPTH), -1;
            for (int k = 0; k + nret < in->nopnds; k++) {
                const mh_ptx_var *v = &c->m->vars[o[nret + k].sym];
                const mh_ptx_param *p = &callee->params[k];
                memcpy(frame(c, w, l, (uint32_t)in->callee, 0) + p->offset, frame(c, w, l, (uint32_t)v->func, 2) + v->offset,
                       v->size < p->size ? v->size : p->size);
            }
            call_frame *cf = &w->stack[l][w->depth[l]++];
            cf->ret_pc = pc + 1;
            cf->retvar = nret ? o[0].sym : -1;
            cf->callee = (uint32_t)in->callee;
            w->pc[l] = c->base[in->callee];
        }
        branch = 1;
        break;
    }
    case MH_OP_RET:
        LANES {
            if (!w->depth[l]) {
                w->st[l] = LANE_EXITED;
                c->progress++;
                continue;
            }
            const call_frame *cf = &w->stack[l][--w->depth[l]];
            if (cf->retvar >= 0) {
                const mh_ptx_var *v = &c->m->vars[cf->retvar];
                const mh_ptx_func *callee = &c->m->funcs[cf->callee];
                uint32_t n = callee->nrets ? callee->rets[0].size : 0;
                memcpy(frame(c, w, l, (uint32_t)v->func, 2) + v->offset, frame(c, w, l, cf->callee, 1),
                       v->size < n ? v->size : n);
            }
            w->pc[l] = cf->ret_pc;
        }
        branch = 1;
        break;
    case MH_OP_EXIT:
        LANES w->st[l] = LANE_EXITED;
        c->progress++;
        break;
    case MH_OP_BAR:
        if (in->cmp == 1) break; /* bar.warp.sync: lanes already run together */
        c->progress++;
        if (in->cmp == MH_BAR_RED && in->nopnds > 3)
            LANES return emu_fault(c, w, l, "bar.red with a thread count (bar.red.OP d, a, b, c) is not supported by emu"), -1;
        if (in->cmp == 2 || (in->cmp != MH_BAR_RED && in->nopnds > 1)) { /* a thread count: bar.sync a, b / bar.arrive a, b */
            if (emu_bar_counted(c, w, in, emask)) return -1;
            break;
        }
        { /* bar.sync a (every thread of the block at barrier a): the id is kept for the deadlock check;
           * bar.red.OP d, a, {!}c arrives with c, and d gets the block's reduction when it opens */
            int red = in->cmp == MH_BAR_RED, ai = red ? 1 : 0;
            uint8_t id = (uint8_t)(in->nopnds > ai && emask ? val(c, w, &o[ai], __builtin_ctz(emask)) : 0);
            LANES {
                w->st[l] = LANE_BARRIER;
                w->bar[l] = id;
                if (red) {
                    w->b->red_all++;
                    w->b->red_true += val(c, w, &o[in->nopnds - 1], l) != 0;
                }
            }
            if (red) w->red = in;
        }
        break;
    case MH_OP_TRAP:
        if (c->envreg_read && !c->grid_ws)
            LANES return emu_fault(c, w, l, "trap instruction: the kernel reads the grid workspace of cooperative groups "
                               "(%%envreg1/%%envreg2), which only a cooperative launch has (launch{cooperative = "
                               "true}): cg::this_grid() traps without it, as on a GPU"), -1;
        LANES return emu_fault(c, w, l, "trap instruction"), -1;
        break;
    case MH_OP_MBARRIER_INIT:
        LANES {
            unsigned char *p = emu_mem(c, w, l, in->space, address(c, w, &o[0], l), 8, 1);
            if (!p) return -1;
            uint64_t n = val(c, w, &o[1], l) & MH_MB_FIELD;
            mb_store(p, (mbar){.pending = (int64_t)n, .expected = (int64_t)n});
        }
        c->progress++;
        break;
    case MH_OP_MBARRIER:
        if (emu_exec_mbarrier(c, w, in, emask)) return -1;
        c->progress += in->cmp != MH_MB_TEST_WAIT && in->cmp != MH_MB_TRY_WAIT;
        break;
    case MH_OP_CP_ASYNC: {
        /* cp.async.{ca,cg}.shared.global [dst], [src], size{, src-size | ignore-src}: copied at
         * issue, so a correctly synchronised kernel sees what it would on a GPU (a kernel that
         * reads before its wait_group sees the data early: emu cannot show that race) */
        c->cost += 8;
        uint32_t size = (uint32_t)o[2].imm;
        uint64_t ad[WARP];
        int pred4 = in->nopnds > 3 && o[3].kind == MH_OPK_REG && c->m->reg_type[o[3].reg + c->reg_lo] == MH_PT_PRED;
        LANES {
            uint32_t src_size = size;
            if (in->nopnds > 3 && !pred4) src_size = (uint32_t)val(c, w, &o[3], l);
            if (pred4 && val(c, w, &o[3], l)) src_size = 0; /* ignore-src: zeros */
            if (src_size > size) /* the size itself (4, 8 or 16) was checked by the front end */
                return emu_fault(c, w, l, "cp.async of %u bytes with a source size of %u (at most the size)", size,
                             src_size), -1;
            unsigned char *d = emu_mem(c, w, l, MH_SP_SHARED, address(c, w, &o[0], l), size, 1);
            if (!d) return -1;
            ad[l] = address(c, w, &o[1], l);
            if (src_size) {
                const unsigned char *p = emu_mem(c, w, l, MH_SP_GLOBAL, ad[l], src_size, 0);
                if (!p) return -1;
                memmove(d, p, src_size);
            }
            memset(d + src_size, 0, size - src_size);
        }
        c->progress++;
        c->cost += access_cost(c, MH_SP_GLOBAL, ad, emask, size, EMU_MT_ASYNC);
        break;
    }
    case MH_OP_ATOM:
    case MH_OP_RED: {
        int changed = 0;
        uint64_t ad[WARP];
        /* latency: access_cost (a global atomic's the L2's, emu_memtime.c) */
        LANES {
            const mh_ptx_opnd *ao = in->op == MH_OP_ATOM ? &o[1] : &o[0];
            const mh_ptx_opnd *bo = ao + 1;
            unsigned char *p = emu_mem(c, w, l, in->space, ad[l] = address(c, w, ao, l), (uint32_t)elem_bytes(t), 1);
            if (!p) return -1;
            uint64_t old = emu_atomic((mh_ptx_aop)in->cmp, t, p, val(c, w, bo, l),
                                  in->cmp == AOP_CAS ? val(c, w, bo + 1, l) : 0);
            changed |= old != ld_elem(p, elem_bytes(t));
            if (in->op == MH_OP_ATOM) put(c, w, o[0].reg, l, old, t);
        }
        if (changed) c->progress++; /* a failed compare-and-swap is a poll, as a load is */
        else if (emask) note_load(c, w, in->space, ad[__builtin_ctz(emask)]);
        c->cost += access_cost(c, in->space, ad, emask, (uint32_t)elem_bytes(t), (in->op == MH_OP_RED ? EMU_MT_ST : EMU_MT_ATOM) | EMU_MT_RMW);
        break;
    }
    case MH_OP_SHFL: {
        uint64_t src[WARP];
        for (int l = 0; l < WARP; l++) src[l] = o[1].kind == MH_OPK_REG ? REG(w, o[1].reg, l) : val(c, w, &o[1], l);
        LANES {
            uint32_t bval = (uint32_t)val(c, w, &o[2], l) & 31, cv = (uint32_t)val(c, w, &o[3], l);
            uint32_t cval = cv & 31, seg = (cv >> 8) & 31, lane = (uint32_t)l;
            uint32_t maxl = (lane & seg) | (cval & ~seg), minl = lane & seg, j;
            int ok;
            switch (in->cmp) {
            case SHFL_UP: j = lane - bval; ok = (int32_t)j >= (int32_t)maxl; break;
            case SHFL_DOWN: j = lane + bval; ok = j <= maxl; break;
            case SHFL_BFLY: j = lane ^ bval; ok = j <= maxl; break;
            default: j = minl | (bval & ~seg); ok = j <= maxl; break;
            }
            if (!ok) j = lane;
            if (!(emask >> (j & 31) & 1)) /* undefined on a GPU: a value nobody gave (issue 36) */
                return emu_fault(c, w, l, "shfl.sync: lane %d reads lane %u, which did not execute this shfl.sync "
                                 "(the lanes that did: 0x%08x)", l, j & 31, emask), -1;
            put(c, w, o[0].reg, l, src[j & 31], t);
            if (in->dst2 >= 0) put(c, w, (uint32_t)in->dst2, l, (uint64_t)ok, MH_PT_PRED);
        }
        break;
    }
    case MH_OP_VOTE: {
        uint32_t ballot = 0;
        LANES if (val(c, w, &o[1], l)) ballot |= 1u << l;
        LANES {
            uint32_t members = lane_members(c, w, in, 2, l, emask);
            uint64_t r;
            switch (in->cmp) {
            case VOTE_ALL: r = (ballot & members) == members; break;
            case VOTE_ANY: r = (ballot & members) != 0; break;
            case VOTE_UNI: r = (ballot & members) == members || (ballot & members) == 0; break;
            default: r = ballot & members; break; /* a lane outside the mask contributes 0 (the ISA) */
            }
            put(c, w, o[0].reg, l, r, in->cmp == VOTE_BALLOT ? MH_PT_B32 : MH_PT_PRED);
        }
        break;
    }
    case MH_OP_REDUX: {
        /* each lane gets the reduction over its own member mask (the waiting is done: see wsync): lanes
         * may name different masks in one instruction (cooperative groups' labeled_partition reduces
         * each group of a warp at once with its group's mask) */
        int sgn = t == MH_PT_S32;
        uint32_t v[WARP], done = 0, acc = 0;
        LANES v[l] = (uint32_t)val(c, w, &o[1], l);
        LANES {
            uint32_t members = lane_members(c, w, in, 2, l, emask);
            if (members != done || !members) { /* masks repeat: one reduction per distinct mask in a row */
                done = members;
                uint32_t a = in->cmp == AOP_AND ? 0xffffffffu : in->cmp == AOP_MIN ? (sgn ? 0x7fffffffu : 0xffffffffu)
                           : in->cmp == AOP_MAX ? (sgn ? 0x80000000u : 0) : 0;
                for (int j = 0; j < WARP; j++) {
                    if (!(members >> j & 1)) continue;
                    uint32_t x = v[j];
                    switch (in->cmp) {
                    case AOP_ADD: a += x; break;
                    case AOP_MIN: a = sgn ? ((int32_t)x < (int32_t)a ? x : a) : (x < a ? x : a); break;
                    case AOP_MAX: a = sgn ? ((int32_t)x > (int32_t)a ? x : a) : (x > a ? x : a); break;
                    case AOP_AND: a &= x; break;
                    case AOP_OR: a |= x; break;
                    default: a ^= x; break;
                    }
                }
                acc = a;
            }
            put(c, w, o[0].reg, l, acc, MH_PT_B32);
        }
        break;
    }
    case MH_OP_MATCH: {
        /* lanes of the member mask holding the same value (the waiting is done: see wsync) */
        uint64_t v[WARP];
        LANES v[l] = val(c, w, &o[1], l) & (t == MH_PT_B64 ? ~0ull : 0xffffffffull);
        LANES { /* over the lane's own member mask, as redux */
            uint32_t members = lane_members(c, w, in, 2, l, emask), same = 0;
            for (int j = 0; j < WARP; j++)
                if ((members >> j & 1) && v[j] == v[l]) same |= 1u << j;
            if (in->cmp == 0) put(c, w, o[0].reg, l, same, MH_PT_B32);
            else {
                int all = same == members;
                put(c, w, o[0].reg, l, all ? members : 0, MH_PT_B32);
                if (in->dst2 >= 0) put(c, w, (uint32_t)in->dst2, l, (uint64_t)all, MH_PT_PRED);
            }
        }
        break;
    }
    case MH_OP_ACTIVEMASK: LANES put(c, w, o[0].reg, l, mask, MH_PT_B32); break;
    default:
        if ((in->op == MH_OP_MIN || in->op == MH_OP_MAX) && in->cmp == MH_MINMAX_NAN) {
            LANES put(c, w, o[0].reg, l, minmax_nan(in, t, val(c, w, &o[1], l), val(c, w, &o[2], l)),
                      t == MH_PT_F16X2 || t == MH_PT_BF16X2 ? MH_PT_B32 : t);
        } else if (t == MH_PT_F16X2 || t == MH_PT_BF16X2) {
            /* packed halves: the operation on each 16-bit half, as its own type */
            mh_ptx_insn h = *in;
            h.type = t == MH_PT_F16X2 ? MH_PT_F16 : MH_PT_BF16;
            LANES {
                uint64_t a = val(c, w, &o[1], l), b = in->nopnds > 2 ? val(c, w, &o[2], l) : 0;
                uint64_t cc = in->nopnds > 3 ? val(c, w, &o[3], l) : 0, r = 0;
                for (int half = 0; half < 2; half++) {
                    int s = 16 * half;
                    double x = fget(a >> s & 0xffff, (mh_ptx_type)h.type), y = fget(b >> s & 0xffff, (mh_ptx_type)h.type);
                    double z = fget(cc >> s & 0xffff, (mh_ptx_type)h.type);
                    r |= (fput(flt_op(&h, x, y, z), (mh_ptx_type)h.type) & 0xffff) << s;
                }
                put(c, w, o[0].reg, l, r, MH_PT_B32);
            }
        } else if (mh_ptx_type_is_float(t)) {
            /* decided once per instruction, not per lane: the plain path is the hot one */
            int special = flt_special(in);
            LANES {
                double a = fget(val(c, w, &o[1], l), t);
                double b = in->nopnds > 2 ? fget(val(c, w, &o[2], l), t) : 0;
                double cc = in->nopnds > 3 ? fget(val(c, w, &o[3], l), t) : 0;
                double r = special ? flt_op_special(in, a, b, cc) : flt_op_plain(in, a, b, cc);
                put(c, w, o[0].reg, l, fput(r, t), t);
            }
        } else {
            mh_ptx_type dt = t;
            if (in->mods & MH_MOD_WIDE) dt = mh_ptx_type_is_signed(t) ? (mh_ptx_type_bits(t) == 32 ? MH_PT_S64 : MH_PT_S32)
                                                                : (mh_ptx_type_bits(t) == 32 ? MH_PT_U64 : MH_PT_U32);
            if (in->op == MH_OP_CLZ || in->op == MH_OP_POPC || in->op == MH_OP_BFIND) dt = MH_PT_U32;
            if (!(in->mods & (MH_MOD_SAT | MH_MOD_HI | MH_MOD_WIDE)) && mh_ptx_type_bits(t) >= 32 &&
                (in->op == MH_OP_ADD || in->op == MH_OP_SUB || in->op == MH_OP_MUL || in->op == MH_OP_MAD || in->op == MH_OP_AND ||
                 in->op == MH_OP_OR || in->op == MH_OP_XOR) && t != MH_PT_PRED) {
                /* the common integer operations, without a dispatch per lane */
                const mh_ptx_opnd *o1 = &o[1], *o2 = &o[2], *o3 = &o[3];
                switch (in->op) {
                case MH_OP_ADD: LANES put(c, w, o[0].reg, l, val(c, w, o1, l) + val(c, w, o2, l), dt); break;
                case MH_OP_SUB: LANES put(c, w, o[0].reg, l, val(c, w, o1, l) - val(c, w, o2, l), dt); break;
                case MH_OP_MUL: LANES put(c, w, o[0].reg, l, val(c, w, o1, l) * val(c, w, o2, l), dt); break;
                case MH_OP_MAD:
                    LANES put(c, w, o[0].reg, l, val(c, w, o1, l) * val(c, w, o2, l) + val(c, w, o3, l), dt);
                    break;
                case MH_OP_AND: LANES put(c, w, o[0].reg, l, val(c, w, o1, l) & val(c, w, o2, l), dt); break;
                case MH_OP_OR: LANES put(c, w, o[0].reg, l, val(c, w, o1, l) | val(c, w, o2, l), dt); break;
                default: LANES put(c, w, o[0].reg, l, val(c, w, o1, l) ^ val(c, w, o2, l), dt); break;
                }
                break;
            }
            LANES {
                uint64_t a = val(c, w, &o[1], l);
                uint64_t b = in->nopnds > 2 ? val(c, w, &o[2], l) : 0;
                uint64_t cc = in->nopnds > 3 ? val(c, w, &o[3], l) : 0;
                put(c, w, o[0].reg, l, int_op(in, a, b, cc), dt);
            }
        }
        break;
    }
#undef LANES
    /* advance the pcs of the lanes that took part and did not branch (branch-free: vectorises) */
    uint32_t adv = branch ? (mask & ~emask) : mask;
    for (int l = 0; l < WARP; l++) w->pc[l] += (adv >> l) & 1;
    if (in->op == MH_OP_RET || in->op == MH_OP_EXIT || in->op == MH_OP_BAR) return 0;
    if (!branch || emask == 0) {
        *next = (uint32_t)(c->cur - c->code) + 1;
        return 1;
    }
    if (emask == mask) {
        *next = in->op == MH_OP_CALL ? c->base[in->callee] : in->o[0].reg;
        return 1;
    }
    return 0;
}

