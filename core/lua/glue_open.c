/* glue_open.c - luaopen_mgpu_core: the classes and functions of `mgpu.core`,
 * every one behind api_call (so a Lua argument error is an error value too),
 * and the helpers for objects (new userdata with a uservalue). */
#include "lua/glue.h"
#include "lua/lua_glue.h"
#include "version.h"

#include <stdio.h>
#include <string.h>

char glue_trace_sentinel;
char glue_null_sentinel;

void *glue_new_object(lua_State *L, size_t size, const char *mt, int uservalue_index)
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

/* Every function of the API runs through this: Lua's own argument errors
 * (luaL_check*: "bad argument #1 to '?' (string expected, got nil)") become
 * error values like the harness's others, {code = "bad_argument", message},
 * with the function's name in the message; error values pass unchanged. */
static int api_call(lua_State *L)
{
    int n = lua_gettop(L);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    int st = lua_pcall(L, n, LUA_MULTRET, 0);
    if (st == LUA_OK) return lua_gettop(L);
    if (lua_type(L, -1) != LUA_TSTRING) return lua_error(L);
    const char *msg = lua_tostring(L, -1), *name = lua_tostring(L, lua_upvalueindex(2));
    int method = lua_toboolean(L, lua_upvalueindex(3)), arg = 0;
    const char *q = strstr(msg, " to '?'");
    mh_error e;
    mh_error_clear(&e);
    if (st == LUA_ERRMEM) { /* the host's memory (an array's copy): no_memory, as the docs say (issue 36) */
        mh_fail(&e, MH_E_NO_MEMORY, "%s: out of host memory (%s)", name, msg);
    } else if (q && sscanf(msg, "bad argument #%d", &arg) == 1) {
        /* as Lua says it of a method: self is not counted, a bad self is named so */
        if (method && arg == 1) mh_fail(&e, MH_E_BAD_ARGUMENT, "calling '%s' on bad self%s", name, q + 7);
        else mh_fail(&e, MH_E_BAD_ARGUMENT, "bad argument #%d to '%s'%s", method ? arg - 1 : arg, name, q + 7);
    } else {
        mh_fail(&e, MH_E_BAD_ARGUMENT, "%s: %s", name, msg);
    }
    return glue_raise(L, &e);
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

void glue_new_class(lua_State *L, const char *name, const luaL_Reg *meta, const luaL_Reg *methods)
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

/* The error metatable, the classes, and mgpu.core's functions. */
int luaopen_mgpu_core(lua_State *L)
{
    glue_push_error_mt(L);
    lua_pop(L, 1);
    glue_open_trace(L);
    glue_open_device(L);
    glue_open_tmap(L);
    glue_open_array(L);
    glue_open_proc(L);
    lua_newtable(L);
    const luaL_Reg *const lists[] = {glue_error_funcs, glue_trace_funcs, glue_device_funcs, glue_array_funcs,
                                     glue_host_funcs, glue_proc_funcs, glue_probe_funcs, glue_exec_funcs};
    for (size_t i = 0; i < sizeof lists / sizeof *lists; i++) set_api_funcs(L, lists[i], 0);
    lua_pushliteral(L, MH_VERSION);
    lua_setfield(L, -2, "VERSION");
    lua_pushlightuserdata(L, &glue_trace_sentinel);
    lua_setfield(L, -2, "TRACE");
    lua_pushlightuserdata(L, &glue_null_sentinel);
    lua_setfield(L, -2, "null");
    return 1;
}

const char *mh_lua_version(void) { return LUA_RELEASE; }

