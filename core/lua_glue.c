/* lua_glue.c - the Lua bindings of the core (module `mgpu.core`) and the
 * embedded runner.  Errors reach Lua as tables {code=, message=, ...} with a
 * metatable whose __tostring gives the message. */
#include "lua_glue.h"
#include "dump_file.h"
#include "spec.h"
#include "version.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
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

static int raise_bad_argument(lua_State *L, const char *fmt, const char *what)
{
    mh_error e;
    mh_error_clear(&e);
    mh_fail(&e, MH_E_BAD_ARGUMENT, fmt, what);
    return raise_error(L, &e);
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
        lua_seti(L, -2, ++n);
    }
}

/* core.dump{buffer=, meta=, out=, compat="mosaic", clock_ghz=, summary=}
 * -> {traces=, events=, ..., unit=, summary={rows}, warnings={...}} */
static int l_dump(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    mh_dump_request req;
    memset(&req, 0, sizeof req);
    req.buffer_path = opt_string(L, 1, "buffer", NULL);
    req.meta_path = opt_string(L, 1, "meta", NULL);
    req.out_path = opt_string(L, 1, "out", NULL);
    if (!req.buffer_path) raise_bad_argument(L, "%s is required (path of the trace buffer)", "buffer");
    if (!req.meta_path) raise_bad_argument(L, "%s is required (path of the meta JSON)", "meta");
    if (!req.out_path) raise_bad_argument(L, "%s is required (path of the trace JSON to write)", "out");
    const char *compat = opt_string(L, 1, "compat", NULL);
    if (compat && strcmp(compat, "mosaic") != 0) raise_bad_argument(L, "compat must be \"mosaic\", not \"%s\"", compat);
    req.mode = compat ? MH_DUMP_MOSAIC : MH_DUMP_DEFAULT;
    req.clock_ghz = opt_number(L, 1, "clock_ghz", 0);
    if (req.clock_ghz < 0) raise_bad_argument(L, "%s must be positive", "clock_ghz");
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
    if (req.want_summary) {
        push_summary(L, &r.summary);
        lua_setfield(L, 2, "summary");
    }
    mh_dump_result_free(&r);
    lua_settop(L, 2);
    return 1;
}

static const luaL_Reg core_funcs[] = {
    {"version", l_version},
    {"spec", l_spec},
    {"dump", l_dump},
    {"error", l_error},
    {NULL, NULL},
};

int luaopen_mgpu_core(lua_State *L);
int luaopen_mgpu_core(lua_State *L)
{
    luaL_newlib(L, core_funcs);
    lua_pushliteral(L, MH_VERSION);
    lua_setfield(L, -2, "VERSION");
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
    if (luaL_loadfile(L, path) != LUA_OK) return lua_error(L);
    for (int i = 0; i < argc; i++) lua_pushstring(L, argv[i]);
    if (lua_pcall(L, argc, 0, h) != LUA_OK) return lua_error(L);
    return 0;
}

static int exit_status_for_code(const char *code)
{
    for (int c = 0; c < MH_E_COUNT_; c++)
        if (strcmp(code, mh_code_name((mh_code)c)) == 0) return mh_code_exit_status((mh_code)c);
    return 1;
}

int mh_lua_run_script(const char *path, int argc, char **argv)
{
    lua_State *L = luaL_newstate();
    if (!L) {
        fputs("mgpu-harness: cannot create a Lua state (out of memory)\n", stderr);
        return 1;
    }
    lua_pushcfunction(L, run_protected);
    lua_pushlightuserdata(L, (void *)path);
    lua_pushinteger(L, argc);
    lua_pushlightuserdata(L, argv);
    int status = 0;
    if (lua_pcall(L, 3, 0, 0) != LUA_OK) {
        if (lua_type(L, -1) == LUA_TTABLE) {
            lua_getfield(L, -1, "code");
            const char *code = lua_tostring(L, -1);
            lua_getfield(L, -2, "message");
            const char *msg = lua_tostring(L, -1);
            fprintf(stderr, "mgpu-harness: %s [%s]\n", msg ? msg : "error", code ? code : "?");
            status = code ? exit_status_for_code(code) : 1;
        } else {
            const char *msg = lua_tostring(L, -1);
            fprintf(stderr, "mgpu-harness: %s\n", msg ? msg : "(error object is not a string)");
            status = 1;
        }
    }
    lua_close(L);
    return status;
}
