/* tensor_map_encode.h - cuTensorMapEncodeTiled's arguments as an emu tensor map
 * (emu_tma.h), shared by the runtime's driver entry points (driver.c) and the
 * libcuda.so.1 stand-in (libcuda.c).  bytes: how far the array reaches from
 * the address (0: not known, the map is not checked against it).  Returns a
 * CUresult: 0, or 1 (CUDA_ERROR_INVALID_VALUE) after a message on stderr. */
#ifndef MH_CUDART_TENSOR_MAP_ENCODE_H
#define MH_CUDART_TENSOR_MAP_ENCODE_H
#include <stdint.h>
int mh_cu_tensor_map_tiled(void *map, int dtype, uint32_t rank, void *addr, const uint64_t *dims,
                           const uint64_t *strides, const uint32_t *box, const uint32_t *elem_strides, int interleave,
                           int swizzle, int l2, int oob, uint64_t bytes);
#endif
