/* glue_probes_file.c - the probe list of `mgpu-harness instrument --probes FILE`: FILE.json (a JSON
 * array of probe objects) or FILE.lua (a Lua file returning the list), decoded into a Lua table in
 * a state of its own and checked by the one reader of dev:load's probes (glue_read_probes), so the
 * command line and the Lua API take the same probes with the same messages. */
#include "lua/glue.h"
#include "lua/lua_glue.h"
#include <lualib.h>
#include "base/read_file.h"

#include <stdlib.h>
#include <string.h>

struct mh_lua_probes {
    lua_State *L; /* holds the list and the probes read from it until freed */
};

/* A probe file only returns its list: one still running after PROBES_FILE_S seconds (a loop that
 * never ends) is stopped (glue_pcall_within). */
#define PROBES_FILE_S 5.0

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

/* (path, text) -> list, probes userdata: run in protected mode, so every failure is an error value. */
static int read_list(lua_State *L)
{
    const char *path = lua_tostring(L, 1);
    size_t len;
    const char *text = lua_tolstring(L, 2, &len);
    if (ends_with(path, ".json")) {
        lua_pushcfunction(L, glue_json_decode);
        lua_pushvalue(L, 2);
        lua_pushvalue(L, 1);
        lua_call(L, 2, 1);
    } else {
        /* text only (no precompiled chunks); the chunk sees the base library and nothing else */
        if (luaL_loadbufferx(L, text, len, lua_pushfstring(L, "@%s", path), "t") != LUA_OK) lua_error(L);
        lua_call(L, 0, 1);
    }
    int t = lua_gettop(L); /* a list of probe tables, without holes or names: glue_read_probes checks */
    uint32_t n;
    glue_read_probes(L, t, path, &n);
    lua_pushinteger(L, (lua_Integer)n);
    return 3; /* the list (its strings), the probes, their count */
}

/* The error value at the top of L as e: a bad_argument naming the file (a plain Lua error of the
 * file's own code has its position; an option reader's message names only probes[N].key). */
static void take_error(lua_State *L, const char *path, mh_error *e)
{
    const char *msg = NULL;
    if (lua_istable(L, -1)) {
        lua_getfield(L, -1, "message");
        msg = lua_tostring(L, -1);
    } else msg = lua_tostring(L, -1);
    if (!msg) msg = "an error without a message";
    size_t pl = strlen(path);
    if (!strncmp(msg, path, pl) && msg[pl] == ':') mh_fail(e, MH_E_BAD_ARGUMENT, "%s", msg);
    else mh_fail(e, MH_E_BAD_ARGUMENT, "%s: %s", path, msg);
}

mh_lua_probes *mh_lua_probes_read(const char *path, const mh_probe **probes, unsigned *n, mh_error *e)
{
    if (!ends_with(path, ".json") && !ends_with(path, ".lua")) {
        mh_fail(e, MH_E_BAD_ARGUMENT, "%s: a probe list is a .json file (an array of probe objects) or a .lua file "
                "(returning the list)", path);
        return NULL;
    }
    size_t len;
    char *text = mh_read_file(path, 0, &len, e);
    if (!text) return NULL;
    mh_lua_probes *p = calloc(1, sizeof *p);
    lua_State *L = p ? luaL_newstate() : NULL;
    if (!L) {
        free(text);
        free(p);
        mh_fail(e, MH_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    p->L = L;
    lua_pushcfunction(L, luaopen_base); /* the base library alone: no io, os, package */
    lua_call(L, 0, 0);
    static const char *const unsafe[] = {"print", "dofile", "loadfile"}; /* stdout is the PTX; files */
    for (size_t i = 0; i < sizeof unsafe / sizeof *unsafe; i++) {
        lua_pushnil(L);
        lua_setglobal(L, unsafe[i]);
    }

    lua_pushcfunction(L, read_list);
    lua_pushstring(L, path);
    lua_pushlstring(L, text, len);
    free(text);
    int st = glue_pcall_within(L, 2, 3, 0, PROBES_FILE_S, "the probe file", "a probe file only returns its list");
    if (st != LUA_OK) {
        take_error(L, path, e);
        if (st == LUA_ERRMEM) mh_fail(e, MH_E_NO_MEMORY, "%s: out of memory reading the probe list", path);
        mh_lua_probes_free(p);
        return NULL;
    }
    *probes = lua_touserdata(L, -2);
    *n = (unsigned)lua_tointeger(L, -1);
    return p; /* the list and the probes stay on L's stack */
}

void mh_lua_probes_free(mh_lua_probes *p)
{
    if (!p) return;
    lua_close(p->L);
    free(p);
}
