/* tensor_map.c - TMA descriptor facts and their checks (see tensor_map.h). */
#include "launch/tensor_map.h"

#include <string.h>

int mh_tensor_map_data_type(mh_dtype t)
{
    switch (t) {
    case MH_F32: return MH_TMAP_FLOAT32;
    case MH_F16: return MH_TMAP_FLOAT16;
    case MH_BF16: return MH_TMAP_BFLOAT16;
    case MH_F64: return MH_TMAP_FLOAT64;
    case MH_I8: case MH_U8: return MH_TMAP_UINT8;  /* TMA copies bits: signedness does not matter */
    case MH_I16: case MH_U16: return MH_TMAP_UINT16;
    case MH_U32: return MH_TMAP_UINT32;
    case MH_I32: return MH_TMAP_INT32;
    case MH_U64: return MH_TMAP_UINT64;
    case MH_I64: return MH_TMAP_INT64;
    default: return -1;
    }
}

static int lookup(const char *s, const char *const *names)
{
    for (int i = 0; s && names[i]; i++)
        if (!strcmp(s, names[i])) return i;
    return -1;
}

int mh_tensor_map_interleave(const char *s) { return lookup(s, (const char *const[]){"none", "16B", "32B", NULL}); }
int mh_tensor_map_swizzle(const char *s) { return lookup(s, (const char *const[]){"none", "32B", "64B", "128B", NULL}); }
int mh_tensor_map_l2(const char *s) { return lookup(s, (const char *const[]){"none", "64B", "128B", "256B", NULL}); }
int mh_tensor_map_oob(const char *s) { return lookup(s, (const char *const[]){"zero", "nan", NULL}); }

void mh_tensor_map_contiguous(mh_tensor_map_spec *s)
{
    uint64_t st = s->elem_size;
    for (uint32_t i = 0; i + 1 < s->rank; i++) {
        st *= s->dims[i];
        s->strides[i] = st;
    }
}

static int is_float(int t)
{
    return t == MH_TMAP_FLOAT16 || t == MH_TMAP_FLOAT32 || t == MH_TMAP_FLOAT64 || t == MH_TMAP_BFLOAT16;
}

static const char *type_name(int t)
{
    static const char *const names[] = {"uint8", "uint16", "uint32", "int32", "uint64", "int64", "float16", "float32",
                                        "float64", "bfloat16"};
    return t >= 0 && t < (int)(sizeof names / sizeof *names) ? names[t] : "of an unknown type";
}

static const char *swizzle_name(int sw)
{
    static const char *const names[] = {"none", "32B", "64B", "128B"};
    return sw >= 0 && sw < 4 ? names[sw] : "?";
}

int mh_tensor_map_check(const mh_tensor_map_spec *s, mh_error *e)
{
    if (s->rank < 1 || s->rank > MH_TMAP_MAX_RANK)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "tensor map: rank %u (1 to %d dimensions)", s->rank, MH_TMAP_MAX_RANK);
    uint64_t align = s->interleave == MH_TMAP_INTERLEAVE_32B ? 32 : 16;
    if (s->address % align)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "tensor map: the tensor's address must be %llu-byte aligned",
                       (unsigned long long)align);
    for (uint32_t i = 0; i < s->rank; i++) {
        if (s->dims[i] < 1 || s->dims[i] > (1ull << 32))
            return mh_fail(e, MH_E_BAD_ARGUMENT, "tensor map: dims[%u] = %llu (1 to 2^32)", i + 1,
                           (unsigned long long)s->dims[i]);
        if (s->box[i] < 1 || s->box[i] > 256)
            return mh_fail(e, MH_E_BAD_ARGUMENT, "tensor map: box[%u] = %u (1 to 256 elements)", i + 1, s->box[i]);
        if (s->elem_strides[i] < 1 || s->elem_strides[i] > 8)
            return mh_fail(e, MH_E_BAD_ARGUMENT, "tensor map: element_strides[%u] = %u (1 to 8)", i + 1,
                           s->elem_strides[i]);
    }
    /* cuda.h asks of each stride only a multiple of 16 (32 with the 32B interleave) below 2^40: strides
     * need not grow outwards (a dimension may revisit bytes, a dimension of size 1 may have stride 0) */
    uint64_t extent = s->dims[0] * s->elem_size; /* one past the last byte the tensor reaches */
    for (uint32_t i = 0; i + 1 < s->rank; i++) {
        uint64_t st = s->strides[i];
        if (st % align || st >= (1ull << 40))
            return mh_fail(e, MH_E_BAD_ARGUMENT, "tensor map: strides[%u] = %llu bytes (a multiple of %llu below 2^40)",
                           i + 1, (unsigned long long)st, (unsigned long long)align);
        uint64_t n1 = s->dims[i + 1] - 1, span = st * n1;
        if ((n1 && span / n1 != st) || span > UINT64_MAX - extent)
            return mh_fail(e, MH_E_BAD_ARGUMENT, "%s", "tensor map: the tensor's size overflows 64 bits");
        extent += span;
    }
    if (extent > s->bytes)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "tensor map: the tensor spans %llu bytes, the array has %llu: TMA would "
                       "read past its end", (unsigned long long)extent, (unsigned long long)s->bytes);
    uint64_t inner = (uint64_t)s->box[0] * s->elem_size;
    if (s->interleave == MH_TMAP_INTERLEAVE_NONE) {
        if (inner % 16)
            return mh_fail(e, MH_E_BAD_ARGUMENT, "tensor map: the box's inner dimension is %llu bytes (box[1] x %u): "
                           "it must be a multiple of 16", (unsigned long long)inner, s->elem_size);
        static const unsigned swz[] = {0, 32, 64, 128};
        if (s->swizzle > 0 && inner > swz[s->swizzle])
            return mh_fail(e, MH_E_BAD_ARGUMENT, "tensor map: the box's inner dimension is %llu bytes, more than "
                           "the %uB swizzle takes", (unsigned long long)inner, swz[s->swizzle]);
    } else if (s->rank < 3) {
        return mh_fail(e, MH_E_BAD_ARGUMENT, "tensor map: an interleaved layout needs 3 or more dimensions");
    } else if (s->interleave == MH_TMAP_INTERLEAVE_32B && s->swizzle != MH_TMAP_SWIZZLE_32B) {
        return mh_fail(e, MH_E_BAD_ARGUMENT, "tensor map: interleave = \"32B\" needs swizzle = \"32B\" (the driver's "
                       "rule), got swizzle = \"%s\"", swizzle_name(s->swizzle));
    }
    if (s->oob == MH_TMAP_OOB_NAN && !is_float(s->data_type))
        return mh_fail(e, MH_E_BAD_ARGUMENT, "tensor map: oob = \"nan\" is for floating-point data; this tensor's "
                       "elements are %s (use oob = \"zero\")", type_name(s->data_type));
    return 0;
}
