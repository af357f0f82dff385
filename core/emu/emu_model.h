/* emu_model.h - the named device models emu's virtual time comes from: every timing
 * parameter of emu in one table (emu_model.c, each value with its source), chosen by
 * name (mgpu.device("emu", {model = "h100-sxm"}); default "h200").  Cycles are SM cycles
 * at the model's clock under load: the one clock emu converts with. */
#ifndef MH_EMU_MODEL_H
#define MH_EMU_MODEL_H

#include <stddef.h>
#include <stdint.h>

#define MH_EMU_DEFAULT_MODEL "h200"

struct mh_ptx_insn;

/* The issue model's execution pipes of a sub-partition (emu_model.c's table gives each a rate):
 * an instruction of a warp holds its sub-partition's pipe 4 x 32 / rate cycles (rate: results a
 * cycle an SM), so a warp behind it on the same pipe waits; instructions of other pipes issue. */
enum {
    MH_PIPE_NONE = 0, /* not modelled: moves, branches, memory, tensor cores (their own costs) */
    MH_PIPE_FMA,      /* f32 add, mul, fma */
    MH_PIPE_FP16,     /* f16/bf16 add, mul, fma (a .x2 instruction counts once) */
    MH_PIPE_FP64,     /* f64 arithmetic */
    MH_PIPE_ALU,      /* 32-bit integer arithmetic, logic, shifts; compare, min, max, select */
    MH_PIPE_MUFU,     /* the special-function unit: rcp, rsqrt, sqrt, ex2, lg2, sin, cos, tanh (approx f32) */
    MH_PIPE_BITS,     /* clz, popc, brev, bfind */
    MH_PIPE_CVT,      /* conversions to or from a floating-point type */
    MH_PIPE_SHFL,     /* warp shuffle */
    MH_PIPE_N
};

/* The issue model's result-latency classes (emu_model.c's table gives each its cycles): a register
 * an instruction of the class writes is ready for a dependent instruction of its warp that many
 * cycles after the instruction started on its pipe (a register scoreboard: emu_scoreboard.c). */
enum {
    MH_LAT_NONE = 0, /* moves, branches, memory, tensor cores, barriers: their cost blocks the warp */
    MH_LAT_FMA,      /* f32 add, mul, fma */
    MH_LAT_ALU,      /* integer arithmetic, logic, shifts, compare, min, max, select, vote */
    MH_LAT_FP16,     /* f16/bf16 (x2) add, mul, fma, compare */
    MH_LAT_FP64,     /* f64 arithmetic */
    MH_LAT_EX2,      /* the special-function unit's ex2, tanh */
    MH_LAT_RCP,      /* its rcp, rsqrt, sqrt, lg2 (and f32 div: a reciprocal) */
    MH_LAT_SIN,      /* its sin, cos */
    MH_LAT_BITS,     /* clz, popc, brev */
    MH_LAT_CVT,      /* conversions to or from a floating-point type */
    MH_LAT_SHFL,     /* warp shuffle */
    MH_LAT_N
};

typedef struct mh_emu_model {
    const char *name;           /* "h200", "h100-sxm", "h100-pcie" */
    const char *desc;
    uint32_t sms;               /* SMs the device has */
    double clock_ghz;           /* SM clock under sustained load: cycles -> ns */
    /* latencies, load to use, in SM cycles */
    uint32_t smem_lat;          /* ld.shared */
    uint32_t l1_lat;            /* ld.global hitting the SM's L1 */
    uint32_t l2_lat;            /* ld.global missing L1, hitting L2 */
    uint32_t hbm_lat;           /* ld.global missing L2 (the whole trip) */
    uint32_t dsmem_lat;         /* ld.shared::cluster of another block of the cluster */
    uint32_t tma_lat;           /* a TMA copy's fixed cost beyond its source's latency */
    double l2_load_clk;         /* the L2's loaded latency: an access waits l2_load_clk x rho / (2 (1 - rho))
                                 * more cycles at utilisation rho of the L2's bandwidth (M/D/1) */
    double l2_dirty_frac;       /* the share of the L2 that holds stored bytes not yet in HBM (write-back):
                                 * a store waits for the HBM only beyond it (0: written through) */
    double mbar_lane_clk;       /* the SM's memory pipe's cycles for each lane beyond the first of one warp
                                 * instruction arriving on one mbarrier (per-thread arrivals serialise) */
    /* capacities */
    uint32_t l1_bytes;          /* L1 + shared memory per SM; L1 gets what the resident blocks' shared leaves */
    uint64_t l2_bytes;          /* the device's L2 */
    /* bandwidths */
    double l2_bytes_per_clk;    /* L2 to all SMs together, bytes per SM cycle */
    double sm_port_bytes_per_clk; /* one SM's path from L2 (loads, TMA loads) and, apart, to L2 (stores, TMA
                                   * stores), bytes per cycle each way */
    double hbm_gbs;             /* HBM, GB/s (converted at the clock into bytes per cycle) */
    double dsmem_bytes_per_clk; /* one SM's path to other SMs' shared memory, bytes per cycle */
    /* tensor cores: multiply-adds per cycle of one sub-partition's tensor core (4 an SM, dense) */
    uint32_t mma_f16;           /* f16/bf16 inputs */
    uint32_t mma_tf32;
    uint32_t mma_8bit;          /* e4m3/e5m2, s8/u8 */
    uint32_t mma_f64;
    uint32_t wgmma_lat;         /* cycles from a wgmma's last multiply-add to its accumulators being
                                 * ready (the tensor core's drain: what wgmma.wait_group waits for) */
    /* the other pipes: results a cycle an SM (MH_PIPE_*; 0 for MH_PIPE_NONE) */
    uint16_t pipe_rate[MH_PIPE_N];
    /* result latencies, cycles from an instruction's start on its pipe to a dependent's issue (MH_LAT_*) */
    uint8_t lat[MH_LAT_N];
} mh_emu_model;

/* The model called `name` (NULL or "": the default), or NULL when none is. */
const mh_emu_model *mh_emu_model_find(const char *name);

/* One parameter of a model set by name (mgpu.device("emu", {model_params = {...}})): what-if
 * runs and re-fits from a GPU's measurements without rebuilding emu. */
typedef struct mh_emu_param {
    const char *name;           /* a field of mh_emu_model (mh_emu_model_param lists them) */
    double value;
} mh_emu_param;
#define MH_EMU_MAX_PARAMS 64    /* parameters one device may set */
/* Sets parameter `name` of *m to v: 0, or -1 with why (an unknown name, with the known ones;
 * a value outside the parameter's range, with the range) written to why[0..n). */
int mh_emu_model_set(mh_emu_model *m, const char *name, double v, char *why, size_t n);
/* Sets the parameters a list "l2_bytes_per_clk=6000,hbm_gbs=3000" names (MGPU_CUDART_MODEL_PARAMS,
 * exec --model-params): 0, or -1 with why (an entry not NAME=NUMBER, or mh_emu_model_set's). */
int mh_emu_model_parse(mh_emu_model *m, const char *list, char *why, size_t n);
/* *out = the model called `name` (NULL: the default) with the parameters p[0..np) and then those of
 * the list `list` (NULL: none) set in it, and checked (mh_emu_model_check): 0, or -1 with why (an
 * unknown model, with the models; or what set, parse or check said).  What an emu device, exec and
 * the probe make a model with. */
int mh_emu_model_make(mh_emu_model *out, const char *name, const mh_emu_param *p, uint32_t np, const char *list,
                      char *why, size_t n);
/* Whether the parameters of *m agree with each other: 0, or -1 with why (hbm_lat below l2_lat; the
 * HBM's bytes a cycle below MH_EMU_MIN_BYTES_PER_CLK).  mh_emu_create and exec check a model set by name. */
int mh_emu_model_check(const mh_emu_model *m, char *why, size_t n);
/* The least bytes a cycle of the L2's and the HBM's bandwidths: a slower one's queue outgrows the
 * million cycles emu's bandwidth windows remember (emu_memtime.c) and transfers stop waiting for it. */
#define MH_EMU_MIN_BYTES_PER_CLK 16
/* The i-th settable parameter's name (from 0; NULL past the last) and, when value is not NULL,
 * m's value of it. */
const char *mh_emu_model_param(const mh_emu_model *m, unsigned i, double *value);
/* The models' names, comma-separated (for error messages). */
const char *mh_emu_model_names(void);
/* The pipe instruction `in` runs on (MH_PIPE_*), and *units how many of that pipe's instructions
 * it takes (2 for a 64-bit integer operation: two 32-bit halves); MH_PIPE_NONE: not modelled. */
int mh_emu_pipe_of(const struct mh_ptx_insn *in, unsigned *units);
/* The result-latency class of instruction `in` (MH_LAT_*; MH_LAT_NONE: its cost blocks its warp). */
int mh_emu_lat_of(const struct mh_ptx_insn *in);
/* Cycles one warp instruction of `units` holds its sub-partition's pipe p (0: none). */
static inline unsigned mh_emu_pipe_cycles(const mh_emu_model *m, int p, unsigned units)
{
    return p && m->pipe_rate[p] ? (units * 4u * 32u + m->pipe_rate[p] - 1) / m->pipe_rate[p] : 0;
}
/* HBM bytes a cycle at the model's clock. */
static inline double mh_emu_model_hbm_bpc(const mh_emu_model *m) { return m->hbm_gbs / m->clock_ghz; }

#endif
