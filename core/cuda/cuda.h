/* cuda.h - the `cuda` backend's core: the driver loaded with dlopen (and
 * never closed: the driver's threads may outlive any handle), devices and
 * their facts, a primary context per device, PTX modules JIT-compiled with
 * their logs, device memory, launches timed with events, and driver errors
 * mapped to the harness's codes.
 *
 * Sticky errors.  After most of them (illegal address, launch failure,
 * timeout, illegal instruction, misaligned address, stack error, ...)
 * cuda.h says the process must be terminated and relaunched to use CUDA
 * again: the device is then *lost* for this process (mh_cuda_lost), the
 * faulting call is a kernel_fault saying so, and every later call on the
 * device is refused (no_device, naming the fault) without reaching the
 * driver; a new process can use the GPU.  After a device-side assert
 * (CUDA_ERROR_ASSERT) the context "must be destroyed": the primary context
 * is reset, modules and memory of the old one are gone, the device's
 * `generation` says so, and the next launch can run. */
#ifndef MH_CUDA_H
#define MH_CUDA_H

#include <stdint.h>
#include "base/error.h"
#include "launch/tensor_map.h"

typedef struct mh_cuda mh_cuda;
typedef struct mh_cuda_dev mh_cuda_dev;
typedef struct mh_cuda_module mh_cuda_module;

typedef struct mh_cuda_devinfo {
    char name[256];
    int major, minor;        /* compute capability */
    int sms;
    int clock_khz;           /* the driver's nominal SM clock */
    uint64_t memory;         /* bytes */
    int smem_optin;          /* max dynamic shared memory per block (opt-in), bytes */
    int max_threads;
} mh_cuda_devinfo;

/* Loads the driver: `lib` NULL means "libcuda.so.1" (or $MGPU_LIBCUDA).
 * Without a driver: MH_E_NO_DEVICE with the reason. */
int mh_cuda_load(const char *lib, mh_cuda **out, mh_error *e);
void mh_cuda_unload(mh_cuda *c);
int mh_cuda_driver_version(mh_cuda *c, int *version, mh_error *e);
int mh_cuda_device_count(mh_cuda *c, int *n, mh_error *e);
int mh_cuda_device_info(mh_cuda *c, int ordinal, mh_cuda_devinfo *info, mh_error *e);

int mh_cuda_open(mh_cuda *c, int ordinal, mh_cuda_dev **out, mh_error *e);
void mh_cuda_close(mh_cuda_dev *d);
/* Incremented at each reset after a fault: handles from before are invalid. */
unsigned mh_cuda_generation(const mh_cuda_dev *d);
/* Non-zero (the driver's error) once the device is lost for this process. */
int mh_cuda_lost(const mh_cuda_dev *d);

/* JIT options for mh_cuda_load_ptx. */
typedef struct mh_cuda_jit {
    int opt_level;          /* 0..4 */
    int max_regs;           /* a register cap per thread, 0: none */
    const char *target;     /* the PTX's .target ("sm_90a"); NULL: a cubin/fatbin or not known */
} mh_cuda_jit;

/* Loads a module: PTX text (JIT-compiled) or a cubin/fatbin image.  The
 * target is checked against the device first (sm_90a runs on 9.0 only, sm_90
 * on 9.0 and newer) and refused with the reason before any JIT.  PTX for an
 * architecture-specific target ("a"/"f" suffix) is JIT-compiled for that exact
 * target (CU_JIT_TARGET compute_90a), and from the context's target when the
 * driver does not take that option.  On failure: MH_E_JIT_FAILED with the
 * driver's error log in the message and, when the log names one, e->line set
 * to the PTX line.  *info_log (may be NULL) receives the JIT info log
 * (malloc'd). */
int mh_cuda_load_ptx(mh_cuda_dev *d, const char *ptx, const char *path, const mh_cuda_jit *jit, mh_cuda_module **out,
                     char **info_log, mh_error *e);
/* What the module was compiled for: "compute_90a" (explicit), "context". */
const char *mh_cuda_module_target(const mh_cuda_module *m);
void mh_cuda_unload_module(mh_cuda_module *m);

typedef struct mh_cuda_kernel_info {
    int regs, static_smem, local_bytes, max_threads;
} mh_cuda_kernel_info;
int mh_cuda_kernel(mh_cuda_module *m, const char *name, void **fn, mh_cuda_kernel_info *info, mh_error *e);

int mh_cuda_alloc(mh_cuda_dev *d, uint64_t bytes, uint64_t *addr, mh_error *e);
int mh_cuda_free(mh_cuda_dev *d, uint64_t addr, mh_error *e);
int mh_cuda_write(mh_cuda_dev *d, uint64_t addr, const void *src, uint64_t bytes, mh_error *e);
int mh_cuda_read(mh_cuda_dev *d, uint64_t addr, void *dst, uint64_t bytes, mh_error *e);
int mh_cuda_memset(mh_cuda_dev *d, uint64_t addr, int byte, uint64_t bytes, mh_error *e);

/* Launches fn (from mh_cuda_kernel) and waits; *ms gets the event-timed
 * duration (ms NULL: no events, the launch and cuCtxSynchronize only).
 * Timed, the device is synchronised before the first event is recorded.
 * params: one pointer per kernel parameter to its value.  cluster (NULL or
 * 1x1x1 for none): thread-block cluster dimensions, through cuLaunchKernelEx
 * (Hopper kernels such as Mosaic GPU's may need them); clusters of more than
 * 8 blocks are allowed on the function first (non-portable sizes).  When
 * static + dynamic shared memory exceed what a block gets by default
 * (48 KiB), the function's dynamic limit is raised to smem first. */
int mh_cuda_launch(mh_cuda_dev *d, void *fn, const char *name, const unsigned grid[3], const unsigned block[3],
                   const unsigned cluster[3], unsigned smem, void **params, float *ms, mh_error *e);
/* The same, `repeat` launches back to back (0 counts as 1) between one pair
 * of events: *ms is their mean, so the host's gap before the first launch is
 * spread over all of them instead of counted in each (the events' own
 * resolution is about 0.5 us, cuda.h says). */
int mh_cuda_launch_n(mh_cuda_dev *d, void *fn, const char *name, const unsigned grid[3], const unsigned block[3],
                     const unsigned cluster[3], unsigned smem, void **params, unsigned repeat, float *ms, mh_error *e);
/* The same, cooperative when asked (cuLaunchKernelEx with CU_LAUNCH_ATTRIBUTE_COOPERATIVE, so that
 * cg::this_grid().sync() works): a grid that cannot be resident at once (the driver's occupancy
 * of the kernel x the SMs) is bad_argument naming that limit, before launching. */
int mh_cuda_launch_ex(mh_cuda_dev *d, void *fn, const char *name, const unsigned grid[3], const unsigned block[3],
                      const unsigned cluster[3], unsigned smem, void **params, unsigned repeat, int cooperative,
                      float *ms, mh_error *e);

/* A TMA descriptor (CUtensorMap) for the tiled layout s, from the driver's
 * cuTensorMapEncodeTiled after mh_tensor_map_check: bad_argument with the
 * rule or the driver's error. */
int mh_cuda_tensor_map(mh_cuda_dev *d, const mh_tensor_map_spec *s, unsigned char out[MH_TMAP_BYTES], mh_error *e);

#endif
