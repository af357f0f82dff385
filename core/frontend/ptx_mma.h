/* ptx_mma.h - the decoded form of the tensor-core and warpgroup instructions (wgmma, mma,
 * wmma, ldmatrix, stmatrix, movmatrix, setmaxnreg): one record per instruction in
 * m->mma, which its MH_OP_MMA instruction names by index (mh_ptx_insn.callee). */
#ifndef MH_PTX_MMA_H
#define MH_PTX_MMA_H

#include "frontend/ptx.h"

/* Element types of tensor-core operands (PTX has more than mh_ptx_type: tf32, e4m3, e5m2). */
typedef enum {
    MH_MT_NONE = 0, MH_MT_F16, MH_MT_BF16, MH_MT_TF32, MH_MT_F32, MH_MT_F64, MH_MT_E4M3, MH_MT_E5M2,
    MH_MT_S8, MH_MT_U8, MH_MT_S32, MH_MT_B16, MH_MT_U32,
} mh_mma_type;

typedef enum {
    MH_MMA_WGMMA,       /* wgmma.mma_async.sync.aligned.m64nNkK.dtype.atype.btype */
    MH_MMA_WG_FENCE,    /* wgmma.fence.sync.aligned */
    MH_MMA_WG_COMMIT,   /* wgmma.commit_group.sync.aligned */
    MH_MMA_WG_WAIT,     /* wgmma.wait_group.sync.aligned N (imm) */
    MH_MMA_MMA,         /* mma.sync.aligned.mMnNkK.alayout.blayout.dtype.atype.btype.ctype */
    MH_MMA_LDMATRIX,    /* ldmatrix.sync.aligned.m8n8.xN[.trans].shared.b16 */
    MH_MMA_STMATRIX,    /* stmatrix.sync.aligned.m8n8.xN[.trans].shared.b16 */
    MH_MMA_MOVMATRIX,   /* movmatrix.sync.aligned.m8n8.trans.b16 */
    MH_MMA_WMMA_LOAD,   /* wmma.load.{a,b,c}.sync.aligned.layout.shape[.space].type */
    MH_MMA_WMMA_STORE,  /* wmma.store.d.sync.aligned.layout.shape[.space].type */
    MH_MMA_WMMA_MMA,    /* wmma.mma.sync.aligned.alayout.blayout.shape.dtype[.atype.btype].ctype */
    MH_MMA_SETMAXNREG,  /* setmaxnreg.{inc,dec}.sync.aligned.u32 N (imm) */
} mh_mma_kind;

/* A list of registers: n entries of m->mma_regs from off (UINT32_MAX entries: "_"). */
typedef struct { uint32_t off; uint16_t n; } mh_mma_list;

typedef struct mh_ptx_mma {
    uint8_t kind;               /* mh_mma_kind */
    uint8_t atype, btype, ctype, dtype; /* mh_mma_type (wmma.load/store: the fragment's in atype) */
    uint8_t alayout, blayout;   /* 0 row, 1 col (wmma.load/store: the memory layout in alayout) */
    uint8_t frag;               /* wmma.load: 'a', 'b' or 'c'; wmma.store: 'd' */
    uint8_t num;                /* ldmatrix/stmatrix: matrices (1, 2, 4) */
    uint8_t trans;              /* ldmatrix/stmatrix/movmatrix .trans */
    uint8_t satfinite;          /* .satfinite */
    uint8_t space;              /* ldmatrix/stmatrix/wmma.load/store: mh_ptx_space */
    uint8_t inc;                /* setmaxnreg: 1 .inc, 0 .dec */
    uint8_t a_regs;             /* wgmma: A from registers (else a descriptor) */
    int8_t scale_a, scale_b;    /* wgmma imm-scale-a/b: 1 or -1 */
    uint8_t trans_a, trans_b;   /* wgmma imm-trans-a/b */
    uint8_t has_stride;         /* wmma.load/store: a stride operand */
    uint16_t m, n, k;
    uint32_t imm;               /* wait_group N, setmaxnreg's count */
    mh_mma_list d, a, b, c;     /* register lists (ldmatrix/movmatrix: d; stmatrix/wmma.store: a) */
    mh_ptx_opnd desc_a, desc_b; /* wgmma: the descriptors (desc_a when !a_regs) */
    mh_ptx_opnd scale_d;        /* wgmma: scale-d (a predicate or an immediate) */
    mh_ptx_opnd addr, stride;   /* ldmatrix/stmatrix/wmma.load/store: the address; wmma: the stride */
} mh_ptx_mma;

/* Bits of an element of a tensor-core type. */
static inline int mh_mma_type_bits(int t)
{
    switch (t) {
    case MH_MT_F16: case MH_MT_BF16: case MH_MT_B16: return 16;
    case MH_MT_TF32: case MH_MT_F32: case MH_MT_S32: case MH_MT_U32: return 32;
    case MH_MT_F64: return 64;
    case MH_MT_E4M3: case MH_MT_E5M2: case MH_MT_S8: case MH_MT_U8: return 8;
    default: return 0;
    }
}

const char *mh_mma_type_name(int t);

#endif
