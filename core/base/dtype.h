/* dtype.h - element types of device arrays: names, sizes, conversion of
 * one element to and from a double, deterministic fills. */
#ifndef MH_DTYPE_H
#define MH_DTYPE_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    MH_F32, MH_F16, MH_BF16, MH_F64, MH_I8, MH_U8, MH_I16, MH_U16, MH_I32, MH_U32, MH_I64, MH_U64, MH_DTYPE_COUNT_
} mh_dtype;

int mh_dtype_parse(const char *name, mh_dtype *out);
const char *mh_dtype_name(mh_dtype t);
size_t mh_dtype_size(mh_dtype t);
int mh_dtype_is_float(mh_dtype t);
double mh_dtype_get(mh_dtype t, const void *p, size_t i);
void mh_dtype_set(mh_dtype t, void *p, size_t i, double v);  /* integers: rounded toward zero, wrapped */
/* Integer element types without a trip through double, so 64-bit values
 * beyond 2^53 survive: get returns the value (u64 as its two's-complement
 * bit pattern), set stores the low bytes (wrapped). */
int64_t mh_dtype_get_int(mh_dtype t, const void *p, size_t i);
void mh_dtype_set_int(mh_dtype t, void *p, size_t i, int64_t v);

/* Fills n elements: start + i*step. */
void mh_fill_ramp(mh_dtype t, void *p, size_t n, double start, double step);
/* Fills n elements with uniform values in [lo, hi) from `seed` (splitmix64):
 * the same seed gives the same array everywhere. Integers: [lo, hi) rounded down. */
void mh_fill_random(mh_dtype t, void *p, size_t n, uint64_t seed, double lo, double hi);

#endif
