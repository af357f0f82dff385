/* emu_model.c - the device models: every timing parameter of emu, one row a GPU, each
 * value with where it comes from (docs/results/emu-clock.md has the table in prose and
 * emu's own microbenchmark figures beside the published ones).
 *
 * Sources:
 *  [WP]   NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022): 132 SMs (SXM5), 114
 *         (PCIe); 50 MB L2; 256 KB L1 + shared memory per SM; 4 sub-partitions each with a
 *         tensor core; dense peaks 989.4 TFLOPS f16/bf16, 494.7 tf32, 1978.9 fp8/int8, 66.9
 *         fp64 at the 1830 MHz boost clock on 132 SMs, i.e. 512, 256, 1024 and 32 multiply-adds
 *         per cycle per sub-partition (989.4e12 / (2 x 132 x 4 x 1.83e9) = 512).
 *  [DS]   NVIDIA H100 and H200 datasheets: HBM3 3.35 TB/s (H100 SXM), HBM2e 2.0 TB/s (H100
 *         PCIe), HBM3e 4.8 TB/s (H200 SXM).
 *  [P24]  Luo et al., "Benchmarking and Dissecting the Nvidia Hopper GPU Architecture", arXiv
 *         2402.13499 (H800, same GH100 SM): pointer-chase latencies of shared memory, L1, L2 and
 *         global memory; the SM-to-SM (distributed shared memory) network's latency (about 180
 *         cycles) and its throughput per SM.
 *  [P25]  Luo et al., "Dissecting the NVIDIA Hopper Architecture through Microbenchmarking and
 *         Multiple Level Analysis", arXiv 2501.12084: the same memory levels on H800, wgmma
 *         throughput per shape and type, TMA and distributed shared memory.
 *  [TAB]  Hardware table of PMC article PMC10448217 (table 3): H100 L2 bandwidth 8986 GB/s at
 *         1755 MHz, i.e. 5120 bytes per cycle.
 *  [PG]   CUDA C++ Programming Guide, "Arithmetic Instructions", the throughput table (results a
 *         clock cycle an SM) for compute capability 9.0: 32-bit floating-point add, multiply,
 *         multiply-add 128; 16-bit 256 (two a lane: a .f16x2 instruction, so 128 lanes); 64-bit 64;
 *         32-bit integer add, multiply, shift, compare, min, max, bitwise 64; reciprocal,
 *         reciprocal square root, log2, exp2, sine, cosine 16; count of leading zeros, population
 *         count 16; warp shuffle 32; type conversions 16 (from and to 64-bit types, and the
 *         others).  The whitepaper's SM diagram [WP] agrees: per sub-partition 32 FP32, 16 INT32,
 *         16 FP64 lanes and 4 special-function units.
 *  [NAK]  Mesa's NVIDIA compiler (NAK), src/nouveau/compiler/nak/sm80_instr_latencies.rs at
 *         commit 00fe8e45a0dbbdc2fe6f7c5cab9a3a0f50313f2f: the register-scheduling latencies
 *         NVIDIA gave for Ampere and Ada (no Hopper file exists: these are Ampere's), read after
 *         write: FMA -> FMA 4, ALU -> ALU 4, ALU <-> FMA 5, FP16 5, FP64 10 cycles.
 *  [AB22] Abdelkhalik et al., "Demystifying the Nvidia Ampere Architecture through
 *         Microbenchmarking and Instruction-level Analysis", arXiv 2208.11174, Table 2 (A100,
 *         dependent instructions): mad.rn.f32 4, add.u32 4 cycles (through a transcription of its
 *         tables; the paper's cells were not reached).
 *  [EST]  emu's estimate where no published figure was found: stated as such, to be re-fitted
 *         with scripts/device/microbench.lua on a GPU.
 * Loaded latency: the papers' latencies are an idle GPU's (one pointer chase).  Under load an L2
 * access also queues: emu adds an M/D/1 queue's mean wait, l2_load_clk x rho / (2 (1 - rho)), at
 * the L2's utilisation rho of its bandwidth (emu_memtime.c).  No published loaded-latency curve of
 * Hopper's L2 was found (the papers, Chips and Cheese's H100 articles), so l2_load_clk is [EST]:
 * the round value that, of 0, 100, 150 and 300 cycles, best fits fast.cu's kernels 2-5 at 4096
 * against their published H100 TFLOPS (mean error 7%; kernels 6-12 were not used to choose it:
 * docs/results/emu-gemm-tflops.md).  It gives an L2 hit of 260 cycles idle, about 310 at half the
 * L2's bandwidth, 410 at three quarters and 710 at 90%; a device run re-fits it.
 * Pipes: a warp instruction holds its sub-partition's pipe 128 / rate cycles (an ex2 8, an integer
 * add 2, an f32 fma 1: the sub-partition's issue rate), so a warp behind another on the same pipe
 * waits (Nsight's math pipe throttle) while other pipes' instructions issue.  The map from PTX to
 * pipes (mh_emu_pipe_of) is the table's rows; ptxas may fuse or split instructions (an integer
 * division is a sequence, two cvt to bf16 may become one packing instruction): emu counts PTX.
 * Result latency (lat): a register a pipe's instruction writes is ready for a dependent instruction
 * of its warp lat cycles after the instruction started on its pipe (emu_scoreboard.c); the
 * special-function unit's, shuffles' and conversions' are [EST] from dependent chains measured on
 * Ada (RTX 4070 Ti: MUFU.EX2 17.6, SIN 23.5, RSQ/LG2 39.6, RCP 41.6, SHFL.BFLY 25.0, F2I + I2F 12.1
 * cycles) and Blackwell (B300: EX2 14.5, SIN 24.5, RSQ 40.2, RCP 42.3, SHFL about 24) in public
 * notes whose authors were not identified; no Hopper figure was found.  ptxas's cross-pipe 5
 * (ALU <-> FMA) is left out: every class reads its own pipe's figure.  A move has none (ptxas
 * mostly folds PTX's moves away); loads, tensor cores and barriers keep blocking their warp.
 * Stores: the L2 is written back (a store's bytes reach HBM when their line leaves the L2), so a
 * store waits for the L2 and its SM's way out, and for the HBM only while the bytes ahead of it still
 * to be written exceed l2_dirty_frac of the L2 (emu_memtime.c transfer; the HBM's bandwidth is still
 * taken when the store is made, so loads queue behind what was stored).  l2_dirty_frac is [EST] 0.5:
 * no published figure for how much of Hopper's L2 may be dirty.  Written through (0), fast.cu's kernel
 * 3 spent 6507 cycles a block in its epilogue against the 4572 its author measured on an H100 in the
 * kernel (the worklog's profile; docs/results/emu-phases.md); written back, 4811.
 * wgmma completion: a wgmma's accumulators are ready wgmma_lat cycles after its last multiply-add
 * (the tensor core's pipeline drains; the next wgmma on the same tensor core starts at once).  No
 * published latency: wgmma_lat is [EST] 120, fitted to the one published in-kernel figure, fast.cu's
 * kernel 3 on an H100 (its author's profile: 703 cycles from wgmma.fence to wait_group for eight
 * m64n128k16 a k step; emu read 581 without it, 700 with it; docs/results/emu-phases.md).  It then
 * predicts what it was not fitted to: fast.cu's kernel 6, whose two consumer warpgroups wait
 * together at every k step, falls behind kernel 7, whose do not, by 7.4% (the H100: 6.7%).
 * mbarrier arrivals: a warp instruction whose lanes arrive on one mbarrier (libcu++'s cuda::barrier,
 * where every thread arrives) makes one arrival a lane on the same 8-byte word; read-modify-writes of
 * one word may hold the SM's memory pipe mbar_lane_clk cycles for each lane beyond the first
 * (emu_sync.c).  [EST] 0: with wgmma_lat fitted, any cost of 0.25 or more a lane puts kernel 6
 * behind 7 by more than the H100 does (0.5: 16%), so no per-lane cost is what the published figures
 * support; the device check's mbar_warp row (a warp's 32 arrivals against one thread's) measures it.
 * The latencies are the papers' figures rounded to the cycle as emu's docs carried them (the
 * search corpus held the papers' text but not their tables' cells, so each is "about"); the
 * calibration test (tests/c/test_emu_clock.c) checks emu reproduces these within 15%. */
#include "emu/emu_model.h"
#include "frontend/ptx.h"

#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* GH100's SM and memory system (the rows differ in SMs, HBM and clock) */
#define GH100_SM                                                                                  \
    .smem_lat = 30,   /* [P24]/[P25]: shared memory ~30 cycles */                                 \
    .l1_lat = 33,     /* [P24]/[P25]: L1 hit ~33 cycles */                                        \
    .l2_lat = 260,    /* [P24]/[P25]: L2 hit ~260 cycles (Chips and Cheese's H100 figure too) */  \
    .hbm_lat = 480,   /* [P24]/[P25]: global memory ~480 cycles */                                \
    .dsmem_lat = 180, /* [P24]: SM-to-SM network ~180 cycles */                                   \
    .tma_lat = 60,    /* [EST]: the TMA unit's own cost beyond the source's latency; with the */  \
                      /* wait and the shared read it gives [P25]'s authors' TMA chase (368.4, */  \
                      /* test_emu_clock) within 1% */                                             \
    .l2_load_clk = 100, /* [EST] (M/D/1 service time): see "loaded latency" above */              \
    .l2_dirty_frac = 0.5, /* [EST]: see "stores" above */                                           \
    .mbar_lane_clk = 0, /* [EST]: see "mbarrier arrivals" above */                                \
    .l1_bytes = 256 * 1024,            /* [WP] */                                                 \
    .l2_bytes = 50ull * 1000 * 1000,   /* [WP] 50 MB */                                           \
    .l2_bytes_per_clk = 5120,          /* [TAB] */                                                \
    .sm_port_bytes_per_clk = 64,       /* [EST] an SM's L1 fill path (Ampere's 64 B/clk/SM); */   \
                                       /* its way out (stores) a link of its own at that rate [EST] */ \
    .dsmem_bytes_per_clk = 32,         /* [P24] order of the per-SM SM-to-SM throughput */        \
    .mma_f16 = 512, .mma_tf32 = 256, .mma_8bit = 1024, .mma_f64 = 32, /* [WP] */                \
    .wgmma_lat = 120, /* [EST]: see "wgmma completion" above */                                     \
    .pipe_rate = {[MH_PIPE_FMA] = 128, [MH_PIPE_FP16] = 128, [MH_PIPE_FP64] = 64,               \
                  [MH_PIPE_ALU] = 64, [MH_PIPE_MUFU] = 16, [MH_PIPE_BITS] = 16,                  \
                  [MH_PIPE_CVT] = 16, [MH_PIPE_SHFL] = 32}, /* [PG], [WP] */                 \
    .lat = {[MH_LAT_FMA] = 4,   /* [NAK] FMA -> FMA (Ampere); [AB22] A100 dependent mad.f32 */    \
            [MH_LAT_ALU] = 4,   /* [NAK] ALU -> ALU (Ampere); [AB22] A100 dependent add.u32 */    \
            [MH_LAT_FP16] = 5,  /* [NAK] FP16 (HFMA2, Ampere) */                                  \
            [MH_LAT_FP64] = 10, /* [NAK] DFMA/DADD (Ampere's A100 class) */                       \
            [MH_LAT_EX2] = 18,  /* [EST] MUFU.EX2 (Ada 17.6, B300 14.5); tanh alike */            \
            [MH_LAT_RCP] = 40,  /* [EST] MUFU.RCP/RSQ/LG2 (Ada 39.6-41.6, B300 40-42) */          \
            [MH_LAT_SIN] = 24,  /* [EST] MUFU.SIN/COS (Ada 23.5, B300 24.5) */                    \
            [MH_LAT_BITS] = 6,  /* [EST] popc, clz (A100 CPI 6-7 [AB22] Table 5; decoupled) */    \
            [MH_LAT_CVT] = 6,   /* [EST] F2I/I2F (Ada round trip 12.1: 6 each) */                 \
            [MH_LAT_SHFL] = 24} /* [EST] SHFL (Ada 25.0, B300 about 24) */

static const mh_emu_model models[] = {
    {.name = "h200", .desc = "H200 SXM (141 GB HBM3e)", .sms = 132,
     .clock_ghz = 1.755, /* [EST] SM clock under sustained tensor load (max boost 1.98 GHz) */
     .hbm_gbs = 4800,    /* [DS] */
     GH100_SM},
    {.name = "h100-sxm", .desc = "H100 SXM5 (80 GB HBM3)", .sms = 132,
     .clock_ghz = 1.755, /* [EST] as the H200: same chip and power limit */
     .hbm_gbs = 3350,    /* [DS] */
     GH100_SM},
    {.name = "h100-pcie", .desc = "H100 PCIe (80 GB HBM2e)", .sms = 114,
     .clock_ghz = 1.62,  /* [EST] 350 W card: Chips and Cheese saw 1.4-1.755 GHz under load */
     .hbm_gbs = 2000,    /* [DS] */
     GH100_SM},
};

const mh_emu_model *mh_emu_model_find(const char *name)
{
    if (!name || !*name) name = MH_EMU_DEFAULT_MODEL;
    for (size_t i = 0; i < sizeof models / sizeof *models; i++)
        if (!strcmp(models[i].name, name)) return &models[i];
    return NULL;
}

const char *mh_emu_model_names(void) { return "h200, h100-sxm, h100-pcie"; }

/* The parameters model_params may set: each field's place, kind and the range a value must lie
 * in (a latency of 0 cycles is allowed, a rate or a size of 0 is not: emu divides by them). */
enum { P_U8, P_U16, P_U32, P_U64, P_DBL };
static const struct {
    const char *name;
    size_t off;
    int kind;
    double min, max;
} params[] = {
#define PF(f, k, lo, hi) {#f, offsetof(mh_emu_model, f), k, lo, hi}
#define PP(f, pipe) {"pipe_" #f, offsetof(mh_emu_model, pipe_rate) + (pipe) * sizeof(uint16_t), P_U16, 1, 4096}
#define PL(f, cls) {"lat_" #f, offsetof(mh_emu_model, lat) + (cls), P_U8, 0, 255}
    /* a trace's clock is 0.1 to 10 GHz (trace/meta.h); emu's %globaltimer, whole ns, measures one at either
     * end a little past it (10.0004 over 4000 traces, 0.09999 at 0.1: every instrumented point failed) */
    PF(clock_ghz, P_DBL, 0.2, 5),
    PF(smem_lat, P_U32, 0, 1e6), PF(l1_lat, P_U32, 0, 1e6), PF(l2_lat, P_U32, 0, 1e6), PF(hbm_lat, P_U32, 0, 1e6),
    PF(dsmem_lat, P_U32, 0, 1e6), PF(tma_lat, P_U32, 0, 1e6), PF(l2_load_clk, P_DBL, 0, 1e6),
    PF(l2_dirty_frac, P_DBL, 0, 1), PF(mbar_lane_clk, P_DBL, 0, 1e3),
    /* caches: at least a set; at most what emu allocates its tags for without running the host out of memory
     * (a failed allocation left the cache out: l2_bytes = 1e12 read every line from HBM) */
    PF(l1_bytes, P_U32, 1024, 1 << 22), PF(l2_bytes, P_U64, 2048, 1 << 30),
    PF(l2_bytes_per_clk, P_DBL, MH_EMU_MIN_BYTES_PER_CLK, 1e7), PF(sm_port_bytes_per_clk, P_DBL, 1, 1e6), PF(hbm_gbs, P_DBL, 1, 1e7),
    PF(dsmem_bytes_per_clk, P_DBL, 1, 1e6),
    PF(mma_f16, P_U32, 1, 1 << 20), PF(mma_tf32, P_U32, 1, 1 << 20), PF(mma_8bit, P_U32, 1, 1 << 20),
    PF(mma_f64, P_U32, 1, 1 << 20), PF(wgmma_lat, P_U32, 0, 1e6),
    PL(fma, MH_LAT_FMA), PL(alu, MH_LAT_ALU), PL(fp16, MH_LAT_FP16), PL(fp64, MH_LAT_FP64), PL(ex2, MH_LAT_EX2),
    PL(rcp, MH_LAT_RCP), PL(sin, MH_LAT_SIN), PL(bits, MH_LAT_BITS), PL(cvt, MH_LAT_CVT), PL(shfl, MH_LAT_SHFL),
    PP(fma, MH_PIPE_FMA), PP(fp16, MH_PIPE_FP16), PP(fp64, MH_PIPE_FP64), PP(alu, MH_PIPE_ALU),
    PP(mufu, MH_PIPE_MUFU), PP(bits, MH_PIPE_BITS), PP(cvt, MH_PIPE_CVT), PP(shfl, MH_PIPE_SHFL),
#undef PF
#undef PP
#undef PL
};
#define NPARAMS (sizeof params / sizeof *params)

/* The index of parameter `name` in params[], or NPARAMS when there is none. */
static unsigned param_index(const char *name)
{
    unsigned i = 0;
    while (i < NPARAMS && strcmp(params[i].name, name)) i++;
    return i;
}

int mh_emu_model_parse(mh_emu_model *m, const char *list, char *why, size_t n)
{
    char buf[4096];
    if (strlen(list) >= sizeof buf) {
        snprintf(why, n, "model parameters: a list longer than %zu characters", sizeof buf - 1);
        return -1;
    }
    if (!*list) return 0;
    strcpy(buf, list);
    unsigned char given[NPARAMS] = {0};
    /* entry by entry: an empty one (",,", a trailing comma), a space around the number, a name given
     * twice is refused (strtok had skipped empty ones, strtod spaces; the last of two had won) */
    for (char *t = buf, *next; t; t = next) {
        if ((next = strchr(t, ','))) *next++ = 0;
        char *eq = strchr(t, '='), *end = NULL;
        double v = eq && eq[1] && !isspace((unsigned char)eq[1]) ? strtod(eq + 1, &end) : 0;
        if (!eq || eq == t || !end || end == eq + 1 || *end) {
            snprintf(why, n, "model parameters: '%s' is not NAME=NUMBER (e.g. l2_bytes_per_clk=6000) in '%s'", t, list);
            return -1;
        }
        *eq = 0;
        if (mh_emu_model_set(m, t, v, why, n)) return -1;
        if (given[param_index(t)]++) { /* (set found it) */
            snprintf(why, n, "model parameters: %s given twice in '%s'", t, list);
            return -1;
        }
    }
    return 0;
}

const char *mh_emu_model_param(const mh_emu_model *m, unsigned i, double *value)
{
    if (i >= NPARAMS) return NULL;
    if (value) {
        const char *f = (const char *)m + params[i].off;
        switch (params[i].kind) {
        case P_U8: *value = (uint8_t)*f; break;
        case P_U16: { uint16_t v; memcpy(&v, f, sizeof v); *value = v; break; }
        case P_U32: { uint32_t v; memcpy(&v, f, sizeof v); *value = v; break; }
        case P_U64: { uint64_t v; memcpy(&v, f, sizeof v); *value = (double)v; break; }
        default: memcpy(value, f, sizeof *value); break;
        }
    }
    return params[i].name;
}

int mh_emu_model_set(mh_emu_model *m, const char *name, double v, char *why, size_t n)
{
    unsigned i = param_index(name);
    if (i == NPARAMS) {
        int k = snprintf(why, n, "no model parameter '%s' (parameters:", name);
        for (unsigned j = 0; j < NPARAMS && k >= 0 && (size_t)k < n; j++)
            k += snprintf(why + k, n - (size_t)k, "%s %s", j ? "," : "", params[j].name);
        if (k >= 0 && (size_t)k < n) snprintf(why + k, n - (size_t)k, ")");
        return -1;
    }
    int whole = params[i].kind != P_DBL;
    if (!isfinite(v)) {
        snprintf(why, n, "model parameter %s: not a finite number", name);
        return -1;
    }
    if (v < params[i].min || v > params[i].max || (whole && v != floor(v))) {
        snprintf(why, n, "model parameter %s: %.15g is not %s from %.15g to %.15g", name, v, whole ? "a whole number" : "a number",
                 params[i].min, params[i].max);
        return -1;
    }
    char *f = (char *)m + params[i].off;
    switch (params[i].kind) {
    case P_U8: *f = (char)(uint8_t)v; break;
    case P_U16: { uint16_t x = (uint16_t)v; memcpy(f, &x, sizeof x); break; }
    case P_U32: { uint32_t x = (uint32_t)v; memcpy(f, &x, sizeof x); break; }
    case P_U64: { uint64_t x = (uint64_t)v; memcpy(f, &x, sizeof x); break; }
    default: memcpy(f, &v, sizeof v); break;
    }
    return 0;
}

int mh_emu_model_make(mh_emu_model *out, const char *name, const mh_emu_param *p, uint32_t np, const char *list,
                      char *why, size_t n)
{
    const mh_emu_model *named = mh_emu_model_find(name);
    if (!named) {
        snprintf(why, n, "no device model '%s' (models: %s)", name, mh_emu_model_names());
        return -1;
    }
    *out = *named;
    for (uint32_t i = 0; i < np; i++)
        if (mh_emu_model_set(out, p[i].name, p[i].value, why, n)) return -1;
    if (list && mh_emu_model_parse(out, list, why, n)) return -1;
    return mh_emu_model_check(out, why, n);
}

int mh_emu_model_check(const mh_emu_model *m, char *why, size_t n)
{
    if (m->hbm_lat < m->l2_lat) { /* (emu_memtime.c: a miss is in flight hbm_lat - l2_lat cycles) */
        snprintf(why, n, "model parameters: hbm_lat %u is below l2_lat %u (hbm_lat is a miss's whole trip, the L2's "
                 "included): set hbm_lat too", (unsigned)m->hbm_lat, (unsigned)m->l2_lat);
        return -1;
    }
    if (mh_emu_model_hbm_bpc(m) < MH_EMU_MIN_BYTES_PER_CLK) { /* (the L2's has its range) */
        snprintf(why, n, "model parameters: hbm_gbs %g at clock_ghz %g is %g bytes a cycle, below %d: beyond what emu's "
                 "bandwidth windows hold (emu_memtime.c)", m->hbm_gbs, m->clock_ghz, mh_emu_model_hbm_bpc(m),
                 MH_EMU_MIN_BYTES_PER_CLK);
        return -1;
    }
    return 0;
}

int mh_emu_pipe_of(const mh_ptx_insn *in, unsigned *units)
{
    mh_ptx_type t = (mh_ptx_type)in->type;
    int fl = mh_ptx_type_is_float(t);
    *units = 1;
    switch (in->op) {
    case MH_OP_ADD: case MH_OP_SUB: case MH_OP_MUL: case MH_OP_MAD: case MH_OP_FMA: case MH_OP_ABS: case MH_OP_NEG:
        if (fl) return t == MH_PT_F32 ? MH_PIPE_FMA : t == MH_PT_F64 ? MH_PIPE_FP64 : MH_PIPE_FP16;
        break;
    case MH_OP_MIN: case MH_OP_MAX: case MH_OP_SETP: case MH_OP_SET:
        if (t == MH_PT_F64) return MH_PIPE_FP64;
        if (fl && t != MH_PT_F32) return MH_PIPE_FP16;
        break; /* integer and f32 compare, min, max: 64 a cycle [PG] */
    case MH_OP_AND: case MH_OP_OR: case MH_OP_XOR: case MH_OP_NOT: case MH_OP_CNOT: case MH_OP_SHL: case MH_OP_SHR:
    case MH_OP_SELP: case MH_OP_LOP3: case MH_OP_PRMT: case MH_OP_BFE: case MH_OP_BFI: case MH_OP_MUL24:
    case MH_OP_MAD24: case MH_OP_SAD: case MH_OP_COPYSIGN: case MH_OP_TESTP: case MH_OP_VOTE:
        break;
    case MH_OP_DIV: case MH_OP_REM: /* f32: a reciprocal (and refinement); f64 and integers: sequences */
        if (t == MH_PT_F32) return MH_PIPE_MUFU;
        if (t == MH_PT_F64) return MH_PIPE_FP64;
        break;
    case MH_OP_SQRT: case MH_OP_RSQRT: case MH_OP_RCP: case MH_OP_EX2: case MH_OP_LG2: case MH_OP_SIN: case MH_OP_COS:
    case MH_OP_TANH:
        return MH_PIPE_MUFU;
    case MH_OP_CLZ: case MH_OP_POPC: case MH_OP_BREV: case MH_OP_BFIND:
        return MH_PIPE_BITS;
    case MH_OP_CVT: /* to or from a floating-point type; integer to integer is a move or an ALU op */
        if (fl || mh_ptx_type_is_float((mh_ptx_type)in->type2)) return MH_PIPE_CVT;
        return MH_PIPE_ALU;
    case MH_OP_SHFL:
        return MH_PIPE_SHFL;
    default:
        return MH_PIPE_NONE;
    }
    if (mh_ptx_type_bits(t) == 64) *units = 2; /* a 64-bit integer operation: its two halves */
    return MH_PIPE_ALU;
}

int mh_emu_lat_of(const mh_ptx_insn *in)
{
    unsigned units;
    switch (mh_emu_pipe_of(in, &units)) {
    case MH_PIPE_FMA: return MH_LAT_FMA;
    case MH_PIPE_FP16: return MH_LAT_FP16;
    case MH_PIPE_FP64: return MH_LAT_FP64;
    case MH_PIPE_ALU: return MH_LAT_ALU;
    case MH_PIPE_MUFU:
        switch (in->op) {
        case MH_OP_EX2: case MH_OP_TANH: return MH_LAT_EX2;
        case MH_OP_SIN: case MH_OP_COS: return MH_LAT_SIN;
        default: return MH_LAT_RCP; /* rcp, rsqrt, sqrt, lg2, f32 div */
        }
    case MH_PIPE_BITS: return MH_LAT_BITS;
    case MH_PIPE_CVT: return MH_LAT_CVT;
    case MH_PIPE_SHFL: return MH_LAT_SHFL;
    default: return MH_LAT_NONE;
    }
}
