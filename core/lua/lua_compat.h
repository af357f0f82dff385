/* lua_compat.h - the Lua 5.3/5.4 API that lua_glue.c uses, for LuaJIT (the
 * 5.1 API with some 5.2 additions): user values through the userdata's
 * environment table, integer checks on doubles, geti/seti, and friends.
 * Included after the Lua headers; empty for Lua 5.4. */
#ifndef MH_LUA_COMPAT_H
#define MH_LUA_COMPAT_H

#include <stdint.h>

#if LUA_VERSION_NUM == 501
#include <math.h>

#ifndef LUA_MAXINTEGER /* lua_Integer is ptrdiff_t there */
#define LUA_MAXINTEGER PTRDIFF_MAX
#define LUA_MININTEGER PTRDIFF_MIN
#endif
#ifndef LUA_OK
#define LUA_OK 0
#endif
#ifndef LUA_PRELOAD_TABLE
#define LUA_PRELOAD_TABLE "_PRELOAD"
#endif

static inline int mhc_absindex(lua_State *L, int i)
{
    return (i > 0 || i <= LUA_REGISTRYINDEX) ? i : lua_gettop(L) + i + 1;
}
#define lua_absindex mhc_absindex
#define lua_rawlen(L, i) lua_objlen(L, (i))

static inline lua_Integer mhc_len(lua_State *L, int i) { return (lua_Integer)lua_objlen(L, i); }
#define luaL_len mhc_len

/* one number type: an integer is an integral double */
static inline int mhc_isinteger(lua_State *L, int i)
{
    if (lua_type(L, i) != LUA_TNUMBER) return 0;
    lua_Number n = lua_tonumber(L, i);
    return n == floor(n) && fabs(n) < 9.007199254740992e15;
}
#define lua_isinteger mhc_isinteger

static inline int mhc_getfield(lua_State *L, int i, const char *k)
{
    lua_getfield(L, i, k);
    return lua_type(L, -1);
}
#define lua_getfield(L, i, k) mhc_getfield(L, (i), (k))

static inline int mhc_geti(lua_State *L, int t, lua_Integer i)
{
    t = mhc_absindex(L, t);
    lua_pushinteger(L, i);
    lua_gettable(L, t);
    return lua_type(L, -1);
}
#define lua_geti mhc_geti

static inline void mhc_seti(lua_State *L, int t, lua_Integer i)
{
    t = mhc_absindex(L, t);
    lua_pushinteger(L, i);
    lua_insert(L, -2);
    lua_settable(L, t);
}
#define lua_seti mhc_seti

/* user values live in the userdata's environment table */
static inline void *mhc_newuserdatauv(lua_State *L, size_t size, int nuv)
{
    (void)nuv;
    void *p = lua_newuserdata(L, size);
    lua_newtable(L);
    lua_setfenv(L, -2);
    return p;
}
#define lua_newuserdatauv mhc_newuserdatauv

static inline int mhc_setiuservalue(lua_State *L, int idx, int n)
{
    idx = mhc_absindex(L, idx);
    lua_getfenv(L, idx);
    lua_insert(L, -2);
    lua_rawseti(L, -2, n);
    lua_pop(L, 1);
    return 1;
}
#define lua_setiuservalue mhc_setiuservalue

static inline int mhc_getiuservalue(lua_State *L, int idx, int n)
{
    idx = mhc_absindex(L, idx);
    lua_getfenv(L, idx);
    lua_rawgeti(L, -1, n);
    lua_remove(L, -2);
    return lua_type(L, -1);
}
#define lua_getiuservalue mhc_getiuservalue

static inline const char *mhc_tolstring(lua_State *L, int i, size_t *len)
{
    if (lua_type(L, i) == LUA_TSTRING || lua_type(L, i) == LUA_TNUMBER) {
        lua_pushvalue(L, i);
        return lua_tolstring(L, -1, len);
    }
    lua_pushfstring(L, "%s: %p", luaL_typename(L, i), lua_topointer(L, i));
    return lua_tolstring(L, -1, len);
}
#define luaL_tolstring mhc_tolstring

static inline int mhc_getsubtable(lua_State *L, int idx, const char *name)
{
    idx = mhc_absindex(L, idx);
    lua_getfield(L, idx, name);
    if (lua_istable(L, -1)) return 1;
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, idx, name);
    return 0;
}
#define luaL_getsubtable mhc_getsubtable

#endif /* LUA_VERSION_NUM == 501 */
#endif
