/* glue_error.c - errors as Lua values: tables {code=, message=, required=,
 * capacity=, trace=, line=} with a metatable whose __tostring gives the
 * message; core.error and core.version. */
#include "lua/glue.h"
#include "version.h"

#include <stdarg.h>
#include <stdio.h>

static int error_tostring(lua_State *L)
{
    lua_getfield(L, 1, "message");
    if (!lua_isstring(L, -1)) {
        lua_pop(L, 1);
        lua_pushliteral(L, "mgpu error");
    }
    return 1;
}

void glue_push_error_mt(lua_State *L)
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
void glue_set_int(lua_State *L, int t, const char *k, lua_Integer v)
{
    t = lua_absindex(L, t);
    lua_pushinteger(L, v);
    lua_setfield(L, t, k);
}

void glue_set_num(lua_State *L, int t, const char *k, lua_Number v)
{
    t = lua_absindex(L, t);
    lua_pushnumber(L, v);
    lua_setfield(L, t, k);
}

void glue_set_str(lua_State *L, int t, const char *k, const char *v)
{
    t = lua_absindex(L, t);
    lua_pushstring(L, v);
    lua_setfield(L, t, k);
}

int glue_raise(lua_State *L, const mh_error *e)
{
    lua_createtable(L, 0, 6);
    glue_set_str(L, -1, "code", mh_code_name(e->code));
    glue_set_str(L, -1, "message", e->message);
    if (e->required >= 0) glue_set_int(L, -1, "required", e->required);
    if (e->capacity >= 0) glue_set_int(L, -1, "capacity", e->capacity);
    if (e->trace >= 0) glue_set_int(L, -1, "trace", e->trace);
    if (e->line >= 0) glue_set_int(L, -1, "line", e->line);
    glue_push_error_mt(L);
    lua_setmetatable(L, -2);
    return lua_error(L);
}

static int fail_msg(lua_State *L, mh_code code, const char *msg)
{
    mh_error e;
    mh_error_clear(&e);
    mh_fail(&e, code, "%s", msg);
    return glue_raise(L, &e);
}

int glue_fail(lua_State *L, mh_code code, const char *fmt, ...)
{
    char msg[sizeof ((mh_error *)0)->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return fail_msg(L, code, msg);
}

/* core.error{code=, message=, ...}: gives a Lua table the error metatable. */
static int l_error(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    glue_push_error_mt(L);
    lua_setmetatable(L, 1);
    return 1;
}

static int l_version(lua_State *L)
{
    lua_pushliteral(L, MH_VERSION);
    return 1;
}

const luaL_Reg glue_error_funcs[] = {{"error", l_error}, {"version", l_version}, {NULL, NULL}};
