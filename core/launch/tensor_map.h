/* tensor_map.h - TMA descriptors (CUtensorMap, 128 bytes) for Hopper kernels
 * that take one as a __grid_constant__ parameter: the tiled layout's facts,
 * checked here against the driver's documented rules so a wrong descriptor is
 * a clear bad_argument before the driver's bare CUDA_ERROR_INVALID_VALUE, and
 * against the array it describes (the last byte the tensor reaches, whatever
 * its strides, must lie inside it: TMA would read past its end otherwise).
 * The encoding itself is the driver's (cuTensorMapEncodeTiled, core/cuda.c). */
#ifndef MH_TENSOR_MAP_H
#define MH_TENSOR_MAP_H

#include <stdint.h>
#include "base/dtype.h"
#include "base/error.h"

#define MH_TMAP_MAX_RANK 5
#define MH_TMAP_BYTES 128
#define MH_TMAP_ALIGN 128 /* CUDA 13 declares CUtensorMap _Alignas(128); cuTensorMapEncodeTiled wants 64 at least */

/* Values of cuda.h's CUtensorMap* enums (checked by test_cuda_abi). */
enum { MH_TMAP_UINT8 = 0, MH_TMAP_UINT16, MH_TMAP_UINT32, MH_TMAP_INT32, MH_TMAP_UINT64, MH_TMAP_INT64,
       MH_TMAP_FLOAT16, MH_TMAP_FLOAT32, MH_TMAP_FLOAT64, MH_TMAP_BFLOAT16, MH_TMAP_FLOAT32_FTZ, MH_TMAP_TFLOAT32,
       MH_TMAP_TFLOAT32_FTZ, MH_TMAP_16U4_ALIGN8B, MH_TMAP_16U4_ALIGN16B, MH_TMAP_16U6_ALIGN16B, MH_TMAP_NTYPES };
enum { MH_TMAP_INTERLEAVE_NONE = 0, MH_TMAP_INTERLEAVE_16B, MH_TMAP_INTERLEAVE_32B };
enum { MH_TMAP_SWIZZLE_NONE = 0, MH_TMAP_SWIZZLE_32B, MH_TMAP_SWIZZLE_64B, MH_TMAP_SWIZZLE_128B };
enum { MH_TMAP_L2_NONE = 0, MH_TMAP_L2_64B, MH_TMAP_L2_128B, MH_TMAP_L2_256B };
enum { MH_TMAP_OOB_ZERO = 0, MH_TMAP_OOB_NAN = 1 };

typedef struct mh_tensor_map_spec {
    int data_type;                 /* MH_TMAP_UINT8 ... */
    unsigned elem_size;            /* bytes (0: a packed type of 4 or 6 bits, mh_tensor_map_elem_bits) */
    uint32_t rank;                 /* 1 .. 5 */
    uint64_t address;              /* device address of element 0 */
    uint64_t bytes;                /* size of the array it lies in, from address */
    uint64_t offset;               /* where address lies in that array (bytes from its start; messages only) */
    uint64_t dims[MH_TMAP_MAX_RANK];         /* elements, innermost dimension first */
    uint64_t strides[MH_TMAP_MAX_RANK - 1];  /* bytes between consecutive indices of dims 1 .. rank-1 */
    uint32_t box[MH_TMAP_MAX_RANK];          /* elements a copy moves, innermost first */
    uint32_t elem_strides[MH_TMAP_MAX_RANK];
    int interleave, swizzle, l2, oob;
} mh_tensor_map_spec;

/* The TMA data type of an array's element type (-1: none). */
int mh_tensor_map_data_type(mh_dtype t);
/* A data type by its cuda.h name in lower case without the prefix ("uint8" .. "bfloat16",
 * "float32_ftz", "tfloat32", "tfloat32_ftz", "16u4_align8b", "16u4_align16b", "16u6_align16b"), -1
 * when unknown; its name back (NULL when unknown); the bits of one element (0 when unknown). */
int mh_tensor_map_type(const char *s);
const char *mh_tensor_map_type_name(int t);
unsigned mh_tensor_map_elem_bits(int t);
/* Option names: "none", "16B" ... -> the enum value, -1 when unknown. */
int mh_tensor_map_interleave(const char *s);
int mh_tensor_map_swizzle(const char *s);
int mh_tensor_map_l2(const char *s);
int mh_tensor_map_oob(const char *s);
/* Fills strides for a contiguous tensor of s->dims (innermost first). */
void mh_tensor_map_contiguous(mh_tensor_map_spec *s);
/* The driver's rules (cuda.h's cuTensorMapEncodeTiled), and the tensor inside
 * its array: bad_argument naming the rule.  A box may be larger than the
 * tensor (TMA fills the elements outside it), so that is not refused. */
int mh_tensor_map_check(const mh_tensor_map_spec *s, mh_error *e);

#endif
