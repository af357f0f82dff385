/* glue_options.c - readers of option-table fields.  Each names the field
 * it refuses (`launch.smem must be an integer, got string`), never Lua's
 * positional `bad argument #-2`; glue_check_keys refuses a key the table
 * does not take (a typo such as `smme = 512` would otherwise be ignored).
 * Callers read and check every option before they allocate anything, so a
 * refused option leaks nothing. */
#include "lua/glue.h"
#include "trace/counters.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* "what.k", or k alone; a what that ends in ':' (a message prefix, "tensor map:") gives "what k" */
static const char *field(char *buf, size_t n, const char *what, const char *k)
{
    if (!what) return k;
    size_t w = strlen(what);
    snprintf(buf, n, w && what[w - 1] == ':' ? "%s %s" : "%s.%s", what, k);
    return buf;
}

const char *glue_typename(lua_State *L, int i) { return luaL_typename(L, i); }

int glue_isint(lua_State *L, int i)
{
    if (lua_type(L, i) != LUA_TNUMBER) return 0;
    if (lua_isinteger(L, i)) return 1;
    lua_Number d = lua_tonumber(L, i);
    return d == floor(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0;
}

void glue_check_table(lua_State *L, int idx, const char *what, const char *shape)
{
    if (!lua_istable(L, idx)) glue_bad(L, "%s must be a table %s, got %s", what, shape, glue_typename(L, idx));
}

void glue_check_keys(lua_State *L, int t, const char *what, const char *const *allowed)
{
    t = lua_absindex(L, t);
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        int ok = 0;
        if (lua_type(L, -1) == LUA_TSTRING) {
            const char *k = lua_tostring(L, -1);
            for (const char *const *a = allowed; *a && !ok; a++) ok = !strcmp(*a, k);
        }
        if (!ok) {
            luaL_Buffer b;
            luaL_buffinit(L, &b);
            for (const char *const *a = allowed; *a; a++) {
                if (a != allowed) luaL_addstring(&b, ", ");
                luaL_addstring(&b, *a);
            }
            luaL_pushresult(&b);
            const char *list = lua_tostring(L, -1);
            if (lua_type(L, -2) == LUA_TSTRING)
                glue_bad(L, "%s: unknown option \"%s\" (allowed: %s)", what, lua_tostring(L, -2), list);
            glue_bad(L, "%s: option keys are names, not a %s (allowed: %s)", what, glue_typename(L, -2), list);
        }
    }
}

void glue_opt_dims(lua_State *L, int t, const char *what, const char *k, uint64_t out[3])
{
    char buf[96];
    const char *f = field(buf, sizeof buf, what, k);
    out[0] = out[1] = out[2] = 1;
    lua_getfield(L, t, k);
    if (glue_isint(L, -1)) {
        lua_Integer v = lua_tointeger(L, -1);
        if (v < 1) glue_bad(L, "%s must be a positive integer", f);
        out[0] = (uint64_t)v;
    } else if (lua_istable(L, -1)) {
        lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
        if (n < 1 || n > 3) glue_bad(L, "%s must have 1 to 3 dimensions", f);
        for (lua_Integer i = 1; i <= n; i++) {
            lua_rawgeti(L, -1, i);
            int ok = glue_isint(L, -1) && lua_tointeger(L, -1) >= 1;
            if (!ok) glue_bad(L, "every dimension of %s must be a positive integer", f);
            out[i - 1] = (uint64_t)lua_tointeger(L, -1);
            lua_pop(L, 1);
        }
    } else {
        glue_bad(L, "%s must be an integer or an array of up to 3 integers, got %s", f, glue_typename(L, -1));
    }
    lua_pop(L, 1);
}

void glue_opt_dims32(lua_State *L, int t, const char *what, const char *k, uint32_t out[3])
{
    uint64_t d[3];
    glue_opt_dims(L, t, what, k, d);
    for (int i = 0; i < 3; i++) {
        char buf[96];
        if (d[i] > UINT32_MAX) glue_bad(L, "%s dimension too large", field(buf, sizeof buf, what, k));
        out[i] = (uint32_t)d[i];
    }
}

const char *glue_opt_string(lua_State *L, int t, const char *what, const char *k, const char *def)
{
    const char *s = def;
    lua_getfield(L, t, k);
    if (!lua_isnil(L, -1)) {
        char buf[96];
        if (lua_type(L, -1) != LUA_TSTRING)
            glue_bad(L, "%s must be a string, got %s", field(buf, sizeof buf, what, k), glue_typename(L, -1));
        s = lua_tostring(L, -1);
    }
    lua_pop(L, 1); /* the string stays alive: the table references it */
    return s;
}

double glue_opt_number(lua_State *L, int t, const char *what, const char *k, double def)
{
    double v = def;
    lua_getfield(L, t, k);
    if (!lua_isnil(L, -1)) {
        char buf[96];
        if (lua_type(L, -1) != LUA_TNUMBER)
            glue_bad(L, "%s must be a number, got %s", field(buf, sizeof buf, what, k), glue_typename(L, -1));
        v = lua_tonumber(L, -1);
        if (!isfinite(v)) /* math.huge, 0/0: no option takes them (a limit is left out, not infinite) */
            glue_bad(L, "%s = %g: it must be a finite number", field(buf, sizeof buf, what, k), v);
    }
    lua_pop(L, 1);
    return v;
}

lua_Integer glue_opt_integer(lua_State *L, int t, const char *what, const char *k, lua_Integer def, lua_Integer min,
                             lua_Integer max)
{
    lua_Integer v = def;
    lua_getfield(L, t, k);
    if (!lua_isnil(L, -1)) {
        char buf[96];
        const char *f = field(buf, sizeof buf, what, k);
        if (!glue_isint(L, -1)) glue_bad(L, "%s must be an integer, got %s", f, glue_typename(L, -1));
        v = lua_tointeger(L, -1);
        if (v < min || v > max) glue_bad(L, "%s = %lld: it must be %lld to %lld", f, (long long)v, (long long)min, (long long)max);
    }
    lua_pop(L, 1);
    return v;
}

int glue_opt_boolean(lua_State *L, int t, const char *what, const char *k, int def)
{
    int v = def;
    lua_getfield(L, t, k);
    if (!lua_isnil(L, -1)) {
        char buf[96];
        if (!lua_isboolean(L, -1))
            glue_bad(L, "%s must be true or false, got %s", field(buf, sizeof buf, what, k), glue_typename(L, -1));
        v = lua_toboolean(L, -1);
    }
    lua_pop(L, 1);
    return v;
}

int glue_opt_choice(lua_State *L, int t, const char *what, const char *k, int def, const char *const *choices)
{
    const char *s = glue_opt_string(L, t, what, k, NULL);
    if (!s) return def;
    for (int i = 0; choices[i]; i++)
        if (!strcmp(choices[i], s)) return i;
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 0; choices[i]; i++) {
        if (i) luaL_addstring(&b, ", ");
        luaL_addstring(&b, choices[i]);
    }
    luaL_pushresult(&b);
    char buf[96];
    return glue_bad(L, "%s = \"%s\" (%s)", field(buf, sizeof buf, what, k), s, lua_tostring(L, -1));
}

void glue_opt_uint_list(lua_State *L, int t, const char *what, const char *k, uint64_t *out, int max, int *n)
{
    char buf[96];
    const char *f = field(buf, sizeof buf, what, k);
    *n = 0;
    lua_getfield(L, t, k);
    if (!lua_isnil(L, -1)) {
        if (!lua_istable(L, -1)) glue_bad(L, "%s must be a list of integers, got %s", f, glue_typename(L, -1));
        lua_Integer len = (lua_Integer)lua_rawlen(L, -1);
        if (len < 1 || len > max) glue_bad(L, "%s must have 1 to %d entries", f, max);
        for (lua_Integer i = 1; i <= len; i++) {
            lua_rawgeti(L, -1, i);
            if (!glue_isint(L, -1) || lua_tointeger(L, -1) < 0)
                glue_bad(L, "every entry of %s must be a non-negative integer", f);
            out[i - 1] = (uint64_t)lua_tointeger(L, -1);
            lua_pop(L, 1);
        }
        *n = (int)len;
    }
    lua_pop(L, 1);
}

uint32_t glue_opt_counter_bins(lua_State *L, int t, const char *what)
{
    double v = glue_opt_number(L, t, what, "counters", 0);
    if (v == 0) return 0;
    char buf[96];
    if (!(v >= 1 && v <= MH_COUNTERS_MAX_BINS) || v != floor(v))
        glue_bad(L, "%s must be a number of bins from 1 to 100000", field(buf, sizeof buf, what, "counters"));
    return (uint32_t)v;
}
