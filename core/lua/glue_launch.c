/* glue_launch.c - kernel:launch, for any backend, in named steps: the shape,
 * the arguments, the trace (a kernel writing its own, or the buffers of an
 * instrumented one), the attempts, and the result.  This is the one place a
 * launch is retried: an instrumented kernel counts past its trace's capacity,
 * so when a trace did not fit the launch runs once more with exactly the
 * entries the kernel needed (profile.retry = false: not; profile.reset: a
 * function called just before that retry).  The experiment runner never
 * retries a launch itself (see lua/mgpu/experiment.lua). */
#include "lua/glue.h"
#include "launch/args.h"
#include "launch/tensor_map.h"
#include "launch/launch_shape.h"
#include "launch/writes.h"
#include "base/read_file.h"
#include "base/stop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_USER_ARGS 60

typedef struct {
    l_kernel *k;
    l_module *m;
    l_device *d;
    int inst;                        /* instrumented from markers: the harness appends its parameters */
    mh_launch_desc desc;
    mh_arg args[MH_LAUNCH_MAX_PARAMS];
    uint32_t nargs;
    int trace_at;                    /* index of the trace buffer's argument, -1: none */
    l_trace *tr;                     /* NULL: no trace */
    int trace_idx, attempts_idx, reset_idx;
    int retry, restore;
    uint32_t user_args;              /* the caller's arguments (before the harness's own) */
    struct {
        uint32_t arg;                /* argument index */
        uint64_t addr, bytes;
        void *host;                  /* its bytes before the first attempt (scratch the collector frees) */
    } saved[MAX_USER_ARGS];
    uint32_t nsaved;
    uint64_t saved_bytes;
    int echo_printf;                 /* launch.printf: write what the kernel printed to stdout (default) */
    unsigned gen;                    /* the device's generation when the attempt's buffers were taken */
    uint64_t owned[2];               /* device buffers this attempt took (trace, calibration), 0: none */
} launch_state;

/* grid, block, cluster, smem, time */
static void read_shape(lua_State *L, launch_state *s)
{
    mh_launch_desc *l = &s->desc;
    glue_opt_dims32(L, 2, "launch", "grid", l->grid);
    glue_opt_dims32(L, 2, "launch", "block", l->block);
    l->cluster[0] = l->cluster[1] = l->cluster[2] = 1;
    lua_getfield(L, 2, "cluster");
    int has_cluster = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (has_cluster) {
        /* thread-block clusters: cuda launches them with cuLaunchKernelEx; emu dispatches a
         * cluster's blocks together (docs/emu.md) */
        glue_opt_dims32(L, 2, "launch", "cluster", l->cluster); /* the grid checked as .reqnctapercluster's,
                                                                   * bad_argument: mh_launch_cluster */
    }
    l->timed = glue_opt_boolean(L, 2, "launch", "time", 1); /* cuda: false skips the events (no time_ns) */
    l->timeout_s = glue_opt_number(L, 2, "launch", "timeout_s", 0); /* emu: a launch running longer is stopped */
    l->stats = glue_opt_boolean(L, 2, "launch", "stats", 0);         /* emu: exact counters per source line */
    l->cooperative = glue_opt_boolean(L, 2, "launch", "cooperative", 0); /* the grid resident at once: grid.sync() */
    s->echo_printf = glue_opt_boolean(L, 2, "launch", "printf", 1);  /* false: run.printf only */
    /* cuda: launches back to back between one pair of events, time_ns their mean (short kernels:
     * the host's submission gap is not counted); emu runs once */
    l->repeat = (uint32_t)glue_opt_integer(L, 2, "launch", "repeat", 1, 1, 1000000);
    if (!(l->timeout_s >= 0)) glue_bad(L, "%s", "launch.timeout_s must be 0 (none) or more seconds");
    lua_Integer smem = glue_opt_integer(L, 2, "launch", "smem", 0, LUA_MININTEGER, LUA_MAXINTEGER);
    if (smem < 0 || smem > UINT32_MAX) glue_bad(L, "launch: smem = %lld bytes: it must be 0 to 2^32-1", (long long)smem);
    l->dynamic_smem = (uint32_t)smem;
}

/* args: arrays, mgpu.null, numbers, strings of bytes for structs, mgpu.TRACE */
static void read_args(lua_State *L, launch_state *s)
{
    lua_getfield(L, 2, "args");
    int t = lua_gettop(L);
    if (!lua_istable(L, t)) glue_bad(L, "launch.args must be a list, got %s", glue_typename(L, t));
    uint32_t n = (uint32_t)lua_rawlen(L, t);
    if (n > MAX_USER_ARGS)
        glue_bad(L, "launch: %u arguments, more than the %d a launch takes (the instrumentation's own come on top)", n,
                 MAX_USER_ARGS);
    for (uint32_t i = 0; i < n; i++) {
        lua_rawgeti(L, t, (lua_Integer)i + 1);
        mh_arg *a = &s->args[i];
        memset(a, 0, sizeof *a);
        l_array *arr = luaL_testudata(L, -1, ARRAY_MT);
        if (arr && arr->dev != s->d)
            glue_bad(L, "launch %s: argument %u is an array of another device", s->k->f->short_name, i + 1);
        if (arr && (!arr->addr || arr->gen != mh_device_generation(&s->d->dev)))
            glue_bad(L, "launch %s: argument %u is an array that was freed (or lost when a fault reset the device)",
                     s->k->f->short_name, i + 1);
        if (arr) {
            a->kind = MH_ARG_PTR;
            a->ptr = arr->addr;
            a->bytes = arr->count * mh_dtype_size(arr->dtype);
        } else if (lua_type(L, -1) == LUA_TLIGHTUSERDATA && lua_touserdata(L, -1) == &glue_null_sentinel) {
            a->kind = MH_ARG_PTR; /* mgpu.null: address 0, no buffer (nothing to save or restore) */
            a->null = 1;
        } else if (lua_touserdata(L, -1) == &glue_trace_sentinel && !s->inst) {
            a->kind = MH_ARG_PTR;
            s->trace_at = (int)i;
        } else if (glue_isint(L, -1)) { /* 2.0 and 2^20 too: an integer parameter takes them */
            a->kind = MH_ARG_INT;
            a->i = lua_tointeger(L, -1);
        } else if (lua_type(L, -1) == LUA_TNUMBER) {
            a->kind = MH_ARG_FLOAT;
            a->f = lua_tonumber(L, -1);
        } else if (luaL_testudata(L, -1, TMAP_MT)) { /* a tensor map: its bytes (the args table keeps the map) */
            const l_array *over = NULL;
            a->kind = MH_ARG_BYTES;
            a->data = glue_test_tensor_map(L, -1, &over);
            a->bytes = MH_TMAP_BYTES;
            if (over && (!over->addr || over->gen != mh_device_generation(&s->d->dev)))
                glue_bad(L, "launch %s: argument %u is a tensor map over an array that was freed (or lost when a "
                         "fault reset the device)", s->k->f->short_name, i + 1);
        } else if (lua_type(L, -1) == LUA_TSTRING) { /* a struct by value: its bytes (the args table keeps them) */
            size_t len;
            a->kind = MH_ARG_BYTES;
            a->data = lua_tolstring(L, -1, &len);
            a->bytes = len;
        } else {
            glue_bad(L, "launch %s: argument %u is a %s (arrays, mgpu.null, numbers, tensor maps, strings of bytes for structs%s)", s->k->f->short_name,
                     i + 1, glue_typename(L, -1),
                     s->inst ? "; the trace buffer of an instrumented kernel is passed by the harness" : " or mgpu.TRACE");
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    s->nargs = s->user_args = n;
    uint32_t user_params = s->k->f->nparams - (s->inst ? MH_INSTRUMENT_PARAMS : 0);
    if (n != user_params) glue_bad(L, "kernel %s takes %u arguments, %u were given", s->k->f->short_name, user_params, n);
}

/* The trace object, its spec and names: from profile for a kernel writing its own trace, from
 * the markers for an instrumented one (whose three parameters the harness appends). */
static void prepare_trace(lua_State *L, launch_state *s)
{
    lua_getfield(L, 2, "profile");
    int p = lua_gettop(L), has_profile = lua_istable(L, p);
    if (!lua_isnil(L, p) && !has_profile) glue_bad(L, "launch.profile must be a table, got %s", glue_typename(L, p));
    if (!s->inst && (s->trace_at >= 0) != has_profile)
        glue_bad(L, "%s", "launch: profile={...} and mgpu.TRACE in args go together");
    if (s->trace_at < 0 && !s->inst) return;
    l_trace *tr = glue_new_object(L, sizeof *tr, TRACE_MT, 0);
    s->tr = tr;
    s->trace_idx = lua_gettop(L);
    tr->clock_ghz = s->d->dev.facts.clock_ghz;
    tr->virtual_time = s->d->dev.facts.virtual_time;
    if (!s->inst) {
        glue_read_profile(L, p, s->desc.grid, s->desc.block, tr);
        return;
    }
    memset(&tr->spec, 0, sizeof tr->spec);
    for (int i = 0; i < 3; i++) {
        tr->spec.grid[i] = s->desc.grid[i];
        tr->spec.block[i] = s->desc.block[i];
    }
    tr->spec.scope = s->m->scope;
    /* the instrumented code traces a last, partial warp or warpgroup too; said only where a block
     * has one, so a whole block's meta is Mosaic's (no "partial") */
    tr->spec.partial = (uint64_t)s->desc.block[0] * s->desc.block[1] * s->desc.block[2] % (uint64_t)tr->spec.scope != 0;
    tr->spec.entries = 3 + 2 * 128;
    if (has_profile) {
        static const char *const keys[] = {"entries", "retry", "reset", "restore", NULL};
        glue_check_keys(L, p, "profile", keys);
        tr->spec.entries = (uint64_t)glue_opt_integer(L, p, "profile", "entries", (lua_Integer)tr->spec.entries, 0,
                                                      INT64_MAX);
        s->retry = glue_opt_boolean(L, p, "profile", "retry", 1);
        s->restore = glue_opt_boolean(L, p, "profile", "restore", 1);
        lua_getfield(L, p, "reset"); /* called before the retry: inputs the first attempt changed */
        if (!lua_isnil(L, -1) && !lua_isfunction(L, -1)) glue_bad(L, "%s", "launch: profile.reset must be a function");
        if (lua_isnil(L, -1)) lua_pop(L, 1);
        else s->reset_idx = lua_gettop(L);
    }
    /* aligned records need an even entries per trace (every event's address 8-aligned) */
    tr->spec.entries = mh_instrumented_entries(&s->m->r, tr->spec.entries);
    mh_error e;
    mh_error_clear(&e);
    if (mh_spec_validate(&tr->spec, &e) || glue_names_copy(&tr->names, &s->m->r.names, &e)) glue_raise(L, &e);
    s->trace_at = (int)s->nargs;
    memset(&s->args[s->nargs], 0, MH_INSTRUMENT_PARAMS * sizeof *s->args);
    s->args[s->nargs].kind = MH_ARG_PTR;     /* __mgpu_trace */
    s->args[s->nargs + 1].kind = MH_ARG_INT; /* __mgpu_entries */
    s->args[s->nargs + 2].kind = MH_ARG_PTR; /* __mgpu_calib */
    s->nargs += MH_INSTRUMENT_PARAMS;
    tr->calib = calloc(tr->spec.num_traces ? tr->spec.num_traces : 1, MH_CALIB_WORDS * 4);
    if (!tr->calib) glue_fail(L, MH_E_NO_MEMORY, "%s", "out of memory for the calibration words");
}

/* Before a launch that may run again (an instrumented kernel's retry): a copy of every array the
 * kernel may write through (launch/writes.c; all of them when that cannot be told), so that the
 * retry sees exactly the inputs the first attempt saw. */
static void save_inputs(lua_State *L, launch_state *s)
{
    uint64_t written = mh_kernel_written_params(&s->m->m, s->k->f);
    for (uint32_t i = 0; i < s->user_args; i++) {
        const mh_arg *a = &s->args[i];
        if (a->kind != MH_ARG_PTR || (int)i == s->trace_at || !a->bytes) continue;
        if (written != MH_WRITES_UNKNOWN && !(i < 64 && (written >> i & 1))) continue;
        int dup = 0; /* the same array passed twice is saved once */
        for (uint32_t k = 0; k < s->nsaved; k++) dup |= s->saved[k].addr == a->ptr;
        if (dup) continue;
        void *host = lua_newuserdatauv(L, a->bytes, 0);
        mh_error e;
        mh_error_clear(&e);
        if (mh_device_read(&s->d->dev, a->ptr, host, a->bytes, &e)) glue_raise(L, &e);
        s->saved[s->nsaved].arg = i;
        s->saved[s->nsaved].addr = a->ptr;
        s->saved[s->nsaved].bytes = a->bytes;
        s->saved[s->nsaved++].host = host;
        s->saved_bytes += a->bytes;
    }
}

/* Puts the saved arrays back; lists them in the attempt at the top of the stack (restored =
 * {argument numbers}, restored_bytes =). */
static int restore_inputs(lua_State *L, launch_state *s, mh_error *e)
{
    lua_createtable(L, (int)s->nsaved, 0);
    for (uint32_t k = 0; k < s->nsaved; k++) {
        if (mh_device_write(&s->d->dev, s->saved[k].addr, s->saved[k].host, s->saved[k].bytes, e)) return -1;
        lua_pushinteger(L, (lua_Integer)s->saved[k].arg + 1);
        lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    lua_setfield(L, -2, "restored");
    glue_set_int(L, -1, "restored_bytes", (lua_Integer)s->saved_bytes);
    return 0;
}

/* Gives back the device buffers the attempt took, unless a fault reset the device (they are gone). */
static void release(launch_state *s)
{
    mh_error e;
    for (int i = 0; i < 2; i++) {
        if (s->owned[i] && mh_device_generation(&s->d->dev) == s->gen) mh_device_free(&s->d->dev, s->owned[i], &e);
        s->owned[i] = 0;
    }
}

/* A zeroed device buffer for argument i, owned by the attempt (slot). */
static int take_buffer(launch_state *s, int slot, uint32_t i, uint64_t bytes, mh_error *e)
{
    if (mh_device_alloc(&s->d->dev, bytes, &s->args[i].ptr, e)) return -1;
    s->owned[slot] = s->args[i].ptr;
    s->args[i].bytes = bytes;
    return mh_device_memset(&s->d->dev, s->args[i].ptr, 0, bytes, e);
}

/* One launch: the trace's buffers taken, the arguments packed, the kernel run, the trace read
 * back and the buffers given back; *need: the entries the fullest trace needed. */
static int attempt(launch_state *s, mh_launch_stats *st, uint64_t *need, mh_error *e)
{
    l_trace *tr = s->tr;
    s->gen = mh_device_generation(&s->d->dev);
    int rc = 0;
    if (tr) {
        free(tr->words);
        tr->words = calloc(tr->spec.words ? tr->spec.words : 1, 4);
        if (!tr->words) return mh_fail(e, MH_E_NO_MEMORY, "out of memory for the trace buffer");
        /* aligned records: the trace buffer (the dump's words) begins trace_shift bytes into an
         * 8-aligned allocation, so that each event lands 8-aligned */
        uint32_t shift = s->inst ? s->m->r.trace_shift : 0;
        rc = take_buffer(s, 0, (uint32_t)s->trace_at, tr->spec.bytes + shift, e);
        if (!rc) {
            s->args[s->trace_at].ptr += shift;
            s->args[s->trace_at].bytes -= shift;
        }
        if (!rc && s->inst) {
            s->args[s->trace_at + 1].i = (int64_t)tr->spec.entries;
            rc = take_buffer(s, 1, (uint32_t)s->trace_at + 2, tr->spec.num_traces * MH_CALIB_WORDS * 4, e);
        }
    }
    uint64_t packed[MH_LAUNCH_MAX_PARAMS];
    const void *where[MH_LAUNCH_MAX_PARAMS];
    if (!rc) rc = mh_args_pack(s->k->f, s->args, s->nargs, packed, where, e);
    if (!rc) {
        s->desc.params = where;
        s->desc.nparams = s->nargs;
        s->desc.flows = tr != NULL; /* emu: the waits' flows for the trace's timeline */
        rc = mh_device_launch(&s->d->dev, s->m->bm, &s->m->m, s->k->f, &s->desc, st, e);
        if (tr) { /* the trace keeps this attempt's flows */
            free(tr->flows);
            tr->flows = st->flows;
            tr->nflows = st->nflows;
            st->flows = NULL;
            st->nflows = 0;
        }
        if (rc && e->code == MH_E_INTERRUPTED) mh_stop_clear(); /* this error is the Ctrl-C: not raised twice */
    }
    if (!rc && tr)
        rc = mh_device_read(&s->d->dev, s->owned[0] + (s->inst ? s->m->r.trace_shift : 0), tr->words, tr->spec.bytes, e);
    if (!rc && tr && s->inst)
        rc = mh_device_read(&s->d->dev, s->owned[1], tr->calib, tr->spec.num_traces * MH_CALIB_WORDS * 4, e);
    release(s);
    if (!rc && tr) *need = glue_entries_needed(tr->words, &tr->spec);
    return rc;
}

/* ---- what an emu launch tells besides its time: printf output, counters ---------- */

/* The lines of a source file (or of the PTX text), for run.stats' rows. */
typedef struct {
    const char *text;
    size_t *starts;      /* offset of each line */
    size_t n;
} src_lines;

static void lines_of(src_lines *s, const char *text)
{
    s->text = text;
    s->n = 0;
    s->starts = NULL;
    if (!text) return;
    size_t cap = 0;
    for (const char *p = text;;) {
        if (s->n == cap) {
            cap = cap ? cap * 2 : 256;
            size_t *ns = realloc(s->starts, cap * sizeof *ns);
            if (!ns) break;
            s->starts = ns;
        }
        s->starts[s->n++] = (size_t)(p - text);
        const char *nl = strchr(p, '\n');
        if (!nl) break;
        p = nl + 1;
    }
}

/* a source file's text (not a data file's: up to 64 MB), or NULL */
static char *read_small_file(const char *path) { return mh_read_file(path, 64u << 20, NULL, NULL); }

/* A source file as the PTX names it, else a file of its base name beside the PTX (nvcc writes
 * absolute paths: a module that moved with its sources still finds them). */
static char *read_beside(const char *path, const char *module)
{
    char *t = read_small_file(path);
    if (t) return t;
    const char *base = strrchr(path, '/'), *dir = strrchr(module, '/');
    if (!dir) return NULL;
    base = base ? base + 1 : path;
    size_t n = (size_t)(dir - module) + 1 + strlen(base) + 1;
    char *p = malloc(n);
    if (!p) return NULL;
    snprintf(p, n, "%.*s/%s", (int)(dir - module), module, base);
    t = read_small_file(p);
    free(p);
    return t;
}

/* pushes line `line` (1-based) of s, without its end of line, or nil */
static void push_line(lua_State *L, const src_lines *s, uint32_t line)
{
    if (!s->text || line == 0 || line > s->n) {
        lua_pushnil(L);
        return;
    }
    const char *b = s->text + s->starts[line - 1], *e = strchr(b, '\n');
    size_t len = e ? (size_t)(e - b) : strlen(b);
    if (len && b[len - 1] == '\r') len--;
    lua_pushlstring(L, b, len);
}

/* Stall reasons (emu's smsp__pcsamp_warps_issue_stalled_* counters) are kept apart from the
 * other metrics: a line's `stalls` and the kernel's run.stats.stalls, warp-cycles by reason. */
static int is_stall(const char *name) { return !strncmp(name, "smsp__pcsamp_warps_issue_stalled_", 33); }

static void push_stalls(lua_State *L, const char *const *names, uint32_t n, const uint64_t *v)
{
    lua_createtable(L, 0, 4);
    for (uint32_t k = 0; k < n; k++)
        if (v[k] && is_stall(names[k])) glue_set_int(L, -1, names[k], (lua_Integer)v[k]);
}

/* run.stats = {total = {metric = value, ...}, stalls = {reason = warp-cycles}, lines = {{file=, line=, source=, metric = value, ...}, ...},
 * files = {...}, module =}: the counters emu counted (zeros left out of the rows) */
static void push_counts(lua_State *L, const launch_state *s, const mh_launch_counts *c)
{
    lua_createtable(L, 0, 6);
    push_stalls(L, c->names, c->nmetrics, c->total); /* the kernel's stall reasons (issue 34) */
    lua_setfield(L, -2, "stalls");
    lua_createtable(L, 0, (int)(c->nmetrics + c->nratios));
    for (uint32_t k = 0; k < c->nmetrics; k++)
        if (!is_stall(c->names[k])) glue_set_int(L, -1, c->names[k], (lua_Integer)c->total[k]);
    for (uint32_t k = 0; k < c->nratios; k++)
        if (c->total[c->ratios[k].den])
            glue_set_num(L, -1, c->ratios[k].name, (double)c->total[c->ratios[k].num] / (double)c->total[c->ratios[k].den]);
    lua_setfield(L, -2, "total");
    lua_createtable(L, (int)c->nfiles, 0);
    for (uint32_t i = 0; i < c->nfiles; i++) {
        lua_pushstring(L, c->files[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "files");
    glue_set_str(L, -1, "module", c->module);
    /* the sources: each .file once, the PTX (rows without .loc) from its file or the module's text */
    src_lines *src = calloc(c->nfiles + 1, sizeof *src);
    char **owned = calloc(c->nfiles + 1, sizeof *owned);
    for (uint32_t i = 0; src && owned && i <= c->nfiles; i++) {
        int used = 0;
        for (uint32_t r = 0; r < c->nrows && !used; r++) used = c->rows[r].file == (i == c->nfiles ? -1 : (int32_t)i);
        if (!used) continue;
        if (i < c->nfiles) owned[i] = read_beside(c->files[i], c->module);
        else if (!s->m->instrumented) owned[i] = NULL; /* the PTX text itself (its lines are the file's) */
        else owned[i] = read_small_file(c->module);
        lines_of(&src[i], owned[i] ? owned[i] : i == c->nfiles && !s->m->instrumented ? s->m->m.text : NULL);
    }
    lua_createtable(L, (int)c->nrows, 0);
    for (uint32_t r = 0; r < c->nrows; r++) {
        const mh_count_row *row = &c->rows[r];
        lua_createtable(L, 0, 8);
        glue_set_str(L, -1, "file", row->file >= 0 ? c->files[row->file] : c->module);
        glue_set_int(L, -1, "line", row->line);
        lua_pushboolean(L, row->file < 0);
        lua_setfield(L, -2, "ptx"); /* a line of the PTX (the module has no .loc for it) */
        if (src && owned) {
            push_line(L, &src[row->file >= 0 ? (uint32_t)row->file : c->nfiles], row->line);
            lua_setfield(L, -2, "source");
        }
        for (uint32_t k = 0; k < c->nmetrics; k++)
            if (row->v[k] && !is_stall(c->names[k])) glue_set_int(L, -1, c->names[k], (lua_Integer)row->v[k]);
        push_stalls(L, c->names, c->nmetrics, row->v);
        lua_setfield(L, -2, "stalls");
        lua_rawseti(L, -2, (lua_Integer)r + 1);
    }
    lua_setfield(L, -2, "lines");
    for (uint32_t i = 0; src && owned && i <= c->nfiles; i++) {
        free(owned[i]);
        free(src[i].starts);
    }
    free(src);
    free(owned);
}

/* run.printf = {lines}: what the kernel printed (emu), also written to stdout unless printf = false;
 * run.warnings = {lines} the same way (each also on stderr) */
static void push_output(lua_State *L, const char *out, size_t n)
{
    lua_newtable(L);
    lua_Integer k = 0;
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(out + i, '\n', n - i);
        size_t len = nl ? (size_t)(nl - (out + i)) : n - i;
        lua_pushlstring(L, out + i, len);
        lua_rawseti(L, -2, ++k);
        i += len + 1;
    }
}

/* After an attempt: a kernel's printf output goes to stdout once the launch is final
 * (a retried attempt's is dropped: the retry prints it again). */
static void emit_output(const launch_state *s, mh_launch_stats *st)
{
    if (st->output_len && s->echo_printf) {
        fwrite(st->output, 1, st->output_len, stdout);
        fflush(stdout);
    }
    for (size_t i = 0; i < st->warnings_len;) { /* emu's warnings: each line on stderr */
        const char *w = st->warnings + i, *nl = memchr(w, '\n', st->warnings_len - i);
        size_t len = nl ? (size_t)(nl - w) : st->warnings_len - i;
        fprintf(stderr, "mgpu-harness: warning: %.*s\n", (int)len, w);
        i += len + 1;
    }
}

static void drop_extras(mh_launch_stats *st)
{
    free(st->output);
    st->output = NULL;
    st->output_len = 0;
    free(st->warnings);
    st->warnings = NULL;
    free(st->flows);
    st->flows = NULL;
    st->warnings_len = 0;
    if (st->counts) st->counts->release(st->counts);
    st->counts = NULL;
}

/* run = {time_ns=, cycles=, warp_insns=, thread_insns= (exact counts: emu), backend=, trace=,
 * attempts=, entries=, printf = {lines}, warnings = {lines} and blocks_per_sm (emu), stats (launch.stats: emu)} */
static void push_result(lua_State *L, const launch_state *s, const mh_launch_stats *st)
{
    lua_createtable(L, 0, 8);
    if (st->time_ns >= 0) glue_set_num(L, -1, "time_ns", st->time_ns);
    if (st->counted) {
        glue_set_int(L, -1, "cycles", (lua_Integer)st->cycles);
        glue_set_int(L, -1, "warp_insns", (lua_Integer)st->warp_insns);
        glue_set_int(L, -1, "thread_insns", (lua_Integer)st->thread_insns);
    }
    glue_set_str(L, -1, "backend", s->d->dev.facts.backend);
    if (st->counted) { /* emu: what the kernel printed, and how many blocks an SM held */
        push_output(L, st->output ? st->output : "", st->output_len);
        lua_setfield(L, -2, "printf");
        push_output(L, st->warnings ? st->warnings : "", st->warnings_len);
        lua_setfield(L, -2, "warnings");
        if (st->blocks_per_sm) glue_set_int(L, -1, "blocks_per_sm", st->blocks_per_sm);
    }
    if (st->counts) {
        push_counts(L, s, st->counts);
        lua_setfield(L, -2, "stats");
    }
    if (s->tr) {
        lua_pushvalue(L, s->trace_idx);
        lua_setfield(L, -2, "trace");
        lua_pushvalue(L, s->attempts_idx);
        lua_setfield(L, -2, "attempts");
        glue_set_int(L, -1, "entries", (lua_Integer)s->tr->spec.entries);
    }
}

/* k:launch{grid=, block=, cluster=, smem=, time=, timeout_s=, stats=, printf=, repeat=, cooperative=, args={...},
 * profile={...}} -> run
 * stats = true (emu): run.stats, exact counters per source line; printf = false: what the kernel
 * printed is in run.printf only, not also on stdout; cooperative = true: a cooperative launch (the
 * whole grid resident at once, cg::this_grid().sync() works; a grid that cannot be is bad_argument
 * naming blocks per SM x SMs, on both backends, before the launch).
 * Kernels that write their own trace take mgpu.TRACE in args and profile = {scope=, entries=,
 * names=}.  Kernels instrumented from markers take only their own args; profile = {entries=,
 * retry=, reset=, restore=} (defaults 259, true, none, true): when a trace needed more entries
 * than it had, the launch runs again once with exactly that many (the kernel counts past the
 * capacity), after the arrays the kernel may write were put back as they were before the first
 * attempt (restore = false: not).  Every attempt is listed in run.attempts (entries, required,
 * restored = {argument numbers}, restored_bytes). */
int glue_kernel_launch(lua_State *L)
{
    static const char *const keys[] = {"grid", "block", "cluster", "smem", "time", "timeout_s", "repeat", "args",
                                       "profile", "stats",
                                       "printf", "cooperative", NULL};
    launch_state s;
    memset(&s, 0, sizeof s);
    s.k = luaL_checkudata(L, 1, KERNEL_MT);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    glue_check_keys(L, 2, "launch", keys);
    s.m = glue_kernel_module(L, 1);             /* index 3 */
    lua_getiuservalue(L, 3, 1);                 /* device, index 4 */
    s.d = glue_check_device(L, 4);
    s.inst = glue_kernel_instrumented(s.m, s.k->f);
    s.trace_at = -1;
    s.retry = s.restore = 1;
    read_shape(L, &s);
    read_args(L, &s);
    prepare_trace(L, &s);
    mh_error e;
    mh_error_clear(&e);
    /* a shape the device would refuse never reaches it (emu checks the same limits) */
    if (mh_launch_shape_check(s.k->f, s.desc.grid, s.desc.block, s.desc.dynamic_smem, s.d->dev.facts.max_smem, &e))
        return glue_raise(L, &e);
    if (s.tr) {
        lua_newtable(L);
        s.attempts_idx = lua_gettop(L);
    }
    if (s.inst && s.retry && s.restore) save_inputs(L, &s);
    mh_launch_stats st;
    for (int n = 1;; n++) {
        uint64_t need = 0;
        memset(&st, 0, sizeof st);
        if (s.tr) lua_createtable(L, 0, 4); /* this attempt */
        int rc = n > 1 && s.nsaved ? restore_inputs(L, &s, &e) : 0;
        if (!rc) rc = attempt(&s, &st, &need, &e);
        if (s.tr) {
            glue_set_int(L, -1, "entries", (lua_Integer)s.tr->spec.entries);
            if (!rc) glue_set_int(L, -1, "required", (lua_Integer)need);
            lua_rawseti(L, s.attempts_idx, n);
        }
        if (rc) { /* what the kernel printed before it faulted comes out, as on a GPU */
            emit_output(&s, &st);
            drop_extras(&st);
            return glue_raise(L, &e);
        }
        if (!(s.inst && s.retry && n == 1 && need > s.tr->spec.entries)) break;
        drop_extras(&st); /* the retry prints and counts again */
        /* the kernel counted past the capacity: exactly what it needed (even, for aligned records) */
        s.tr->spec.entries = mh_instrumented_entries(&s.m->r, need);
        if (mh_spec_validate(&s.tr->spec, &e)) return glue_raise(L, &e);
        if (s.reset_idx) {
            lua_pushvalue(L, s.reset_idx);
            lua_call(L, 0, 0);
        }
    }
    emit_output(&s, &st);
    if (s.desc.stats && !st.counts) {
        drop_extras(&st);
        return glue_bad(L, "launch.stats: the %s backend does not count (emu counts exactly; on a GPU, Nsight Compute "
                        "does)", s.d->dev.facts.backend);
    }
    push_result(L, &s, &st);
    drop_extras(&st);
    return 1;
}
