/* fp16.h - IEEE half and bfloat16 conversions to and from float and double,
 * rounding to nearest even, NaN and infinity kept, subnormals handled. */
#ifndef MH_FP16_H
#define MH_FP16_H

#include <stdint.h>
#include <math.h>
#include <string.h>

static inline float mh_f32_from_bits(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
static inline uint32_t mh_f32_bits(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }
static inline double mh_f64_from_bits(uint64_t b) { double f; memcpy(&f, &b, 8); return f; }
static inline uint64_t mh_f64_bits(double f) { uint64_t b; memcpy(&b, &f, 8); return b; }

static inline float mh_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    if (exp == 0x1f) return mh_f32_from_bits(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        if (!man) return mh_f32_from_bits(sign);
        float f = (float)man / 16777216.0f; /* man * 2^-24 */
        return sign ? -f : f;
    }
    return mh_f32_from_bits(sign | ((exp + 112) << 23) | (man << 13));
}

static inline uint16_t mh_float_to_half(float f)
{
    uint32_t b = mh_f32_bits(f), sign = (b >> 16) & 0x8000;
    uint32_t exp = (b >> 23) & 0xff, man = b & 0x7fffff;
    if (exp == 0xff) return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 0x1f) return (uint16_t)(sign | 0x7c00);
    if (e <= 0) {
        if (e < -10) return (uint16_t)sign;
        man |= 0x800000;
        int shift = 14 - e;
        uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1))) h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)e << 10) | (man >> 13), rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++; /* may carry into the exponent: correct */
    return (uint16_t)(sign | h);
}

static inline float mh_bf16_to_float(uint16_t h) { return mh_f32_from_bits((uint32_t)h << 16); }

static inline uint16_t mh_float_to_bf16(float f)
{
    uint32_t b = mh_f32_bits(f);
    if ((b & 0x7fffffff) > 0x7f800000) return (uint16_t)((b >> 16) | 0x40);
    b += 0x7fff + ((b >> 16) & 1);
    return (uint16_t)(b >> 16);
}

/* A double to float rounded to odd (toward zero, then the last bit set when
 * anything was dropped): rounding that float to a half or bfloat16 to nearest
 * gives the double correctly rounded (24 >= 2 * 11 + 2), where (float)d first
 * can land on a tie of the half type that d is not on. */
static inline float mh_f64_to_f32_odd(double d)
{
    float f = (float)d;
    if (f != f || d == (double)f) return f; /* NaN, or exact */
    uint32_t b = mh_f32_bits(f);
    if (fabs((double)f) > fabs(d)) b -= 1; /* one step toward zero (sign-magnitude; infinity -> largest finite) */
    return mh_f32_from_bits(b | 1);
}

static inline uint16_t mh_double_to_half(double d) { return mh_float_to_half(mh_f64_to_f32_odd(d)); }
static inline uint16_t mh_double_to_bf16(double d) { return mh_float_to_bf16(mh_f64_to_f32_odd(d)); }

#endif
