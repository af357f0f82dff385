/* emu.h - the `emu` backend: a CPU executor of PTX.  Device memory is a set
 * of host allocations with device-like addresses; every access is checked
 * against them.  Block b runs on virtual SM b % nsm, which holds as many
 * blocks at once as an sm_90 SM would (emu_occupancy.h) and runs the rest in
 * waves; the warps resident on an SM interleave through a deterministic issue
 * model (4 sub-partitions, each issuing one instruction a cycle from the warp
 * ready longest; an instruction's cost delays its own warp).  Warps of 32
 * threads run with per-lane program counters, always advancing the lanes at
 * the lowest pc together (so divergent paths reconverge where they meet
 * again); bar.sync waits for every live thread of the block.  Clocks are
 * virtual and deterministic (see emu.c); %globaltimer is the SM's cycle
 * converted at the stated virtual rate.  A launch can count memory traffic
 * per instruction (mh_emu_extra.stats), and kernels may printf and assert. */
#ifndef MH_EMU_H
#define MH_EMU_H

#include <stdint.h>
#include "base/error.h"
#include "frontend/ptx.h"
#include "launch/backend.h"
#include "emu/emu_model.h"

#define MH_EMU_DEFAULT_SMS 132   /* without a model's: the default model's SMs (emu_model.c) */

typedef struct mh_emu mh_emu;

typedef struct mh_emu_opts {
    uint32_t num_sms;            /* 0: the model's */
    const char *model;           /* the device model's name (emu_model.h; NULL: MH_EMU_DEFAULT_MODEL) */
    const mh_emu_param *params;  /* parameters of that model set otherwise (what-if runs, re-fits) */
    uint32_t nparams;
    const char *params_list;     /* and, after them, "NAME=NUMBER,..." (mh_emu_model_parse) */
    uint64_t max_warp_insns;     /* per launch; 0: no limit (guards endless loops) */
    int strict;                  /* a read of a register no instruction wrote stops the launch */
    uint32_t threads;            /* workers SMs run on within a quantum; 0: $MGPU_EMU_THREADS, else the machine's
                                  * cores.  Results and traces do not depend on it (emu_workers.c) */
} mh_emu_opts;

typedef struct mh_emu_stats {
    uint64_t warp_insns;         /* warp-instructions issued */
    uint64_t thread_insns;       /* thread-instructions executed (lanes active) */
    uint64_t cycles;             /* virtual cycles of the longest SM */
    uint32_t blocks_per_sm;      /* blocks a virtual SM held at once */
    uint32_t workers;            /* workers its SMs ran on (1: one after another) */
    const char *serial;          /* why they ran one after another though the device has more (a static
                                  * string: "a global atomic", ...), NULL: they did not */
    char *output;                /* mh_emu_run_ex: what the kernel printed (printf), in order; malloc'd (NULL: nothing) */
    size_t output_len;
    char *warnings;              /* mh_emu_run_ex: what the PTX leaves undefined and emu let happen (emu_warn), and
                                  * regions of an instrumented kernel only threads that do not write the trace entered
                                  * (emu_regions.c), a line each naming FILE.cu:LINE (PTX file:line); malloc'd (NULL: none), also after a fault */
    size_t warnings_len;
    mh_launch_counts *counts;    /* mh_emu_run_ex with x->stats: per line and in total; counts->release frees it */
    mh_trace_flow *flows;        /* mh_emu_run_ex with x->flows: completions to released waits (malloc'd) */
    uint32_t nflows;
} mh_emu_stats;

mh_emu *mh_emu_create(const mh_emu_opts *opts, mh_error *e);
uint32_t mh_emu_num_sms(const mh_emu *d);
#define MH_EMU_MAX_THREADS 1024u
/* The workers its launches run SMs on (mh_emu_opts.threads resolved). */
uint32_t mh_emu_threads(const mh_emu *d);
/* The device model its virtual time comes from (emu_model.h). */
const mh_emu_model *mh_emu_model_of(const mh_emu *d);
void mh_emu_destroy(mh_emu *d);

/* Device memory: addresses as a kernel sees them. */
int mh_emu_alloc(mh_emu *d, uint64_t bytes, uint64_t *addr, mh_error *e);
int mh_emu_free(mh_emu *d, uint64_t addr, mh_error *e);
int mh_emu_write(mh_emu *d, uint64_t addr, const void *src, uint64_t bytes, mh_error *e);
int mh_emu_read(mh_emu *d, uint64_t addr, void *dst, uint64_t bytes, mh_error *e);
int mh_emu_memset(mh_emu *d, uint64_t addr, int byte, uint64_t bytes, mh_error *e);
/* An allocation whose host memory lies at its device address (host code may
 * use the address as a pointer: the CUDA runtime stand-in's managed and
 * pinned memory). */
int mh_emu_alloc_mapped(mh_emu *d, uint64_t bytes, uint64_t *addr, mh_error *e);
/* The host memory behind [addr, addr + bytes) (emu memory is host memory). */
void *mh_emu_host(mh_emu *d, uint64_t addr, uint64_t bytes, mh_error *e);

/* A kernel argument: raw bytes of the parameter's value (a pointer is its
 * 8-byte device address). */
typedef struct mh_emu_arg {
    const void *data;
    uint32_t size;
} mh_emu_arg;

typedef struct mh_emu_launch {
    uint32_t grid[3], block[3];
    uint32_t dynamic_smem;
    const mh_emu_arg *args;
    uint32_t nargs;
    double timeout_s;            /* > 0: a launch still running after this long stops with MH_E_TIMEOUT */
} mh_emu_launch;

/* What a launch may ask for beyond its shape (mh_emu_run_ex). */
typedef struct mh_emu_extra {
    int regs_per_thread;         /* registers per thread (ptxas) for the SM's residency, 0: not known */
    int setmaxnreg_ignored;      /* ptxas dropped the kernel's setmaxnreg (C7507): they do nothing, as on a GPU */
    uint32_t cluster[3];         /* thread-block clusters (launch{cluster=}; zeros or 1x1x1: the kernel's own, else none) */
    int stats;                   /* count instructions and memory traffic per source line (st->counts) */
    int flows;                   /* record the mbarrier completions and the waits they released (st->flows) */
    int cooperative;             /* the whole grid resident at once (bad_argument when it cannot be), with the
                                  * driver's grid workspace behind %envreg1/%envreg2 (cg::this_grid().sync()) */
    uint64_t data_addr;          /* the module's .global/.const data, allocated by the caller and kept across
                                  * launches (mh_emu_module_data_size bytes, initialised by the caller: the CUDA
                                  * runtime's __device__ variables); 0: a fresh initialised copy per launch */
} mh_emu_extra;

/* Bytes of module m's .global/.const data (its variables at their offsets). */
uint64_t mh_emu_module_data_size(const mh_ptx_module *m);

/* Checks the whole module, or one kernel and the functions it calls, for
 * what emu cannot run (an instruction the front end kept as text, a call
 * without a body, recursion, unsupported types ...), naming file, line and
 * instruction; mh_emu_run checks the kernel it runs. */
int mh_emu_check_module(const mh_ptx_module *m, mh_error *e);
int mh_emu_check_kernel(const mh_ptx_module *m, const mh_ptx_func *kernel, mh_error *e);

/* Runs kernel `name` of module m.  What the kernel printed comes back in
 * st->output (also after a fault: the caller frees it).  An assert that fails
 * (__assertfail) is a MH_E_KERNEL_FAULT naming its message, file, line and
 * function, the block and the thread.  A memory fault stops the launch with
 * MH_E_KERNEL_FAULT naming the PTX line, the address and the nearest
 * allocation; the device stays usable.  A stop request (base/stop.h, Ctrl-C)
 * stops it with MH_E_INTERRUPTED, its time limit with MH_E_TIMEOUT, and the
 * device's instruction budget (max_warp_insns) with MH_E_KERNEL_FAULT. */
int mh_emu_run(mh_emu *d, const mh_ptx_module *m, const char *name, const mh_emu_launch *l, mh_emu_stats *st,
               mh_error *e);
/* The same with extra requests (x may be NULL); st->output and st->counts are the
 * caller's (mh_emu_run frees them: its callers get the counts only). */
int mh_emu_run_ex(mh_emu *d, const mh_ptx_module *m, const char *name, const mh_emu_launch *l, const mh_emu_extra *x,
                  mh_emu_stats *st, mh_error *e);

#endif
