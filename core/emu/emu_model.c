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
 * The latencies are the papers' figures rounded to the cycle as emu's docs carried them (the
 * search corpus held the papers' text but not their tables' cells, so each is "about"); the
 * calibration test (tests/c/test_emu_clock.c) checks emu reproduces these within 15%. */
#include "emu/emu_model.h"

#include <string.h>

/* GH100's SM and memory system (the rows differ in SMs, HBM and clock) */
#define GH100_SM                                                                                  \
    .smem_lat = 30,   /* [P24]/[P25]: shared memory ~30 cycles */                                 \
    .l1_lat = 33,     /* [P24]/[P25]: L1 hit ~33 cycles */                                        \
    .l2_lat = 260,    /* [P24]/[P25]: L2 hit ~260 cycles (Chips and Cheese's H100 figure too) */  \
    .hbm_lat = 480,   /* [P24]/[P25]: global memory ~480 cycles */                                \
    .dsmem_lat = 180, /* [P24]: SM-to-SM network ~180 cycles */                                   \
    .tma_lat = 60,    /* [EST]: the TMA unit's own cost beyond the source's latency */            \
    .l2_load_clk = 100, /* [EST] (M/D/1 service time): see "loaded latency" above */              \
    .l1_bytes = 256 * 1024,            /* [WP] */                                                 \
    .l2_bytes = 50ull * 1000 * 1000,   /* [WP] 50 MB */                                           \
    .l2_bytes_per_clk = 5120,          /* [TAB] */                                                \
    .sm_port_bytes_per_clk = 64,       /* [EST] an SM's L1 fill path (Ampere's 64 B/clk/SM) */    \
    .dsmem_bytes_per_clk = 32,         /* [P24] order of the per-SM SM-to-SM throughput */        \
    .mma_f16 = 512, .mma_tf32 = 256, .mma_8bit = 1024, .mma_f64 = 32 /* [WP] */

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
