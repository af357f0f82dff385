/* ptx_tma.h - the decoded form of Hopper's bulk copies (TMA): cp.async.bulk, cp.async.bulk.tensor,
 * cp.reduce.async.bulk(.tensor): one record per instruction in m->tma, which its MH_OP_TMA
 * instruction names by index (mh_ptx_insn.callee). */
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
} mh_tma_kind;

typedef struct mh_ptx_tma {
    uint8_t kind;        /* mh_tma_kind */
    uint8_t dim;         /* tensor forms: 1 .. 5 coordinates */
    uint8_t multicast;   /* .multicast::cluster: `mask` is the CTA mask */
    uint8_t redop;       /* reductions: mh_ptx_aop (add, min, max, inc, dec, and, or, xor) */
    uint8_t type;        /* bulk reductions: the element type (mh_ptx_type) */
    uint8_t to_global;   /* BULK_RED: the destination is global (bulk_group), else shared::cluster (mbarrier) */
    uint8_t noftz;       /* .noftz (f16/bf16 add) */
    mh_ptx_opnd dst, src;   /* shared or global addresses (the tensor forms: the shared side in dst for loads, src for stores) */
    mh_ptx_opnd map;        /* tensor forms: the tensor map's address (generic, .param or .const/.global) */
    mh_ptx_opnd coord[5];   /* tensor forms: coordinates (s32 registers or immediates), innermost first */
    mh_ptx_opnd size;       /* bulk forms: bytes (a multiple of 16) */
    mh_ptx_opnd mbar;       /* loads and shared::cluster destinations: the mbarrier (kind MH_OPK_NONE: none) */
    mh_ptx_opnd mask;       /* multicast: the 16-bit CTA mask */
} mh_ptx_tma;

#endif
