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

static const char *const type_names[MH_TMAP_NTYPES + 1] = {
    "uint8", "uint16", "uint32", "int32", "uint64", "int64", "float16", "float32", "float64", "bfloat16",
    "float32_ftz", "tfloat32", "tfloat32_ftz", "16u4_align8b", "16u4_align16b", "16u6_align16b", NULL};

int mh_tensor_map_type(const char *s) { return lookup(s, type_names); }

const char *mh_tensor_map_type_name(int t) { return t >= 0 && t < MH_TMAP_NTYPES ? type_names[t] : NULL; }

unsigned mh_tensor_map_elem_bits(int t)
{
    static const unsigned char bits[MH_TMAP_NTYPES] = {8, 16, 32, 32, 64, 64, 16, 32, 64, 16, 32, 32, 32, 4, 4, 6};
    return t >= 0 && t < MH_TMAP_NTYPES ? bits[t] : 0;
}

int mh_tensor_map_interleave(const char *s) { return lookup(s, (const char *const[]){"none", "16B", "32B", NULL}); }
int mh_tensor_map_swizzle(const char *s) { return lookup(s, (const char *const[]){"none", "32B", "64B", "128B", NULL}); }
int mh_tensor_map_l2(const char *s) { return lookup(s, (const char *const[]){"none", "64B", "128B", "256B", NULL}); }
int mh_tensor_map_oob(const char *s) { return lookup(s, (const char *const[]){"zero", "nan", NULL}); }

void mh_tensor_map_contiguous(mh_tensor_map_spec *s)
{
    uint64_t st = (s->dims[0] * mh_tensor_map_elem_bits(s->data_type) + 7) / 8;
    for (uint32_t i = 0; i + 1 < s->rank; i++) {
        if (i) st *= s->dims[i];
        s->strides[i] = st;
    }
}

/* cuda.h: the NaN fill is for floating-point types other than the packed ones */
static int is_float(int t)
{
    return t == MH_TMAP_FLOAT16 || t == MH_TMAP_FLOAT32 || t == MH_TMAP_FLOAT64 || t == MH_TMAP_BFLOAT16 ||
           t == MH_TMAP_FLOAT32_FTZ || t == MH_TMAP_TFLOAT32 || t == MH_TMAP_TFLOAT32_FTZ;
}

/* the packed types whose 16 values take 16 bytes in shared memory (cuda.h's extra rules) */
static int packed16(int t) { return t == MH_TMAP_16U4_ALIGN16B || t == MH_TMAP_16U6_ALIGN16B; }

static const char *swizzle_name(int sw)
{
    static const char *const names[] = {"none", "32B", "64B", "128B"};
    return sw >= 0 && sw < 4 ? names[sw] : "?";
}

int mh_tensor_map_check(const mh_tensor_map_spec *s, mh_error *e)
{
    if (s->rank < 1 || s->rank > MH_TMAP_MAX_RANK)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "tensor map: rank %u (1 to %d dimensions)", s->rank, MH_TMAP_MAX_RANK);
    unsigned bits = mh_tensor_map_elem_bits(s->data_type);
    const char *tn = mh_tensor_map_type_name(s->data_type);
    if (!bits) return mh_fail(e, MH_E_BAD_ARGUMENT, "tensor map: data type %d is none of cuda.h's", s->data_type);
    if (s->elem_size * 8 != (bits % 8 ? 0 : bits))
        return mh_fail(e, MH_E_BAD_ARGUMENT, "tensor map: elements of %u bytes with data type %s", s->elem_size, tn);
    int p16 = packed16(s->data_type);
    uint64_t align = s->interleave == MH_TMAP_INTERLEAVE_32B || p16 ? 32 : 16;
    if (s->address % align)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "tensor map: the tensor's address must be %llu-byte aligned%s (0x%llx%s)",
                       (unsigned long long)align, p16 ? " with data type 16u*_align16b" : "",
                       (unsigned long long)s->address, s->offset ? ", the array's start plus the offset" : "");
    if (p16 && s->dims[0] % 128)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "tensor map: dims[1] = %llu: with data type %s a multiple of 128 (packed "
                       "values)", (unsigned long long)s->dims[0], tn);
    if (s->data_type == MH_TMAP_16U4_ALIGN8B && s->dims[0] % 2)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "tensor map: dims[1] = %llu: with data type %s a multiple of 2 (packed "
                       "values)", (unsigned long long)s->dims[0], tn);
    if (p16 && s->box[0] != 128)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "tensor map: box[1] = %u: with data type %s it must be 128", s->box[0], tn);
    if (p16 && s->swizzle != MH_TMAP_SWIZZLE_NONE && s->swizzle != MH_TMAP_SWIZZLE_128B)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "tensor map: data type %s takes swizzle \"none\" or \"128B\"", tn);
    if (s->data_type == MH_TMAP_16U6_ALIGN16B && s->interleave != MH_TMAP_INTERLEAVE_NONE)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "tensor map: data type %s takes no interleave", tn);
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
    /* cuda.h asks of each stride only a multiple of 16 (32 with the 32B interleave or the 16u*_align16b
     * types) below 2^40: strides need not grow outwards nor cover the dimension below (a dimension may
     * revisit bytes, one of size 1 may have stride 0: CUTLASS makes such maps and they run on H100s) */
    uint64_t extent = (s->dims[0] * bits + 7) / 8; /* one past the last byte the tensor reaches */
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
        return mh_fail(e, MH_E_BAD_ARGUMENT, "tensor map: the tensor spans %llu bytes, the array has %llu%s: TMA would "
                       "read past its end", (unsigned long long)extent, (unsigned long long)s->bytes,
                       s->offset ? " after the offset" : "");
    uint64_t inner = ((uint64_t)s->box[0] * bits + 7) / 8;
    if (s->interleave == MH_TMAP_INTERLEAVE_NONE) {
        if ((uint64_t)s->box[0] * bits % 128)
            return bits % 8 ? mh_fail(e, MH_E_BAD_ARGUMENT, "tensor map: the box's inner dimension is %llu bits (box[1] "
                                      "x %u bits): it must be a multiple of 16 bytes",
                                      (unsigned long long)s->box[0] * bits, bits)
                            : mh_fail(e, MH_E_BAD_ARGUMENT, "tensor map: the box's inner dimension is %llu bytes (box[1] "
                                      "x %u): it must be a multiple of 16", (unsigned long long)inner, bits / 8);
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
                       "elements are %s (use oob = \"zero\")", tn);
    return 0;
}
