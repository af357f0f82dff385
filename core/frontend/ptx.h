/* ptx.h - the PTX front end: a parsed and decoded module (entries, .funcs,
 * parameters, registers, variables, instructions with typed operands).
 * One front end for the emu executor, the cuda backend's argument checks
 * and the instrumentation.  Unsupported instructions are refused here, at
 * load time, with file, line and mnemonic. */
#ifndef MH_PTX_H
#define MH_PTX_H

#include <stddef.h>
#include <stdint.h>
#include "base/error.h"

/* Scalar types. */
typedef enum {
    MH_PT_NONE = 0,
    MH_PT_B8, MH_PT_B16, MH_PT_B32, MH_PT_B64,
    MH_PT_U8, MH_PT_U16, MH_PT_U32, MH_PT_U64,
    MH_PT_S8, MH_PT_S16, MH_PT_S32, MH_PT_S64,
    MH_PT_F16, MH_PT_F16X2, MH_PT_BF16, MH_PT_BF16X2, MH_PT_F32, MH_PT_F64,
    MH_PT_PRED,
} mh_ptx_type;

/* Width in bits of a type (1 for .pred, 0 for none). */
static inline int mh_ptx_type_bits(mh_ptx_type t)
{
    static const unsigned char bits[] = {
        [MH_PT_NONE] = 0, [MH_PT_B8] = 8, [MH_PT_B16] = 16, [MH_PT_B32] = 32, [MH_PT_B64] = 64, [MH_PT_U8] = 8, [MH_PT_U16] = 16,
        [MH_PT_U32] = 32, [MH_PT_U64] = 64, [MH_PT_S8] = 8, [MH_PT_S16] = 16, [MH_PT_S32] = 32, [MH_PT_S64] = 64, [MH_PT_F16] = 16,
        [MH_PT_F16X2] = 32, [MH_PT_BF16] = 16, [MH_PT_BF16X2] = 32, [MH_PT_F32] = 32, [MH_PT_F64] = 64, [MH_PT_PRED] = 1,
    };
    return (unsigned)t <= MH_PT_PRED ? bits[t] : 0;
}
static inline int mh_ptx_type_is_signed(mh_ptx_type t) { return t >= MH_PT_S8 && t <= MH_PT_S64; }
static inline int mh_ptx_type_is_float(mh_ptx_type t) { return t >= MH_PT_F16 && t <= MH_PT_F64; }

typedef enum { MH_SP_GENERIC = 0, MH_SP_GLOBAL, MH_SP_SHARED, MH_SP_LOCAL, MH_SP_PARAM, MH_SP_CONST } mh_ptx_space;

/* Operations (mnemonic without modifiers). */
typedef enum {
    MH_OP_NOP = 0, MH_OP_MOV, MH_OP_LD, MH_OP_ST, MH_OP_CVTA, MH_OP_CVT,
    MH_OP_ADD, MH_OP_SUB, MH_OP_MUL, MH_OP_MAD, MH_OP_FMA, MH_OP_DIV, MH_OP_REM, MH_OP_ABS, MH_OP_NEG, MH_OP_MIN, MH_OP_MAX,
    MH_OP_AND, MH_OP_OR, MH_OP_XOR, MH_OP_NOT, MH_OP_CNOT, MH_OP_SHL, MH_OP_SHR, MH_OP_SETP, MH_OP_SELP, MH_OP_SET,
    MH_OP_SQRT, MH_OP_RSQRT, MH_OP_RCP, MH_OP_EX2, MH_OP_LG2, MH_OP_SIN, MH_OP_COS, MH_OP_TANH,
    MH_OP_CLZ, MH_OP_POPC, MH_OP_BREV, MH_OP_BFE, MH_OP_BFI, MH_OP_PRMT, MH_OP_LOP3, MH_OP_MUL24, MH_OP_MAD24, MH_OP_SAD,
    MH_OP_COPYSIGN, MH_OP_TESTP,
    MH_OP_BRA, MH_OP_RET, MH_OP_EXIT, MH_OP_BAR, MH_OP_MEMBAR, MH_OP_ATOM, MH_OP_RED,
    MH_OP_SHFL, MH_OP_VOTE, MH_OP_ACTIVEMASK, MH_OP_MBARRIER_INIT, MH_OP_PREFETCH, MH_OP_TRAP, MH_OP_CALL, MH_OP_MBARRIER,
    MH_OP_CP_ASYNC, /* cp.async.ca/cg.shared.global (its commit/wait forms decode as MH_OP_MEMBAR) */
    MH_OP_REDUX,    /* redux.sync.{add,min,max,and,or,xor} over the member lanes (operation in cmp, as mh_ptx_aop) */
    MH_OP_MATCH,    /* match.{any,all}.sync.b32/b64 (cmp: 0 any, 1 all; match.all's predicate in dst2) */
    MH_OP_MMA,      /* tensor cores and warpgroups (wgmma, mma, wmma, ldmatrix, stmatrix, movmatrix, setmaxnreg):
                     * decoded into m->mma[callee] (ptx_mma.h), no operands in o[] */
    MH_OP_CLUSTER,  /* clusters (cmp: MH_CL_*): barrier.cluster.arrive/wait, mapa, getctarank, elect.sync */
    MH_OP_TMA,      /* bulk copies (cp.async.bulk[.tensor], cp.reduce.async.bulk[.tensor]): decoded into
                     * m->tma[callee] (ptx_tma.h), kind in cmp, no operands in o[] */
    MH_OP_BFIND,    /* bfind{.shiftamt}.{u32,s32,u64,s64} d, a: the most significant non-sign bit (d is .u32) */
    MH_OP_OPAQUE,   /* an instruction (or form) the front end does not decode: kept as its text span, so
                  * signatures, instrumentation and the cuda backend take the module; emu refuses it */
    MH_OP_COUNT_
} mh_ptx_op;

/* Comparison operators (setp/set) and their float unordered forms. */
typedef enum {
    MH_CMP_EQ, MH_CMP_NE, MH_CMP_LT, MH_CMP_LE, MH_CMP_GT, MH_CMP_GE, MH_CMP_LO, MH_CMP_LS, MH_CMP_HI, MH_CMP_HS,
    MH_CMP_EQU, MH_CMP_NEU, MH_CMP_LTU, MH_CMP_LEU, MH_CMP_GTU, MH_CMP_GEU, MH_CMP_NUM, MH_CMP_NAN,
} mh_ptx_cmp;

/* Modifier bits. */
enum {
    MH_MOD_HI = 1 << 0, MH_MOD_LO = 1 << 1, MH_MOD_WIDE = 1 << 2, MH_MOD_SAT = 1 << 3, MH_MOD_FTZ = 1 << 4,
    MH_MOD_APPROX = 1 << 5, MH_MOD_FULL = 1 << 6, MH_MOD_UNI = 1 << 7, MH_MOD_SHIFTAMT = 1 << 8,
    MH_MOD_TO = 1 << 9,    /* cvta.to.space */
    MH_MOD_CC = 1 << 10,
    MH_MOD_MARKER = 1 << 11, /* MH_OP_NOP standing for a "// @mgpu" marker comment (text_off = the comment) */
    MH_MOD_PARITY = 1 << 13,  /* mbarrier.test_wait/try_wait.parity */
    MH_MOD_NOINC = 1 << 14,   /* cp.async.mbarrier.arrive.noinc */
    MH_MOD_CG = 1 << 15,      /* ld.cg: cached in L2, not in L1 (emu's time model skips the SM's L1) */
    MH_MOD_OPAQUE_CALL = 1 << 12, /* MH_OP_OPAQUE that is a call: through a register (callee -1: any function
                                * may run) or with more parameters than an instruction holds (callee known) */
};

/* MH_OP_MBARRIER's kind (in cmp): the mbarrier object's arrivals, transaction bytes and waits. */
enum { MH_MB_ARRIVE, MH_MB_ARRIVE_EXPECT_TX, MH_MB_EXPECT_TX, MH_MB_COMPLETE_TX, MH_MB_TEST_WAIT, MH_MB_TRY_WAIT, MH_MB_CP_ASYNC_ARRIVE,
       MH_MB_ARRIVE_DROP, MH_MB_ARRIVE_DROP_EXPECT_TX, MH_MB_PENDING_COUNT, MH_MB_INVAL };
/* Where an MH_OP_MBARRIER's mbarrier address is (o[0] or o[1]); -1: none (pending_count reads a state) */
static inline int mh_mb_addr_opnd(int k)
{
    return k == MH_MB_PENDING_COUNT ? -1 : k == MH_MB_EXPECT_TX || k == MH_MB_COMPLETE_TX || k == MH_MB_CP_ASYNC_ARRIVE ||
                                               k == MH_MB_INVAL ? 0 : 1;
}

/* MH_OP_CVT's form (in cmp): to tf32 (type is .b32, type2 .f32; the tf32 is an f32's bits with the low 13
 * mantissa bits zero), with .satfinite or .relu.  Two fp8s in a .b16 (.e4m3x2, or .e5m2x2 with
 * MH_CVT_E5M2): to them (type .b16; from two .f32 d, a, b or an .f16x2) or from them (type2 .b16, to
 * .f16x2); the element from a, or a's upper half, in the upper byte. */
enum { MH_CVT_TF32 = 1 << 0, MH_CVT_SATFINITE = 1 << 1, MH_CVT_RELU = 1 << 2, MH_CVT_TO_F8X2 = 1 << 3,
       MH_CVT_FROM_F8X2 = 1 << 4, MH_CVT_E5M2 = 1 << 5 };

/* MH_OP_MIN / MH_OP_MAX's form (in cmp): .NaN (a NaN operand gives the canonical NaN, not the other). */
enum { MH_MINMAX_NAN = 1 };

/* MH_OP_BAR's form (in cmp): 0 bar.sync, 1 bar.warp.sync, 2 bar.arrive, MH_BAR_RED bar.red (its
 * operation in boolop: 1 popc (.u32), 2 and, 3 or (.pred); operands d, a, [b,] {!}c). */
enum { MH_BAR_RED = 3 };

/* MH_OP_CLUSTER's kind (in cmp). */
enum { MH_CL_ARRIVE, MH_CL_WAIT, MH_CL_MAPA, MH_CL_GETCTARANK, MH_CL_ELECT };

/* Rounding: rn (default) rz rm rp, and the integer forms rni rzi rmi rpi. */
typedef enum { MH_TESTP_FINITE, MH_TESTP_INFINITE, MH_TESTP_NUMBER, MH_TESTP_NOTANUMBER, MH_TESTP_NORMAL, MH_TESTP_SUBNORMAL } mh_ptx_testp;
typedef enum { MH_RND_NONE = 0, MH_RND_RN, MH_RND_RZ, MH_RND_RM, MH_RND_RP, MH_RND_RNI, MH_RND_RZI, MH_RND_RMI, MH_RND_RPI,
               MH_RND_RNA /* cvt.rna.tf32.f32: to nearest, ties away from zero */ } mh_ptx_rnd;

typedef enum {
    MH_OPK_NONE = 0, MH_OPK_REG, MH_OPK_IMM, MH_OPK_SREG, MH_OPK_ADDR, MH_OPK_VEC, MH_OPK_LABEL, MH_OPK_SYM, MH_OPK_SINK,
    MH_OPK_FUNC, /* a function's address (reg = its index): function pointers, which emu does not run */
    MH_OPK_PARAM_ADDR, /* a parameter's address (param = its index): __grid_constant__ kernel parameters
                     * (a CUtensorMap for TMA), which emu does not run */
} mh_ptx_opnd_kind;

/* Special registers. */
typedef enum {
    MH_SR_TID_X, MH_SR_TID_Y, MH_SR_TID_Z, MH_SR_NTID_X, MH_SR_NTID_Y, MH_SR_NTID_Z,
    MH_SR_CTAID_X, MH_SR_CTAID_Y, MH_SR_CTAID_Z, MH_SR_NCTAID_X, MH_SR_NCTAID_Y, MH_SR_NCTAID_Z,
    MH_SR_LANEID, MH_SR_WARPID, MH_SR_NWARPID, MH_SR_SMID, MH_SR_NSMID, MH_SR_CLOCK, MH_SR_CLOCK_HI, MH_SR_CLOCK64,
    MH_SR_GLOBALTIMER, MH_SR_GLOBALTIMER_LO, MH_SR_GLOBALTIMER_HI,
    MH_SR_LANEMASK_EQ, MH_SR_LANEMASK_LT, MH_SR_LANEMASK_LE, MH_SR_LANEMASK_GT, MH_SR_LANEMASK_GE,
    MH_SR_DYNAMIC_SMEM_SIZE, MH_SR_TOTAL_SMEM_SIZE, MH_SR_GRIDID, MH_SR_AGGR_SMEM_SIZE,
    MH_SR_CLUSTERID_X, MH_SR_CLUSTERID_Y, MH_SR_CLUSTERID_Z, MH_SR_NCLUSTERID_X, MH_SR_NCLUSTERID_Y,
    MH_SR_NCLUSTERID_Z, MH_SR_CLUSTER_CTAID_X, MH_SR_CLUSTER_CTAID_Y, MH_SR_CLUSTER_CTAID_Z, MH_SR_CLUSTER_NCTAID_X,
    MH_SR_CLUSTER_NCTAID_Y, MH_SR_CLUSTER_NCTAID_Z, MH_SR_CLUSTER_CTARANK, MH_SR_CLUSTER_NCTARANK, MH_SR_IS_EXPLICIT_CLUSTER,
    /* known to the front end (instrumentation and the cuda backend take them), not run by
     * emu: a kernel reading one is refused there, naming it */
    MH_SR_NOT_ON_EMU_,
    MH_SR_RESERVED_SMEM_BEGIN = MH_SR_NOT_ON_EMU_, MH_SR_RESERVED_SMEM_END, MH_SR_RESERVED_SMEM_CAP, MH_SR_RESERVED_SMEM_0, MH_SR_RESERVED_SMEM_1,
    MH_SR_CURRENT_GRAPH_EXEC,
    MH_SR_ENVREG0, MH_SR_PM0 = MH_SR_ENVREG0 + 32, MH_SR_PM0_64 = MH_SR_PM0 + 8,
    MH_SR_COUNT_ = MH_SR_PM0_64 + 8
} mh_ptx_sreg;

typedef struct mh_ptx_opnd {
    uint8_t kind;        /* mh_ptx_opnd_kind */
    uint8_t neg;         /* !%p for predicate operands */
    uint8_t n;           /* MH_OPK_VEC: number of elements */
    uint8_t fimm;        /* MH_OPK_IMM written as a float literal: imm holds double bits until decoded;
                          * MH_OPK_VEC: an element is the constant 0 (as vec[k] = UINT32_MAX) */
    uint32_t reg;        /* MH_OPK_REG / base of MH_OPK_ADDR (UINT32_MAX: none) / MH_OPK_SREG id / MH_OPK_LABEL target */
    uint32_t vec[4];     /* MH_OPK_VEC register indices (UINT32_MAX = sink "_" as a destination, the
                          * constant 0 as a source: both read 0; MH_PTX_VEC_SREG|id = special) */
    int64_t imm;         /* MH_OPK_IMM bits, MH_OPK_ADDR offset */
    int32_t sym;         /* MH_OPK_ADDR / MH_OPK_SYM: variable index, -1 none */
    int32_t param;       /* MH_OPK_ADDR: kernel parameter index (ld.param [name]), -1 none */
} mh_ptx_opnd;

#define MH_PTX_MAX_OPNDS 6
/* The deepest nesting the front end takes (blocks "{ }", braces in a statement, parentheses in an
 * initialiser): compiler output nests a few levels (inline asm in a scope); past this the parse
 * is a ptx_syntax error naming the line, never an overflow of the stack. */
#define MH_PTX_MAX_NESTING 256
/* The most registers a module may declare (nvcc -G output of a large kernel has some 10^5):
 * "%r<1000000>" a few thousand times over would otherwise take the machine's memory. */
#define MH_PTX_MAX_REGS (1u << 22)
#define MH_PTX_VEC_SREG 0x80000000u

typedef struct mh_ptx_insn {
    uint16_t op;         /* mh_ptx_op */
    uint8_t type;        /* main type (destination type for cvt) */
    uint8_t type2;       /* source type for cvt; ".pred" etc. */
    uint8_t space;       /* ld/st/atom/cvta state space */
    uint8_t vec;         /* vector width of ld/st (1, 2, 4) */
    uint8_t cmp;         /* setp/set comparison; atom/red operation; shfl mode; vote mode; setp bool op */
    uint8_t boolop;      /* setp combining op: 0 none, 1 and, 2 or, 3 xor */
    uint8_t rnd;         /* mh_ptx_rnd */
    uint8_t nopnds;
    uint16_t mods;       /* MOD_* */
    int32_t guard;       /* predicate register index guarding it, -1 none */
    int32_t dst2;        /* second destination of "d|p" (setp, shfl), -1 none */
    int32_t callee;      /* call: index of the called function; its return and argument
                          * variables are o[0 .. nopnds) as MH_OPK_SYM, the first `cmp` being returns;
                          * MH_OP_MMA: index of its record in m->mma */
    uint8_t guard_neg;
    uint32_t line;       /* line in the PTX text */
    uint32_t text_off, text_end; /* the statement's bytes in the module text, guard to ';' (0, 0: synthetic) */
    mh_ptx_opnd o[MH_PTX_MAX_OPNDS];
} mh_ptx_insn;

/* Atomic / reduction operations (in mh_ptx_insn.cmp). */
typedef enum { AOP_ADD, AOP_MIN, AOP_MAX, AOP_INC, AOP_DEC, AOP_AND, AOP_OR, AOP_XOR, AOP_EXCH, AOP_CAS } mh_ptx_aop;
/* shfl modes */
typedef enum { SHFL_UP, SHFL_DOWN, SHFL_BFLY, SHFL_IDX } mh_ptx_shfl;
/* vote modes */
typedef enum { VOTE_ALL, VOTE_ANY, VOTE_UNI, VOTE_BALLOT } mh_ptx_vote;

typedef struct mh_ptx_param {
    char *name;
    mh_ptx_type type;
    uint32_t size;       /* bytes (arrays: element size x count) */
    uint32_t align;
    uint32_t offset;     /* in the parameter buffer */
    int is_ptr;          /* declared .ptr, or inferred: loaded and used as an address */
    mh_ptx_space ptr_space; /* .ptr.global etc., MH_SP_GENERIC when unspecified */
} mh_ptx_param;

typedef struct mh_ptx_var {
    char *name;
    mh_ptx_space space;
    uint32_t align;
    uint64_t size;       /* 0 for extern/dynamic shared arrays */
    int is_extern;       /* .extern .shared (dynamic shared memory) */
    unsigned char *init; /* initialiser bytes (size bytes) or NULL */
    int func;            /* -1 for module scope, else the function it belongs to */
    uint64_t offset;     /* assigned offset in its space (shared/local per function or module; a static
                          * shared variable's in each kernel: mh_ptx_func.shared_offsets[shared_slot]) */
    int32_t shared_slot; /* a static .shared variable's index in the kernels' shared_offsets */
    uint32_t address_init_line; /* an element initialised with an address (generic(x), x+8): its line
                                 * (the driver fills it in; emu does not), 0 when none */
    uint32_t line;       /* of its declaration */
} mh_ptx_var;

/* A block of a function's body: the body itself (block 0), and each "{ }" inside it, in text
 * order.  Its labels, registers and variables are local to it, hiding those of enclosing blocks
 * (the PTX ISA's scopes); a branch reaches the innermost visible label of its name. */
typedef struct mh_ptx_block {
    uint32_t open;       /* offset just after its '{' */
    uint32_t close;      /* offset of its '}' */
    int32_t parent;      /* the enclosing block (-1: the body) */
} mh_ptx_block;

typedef struct mh_ptx_func {
    char *name;
    char *short_name;    /* for messages: demangled and shortened ("k<128, 256, ...>", base/demangle.h),
                          * a plain name as it is (up to MH_SHORT_NAME_MAX bytes) */
    int is_entry;
    int visible;
    mh_ptx_param *params;
    uint32_t nparams;
    uint32_t param_bytes;
    mh_ptx_param *rets;     /* .func return parameters */
    uint32_t nrets;
    uint32_t first_reg, nregs; /* registers [first_reg, first_reg + nregs) */
    mh_ptx_insn *code;
    uint32_t ncode;
    uint32_t line;       /* line of the declaration */
    uint64_t shared_bytes; /* static shared memory: the variables of the functions it reaches and the
                            * module-scope ones they name, as ptxas counts (ptx_smem.c) */
    uint64_t *shared_offsets; /* a kernel's: each static shared variable's offset in it, by shared_slot
                               * (UINT64_MAX: not in it); NULL for a .func or a module without any */
    uint64_t dyn_offset;   /* where its dynamic shared memory (unsized .extern .shared arrays) starts */
    uint64_t local_bytes;  /* .local variables per thread */
    uint32_t maxntid[3];   /* .maxntid or .reqntid (0: none) */
    int reqntid;           /* maxntid came from .reqntid: the block must be exactly that */
    uint32_t reqcluster[3];  /* .reqnctapercluster (0: none) */
    uint32_t maxclusterrank; /* .maxclusterrank (0: none) */
    int explicitcluster;     /* .explicitcluster: launched with a cluster */
    int defined;         /* has a body */
    uint32_t ret_bytes;  /* bytes of the return parameters */
    uint32_t params_close; /* offset of the ')' closing the parameter list (0: none) */
    uint32_t body_open;    /* offset just after the body's '{' */
    uint32_t body_close;   /* offset of the body's closing '}' */
    uint64_t callarea_bytes; /* bytes of the .param variables its call sequences declare */
    mh_ptx_block *blocks;  /* its body (block 0) and the blocks inside, in text order */
    uint32_t nblocks;
} mh_ptx_func;

/* The innermost block of f holding text offset `off` (0, the body, when none inside does). */
uint32_t mh_ptx_block_at(const mh_ptx_func *f, uint32_t off);

/* A "// @mgpu ..." comment: a region marker, read once by the lexer with the one
 * grammar of markers, "// @mgpu begin NAME" and "// @mgpu end NAME" (any "//"
 * comment whose text starts with "@mgpu" is one; what follows decides its kind).
 * The module keeps every one in text order, inside function bodies or not: the
 * instrumentation reports the malformed and misplaced ones (the parse only those
 * inside a statement), so a module with a bad marker still loads uninstrumented. */
typedef enum {
    MH_MARKER_BEGIN,    /* // @mgpu begin NAME */
    MH_MARKER_END,      /* // @mgpu end NAME */
    MH_MARKER_BAD_VERB, /* neither "begin", "end" nor "role" (as a word) after "@mgpu" */
    MH_MARKER_NO_NAME,  /* "begin", "end" or "role" with nothing after it */
    MH_MARKER_ROLE,     /* // @mgpu role NAME: the lane that runs it has this role (not a region) */
} mh_ptx_marker_kind;

typedef struct mh_ptx_marker {
    size_t off;          /* the comment's "//" in the module text */
    size_t eol;          /* the '\n' that ends its line, or the text's end (its NUL) on the last line */
    size_t name_off;     /* the region name, white space around it trimmed: name_len bytes at */
    size_t name_len;     /* text + name_off (0, 0 unless BEGIN, END or ROLE) */
    uint32_t line;
    uint8_t kind;        /* mh_ptx_marker_kind */
} mh_ptx_marker;

typedef struct mh_ptx_module {
    char *path;          /* for messages */
    char *text;          /* the PTX source (owned) */
    uint32_t version_major, version_minor;
    char target[32];
    uint32_t address_size;
    mh_ptx_func *funcs;
    uint32_t nfuncs;
    mh_ptx_var *vars;
    uint32_t nvars;
    uint32_t nregs;      /* registers of all functions (global numbering) */
    mh_ptx_type *reg_type;  /* type of each register */
    char **reg_name;     /* name of each register (for messages) */
    mh_ptx_marker *markers; /* every "// @mgpu" comment, in text order (offsets strictly increasing) */
    size_t nmarkers;
    struct mh_ptx_mma *mma; /* the MH_OP_MMA instructions' records (ptx_mma.h) */
    uint32_t nmma;
    uint32_t *mma_regs;     /* their register lists, one after another (module register numbers) */
    size_t nmma_regs;
    struct mh_ptx_tma *tma; /* the MH_OP_TMA instructions' records (ptx_tma.h) */
    uint32_t ntma;
} mh_ptx_module;

/* Parses and decodes text (copied); `path` names it in errors.  Errors:
 * MH_E_PTX_SYNTAX (malformed) or MH_E_PTX_UNSUPPORTED (an instruction or
 * modifier the front end does not know), with e->line set and the message
 * "path:line: ..."; MH_E_NO_MEMORY (also when a marker could not be recorded). */
int mh_ptx_parse(mh_ptx_module *m, const char *text, size_t len, const char *path, mh_error *e);
void mh_ptx_free(mh_ptx_module *m);
const mh_ptx_func *mh_ptx_find(const mh_ptx_module *m, const char *name);
const char *mh_ptx_op_name(mh_ptx_op op);
const char *mh_ptx_type_name(mh_ptx_type t);
/* "%tid.x", "%envreg3", ... (buf: for the numbered ones) */
const char *mh_ptx_sreg_name(int id, char *buf, size_t len);

#endif
