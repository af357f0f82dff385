/* glue_trace.c - the trace side of `mgpu.core`: core.spec (the sizes of a
 * trace buffer), core.dump (a buffer and meta on disk to a Chrome trace),
 * and trace objects (a launch's trace: dump, save, summary, words, ptr). */
#include "lua/glue.h"
#include "trace/counters.h"
#include "trace/dump_file.h"

#include <jansson.h>
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
    l_trace *t = check_trace(L, 1);
    const char *path = luaL_checkstring(L, 2);
    mh_dump_opts opts = {.mode = MH_DUMP_DEFAULT, .clock_ghz = t->clock_ghz, .calib = t->calib};
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
    mh_error e;
    mh_error_clear(&e);
    lua_createtable(L, 0, 3);
    lua_pushfstring(L, "%s.bin", prefix);
    if (save_words(lua_tostring(L, -1), t->words, t->spec.words, &e)) return glue_raise(L, &e);
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
    if (t->spec.partial) json_object_set_new(meta, "partial", json_true()); /* an instrumented kernel's */
    json_object_set_new(meta, "names", names);
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
    if (!lua_isinteger(L, -1)) glue_bad(L, "profile.entries must be an integer, got %s", glue_typename(L, -1));
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
        if (mh_names_add(dst, src->v[i].name, src->v[i].id, e)) return -1;
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

const luaL_Reg glue_trace_funcs[] = {{"spec", l_spec}, {"dump", l_dump}, {NULL, NULL}};

void glue_open_trace(lua_State *L)
{
    static const luaL_Reg meta[] = {{"__gc", l_trace_gc}, {NULL, NULL}};
    static const luaL_Reg methods[] = {{"dump", l_trace_dump},   {"save", l_trace_save}, {"words", l_trace_words},
                                       {"ptr", l_trace_ptr},     {"summary", l_trace_summary}, {NULL, NULL}};
    glue_new_class(L, TRACE_MT, meta, methods);
}
