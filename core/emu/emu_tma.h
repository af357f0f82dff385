/* emu_tma.h - emu's tensor maps (its own 128-byte encoding of a CUtensorMap, opaque to kernels)
 * and the bulk copies that use them (emu_tma.c). */
#ifndef MH_EMU_TMA_H
#define MH_EMU_TMA_H

#include "launch/tensor_map.h"

/* The encoding (documented in docs/emu.md): bytes 0-7 "MGPUTMAP", version 1 at 8, rank, data type,
 * element size, interleave, swizzle, L2 promotion, OOB fill at 9-15, the address at 16, dims[5] at
 * 24 (8 bytes each), strides[4] at 64, box[5] at 96 (2 bytes each), element strides[5] at 106 (one
 * byte each); the rest zero.  Checked first (mh_tensor_map_check): bad_argument naming the rule. */
int mh_emu_tensor_map(const mh_tensor_map_spec *s, unsigned char out[MH_TMAP_BYTES], mh_error *e);
/* Reads one back: 0; -1 when the bytes are not in the encoding mh_emu_tensor_map makes; -2 when they
 * are but a field is out of range (changed in memory: tensormap.replace, a store). */
int mh_emu_tensor_map_decode(const unsigned char in[MH_TMAP_BYTES], mh_tensor_map_spec *s);

/* The shared-memory swizzle of TMA (a tensor map's swizzle) and of wgmma (a matrix descriptor's),
 * one reading for both, by address bits as the PTX ISA defines it: the 16-byte chunk, bits [4,7) of
 * the shared address, XOR the row of the repeating pattern, bits [7,10) (128B: rows = 7), [7,9) (64B:
 * 3) or bit 7 (32B: 1) of the same address.  `base`: a descriptor's base offset, the row its pattern
 * starts at when that is not a 1024 (512, 256)-byte boundary, (pattern start >> 7) & 7 (TMA: 0). */
static inline uint64_t emu_swizzle(uint64_t a, uint32_t rows, uint32_t base)
{
    return a ^ ((((a >> 7) - base) & rows) << 4);
}

#endif
