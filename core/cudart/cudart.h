/* cudart.h - the CUDA runtime stand-in's shared state: the program's fat
 * binaries and the kernels and variables registered from them, the emu device
 * every call is served by, the sticky and last errors, virtual time, and what
 * `mgpu-harness exec` asked for (capture, trace, stats) through the
 * environment.  Each concept's calls are in a file of their own (memory,
 * streams, launch, device, symbols, errors, capture); this header is what they
 * share.  One process, one device (emu); calls are served in the order made,
 * on the calling thread, under one lock. */
#ifndef MH_CUDART_H
#define MH_CUDART_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "base/error.h"
#include "cudart/cudart_abi.h"
#include "emu/emu.h"
#include "emu/emu_ptxas.h"
#include "frontend/ptx.h"

#define CR_EXPORT __attribute__((visibility("default")))
/* A program built with --default-stream per-thread calls the _ptsz/_ptds names: the same calls
 * here (every stream is synchronous, the per-thread default stream is the default stream). */
#define CR_ALIAS(other, name) \
    extern __typeof(name) other __attribute__((alias(#name), visibility("default")));

/* One fat binary the program registered (a translation unit's kernels). */
typedef struct cr_module {
    const void *wrapper;          /* what __cudaRegisterFatBinary got */
    char *ptx;                    /* the PTX text chosen from it (NULL until read) */
    size_t ptx_len;
    char arch[32];                /* "compute_90a" */
    int parsed;                   /* 1: ptxm holds it, -1: it failed (err says why) */
    mh_ptx_module ptxm;
    mh_error err;
    uint64_t data_addr, data_size;  /* the module's __device__/__constant__ data, kept across launches */
    int asked_ptxas;
    mh_ptxas_info ptxas;
    int index;                    /* 0, 1, ... in registration order */
    char *ptx_file;               /* capture: the file it was written to (NULL: not yet) */
} cr_module;

typedef struct cr_kernel {
    const void *host_fun;         /* the host stub's address: what <<<>>> and cudaLaunchKernel name */
    cr_module *mod;
    char *name;                   /* the mangled device name */
    char *short_name;             /* for messages: demangled, shortened (base/demangle.h) */
    const mh_ptx_func *f;         /* resolved at first use */
    int checked;                  /* emu accepted it (mh_emu_check_kernel) */
    int max_dyn_smem;             /* cudaFuncAttributeMaxDynamicSharedMemorySize (48 KiB by default) */
    int carveout;
    int non_portable_cluster;
} cr_kernel;

typedef struct cr_var {
    const void *host_var;         /* &the host shadow: what cudaMemcpyToSymbol names */
    cr_module *mod;
    char *name;
    size_t size;
    int constant, managed;
    void **managed_ptr;           /* __managed__: the host's pointer to the memory */
} cr_var;

/* An allocation of the program's: device memory, or memory the host may address directly
 * (cudaMallocHost/HostAlloc/MallocManaged: the same address on both sides, mh_emu_alloc_mapped). */
typedef struct cr_alloc {
    uint64_t addr, size;
    int kind;                     /* cudaMemoryTypeDevice, cudaMemoryTypeHost, cudaMemoryTypeManaged */
} cr_alloc;

typedef struct cr_state {
    mh_emu *emu;
    int init_failed;
    cr_module **mods; size_t nmods, cap_mods;
    cr_kernel **kernels; size_t nkernels, cap_kernels;
    cr_var **vars; size_t nvars, cap_vars;
    cr_alloc *allocs; size_t nallocs, cap_allocs; /* sorted by address */
    cudaError_t last;             /* cudaGetLastError */
    cudaError_t sticky;           /* a kernel fault: every later call returns it */
    double vtime_ns;              /* virtual time: the sum of the launches' virtual times */
    uint64_t launches;
    /* what exec asked (MGPU_CUDART_CAPTURE, _TRACE, _STATS, _SMS, _QUIET) */
    const char *capture_dir, *trace_dir, *launches_path;
    int stats;
    uint32_t sms;
    FILE *capture;                /* DIR/launches.lua while capturing */
    /* <<<>>>'s configuration between push and pop */
    cr_dim3 cfg_grid, cfg_block;
    size_t cfg_smem;
    cudaStream_t cfg_stream;
    int cfg_depth;
} cr_state;

/* The state, created at first use; NULL (after a message) when emu could not be made. */
cr_state *cr_get(void);
void cr_lock(void);
void cr_unlock(void);

/* cudaSuccess when calls may be served: the state exists and no kernel fault is sticky. */
cudaError_t cr_ready(void);
/* An entry point's body: lock, check, serve, unlock. */
#define CR_API(expr) do { cr_lock(); cudaError_t r_ = cr_ready(); if (r_ == cudaSuccess) r_ = (expr); \
                          cr_unlock(); return r_; } while (0)

/* Records err as the last error and returns it (a message on stderr when msg is given). */
cudaError_t cr_set(cudaError_t err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "mgpu cudart: ..." on stderr (always: errors are never silent). */
void cr_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The sticky error of an earlier kernel fault, or cudaSuccess. */
cudaError_t cr_sticky(void);
/* The error of an mh_error from emu (a fault, a refusal). */
cudaError_t cr_from_mh(const mh_error *e);

/* Fat binaries */
int cr_module_ptx(cr_module *m);               /* reads the PTX out of the fat binary (0: ok) */
int cr_module_parse(cr_module *m);             /* parses it and allocates its data (0: ok) */
const char *cr_fatbin_read(const void *wrapper, char **ptx, size_t *len, char arch[32]); /* NULL or why not */

cr_kernel *cr_kernel_of(const void *host_fun);  /* NULL: not a registered kernel */
int cr_kernel_resolve(cr_kernel *k, const char *call); /* parses its module, finds and checks it */
const mh_ptxas_kernel *cr_kernel_ptxas(cr_kernel *k);
cr_var *cr_var_of(const void *host_var);

/* Appends p to a growable array of pointers (0: ok). */
int cr_push(void ***arr, size_t *n, size_t *cap, void *p);

/* Memory: the host pointer of device memory [p, p+n) or NULL when it is none */
void *cr_device_host(const void *p, size_t n);
cr_alloc *cr_alloc_of(uint64_t addr); /* the allocation holding addr, or NULL */
/* n elements of size 1, 2 or 4 bytes set to v in device memory at p (cudaMemset, cuMemsetD8/16/32) */
cudaError_t cr_memset(void *p, uint32_t v, size_t n, int size, const char *call);

/* Launch (launch.c), used by every launch entry point */
typedef struct cr_launch {
    cr_dim3 grid, block;
    uint32_t cluster[3];
    size_t smem;
    cudaStream_t stream;
    int cooperative;
    void **args;
    const char *call;             /* the API call, for messages */
} cr_launch;
cudaError_t cr_launch_kernel(const void *host_fun, cr_kernel *k, const cr_launch *l);

/* Capture (capture.c): called around a launch */
typedef struct cr_capture_launch cr_capture_launch;
cr_capture_launch *cr_capture_before(cr_kernel *k, const cr_launch *l, const mh_emu_arg *args, uint32_t nargs);
void cr_capture_after(cr_capture_launch *c, int ok);
void cr_capture_finish(void);
void cr_capture_paint(void); /* while capturing: paints the free stack (parameters never written show) */

/* Trace (trace.c): runs the launch instrumented when exec asked for traces and the kernel has
 * markers (1: it ran, *rc its result), else 0 (run it plainly). */
int cr_trace_launch(cr_kernel *k, const mh_emu_launch *el, const mh_emu_extra *x, mh_emu_stats *es, mh_error *e,
                    int *rc);

/* Streams and events (streams.c): a handle's check */
int cr_stream_ok(cudaStream_t s);

/* Device (device.c) */
void cr_device_prop_fill(cr_device_prop *p);
int cr_occupancy(cr_kernel *k, int block, size_t smem, int *blocks);

/* Driver entry points (driver.c) */
void *cr_driver_entry(const char *name);

#endif
