/* dtype.c - element types of device arrays. */
#include "base/dtype.h"

#include <math.h>
#include <string.h>
#include "base/fp16.h"

static const struct { const char *name; size_t size; } info[MH_DTYPE_COUNT_] = {
    [MH_F32] = {"f32", 4}, [MH_F16] = {"f16", 2}, [MH_BF16] = {"bf16", 2}, [MH_F64] = {"f64", 8},
    [MH_I8] = {"i8", 1},   [MH_U8] = {"u8", 1},   [MH_I16] = {"i16", 2},   [MH_U16] = {"u16", 2},
    [MH_I32] = {"i32", 4}, [MH_U32] = {"u32", 4}, [MH_I64] = {"i64", 8},   [MH_U64] = {"u64", 8},
};

int mh_dtype_parse(const char *name, mh_dtype *out)
{
    for (int i = 0; i < MH_DTYPE_COUNT_; i++)
        if (!strcmp(name, info[i].name)) { *out = (mh_dtype)i; return 0; }
    return -1;
}

const char *mh_dtype_name(mh_dtype t) { return (unsigned)t < MH_DTYPE_COUNT_ ? info[t].name : "?"; }
size_t mh_dtype_size(mh_dtype t) { return (unsigned)t < MH_DTYPE_COUNT_ ? info[t].size : 0; }
int mh_dtype_is_float(mh_dtype t) { return t == MH_F32 || t == MH_F16 || t == MH_BF16 || t == MH_F64; }

double mh_dtype_get(mh_dtype t, const void *p, size_t i)
{
    const unsigned char *b = (const unsigned char *)p + i * info[t].size;
    union { float f; double d; int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32;
            int64_t i64; uint64_t u64; } v;
    memcpy(&v, b, info[t].size);
    switch (t) {
    case MH_F32: return v.f;
    case MH_F16: return mh_half_to_float(v.u16);
    case MH_BF16: return mh_bf16_to_float(v.u16);
    case MH_F64: return v.d;
    case MH_I8: return v.i8;
    case MH_U8: return v.u8;
    case MH_I16: return v.i16;
    case MH_U16: return v.u16;
    case MH_I32: return v.i32;
    case MH_U32: return v.u32;
    case MH_I64: return (double)v.i64;
    case MH_U64: return (double)v.u64;
    default: return 0;
    }
}

void mh_dtype_set(mh_dtype t, void *p, size_t i, double x)
{
    unsigned char *b = (unsigned char *)p + i * info[t].size;
    uint64_t bits = 0;
    if (t == MH_F32) bits = mh_f32_bits((float)x);
    else if (t == MH_F16) bits = mh_double_to_half(x);
    else if (t == MH_BF16) bits = mh_double_to_bf16(x);
    else if (t == MH_F64) bits = mh_f64_bits(x);
    else {
        double r = trunc(x);
        if (!isfinite(r)) r = 0;
        int64_t iv = r >= 9.2233720368547758e18 ? INT64_MAX : r <= -9.2233720368547758e18 ? INT64_MIN : (int64_t)r;
        if (t == MH_U64 && r >= 9.2233720368547758e18) bits = r >= 1.8446744073709552e19 ? UINT64_MAX : (uint64_t)r;
        else bits = (uint64_t)iv;
    }
    memcpy(b, &bits, info[t].size); /* little-endian host: the low bytes */
}

void mh_fill_ramp(mh_dtype t, void *p, size_t n, double start, double step)
{
    for (size_t i = 0; i < n; i++) mh_dtype_set(t, p, i, start + (double)i * step);
}

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void mh_fill_random(mh_dtype t, void *p, size_t n, uint64_t seed, double lo, double hi)
{
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) {
        double u = (double)(splitmix64(&s) >> 11) * 0x1.0p-53; /* [0, 1) */
        double v = lo + u * (hi - lo);
        mh_dtype_set(t, p, i, mh_dtype_is_float(t) ? v : floor(v));
    }
}

int64_t mh_dtype_get_int(mh_dtype t, const void *p, size_t i)
{
    if (t == MH_I64 || t == MH_U64) {
        int64_t v;
        memcpy(&v, (const unsigned char *)p + i * 8, 8);
        return v;
    }
    return (int64_t)mh_dtype_get(t, p, i); /* narrower integers are exact in a double */
}

void mh_dtype_set_int(mh_dtype t, void *p, size_t i, int64_t v)
{
    if (mh_dtype_is_float(t)) {
        mh_dtype_set(t, p, i, (double)v);
        return;
    }
    uint64_t bits = (uint64_t)v;
    memcpy((unsigned char *)p + i * info[t].size, &bits, info[t].size); /* little-endian host: the low bytes */
}
