/* ptx_tma.h - the decoded form of Hopper's bulk copies (TMA): cp.async.bulk, cp.async.bulk.tensor,
 * cp.reduce.async.bulk(.tensor), and the tensor-map edits (tensormap.replace, tensormap.cp_fenceproxy):
 * one record per instruction in m->tma, which its MH_OP_TMA instruction names by index
 * (mh_ptx_insn.callee). */
#ifndef MH_PTX_TMA_H
#define MH_PTX_TMA_H

#include "frontend/ptx.h"

typedef enum {
    MH_TMA_BULK_LOAD,    /* cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], size, [mbar] */
    MH_TMA_BULK_STORE,   /* cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size */
    MH_TMA_BULK_S2S,     /* cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [dst], [src], size, [mbar] */
    MH_TMA_BULK_RED,     /* cp.reduce.async.bulk.{global.shared::cta.bulk_group | shared::cluster.shared::cta.mbarrier...}.op.type */
    MH_TMA_TENSOR_LOAD,  /* cp.async.bulk.tensor.Nd.shared::cluster.global[.tile].mbarrier::complete_tx::bytes [dst], [map, {c}], [mbar] */
    MH_TMA_TENSOR_STORE, /* cp.async.bulk.tensor.Nd.global.shared::cta[.tile].bulk_group [map, {c}], [src] */
    MH_TMA_TENSOR_RED,   /* cp.reduce.async.bulk.tensor.Nd.global.shared::cta.op[.tile].bulk_group [map, {c}], [src] */
    MH_TMA_COMMIT,       /* cp.async.bulk.commit_group */
    MH_TMA_WAIT,         /* cp.async.bulk.wait_group[.read] N (N in size.imm; .read in to_global) */
    MH_TMA_MAP_REPLACE,  /* tensormap.replace.tile.FIELD.{global,shared::cta}.b1024.{b32,b64} [dst], {ord,} size
                          * (the new value in size; field, ord; to_global: the .global space) */
    MH_TMA_MAP_COPY,     /* tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned
                          * [dst], [src], 128 */
} mh_tma_kind;

/* The fields of a tensor map tensormap.replace sets (the .tile mode's; .rank and the enumerated ones,
 * .elemtype .interleave_layout .swizzle_mode .swizzle_atomicity .fill_mode, are kept as text). */
typedef enum {
    MH_TMAP_ADDRESS,  /* .global_address (.b64) */
    MH_TMAP_BOX,      /* .box_dim ord (.b32; ord 0..4) */
    MH_TMAP_DIM,      /* .global_dim ord (.b32; 0..4) */
    MH_TMAP_STRIDE,   /* .global_stride ord (.b64, bytes; 0..3: dimension ord + 1's) */
    MH_TMAP_ESTRIDE,  /* .element_stride ord (.b32; 0..4) */
} mh_tmap_field;

typedef struct mh_ptx_tma {
    uint8_t kind;        /* mh_tma_kind */
    uint8_t dim;         /* tensor forms: 1 .. 5 coordinates */
    uint8_t multicast;   /* .multicast::cluster: `mask` is the CTA mask */
    uint8_t redop;       /* reductions: mh_ptx_aop (add, min, max, inc, dec, and, or, xor) */
    uint8_t type;        /* bulk reductions: the element type (mh_ptx_type) */
    uint8_t to_global;   /* BULK_RED: the destination is global (bulk_group), else shared::cluster (mbarrier) */
    uint8_t noftz;       /* .noftz (f16/bf16 add) */
    uint8_t field, ord;  /* MAP_REPLACE: mh_tmap_field and its dimension */
    mh_ptx_opnd dst, src;   /* shared or global addresses (the tensor forms: the shared side in dst for loads, src for stores) */
    mh_ptx_opnd map;        /* tensor forms: the tensor map's address (generic, .param or .const/.global) */
    mh_ptx_opnd coord[5];   /* tensor forms: coordinates (s32 registers or immediates), innermost first */
    mh_ptx_opnd size;       /* bulk forms: bytes (a multiple of 16) */
    mh_ptx_opnd mbar;       /* loads and shared::cluster destinations: the mbarrier (kind MH_OPK_NONE: none) */
    mh_ptx_opnd mask;       /* multicast: the 16-bit CTA mask */
} mh_ptx_tma;

#endif
