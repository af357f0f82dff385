/* glue_trace.c - the trace side of `mgpu.core`: core.spec (the sizes of a
 * trace buffer), core.dump (a buffer and meta on disk to a Chrome trace),
 * trace objects (a launch's trace: dump, save, summary, words, ptr), and core.trace_scan (the
 * report's pass over a dumped trace). */
#include "lua/glue.h"
#include "trace/counters.h"
#include "trace/dump_file.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* core.spec{grid=, block=, scope="warp"|"warpgroup", entries=} -> sizes */
static int l_spec(lua_State *L)
{
    mh_spec s;
    mh_error e;
    glue_check_table(L, 1, "spec", "{grid=, block=, scope=, entries=}");
    static const char *const keys[] = {"grid", "block", "scope", "entries", "partial", NULL};
    glue_check_keys(L, 1, "spec", keys);
    memset(&s, 0, sizeof s);
    glue_opt_dims(L, 1, NULL, "grid", s.grid);
    glue_opt_dims(L, 1, NULL, "block", s.block);
    const char *scope = glue_opt_string(L, 1, NULL, "scope", "warpgroup");
    if (mh_scope_parse(scope, &s.scope)) glue_bad(L, "scope must be \"warp\" or \"warpgroup\", not \"%s\"", scope);
    double entries = glue_opt_number(L, 1, NULL, "entries", -1);
    if (!(entries >= 0) || entries != (double)(uint64_t)entries)
        glue_bad(L, "%s must be a non-negative integer", "entries");
    s.entries = (uint64_t)entries;
    s.partial = glue_opt_boolean(L, 1, "spec", "partial", 0); /* a last, partial warp/warpgroup has a trace */
    mh_error_clear(&e);
    if (mh_spec_validate(&s, &e)) return glue_raise(L, &e);
    lua_createtable(L, 0, 6);
    glue_set_int(L, -1, "num_blocks", (lua_Integer)s.num_blocks);
    glue_set_int(L, -1, "traces_per_block", (lua_Integer)s.traces_per_block);
    glue_set_int(L, -1, "num_traces", (lua_Integer)s.num_traces);
    glue_set_int(L, -1, "words", (lua_Integer)s.words);
    glue_set_int(L, -1, "bytes", (lua_Integer)s.bytes);
    glue_set_str(L, -1, "scope", mh_scope_name(s.scope));
    return 1;
}

/* t.clock_ghz: an SM clock a GPU could have (0.1 to 10 GHz; nil: def) */
static double opt_clock_ghz(lua_State *L, int t, const char *what, double def)
{
    double v = glue_opt_number(L, t, what, "clock_ghz", def);
    if (v != def && !mh_clock_ghz_ok(v))
        glue_bad(L, "%s.clock_ghz = %g: an SM clock is %g to %g GHz", what, v, MH_CLOCK_GHZ_MIN, MH_CLOCK_GHZ_MAX);
    return v;
}

/* Warnings of a dump go into the Lua table at idx. */
typedef struct {
    lua_State *L;
    int idx;
} warnings_to;

static void collect_warning(void *ctx, const char *msg)
{
    warnings_to *w = ctx;
    lua_pushstring(w->L, msg);
    lua_rawseti(w->L, w->idx, (lua_Integer)lua_rawlen(w->L, w->idx) + 1);
}

static void push_summary(lua_State *L, const mh_summary *s)
{
    lua_newtable(L);
    lua_Integer n = 0;
    for (size_t i = 0; i < s->names->n; i++) {
        mh_region_row r = mh_summary_row(s, i);
        if (!r.count && !r.truncated) continue;
        lua_createtable(L, 0, 9);
        glue_set_str(L, -1, "name", r.name);
        glue_set_int(L, -1, "count", (lua_Integer)r.count);
        glue_set_num(L, -1, "total", r.total);
        glue_set_num(L, -1, "mean", r.mean);
        glue_set_int(L, -1, "min", (lua_Integer)r.min);
        glue_set_int(L, -1, "median", (lua_Integer)r.median);
        glue_set_int(L, -1, "p99", (lua_Integer)r.p99);
        glue_set_int(L, -1, "max", (lua_Integer)r.max);
        glue_set_int(L, -1, "truncated", (lua_Integer)r.truncated);
        if (s->timeline.traces) glue_set_num(L, -1, "concurrency", r.concurrency);
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
    glue_set_int(L, -1, "span", (lua_Integer)tl.span);
    glue_set_int(L, -1, "traces", (lua_Integer)tl.traces);
    glue_set_int(L, -1, "sms", (lua_Integer)tl.sms);
    glue_set_int(L, -1, "sm_done_min", (lua_Integer)tl.sm_done_min);
    glue_set_int(L, -1, "sm_done_median", (lua_Integer)tl.sm_done_median);
    glue_set_int(L, -1, "sm_done_max", (lua_Integer)tl.sm_done_max);
    if (tl.sm_out_of_range) glue_set_int(L, -1, "sm_out_of_range", (lua_Integer)tl.sm_out_of_range);
    lua_setfield(L, result, "timeline");
}

/* core.dump{buffer=, meta=, out=, compat="mosaic", clock_ghz=, counters=, summary=}
 * -> {traces=, events=, ..., unit=, summary={rows}, timeline={...}, warnings={...}} */
static int l_dump(lua_State *L)
{
    glue_check_table(L, 1, "dump", "{buffer=, meta=, out=, ...}");
    static const char *const keys[] = {"buffer", "meta", "out", "calib", "compat", "clock_ghz", "counters", "summary", NULL};
    glue_check_keys(L, 1, "dump", keys);
    mh_dump_request req;
    memset(&req, 0, sizeof req);
    req.buffer_path = glue_opt_string(L, 1, NULL, "buffer", NULL);
    req.meta_path = glue_opt_string(L, 1, NULL, "meta", NULL);
    req.out_path = glue_opt_string(L, 1, NULL, "out", NULL);
    req.calib_path = glue_opt_string(L, 1, NULL, "calib", NULL);
    if (!req.buffer_path) glue_bad(L, "%s is required (path of the trace buffer)", "buffer");
    if (!req.meta_path) glue_bad(L, "%s is required (path of the meta JSON)", "meta");
    if (!req.out_path) glue_bad(L, "%s is required (path of the trace JSON to write)", "out");
    const char *compat = glue_opt_string(L, 1, NULL, "compat", NULL);
    if (compat && strcmp(compat, "mosaic") != 0) glue_bad(L, "compat must be \"mosaic\", not \"%s\"", compat);
    req.mode = compat ? MH_DUMP_MOSAIC : MH_DUMP_DEFAULT;
    req.clock_ghz = opt_clock_ghz(L, 1, "dump", 0);
    req.counter_bins = glue_opt_counter_bins(L, 1, NULL);
    req.want_summary = glue_opt_boolean(L, 1, "dump", "summary", 0);

    lua_settop(L, 1);
    lua_newtable(L); /* result, index 2 */
    lua_newtable(L); /* warnings, index 3 */
    warnings_to w = {L, 3};
    req.warn = collect_warning;
    req.warn_ctx = &w;
    mh_dump_result r;
    mh_error e;
    if (mh_dump_files(&req, &r, &e)) return glue_raise(L, &e);
    lua_setfield(L, 2, "warnings");
    const mh_dump_stats *st = &r.stats;
    glue_set_int(L, 2, "traces", (lua_Integer)st->traces);
    glue_set_int(L, 2, "traces_with_events", (lua_Integer)st->traces_with_events);
    glue_set_int(L, 2, "events", (lua_Integer)st->events);
    glue_set_int(L, 2, "truncated_traces", (lua_Integer)st->truncated_traces);
    glue_set_int(L, 2, "bytes", (lua_Integer)st->bytes);
    glue_set_int(L, 2, "overhead_cycles", (lua_Integer)st->overhead_cycles);
    glue_set_num(L, 2, "clock_ghz", r.clock_ghz);
    glue_set_str(L, 2, "unit", r.clock_ghz > 0 ? "ns" : "cycles");
    if (r.stats.clock_ghz_measured > 0) {
        glue_set_num(L, 2, "clock_ghz_measured", r.stats.clock_ghz_measured);
        glue_set_int(L, 2, "timer_step_ns", r.stats.timer_step_ns);
        glue_set_num(L, 2, "clock_bound", r.stats.clock_bound);
        glue_set_str(L, 2, "clock_source", r.stats.clock_measured_used ? "measured" : "given");
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

/* A trace that can be used: not collected or closed (its words still there). */
static l_trace *check_trace(lua_State *L, int i)
{
    l_trace *t = luaL_checkudata(L, i, TRACE_MT);
    if (!t->words) glue_bad(L, "%s", "the trace is closed");
    return t;
}

static int l_trace_gc(lua_State *L)
{
    l_trace *t = luaL_checkudata(L, 1, TRACE_MT); /* raw: gc of a closed trace is fine */
    free(t->words);
    free(t->calib);
    free(t->flows);
    t->words = NULL;
    t->calib = NULL;
    t->flows = NULL;
    mh_names_free(&t->names);
    return 0;
}

/* trace:dump(path, {compat=, clock_ghz=, counters=}) -> {events=, ..., clock_ghz= (the rate used),
 * clock_source= "measured"|"given", clock_ghz_measured=, timer_step_ns=, clock_bound=,
 * virtual_time= true (a trace from emu), summary={...}, timeline={...} (default mode)} */
static int l_trace_dump(lua_State *L)
{
    l_trace *t = check_trace(L, 1);
    const char *path = luaL_checkstring(L, 2);
    mh_dump_opts opts = {.mode = MH_DUMP_DEFAULT, .clock_ghz = t->clock_ghz, .calib = t->calib, .flows = t->flows,
                         .nflows = t->nflows};
    if (!lua_isnoneornil(L, 3)) {
        glue_check_table(L, 3, "trace:dump's options", "{compat=, clock_ghz=, counters=}");
        static const char *const keys[] = {"compat", "clock_ghz", "counters", NULL}, *const compat[] = {"mosaic", NULL};
        glue_check_keys(L, 3, "dump", keys);
        if (glue_opt_choice(L, 3, "dump", "compat", -1, compat) == 0) opts.mode = MH_DUMP_MOSAIC;
        opts.clock_ghz = opt_clock_ghz(L, 3, "dump", opts.clock_ghz);
        opts.counter_bins = glue_opt_counter_bins(L, 3, "dump");
    }
    mh_summary sum;
    mh_tracebuf b;
    mh_out o;
    mh_dump_stats st;
    mh_error e;
    mh_error_clear(&e);
    lua_settop(L, 3);
    lua_newtable(L); /* warnings, index 4 */
    warnings_to w = {L, 4};
    opts.warn = collect_warning;
    opts.warn_ctx = &w;
    mh_tracebuf_memory(&b, t->words, t->spec.words);
    if (mh_tracebuf_bind(&b, &t->spec, &e) || mh_summary_init(&sum, &t->names, &e)) return glue_raise(L, &e);
    opts.summary = &sum;
    if (mh_out_open(&o, path, &e)) { mh_summary_free(&sum); return glue_raise(L, &e); }
    if (mh_dump(&t->spec, &t->names, &b, &opts, &o, &st, &e) || mh_out_commit(&o, &e)) {
        mh_out_abort(&o);
        mh_summary_free(&sum);
        return glue_raise(L, &e);
    }
    lua_createtable(L, 0, 4);
    lua_pushvalue(L, 4);
    lua_setfield(L, -2, "warnings");
    if (st.full_traces) glue_set_int(L, -1, "full_traces", (lua_Integer)st.full_traces);
    glue_set_int(L, -1, "events", (lua_Integer)st.events);
    glue_set_int(L, -1, "traces_with_events", (lua_Integer)st.traces_with_events);
    glue_set_int(L, -1, "truncated_traces", (lua_Integer)st.truncated_traces);
    glue_set_str(L, -1, "unit", sum.unit);
    if (t->virtual_time) {
        lua_pushboolean(L, 1);
        lua_setfield(L, -2, "virtual_time"); /* emu's model time, not a GPU's */
    }
    if (st.clock_ghz_measured > 0) {
        glue_set_num(L, -1, "clock_ghz_measured", st.clock_ghz_measured);
        glue_set_int(L, -1, "timer_step_ns", st.timer_step_ns);
        glue_set_num(L, -1, "clock_bound", st.clock_bound);
    }
    /* the rate the events were converted with, and where it came from */
    int measured = st.clock_ghz_measured > 0 && st.clock_measured_used;
    if (opts.mode == MH_DUMP_DEFAULT && (measured || opts.clock_ghz > 0)) {
        glue_set_num(L, -1, "clock_ghz", measured ? st.clock_ghz_measured : opts.clock_ghz);
        glue_set_str(L, -1, "clock_source", measured ? "measured" : "given");
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
    l_trace *t = check_trace(L, 1);
    const char *prefix = luaL_checkstring(L, 2);
    size_t plen = strlen(prefix);
    if (!plen || prefix[plen - 1] == '/') /* "" wrote the hidden files .bin and .meta.json (issue 36) */
        return glue_bad(L, "trace:save(prefix): the prefix names the files without their extensions (\"run1\" writes "
                        "run1.bin and run1.meta.json), not \"%s\"", prefix);
    mh_error e;
    mh_error_clear(&e);
    lua_createtable(L, 0, 3);
    lua_pushfstring(L, "%s.bin", prefix);
    if (save_words(lua_tostring(L, -1), t->words, t->spec.words, &e)) return glue_raise(L, &e);
    lua_setfield(L, -2, "buffer");
    json_t *names = json_object(), *roles = json_object(), *meta = json_object();
    for (size_t i = 0; i < t->names.n; i++)
        json_object_set_new(t->names.v[i].role ? roles : names, t->names.v[i].name,
                            json_integer((json_int_t)t->names.v[i].id));
    json_object_set_new(meta, "grid", json_pack("[III]", (json_int_t)t->spec.grid[0], (json_int_t)t->spec.grid[1],
                                                 (json_int_t)t->spec.grid[2]));
    json_object_set_new(meta, "block", json_pack("[III]", (json_int_t)t->spec.block[0], (json_int_t)t->spec.block[1],
                                                  (json_int_t)t->spec.block[2]));
    json_object_set_new(meta, "entries_per_warpgroup", json_integer((json_int_t)t->spec.entries));
    json_object_set_new(meta, "trace_scope", json_string(mh_scope_name(t->spec.scope)));
    if (t->spec.partial) json_object_set_new(meta, "partial", json_true()); /* an instrumented kernel's */
    json_object_set_new(meta, "names", names);
    if (json_object_size(roles)) json_object_set_new(meta, "roles", roles); /* the lanes' roles, when named */
    else json_decref(roles);
    if (t->clock_ghz > 0) json_object_set_new(meta, "clock_ghz", json_real(t->clock_ghz));
    char *text = json_dumps(meta, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(meta);
    if (!text) return glue_fail(L, MH_E_NO_MEMORY, "%s", "out of memory");
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
    if (rc) return glue_raise(L, &e);
    lua_setfield(L, -2, "meta");
    if (t->calib) {
        lua_pushfstring(L, "%s.calib.bin", prefix);
        if (save_words(lua_tostring(L, -1), t->calib, t->spec.num_traces * MH_CALIB_WORDS, &e)) return glue_raise(L, &e);
        lua_setfield(L, -2, "calib");
    }
    return 1;
}

/* trace:ptr() -> lightuserdata: the trace words (num_traces x entries uint32),
 * without a copy, for LuaJIT's FFI; valid while the trace object lives */
static int l_trace_ptr(lua_State *L)
{
    l_trace *t = check_trace(L, 1);
    lua_pushlightuserdata(L, t->words);
    lua_pushinteger(L, (lua_Integer)t->spec.words);
    return 2;
}

/* trace:summary() -> region rows, timeline, and the whole result (unit, clock_ghz, clock_source,
 * events), as trace:dump returns them, writing nothing */
static int l_trace_summary(lua_State *L)
{
    lua_settop(L, 1);
    lua_pushliteral(L, "/dev/null");
    lua_pushcfunction(L, l_trace_dump);
    lua_insert(L, 1);
    lua_call(L, 2, 1);
    lua_getfield(L, -1, "summary");
    lua_getfield(L, -2, "timeline");
    lua_pushvalue(L, -3); /* the dump's result: unit, clock_ghz and clock_source say what the numbers are */
    return 3;
}

/* trace:words() -> the raw buffer as a table of integers */
static int l_trace_words(lua_State *L)
{
    l_trace *t = check_trace(L, 1);
    lua_createtable(L, (int)t->spec.words, 0);
    for (uint64_t i = 0; i < t->spec.words; i++) {
        lua_pushinteger(L, t->words[i]);
        lua_seti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

/* profile = {scope=, entries=, names={"a", "b"} or {a=0, b=1}} -> spec + names in t */
void glue_read_profile(lua_State *L, int idx, const uint32_t grid[3], const uint32_t block[3], l_trace *t)
{
    static const char *const keys[] = {"scope", "entries", "names", NULL}, *const scopes[] = {"warp", "warpgroup", NULL};
    glue_check_keys(L, idx, "profile", keys);
    mh_error e;
    mh_error_clear(&e);
    memset(&t->spec, 0, sizeof t->spec);
    for (int i = 0; i < 3; i++) {
        t->spec.grid[i] = grid[i];
        t->spec.block[i] = block[i];
    }
    t->spec.scope = glue_opt_choice(L, idx, "profile", "scope", 1, scopes) == 0 ? MH_SCOPE_WARP : MH_SCOPE_WARPGROUP;
    lua_getfield(L, idx, "entries");
    if (!glue_isint(L, -1)) glue_bad(L, "profile.entries must be an integer, got %s", glue_typename(L, -1));
    lua_pop(L, 1);
    t->spec.entries = (uint64_t)glue_opt_integer(L, idx, "profile", "entries", 0, 0, INT64_MAX);
    if (mh_spec_validate(&t->spec, &e)) glue_raise(L, &e);
    mh_names_init(&t->names);
    lua_getfield(L, idx, "names");
    if (!lua_istable(L, -1)) glue_fail(L, MH_E_BAD_ARGUMENT, "%s", "profile.names must list the region names");
    lua_Integer n = (lua_Integer)luaL_len(L, -1);
    if (n > 0) {
        for (lua_Integer i = 1; i <= n; i++) {
            lua_geti(L, -1, i);
            if (mh_names_add(&t->names, luaL_checkstring(L, -1), (uint64_t)(i - 1), &e)) glue_raise(L, &e);
            lua_pop(L, 1);
        }
    } else {
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            if (mh_names_add(&t->names, luaL_checkstring(L, -2), (uint64_t)luaL_checkinteger(L, -1), &e)) glue_raise(L, &e);
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
    if (mh_names_finish(&t->names, &e)) glue_raise(L, &e);
}

/* Copies a name table. */
int glue_names_copy(mh_names *dst, const mh_names *src, mh_error *e)
{
    mh_names_init(dst);
    for (size_t i = 0; i < src->n; i++)
        if ((src->v[i].role ? mh_names_add_role : mh_names_add)(dst, src->v[i].name, src->v[i].id, e)) return -1;
    return mh_names_finish(dst, e);
}

/* Largest header count + 3 over the traces: the entries the kernel needed. */
uint64_t glue_entries_needed(const uint32_t *w, const mh_spec *s)
{
    uint64_t need = 0;
    for (uint64_t t = 0; t < s->num_traces; t++) {
        uint64_t n = (uint64_t)w[t * s->entries + 2] + MH_HEADER_WORDS;
        if (n > need) need = n;
    }
    return need;
}

/* ---- core.trace_scan: the report's streaming pass in C (issue 24) -------------------------------
 * lua/mgpu/report_trace.lua's pass over a default dump (one event per line), done here: an 8.65
 * M-event trace (507 MB) took 25 s of Lua patterns.  The same arithmetic, in the same order, on
 * the same doubles, so the report is the same to the byte: per lane its runs merged below the time
 * quantum q (and further past cap runs), per region name count, total, min, max, truncated and
 * the quantized durations, "in flight" coverage per slice Q of the span; what lands in Lua is
 * what the Lua pass builds (report_trace.finish takes it from there).  It lives in the glue
 * because its result is Lua tables built as it goes; the parsing is a few lines per event. */
typedef struct { int64_t *k; double *v; uint8_t *used; size_t cap, n; } num_map;

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL; x ^= x >> 33;
    return x;
}

/* The slot of key k (inserted with value 0 when absent); NULL when out of memory. */
static double *map_at(num_map *m, int64_t k)
{
    if (2 * (m->n + 1) > m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 16;
        num_map g = {calloc(nc, sizeof *g.k), calloc(nc, sizeof *g.v), calloc(nc, 1), nc, 0};
        if (!g.k || !g.v || !g.used) { free(g.k); free(g.v); free(g.used); return NULL; }
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->used[i]) continue;
            size_t j = mix64((uint64_t)m->k[i]) & (nc - 1);
            while (g.used[j]) j = (j + 1) & (nc - 1);
            g.used[j] = 1, g.k[j] = m->k[i], g.v[j] = m->v[i];
        }
        g.n = m->n;
        free(m->k); free(m->v); free(m->used);
        *m = g;
    }
    size_t j = mix64((uint64_t)k) & (m->cap - 1);
    while (m->used[j] && m->k[j] != k) j = (j + 1) & (m->cap - 1);
    if (!m->used[j]) m->used[j] = 1, m->k[j] = k, m->v[j] = 0, m->n++;
    return &m->v[j];
}

static void map_free(num_map *m) { free(m->k); free(m->v); free(m->used); memset(m, 0, sizeof *m); }

typedef struct { uint32_t name; double v; } mix_part;
typedef struct { double t0, t1, busy; uint32_t dep, nm, cnt, nmix; mix_part *mix; } scan_run;

typedef struct {
    int64_t pid, tid;
    double first, last, q;
    uint64_t regions;
    uint32_t sn, depth, cap, n, runs_cap;
    uint32_t *sname; double *st; uint32_t st_cap;
    scan_run *run;
    int64_t last_run[8]; /* by depth (1 .. max_depth): the run a region there may merge into, -1 none */
} scan_lane;

typedef struct {
    char *name; size_t len;
    double count, total, min, max, truncated;
    num_map hist, cov, diff;
} scan_region;

typedef struct {
    double q0, Q, origin;
    uint32_t cap, max_depth;
    scan_lane *lanes; size_t nlanes, lanes_cap;
    num_map lane_of; /* (pid << 32 | tid) -> lane index */
    scan_region *regions; size_t nregions, regions_cap;
    double t_first, t_last; uint64_t events;
    char **meta; size_t nmeta, meta_cap; /* "p PID NAME" and "t PID TID NAME" lines */
    char err[300];
    int oom;
    size_t last_region; /* the name looked up last (events of one name come in runs) */
} scan_state;

static uint32_t region_id(scan_state *S, const char *s, size_t len)
{
    size_t r = S->last_region;
    if (r < S->nregions && S->regions[r].len == len && !memcmp(S->regions[r].name, s, len)) return (uint32_t)r;
    for (size_t i = 0; i < S->nregions; i++)
        if (S->regions[i].len == len && !memcmp(S->regions[i].name, s, len)) return (uint32_t)(S->last_region = i);
    if (S->nregions == S->regions_cap) {
        size_t nc = S->regions_cap ? S->regions_cap * 2 : 16;
        scan_region *nv = realloc(S->regions, nc * sizeof *nv);
        if (!nv) { S->oom = 1; return UINT32_MAX; }
        S->regions = nv, S->regions_cap = nc;
    }
    scan_region *g = &S->regions[S->nregions];
    memset(g, 0, sizeof *g);
    g->name = malloc(len + 1);
    if (!g->name) { S->oom = 1; return UINT32_MAX; }
    memcpy(g->name, s, len);
    g->name[len] = 0, g->len = len;
    g->min = HUGE_VAL, g->max = -HUGE_VAL;
    S->last_region = S->nregions;
    return (uint32_t)S->nregions++;
}

/* Lua's merge_runs: the lane's runs merged again with quantum q. */
static int merge_runs(scan_state *S, scan_lane *l, double q)
{
    int64_t last[8];
    for (int i = 0; i < 8; i++) last[i] = -1;
    uint32_t k = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        scan_run *r = &l->run[i];
        uint32_t d = r->dep;
        int64_t li = last[d];
        scan_run *p = li >= 0 ? &l->run[li] : NULL;
        if (p && r->t0 - p->t1 <= q && (p->nm == r->nm || r->t1 - r->t0 < q || p->t1 - p->t0 < q)) {
            if (p->nm != r->nm || p->nmix || r->nmix) {
                /* p's mix (its own name's busy when it had none) plus r's (or r's name's busy) */
                mix_part add[64];
                uint32_t na = 0;
                if (r->nmix) { for (uint32_t j = 0; j < r->nmix && na < 64; j++) add[na++] = r->mix[j]; }
                else add[na++] = (mix_part){r->nm, r->busy};
                if (!p->nmix) {
                    p->mix = malloc(4 * sizeof *p->mix);
                    if (!p->mix) return S->oom = 1, -1;
                    p->mix[0] = (mix_part){p->nm, p->busy}, p->nmix = 1;
                }
                for (uint32_t j = 0; j < na; j++) {
                    uint32_t x = 0;
                    while (x < p->nmix && p->mix[x].name != add[j].name) x++;
                    if (x == p->nmix) {
                        if ((p->nmix & (p->nmix - 1)) == 0 && p->nmix >= 4) {
                            mix_part *nm = realloc(p->mix, 2 * p->nmix * sizeof *nm);
                            if (!nm) return S->oom = 1, -1;
                            p->mix = nm;
                        }
                        p->mix[p->nmix++] = (mix_part){add[j].name, 0};
                    }
                    p->mix[x].v += add[j].v;
                }
            }
            if (r->t1 > p->t1) p->t1 = r->t1;
            p->cnt += r->cnt;
            p->busy += r->busy;
            free(r->mix);
            r->mix = NULL, r->nmix = 0;
        } else {
            if (k != i) { l->run[k] = *r; r->mix = NULL, r->nmix = 0; }
            last[d] = k++;
        }
    }
    l->n = k;
    l->q = q;
    memcpy(l->last_run, last, sizeof last);
    return 0;
}

static scan_lane *lane_of(scan_state *S, int64_t pid, int64_t tid)
{
    double *slot = map_at(&S->lane_of, (int64_t)((uint64_t)pid << 32 | (uint64_t)(uint32_t)tid));
    if (!slot) { S->oom = 1; return NULL; }
    if (*slot > 0) return &S->lanes[(size_t)*slot - 1];
    if (S->nlanes == S->lanes_cap) {
        size_t nc = S->lanes_cap ? S->lanes_cap * 2 : 256;
        scan_lane *nv = realloc(S->lanes, nc * sizeof *nv);
        if (!nv) { S->oom = 1; return NULL; }
        S->lanes = nv, S->lanes_cap = nc;
    }
    scan_lane *l = &S->lanes[S->nlanes++];
    memset(l, 0, sizeof *l);
    l->pid = pid, l->tid = tid, l->first = HUGE_VAL, l->last = -HUGE_VAL, l->q = S->q0, l->cap = S->cap;
    for (int i = 0; i < 8; i++) l->last_run[i] = -1;
    *slot = (double)S->nlanes;
    return l;
}

static int scan_fail(scan_state *S, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int scan_fail(scan_state *S, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(S->err, sizeof S->err, fmt, ap);
    va_end(ap);
    return -1;
}

static int add_meta(scan_state *S, const char *line, size_t len)
{
    if (S->nmeta == S->meta_cap) {
        size_t nc = S->meta_cap ? S->meta_cap * 2 : 256;
        char **nv = realloc(S->meta, nc * sizeof *nv);
        if (!nv) return S->oom = 1, -1;
        S->meta = nv, S->meta_cap = nc;
    }
    if (!(S->meta[S->nmeta] = malloc(len + 1))) return S->oom = 1, -1;
    memcpy(S->meta[S->nmeta], line, len);
    S->meta[S->nmeta++][len] = 0;
    return 0;
}

/* One line of the dump (without its '\n'). */
static int scan_line(scan_state *S, const char *s, const char *end)
{
    static const char P[] = "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":";
    static const char T[] = "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":";
    static const char N[] = "{\"name\":\"";
    size_t len = (size_t)(end - s);
    if (len < sizeof N - 1 || memcmp(s, N, sizeof N - 1)) return 0;
    if (len > sizeof P && !memcmp(s, P, sizeof P - 1)) return add_meta(S, s, len);
    if (len > sizeof T && !memcmp(s, T, sizeof T - 1)) return add_meta(S, s, len);
    const char *name = s + sizeof N - 1, *q = memchr(name, '"', (size_t)(end - name));
    if (!q || end - q < 16 || memcmp(q, "\",\"ph\":\"", 8) || (q[8] != 'B' && q[8] != 'E') || memcmp(q + 9, "\",\"ts\":", 7))
        return 0;
    char ph = q[8];
    const char *ts = q + 16, *comma = memchr(ts, ',', (size_t)(end - ts));
    if (!comma) return 0;
    const char *rest = comma + 1, *close = memchr(rest, '}', (size_t)(end - rest));
    if (!close) return 0;
    size_t nlen = (size_t)(q - name);
    char buf[64];
    size_t tl = (size_t)(comma - ts);
    char *te = buf;
    double t = 0;
    /* DIGITS[.DIGITS] (what the dump writes): an exact integer over an exact power of ten is
     * correctly rounded, so it is strtod's double; anything else goes through strtod */
    uint64_t mant = 0;
    int frac = -1, digits = 0, plain = tl > 0 && tl < 19;
    for (size_t i = 0; plain && i < tl; i++) {
        if (ts[i] >= '0' && ts[i] <= '9') mant = mant * 10 + (uint64_t)(ts[i] - '0'), digits++, frac += frac >= 0;
        else if (ts[i] == '.' && frac < 0 && i + 1 < tl) frac = 0;
        else plain = 0;
    }
    static const double TEN[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18};
    buf[0] = 0;
    if (plain && digits) t = (double)mant / TEN[frac < 0 ? 0 : frac];
    else if (tl < sizeof buf) memcpy(buf, ts, tl), buf[tl] = 0, t = strtod(buf, &te);
    if (tl == 0 || tl >= sizeof buf || *te)
        return scan_fail(S, "event %llu (%c %.*s): ts %.*s is not a number", (unsigned long long)S->events + 1, ph,
                         (int)(nlen < 100 ? nlen : 100), name, (int)(tl < 60 ? tl : 60), ts);
    /* "pid":P,"tid":T (the default dump's order) */
    long long pid = 0, tid = 0; /* (not sscanf: glibc's measures the whole buffer first) */
    const char *px = rest;
    int ok = close - px > 7 && !memcmp(px, "\"pid\":", 6) && (px += 6, *px >= '0' && *px <= '9');
    while (ok && px < close && *px >= '0' && *px <= '9') pid = pid * 10 + (*px++ - '0');
    ok = ok && close - px > 7 && !memcmp(px, ",\"tid\":", 7) && (px += 7, *px >= '0' && *px <= '9');
    while (ok && px < close && *px >= '0' && *px <= '9') tid = tid * 10 + (*px++ - '0');
    if (!ok) return scan_fail(S, "an event without pid and tid: %.80s", rest);
    int trunc = 0;
    for (const char *y = px; y + 11 <= close; y++)
        if (!memcmp(y, "\"truncated\"", 11)) { trunc = 1; break; }
    scan_lane *l = lane_of(S, pid, tid);
    if (!l) return -1;
    t = t * 1000;
    S->events++;
    if (t < l->first) l->first = t;
    if (t > l->last) l->last = t;
    if (t < S->t_first) S->t_first = t;
    if (t > S->t_last) S->t_last = t;
    uint32_t id = region_id(S, name, nlen);
    if (id == UINT32_MAX) return -1;
    if (ph == 'B') {
        if (l->sn == l->st_cap) {
            uint32_t nc = l->st_cap ? l->st_cap * 2 : 8;
            uint32_t *a = realloc(l->sname, nc * sizeof *a);
            if (!a) return S->oom = 1, -1;
            l->sname = a;
            double *b = realloc(l->st, nc * sizeof *b);
            if (!b) return S->oom = 1, -1;
            l->st = b, l->st_cap = nc;
        }
        l->sname[l->sn] = id, l->st[l->sn] = t;
        l->sn++;
        if (l->sn > l->depth) l->depth = l->sn;
        return 0;
    }
    uint32_t sn = l->sn;
    if (sn == 0)
        return scan_fail(S, "event %llu: an end of %.100s on pid %lld tid %lld with no region open",
                         (unsigned long long)S->events, S->regions[id].name, pid, tid);
    if (l->sname[sn - 1] != id)
        return scan_fail(S, "event %llu: an end of %.100s on pid %lld tid %lld while %.100s is open: regions must nest",
                         (unsigned long long)S->events, S->regions[id].name, pid, tid, S->regions[l->sname[sn - 1]].name);
    double t0 = l->st[sn - 1];
    l->sn = sn - 1;
    double d = t - t0;
    d = floor(d * 1000 + 0.5) / 1000;
    if (d < 0) d = 0;
    scan_region *g = &S->regions[id];
    if (trunc) g->truncated += 1;
    else {
        g->count += 1;
        g->total += d;
        if (d < g->min) g->min = d;
        if (d > g->max) g->max = d;
        double key;
        if (d < 1024) key = floor(d + 0.5);
        else {
            double e = 1;
            while (d >= 2048 * e) e *= 2;
            key = floor(d / e + 0.5) * e;
        }
        double *h = map_at(&g->hist, (int64_t)key);
        if (!h) return S->oom = 1, -1;
        *h += 1;
    }
    double Q = S->Q, origin = S->origin;
    double i0 = floor((t0 - origin) / Q), i1 = floor((t - origin) / Q);
    double *c;
    if (i0 == i1) {
        if (!(c = map_at(&g->cov, (int64_t)i0))) return S->oom = 1, -1;
        *c += d;
    } else {
        if (!(c = map_at(&g->cov, (int64_t)i0))) return S->oom = 1, -1;
        *c += origin + (i0 + 1) * Q - t0;
        if (!(c = map_at(&g->cov, (int64_t)i1))) return S->oom = 1, -1;
        *c += t - (origin + i1 * Q);
        if (i1 > i0 + 1) {
            if (!(c = map_at(&g->diff, (int64_t)i0 + 1))) return S->oom = 1, -1;
            *c += 1;
            if (!(c = map_at(&g->diff, (int64_t)i1))) return S->oom = 1, -1;
            *c -= 1;
        }
    }
    /* the lane's runs */
    l->regions++;
    uint32_t dep = sn > S->max_depth ? S->max_depth : sn;
    double ql = l->q;
    int64_t li = l->last_run[dep];
    scan_run *p = li >= 0 ? &l->run[li] : NULL;
    if (p && t0 - p->t1 <= ql && (p->nm == id || d < ql || p->t1 - p->t0 < ql)) {
        if (p->nm != id || p->nmix) {
            if (!p->nmix) {
                p->mix = malloc(4 * sizeof *p->mix);
                if (!p->mix) return S->oom = 1, -1;
                p->mix[0] = (mix_part){p->nm, p->busy}, p->nmix = 1;
            }
            uint32_t x = 0;
            while (x < p->nmix && p->mix[x].name != id) x++;
            if (x == p->nmix) {
                if ((p->nmix & (p->nmix - 1)) == 0 && p->nmix >= 4) {
                    mix_part *nm = realloc(p->mix, 2 * p->nmix * sizeof *nm);
                    if (!nm) return S->oom = 1, -1;
                    p->mix = nm;
                }
                p->mix[p->nmix++] = (mix_part){id, 0};
            }
            p->mix[x].v += d;
        }
        if (t > p->t1) p->t1 = t;
        p->cnt++;
        p->busy += d;
        return 0;
    }
    if (l->n == l->runs_cap) {
        uint32_t nc = l->runs_cap ? l->runs_cap * 2 : 8;
        scan_run *nv = realloc(l->run, nc * sizeof *nv);
        if (!nv) return S->oom = 1, -1;
        l->run = nv, l->runs_cap = nc;
    }
    l->run[l->n] = (scan_run){t0, t, d, dep, id, 1, 0, NULL};
    l->last_run[dep] = l->n;
    l->n++;
    if (l->n > l->cap) {
        double nq = l->q * 2 > S->q0 ? l->q * 2 : S->q0;
        for (;;) {
            if (merge_runs(S, l, nq)) return -1;
            if (l->n <= l->cap * 0.75) break;
            nq = nq * 2;
        }
    }
    return 0;
}

static void scan_free(scan_state *S)
{
    for (size_t i = 0; i < S->nlanes; i++) {
        scan_lane *l = &S->lanes[i];
        for (uint32_t k = 0; k < l->n; k++) free(l->run[k].mix);
        free(l->run);
        free(l->sname);
        free(l->st);
    }
    free(S->lanes);
    map_free(&S->lane_of);
    for (size_t i = 0; i < S->nregions; i++) {
        free(S->regions[i].name);
        map_free(&S->regions[i].hist);
        map_free(&S->regions[i].cov);
        map_free(&S->regions[i].diff);
    }
    free(S->regions);
    for (size_t i = 0; i < S->nmeta; i++) free(S->meta[i]);
    free(S->meta);
}

/* Reads path line by line through scan_line; 0, or -1 with S->err (or S->oom) set. */
static int scan_file(scan_state *S, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return scan_fail(S, "cannot open");
    size_t cap = 1 << 22, have = 0;
    char *buf = malloc(cap + 1);
    if (!buf) { fclose(f); return S->oom = 1, -1; }
    int rc = 0;
    for (;;) {
        size_t got = fread(buf + have, 1, cap - have, f);
        have += got;
        int eof = got == 0;
        char *s = buf, *end = buf + have;
        for (;;) {
            char *nl = memchr(s, '\n', (size_t)(end - s));
            if (!nl) break;
            if ((rc = scan_line(S, s, nl))) break;
            s = nl + 1;
        }
        if (rc) break;
        if (eof) {
            if (s < end) rc = scan_line(S, s, end);
            break;
        }
        have = (size_t)(end - s);
        memmove(buf, s, have);
        if (have == cap) { /* a line longer than the buffer */
            char *nb = realloc(buf, 2 * cap + 1);
            if (!nb) { rc = -1, S->oom = 1; break; }
            buf = nb, cap *= 2;
        }
    }
    if (!rc && ferror(f)) rc = scan_fail(S, "read error");
    free(buf);
    fclose(f);
    return rc;
}

/* m as a Lua table of integer keys; integers: its values are counts (Lua integers, as the Lua
 * pass has them) */
static void push_map(lua_State *L, const num_map *m, int integers)
{
    lua_createtable(L, 0, (int)m->n);
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->used[i]) continue;
        lua_pushinteger(L, (lua_Integer)m->k[i]);
        if (integers) lua_pushinteger(L, (lua_Integer)m->v[i]);
        else lua_pushnumber(L, m->v[i]);
        lua_rawset(L, -3);
    }
}

/* The pass's result as report_trace.read builds it for finish (see there). */
static void push_scan(lua_State *L, const scan_state *S)
{
    lua_createtable(L, 0, 10);
    lua_pushnumber(L, S->t_first);
    lua_setfield(L, -2, "t_first");
    lua_pushnumber(L, S->t_last);
    lua_setfield(L, -2, "t_last");
    glue_set_int(L, -1, "events", (lua_Integer)S->events);
    /* lanes, in order of first event */
    lua_createtable(L, (int)S->nlanes, 0);
    for (size_t i = 0; i < S->nlanes; i++) {
        const scan_lane *l = &S->lanes[i];
        char key[48];
        snprintf(key, sizeof key, "%lld:%lld", (long long)l->pid, (long long)l->tid);
        lua_createtable(L, 0, 20);
        glue_set_int(L, -1, "pid", (lua_Integer)l->pid);
        glue_set_int(L, -1, "tid", (lua_Integer)l->tid);
        glue_set_str(L, -1, "key", key);
        glue_set_int(L, -1, "sn", (lua_Integer)l->sn);
        lua_pushnumber(L, l->first);
        lua_setfield(L, -2, "first");
        lua_pushnumber(L, l->last);
        lua_setfield(L, -2, "last");
        glue_set_int(L, -1, "regions", (lua_Integer)l->regions);
        glue_set_int(L, -1, "n", (lua_Integer)l->n);
        lua_pushnumber(L, l->q);
        lua_setfield(L, -2, "q");
        glue_set_int(L, -1, "cap", (lua_Integer)l->cap);
        glue_set_int(L, -1, "depth", (lua_Integer)l->depth);
        static const char *const cols[] = {"t0", "t1", "dep", "nm", "cnt", "busy", "mix"};
        for (int c = 0; c < 7; c++) {
            lua_createtable(L, (int)l->n, 0);
            for (uint32_t k = 0; k < l->n; k++) {
                const scan_run *r = &l->run[k];
                switch (c) {
                case 0: lua_pushnumber(L, r->t0); break;
                case 1: lua_pushnumber(L, r->t1); break;
                case 2: lua_pushinteger(L, r->dep); break;
                case 3: lua_pushstring(L, S->regions[r->nm].name); break;
                case 4: lua_pushinteger(L, r->cnt); break;
                case 5: lua_pushnumber(L, r->busy); break;
                default:
                    if (!r->nmix) continue;
                    lua_createtable(L, 0, (int)r->nmix);
                    for (uint32_t j = 0; j < r->nmix; j++) {
                        lua_pushnumber(L, r->mix[j].v);
                        lua_setfield(L, -2, S->regions[r->mix[j].name].name);
                    }
                }
                lua_rawseti(L, -2, (lua_Integer)k + 1);
            }
            lua_setfield(L, -2, cols[c]);
        }
        lua_createtable(L, 0, 0);
        lua_setfield(L, -2, "sname");
        lua_createtable(L, 0, 0);
        lua_setfield(L, -2, "st");
        lua_createtable(L, 0, 4);
        for (int d = 0; d < 8; d++)
            if (l->last_run[d] >= 0) {
                lua_pushinteger(L, l->last_run[d] + 1);
                lua_rawseti(L, -2, d);
            }
        lua_setfield(L, -2, "last_run");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "lane_list");
    /* names of the SMs and the lanes */
    lua_newtable(L); /* sm_names */
    lua_newtable(L); /* lane_names */
    for (size_t i = 0; i < S->nmeta; i++) {
        const char *m = S->meta[i], *a = strstr(m, ",\"args\":{\"name\":\"");
        if (!a) continue;
        const char *nm = a + 17, *e = strchr(nm, '"');
        if (!e) continue;
        long long pid, tid;
        if (sscanf(m, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%lld,\"tid\":%lld,", &pid, &tid) == 2) {
            lua_pushfstring(L, "%d:%d", (int)pid, (int)tid);
            lua_pushlstring(L, nm, (size_t)(e - nm));
            lua_rawset(L, -3);
        } else if (sscanf(m, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%lld,", &pid) == 1) {
            lua_pushinteger(L, (lua_Integer)pid);
            lua_pushlstring(L, nm, (size_t)(e - nm));
            lua_rawset(L, -4);
        }
    }
    lua_setfield(L, -3, "lane_names");
    lua_setfield(L, -2, "sm_names");
    /* regions by name, names in order, coverage */
    lua_newtable(L); /* regions */
    lua_createtable(L, (int)S->nregions, 0); /* names */
    lua_newtable(L); /* cov */
    lua_newtable(L); /* diff */
    for (size_t i = 0; i < S->nregions; i++) {
        const scan_region *g = &S->regions[i];
        lua_pushstring(L, g->name);
        lua_rawseti(L, -4, (lua_Integer)i + 1);
        lua_createtable(L, 0, 10);
        glue_set_str(L, -1, "name", g->name);
        glue_set_int(L, -1, "count", (lua_Integer)g->count);
        lua_pushnumber(L, g->total);
        lua_setfield(L, -2, "total");
        lua_pushnumber(L, g->min);
        lua_setfield(L, -2, "min");
        lua_pushnumber(L, g->max);
        lua_setfield(L, -2, "max");
        glue_set_int(L, -1, "truncated", (lua_Integer)g->truncated);
        push_map(L, &g->hist, 1);
        lua_setfield(L, -2, "hist");
        push_map(L, &g->cov, 0);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, "cov");
        lua_setfield(L, -4, g->name); /* cov[name] */
        push_map(L, &g->diff, 1);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, "diff");
        lua_setfield(L, -3, g->name); /* diff[name] */
        lua_setfield(L, -5, g->name); /* regions[name] */
    }
    lua_setfield(L, -5, "diff");
    lua_setfield(L, -4, "cov");
    lua_setfield(L, -3, "names");
    lua_setfield(L, -2, "regions");
}

/* core.trace_scan(path, {q0=, Q=, origin=, cap=, max_depth=}) -> the pass's tables (see
 * push_scan); a bad_trace naming the file for what the Lua pass refuses. */
static int l_trace_scan(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    glue_check_table(L, 2, "trace_scan", "{q0=, Q=, origin=, cap=, max_depth=}");
    static const char *const keys[] = {"q0", "Q", "origin", "cap", "max_depth", NULL};
    glue_check_keys(L, 2, "trace_scan", keys);
    scan_state S;
    memset(&S, 0, sizeof S);
    S.q0 = glue_opt_number(L, 2, "trace_scan", "q0", 1);
    S.Q = glue_opt_number(L, 2, "trace_scan", "Q", 1);
    S.origin = glue_opt_number(L, 2, "trace_scan", "origin", 0);
    S.cap = (uint32_t)glue_opt_number(L, 2, "trace_scan", "cap", 4);
    double md = glue_opt_number(L, 2, "trace_scan", "max_depth", 3);
    if (!(S.Q > 0) || !(S.q0 > 0) || S.cap < 1 || !(md >= 1 && md <= 7)) glue_bad(L, "trace_scan: bad options");
    S.max_depth = (uint32_t)md;
    S.t_first = HUGE_VAL, S.t_last = -HUGE_VAL;
    int rc = scan_file(&S, path);
    for (size_t i = 0; !rc && i < S.nlanes; i++)
        if (S.lanes[i].sn > 0)
            rc = scan_fail(&S, "pid %lld tid %lld: region %.100s never ends (a torn trace?)", (long long)S.lanes[i].pid,
                           (long long)S.lanes[i].tid, S.regions[S.lanes[i].sname[S.lanes[i].sn - 1]].name);
    if (rc) {
        char msg[400];
        int oom = S.oom;
        snprintf(msg, sizeof msg, "%s", S.err);
        scan_free(&S);
        if (oom) return glue_fail(L, MH_E_NO_MEMORY, "%s: out of memory reading the trace", path);
        return glue_fail(L, MH_E_BAD_TRACE, "%s: %s", path, msg);
    }
    push_scan(L, &S);
    scan_free(&S);
    return 1;
}

const luaL_Reg glue_trace_funcs[] = {{"spec", l_spec}, {"dump", l_dump}, {"trace_scan", l_trace_scan}, {NULL, NULL}};

void glue_open_trace(lua_State *L)
{
    static const luaL_Reg meta[] = {{"__gc", l_trace_gc}, {NULL, NULL}};
    static const luaL_Reg methods[] = {{"dump", l_trace_dump},   {"save", l_trace_save}, {"words", l_trace_words},
                                       {"ptr", l_trace_ptr},     {"summary", l_trace_summary}, {NULL, NULL}};
    glue_new_class(L, TRACE_MT, meta, methods);
}
