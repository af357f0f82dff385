/* glue_exec.c - mgpu.exec: a CUDA program run on emu (core/exec/exec.h;
 * docs/cudart.md), from Lua.
 *   core.exec{prog=, args={...}, capture=, trace=, probes=, stats=, sms=}
 *     -> {status=, launches = {{kernel=, grid={x,y,z}, block={x,y,z}, smem=, cycles=, warp_insns=,
 *                               thread_insns=, error=}, ...}}
 * The launches come from the runtime stand-in's launch log, a file in $TMPDIR
 * removed afterwards. */
#define _DEFAULT_SOURCE /* mkstemp */
#include "lua/glue.h"
#include "exec/exec.h"
#include "instrument/instrument.h"
#include "lua/lua_glue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void push_dims(lua_State *L, const unsigned d[3])
{
    lua_createtable(L, 3, 0);
    for (int i = 0; i < 3; i++) {
        lua_pushinteger(L, d[i]);
        lua_rawseti(L, -2, i + 1);
    }
}

/* The log's lines as a list of tables. */
static void push_launches(lua_State *L, FILE *f)
{
    lua_newtable(L);
    char line[4096];
    lua_Integer n = 0;
    while (f && fgets(line, sizeof line, f)) {
        char name[2048];
        unsigned g[3], b[3];
        unsigned long long smem, cycles, wi, ti;
        int status;
        if (sscanf(line, "%2047[^\t]\t%u %u %u\t%u %u %u\t%llu\t%llu\t%llu\t%llu\t%d", name, &g[0], &g[1], &g[2], &b[0],
                   &b[1], &b[2], &smem, &cycles, &wi, &ti, &status) != 12)
            continue;
        lua_createtable(L, 0, 8);
        lua_pushstring(L, name);
        lua_setfield(L, -2, "kernel");
        push_dims(L, g);
        lua_setfield(L, -2, "grid");
        push_dims(L, b);
        lua_setfield(L, -2, "block");
        lua_pushinteger(L, (lua_Integer)smem);
        lua_setfield(L, -2, "smem");
        lua_pushinteger(L, (lua_Integer)cycles);
        lua_setfield(L, -2, "cycles");
        lua_pushinteger(L, (lua_Integer)wi);
        lua_setfield(L, -2, "warp_insns");
        lua_pushinteger(L, (lua_Integer)ti);
        lua_setfield(L, -2, "thread_insns");
        lua_pushinteger(L, status);
        lua_setfield(L, -2, "error");
        lua_rawseti(L, -2, ++n);
    }
}

/* options.model_params {name = number, ...} as exec's "NAME=NUMBER,..." (a string Lua holds, left on
 * the stack until l_exec returns), or NULL */
static const char *model_params_list(lua_State *L)
{
    lua_getfield(L, 1, "model_params");
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return NULL;
    }
    glue_check_table(L, -1, "mgpu.exec: model_params", "{name = number, ...} (e.g. {l2_bytes_per_clk = 6000})");
    char list[4096];
    size_t len = 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        if (lua_type(L, -2) != LUA_TSTRING)
            glue_bad(L, "mgpu.exec: model_params has a key of type %s (parameters are named)", luaL_typename(L, -2));
        if (lua_type(L, -1) != LUA_TNUMBER)
            glue_bad(L, "mgpu.exec: model_params.%s must be a number, not %s", lua_tostring(L, -2), luaL_typename(L, -1));
        size_t nlen;
        const char *name = lua_tolstring(L, -2, &nlen);
        if (strpbrk(name, ",= ") || strlen(name) != nlen) /* (it would be read as other entries of the list, or end early) */
            glue_bad(L, "mgpu.exec: no model parameter '%s%s'", name, strlen(name) != nlen ? "\\0..." : "");
        int k = snprintf(list + len, sizeof list - len, "%s%s=%.17g", len ? "," : "", lua_tostring(L, -2),
                         (double)lua_tonumber(L, -1));
        if (k < 0 || (size_t)k >= sizeof list - len) glue_bad(L, "%s", "mgpu.exec: model_params: too many");
        len += (size_t)k;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    lua_pushstring(L, list);
    return lua_tostring(L, -1);
}

static int l_exec(lua_State *L)
{
    glue_check_table(L, 1, "mgpu.exec's options", "{prog=, args=, capture=, trace=, probes=, stats=, sms=, model=, model_params=}");
    static const char *const keys[] = {"prog", "args", "capture", "trace", "probes", "stats", "sms", "model", "model_params", NULL};
    glue_check_keys(L, 1, "mgpu.exec", keys);
    mh_exec_opts o = {0};
    const char *prog = glue_opt_string(L, 1, "mgpu.exec:", "prog", NULL);
    if (!prog || !*prog) return glue_bad(L, "%s", "mgpu.exec: prog (the program to run) is required");
    o.capture_dir = glue_opt_string(L, 1, "mgpu.exec:", "capture", NULL);
    o.trace_dir = glue_opt_string(L, 1, "mgpu.exec:", "trace", NULL);
    o.stats = glue_opt_boolean(L, 1, "mgpu.exec:", "stats", 0);
    const char *probes_path = glue_opt_string(L, 1, "mgpu.exec:", "probes", NULL);
    if (probes_path && !o.trace_dir) return glue_bad(L, "%s", "mgpu.exec: probes goes with trace (a folder for the traces)");
    o.sms = (unsigned)glue_opt_integer(L, 1, "mgpu.exec:", "sms", 0, 0, 1024);
    o.model = glue_opt_string(L, 1, "mgpu.exec:", "model", NULL);
    o.model_params = model_params_list(L);
    lua_getfield(L, 1, "args");
    size_t nargs = lua_isnil(L, -1) ? 0 : (lua_istable(L, -1) ? lua_rawlen(L, -1) : (size_t)-1);
    if (nargs == (size_t)-1) return glue_bad(L, "mgpu.exec: args must be a list of strings, got %s", glue_typename(L, -1));
    if (nargs > 4096) return glue_bad(L, "mgpu.exec: %zu arguments (at most 4096)", nargs);
    const char **argv = lua_newuserdatauv(L, (nargs + 2) * sizeof *argv, 0); /* freed with the userdata */
    argv[0] = prog;
    for (size_t i = 0; i < nargs; i++) {
        lua_rawgeti(L, -2, (lua_Integer)i + 1);
        if (lua_type(L, -1) != LUA_TSTRING)
            return glue_bad(L, "mgpu.exec: args[%zu] is a %s, not a string", i + 1, glue_typename(L, -1));
        argv[i + 1] = lua_tostring(L, -1); /* the args table, on the stack, keeps it */
        lua_pop(L, 1);
    }
    argv[nargs + 1] = NULL;
    char log[256];
    const char *tmp = getenv("TMPDIR");
    snprintf(log, sizeof log, "%s/mgpu-exec-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(log);
    if (fd < 0) return glue_bad(L, "mgpu.exec: cannot create the launch log in %s", tmp && *tmp ? tmp : "/tmp");
    close(fd);
    o.launches_file = log;
    o.argv = (char *const *)argv;
    mh_error e;
    mh_error_clear(&e);
    if (probes_path) { /* the probe file's reader (instrument --probes'); its text kept by a userdata */
        const mh_probe *p = NULL;
        unsigned np = 0;
        mh_lua_probes *lp = mh_lua_probes_read(probes_path, &p, &np, &e);
        if (!lp) {
            unlink(log);
            return glue_raise(L, &e);
        }
        char *ser = mh_exec_probes_serialize(p, np);
        mh_lua_probes_free(lp);
        if (!ser) {
            unlink(log);
            return glue_fail(L, MH_E_NO_MEMORY, "%s", "out of memory");
        }
        lua_pushstring(L, ser);
        free(ser);
        o.probes = lua_tostring(L, -1);
    }
    int status = 0;
    int rc = mh_exec_run(&o, &status, &e);
    FILE *f = rc ? NULL : fopen(log, "r");
    lua_createtable(L, 0, 2);
    lua_pushinteger(L, status);
    lua_setfield(L, -2, "status");
    push_launches(L, f);
    lua_setfield(L, -2, "launches");
    if (f) fclose(f);
    unlink(log);
    if (rc) return glue_fail(L, e.code, "mgpu.exec: %s", e.message); /* exec.c's messages carry no prefix */
    return 1;
}

const luaL_Reg glue_exec_funcs[] = {{"exec", l_exec}, {NULL, NULL}};
