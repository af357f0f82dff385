/* lua_glue.c - the Lua bindings of the core (module `mgpu.core`) and the
 * embedded runner.  Errors reach Lua as tables {code=, message=, ...} with a
 * metatable whose __tostring gives the message. */
#define _GNU_SOURCE
#include "lua/lua_glue.h"
#include "launch/args.h"
#include "base/dtype.h"
#include "trace/counters.h"
#include "trace/dump_file.h"
#include "cuda/cuda.h"
#include "emu/emu.h"
#include "instrument/instrument.h"
#include "launch/launch_shape.h"
#include "base/npy.h"
#include "frontend/ptx.h"
#include "trace/spec.h"
#include "version.h"

#include <errno.h>
#include <stdarg.h>
#include <signal.h>
#include <fcntl.h>
#include <jansson.h>
#include <nettle/sha2.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include "lua/lua_compat.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERROR_MT "mgpu.error"

static int error_tostring(lua_State *L)
{
    lua_getfield(L, 1, "message");
    if (!lua_isstring(L, -1)) {
        lua_pop(L, 1);
        lua_pushliteral(L, "mgpu error");
    }
    return 1;
}

static void push_error_mt(lua_State *L)
{
    if (luaL_newmetatable(L, ERROR_MT)) {
        lua_pushcfunction(L, error_tostring);
        lua_setfield(L, -2, "__tostring");
        lua_pushliteral(L, "mgpu.error");
        lua_setfield(L, -2, "__name");
    }
}

/* t[k] = v for the table at index t (negative indices are relative to the
 * stack before the value is pushed). */
static void set_int(lua_State *L, int t, const char *k, lua_Integer v)
{
    t = lua_absindex(L, t);
    lua_pushinteger(L, v);
    lua_setfield(L, t, k);
}

static void set_num(lua_State *L, int t, const char *k, lua_Number v)
{
    t = lua_absindex(L, t);
    lua_pushnumber(L, v);
    lua_setfield(L, t, k);
}

static void set_str(lua_State *L, int t, const char *k, const char *v)
{
    t = lua_absindex(L, t);
    lua_pushstring(L, v);
    lua_setfield(L, t, k);
}

/* Pushes an error table for e and raises it. */
static int raise_error(lua_State *L, const mh_error *e)
{
    lua_createtable(L, 0, 6);
    set_str(L, -1, "code", mh_code_name(e->code));
    set_str(L, -1, "message", e->message);
    if (e->required >= 0) set_int(L, -1, "required", e->required);
    if (e->capacity >= 0) set_int(L, -1, "capacity", e->capacity);
    if (e->trace >= 0) set_int(L, -1, "trace", e->trace);
    if (e->line >= 0) set_int(L, -1, "line", e->line);
    push_error_mt(L);
    lua_setmetatable(L, -2);
    return lua_error(L);
}

/* Raises an error value of `code` with a formatted message. */
static int fail_fmt(lua_State *L, mh_code code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail_fmt(lua_State *L, mh_code code, const char *fmt, ...)
{
    mh_error e;
    mh_error_clear(&e);
    char msg[sizeof e.message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    mh_fail(&e, code, "%s", msg);
    return raise_error(L, &e);
}

/* The same with one string argument (most messages). */
static int fail_code(lua_State *L, mh_code code, const char *fmt, const char *what)
{
    return fail_fmt(L, code, fmt, what);
}

static int raise_bad_argument(lua_State *L, const char *fmt, const char *what)
{
    return fail_code(L, MH_E_BAD_ARGUMENT, fmt, what);
}

/* core.error{code=, message=, ...}: gives a Lua table the error metatable. */
static int l_error(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    push_error_mt(L);
    lua_setmetatable(L, 1);
    return 1;
}

static int l_version(lua_State *L)
{
    lua_pushliteral(L, MH_VERSION);
    return 1;
}

/* Reads field k of the options table: an integer or an array of 1..3. */
static void opt_dims(lua_State *L, int t, const char *k, uint64_t out[3])
{
    out[0] = out[1] = out[2] = 1;
    lua_getfield(L, t, k);
    if (lua_isinteger(L, -1)) {
        lua_Integer v = lua_tointeger(L, -1);
        if (v < 1) raise_bad_argument(L, "%s must be a positive integer", k);
        out[0] = (uint64_t)v;
    } else if (lua_istable(L, -1)) {
        lua_Integer n = luaL_len(L, -1);
        if (n < 1 || n > 3) raise_bad_argument(L, "%s must have 1 to 3 dimensions", k);
        for (lua_Integer i = 1; i <= n; i++) {
            lua_geti(L, -1, i);
            int ok = lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 1;
            if (!ok) raise_bad_argument(L, "every dimension of %s must be a positive integer", k);
            out[i - 1] = (uint64_t)lua_tointeger(L, -1);
            lua_pop(L, 1);
        }
    } else {
        raise_bad_argument(L, "%s must be an integer or an array of up to 3 integers", k);
    }
    lua_pop(L, 1);
}

static const char *opt_string(lua_State *L, int t, const char *k, const char *def)
{
    const char *s = def;
    lua_getfield(L, t, k);
    if (!lua_isnil(L, -1)) {
        if (lua_type(L, -1) != LUA_TSTRING) raise_bad_argument(L, "%s must be a string", k);
        s = lua_tostring(L, -1);
    }
    lua_pop(L, 1); /* the string stays alive: it is referenced by the table */
    return s;
}

static double opt_number(lua_State *L, int t, const char *k, double def)
{
    double v = def;
    lua_getfield(L, t, k);
    if (!lua_isnil(L, -1)) {
        if (!lua_isnumber(L, -1)) raise_bad_argument(L, "%s must be a number", k);
        v = lua_tonumber(L, -1);
    }
    lua_pop(L, 1);
    return v;
}

/* t.counters: nil (none) or a number of bins, 1 .. MH_COUNTERS_MAX_BINS */
static uint32_t opt_counter_bins(lua_State *L, int t)
{
    double v = opt_number(L, t, "counters", 0);
    if (v == 0) return 0;
    if (!(v >= 1 && v <= MH_COUNTERS_MAX_BINS) || v != floor(v))
        raise_bad_argument(L, "%s must be a number of bins from 1 to 100000", "counters");
    return (uint32_t)v;
}

/* core.spec{grid=, block=, scope="warp"|"warpgroup", entries=} -> sizes */
static int l_spec(lua_State *L)
{
    mh_spec s;
    mh_error e;
    luaL_checktype(L, 1, LUA_TTABLE);
    memset(&s, 0, sizeof s);
    opt_dims(L, 1, "grid", s.grid);
    opt_dims(L, 1, "block", s.block);
    const char *scope = opt_string(L, 1, "scope", "warpgroup");
    if (mh_scope_parse(scope, &s.scope)) raise_bad_argument(L, "scope must be \"warp\" or \"warpgroup\", not \"%s\"", scope);
    double entries = opt_number(L, 1, "entries", -1);
    if (!(entries >= 0) || entries != (double)(uint64_t)entries)
        raise_bad_argument(L, "%s must be a non-negative integer", "entries");
    s.entries = (uint64_t)entries;
    mh_error_clear(&e);
    if (mh_spec_validate(&s, &e)) return raise_error(L, &e);
    lua_createtable(L, 0, 6);
    set_int(L, -1, "num_blocks", (lua_Integer)s.num_blocks);
    set_int(L, -1, "traces_per_block", (lua_Integer)s.traces_per_block);
    set_int(L, -1, "num_traces", (lua_Integer)s.num_traces);
    set_int(L, -1, "words", (lua_Integer)s.words);
    set_int(L, -1, "bytes", (lua_Integer)s.bytes);
    set_str(L, -1, "scope", mh_scope_name(s.scope));
    return 1;
}

#define WARNINGS_INDEX 3 /* stack slot of the warnings table in l_dump */

static void collect_warning(void *ctx, const char *msg)
{
    lua_State *L = ctx;
    lua_pushstring(L, msg);
    lua_seti(L, WARNINGS_INDEX, (lua_Integer)luaL_len(L, WARNINGS_INDEX) + 1);
}

static void push_summary(lua_State *L, const mh_summary *s)
{
    lua_newtable(L);
    lua_Integer n = 0;
    for (size_t i = 0; i < s->names->n; i++) {
        mh_region_row r = mh_summary_row(s, i);
        if (!r.count && !r.truncated) continue;
        lua_createtable(L, 0, 9);
        set_str(L, -1, "name", r.name);
        set_int(L, -1, "count", (lua_Integer)r.count);
        set_num(L, -1, "total", r.total);
        set_num(L, -1, "mean", r.mean);
        set_int(L, -1, "min", (lua_Integer)r.min);
        set_int(L, -1, "median", (lua_Integer)r.median);
        set_int(L, -1, "p99", (lua_Integer)r.p99);
        set_int(L, -1, "max", (lua_Integer)r.max);
        set_int(L, -1, "truncated", (lua_Integer)r.truncated);
        if (s->timeline.traces) set_num(L, -1, "concurrency", r.concurrency);
        lua_seti(L, -2, ++n);
    }
}

/* Sets result.timeline = {span=, traces=, sms=, sm_done_min=, sm_done_median=,
 * sm_done_max=} (in the summary's unit) when the dump kept one. */
static void set_timeline(lua_State *L, int result, const mh_summary *s)
{
    mh_timeline_row tl;
    if (!mh_summary_timeline(s, &tl)) return;
    result = lua_absindex(L, result);
    lua_createtable(L, 0, 7);
    set_int(L, -1, "span", (lua_Integer)tl.span);
    set_int(L, -1, "traces", (lua_Integer)tl.traces);
    set_int(L, -1, "sms", (lua_Integer)tl.sms);
    set_int(L, -1, "sm_done_min", (lua_Integer)tl.sm_done_min);
    set_int(L, -1, "sm_done_median", (lua_Integer)tl.sm_done_median);
    set_int(L, -1, "sm_done_max", (lua_Integer)tl.sm_done_max);
    if (tl.sm_out_of_range) set_int(L, -1, "sm_out_of_range", (lua_Integer)tl.sm_out_of_range);
    lua_setfield(L, result, "timeline");
}

/* core.dump{buffer=, meta=, out=, compat="mosaic", clock_ghz=, counters=, summary=}
 * -> {traces=, events=, ..., unit=, summary={rows}, timeline={...}, warnings={...}} */
static int l_dump(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    mh_dump_request req;
    memset(&req, 0, sizeof req);
    req.buffer_path = opt_string(L, 1, "buffer", NULL);
    req.meta_path = opt_string(L, 1, "meta", NULL);
    req.out_path = opt_string(L, 1, "out", NULL);
    req.calib_path = opt_string(L, 1, "calib", NULL);
    if (!req.buffer_path) raise_bad_argument(L, "%s is required (path of the trace buffer)", "buffer");
    if (!req.meta_path) raise_bad_argument(L, "%s is required (path of the meta JSON)", "meta");
    if (!req.out_path) raise_bad_argument(L, "%s is required (path of the trace JSON to write)", "out");
    const char *compat = opt_string(L, 1, "compat", NULL);
    if (compat && strcmp(compat, "mosaic") != 0) raise_bad_argument(L, "compat must be \"mosaic\", not \"%s\"", compat);
    req.mode = compat ? MH_DUMP_MOSAIC : MH_DUMP_DEFAULT;
    req.clock_ghz = opt_number(L, 1, "clock_ghz", 0);
    if (req.clock_ghz < 0) raise_bad_argument(L, "%s must be positive", "clock_ghz");
    req.counter_bins = opt_counter_bins(L, 1);
    lua_getfield(L, 1, "summary");
    req.want_summary = lua_toboolean(L, -1);
    lua_pop(L, 1);

    lua_settop(L, 1);
    lua_newtable(L); /* result, index 2 */
    lua_newtable(L); /* warnings, WARNINGS_INDEX */
    req.warn = collect_warning;
    req.warn_ctx = L;
    mh_dump_result r;
    mh_error e;
    if (mh_dump_files(&req, &r, &e)) return raise_error(L, &e);
    lua_setfield(L, 2, "warnings");
    const mh_dump_stats *st = &r.stats;
    set_int(L, 2, "traces", (lua_Integer)st->traces);
    set_int(L, 2, "traces_with_events", (lua_Integer)st->traces_with_events);
    set_int(L, 2, "events", (lua_Integer)st->events);
    set_int(L, 2, "truncated_traces", (lua_Integer)st->truncated_traces);
    set_int(L, 2, "bytes", (lua_Integer)st->bytes);
    set_int(L, 2, "overhead_cycles", (lua_Integer)st->overhead_cycles);
    set_num(L, 2, "clock_ghz", r.clock_ghz);
    set_str(L, 2, "unit", r.clock_ghz > 0 ? "ns" : "cycles");
    if (r.stats.clock_ghz_measured > 0) {
        set_num(L, 2, "clock_ghz_measured", r.stats.clock_ghz_measured);
        set_int(L, 2, "timer_step_ns", r.stats.timer_step_ns);
        set_num(L, 2, "clock_bound", r.stats.clock_bound);
        set_str(L, 2, "clock_source", r.stats.clock_measured_used ? "measured" : "given");
    }
    if (req.want_summary) {
        push_summary(L, &r.summary);
        lua_setfield(L, 2, "summary");
        set_timeline(L, 2, &r.summary);
    }
    mh_dump_result_free(&r);
    lua_settop(L, 2);
    return 1;
}

/* ---- devices, modules, kernels, arrays, traces ----------------------------- */

#define DEVICE_MT "mgpu.device"
#define MODULE_MT "mgpu.module"
#define KERNEL_MT "mgpu.kernel"
#define ARRAY_MT "mgpu.array"
#define TRACE_MT "mgpu.trace"

/* A device: the emu executor or a CUDA device (through the driver). */
typedef struct {
    int cuda;
    mh_emu *emu;
    mh_cuda *cu;
    mh_cuda_dev *cud;
    mh_cuda_devinfo info;
    int open;
} l_device;

static int dev_alloc(l_device *d, uint64_t n, uint64_t *a, mh_error *e)
{
    return d->cuda ? mh_cuda_alloc(d->cud, n, a, e) : mh_emu_alloc(d->emu, n, a, e);
}
static int dev_free(l_device *d, uint64_t a, mh_error *e)
{
    return d->cuda ? mh_cuda_free(d->cud, a, e) : mh_emu_free(d->emu, a, e);
}
static int dev_write(l_device *d, uint64_t a, const void *p, uint64_t n, mh_error *e)
{
    return d->cuda ? mh_cuda_write(d->cud, a, p, n, e) : mh_emu_write(d->emu, a, p, n, e);
}
static int dev_read(l_device *d, uint64_t a, void *p, uint64_t n, mh_error *e)
{
    return d->cuda ? mh_cuda_read(d->cud, a, p, n, e) : mh_emu_read(d->emu, a, p, n, e);
}
static int dev_memset(l_device *d, uint64_t a, int b, uint64_t n, mh_error *e)
{
    return d->cuda ? mh_cuda_memset(d->cud, a, b, n, e) : mh_emu_memset(d->emu, a, b, n, e);
}
/* The SM clock the default dump converts cycles with: emu's virtual clock,
 * or the driver's nominal clock (not a measured one: no calibration yet). */
static double dev_clock_ghz(const l_device *d) { return d->cuda ? d->info.clock_khz / 1e6 : MH_EMU_CLOCK_GHZ; }
typedef struct {
    mh_ptx_module m;
    int loaded;
    int instrumented;        /* loaded with instrument = scope: r holds the names */
    mh_scope scope;
    mh_instrumented r;
    mh_cuda_module *cm;      /* cuda: the JIT-compiled module */
    unsigned gen;            /* cuda: device generation it was loaded in */
    char *image;             /* cuda: a cubin/fatbin loaded as it is (NULL: the PTX text) */
    size_t image_len;
    mh_cuda_jit jit;         /* cuda: JIT options, kept for a reload */
    unsigned jits;           /* cuda: how many times it was JIT-compiled (kernels cache per JIT) */
} l_module;                  /* uservalue 1: device */

/* cuda: JIT-compiles the module (its PTX, or the image as it is) for the device. */
static int module_jit(mh_cuda_dev *cud, l_module *m, mh_error *e)
{
    m->jit.target = m->image ? NULL : m->m.target;
    int rc = mh_cuda_load_ptx(cud, m->image ? m->image : m->m.text, m->m.path, &m->jit, &m->cm, NULL, e);
    m->gen = mh_cuda_generation(cud);
    m->jits++;
    if (rc && m->instrumented && m->r.markers && e->line > 0) {
        /* the JIT read the rewritten text: say which line of the user's file that is */
        int added;
        uint32_t orig = mh_instrumented_line(&m->r, (uint32_t)e->line, &added);
        char note[160];
        snprintf(note, sizeof note, "\n(line %lld of the instrumented module is %sline %u of %.60s)",
                 (long long)e->line, added ? "code the instrumentation added at " : "", orig, m->m.path);
        size_t used = strlen(e->message);
        snprintf(e->message + used, sizeof e->message - used, "%s", note);
        e->line = orig;
    }
    return rc;
}

/* A compiled image rather than PTX: an ELF cubin or a fatbin (magic 0xBA55ED50). */
static int is_binary_image(const char *s, size_t n)
{
    if (n >= 4 && !memcmp(s, "\x7f" "ELF", 4)) return 1;
    return n >= 4 && (unsigned char)s[0] == 0x50 && (unsigned char)s[1] == 0xED && (unsigned char)s[2] == 0x55 &&
           (unsigned char)s[3] == 0xBA;
}

/* Reads a whole file (malloc'd); NULL when it cannot be read. */
static char *slurp_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc(n > 0 ? (size_t)n + 1 : 1);
    *len = s ? fread(s, 1, n > 0 ? (size_t)n : 0, f) : 0;
    if (s) s[*len] = 0;
    fclose(f);
    return s;
}
typedef struct {
    const mh_ptx_func *f;
    void *fn;                /* cuda: the function handle, of the module's JIT number `fn_jit` */
    unsigned fn_jit;
} l_kernel;                  /* uservalue 1: module */
typedef struct {
    uint64_t addr, count;
    mh_dtype dtype;
    l_device *dev;
    unsigned gen;
    int ndim;
    uint64_t dims[MH_NPY_MAX_DIMS]; /* shape, C order; ndim 1 = {count} */
} l_array;                          /* uservalue 1: device */
typedef struct {
    uint32_t *words;
    uint32_t *calib;         /* instrumented kernels: MH_CALIB_WORDS per trace, else NULL */
    mh_spec spec;
    mh_names names;
    double clock_ghz;
} l_trace;

static char trace_sentinel; /* core.TRACE: "the harness's trace buffer goes here" */

static void *new_object(lua_State *L, size_t size, const char *mt, int uservalue_index)
{
    void *p = lua_newuserdatauv(L, size, 1);
    memset(p, 0, size);
    luaL_setmetatable(L, mt);
    if (uservalue_index) {
        lua_pushvalue(L, uservalue_index);
        lua_setiuservalue(L, -2, 1);
    }
    return p;
}

/* core.device([kind]) -> device.  "emu"; "cuda" or "cuda:N" (device N);
 * "auto": the first CUDA device when a driver and a device are there, else emu. */
static int l_device_new(lua_State *L)
{
    const char *kind = luaL_optstring(L, 1, "auto");
    int want_cuda = !strncmp(kind, "cuda", 4), ordinal = 0;
    if (want_cuda && kind[4] == ':') ordinal = atoi(kind + 5);
    else if (want_cuda && kind[4]) want_cuda = -1;
    if (want_cuda < 0 || (!want_cuda && strcmp(kind, "auto") && strcmp(kind, "emu")))
        return fail_code(L, MH_E_BAD_ARGUMENT, "unknown backend \"%s\" (auto, emu, cuda, cuda:N)", kind);
    l_device *d = new_object(L, sizeof *d, DEVICE_MT, 0);
    mh_error e;
    mh_error_clear(&e);
    const char *driver = NULL; /* {driver = path}: another libcuda (tests use a fake one) */
    if (lua_istable(L, 2)) {
        lua_getfield(L, 2, "driver");
        driver = lua_tostring(L, -1);
        lua_pop(L, 1);
    }
    if (want_cuda || !strcmp(kind, "auto")) {
        int rc = mh_cuda_load(driver, &d->cu, &e);
        if (!rc) rc = mh_cuda_open(d->cu, ordinal, &d->cud, &e);
        if (!rc) rc = mh_cuda_device_info(d->cu, ordinal, &d->info, &e);
        if (!rc) {
            d->cuda = d->open = 1;
            return 1;
        }
        if (d->cud) mh_cuda_close(d->cud);
        if (d->cu) mh_cuda_unload(d->cu);
        d->cud = NULL;
        d->cu = NULL;
        if (want_cuda) return raise_error(L, &e);
    }
    mh_emu_opts eo = {0};
    if (lua_istable(L, 2)) {
        lua_getfield(L, 2, "strict"); /* emu: reading a register nothing wrote stops the launch */
        eo.strict = lua_toboolean(L, -1);
        lua_getfield(L, 2, "sms");    /* emu: number of virtual SMs (default 132) */
        lua_Integer sms = lua_isnil(L, -1) ? 0 : luaL_checkinteger(L, -1);
        lua_pop(L, 2);
        if (sms < 0 || sms > 100000) return fail_code(L, MH_E_BAD_ARGUMENT, "%s", "sms: 1 to 100000 virtual SMs");
        eo.num_sms = (uint32_t)sms;
    }
    d->emu = mh_emu_create(&eo, &e);
    if (!d->emu) return raise_error(L, &e);
    d->open = 1;
    return 1;
}

static int l_device_gc(lua_State *L)
{
    l_device *d = luaL_checkudata(L, 1, DEVICE_MT);
    if (d->emu) mh_emu_destroy(d->emu);
    if (d->cud) mh_cuda_close(d->cud);
    if (d->cu) mh_cuda_unload(d->cu);
    d->emu = NULL;
    d->cud = NULL;
    d->cu = NULL;
    d->open = 0;
    return 0;
}

static l_device *check_device(lua_State *L, int i)
{
    l_device *d = luaL_checkudata(L, i, DEVICE_MT);
    if (!d->open) luaL_argerror(L, i, "device is closed");
    return d;
}

static int l_device_index(lua_State *L)
{
    check_device(L, 1);
    const char *k = luaL_checkstring(L, 2);
    l_device *d = luaL_checkudata(L, 1, DEVICE_MT);
    if (!strcmp(k, "backend")) { lua_pushstring(L, d->cuda ? "cuda" : "emu"); return 1; }
    if (!strcmp(k, "name")) { lua_pushstring(L, d->cuda ? d->info.name : "emu (CPU PTX executor)"); return 1; }
    if (!strcmp(k, "clock_ghz")) { lua_pushnumber(L, dev_clock_ghz(d)); return 1; }
    if (!strcmp(k, "arch")) { /* what nvcc compiles .cu modules for: the device's; emu runs sm_90 PTX */
        lua_pushfstring(L, "sm_%d%d", d->cuda ? d->info.major : 9, d->cuda ? d->info.minor : 0);
        return 1;
    }
    if (!strcmp(k, "sms")) { lua_pushinteger(L, d->cuda ? d->info.sms : (lua_Integer)mh_emu_num_sms(d->emu)); return 1; }
    if (!strcmp(k, "max_smem")) { /* dynamic shared memory a block may have: the device's opt-in limit */
        lua_pushinteger(L, d->cuda && d->info.smem_optin > 0 ? (lua_Integer)d->info.smem_optin : (lua_Integer)MH_SMEM_PER_BLOCK_SM90);
        return 1;
    }
    if (!strcmp(k, "memory")) { /* bytes of device memory; emu: the largest single allocation it takes */
        lua_pushinteger(L, d->cuda ? (lua_Integer)d->info.memory : (lua_Integer)1 << 40);
        return 1;
    }
    luaL_getmetafield(L, 1, "methods");
    lua_getfield(L, -1, k);
    return 1;
}

/* dev:load(path [, {instrument = "warp"|"warpgroup", ptx = path}]) or
 * dev:load({source=, name=, instrument=} [, options]) -> module.  A cubin or fatbin (cuda
 * only) is loaded as it is and needs the PTX it was built from (ptx = path)
 * for the kernels' signatures.  A .cu file is compiled to PTX by nvcc first
 * ({arch=, nvcc_flags={...}}; lua/mgpu/nvcc.lua). */
static int l_device_load(lua_State *L)
{
    l_device *dv = check_device(L, 1);
    const char *path = NULL, *source = NULL, *instrument = NULL, *sig_ptx = NULL;
    int opt_level = 4, max_regs = 0;
    /* options: the third argument, or in the {source=} table itself */
    int opts = lua_istable(L, 3) ? 3 : lua_istable(L, 2) ? 2 : 0;
    if (opts) {
        lua_getfield(L, opts, "instrument");
        instrument = lua_isnil(L, -1) ? NULL : luaL_checkstring(L, -1);
        lua_pop(L, 1);
        lua_getfield(L, opts, "ptx");
        sig_ptx = lua_isnil(L, -1) ? NULL : luaL_checkstring(L, -1);
        lua_getfield(L, opts, "opt_level");   /* cuda JIT: 0..4 (default 4) */
        opt_level = (int)luaL_optinteger(L, -1, 4);
        lua_getfield(L, opts, "max_registers"); /* cuda JIT: register cap per thread, 0 = none */
        max_regs = (int)luaL_optinteger(L, -1, 0);
        lua_pop(L, 3);
        if (opt_level < 0 || opt_level > 4 || max_regs < 0 || max_regs > 255)
            return fail_code(L, MH_E_BAD_ARGUMENT, "%s", "opt_level is 0..4, max_registers 0..255");
    }
    mh_scope scope = MH_SCOPE_WARP;
    if (instrument && mh_scope_parse(instrument, &scope))
        return fail_code(L, MH_E_BAD_ARGUMENT, "instrument = \"%s\": warp or warpgroup", instrument);
    size_t len = 0;
    char *owned = NULL;
    if (lua_istable(L, 2)) {
        lua_getfield(L, 2, "source");
        source = lua_tolstring(L, -1, &len);
        lua_getfield(L, 2, "name");
        path = luaL_optstring(L, -1, "<string>");
        if (!source) return fail_code(L, MH_E_BAD_ARGUMENT, "%s", "load{source=...}: source must be the PTX text");
    } else {
        path = luaL_checkstring(L, 2);
        size_t pl = strlen(path);
        if (pl > 3 && !strcmp(path + pl - 3, ".cu")) {
            /* CUDA C: nvcc makes the PTX (lua/mgpu/nvcc.lua), which is loaded in its place */
            lua_getglobal(L, "require");
            lua_pushliteral(L, "mgpu.nvcc");
            lua_call(L, 1, 1);
            lua_getfield(L, -1, "compile");
            lua_pushvalue(L, 2);
            lua_createtable(L, 0, 2);
            if (opts) {
                lua_getfield(L, opts, "arch");
                lua_setfield(L, -2, "arch");
                lua_getfield(L, opts, "nvcc_flags");
                lua_setfield(L, -2, "nvcc_flags");
            }
            lua_getfield(L, -1, "arch");
            if (lua_isnil(L, -1)) { /* the device's architecture (dev.arch) */
                lua_getfield(L, 1, "arch");
                lua_setfield(L, -3, "arch");
            }
            lua_pop(L, 1);
            lua_call(L, 2, 2);        /* -> PTX path, PTX text (both stay on the stack while used) */
            path = lua_tostring(L, -2);
            source = lua_tolstring(L, -1, &len);
        } else {
            owned = slurp_file(path, &len);
            if (!owned) return fail_code(L, MH_E_IO, "%s: cannot open", path);
            source = owned;
        }
    }
    l_module *m = new_object(L, sizeof *m, MODULE_MT, 1);
    mh_error e;
    mh_error_clear(&e);
    if (is_binary_image(source, len)) {
        if (!dv->cuda) {
            free(owned);
            return fail_code(L, MH_E_BAD_ARGUMENT, "%s: a cubin/fatbin runs on the cuda backend only; emu runs PTX", path);
        }
        if (instrument || !sig_ptx) {
            free(owned);
            return fail_code(L, MH_E_BAD_ARGUMENT,
                             instrument ? "%s: a cubin/fatbin cannot be instrumented: load its PTX"
                                        : "%s: a cubin/fatbin needs the PTX it was built from for the kernels' "
                                          "signatures: load(path, {ptx = \"kernel.ptx\"})", path);
        }
        m->image = owned; /* kept for a reload after a fault */
        m->image_len = len;
        owned = slurp_file(sig_ptx, &len);
        if (!owned) return fail_code(L, MH_E_IO, "%s: cannot open", sig_ptx);
        source = owned;
        path = sig_ptx;
    }
    int rc = mh_ptx_parse(&m->m, source, len, path, &e);
    free(owned);
    if (rc) return raise_error(L, &e);
    m->loaded = 1;
    if (instrument) {
        /* rewrite the markers, then load the rewritten text in its place */
        if (mh_instrument(&m->m, scope, &m->r, &e)) return raise_error(L, &e);
        m->instrumented = 1;
        m->scope = scope;
        if (m->r.markers) {
            mh_ptx_module inst;
            if (mh_ptx_parse(&inst, m->r.text, m->r.len, path, &e)) return raise_error(L, &e);
            /* messages (emu faults, strict mode) name lines of the file the user has */
            for (uint32_t fi = 0; fi < inst.nfuncs; fi++)
                for (uint32_t i = 0; i < inst.funcs[fi].ncode; i++)
                    inst.funcs[fi].code[i].line = mh_instrumented_line(&m->r, inst.funcs[fi].code[i].line, NULL);
            mh_ptx_free(&m->m);
            m->m = inst;
        }
    }
    l_device *d = luaL_checkudata(L, 1, DEVICE_MT);
    if (d->cuda) {
        m->jit.opt_level = opt_level;
        m->jit.max_regs = max_regs;
        if (module_jit(d->cud, m, &e)) return raise_error(L, &e);
    } /* emu: each kernel is checked when it is taken (module:kernel), so one it
       * cannot run does not keep the module's others from running */
    return 1;
}

static int l_module_gc(lua_State *L)
{
    l_module *m = luaL_checkudata(L, 1, MODULE_MT);
    if (m->loaded) mh_ptx_free(&m->m);
    if (m->instrumented) mh_instrumented_free(&m->r);
    if (m->cm) mh_cuda_unload_module(m->cm);
    m->cm = NULL;
    free(m->image);
    m->image = NULL;
    m->loaded = m->instrumented = 0;
    return 0;
}

static int l_module_kernel(lua_State *L)
{
    l_module *m = luaL_checkudata(L, 1, MODULE_MT);
    const char *name = luaL_checkstring(L, 2);
    const mh_ptx_func *f = mh_ptx_find(&m->m, name);
    if (!f || !f->is_entry) {
        mh_error e;
        mh_error_clear(&e);
        mh_fail(&e, MH_E_NOT_FOUND, "%s: no kernel named \"%s\"", m->m.path, name);
        return raise_error(L, &e);
    }
    lua_getiuservalue(L, 1, 1);
    l_device *d = luaL_checkudata(L, -1, DEVICE_MT);
    lua_pop(L, 1);
    if (!d->cuda) {
        mh_error e;
        mh_error_clear(&e);
        if (mh_emu_check_kernel(&m->m, f, &e)) return raise_error(L, &e);
    }
    l_kernel *k = new_object(L, sizeof *k, KERNEL_MT, 1);
    k->f = f;
    k->fn = NULL;
    k->fn_jit = 0;
    return 1;
}

static int l_module_kernels(lua_State *L)
{
    l_module *m = luaL_checkudata(L, 1, MODULE_MT);
    lua_newtable(L);
    lua_Integer n = 0;
    for (uint32_t i = 0; i < m->m.nfuncs; i++)
        if (m->m.funcs[i].is_entry && m->m.funcs[i].defined) {
            lua_pushstring(L, m->m.funcs[i].name);
            lua_seti(L, -2, ++n);
        }
    return 1;
}

/* The module of kernel k (uservalue 1); pushes it. */
static l_module *kernel_module(lua_State *L, int k)
{
    lua_getiuservalue(L, k, 1);
    return luaL_checkudata(L, -1, MODULE_MT);
}

/* k:device() -> the device it was loaded on */
static int l_kernel_device(lua_State *L)
{
    luaL_checkudata(L, 1, KERNEL_MT);
    kernel_module(L, 1);
    lua_getiuservalue(L, -1, 1);
    return 1;
}

static int kernel_instrumented(const l_module *m, const mh_ptx_func *f)
{
    return m->instrumented && mh_instrumented_has(&m->r, f->name);
}

/* k:info() -> {registers=, static_smem=, local_bytes=, max_threads=, backend=}
 * cuda: what the driver compiled, and jit_target ("compute_90a": compiled for
 * that architecture-specific target; "context": for the device's); emu: from the PTX (registers: its virtual
 * registers, which say nothing about a GPU's) */
static int l_kernel_info(lua_State *L)
{
    l_kernel *k = luaL_checkudata(L, 1, KERNEL_MT);
    l_module *m = kernel_module(L, 1);
    lua_getiuservalue(L, -1, 1);
    l_device *d = luaL_checkudata(L, -1, DEVICE_MT);
    lua_createtable(L, 0, 6);
    if (d->cuda) {
        void *fn;
        mh_cuda_kernel_info ki;
        mh_error e;
        mh_error_clear(&e);
        if (mh_cuda_kernel(m->cm, k->f->name, &fn, &ki, &e)) return raise_error(L, &e);
        set_int(L, -1, "registers", ki.regs);
        set_int(L, -1, "static_smem", ki.static_smem);
        set_int(L, -1, "local_bytes", ki.local_bytes);
        set_int(L, -1, "max_threads", ki.max_threads);
        set_str(L, -1, "jit_target", mh_cuda_module_target(m->cm));
    } else {
        set_int(L, -1, "registers", (lua_Integer)k->f->nregs);
        set_int(L, -1, "static_smem", (lua_Integer)k->f->shared_bytes);
        set_int(L, -1, "local_bytes", (lua_Integer)k->f->local_bytes);
        uint32_t mt = k->f->maxntid[0] ? k->f->maxntid[0] * (k->f->maxntid[1] ? k->f->maxntid[1] : 1) *
                                             (k->f->maxntid[2] ? k->f->maxntid[2] : 1)
                                       : 1024;
        set_int(L, -1, "max_threads", mt);
    }
    set_str(L, -1, "backend", d->cuda ? "cuda" : "emu");
    return 1;
}

static int l_kernel_params(lua_State *L)
{
    l_kernel *k = luaL_checkudata(L, 1, KERNEL_MT);
    l_module *m = kernel_module(L, 1);
    uint32_t shown = k->f->nparams - (kernel_instrumented(m, k->f) ? MH_INSTRUMENT_PARAMS : 0);
    lua_newtable(L);
    for (uint32_t i = 0; i < shown; i++) {
        const mh_ptx_param *p = &k->f->params[i];
        lua_createtable(L, 0, 6);
        set_str(L, -1, "name", p->name);
        set_str(L, -1, "type", mh_ptx_type_name(p->type));
        set_int(L, -1, "size", p->size);
        set_int(L, -1, "align", p->align);
        lua_pushboolean(L, p->is_ptr);
        lua_setfield(L, -2, "ptr");
        lua_pushboolean(L, mh_param_is_aggregate(p)); /* a struct by value: pass its bytes */
        lua_setfield(L, -2, "aggregate");
        lua_seti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

/* the Lua value on top of the stack into element i of h: Lua integers go to
 * integer dtypes exactly (64-bit values beyond 2^53 included) */
static void set_value(lua_State *L, mh_dtype t, unsigned char *h, size_t i)
{
    if (!mh_dtype_is_float(t) && lua_isinteger(L, -1)) mh_dtype_set_int(t, h, i, (int64_t)lua_tointeger(L, -1));
    else mh_dtype_set(t, h, i, lua_tonumber(L, -1));
}

/* dev:array(dtype, n | {values}, [{fill=, seed=, min=, max=, start=, step=}]) */
static int l_device_array(lua_State *L)
{
    l_device *d = check_device(L, 1);
    const char *tn = luaL_checkstring(L, 2);
    mh_dtype t;
    if (mh_dtype_parse(tn, &t))
        return fail_code(L, MH_E_BAD_ARGUMENT, "unknown dtype \"%s\" (f32 f16 bf16 f64 i8 u8 i16 u16 i32 u32 i64 u64)", tn);
    int from_table = lua_istable(L, 3);
    lua_Integer n = from_table ? (lua_Integer)luaL_len(L, 3) : luaL_checkinteger(L, 3);
    uint64_t dims[MH_NPY_MAX_DIMS] = {(uint64_t)n};
    int ndim = 1;
    if (lua_istable(L, 4)) {
        lua_getfield(L, 4, "shape");
        if (lua_istable(L, -1)) {
            ndim = (int)luaL_len(L, -1);
            uint64_t prod = 1;
            if (ndim < 1 || ndim > MH_NPY_MAX_DIMS) return fail_code(L, MH_E_BAD_ARGUMENT, "%s", "shape: 1 to 8 dimensions");
            for (int i = 0; i < ndim; i++) {
                lua_geti(L, -1, i + 1);
                lua_Integer dim = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : -1;
                lua_pop(L, 1);
                if (dim < 1) return fail_code(L, MH_E_BAD_ARGUMENT, "%s", "shape: dimensions must be positive integers");
                if (dim > n) /* no dimension exceeds the count (and the product cannot wrap around) */
                    return fail_code(L, MH_E_BAD_ARGUMENT, "%s", "shape: a dimension larger than the array");
                dims[i] = (uint64_t)dim;
                prod *= (uint64_t)dim;
            }
            if (prod != (uint64_t)n) {
                char msg[120];
                snprintf(msg, sizeof msg, "shape holds %llu elements, the array %lld", (unsigned long long)prod, (long long)n);
                return fail_code(L, MH_E_BAD_ARGUMENT, "%s", msg);
            }
        }
        lua_pop(L, 1);
    }
    if (n < 1 || n > ((lua_Integer)1 << 36)) return fail_code(L, MH_E_BAD_ARGUMENT, "%s", "array length must be 1 to 2^36");
    size_t es = mh_dtype_size(t), bytes = (size_t)n * es;
    unsigned char *host = calloc(1, bytes);
    if (!host) return fail_code(L, MH_E_NO_MEMORY, "%s", "out of memory for the array");
    if (from_table) {
        for (lua_Integer i = 1; i <= n; i++) {
            lua_rawgeti(L, 3, i); /* raw: no metamethod can raise while `host` is held */
            if (!lua_isnumber(L, -1)) { free(host); return fail_code(L, MH_E_BAD_ARGUMENT, "%s", "array values must be numbers"); }
            set_value(L, t, host, (size_t)i - 1);
            lua_pop(L, 1);
        }
    } else if (lua_istable(L, 4)) {
        lua_getfield(L, 4, "fill");
        const char *fill = luaL_optstring(L, -1, "zeros");
        lua_getfield(L, 4, "seed");
        lua_getfield(L, 4, "min");
        lua_getfield(L, 4, "max");
        lua_getfield(L, 4, "start");
        lua_getfield(L, 4, "step");
        if (!strcmp(fill, "random")) mh_fill_random(t, host, (size_t)n, (uint64_t)luaL_optinteger(L, -5, 1),
                                                    luaL_optnumber(L, -4, 0), luaL_optnumber(L, -3, 1));
        else if (!strcmp(fill, "ramp")) mh_fill_ramp(t, host, (size_t)n, luaL_optnumber(L, -2, 0), luaL_optnumber(L, -1, 1));
        else if (strcmp(fill, "zeros")) { free(host); return fail_code(L, MH_E_BAD_ARGUMENT, "fill \"%s\" (zeros, ramp, random)", fill); }
        lua_pop(L, 6);
    }
    mh_error e;
    uint64_t addr;
    if (dev_alloc(d, bytes, &addr, &e)) {
        free(host);
        return raise_error(L, &e);
    }
    if (dev_write(d, addr, host, bytes, &e)) {
        mh_error e2;
        dev_free(d, addr, &e2);
        free(host);
        return raise_error(L, &e);
    }
    free(host);
    l_array *a = new_object(L, sizeof *a, ARRAY_MT, 1);
    a->addr = addr;
    a->count = (uint64_t)n;
    a->dtype = t;
    a->dev = d;
    a->gen = d->cuda ? mh_cuda_generation(d->cud) : 0;
    a->ndim = ndim;
    memcpy(a->dims, dims, sizeof dims);
    return 1;
}

static l_array *check_array(lua_State *L, int i) { return luaL_checkudata(L, i, ARRAY_MT); }

static int l_array_gc(lua_State *L)
{
    l_array *a = check_array(L, 1);
    /* memory of a context reset after a fault is already gone */
    if (a->dev && a->dev->open && a->addr && (!a->dev->cuda || a->gen == mh_cuda_generation(a->dev->cud))) {
        mh_error e;
        dev_free(a->dev, a->addr, &e);
    }
    a->addr = 0;
    return 0;
}

static int l_array_len(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)check_array(L, 1)->count);
    return 1;
}

/* Copies the array to the host (malloc'd). */
static unsigned char *array_host(lua_State *L, l_array *a)
{
    size_t bytes = (size_t)a->count * mh_dtype_size(a->dtype);
    unsigned char *h = malloc(bytes);
    mh_error e;
    if (!h) fail_code(L, MH_E_NO_MEMORY, "%s", "out of memory");
    if (dev_read(a->dev, a->addr, h, bytes, &e)) {
        free(h);
        raise_error(L, &e);
    }
    return h;
}

/* element i of host copy h onto the stack: integers as Lua integers, exactly
 * (a u64 of 2^63 or more reads as a negative integer, Lua's integers being
 * signed 64-bit; math.ult compares them unsigned) */
static void push_value(lua_State *L, mh_dtype t, const unsigned char *h, size_t i)
{
    if (mh_dtype_is_float(t)) lua_pushnumber(L, mh_dtype_get(t, h, i));
    else lua_pushinteger(L, (lua_Integer)mh_dtype_get_int(t, h, i));
}

/* arr:read() -> {values}; arr:read(i) -> value i (1-based, one element copied) */
static int l_array_read(lua_State *L)
{
    l_array *a = check_array(L, 1);
    if (!lua_isnoneornil(L, 2)) {
        lua_Integer i = luaL_checkinteger(L, 2);
        if (i < 1 || (uint64_t)i > a->count) return luaL_argerror(L, 2, "index out of range");
        size_t es = mh_dtype_size(a->dtype);
        unsigned char one[8];
        mh_error e;
        if (dev_read(a->dev, a->addr + (uint64_t)(i - 1) * es, one, es, &e)) return raise_error(L, &e);
        push_value(L, a->dtype, one, 0);
        return 1;
    }
    unsigned char *h = array_host(L, a);
    lua_createtable(L, (int)(a->count < 1u << 30 ? a->count : 0), 0);
    for (uint64_t i = 0; i < a->count; i++) {
        push_value(L, a->dtype, h, (size_t)i);
        lua_seti(L, -2, (lua_Integer)i + 1);
    }
    free(h);
    return 1;
}

static int l_array_shape(lua_State *L)
{
    l_array *a = check_array(L, 1);
    lua_createtable(L, a->ndim, 0);
    for (int i = 0; i < a->ndim; i++) {
        lua_pushinteger(L, (lua_Integer)a->dims[i]);
        lua_seti(L, -2, i + 1);
    }
    return 1;
}

static const char *npy_descr(mh_dtype t)
{
    static const char *const d[MH_DTYPE_COUNT_] = {
        [MH_F32] = "<f4", [MH_F16] = "<f2", [MH_BF16] = "<u2", [MH_F64] = "<f8", [MH_I8] = "|i1", [MH_U8] = "|u1",
        [MH_I16] = "<i2", [MH_U16] = "<u2", [MH_I32] = "<i4", [MH_U32] = "<u4", [MH_I64] = "<i8", [MH_U64] = "<u8",
    };
    return d[t];
}

/* arr:save(path): a NumPy .npy with the array's shape (bf16 as its raw uint16
 * bits: NumPy has no bfloat16), written atomically */
static int l_array_save(lua_State *L)
{
    l_array *a = check_array(L, 1);
    const char *path = luaL_checkstring(L, 2);
    char hdr[600];
    size_t hl = mh_npy_header(hdr, sizeof hdr, npy_descr(a->dtype), a->dims, a->ndim);
    if (!hl) return fail_code(L, MH_E_BAD_ARGUMENT, "%s", "save: shape too long for a .npy header");
    unsigned char *h = array_host(L, a);
    mh_out o;
    mh_error e;
    mh_error_clear(&e);
    int rc = mh_out_open(&o, path, &e);
    if (!rc) {
        mh_out_mem(&o, hdr, hl);
        mh_out_mem(&o, h, a->count * mh_dtype_size(a->dtype));
        rc = mh_out_commit(&o, &e);
    }
    free(h);
    if (rc) return raise_error(L, &e);
    return 0;
}

/* dev:load_npy(path [, dtype]) -> array with the file's shape; dtype overrides
 * the element type for the same item size (e.g. "bf16" for a '<u2' file) */
/* Field k of the options table: a list of 1..max non-negative integers below 2^63 (nil: *n = 0). */
static void opt_uint_list(lua_State *L, int t, const char *k, uint64_t *out, int max, int *n)
{
    *n = 0;
    lua_getfield(L, t, k);
    if (!lua_isnil(L, -1)) {
        if (!lua_istable(L, -1)) raise_bad_argument(L, "%s must be a list of integers", k);
        lua_Integer len = (lua_Integer)luaL_len(L, -1);
        if (len < 1 || len > max) fail_fmt(L, MH_E_BAD_ARGUMENT, "%s must have 1 to %d entries", k, max);
        for (lua_Integer i = 1; i <= len; i++) {
            lua_geti(L, -1, i);
            if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 0) raise_bad_argument(L, "every entry of %s must be a non-negative integer", k);
            out[i - 1] = (uint64_t)lua_tointeger(L, -1);
            lua_pop(L, 1);
        }
        *n = (int)len;
    }
    lua_pop(L, 1);
}

/* An option naming one of a few choices (nil: def). */
static int opt_choice(lua_State *L, int t, const char *k, int (*parse)(const char *), int def, const char *choices)
{
    const char *s = opt_string(L, t, k, NULL);
    if (!s) return def;
    int v = parse(s);
    if (v < 0) fail_fmt(L, MH_E_BAD_ARGUMENT, "tensor map: %s = \"%s\" (%s)", k, s, choices);
    return v;
}

/* dev:tensor_map(array, {box = {...}, dims =, strides =, element_strides =, swizzle =, interleave =,
 * l2 =, oob =}) -> the 128 bytes of a CUtensorMap (a Lua string) for a kernel's __grid_constant__
 * parameter.  Dimensions are innermost first (the array's shape reversed, by default), strides in
 * bytes for dimensions 2.. (contiguous by default). */
static int l_device_tensor_map(lua_State *L)
{
    l_device *d = check_device(L, 1);
    l_array *a = check_array(L, 2);
    luaL_checktype(L, 3, LUA_TTABLE);
    if (a->dev != d) return fail_code(L, MH_E_BAD_ARGUMENT, "%s", "tensor map: the array is on another device");
    if (d->cuda && a->gen != mh_cuda_generation(d->cud))
        return fail_code(L, MH_E_BAD_ARGUMENT, "%s", "tensor map: the array is from before a fault reset the device");
    mh_tensor_map_spec s;
    memset(&s, 0, sizeof s);
    s.data_type = mh_tensor_map_data_type(a->dtype);
    s.elem_size = (unsigned)mh_dtype_size(a->dtype);
    s.address = a->addr;
    s.bytes = a->count * s.elem_size;
    int n = 0, nb = 0, ns = 0, ne = 0;
    opt_uint_list(L, 3, "dims", s.dims, MH_TMAP_MAX_RANK, &n);
    if (!n) { /* the array's shape, innermost first */
        if (a->ndim > MH_TMAP_MAX_RANK)
            return fail_fmt(L, MH_E_BAD_ARGUMENT, "tensor map: the array has %d dimensions, TMA takes up to %d",
                             a->ndim, MH_TMAP_MAX_RANK);
        n = a->ndim;
        for (int i = 0; i < n; i++) s.dims[i] = a->dims[n - 1 - i];
    }
    s.rank = (uint32_t)n;
    uint64_t v[MH_TMAP_MAX_RANK];
    opt_uint_list(L, 3, "box", v, MH_TMAP_MAX_RANK, &nb);
    if (nb != n)
        return fail_fmt(L, MH_E_BAD_ARGUMENT, "tensor map: box needs %d entries (one per dimension, innermost first), "
                         "got %d", n, nb);
    for (int i = 0; i < n; i++) s.box[i] = v[i] > 256 ? 257 : (uint32_t)v[i];
    opt_uint_list(L, 3, "element_strides", v, MH_TMAP_MAX_RANK, &ne);
    if (ne && ne != n) return fail_fmt(L, MH_E_BAD_ARGUMENT, "tensor map: element_strides needs %d entries", n);
    for (int i = 0; i < n; i++) s.elem_strides[i] = ne ? (v[i] > 8 ? 9 : (uint32_t)v[i]) : 1;
    opt_uint_list(L, 3, "strides", s.strides, MH_TMAP_MAX_RANK - 1, &ns);
    if (ns && ns != n - 1)
        return fail_fmt(L, MH_E_BAD_ARGUMENT, "tensor map: strides needs %d entries (bytes, dimensions 2 to %d)", n - 1, n);
    if (!ns) mh_tensor_map_contiguous(&s);
    s.interleave = opt_choice(L, 3, "interleave", mh_tensor_map_interleave, MH_TMAP_INTERLEAVE_NONE, "none, 16B, 32B");
    s.swizzle = opt_choice(L, 3, "swizzle", mh_tensor_map_swizzle, MH_TMAP_SWIZZLE_NONE, "none, 32B, 64B, 128B");
    s.l2 = opt_choice(L, 3, "l2", mh_tensor_map_l2, MH_TMAP_L2_NONE, "none, 64B, 128B, 256B");
    s.oob = opt_choice(L, 3, "oob", mh_tensor_map_oob, MH_TMAP_OOB_ZERO, "zero, nan");
    mh_error e;
    mh_error_clear(&e);
    if (mh_tensor_map_check(&s, &e)) return raise_error(L, &e);
    if (!d->cuda)
        return fail_code(L, MH_E_PTX_UNSUPPORTED, "%s", "tensor maps are for TMA (cp.async.bulk.tensor), which emu does "
                         "not run: the cuda backend encodes them");
    unsigned char map[MH_TMAP_BYTES];
    if (mh_cuda_tensor_map(d->cud, &s, map, &e)) return raise_error(L, &e);
    lua_pushlstring(L, (const char *)map, sizeof map);
    return 1;
}

static int l_device_load_npy(lua_State *L)
{
    l_device *d = check_device(L, 1);
    const char *path = luaL_checkstring(L, 2);
    const char *want = luaL_optstring(L, 3, NULL);
    FILE *f = fopen(path, "rb");
    if (!f) return fail_code(L, MH_E_IO, "%s: cannot open", path);
    unsigned char head[65536 + 12];
    size_t hn = fread(head, 1, sizeof head, f);
    mh_npy np;
    mh_error e;
    mh_error_clear(&e);
    if (mh_npy_parse_any(head, hn, &np, &e)) {
        fclose(f);
        mh_error_prefix(&e, path);
        return raise_error(L, &e);
    }
    char descr[8];
    snprintf(descr, sizeof descr, "%c%u", np.kind, np.itemsize);
    static const struct { const char *d; mh_dtype t; } map[] = {
        {"f4", MH_F32}, {"f2", MH_F16}, {"f8", MH_F64}, {"i1", MH_I8}, {"u1", MH_U8}, {"i2", MH_I16},
        {"u2", MH_U16}, {"i4", MH_I32}, {"u4", MH_U32}, {"i8", MH_I64}, {"u8", MH_U64},
    };
    int t = -1;
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (!strcmp(map[i].d, descr)) t = (int)map[i].t;
    mh_dtype wt;
    if (want && !mh_dtype_parse(want, &wt) && t >= 0 && mh_dtype_size(wt) == np.itemsize) t = (int)wt;
    if (t < 0 || np.big_endian || np.ndim > MH_NPY_MAX_DIMS || np.count == 0) {
        fclose(f);
        char msg[200];
        snprintf(msg, sizeof msg, "%s: .npy dtype '%s'%s is not supported (little-endian f2 f4 f8 i1..i8 u1..u8; "
                 "at least one element)", path, descr, np.big_endian ? " (big-endian)" : "");
        return fail_code(L, MH_E_BAD_BUFFER, "%s", msg);
    }
    size_t bytes = (size_t)np.count * np.itemsize;
    unsigned char *data = malloc(bytes);
    int ok = data && fseek(f, (long)np.data_offset, SEEK_SET) == 0 && fread(data, 1, bytes, f) == bytes;
    fclose(f);
    if (!ok) {
        free(data);
        return fail_code(L, MH_E_BAD_BUFFER, "%s: the file is shorter than its shape says", path);
    }
    uint64_t addr;
    if (dev_alloc(d, bytes, &addr, &e) || dev_write(d, addr, data, bytes, &e)) {
        free(data);
        return raise_error(L, &e);
    }
    free(data);
    l_array *a = new_object(L, sizeof *a, ARRAY_MT, 1);
    a->addr = addr;
    a->count = np.count;
    a->dtype = (mh_dtype)t;
    a->dev = d;
    a->gen = d->cuda ? mh_cuda_generation(d->cud) : 0;
    a->ndim = np.ndim ? np.ndim : 1;
    if (np.ndim) memcpy(a->dims, np.dims, sizeof a->dims);
    else a->dims[0] = 1;
    return 1;
}

/* arr:ptr() -> lightuserdata: the array's memory, without a copy, for LuaJIT's
 * FFI (ffi.cast("float *", arr:ptr())); emu only: a GPU array has no host address */
static int l_array_ptr(lua_State *L)
{
    l_array *a = check_array(L, 1);
    if (a->dev->cuda)
        return fail_code(L, MH_E_BAD_ARGUMENT, "%s", "ptr: a GPU array has no host address; read() copies it");
    mh_error e;
    void *p = mh_emu_host(a->dev->emu, a->addr, a->count * mh_dtype_size(a->dtype), &e);
    if (!p) return raise_error(L, &e);
    lua_pushlightuserdata(L, p);
    return 1;
}

/* arr:write({values}) writes values from the first element; arr:zero() */
static int l_array_write(lua_State *L)
{
    l_array *a = check_array(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_Integer n = (lua_Integer)luaL_len(L, 2);
    if (n < 0 || (uint64_t)n > a->count) return fail_code(L, MH_E_BAD_ARGUMENT, "%s", "write: more values than elements");
    size_t es = mh_dtype_size(a->dtype);
    unsigned char *h = malloc((size_t)(n ? n : 1) * es);
    if (!h) return fail_code(L, MH_E_NO_MEMORY, "%s", "out of memory");
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, 2, i);
        if (!lua_isnumber(L, -1)) {
            free(h);
            return fail_code(L, MH_E_BAD_ARGUMENT, "%s", "write: values must be numbers");
        }
        set_value(L, a->dtype, h, (size_t)i - 1);
        lua_pop(L, 1);
    }
    mh_error e;
    int rc = dev_write(a->dev, a->addr, h, (uint64_t)n * es, &e);
    free(h);
    if (rc) return raise_error(L, &e);
    return 0;
}

static int l_array_zero(lua_State *L)
{
    l_array *a = check_array(L, 1);
    mh_error e;
    if (dev_memset(a->dev, a->addr, 0, a->count * mh_dtype_size(a->dtype), &e)) return raise_error(L, &e);
    return 0;
}

/* a:compare(b, {atol=, rtol=}) -> {mismatches=, max_abs=, first=} */
static int l_array_compare(lua_State *L)
{
    l_array *a = check_array(L, 1), *b = check_array(L, 2);
    double atol = 0, rtol = 0;
    if (lua_istable(L, 3)) {
        lua_getfield(L, 3, "atol");
        atol = luaL_optnumber(L, -1, 0);
        lua_getfield(L, 3, "rtol");
        rtol = luaL_optnumber(L, -1, 0);
        lua_pop(L, 2);
    }
    if (a->count != b->count) return fail_code(L, MH_E_BAD_ARGUMENT, "%s", "compare: arrays differ in length");
    unsigned char *ha = array_host(L, a), *hb = array_host(L, b);
    uint64_t bad = 0, first = 0;
    double max_abs = 0;
    for (uint64_t i = 0; i < a->count; i++) {
        double x = mh_dtype_get(a->dtype, ha, (size_t)i), y = mh_dtype_get(b->dtype, hb, (size_t)i);
        double d = fabs(x - y);
        if (d > max_abs || (isnan(d) && !isnan(max_abs))) max_abs = d;
        if (!(d <= atol + rtol * fabs(y))) {
            if (!bad) first = i + 1;
            bad++;
        }
    }
    free(ha);
    free(hb);
    lua_createtable(L, 0, 3);
    set_int(L, -1, "mismatches", (lua_Integer)bad);
    set_num(L, -1, "max_abs", max_abs);
    if (bad) set_int(L, -1, "first", (lua_Integer)first);
    return 1;
}

static int l_trace_gc(lua_State *L)
{
    l_trace *t = luaL_checkudata(L, 1, TRACE_MT);
    free(t->words);
    free(t->calib);
    t->words = NULL;
    t->calib = NULL;
    mh_names_free(&t->names);
    return 0;
}

/* trace:dump(path, {compat=, clock_ghz=, counters=}) -> {events=, ..., clock_ghz= (the rate used),
 * clock_source= "measured"|"given", clock_ghz_measured=, timer_step_ns=, clock_bound=,
 * summary={...}, timeline={...} (default mode)} */
static int l_trace_dump(lua_State *L)
{
    l_trace *t = luaL_checkudata(L, 1, TRACE_MT);
    const char *path = luaL_checkstring(L, 2);
    mh_dump_opts opts = {.mode = MH_DUMP_DEFAULT, .clock_ghz = t->clock_ghz, .calib = t->calib};
    if (lua_istable(L, 3)) {
        lua_getfield(L, 3, "compat");
        if (!lua_isnil(L, -1)) opts.mode = MH_DUMP_MOSAIC;
        lua_getfield(L, 3, "clock_ghz");
        opts.clock_ghz = luaL_optnumber(L, -1, opts.clock_ghz);
        lua_pop(L, 2);
        opts.counter_bins = opt_counter_bins(L, 3);
    }
    mh_summary sum;
    mh_tracebuf b;
    mh_out o;
    mh_dump_stats st;
    mh_error e;
    mh_error_clear(&e);
    mh_tracebuf_memory(&b, t->words, t->spec.words);
    if (mh_tracebuf_bind(&b, &t->spec, &e) || mh_summary_init(&sum, &t->names, &e)) return raise_error(L, &e);
    opts.summary = &sum;
    if (mh_out_open(&o, path, &e)) { mh_summary_free(&sum); return raise_error(L, &e); }
    if (mh_dump(&t->spec, &t->names, &b, &opts, &o, &st, &e) || mh_out_commit(&o, &e)) {
        mh_out_abort(&o);
        mh_summary_free(&sum);
        return raise_error(L, &e);
    }
    lua_createtable(L, 0, 4);
    set_int(L, -1, "events", (lua_Integer)st.events);
    set_int(L, -1, "traces_with_events", (lua_Integer)st.traces_with_events);
    set_int(L, -1, "truncated_traces", (lua_Integer)st.truncated_traces);
    set_str(L, -1, "unit", sum.unit);
    if (st.clock_ghz_measured > 0) {
        set_num(L, -1, "clock_ghz_measured", st.clock_ghz_measured);
        set_int(L, -1, "timer_step_ns", st.timer_step_ns);
        set_num(L, -1, "clock_bound", st.clock_bound);
    }
    /* the rate the events were converted with, and where it came from */
    int measured = st.clock_ghz_measured > 0 && st.clock_measured_used;
    if (opts.mode == MH_DUMP_DEFAULT && (measured || opts.clock_ghz > 0)) {
        set_num(L, -1, "clock_ghz", measured ? st.clock_ghz_measured : opts.clock_ghz);
        set_str(L, -1, "clock_source", measured ? "measured" : "given");
    }
    push_summary(L, &sum);
    lua_setfield(L, -2, "summary");
    set_timeline(L, -1, &sum);
    mh_summary_free(&sum);
    return 1;
}

/* Writes n uint32 words little-endian to path (atomically: mh_out). */
static int save_words(const char *path, const uint32_t *w, uint64_t n, mh_error *e)
{
    mh_out o;
    if (mh_out_open(&o, path, e)) return -1;
    for (uint64_t i = 0; i < n; i++) {
        unsigned char b[4] = {(unsigned char)w[i], (unsigned char)(w[i] >> 8), (unsigned char)(w[i] >> 16),
                              (unsigned char)(w[i] >> 24)};
        mh_out_mem(&o, b, 4);
    }
    if (mh_out_commit(&o, e)) {
        mh_out_abort(&o);
        return -1;
    }
    return 0;
}

/* trace:save(prefix) -> {buffer=, meta=, calib=}: the trace as files the CLI
 * dumps later, elsewhere (`mgpu-harness dump PREFIX.bin --meta PREFIX.meta.json
 * [--calib PREFIX.calib.bin]`): the words, the meta in JAX's capture format
 * (grid, block, entries_per_warpgroup, trace_scope, names, clock_ghz) and,
 * from an instrumented kernel, the clock calibration words. */
static int l_trace_save(lua_State *L)
{
    l_trace *t = luaL_checkudata(L, 1, TRACE_MT);
    const char *prefix = luaL_checkstring(L, 2);
    mh_error e;
    mh_error_clear(&e);
    lua_createtable(L, 0, 3);
    lua_pushfstring(L, "%s.bin", prefix);
    if (save_words(lua_tostring(L, -1), t->words, t->spec.words, &e)) return raise_error(L, &e);
    lua_setfield(L, -2, "buffer");
    json_t *names = json_object(), *meta = json_object();
    for (size_t i = 0; i < t->names.n; i++)
        json_object_set_new(names, t->names.v[i].name, json_integer((json_int_t)t->names.v[i].id));
    json_object_set_new(meta, "grid", json_pack("[III]", (json_int_t)t->spec.grid[0], (json_int_t)t->spec.grid[1],
                                                 (json_int_t)t->spec.grid[2]));
    json_object_set_new(meta, "block", json_pack("[III]", (json_int_t)t->spec.block[0], (json_int_t)t->spec.block[1],
                                                  (json_int_t)t->spec.block[2]));
    json_object_set_new(meta, "entries_per_warpgroup", json_integer((json_int_t)t->spec.entries));
    json_object_set_new(meta, "trace_scope", json_string(mh_scope_name(t->spec.scope)));
    json_object_set_new(meta, "names", names);
    if (t->clock_ghz > 0) json_object_set_new(meta, "clock_ghz", json_real(t->clock_ghz));
    char *text = json_dumps(meta, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(meta);
    if (!text) return fail_code(L, MH_E_NO_MEMORY, "%s", "out of memory");
    lua_pushfstring(L, "%s.meta.json", prefix);
    mh_out o;
    int rc = mh_out_open(&o, lua_tostring(L, -1), &e);
    if (!rc) {
        mh_out_str(&o, text);
        mh_out_str(&o, "\n");
        rc = mh_out_commit(&o, &e);
        if (rc) mh_out_abort(&o);
    }
    free(text);
    if (rc) return raise_error(L, &e);
    lua_setfield(L, -2, "meta");
    if (t->calib) {
        lua_pushfstring(L, "%s.calib.bin", prefix);
        if (save_words(lua_tostring(L, -1), t->calib, t->spec.num_traces * MH_CALIB_WORDS, &e)) return raise_error(L, &e);
        lua_setfield(L, -2, "calib");
    }
    return 1;
}

/* trace:ptr() -> lightuserdata: the trace words (num_traces x entries uint32),
 * without a copy, for LuaJIT's FFI; valid while the trace object lives */
static int l_trace_ptr(lua_State *L)
{
    l_trace *t = luaL_checkudata(L, 1, TRACE_MT);
    lua_pushlightuserdata(L, t->words);
    lua_pushinteger(L, (lua_Integer)t->spec.words);
    return 2;
}

/* trace:summary() -> region rows, timeline (as dump returns them), writing nothing */
static int l_trace_summary(lua_State *L)
{
    lua_settop(L, 1);
    lua_pushliteral(L, "/dev/null");
    lua_pushcfunction(L, l_trace_dump);
    lua_insert(L, 1);
    lua_call(L, 2, 1);
    lua_getfield(L, -1, "summary");
    lua_getfield(L, -2, "timeline");
    return 2;
}

/* trace:words() -> the raw buffer as a table of integers */
static int l_trace_words(lua_State *L)
{
    l_trace *t = luaL_checkudata(L, 1, TRACE_MT);
    lua_createtable(L, (int)t->spec.words, 0);
    for (uint64_t i = 0; i < t->spec.words; i++) {
        lua_pushinteger(L, t->words[i]);
        lua_seti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

/* profile = {scope=, entries=, names={"a", "b"} or {a=0, b=1}} -> spec + names in t */
static void read_profile(lua_State *L, int idx, const mh_emu_launch *l, l_trace *t)
{
    mh_error e;
    mh_error_clear(&e);
    memset(&t->spec, 0, sizeof t->spec);
    for (int i = 0; i < 3; i++) { t->spec.grid[i] = l->grid[i]; t->spec.block[i] = l->block[i]; }
    lua_getfield(L, idx, "scope");
    const char *scope = luaL_optstring(L, -1, "warpgroup");
    if (mh_scope_parse(scope, &t->spec.scope)) fail_code(L, MH_E_BAD_ARGUMENT, "profile.scope \"%s\" (warp, warpgroup)", scope);
    lua_getfield(L, idx, "entries");
    t->spec.entries = (uint64_t)luaL_checkinteger(L, -1);
    lua_pop(L, 2);
    if (mh_spec_validate(&t->spec, &e)) raise_error(L, &e);
    mh_names_init(&t->names);
    lua_getfield(L, idx, "names");
    if (!lua_istable(L, -1)) fail_code(L, MH_E_BAD_ARGUMENT, "%s", "profile.names must list the region names");
    lua_Integer n = (lua_Integer)luaL_len(L, -1);
    if (n > 0) {
        for (lua_Integer i = 1; i <= n; i++) {
            lua_geti(L, -1, i);
            if (mh_names_add(&t->names, luaL_checkstring(L, -1), (uint64_t)(i - 1), &e)) raise_error(L, &e);
            lua_pop(L, 1);
        }
    } else {
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            if (mh_names_add(&t->names, luaL_checkstring(L, -2), (uint64_t)luaL_checkinteger(L, -1), &e)) raise_error(L, &e);
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
    if (mh_names_finish(&t->names, &e)) raise_error(L, &e);
}

static void read_dims32(lua_State *L, int t, const char *k, uint32_t out[3])
{
    uint64_t d[3];
    opt_dims(L, t, k, d);
    for (int i = 0; i < 3; i++) {
        if (d[i] > UINT32_MAX) fail_code(L, MH_E_BAD_ARGUMENT, "%s dimension too large", k);
        out[i] = (uint32_t)d[i];
    }
}

/* Copies a name table. */
static int names_copy(mh_names *dst, const mh_names *src, mh_error *e)
{
    mh_names_init(dst);
    for (size_t i = 0; i < src->n; i++)
        if (mh_names_add(dst, src->v[i].name, src->v[i].id, e)) return -1;
    return mh_names_finish(dst, e);
}

/* Largest header count + 3 over the traces: the entries the kernel needed. */
static uint64_t entries_needed(const uint32_t *w, const mh_spec *s)
{
    uint64_t need = 0;
    for (uint64_t t = 0; t < s->num_traces; t++) {
        uint64_t n = (uint64_t)w[t * s->entries + 2] + MH_HEADER_WORDS;
        if (n > need) need = n;
    }
    return need;
}

/* k:launch{grid=, block=, smem=, args={...}, profile={...}} -> run
 * Kernels that write their own trace take mgpu.TRACE in args and
 * profile = {scope=, entries=, names=}.  Kernels instrumented from markers
 * take only their own args; profile = {entries=, retry=} (defaults 259 and
 * true): when a trace needed more entries than it had, the launch runs
 * again once with exactly that many (the kernel counts past the capacity).
 * Every attempt is listed in run.attempts. */
static int l_kernel_launch(lua_State *L)
{
    l_kernel *k = luaL_checkudata(L, 1, KERNEL_MT);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    l_module *m = kernel_module(L, 1);          /* index 3 */
    lua_getiuservalue(L, 3, 1);                 /* device, index 4 */
    l_device *d = check_device(L, 4);
    int inst = kernel_instrumented(m, k->f);
    mh_emu_launch l;
    memset(&l, 0, sizeof l);
    read_dims32(L, 2, "grid", l.grid);
    read_dims32(L, 2, "block", l.block);
    unsigned cluster[3] = {1, 1, 1};
    lua_getfield(L, 2, "cluster");
    int has_cluster = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (has_cluster) {
        /* thread-block clusters: cuda launches them with cuLaunchKernelEx; emu runs
         * the grid as it is (it has no cluster features: PTX using them is refused) */
        read_dims32(L, 2, "cluster", cluster);
        for (int i = 0; i < 3; i++)
            if (l.grid[i] % cluster[i]) {
                char msg[160];
                snprintf(msg, sizeof msg, "launch: grid %ux%ux%u is not a whole number of %ux%ux%u clusters", l.grid[0],
                         l.grid[1], l.grid[2], cluster[0], cluster[1], cluster[2]);
                return fail_code(L, MH_E_LAUNCH_FAILED, "%s", msg);
            }
    }
    lua_getfield(L, 2, "time"); /* cuda: false skips the CUDA events (run.time_ns is then nil) */
    int timed = lua_isnil(L, -1) || lua_toboolean(L, -1);
    lua_pop(L, 1);
    lua_getfield(L, 2, "smem");
    lua_Integer smem = luaL_optinteger(L, -1, 0);
    if (smem < 0 || smem > UINT32_MAX) {
        char v[32];
        snprintf(v, sizeof v, "%lld", (long long)smem);
        raise_bad_argument(L, "launch: smem = %s bytes: it must be 0 to 2^32-1", v);
    }
    l.dynamic_smem = (uint32_t)smem;
    lua_pop(L, 1);
    lua_getfield(L, 2, "args");                 /* index 5 */
    if (!lua_istable(L, 5)) return fail_code(L, MH_E_BAD_ARGUMENT, "%s", "launch: args must be a list");
    uint32_t nargs = (uint32_t)luaL_len(L, 5);
    if (nargs > 60) return fail_code(L, MH_E_BAD_ARGUMENT, "%s", "launch: too many arguments");
    mh_arg args[64];
    int trace_at = -1;
    for (uint32_t i = 0; i < nargs; i++) {
        lua_geti(L, 5, (lua_Integer)i + 1);
        memset(&args[i], 0, sizeof args[i]);
        l_array *a = luaL_testudata(L, -1, ARRAY_MT);
        if (a) {
            args[i].kind = MH_ARG_PTR;
            args[i].ptr = a->addr;
            args[i].bytes = a->count * mh_dtype_size(a->dtype);
        } else if (lua_touserdata(L, -1) == &trace_sentinel && !inst) {
            args[i].kind = MH_ARG_PTR;
            trace_at = (int)i;
        } else if (lua_isinteger(L, -1)) {
            args[i].kind = MH_ARG_INT;
            args[i].i = lua_tointeger(L, -1);
        } else if (lua_type(L, -1) == LUA_TNUMBER) {
            args[i].kind = MH_ARG_FLOAT;
            args[i].f = lua_tonumber(L, -1);
        } else if (lua_type(L, -1) == LUA_TSTRING) { /* a struct by value: its bytes (the args table keeps them) */
            size_t len;
            args[i].kind = MH_ARG_BYTES;
            args[i].data = lua_tolstring(L, -1, &len);
            args[i].bytes = len;
        } else {
            char msg[200];
            snprintf(msg, sizeof msg, "launch %s: argument %u is a %s (arrays, numbers, strings of bytes for structs%s)", k->f->name, i + 1,
                     luaL_typename(L, -1), inst ? "; the trace buffer of an instrumented kernel is passed by the harness"
                                                 : " or mgpu.TRACE");
            return fail_code(L, MH_E_BAD_ARGUMENT, "%s", msg);
        }
        lua_pop(L, 1);
    }
    uint32_t user_params = k->f->nparams - (inst ? MH_INSTRUMENT_PARAMS : 0);
    if (nargs != user_params) {
        mh_error e;
        mh_error_clear(&e);
        mh_fail(&e, MH_E_BAD_ARGUMENT, "kernel %s takes %u arguments, %u were given", k->f->name, user_params, nargs);
        return raise_error(L, &e);
    }
    lua_getfield(L, 2, "profile");              /* index 6 */
    int has_profile = lua_istable(L, 6);
    if (!inst && (trace_at >= 0) != has_profile)
        return fail_code(L, MH_E_BAD_ARGUMENT, "%s", "launch: profile={...} and mgpu.TRACE in args go together");
    l_trace *tr = NULL;
    int retry = 1, reset_idx = 0;
    if (trace_at >= 0 || inst) {
        tr = new_object(L, sizeof *tr, TRACE_MT, 0); /* index 7 */
        tr->clock_ghz = dev_clock_ghz(d);
        mh_error e;
        mh_error_clear(&e);
        if (!inst) {
            read_profile(L, 6, &l, tr);
        } else {
            memset(&tr->spec, 0, sizeof tr->spec);
            for (int i = 0; i < 3; i++) { tr->spec.grid[i] = l.grid[i]; tr->spec.block[i] = l.block[i]; }
            tr->spec.scope = m->scope;
            tr->spec.entries = 3 + 2 * 128;
            if (has_profile) {
                lua_getfield(L, 6, "entries");
                tr->spec.entries = (uint64_t)luaL_optinteger(L, -1, (lua_Integer)tr->spec.entries);
                lua_getfield(L, 6, "retry");
                retry = lua_isnil(L, -1) ? 1 : lua_toboolean(L, -1);
                lua_pop(L, 2);
                lua_getfield(L, 6, "reset"); /* a function called before the retry (inputs the first run changed) */
                if (!lua_isnil(L, -1) && !lua_isfunction(L, -1))
                    return fail_code(L, MH_E_BAD_ARGUMENT, "%s", "launch: profile.reset must be a function");
                reset_idx = lua_isnil(L, -1) ? 0 : lua_gettop(L);
                if (!reset_idx) lua_pop(L, 1);
            }
            if (mh_spec_validate(&tr->spec, &e) || names_copy(&tr->names, &m->r.names, &e)) return raise_error(L, &e);
            trace_at = (int)nargs;
            memset(&args[nargs], 0, MH_INSTRUMENT_PARAMS * sizeof *args);
            args[nargs].kind = MH_ARG_PTR;      /* __mgpu_trace */
            args[nargs + 1].kind = MH_ARG_INT;  /* __mgpu_entries */
            args[nargs + 2].kind = MH_ARG_PTR;  /* __mgpu_calib */
            nargs += MH_INSTRUMENT_PARAMS;
            tr->calib = calloc(tr->spec.num_traces ? tr->spec.num_traces : 1, MH_CALIB_WORDS * 4);
            if (!tr->calib) return fail_code(L, MH_E_NO_MEMORY, "%s", "out of memory for the calibration words");
        }
    }
    /* a shape the device would refuse never reaches it (emu checks the same limits) */
    {
        mh_error se;
        mh_error_clear(&se);
        uint64_t limit = d->cuda && d->info.smem_optin > 0 ? (uint64_t)d->info.smem_optin : MH_SMEM_PER_BLOCK_SM90;
        if (mh_launch_shape_check(k->f, l.grid, l.block, l.dynamic_smem, limit, &se)) return raise_error(L, &se);
    }
    int attempts_idx = 0;
    if (tr) {
        lua_newtable(L);                        /* attempts, index 8 */
        attempts_idx = lua_gettop(L);
    }
    mh_emu_stats st;
    double time_ns = 0;
    mh_error e;
    mh_error_clear(&e);
    int rc = 0;
    for (int attempt = 1;; attempt++) {
        if (tr) {
            free(tr->words);
            tr->words = calloc(tr->spec.words ? tr->spec.words : 1, 4);
            if (!tr->words) return fail_code(L, MH_E_NO_MEMORY, "%s", "out of memory for the trace buffer");
            if (dev_alloc(d, tr->spec.bytes, &args[trace_at].ptr, &e)) return raise_error(L, &e);
            if (dev_memset(d, args[trace_at].ptr, 0, tr->spec.bytes, &e)) return raise_error(L, &e);
            args[trace_at].bytes = tr->spec.bytes;
            if (inst) {
                args[trace_at + 1].i = (int64_t)tr->spec.entries;
                uint64_t cb = tr->spec.num_traces * MH_CALIB_WORDS * 4;
                if (dev_alloc(d, cb, &args[trace_at + 2].ptr, &e)) return raise_error(L, &e);
                if (dev_memset(d, args[trace_at + 2].ptr, 0, cb, &e)) return raise_error(L, &e);
                args[trace_at + 2].bytes = cb;
            }
        }
        uint64_t packed[64];
        const void *where[64];
        mh_emu_arg eargs[64];
        rc = mh_args_pack(k->f, args, nargs, packed, where, &e);
        if (!rc) {
            for (uint32_t i = 0; i < nargs; i++) {
                eargs[i].data = where[i];
                eargs[i].size = k->f->params[i].size;
            }
            l.args = eargs;
            l.nargs = nargs;
            memset(&st, 0, sizeof st);
            if (!d->cuda) {
                rc = mh_emu_run(d->emu, &m->m, k->f->name, &l, &st, &e);
                time_ns = (double)st.cycles / MH_EMU_CLOCK_GHZ;
            } else {
                /* after a fault reset the device: JIT the module again, transparently */
                if (m->gen != mh_cuda_generation(d->cud)) {
                    mh_cuda_unload_module(m->cm);
                    m->cm = NULL;
                    rc = module_jit(d->cud, m, &e);
                }
                void *params[64];
                float ms = 0;
                for (uint32_t i = 0; i < nargs; i++) params[i] = (void *)where[i];
                if (!rc && k->fn_jit != m->jits) { /* looked up once per JIT of the module */
                    k->fn_jit = 0;
                    rc = mh_cuda_kernel(m->cm, k->f->name, &k->fn, NULL, &e);
                    if (!rc) k->fn_jit = m->jits;
                }
                if (!rc)
                    rc = mh_cuda_launch(d->cud, k->fn, k->f->name, l.grid, l.block, cluster, l.dynamic_smem, params,
                                        timed ? &ms : NULL, &e);
                time_ns = timed ? (double)ms * 1e6 : -1;
            }
        }
        uint64_t need = 0;
        if (tr) {
            mh_error e2;
            if (!rc) rc = dev_read(d, args[trace_at].ptr, tr->words, tr->spec.bytes, &e);
            if (!rc && inst)
                rc = dev_read(d, args[trace_at + 2].ptr, tr->calib, tr->spec.num_traces * MH_CALIB_WORDS * 4, &e);
            if (!d->cuda || e.code != MH_E_KERNEL_FAULT) {
                dev_free(d, args[trace_at].ptr, &e2);
                if (inst) dev_free(d, args[trace_at + 2].ptr, &e2);
            }
            if (!rc) need = entries_needed(tr->words, &tr->spec);
            lua_createtable(L, 0, 2);
            set_int(L, -1, "entries", (lua_Integer)tr->spec.entries);
            if (!rc) set_int(L, -1, "required", (lua_Integer)need);
            lua_seti(L, attempts_idx, attempt);
        }
        if (rc) return raise_error(L, &e);
        if (!(inst && retry && attempt == 1 && need > tr->spec.entries)) break;
        tr->spec.entries = need; /* the kernel counted past the capacity: exactly what it needed */
        if (reset_idx) {
            lua_pushvalue(L, reset_idx);
            lua_call(L, 0, 0);
        }
        if (mh_spec_validate(&tr->spec, &e)) return raise_error(L, &e);
    }
    lua_createtable(L, 0, 8);
    if (time_ns >= 0) set_num(L, -1, "time_ns", time_ns);
    if (!d->cuda) {
        set_int(L, -1, "cycles", (lua_Integer)st.cycles);
        set_int(L, -1, "warp_insns", (lua_Integer)st.warp_insns);
        set_int(L, -1, "thread_insns", (lua_Integer)st.thread_insns);
    }
    set_str(L, -1, "backend", d->cuda ? "cuda" : "emu");
    if (tr) {
        lua_pushvalue(L, 7);
        lua_setfield(L, -2, "trace");
        lua_pushvalue(L, attempts_idx);
        lua_setfield(L, -2, "attempts");
        set_int(L, -1, "entries", (lua_Integer)tr->spec.entries);
    }
    return 1;
}

/* core.struct{{type, value}, ...} -> string: the bytes of a C struct passed by
 * value (a kernel's .b8 name[N] parameter), fields at their natural alignment,
 * the size rounded up to the largest.  type: a dtype (value a number, or a
 * table of numbers for an array field) or "ptr" (an array's device address, or
 * an integer). */
static int l_struct(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    unsigned char buf[4096] = {0}; /* padding bytes are zeros */
    size_t at = 0, maxal = 1;
    lua_Integer nf = luaL_len(L, 1);
    for (lua_Integer fi = 1; fi <= nf; fi++) {
        char what[48];
        snprintf(what, sizeof what, "struct field %lld", (long long)fi);
        lua_geti(L, 1, fi);
        if (!lua_istable(L, -1)) raise_bad_argument(L, "%s must be {type, value}", what);
        lua_geti(L, -1, 1);
        const char *tn = lua_tostring(L, -1);
        lua_geti(L, -2, 2);                     /* value at -1, type at -2, field at -3 */
        int ptr = tn && !strcmp(tn, "ptr");
        mh_dtype t = MH_U64;
        if (!tn || (!ptr && mh_dtype_parse(tn, &t)))
            raise_bad_argument(L, "%s: the type must be a dtype (f32 f16 bf16 f64 i8 u8 i16 u16 i32 u32 i64 u64) or ptr", what);
        size_t size = mh_dtype_size(t), n = lua_istable(L, -1) && !luaL_testudata(L, -1, ARRAY_MT) ? (size_t)luaL_len(L, -1) : 1;
        at = (at + size - 1) / size * size;
        if (size > maxal) maxal = size;
        if (n == 0 || n > (sizeof buf - at) / size)
            raise_bad_argument(L, "%s: an empty array, or the struct is over 4 KiB", what);
        for (size_t i = 0; i < n; i++) {
            if (lua_istable(L, -1) && !luaL_testudata(L, -1, ARRAY_MT)) lua_geti(L, -1, (lua_Integer)i + 1);
            else lua_pushvalue(L, -1);
            l_array *a = ptr ? luaL_testudata(L, -1, ARRAY_MT) : NULL;
            if (a) {
                mh_dtype_set_int(MH_U64, buf + at, 0, (int64_t)a->addr);
            } else if (lua_isinteger(L, -1) && !mh_dtype_is_float(t)) {
                lua_Integer v = lua_tointeger(L, -1);
                int bits = (int)size * 8, sgn = t == MH_I8 || t == MH_I16 || t == MH_I32 || t == MH_I64;
                int fits = bits == 64 || (sgn ? v >= -((lua_Integer)1 << (bits - 1)) && v < ((lua_Integer)1 << (bits - 1))
                                              : v >= 0 && v < ((lua_Integer)1 << bits));
                if (!fits) raise_bad_argument(L, "%s: the value does not fit the field's type", what);
                mh_dtype_set_int(t, buf + at, 0, v);
            } else if (lua_type(L, -1) == LUA_TNUMBER && !ptr && mh_dtype_is_float(t)) {
                mh_dtype_set(t, buf + at, 0, lua_tonumber(L, -1));
            } else {
                raise_bad_argument(L, "%s: the value must be a number (an integer for an integer field), a table of "
                                   "them, or for ptr an array or an integer", what);
            }
            lua_pop(L, 1);
            at += size;
        }
        lua_pop(L, 3);
    }
    at = (at + maxal - 1) / maxal * maxal;
    lua_pushlstring(L, (const char *)buf, at);
    return 1;
}

/* ---- helpers for the Lua library: JSON, hashing, files, time -------------- */

static json_t *to_json(lua_State *L, int idx, int depth)
{
    idx = lua_absindex(L, idx);
    if (depth > 64) luaL_error(L, "json: nesting deeper than 64 (a cycle?)");
    switch (lua_type(L, idx)) {
    case LUA_TNIL: return json_null();
    case LUA_TBOOLEAN: return json_boolean(lua_toboolean(L, idx));
    case LUA_TNUMBER:
        if (lua_isinteger(L, idx)) return json_integer((json_int_t)lua_tointeger(L, idx));
        if (!isfinite(lua_tonumber(L, idx))) return json_null();
        return json_real(lua_tonumber(L, idx));
    case LUA_TSTRING: {
        size_t n;
        const char *str = lua_tolstring(L, idx, &n);
        json_t *j = json_stringn(str, n);
        if (!j) luaL_error(L, "json: a string is not valid UTF-8");
        return j;
    }
    case LUA_TTABLE: {
        lua_Integer n = (lua_Integer)lua_rawlen(L, idx), count = 0;
        lua_pushnil(L);
        while (lua_next(L, idx)) {
            count++;
            lua_pop(L, 1);
        }
        if (n > 0 && count == n) {
            json_t *arr = json_array();
            for (lua_Integer i = 1; i <= n; i++) {
                lua_rawgeti(L, idx, i);
                json_array_append_new(arr, to_json(L, -1, depth + 1));
                lua_pop(L, 1);
            }
            return arr;
        }
        json_t *obj = json_object();
        lua_pushnil(L);
        while (lua_next(L, idx)) {
            lua_pushvalue(L, -2);
            const char *k = lua_tostring(L, -1); /* numbers become strings */
            if (!k) luaL_error(L, "json: table keys must be strings or numbers");
            json_object_set_new(obj, k, to_json(L, -2, depth + 1));
            lua_pop(L, 2);
        }
        return obj;
    }
    default:
        return json_string(luaL_typename(L, idx)); /* functions, userdata: their type name */
    }
}

static void push_json(lua_State *L, json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        const char *k;
        json_t *v;
        lua_createtable(L, 0, (int)json_object_size(j));
        json_object_foreach(j, k, v) {
            push_json(L, v);
            lua_setfield(L, -2, k);
        }
        break;
    }
    case JSON_ARRAY:
        lua_createtable(L, (int)json_array_size(j), 0);
        for (size_t i = 0; i < json_array_size(j); i++) {
            push_json(L, json_array_get(j, i));
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        break;
    case JSON_STRING: lua_pushlstring(L, json_string_value(j), json_string_length(j)); break;
    case JSON_INTEGER: lua_pushinteger(L, (lua_Integer)json_integer_value(j)); break;
    case JSON_REAL: lua_pushnumber(L, json_real_value(j)); break;
    case JSON_TRUE: lua_pushboolean(L, 1); break;
    case JSON_FALSE: lua_pushboolean(L, 0); break;
    default: lua_pushnil(L); break;
    }
}

/* core.json_encode(value [, pretty]) -> string (keys sorted) */
static int l_json_encode(lua_State *L)
{
    luaL_checkany(L, 1);
    json_t *j = to_json(L, 1, 0);
    char *s = json_dumps(j, JSON_SORT_KEYS | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17) |
                                (lua_toboolean(L, 2) ? JSON_INDENT(1) : JSON_COMPACT));
    json_decref(j);
    if (!s) return luaL_error(L, "json: cannot encode");
    lua_pushstring(L, s);
    free(s);
    return 1;
}

/* core.json_decode(string [, origin]) -> value; bad JSON raises bad_argument with the line */
static int l_json_decode(lua_State *L)
{
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    json_error_t je;
    json_t *j = json_loadb(s, n, JSON_DECODE_ANY, &je);
    if (!j) {
        mh_error e;
        mh_error_clear(&e);
        e.line = je.line;
        mh_fail(&e, MH_E_BAD_ARGUMENT, "%s: invalid JSON at line %d, column %d: %s", luaL_optstring(L, 2, "json"),
                je.line, je.column, je.text);
        return raise_error(L, &e);
    }
    push_json(L, j);
    json_decref(j);
    return 1;
}

/* core.sha256_file(path) -> hex digest */
static int l_sha256_file(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    FILE *f = fopen(path, "rb");
    if (!f) return fail_code(L, MH_E_IO, "%s: cannot open", path);
    struct sha256_ctx ctx;
    sha256_init(&ctx);
    unsigned char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) sha256_update(&ctx, n, buf);
    fclose(f);
    uint8_t d[SHA256_DIGEST_SIZE];
    sha256_digest(&ctx, sizeof d, d);
    char hex[2 * SHA256_DIGEST_SIZE + 1];
    for (int i = 0; i < SHA256_DIGEST_SIZE; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
    lua_pushstring(L, hex);
    return 1;
}

/* core.write_file(path, string): atomic (temporary file, then rename) */
static int l_write_file(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    size_t n;
    const char *s = luaL_checklstring(L, 2, &n);
    mh_out o;
    mh_error e;
    mh_error_clear(&e);
    if (mh_out_open(&o, path, &e)) return raise_error(L, &e);
    mh_out_mem(&o, s, n);
    if (mh_out_commit(&o, &e)) return raise_error(L, &e);
    return 0;
}

/* core.append_line(path, string): appends string and "\n", flushed to the OS */
static int l_append_line(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    size_t n;
    const char *s = luaL_checklstring(L, 2, &n);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) return fail_code(L, MH_E_IO, "%s: cannot open for appending", path);
    char *line = malloc(n + 1);
    if (!line) { close(fd); return fail_code(L, MH_E_NO_MEMORY, "%s", "out of memory"); }
    memcpy(line, s, n);
    line[n] = '\n';
    ssize_t w = write(fd, line, n + 1); /* one write: a line is never split by an interruption between writes */
    free(line);
    close(fd);
    if (w != (ssize_t)(n + 1)) return fail_code(L, MH_E_IO, "%s: write failed", path);
    return 0;
}

/* core.mkdir_p(path) */
static int l_mkdir_p(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    char buf[4096];
    size_t n = strlen(path);
    if (n >= sizeof buf) return fail_code(L, MH_E_BAD_ARGUMENT, "%s", "path too long");
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != 0) continue;
        char c = buf[i];
        buf[i] = 0;
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return fail_code(L, MH_E_IO, "%s: cannot create", buf);
        buf[i] = c;
    }
    return 0;
}

static int l_isatty(lua_State *L)
{
    lua_pushboolean(L, isatty((int)luaL_optinteger(L, 1, 2)));
    return 1;
}

/* core.now() -> monotonic seconds */
static int l_now(lua_State *L)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    lua_pushnumber(L, (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9);
    return 1;
}

/* Every function of the API runs through this: Lua's own argument errors
 * (luaL_check*: "bad argument #1 to '?' (string expected, got nil)") become
 * error values like the harness's others, {code = "bad_argument", message},
 * with the function's name in the message; error values pass unchanged. */
static int api_call(lua_State *L)
{
    int n = lua_gettop(L);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    if (lua_pcall(L, n, LUA_MULTRET, 0) == LUA_OK) return lua_gettop(L);
    if (lua_type(L, -1) != LUA_TSTRING) return lua_error(L);
    const char *msg = lua_tostring(L, -1), *name = lua_tostring(L, lua_upvalueindex(2));
    int method = lua_toboolean(L, lua_upvalueindex(3)), arg = 0;
    const char *q = strstr(msg, " to '?'");
    mh_error e;
    mh_error_clear(&e);
    if (q && sscanf(msg, "bad argument #%d", &arg) == 1) {
        /* as Lua says it of a method: self is not counted, a bad self is named so */
        if (method && arg == 1) mh_fail(&e, MH_E_BAD_ARGUMENT, "calling '%s' on bad self%s", name, q + 7);
        else mh_fail(&e, MH_E_BAD_ARGUMENT, "bad argument #%d to '%s'%s", method ? arg - 1 : arg, name, q + 7);
    } else {
        mh_fail(&e, MH_E_BAD_ARGUMENT, "%s: %s", name, msg);
    }
    return raise_error(L, &e);
}

/* luaL_setfuncs, each function behind api_call (methods: called as obj:name()) */
static void set_api_funcs(lua_State *L, const luaL_Reg *l, int methods)
{
    for (; l->name; l++) {
        lua_pushcfunction(L, l->func);
        lua_pushstring(L, l->name);
        lua_pushboolean(L, methods);
        lua_pushcclosure(L, api_call, 3);
        lua_setfield(L, -2, l->name);
    }
}

static void new_class(lua_State *L, const char *name, const luaL_Reg *meta, const luaL_Reg *methods)
{
    luaL_newmetatable(L, name);
    luaL_setfuncs(L, meta, 0);
    lua_newtable(L);
    set_api_funcs(L, methods, 1);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "methods");
    if (!lua_getfield(L, -2, "__index")) {
        lua_pop(L, 1);
        lua_setfield(L, -2, "__index");
    } else {
        lua_pop(L, 2);
    }
    lua_pushstring(L, name);
    lua_setfield(L, -2, "__name");
    lua_pop(L, 1);
}

static void register_classes(lua_State *L)
{
    static const luaL_Reg device_meta[] = {{"__gc", l_device_gc}, {"__index", l_device_index}, {NULL, NULL}};
    static const luaL_Reg device_methods[] = {{"load", l_device_load}, {"array", l_device_array},
                                              {"load_npy", l_device_load_npy}, {"tensor_map", l_device_tensor_map},
                                              {NULL, NULL}};
    static const luaL_Reg module_meta[] = {{"__gc", l_module_gc}, {NULL, NULL}};
    static const luaL_Reg module_methods[] = {{"kernel", l_module_kernel}, {"kernels", l_module_kernels}, {NULL, NULL}};
    static const luaL_Reg kernel_meta[] = {{NULL, NULL}};
    static const luaL_Reg kernel_methods[] = {{"launch", l_kernel_launch}, {"params", l_kernel_params},
                                              {"info", l_kernel_info}, {"device", l_kernel_device},
                                              {NULL, NULL}};
    static const luaL_Reg array_meta[] = {{"__gc", l_array_gc}, {"__len", l_array_len}, {NULL, NULL}};
    static const luaL_Reg array_methods[] = {{"read", l_array_read}, {"write", l_array_write}, {"zero", l_array_zero},
                                             {"compare", l_array_compare}, {"ptr", l_array_ptr},
                                             {"shape", l_array_shape}, {"save", l_array_save}, {NULL, NULL}};
    static const luaL_Reg trace_meta[] = {{"__gc", l_trace_gc}, {NULL, NULL}};
    static const luaL_Reg trace_methods[] = {{"dump", l_trace_dump}, {"save", l_trace_save}, {"words", l_trace_words},
                                             {"ptr", l_trace_ptr},
                                             {"summary", l_trace_summary}, {NULL, NULL}};
    new_class(L, DEVICE_MT, device_meta, device_methods);
    new_class(L, MODULE_MT, module_meta, module_methods);
    new_class(L, KERNEL_MT, kernel_meta, kernel_methods);
    new_class(L, ARRAY_MT, array_meta, array_methods);
    new_class(L, TRACE_MT, trace_meta, trace_methods);
}

static const luaL_Reg core_funcs[] = {
    {"version", l_version},
    {"spec", l_spec},
    {"struct", l_struct},
    {"dump", l_dump},
    {"error", l_error},
    {"device", l_device_new},
    {"json_encode", l_json_encode},
    {"json_decode", l_json_decode},
    {"sha256_file", l_sha256_file},
    {"write_file", l_write_file},
    {"append_line", l_append_line},
    {"mkdir_p", l_mkdir_p},
    {"isatty", l_isatty},
    {"now", l_now},
    {NULL, NULL},
};

int luaopen_mgpu_core(lua_State *L);
int luaopen_mgpu_core(lua_State *L)
{
    register_classes(L);
    lua_newtable(L);
    set_api_funcs(L, core_funcs, 0);
    lua_pushliteral(L, MH_VERSION);
    lua_setfield(L, -2, "VERSION");
    lua_pushlightuserdata(L, &trace_sentinel);
    lua_setfield(L, -2, "TRACE");
    return 1;
}

const char *mh_lua_version(void) { return LUA_RELEASE; }

/* package.preload loader for an embedded module: upvalue 1 is its index. */
static int load_embedded(lua_State *L)
{
    const mh_embedded_lua *m = &mh_embedded_lua_modules[lua_tointeger(L, lua_upvalueindex(1))];
    char chunk[128];
    snprintf(chunk, sizeof chunk, "@[embedded] lua/%s.lua", m->module);
    if (luaL_loadbuffer(L, m->source, m->size, chunk) != LUA_OK) return lua_error(L);
    lua_pushstring(L, m->module);
    lua_call(L, 1, 1);
    return 1;
}

static int traceback(lua_State *L)
{
    if (lua_type(L, 1) == LUA_TTABLE) return 1; /* mgpu error values pass through */
    const char *msg = lua_tostring(L, 1);
    if (!msg) msg = luaL_tolstring(L, 1, NULL);
    luaL_traceback(L, L, msg, 1);
    return 1;
}

/* Runs the script in protected mode (called through lua_pcall). */
static int run_protected(lua_State *L)
{
    const char *path = lua_touserdata(L, 1);
    int argc = (int)lua_tointeger(L, 2);
    char **argv = lua_touserdata(L, 3);
    const char *code = lua_touserdata(L, 4); /* a built-in command's Lua code, or NULL */
    luaL_openlibs(L);
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
    lua_pushcfunction(L, luaopen_mgpu_core);
    lua_setfield(L, -2, "mgpu.core");
    for (lua_Integer i = 0; mh_embedded_lua_modules[i].module; i++) {
        lua_pushinteger(L, i);
        lua_pushcclosure(L, load_embedded, 1);
        lua_setfield(L, -2, mh_embedded_lua_modules[i].module);
    }
    lua_pop(L, 1);
    lua_createtable(L, argc, 1);
    lua_pushstring(L, path);
    lua_seti(L, -2, 0);
    for (int i = 0; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_seti(L, -2, i + 1);
    }
    lua_setglobal(L, "arg");
    lua_pushcfunction(L, traceback);
    int h = lua_gettop(L);
    if ((code ? luaL_loadbuffer(L, code, strlen(code), path) : luaL_loadfile(L, path)) != LUA_OK) return lua_error(L);
    for (int i = 0; i < argc; i++) lua_pushstring(L, argv[i]);
    if (lua_pcall(L, argc, 1, h) != LUA_OK) return lua_error(L);
    /* a script that returns a table with setup() is an experiment: run it */
    if (lua_istable(L, -1) && lua_getfield(L, -1, "setup") == LUA_TFUNCTION) {
        lua_pop(L, 1);
        lua_getglobal(L, "require");
        lua_pushliteral(L, "mgpu.experiment");
        lua_call(L, 1, 1);
        lua_getfield(L, -1, "main");
        lua_pushvalue(L, -3);
        lua_getglobal(L, "arg");
        if (lua_pcall(L, 2, 1, h) != LUA_OK) return lua_error(L);
        lua_pushinteger(L, lua_tointeger(L, -1));
        return 1;
    }
    lua_pushinteger(L, lua_isinteger(L, -1) && code ? lua_tointeger(L, -1) : 0);
    return 1;
}

/* Ctrl-C: the first one stops the script at its next Lua step with an
 * "interrupted" error value (the experiment runner then leaves a consistent
 * results folder); a second one kills the process as usual. */
static lua_State *interrupt_L;

static void interrupt_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    lua_sethook(L, NULL, 0, 0);
    mh_error e;
    mh_error_clear(&e);
    mh_fail(&e, MH_E_INTERRUPTED, "interrupted (Ctrl-C)");
    raise_error(L, &e);
}

static void on_sigint(int sig)
{
    signal(sig, SIG_DFL);
    if (interrupt_L) lua_sethook(interrupt_L, interrupt_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

static int exit_status_for_code(const char *code)
{
    for (int c = 0; c < MH_E_COUNT_; c++)
        if (strcmp(code, mh_code_name((mh_code)c)) == 0) return mh_code_exit_status((mh_code)c);
    /* codes the Lua library raises: nvcc refusing a .cu is bad input, as a JIT error is */
    if (!strcmp(code, "compile_failed")) return mh_code_exit_status(MH_E_JIT_FAILED);
    if (!strcmp(code, "bad_results")) return mh_code_exit_status(MH_E_BAD_META); /* a results file: bad input */
    return 1;
}

static int run_lua(const char *path, const char *code, int argc, char **argv)
{
    lua_State *L = luaL_newstate();
    if (!L) {
        fputs("mgpu-harness: cannot create a Lua state (out of memory)\n", stderr);
        return 1;
    }
    interrupt_L = L;
    signal(SIGINT, on_sigint);
    lua_pushcfunction(L, run_protected);
    lua_pushlightuserdata(L, (void *)path);
    lua_pushinteger(L, argc);
    lua_pushlightuserdata(L, argv);
    lua_pushlightuserdata(L, (void *)code);
    int status = 0;
    if (lua_pcall(L, 4, 1, 0) == LUA_OK) {
        status = (int)lua_tointeger(L, -1);
    } else {
        if (lua_type(L, -1) == LUA_TTABLE) {
            lua_getfield(L, -1, "code");
            const char *ecode = lua_tostring(L, -1);
            lua_getfield(L, -2, "message");
            const char *msg = lua_tostring(L, -1);
            fprintf(stderr, "mgpu-harness: %s [%s]\n", msg ? msg : "error", ecode ? ecode : "?");
            status = ecode ? exit_status_for_code(ecode) : 1;
        } else {
            const char *msg = lua_tostring(L, -1);
            fprintf(stderr, "mgpu-harness: %s\n", msg ? msg : "(error object is not a string)");
            status = 1;
        }
    }
    signal(SIGINT, SIG_DFL);
    interrupt_L = NULL;
    lua_close(L);
    return status;
}

int mh_lua_run_script(const char *path, int argc, char **argv) { return run_lua(path, NULL, argc, argv); }

int mh_lua_run_builtin(const char *name, const char *code, int argc, char **argv)
{
    return run_lua(name, code, argc, argv);
}
