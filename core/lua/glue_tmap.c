/* glue_tmap.c - the value dev:tensor_map returns: a userdata holding the map's 128 bytes, with the
 * array it maps as its uservalue, so the array (and its device memory) lives as long as the map
 * does; before, the map was a plain string and a collected array left a kernel's TMA reading freed
 * memory.  It stands where the string stood: a launch argument (a __grid_constant__ CUtensorMap),
 * `#map` (128), `map .. s` and `s .. map` (its bytes), `map == other` (same bytes), and the
 * string methods (`map:sub(1, 8)`, `map:byte(i)`, ...) on its bytes; `map:bytes()` is the string,
 * `map:array()` the array. */
#include "lua/glue.h"
#include "launch/tensor_map.h"

#include <string.h>

typedef struct {
    unsigned char bytes[MH_TMAP_BYTES];
} l_tmap; /* uservalue 1: the array */

void glue_push_tensor_map(lua_State *L, const unsigned char *bytes, int array_index)
{
    array_index = lua_absindex(L, array_index);
    l_tmap *t = glue_new_object(L, sizeof *t, TMAP_MT, array_index);
    memcpy(t->bytes, bytes, sizeof t->bytes);
}

const unsigned char *glue_test_tensor_map(lua_State *L, int i, const l_array **array)
{
    l_tmap *t = luaL_testudata(L, i, TMAP_MT);
    if (!t) return NULL;
    if (array) {
        lua_getiuservalue(L, i, 1);
        *array = luaL_testudata(L, -1, ARRAY_MT);
        lua_pop(L, 1);
    }
    return t->bytes;
}

static int l_tmap_bytes(lua_State *L)
{
    l_tmap *t = luaL_checkudata(L, 1, TMAP_MT);
    lua_pushlstring(L, (const char *)t->bytes, sizeof t->bytes);
    return 1;
}

static int l_tmap_array(lua_State *L)
{
    luaL_checkudata(L, 1, TMAP_MT);
    lua_getiuservalue(L, 1, 1);
    return 1;
}

static int l_tmap_len(lua_State *L)
{
    luaL_checkudata(L, 1, TMAP_MT);
    lua_pushinteger(L, MH_TMAP_BYTES);
    return 1;
}

/* map .. s, s .. map, map .. map: the bytes concatenated (a number as Lua writes it) */
static int l_tmap_concat(lua_State *L)
{
    for (int i = 1; i <= 2; i++) {
        l_tmap *t = luaL_testudata(L, i, TMAP_MT);
        if (t) lua_pushlstring(L, (const char *)t->bytes, sizeof t->bytes);
        else if (lua_type(L, i) == LUA_TSTRING || lua_type(L, i) == LUA_TNUMBER) lua_pushvalue(L, i);
        else return luaL_error(L, "attempt to concatenate a tensor map and a %s", luaL_typename(L, i));
        if (lua_type(L, -1) == LUA_TNUMBER) lua_tostring(L, -1);
    }
    lua_concat(L, 2);
    return 1;
}

static int l_tmap_eq(lua_State *L)
{
    l_tmap *a = luaL_testudata(L, 1, TMAP_MT), *b = luaL_testudata(L, 2, TMAP_MT);
    lua_pushboolean(L, a && b && !memcmp(a->bytes, b->bytes, sizeof a->bytes));
    return 1;
}

static int l_tmap_tostring(lua_State *L)
{
    luaL_checkudata(L, 1, TMAP_MT);
    lua_pushfstring(L, "mgpu.tensor_map: a tensor map (%d bytes; map:bytes() for them)", MH_TMAP_BYTES);
    return 1;
}

/* string methods on the bytes: map:sub(1, 8) is map:bytes():sub(1, 8) */
static int l_tmap_string_method(lua_State *L)
{
    l_tmap *t = luaL_checkudata(L, 1, TMAP_MT);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushlstring(L, (const char *)t->bytes, sizeof t->bytes);
    lua_replace(L, 1);
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

static int l_tmap_index(lua_State *L)
{
    luaL_checkudata(L, 1, TMAP_MT);
    luaL_getmetafield(L, 1, "methods");
    lua_pushvalue(L, 2);
    lua_rawget(L, -2);
    if (!lua_isnil(L, -1) || lua_type(L, 2) != LUA_TSTRING) return 1;
    lua_pop(L, 2);
    lua_getglobal(L, "string");
    if (!lua_istable(L, -1)) return 0;
    lua_pushvalue(L, 2);
    lua_gettable(L, -2);
    if (!lua_isfunction(L, -1)) return 0;
    lua_pushcclosure(L, l_tmap_string_method, 1);
    return 1;
}

void glue_open_tmap(lua_State *L)
{
    static const luaL_Reg meta[] = {{"__index", l_tmap_index}, {"__len", l_tmap_len}, {"__concat", l_tmap_concat},
                                    {"__eq", l_tmap_eq}, {"__tostring", l_tmap_tostring}, {NULL, NULL}};
    static const luaL_Reg methods[] = {{"bytes", l_tmap_bytes}, {"array", l_tmap_array}, {NULL, NULL}};
    glue_new_class(L, TMAP_MT, meta, methods);
}
