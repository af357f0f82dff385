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
    PT_NONE = 0,
    PT_B8, PT_B16, PT_B32, PT_B64,
    PT_U8, PT_U16, PT_U32, PT_U64,
    PT_S8, PT_S16, PT_S32, PT_S64,
    PT_F16, PT_F16X2, PT_BF16, PT_BF16X2, PT_F32, PT_F64,
    PT_PRED,
} ptx_type;

/* Width in bits of a type (1 for .pred, 0 for none). */
static inline int ptx_type_bits(ptx_type t)
{
    static const unsigned char bits[] = {
        [PT_NONE] = 0, [PT_B8] = 8, [PT_B16] = 16, [PT_B32] = 32, [PT_B64] = 64, [PT_U8] = 8, [PT_U16] = 16,
        [PT_U32] = 32, [PT_U64] = 64, [PT_S8] = 8, [PT_S16] = 16, [PT_S32] = 32, [PT_S64] = 64, [PT_F16] = 16,
        [PT_F16X2] = 32, [PT_BF16] = 16, [PT_BF16X2] = 32, [PT_F32] = 32, [PT_F64] = 64, [PT_PRED] = 1,
    };
    return (unsigned)t <= PT_PRED ? bits[t] : 0;
}
static inline int ptx_type_is_signed(ptx_type t) { return t >= PT_S8 && t <= PT_S64; }
static inline int ptx_type_is_float(ptx_type t) { return t >= PT_F16 && t <= PT_F64; }

typedef enum { SP_GENERIC = 0, SP_GLOBAL, SP_SHARED, SP_LOCAL, SP_PARAM, SP_CONST } ptx_space;

/* Operations (mnemonic without modifiers). */
typedef enum {
    OP_NOP = 0, OP_MOV, OP_LD, OP_ST, OP_CVTA, OP_CVT,
    OP_ADD, OP_SUB, OP_MUL, OP_MAD, OP_FMA, OP_DIV, OP_REM, OP_ABS, OP_NEG, OP_MIN, OP_MAX,
    OP_AND, OP_OR, OP_XOR, OP_NOT, OP_CNOT, OP_SHL, OP_SHR, OP_SETP, OP_SELP, OP_SET,
    OP_SQRT, OP_RSQRT, OP_RCP, OP_EX2, OP_LG2, OP_SIN, OP_COS, OP_TANH,
    OP_CLZ, OP_POPC, OP_BREV, OP_BFE, OP_BFI, OP_PRMT, OP_LOP3, OP_MUL24, OP_MAD24, OP_SAD,
    OP_COPYSIGN, OP_TESTP,
    OP_BRA, OP_RET, OP_EXIT, OP_BAR, OP_MEMBAR, OP_ATOM, OP_RED,
    OP_SHFL, OP_VOTE, OP_ACTIVEMASK, OP_MBARRIER_INIT, OP_PREFETCH, OP_TRAP, OP_CALL, OP_MBARRIER,
    OP_CP_ASYNC, /* cp.async.ca/cg.shared.global (its commit/wait forms decode as OP_MEMBAR) */
    OP_REDUX,    /* redux.sync.{add,min,max,and,or,xor} over the member lanes (operation in cmp, as ptx_aop) */
    OP_MATCH,    /* match.{any,all}.sync.b32/b64 (cmp: 0 any, 1 all; match.all's predicate in dst2) */
    OP_OPAQUE,   /* an instruction (or form) the front end does not decode: kept as its text span, so
                  * signatures, instrumentation and the cuda backend take the module; emu refuses it */
    OP_COUNT_
} ptx_op;

/* Comparison operators (setp/set) and their float unordered forms. */
typedef enum {
    CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE, CMP_LO, CMP_LS, CMP_HI, CMP_HS,
    CMP_EQU, CMP_NEU, CMP_LTU, CMP_LEU, CMP_GTU, CMP_GEU, CMP_NUM, CMP_NAN,
} ptx_cmp;

/* Modifier bits. */
enum {
    MOD_HI = 1 << 0, MOD_LO = 1 << 1, MOD_WIDE = 1 << 2, MOD_SAT = 1 << 3, MOD_FTZ = 1 << 4,
    MOD_APPROX = 1 << 5, MOD_FULL = 1 << 6, MOD_UNI = 1 << 7, MOD_SHIFTAMT = 1 << 8,
    MOD_TO = 1 << 9,    /* cvta.to.space */
    MOD_CC = 1 << 10,
    MOD_MARKER = 1 << 11, /* OP_NOP standing for a "// @mgpu" marker comment (text_off = the comment) */
    MOD_PARITY = 1 << 13,  /* mbarrier.test_wait/try_wait.parity */
    MOD_NOINC = 1 << 14,   /* cp.async.mbarrier.arrive.noinc */
    MOD_OPAQUE_CALL = 1 << 12, /* OP_OPAQUE that is a call: through a register (callee -1: any function
                                * may run) or with more parameters than an instruction holds (callee known) */
};

/* OP_MBARRIER's kind (in cmp): the mbarrier object's arrivals, transaction bytes and waits. */
enum { MB_ARRIVE, MB_ARRIVE_EXPECT_TX, MB_EXPECT_TX, MB_COMPLETE_TX, MB_TEST_WAIT, MB_TRY_WAIT, MB_CP_ASYNC_ARRIVE };

/* Rounding: rn (default) rz rm rp, and the integer forms rni rzi rmi rpi. */
typedef enum { TESTP_FINITE, TESTP_INFINITE, TESTP_NUMBER, TESTP_NOTANUMBER, TESTP_NORMAL, TESTP_SUBNORMAL } ptx_testp;
typedef enum { RND_NONE = 0, RND_RN, RND_RZ, RND_RM, RND_RP, RND_RNI, RND_RZI, RND_RMI, RND_RPI } ptx_rnd;

typedef enum {
    OPK_NONE = 0, OPK_REG, OPK_IMM, OPK_SREG, OPK_ADDR, OPK_VEC, OPK_LABEL, OPK_SYM, OPK_SINK,
    OPK_FUNC, /* a function's address (reg = its index): function pointers, which emu does not run */
    OPK_PARAM_ADDR, /* a parameter's address (param = its index): __grid_constant__ kernel parameters
                     * (a CUtensorMap for TMA), which emu does not run */
} ptx_opnd_kind;

/* Special registers. */
typedef enum {
    SR_TID_X, SR_TID_Y, SR_TID_Z, SR_NTID_X, SR_NTID_Y, SR_NTID_Z,
    SR_CTAID_X, SR_CTAID_Y, SR_CTAID_Z, SR_NCTAID_X, SR_NCTAID_Y, SR_NCTAID_Z,
    SR_LANEID, SR_WARPID, SR_NWARPID, SR_SMID, SR_NSMID, SR_CLOCK, SR_CLOCK_HI, SR_CLOCK64,
    SR_GLOBALTIMER, SR_GLOBALTIMER_LO, SR_GLOBALTIMER_HI,
    SR_LANEMASK_EQ, SR_LANEMASK_LT, SR_LANEMASK_LE, SR_LANEMASK_GT, SR_LANEMASK_GE,
    SR_DYNAMIC_SMEM_SIZE, SR_TOTAL_SMEM_SIZE, SR_GRIDID, SR_AGGR_SMEM_SIZE,
    /* known to the front end (instrumentation and the cuda backend take them), not run by
     * emu: a kernel reading one is refused there, naming it */
    SR_NOT_ON_EMU_,
    SR_CLUSTERID_X = SR_NOT_ON_EMU_, SR_CLUSTERID_Y, SR_CLUSTERID_Z, SR_NCLUSTERID_X, SR_NCLUSTERID_Y,
    SR_NCLUSTERID_Z, SR_CLUSTER_CTAID_X, SR_CLUSTER_CTAID_Y, SR_CLUSTER_CTAID_Z, SR_CLUSTER_NCTAID_X,
    SR_CLUSTER_NCTAID_Y, SR_CLUSTER_NCTAID_Z, SR_CLUSTER_CTARANK, SR_CLUSTER_NCTARANK, SR_IS_EXPLICIT_CLUSTER,
    SR_RESERVED_SMEM_BEGIN, SR_RESERVED_SMEM_END, SR_RESERVED_SMEM_CAP, SR_RESERVED_SMEM_0, SR_RESERVED_SMEM_1,
    SR_CURRENT_GRAPH_EXEC,
    SR_ENVREG0, SR_PM0 = SR_ENVREG0 + 32, SR_PM0_64 = SR_PM0 + 8,
    SR_COUNT_ = SR_PM0_64 + 8
} ptx_sreg;

typedef struct ptx_opnd {
    uint8_t kind;        /* ptx_opnd_kind */
    uint8_t neg;         /* !%p for predicate operands */
    uint8_t n;           /* OPK_VEC: number of elements */
    uint8_t fimm;        /* OPK_IMM written as a float literal: imm holds double bits until decoded */
    uint32_t reg;        /* OPK_REG / base of OPK_ADDR (UINT32_MAX: none) / OPK_SREG id / OPK_LABEL target */
    uint32_t vec[4];     /* OPK_VEC register indices (UINT32_MAX = sink "_", PTX_VEC_SREG|id = special) */
    int64_t imm;         /* OPK_IMM bits, OPK_ADDR offset */
    int32_t sym;         /* OPK_ADDR / OPK_SYM: variable index, -1 none */
    int32_t param;       /* OPK_ADDR: kernel parameter index (ld.param [name]), -1 none */
} ptx_opnd;

#define PTX_MAX_OPNDS 6
#define PTX_VEC_SREG 0x80000000u

typedef struct ptx_insn {
    uint16_t op;         /* ptx_op */
    uint8_t type;        /* main type (destination type for cvt) */
    uint8_t type2;       /* source type for cvt; ".pred" etc. */
    uint8_t space;       /* ld/st/atom/cvta state space */
    uint8_t vec;         /* vector width of ld/st (1, 2, 4) */
    uint8_t cmp;         /* setp/set comparison; atom/red operation; shfl mode; vote mode; setp bool op */
    uint8_t boolop;      /* setp combining op: 0 none, 1 and, 2 or, 3 xor */
    uint8_t rnd;         /* ptx_rnd */
    uint8_t nopnds;
    uint16_t mods;       /* MOD_* */
    int32_t guard;       /* predicate register index guarding it, -1 none */
    int32_t dst2;        /* second destination of "d|p" (setp, shfl), -1 none */
    int32_t callee;      /* call: index of the called function; its return and argument
                          * variables are o[0 .. nopnds) as OPK_SYM, the first `cmp` being returns */
    uint8_t guard_neg;
    uint32_t line;       /* line in the PTX text */
    uint32_t text_off, text_end; /* the statement's bytes in the module text, guard to ';' (0, 0: synthetic) */
    ptx_opnd o[PTX_MAX_OPNDS];
} ptx_insn;

/* Atomic / reduction operations (in ptx_insn.cmp). */
typedef enum { AOP_ADD, AOP_MIN, AOP_MAX, AOP_INC, AOP_DEC, AOP_AND, AOP_OR, AOP_XOR, AOP_EXCH, AOP_CAS } ptx_aop;
/* shfl modes */
typedef enum { SHFL_UP, SHFL_DOWN, SHFL_BFLY, SHFL_IDX } ptx_shfl;
/* vote modes */
typedef enum { VOTE_ALL, VOTE_ANY, VOTE_UNI, VOTE_BALLOT } ptx_vote;

typedef struct ptx_param {
    char *name;
    ptx_type type;
    uint32_t size;       /* bytes (arrays: element size x count) */
    uint32_t align;
    uint32_t offset;     /* in the parameter buffer */
    int is_ptr;          /* declared .ptr, or inferred: loaded and used as an address */
    ptx_space ptr_space; /* .ptr.global etc., SP_GENERIC when unspecified */
} ptx_param;

typedef struct ptx_var {
    char *name;
    ptx_space space;
    uint32_t align;
    uint64_t size;       /* 0 for extern/dynamic shared arrays */
    int is_extern;       /* .extern .shared (dynamic shared memory) */
    unsigned char *init; /* initialiser bytes (size bytes) or NULL */
    int func;            /* -1 for module scope, else the function it belongs to */
    uint64_t offset;     /* assigned offset in its space (shared/local per function or module) */
    uint32_t address_init_line; /* an element initialised with an address (generic(x), x+8): its line
                                 * (the driver fills it in; emu does not), 0 when none */
} ptx_var;

typedef struct ptx_func {
    char *name;
    int is_entry;
    int visible;
    ptx_param *params;
    uint32_t nparams;
    uint32_t param_bytes;
    ptx_param *rets;     /* .func return parameters */
    uint32_t nrets;
    uint32_t first_reg, nregs; /* registers [first_reg, first_reg + nregs) */
    ptx_insn *code;
    uint32_t ncode;
    uint32_t line;       /* line of the declaration */
    uint64_t shared_bytes; /* static shared memory used (module + own variables) */
    uint64_t local_bytes;  /* .local variables per thread */
    uint32_t maxntid[3];   /* .maxntid or .reqntid (0: none) */
    int reqntid;           /* maxntid came from .reqntid: the block must be exactly that */
    int defined;         /* has a body */
    uint32_t ret_bytes;  /* bytes of the return parameters */
    uint32_t params_close; /* offset of the ')' closing the parameter list (0: none) */
    uint32_t body_open;    /* offset just after the body's '{' */
    uint32_t body_close;   /* offset of the body's closing '}' */
    uint64_t callarea_bytes; /* bytes of the .param variables its call sequences declare */
} ptx_func;

typedef struct ptx_module {
    char *path;          /* for messages */
    char *text;          /* the PTX source (owned) */
    uint32_t version_major, version_minor;
    char target[32];
    uint32_t address_size;
    ptx_func *funcs;
    uint32_t nfuncs;
    ptx_var *vars;
    uint32_t nvars;
    uint32_t nregs;      /* registers of all functions (global numbering) */
    ptx_type *reg_type;  /* type of each register */
    char **reg_name;     /* name of each register (for messages) */
} ptx_module;

/* Parses and decodes text (copied); `path` names it in errors.  Errors:
 * MH_E_PTX_SYNTAX (malformed) or MH_E_PTX_UNSUPPORTED (an instruction or
 * modifier the front end does not know), with e->line set and the message
 * "path:line: ...". */
int ptx_parse(ptx_module *m, const char *text, size_t len, const char *path, mh_error *e);
void ptx_free(ptx_module *m);
const ptx_func *ptx_find(const ptx_module *m, const char *name);
const char *ptx_op_name(ptx_op op);
const char *ptx_type_name(ptx_type t);
/* "%tid.x", "%envreg3", ... (buf: for the numbered ones) */
const char *ptx_sreg_name(int id, char *buf, size_t len);

#endif
