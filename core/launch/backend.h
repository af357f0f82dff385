/* backend.h - the one interface both backends implement (emu: the CPU PTX
 * executor; cuda: the driver API), in the manner of an ops table: a backend
 * is a table of functions, a device is an open instance of one, and the
 * code above (the Lua glue, the CLI) only ever calls the mh_device_*
 * functions below, never a backend directly.  An operation a backend does
 * not have is NULL in its table; backend.c checks that in one place and
 * says which backend lacks what.
 *
 * Adding a third backend: write an mh_backend (probe + open) whose open
 * fills an mh_device with its ops table and facts, and list it in
 * core/backends.c.  Nothing in the glue changes. */
#ifndef MH_BACKEND_H
#define MH_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include "base/error.h"
#include "frontend/ptx.h"
#include "launch/tensor_map.h"
#include "trace/flows.h"

/* What a device is; the same fields for every backend. */
typedef struct mh_device_facts {
    const char *backend;     /* "emu", "cuda" */
    char name[256];
    int major, minor;        /* the architecture modules are built for (emu runs sm_90 PTX) */
    uint32_t sms;
    double clock_ghz;        /* the SM clock cycles are converted with: nominal (cuda) or virtual (emu) */
    uint64_t memory;         /* bytes of device memory (emu: the largest allocation it takes) */
    uint64_t max_smem;       /* dynamic shared memory a block may have (opt-in) */
    int virtual_time;        /* times and clocks are a model's, not a GPU's */
    const struct mh_emu_model *model; /* emu, once open: its device model, model_params set (cuda: NULL) */
} mh_device_facts;

struct mh_emu_param;
struct mh_emu_model;

/* How a device is opened. */
typedef struct mh_device_opts {
    const char *driver;      /* cuda: another libcuda (tests use a fake one); NULL: the system's */
    int ordinal;             /* cuda: device number */
    int strict;              /* emu: a read of a register nothing wrote stops the launch */
    uint32_t sms;            /* emu: virtual SMs, 0 = default */
    uint64_t max_insns;      /* emu: warp instructions a launch may run, 0 = no limit */
    const char *model;       /* emu: the device model (core/emu/emu_model.c), NULL = the default */
    const struct mh_emu_param *model_params; /* emu: that model's parameters set otherwise, by name */
    uint32_t nmodel_params;
    uint32_t threads;        /* emu: workers SMs run on, 0 = $MGPU_EMU_THREADS or the machine's cores */
} mh_device_opts;

/* A module as the front end parsed it, and how to build it. */
typedef struct mh_module_source {
    const mh_ptx_module *ptx;    /* signatures (and what emu runs); outlives the backend's module */
    const char *image;           /* a cubin/fatbin to load as it is (NULL: ptx->text is JIT-compiled) */
    size_t image_len;
    int opt_level;               /* JIT: 0..4 */
    int max_regs;                /* JIT: register cap per thread, 0 = none */
} mh_module_source;

/* What the backend knows of a kernel. */
typedef struct mh_kernel_facts {
    int regs, static_smem, local_bytes, max_threads;
    const char *jit_target;      /* cuda: "compute_90a", "context"; NULL elsewhere */
    /* emu: from ptxas where it is installed (cuda: the driver's) */
    int regs_unknown;            /* regs is not known (emu without ptxas): say so, never the PTX's virtual count */
    int spill_stores, spill_loads, stack_bytes; /* ptxas -v, bytes per thread (-1: not known) */
    int ptx_regs;                /* the PTX's declared virtual registers (emu) */
    const char *regs_from;       /* "ptxas", "driver", NULL: unknown */
    char note[256];              /* why registers are unknown (no ptxas, ptxas refused the PTX) */
} mh_kernel_facts;

#define MH_LAUNCH_MAX_PARAMS 64  /* a kernel's parameters in one launch (60 of the user's, the instrumentation's) */

/* A launch, the same for every backend: shape and the bytes of each parameter. */
typedef struct mh_launch_desc {
    uint32_t grid[3], block[3], cluster[3]; /* cluster 1x1x1: none */
    uint32_t dynamic_smem;
    const void *const *params;   /* params[i]: the bytes of kernel parameter i (f->params[i].size of them) */
    uint32_t nparams;
    int timed;                   /* cuda: time with events (time_ns < 0 when not) */
    double timeout_s;            /* > 0: stop a launch still running after this long (emu; a GPU kernel
                                  * cannot be stopped in the process that launched it) */
    uint32_t repeat;             /* cuda: launches back to back between one pair of events (0 or 1: one),
                                  * time_ns their mean, for kernels shorter than the host's submission gap;
                                  * emu runs it once (its virtual time is the same each run) */
    int stats;                   /* emu: count memory traffic and instructions per source line (stats->counts) */
    int flows;                   /* emu: record which arrive or TMA completion released which mbarrier wait
                                  * (stats->flows: flow events on the timeline) */
    int cooperative;             /* a cooperative launch: the whole grid resident at once (bad_argument before
                                  * launching when it cannot be), cg::this_grid().sync() works */
} mh_launch_desc;

/* Exact counters of one launch (emu with desc.stats): totals under Nsight Compute's metric
 * names where one exists (ptx__* names: counts of PTX instructions, not SASS), and one row
 * per source line (.loc/.file), or per PTX line of a module without line information. */
typedef struct mh_count_row {
    int32_t file;                /* index into files; -1: a line of the PTX module itself */
    uint32_t line;
    uint64_t *v;                 /* nmetrics values */
} mh_count_row;

typedef struct mh_count_ratio {
    const char *name;            /* Nsight Compute's name of the ratio */
    uint32_t num, den;           /* metric indices */
} mh_count_ratio;

typedef struct mh_launch_counts {
    uint32_t nmetrics;
    const char *const *names;    /* static */
    const mh_count_ratio *ratios; /* static, nratios of them */
    uint32_t nratios;
    uint64_t *total;             /* nmetrics */
    mh_count_row *rows;          /* sorted by file, then line */
    uint32_t nrows;
    char **files;                /* as the PTX's .file directives name them */
    uint32_t nfiles;
    char *module;                /* the PTX module's path (rows with file -1) */
    void (*release)(struct mh_launch_counts *c); /* frees it all */
} mh_launch_counts;

typedef struct mh_launch_stats {
    double time_ns;              /* < 0: not timed */
    int counted;                 /* the counts below are exact (emu) */
    uint64_t cycles, warp_insns, thread_insns;
    uint32_t blocks_per_sm;      /* emu: the blocks one virtual SM held at once */
    char *output;                /* emu: what the kernel printed (printf), malloc'd: the caller frees it */
    size_t output_len;
    char *warnings;              /* emu: what the PTX leaves undefined and emu let happen, a line each naming
                                  * file:line (malloc'd, NULL: none): the caller frees it */
    size_t warnings_len;
    mh_launch_counts *counts;    /* emu with desc.stats: the caller frees it with counts->release */
    mh_trace_flow *flows;        /* emu with desc.flows: mbarrier phases' completions to the waits they released */
    uint32_t nflows;             /* (malloc'd: the caller frees it) */
} mh_launch_stats;

typedef struct mh_backend_ops {
    void (*close)(void *dev);
    int (*alloc)(void *dev, uint64_t bytes, uint64_t *addr, mh_error *e);
    int (*free)(void *dev, uint64_t addr, mh_error *e);
    int (*write)(void *dev, uint64_t addr, const void *src, uint64_t bytes, mh_error *e);
    int (*read)(void *dev, uint64_t addr, void *dst, uint64_t bytes, mh_error *e);
    int (*memset)(void *dev, uint64_t addr, int byte, uint64_t bytes, mh_error *e);
    /* optional (NULL: the backend has none) */
    void *(*host)(void *dev, uint64_t addr, uint64_t bytes, mh_error *e); /* memory's host address */
    unsigned (*generation)(const void *dev);  /* changes when a fault reset the device (memory is gone) */
    int (*module_load)(void *dev, const mh_module_source *src, void **mod, mh_error *e);
    void (*module_free)(void *mod);
    int loads_images;                         /* module_load takes src->image */
    int (*kernel_check)(void *dev, const mh_ptx_module *m, const mh_ptx_func *f, mh_error *e);
    /* required */
    int (*kernel_facts)(void *dev, void *mod, const mh_ptx_func *f, mh_kernel_facts *out, mh_error *e);
    int (*launch)(void *dev, void *mod, const mh_ptx_module *m, const mh_ptx_func *f, const mh_launch_desc *l,
                  mh_launch_stats *st, mh_error *e);
    /* optional */
    int (*tensor_map)(void *dev, const mh_tensor_map_spec *s, unsigned char out[MH_TMAP_BYTES], mh_error *e);
} mh_backend_ops;

/* An open device. */
typedef struct mh_device {
    const mh_backend_ops *ops;
    void *impl;
    mh_device_facts facts;
} mh_device;

/* What a backend says of itself before any device is opened (info). */
#define MH_PROBE_MAX_DEVICES 16
typedef struct mh_backend_probe {
    int available;
    char detail[1024];            /* why not, or the driver's version */
    int devices;                 /* how many (facts of the first MH_PROBE_MAX_DEVICES below) */
    mh_device_facts facts[MH_PROBE_MAX_DEVICES];
    char device_error[MH_PROBE_MAX_DEVICES][1024]; /* non-empty: that device's facts could not be read */
} mh_backend_probe;

typedef struct mh_backend {
    const char *name;
    void (*probe)(const mh_device_opts *o, mh_backend_probe *out);
    int (*open)(const mh_device_opts *o, mh_device *out, mh_error *e);
} mh_backend;

/* ---- what the code above calls ------------------------------------------ */
void mh_device_close(mh_device *d);
int mh_device_alloc(mh_device *d, uint64_t bytes, uint64_t *addr, mh_error *e);
int mh_device_free(mh_device *d, uint64_t addr, mh_error *e);
int mh_device_write(mh_device *d, uint64_t addr, const void *src, uint64_t bytes, mh_error *e);
int mh_device_read(mh_device *d, uint64_t addr, void *dst, uint64_t bytes, mh_error *e);
int mh_device_memset(mh_device *d, uint64_t addr, int byte, uint64_t bytes, mh_error *e);
/* NULL with bad_argument when the backend's memory has no host address */
void *mh_device_host(mh_device *d, uint64_t addr, uint64_t bytes, mh_error *e);
/* 0 for a backend that never resets */
unsigned mh_device_generation(const mh_device *d);
/* A module for the backend (*mod may stay NULL: a backend that runs the parsed PTX itself). */
int mh_device_module_load(mh_device *d, const mh_module_source *src, void **mod, mh_error *e);
void mh_device_module_free(mh_device *d, void *mod);
/* 0 when the backend loads cubin/fatbin images, else bad_argument naming path */
int mh_device_takes_images(mh_device *d, const char *path, mh_error *e);
/* Whether the backend can run kernel f (emu: what it does not execute is named). */
int mh_device_kernel_check(mh_device *d, const mh_ptx_module *m, const mh_ptx_func *f, mh_error *e);
int mh_device_kernel_facts(mh_device *d, void *mod, const mh_ptx_func *f, mh_kernel_facts *out, mh_error *e);
int mh_device_launch(mh_device *d, void *mod, const mh_ptx_module *m, const mh_ptx_func *f, const mh_launch_desc *l,
                     mh_launch_stats *st, mh_error *e);
int mh_device_tensor_map(mh_device *d, const mh_tensor_map_spec *s, unsigned char out[MH_TMAP_BYTES], mh_error *e);

#endif
