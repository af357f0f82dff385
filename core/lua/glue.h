/* glue.h - private to the Lua glue (core/lua/glue_*.c): the objects Lua
 * holds, error values, option readers, and what each glue file registers.
 * Only these files touch the Lua C API.
 *
 *   glue_error.c    error values (tables with a code), raising them
 *   glue_options.c  readers of option-table fields that name the field
 *   glue_trace.c    core.spec, core.dump, trace objects
 *   glue_device.c   devices, modules, kernels (through launch/backend.h)
 *   glue_array.c    arrays, .npy, core.struct
 *   glue_launch.c   kernel:launch, in named steps
 *   glue_host.c     JSON, hashing, files, locks and time for the Lua library
 *   glue_proc.c     child processes with pipes (the sweep's workers)
 *   glue_probe.c    what backends and devices this machine has
 *   glue_probes_file.c  `instrument --probes FILE`: a probe list from a .json or .lua file
 *   glue_open.c     luaopen_mgpu_core: classes and functions behind api_call
 *   runner.c        the embedded runner of mgpu-harness (as lua.c is Lua's) */
#ifndef MH_GLUE_H
#define MH_GLUE_H

#include <stdint.h>
#include <lauxlib.h>
#include <lua.h>
#include "lua/lua_compat.h"
#include "base/dtype.h"
#include "base/error.h"
#include "base/npy.h"
#include "frontend/ptx.h"
#include "instrument/instrument.h"
#include "launch/backend.h"
#include "trace/names.h"
#include "trace/spec.h"

#define ERROR_MT "mgpu.error"
#define DEVICE_MT "mgpu.device"
#define MODULE_MT "mgpu.module"
#define KERNEL_MT "mgpu.kernel"
#define ARRAY_MT "mgpu.array"
#define TRACE_MT "mgpu.trace"
#define TMAP_MT "mgpu.tensor_map"

/* A device: any backend, through its ops table. */
typedef struct {
    mh_device dev;
    int open;
} l_device;

typedef struct {
    mh_ptx_module m;
    int loaded;
    int instrumented;        /* loaded with instrument = scope: r holds the names */
    mh_scope scope;
    mh_instrumented r;
    void *bm;                /* the backend's module (NULL where it runs the parsed PTX) */
} l_module;                  /* uservalue 1: device */

typedef struct {
    const mh_ptx_func *f;
} l_kernel;                  /* uservalue 1: module */

typedef struct {
    uint64_t addr, count;
    mh_dtype dtype;
    l_device *dev;
    unsigned gen;            /* the device's generation when allocated */
    int ndim;
    uint64_t dims[MH_NPY_MAX_DIMS]; /* shape, C order; ndim 1 = {count} */
} l_array;                          /* uservalue 1: device */

typedef struct {
    uint32_t *words;
    uint32_t *calib;         /* instrumented kernels: MH_CALIB_WORDS per trace, else NULL */
    mh_spec spec;
    mh_names names;
    double clock_ghz;
    int virtual_time;        /* from a device whose times are a model's (emu): the dump's result says so */
    mh_trace_flow *flows;    /* emu: what released each mbarrier wait (the dump's flow events), nflows of them */
    uint32_t nflows;
} l_trace;

/* core.TRACE: "the harness's trace buffer goes here" (its address is the token) */
extern char glue_trace_sentinel;
/* core.null: a null pointer where an array is taken (a launch's args, a struct's ptr field) */
extern char glue_null_sentinel;

/* ---- error values (glue_error.c) ----------------------------------------- */
void glue_set_int(lua_State *L, int t, const char *k, lua_Integer v);
void glue_set_num(lua_State *L, int t, const char *k, lua_Number v);
void glue_set_str(lua_State *L, int t, const char *k, const char *v);
void glue_push_error_mt(lua_State *L);
/* Raises e as an error value (never returns). */
int glue_raise(lua_State *L, const mh_error *e);
int glue_fail(lua_State *L, mh_code code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define glue_bad(L, ...) glue_fail((L), MH_E_BAD_ARGUMENT, __VA_ARGS__) /* a bad_argument error value */

/* ---- option tables (glue_options.c) -------------------------------------- */
/* Every key of the table at t must be one of allowed (NULL-terminated), else
 * bad_argument: `what: unknown option "smme" (allowed: grid, block, ...)`. */
void glue_check_keys(lua_State *L, int t, const char *what, const char *const *allowed);
/* Raises a bad_argument ("WHAT must be a table SHAPE, got TYPE") unless the value at idx is a
 * table: an option table of another type is never taken as no options. */
void glue_check_table(lua_State *L, int idx, const char *what, const char *shape);
/* Field k of the table at t; messages name it as what.k. */
void glue_opt_dims(lua_State *L, int t, const char *what, const char *k, uint64_t out[3]);
void glue_opt_dims32(lua_State *L, int t, const char *what, const char *k, uint32_t out[3]);
const char *glue_opt_string(lua_State *L, int t, const char *what, const char *k, const char *def);
double glue_opt_number(lua_State *L, int t, const char *what, const char *k, double def);
/* An integer in [min, max] (nil: def). */
lua_Integer glue_opt_integer(lua_State *L, int t, const char *what, const char *k, lua_Integer def, lua_Integer min,
                             lua_Integer max);
int glue_opt_boolean(lua_State *L, int t, const char *what, const char *k, int def);
/* One of choices (NULL-terminated), as its index (nil: def), like luaL_checkoption. */
int glue_opt_choice(lua_State *L, int t, const char *what, const char *k, int def, const char *const *choices);
/* A list of 1..max non-negative integers (nil: *n = 0). */
void glue_opt_uint_list(lua_State *L, int t, const char *what, const char *k, uint64_t *out, int max, int *n);
/* t.counters: nil (none) or a number of bins, 1 .. MH_COUNTERS_MAX_BINS */
uint32_t glue_opt_counter_bins(lua_State *L, int t, const char *what);
/* The type name of the value at i, for messages. */
const char *glue_typename(lua_State *L, int i);
/* Whether the value at i is an integer: a Lua integer, or a float with an integral value in
 * lua_Integer's range (2^20 and 2.0 are integers; a string is not); lua_tointeger then reads it. */
int glue_isint(lua_State *L, int i);

/* ---- objects (glue_open.c) ----------------------------------------------- */
void *glue_new_object(lua_State *L, size_t size, const char *mt, int uservalue_index);
void glue_new_class(lua_State *L, const char *name, const luaL_Reg *meta, const luaL_Reg *methods);
l_device *glue_check_device(lua_State *L, int i);
l_array *glue_check_array(lua_State *L, int i);
/* The module of the kernel at k (its uservalue), pushed. */
l_module *glue_kernel_module(lua_State *L, int k);
int glue_kernel_instrumented(const l_module *m, const mh_ptx_func *f);
/* A probe list (dev:load's probes = {...}) at t, checked: a userdata of mh_probe pushed (the
 * strings stay in the table at t); messages begin with who ("load", a file's path) and name
 * the probe (probes[N]). */
const mh_probe *glue_read_probes(lua_State *L, int t, const char *who, uint32_t *n);

/* ---- traces (glue_trace.c) ----------------------------------------------- */
/* profile = {scope=, entries=, names=} of a kernel writing its own trace: spec + names into t */
void glue_read_profile(lua_State *L, int idx, const uint32_t grid[3], const uint32_t block[3], l_trace *t);
int glue_names_copy(mh_names *dst, const mh_names *src, mh_error *e);
/* Largest header count + 3 over the traces: the entries the kernel needed. */
uint64_t glue_entries_needed(const uint32_t *w, const mh_spec *s);

/* ---- Lua code with a time limit (glue_proc.c) ------------------------------ */
/* lua_pcall(L, nargs, nresults, msgh) with a deadline: Lua code still running after secs is
 * stopped with a `timeout` error "WHAT ran past its time limit of S s (WHY) and was stopped"; the
 * hook that was there before is restored, whatever happened.  An outer deadline that comes
 * first stays.  Returns lua_pcall's status. */
int glue_pcall_within(lua_State *L, int nargs, int nresults, int msgh, double secs, const char *what,
                      const char *why);

/* ---- JSON (glue_host.c) -------------------------------------------------- */
/* core.json_decode(string [, origin]) -> value; bad JSON raises bad_argument naming origin */
int glue_json_decode(lua_State *L);

/* ---- what each file registers -------------------------------------------- */
extern const luaL_Reg glue_error_funcs[], glue_trace_funcs[], glue_device_funcs[], glue_array_funcs[],
    glue_host_funcs[], glue_proc_funcs[], glue_probe_funcs[], glue_exec_funcs[];
void glue_open_trace(lua_State *L);
void glue_open_device(lua_State *L);
/* ---- tensor maps (glue_tmap.c): dev:tensor_map's value, keeping its array alive ---- */
void glue_open_tmap(lua_State *L);
/* A tensor map of `bytes` (MH_TMAP_BYTES) over the array at array_index, pushed. */
void glue_push_tensor_map(lua_State *L, const unsigned char *bytes, int array_index);
/* The bytes of the tensor map at i (NULL: not one), and its array into *array when array is not NULL. */
const unsigned char *glue_test_tensor_map(lua_State *L, int i, const l_array **array);
void glue_open_array(lua_State *L);
void glue_open_proc(lua_State *L);
int glue_kernel_launch(lua_State *L);
int glue_array_new(lua_State *L);      /* dev:array */
int glue_array_load_npy(lua_State *L); /* dev:load_npy */
int luaopen_mgpu_core(lua_State *L);

#endif
