/* tensor_map_encode.c - cuTensorMapEncodeTiled on emu (tensor_map_encode.h). */
#include "cudart/tensor_map_encode.h"

#include "emu/emu_tma.h"
#include "launch/tensor_map.h"

#include <stdio.h>
#include <string.h>

int mh_cu_tensor_map_tiled(void *map, int dtype, uint32_t rank, void *addr, const uint64_t *dims,
                           const uint64_t *strides, const uint32_t *box, const uint32_t *elem_strides, int interleave,
                           int swizzle, int l2, int oob, uint64_t bytes)
{
    static const unsigned sizes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2};
    mh_error e = {0};
    if (!map || !dims || !box || !elem_strides || (rank > 1 && !strides)) {
        fprintf(stderr, "mgpu cudart: cuTensorMapEncodeTiled: a NULL pointer among tensorMap, globalDim, "
                "globalStrides, boxDim, elementStrides\n");
        return 1;
    }
    if (dtype < 0 || dtype > 9) {
        fprintf(stderr, "mgpu cudart: cuTensorMapEncodeTiled: data type %d is not supported on emu (UINT8 .. "
                "BFLOAT16 are)\n", dtype);
        return 1;
    }
    if (rank < 1 || rank > MH_TMAP_MAX_RANK) {
        fprintf(stderr, "mgpu cudart: cuTensorMapEncodeTiled: rank %u (1 to 5)\n", rank);
        return 1;
    }
    mh_tensor_map_spec s;
    memset(&s, 0, sizeof s);
    s.data_type = dtype;
    s.elem_size = sizes[dtype];
    s.rank = rank;
    s.address = (uint64_t)(uintptr_t)addr;
    s.bytes = bytes ? bytes : UINT64_MAX / 2;
    for (uint32_t i = 0; i < rank; i++) {
        s.dims[i] = dims[i];
        s.box[i] = box[i];
        s.elem_strides[i] = elem_strides[i];
        if (i + 1 < rank) s.strides[i] = strides[i];
    }
    s.interleave = interleave;
    s.swizzle = swizzle;
    s.l2 = l2;
    s.oob = oob;
    unsigned char out[MH_TMAP_BYTES];
    if (mh_tensor_map_check(&s, &e) || mh_emu_tensor_map(&s, out, &e)) {
        fprintf(stderr, "mgpu cudart: cuTensorMapEncodeTiled: %s\n", e.message);
        return 1;
    }
    memcpy(map, out, sizeof out);
    return 0;
}
