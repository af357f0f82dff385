/* exec.h - running a CUDA program on emu (`mgpu-harness exec`, mgpu.exec) and
 * building one for it (`mgpu-harness nvcc`): the CUDA runtime stand-in
 * (core/cudart, docs/cudart.md) serves the program's calls inside its own
 * process; these functions find the stand-in, set what the program's run is
 * asked for through the environment (MGPU_CUDART_*), run it and wait. */
#ifndef MH_EXEC_H
#define MH_EXEC_H

#include "base/error.h"

typedef struct mh_exec_opts {
    const char *capture_dir;      /* DIR/launches.lua and the launches' buffers (NULL: none) */
    const char *trace_dir;        /* a Perfetto trace per launch of an instrumented kernel (NULL: none) */
    const char *probes;           /* with trace_dir: probes, serialized (MGPU_CUDART_PROBES; cudart_cli.c) */
    int stats;                    /* emu's exact counters per launch, on stderr */
    unsigned sms;                 /* emu's virtual SMs (0: its default) */
    const char *model;            /* emu's device model (MGPU_CUDART_MODEL; NULL: the environment's, else the default) */
    const char *model_params;     /* "NAME=NUMBER,..." set in that model (MGPU_CUDART_MODEL_PARAMS; NULL: likewise) */
    const char *launches_file;    /* a line per launch written here (mgpu.exec reads it; NULL: none) */
    char *const *argv;            /* PROG ARGS..., NULL-terminated */
} mh_exec_opts;

/* The folder holding libmgpu_cudart.a, libmgpu_core.a and lib/libcudart.so.13
 * ($MGPU_CUDART_DIR, else beside the executable, else the build's), or NULL with e set. */
const char *mh_exec_cudart_dir(mh_error *e);

/* Runs the program and waits: *status is its exit status (128 + N when signal N ended it).
 * Fails (MH_E_IO, MH_E_BAD_ARGUMENT) only when it could not be started. */
int mh_exec_run(const mh_exec_opts *o, int *status, mh_error *e);

struct mh_probe;
/* Probes as exec hands them to the stand-in (MGPU_CUDART_PROBES, read by core/cudart/trace.c):
 * malloc'd, NULL when out of memory. */
char *mh_exec_probes_serialize(const struct mh_probe *p, unsigned n);

/* Runs nvcc with args (NULL-terminated) adapted for the stand-in (exit status in *status). */
int mh_exec_nvcc(char *const *args, int *status, mh_error *e);

#endif
