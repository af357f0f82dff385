/* glue_array.c - arrays of `mgpu.core`: dev:array, dev:load_npy, and an
 * array's read/write/zero/compare/shape/save/ptr; core.struct (the bytes of
 * a struct passed by value).  Host copies are scratch memory the collector
 * frees, so an error half-way leaks nothing. */
#include "lua/glue.h"
#include "base/out.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The Lua number on top of the stack into element i of h (what names the value in messages).
 * Float dtypes take any number; integer dtypes an integer (or an integral float) in their range,
 * exactly (64-bit values beyond 2^53 included; u64 takes any Lua integer, whose bits it keeps, so
 * 2^63 and above round-trip as negative integers).  Anything else is refused, not wrapped. */
static void set_value(lua_State *L, mh_dtype t, unsigned char *h, size_t i, const char *what)
{
    if (mh_dtype_is_float(t)) {
        mh_dtype_set(t, h, i, lua_tonumber(L, -1));
        return;
    }
    static const struct { mh_dtype t; int64_t lo, hi; } range[] = {
        {MH_I8, INT8_MIN, INT8_MAX},   {MH_U8, 0, UINT8_MAX},     {MH_I16, INT16_MIN, INT16_MAX},
        {MH_U16, 0, UINT16_MAX},       {MH_I32, INT32_MIN, INT32_MAX}, {MH_U32, 0, UINT32_MAX},
        {MH_I64, INT64_MIN, INT64_MAX}, {MH_U64, INT64_MIN, INT64_MAX},
    };
    int64_t v;
    if (lua_isinteger(L, -1)) {
        v = (int64_t)lua_tointeger(L, -1);
    } else {
        double d = lua_tonumber(L, -1);
        if (!(d == floor(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0))
            glue_bad(L, "%s (%.17g) is not an integer: the array is %s", what, d, mh_dtype_name(t));
        v = (int64_t)d;
    }
    for (size_t k = 0; k < sizeof range / sizeof *range; k++)
        if (range[k].t == t && (v < range[k].lo || v > range[k].hi))
            glue_bad(L, "%s (%lld) does not fit %s (%lld to %lld)", what, (long long)v, mh_dtype_name(t),
                     (long long)range[k].lo, (long long)range[k].hi);
    mh_dtype_set_int(t, h, i, v);
}

/* Scratch memory the collector frees: an error between taking and giving it back leaks nothing. */
static unsigned char *scratch(lua_State *L, size_t bytes)
{
    return lua_newuserdatauv(L, bytes ? bytes : 1, 0);
}

/* An integer dtype's fill reaches values a and b (its ends): both in the type's range, or a
 * bad_argument naming them (an i8 ramp of 300 elements wrapped to -128 at element 129: issue 36). */
static void fill_fits(lua_State *L, mh_dtype t, const char *fill, double a, double b)
{
    if (mh_dtype_is_float(t)) return;
    int bits = (int)mh_dtype_size(t) * 8, sgn = t == MH_I8 || t == MH_I16 || t == MH_I32 || t == MH_I64;
    double lo = sgn ? -ldexp(1, bits - 1) : 0, hi = sgn ? ldexp(1, bits - 1) : ldexp(1, bits); /* [lo, hi) */
    double x = a < b ? a : b, y = a < b ? b : a;
    if (!(x >= lo && y < hi))
        glue_bad(L, "array: fill = \"%s\" reaches %.17g to %.17g, beyond %s's range %.17g to %.17g", fill, x, y,
                 mh_dtype_name(t), lo, hi - 1);
}

/* opts.shape: a list of positive dimensions whose product is n */
static void read_shape(lua_State *L, int t, lua_Integer n, uint64_t dims[MH_NPY_MAX_DIMS], int *ndim)
{
    lua_getfield(L, t, "shape");
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return;
    }
    if (!lua_istable(L, -1)) glue_bad(L, "array.shape must be a list of dimensions, got %s", glue_typename(L, -1));
    *ndim = (int)lua_rawlen(L, -1);
    uint64_t prod = 1;
    if (*ndim < 1 || *ndim > MH_NPY_MAX_DIMS) glue_bad(L, "%s", "shape: 1 to 8 dimensions");
    for (int i = 0; i < *ndim; i++) {
        lua_rawgeti(L, -1, i + 1);
        lua_Integer dim = glue_isint(L, -1) ? lua_tointeger(L, -1) : -1;
        lua_pop(L, 1);
        if (dim < 1) glue_bad(L, "%s", "shape: dimensions must be positive integers");
        if (dim > n) /* no dimension exceeds the count (and the product cannot wrap around) */
            glue_bad(L, "%s", "shape: a dimension larger than the array");
        dims[i] = (uint64_t)dim;
        prod *= (uint64_t)dim;
    }
    if (prod != (uint64_t)n)
        glue_bad(L, "shape holds %llu elements, the array %lld", (unsigned long long)prod, (long long)n);
    lua_pop(L, 1);
}

/* A new array object on the device holding host's bytes. */
static l_array *new_array(lua_State *L, l_device *d, mh_dtype t, uint64_t n, const void *host, int ndim,
                          const uint64_t *dims)
{
    size_t bytes = (size_t)n * mh_dtype_size(t);
    l_array *a = glue_new_object(L, sizeof *a, ARRAY_MT, 1); /* holds the memory from here: __gc frees it */
    mh_error e;
    mh_error_clear(&e);
    uint64_t addr;
    if (mh_device_alloc(&d->dev, bytes, &addr, &e)) glue_raise(L, &e);
    a->addr = addr;
    a->count = n;
    a->dtype = t;
    a->dev = d;
    a->gen = mh_device_generation(&d->dev);
    a->ndim = ndim;
    memcpy(a->dims, dims, (size_t)ndim * sizeof *dims);
    if (mh_device_write(&d->dev, addr, host, bytes, &e)) glue_raise(L, &e);
    return a;
}

/* dev:array(dtype, n | {values}, [{shape=, fill="zeros"|"ramp"|"random", seed=, min=, max=, start=,
 * step=}]).  Every option is read and checked before anything is allocated. */
int glue_array_new(lua_State *L)
{
    static const char *const keys[] = {"shape", "fill", "seed", "min", "max", "start", "step", NULL},
                             *const fills[] = {"zeros", "ramp", "random", NULL};
    l_device *d = glue_check_device(L, 1);
    const char *tn = luaL_checkstring(L, 2);
    mh_dtype t;
    if (mh_dtype_parse(tn, &t))
        return glue_bad(L, "unknown dtype \"%s\" (f32 f16 bf16 f64 i8 u8 i16 u16 i32 u32 i64 u64)", tn);
    int from_table = lua_istable(L, 3);
    if (!from_table && !glue_isint(L, 3)) /* "10" was taken (where a launch refuses "4") */
        return lua_type(L, 3) == LUA_TNUMBER ? glue_bad(L, "array length must be an integer, got %g", lua_tonumber(L, 3))
               : glue_bad(L, "array length must be an integer (or a table of values), got %s", glue_typename(L, 3));
    lua_Integer n = from_table ? (lua_Integer)lua_rawlen(L, 3) : lua_tointeger(L, 3);
    uint64_t dims[MH_NPY_MAX_DIMS] = {(uint64_t)n};
    int ndim = 1, fill = 0;
    lua_Integer seed = 1;
    double lo = 0, hi = 1, start = 0, step = 1;
    if (!lua_isnoneornil(L, 4)) {
        glue_check_table(L, 4, "array's options", "{shape=, fill=, seed=, min=, max=, start=, step=}");
        glue_check_keys(L, 4, "array", keys);
        read_shape(L, 4, n, dims, &ndim);
        fill = glue_opt_choice(L, 4, "array", "fill", 0, fills);
        seed = glue_opt_integer(L, 4, "array", "seed", 1, LUA_MININTEGER, LUA_MAXINTEGER);
        lo = glue_opt_number(L, 4, "array", "min", 0);
        hi = glue_opt_number(L, 4, "array", "max", 1);
        start = glue_opt_number(L, 4, "array", "start", 0);
        step = glue_opt_number(L, 4, "array", "step", 1);
        if (from_table && fill) return glue_bad(L, "%s", "array: fill is for an array of a length, not of values");
        /* a ramp's or a random fill's options without that fill were dropped silently (zeros came) */
        static const char *const ramp_keys[] = {"start", "step", NULL}, *const random_keys[] = {"seed", "min", "max", NULL};
        for (int f = 1; f <= 2; f++) {
            const char *const *ks = f == 1 ? ramp_keys : random_keys;
            for (int i = 0; ks[i] && fill != f; i++) {
                lua_getfield(L, 4, ks[i]);
                int given = !lua_isnil(L, -1);
                lua_pop(L, 1);
                if (given)
                    return glue_bad(L, "array: %s is an option of fill = \"%s\", and fill is \"%s\"%s", ks[i],
                                    fills[f], fills[fill], fill ? "" : " (the default: give fill too)");
            }
        }
        if (fill == 2 && !(lo <= hi)) return glue_bad(L, "array: min %g is above max %g", lo, hi);
    }
    if (n < 1 || n > ((lua_Integer)1 << 36)) return glue_bad(L, "%s", "array length must be 1 to 2^36");
    unsigned char *host = scratch(L, (size_t)n * mh_dtype_size(t)); /* zeros */
    memset(host, 0, (size_t)n * mh_dtype_size(t));
    if (from_table) {
        for (lua_Integer i = 1; i <= n; i++) {
            lua_rawgeti(L, 3, i);
            if (lua_type(L, -1) != LUA_TNUMBER) return glue_bad(L, "%s", "array values must be numbers");
            char what[48];
            snprintf(what, sizeof what, "array value %lld", (long long)i);
            set_value(L, t, host, (size_t)i - 1, what);
            lua_pop(L, 1);
        }
    } else if (fill == 2) {
        fill_fits(L, t, "random", lo, hi - 1 > lo ? hi - 1 : lo);
        mh_fill_random(t, host, (size_t)n, (uint64_t)seed, lo, hi);
    } else if (fill == 1) {
        fill_fits(L, t, "ramp", start, start + (double)(n - 1) * step);
        mh_fill_ramp(t, host, (size_t)n, start, step);
    }
    new_array(L, d, t, (uint64_t)n, host, ndim, dims);
    return 1;
}

/* An array that can be used: not freed, its device open, its memory not lost to a fault reset. */
l_array *glue_check_array(lua_State *L, int i)
{
    l_array *a = luaL_checkudata(L, i, ARRAY_MT);
    if (!a->addr) glue_bad(L, "%s", "the array is freed");
    if (!a->dev->open) glue_bad(L, "%s", "the array's device is closed");
    if (a->gen != mh_device_generation(&a->dev->dev))
        glue_bad(L, "%s", "the array was lost when a fault reset its device");
    return a;
}

static int l_array_gc(lua_State *L)
{
    l_array *a = luaL_checkudata(L, 1, ARRAY_MT);
    /* memory of a context reset after a fault is already gone */
    if (a->dev && a->dev->open && a->addr && a->gen == mh_device_generation(&a->dev->dev)) {
        mh_error e;
        mh_device_free(&a->dev->dev, a->addr, &e);
    }
    a->addr = 0;
    return 0;
}

static int l_array_len(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)((l_array *)luaL_checkudata(L, 1, ARRAY_MT))->count);
    return 1;
}

/* Copies the array to the host (scratch memory, pushed). */
static unsigned char *array_host(lua_State *L, l_array *a)
{
    size_t bytes = (size_t)a->count * mh_dtype_size(a->dtype);
    unsigned char *h = scratch(L, bytes);
    mh_error e;
    if (mh_device_read(&a->dev->dev, a->addr, h, bytes, &e)) glue_raise(L, &e);
    return h;
}

/* element i of host copy h onto the stack: integers as Lua integers, exactly
 * (a u64 of 2^63 or more reads as a negative integer, Lua's integers being
 * signed 64-bit; math.ult compares them unsigned) */
static void push_value(lua_State *L, mh_dtype t, const unsigned char *h, size_t i)
{
    if (mh_dtype_is_float(t)) lua_pushnumber(L, mh_dtype_get(t, h, i));
    else lua_pushinteger(L, (lua_Integer)mh_dtype_get_int(t, h, i));
}

/* arr:read() -> {values}; arr:read(i) -> value i (1-based, one element copied) */
static int l_array_read(lua_State *L)
{
    l_array *a = glue_check_array(L, 1);
    if (!lua_isnoneornil(L, 2)) {
        lua_Integer i = luaL_checkinteger(L, 2);
        if (i < 1 || (uint64_t)i > a->count) return luaL_argerror(L, 2, "index out of range");
        size_t es = mh_dtype_size(a->dtype);
        unsigned char one[8];
        mh_error e;
        if (mh_device_read(&a->dev->dev, a->addr + (uint64_t)(i - 1) * es, one, es, &e)) return glue_raise(L, &e);
        push_value(L, a->dtype, one, 0);
        return 1;
    }
    unsigned char *h = array_host(L, a);
    lua_createtable(L, (int)(a->count < 1u << 30 ? a->count : 0), 0);
    for (uint64_t i = 0; i < a->count; i++) {
        push_value(L, a->dtype, h, (size_t)i);
        lua_seti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

static int l_array_shape(lua_State *L)
{
    l_array *a = glue_check_array(L, 1);
    lua_createtable(L, a->ndim, 0);
    for (int i = 0; i < a->ndim; i++) {
        lua_pushinteger(L, (lua_Integer)a->dims[i]);
        lua_seti(L, -2, i + 1);
    }
    return 1;
}

static const char *npy_descr(mh_dtype t)
{
    static const char *const d[MH_DTYPE_COUNT_] = {
        [MH_F32] = "<f4", [MH_F16] = "<f2", [MH_BF16] = "<u2", [MH_F64] = "<f8", [MH_I8] = "|i1", [MH_U8] = "|u1",
        [MH_I16] = "<i2", [MH_U16] = "<u2", [MH_I32] = "<i4", [MH_U32] = "<u4", [MH_I64] = "<i8", [MH_U64] = "<u8",
    };
    return d[t];
}

/* arr:save(path): a NumPy .npy with the array's shape (bf16 as its raw uint16
 * bits: NumPy has no bfloat16), written atomically */
static int l_array_save(lua_State *L)
{
    l_array *a = glue_check_array(L, 1);
    const char *path = luaL_checkstring(L, 2);
    char hdr[600];
    size_t hl = mh_npy_header(hdr, sizeof hdr, npy_descr(a->dtype), a->dims, a->ndim);
    if (!hl) return glue_fail(L, MH_E_BAD_ARGUMENT, "%s", "save: shape too long for a .npy header");
    unsigned char *h = array_host(L, a);
    mh_out o;
    mh_error e;
    mh_error_clear(&e);
    int rc = mh_out_open(&o, path, &e);
    if (!rc) {
        mh_out_mem(&o, hdr, hl);
        mh_out_mem(&o, h, a->count * mh_dtype_size(a->dtype));
        rc = mh_out_commit(&o, &e);
    }
    if (rc) return glue_raise(L, &e);
    return 0;
}

int glue_array_load_npy(lua_State *L)
{
    l_device *d = glue_check_device(L, 1);
    const char *path = luaL_checkstring(L, 2);
    const char *want = luaL_optstring(L, 3, NULL);
    FILE *f = fopen(path, "rb");
    if (!f) return glue_fail(L, MH_E_IO, "%s: cannot open", path);
    struct stat st; /* fopen takes a folder: say so, not "not a .npy file" */
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return glue_fail(L, MH_E_IO, "load_npy: %s is a directory, not a .npy file", path);
    }
    unsigned char head[65536 + 12];
    size_t hn = fread(head, 1, sizeof head, f);
    mh_npy np;
    mh_error e;
    mh_error_clear(&e);
    if (mh_npy_parse_any(head, hn, &np, &e)) {
        fclose(f);
        mh_error_prefix(&e, path);
        return glue_raise(L, &e);
    }
    char descr[8];
    snprintf(descr, sizeof descr, "%c%u", np.kind, np.itemsize);
    static const struct { const char *d; mh_dtype t; } map[] = {
        {"f4", MH_F32}, {"f2", MH_F16}, {"f8", MH_F64}, {"i1", MH_I8}, {"u1", MH_U8}, {"i2", MH_I16},
        {"u2", MH_U16}, {"i4", MH_I32}, {"u4", MH_U32}, {"i8", MH_I64}, {"u8", MH_U64},
    };
    int t = -1;
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (!strcmp(map[i].d, descr)) t = (int)map[i].t;
    mh_dtype wt;
    if (want && mh_dtype_parse(want, &wt)) {
        fclose(f);
        return glue_bad(L, "load_npy: unknown dtype \"%s\" (f32 f16 bf16 f64 i8 u8 i16 u16 i32 u32 i64 u64)", want);
    }
    if (want && t >= 0 && mh_dtype_size(wt) != np.itemsize) {
        fclose(f);
        return glue_bad(L, "load_npy: %s: dtype %s is %u bytes, the file's '%s' %u", path, want,
                        (unsigned)mh_dtype_size(wt), descr, np.itemsize);
    }
    if (want && t >= 0) t = (int)wt;
    if (t < 0 || np.big_endian || np.ndim > MH_NPY_MAX_DIMS || np.count == 0) {
        fclose(f);
        char msg[200];
        snprintf(msg, sizeof msg, "%s: .npy dtype '%s'%s is not supported (little-endian f2 f4 f8 i1..i8 u1..u8; "
                 "at least one element)", path, descr, np.big_endian ? " (big-endian)" : "");
        return glue_fail(L, MH_E_BAD_BUFFER, "%s", msg);
    }
    size_t bytes = (size_t)np.count * np.itemsize;
    unsigned char *data = scratch(L, bytes);
    int ok = fseek(f, (long)np.data_offset, SEEK_SET) == 0 && fread(data, 1, bytes, f) == bytes;
    fclose(f);
    if (!ok) return glue_fail(L, MH_E_BAD_BUFFER, "%s: the file is shorter than its shape says", path);
    uint64_t one = 1;
    new_array(L, d, (mh_dtype)t, np.count, data, np.ndim ? np.ndim : 1, np.ndim ? np.dims : &one);
    return 1;
}

/* arr:ptr() -> lightuserdata: the array's memory, without a copy, for LuaJIT's
 * FFI (ffi.cast("float *", arr:ptr())); emu only: a GPU array has no host address */
static int l_array_ptr(lua_State *L)
{
    l_array *a = glue_check_array(L, 1);
    mh_error e;
    mh_error_clear(&e);
    void *p = mh_device_host(&a->dev->dev, a->addr, a->count * mh_dtype_size(a->dtype), &e);
    if (!p) return glue_raise(L, &e);
    lua_pushlightuserdata(L, p);
    return 1;
}

/* arr:write({values}) writes values from the first element; arr:zero() */
static int l_array_write(lua_State *L)
{
    l_array *a = glue_check_array(L, 1);
    glue_check_table(L, 2, "array:write's values", "{v1, v2, ...}");
    lua_Integer n = (lua_Integer)luaL_len(L, 2);
    if (n < 0 || (uint64_t)n > a->count) return glue_fail(L, MH_E_BAD_ARGUMENT, "%s", "write: more values than elements");
    size_t es = mh_dtype_size(a->dtype);
    unsigned char *h = scratch(L, (size_t)n * es);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, 2, i);
        if (lua_type(L, -1) != LUA_TNUMBER) return glue_bad(L, "%s", "write: values must be numbers");
        char what[48];
        snprintf(what, sizeof what, "write: value %lld", (long long)i);
        set_value(L, a->dtype, h, (size_t)i - 1, what);
        lua_pop(L, 1);
    }
    mh_error e;
    if (mh_device_write(&a->dev->dev, a->addr, h, (uint64_t)n * es, &e)) return glue_raise(L, &e);
    return 0;
}

static int l_array_zero(lua_State *L)
{
    l_array *a = glue_check_array(L, 1);
    mh_error e;
    if (mh_device_memset(&a->dev->dev, a->addr, 0, a->count * mh_dtype_size(a->dtype), &e)) return glue_raise(L, &e);
    return 0;
}

/* a:compare(b, {atol=, rtol=}) -> {mismatches=, max_abs=, first=} */
static int l_array_compare(lua_State *L)
{
    l_array *a = glue_check_array(L, 1), *b = glue_check_array(L, 2);
    double atol = 0, rtol = 0;
    if (!lua_isnoneornil(L, 3)) {
        static const char *const keys[] = {"atol", "rtol", NULL};
        glue_check_table(L, 3, "compare's options", "{atol=, rtol=}");
        glue_check_keys(L, 3, "compare", keys);
        atol = glue_opt_number(L, 3, "compare", "atol", 0);
        rtol = glue_opt_number(L, 3, "compare", "rtol", 0);
        if (!(atol >= 0) || !(rtol >= 0)) return glue_bad(L, "%s", "compare: atol and rtol must be 0 or more");
    }
    if (a->count != b->count) return glue_fail(L, MH_E_BAD_ARGUMENT, "%s", "compare: arrays differ in length");
    unsigned char *ha = array_host(L, a), *hb = array_host(L, b);
    uint64_t bad = 0, first = 0;
    double max_abs = 0;
    for (uint64_t i = 0; i < a->count; i++) {
        double x = mh_dtype_get(a->dtype, ha, (size_t)i), y = mh_dtype_get(b->dtype, hb, (size_t)i);
        double d = fabs(x - y);
        if (d > max_abs || (isnan(d) && !isnan(max_abs))) max_abs = d;
        if (!(d <= atol + rtol * fabs(y))) {
            if (!bad) first = i + 1;
            bad++;
        }
    }
    lua_createtable(L, 0, 3);
    glue_set_int(L, -1, "mismatches", (lua_Integer)bad);
    glue_set_num(L, -1, "max_abs", max_abs);
    if (bad) glue_set_int(L, -1, "first", (lua_Integer)first);
    return 1;
}

/* core.struct{{type, value}, ...} -> string: the bytes of a C struct passed by
 * value (a kernel's .b8 name[N] parameter), fields at their natural alignment,
 * the size rounded up to the largest.  type: a dtype (value a number, or a
 * table of numbers for an array field) or "ptr" (an array's device address, or
 * 0 for a null pointer). */
static int l_struct(lua_State *L)
{
    glue_check_table(L, 1, "mgpu.struct's fields", "{{type, value}, ...}");
    unsigned char buf[4096] = {0}; /* padding bytes are zeros */
    size_t at = 0, maxal = 1;
    lua_Integer nf = luaL_len(L, 1);
    for (lua_Integer fi = 1; fi <= nf; fi++) {
        char what[48];
        snprintf(what, sizeof what, "struct field %lld", (long long)fi);
        lua_geti(L, 1, fi);
        if (!lua_istable(L, -1)) glue_bad(L, "%s must be {type, value}", what);
        lua_geti(L, -1, 1);
        const char *tn = lua_tostring(L, -1);
        lua_geti(L, -2, 2);                     /* value at -1, type at -2, field at -3 */
        int ptr = tn && !strcmp(tn, "ptr");
        mh_dtype t = MH_U64;
        if (!tn || (!ptr && mh_dtype_parse(tn, &t)))
            glue_bad(L, "%s: the type must be a dtype (f32 f16 bf16 f64 i8 u8 i16 u16 i32 u32 i64 u64) or ptr", what);
        size_t size = mh_dtype_size(t), n = lua_istable(L, -1) && !luaL_testudata(L, -1, ARRAY_MT) ? (size_t)luaL_len(L, -1) : 1;
        at = (at + size - 1) / size * size;
        if (size > maxal) maxal = size;
        if (n == 0 || n > (sizeof buf - at) / size)
            glue_bad(L, "%s: an empty array, or the struct is over 4 KiB", what);
        for (size_t i = 0; i < n; i++) {
            if (lua_istable(L, -1) && !luaL_testudata(L, -1, ARRAY_MT)) lua_geti(L, -1, (lua_Integer)i + 1);
            else lua_pushvalue(L, -1);
            l_array *a = ptr ? luaL_testudata(L, -1, ARRAY_MT) : NULL;
            int null = ptr && lua_type(L, -1) == LUA_TLIGHTUSERDATA && lua_touserdata(L, -1) == &glue_null_sentinel;
            if (a) {
                mh_dtype_set_int(MH_U64, buf + at, 0, (int64_t)a->addr);
            } else if (null || (ptr && lua_type(L, -1) == LUA_TNUMBER && lua_tonumber(L, -1) == 0)) {
                /* mgpu.null, 0 or 0.0: the zero bytes already there */
            } else if (ptr) {
                /* an integer address is no allocation the launch can check: a forged pointer */
                glue_bad(L, "%s: a ptr field takes an array (its device address), mgpu.null or 0 (a null pointer), not %s", what,
                         lua_isinteger(L, -1) ? "another integer (an address no array has)" : glue_typename(L, -1));
            } else if (glue_isint(L, -1) && !mh_dtype_is_float(t)) {
                lua_Integer v = lua_tointeger(L, -1);
                int bits = (int)size * 8, sgn = t == MH_I8 || t == MH_I16 || t == MH_I32 || t == MH_I64;
                int fits = bits == 64 || (sgn ? v >= -((lua_Integer)1 << (bits - 1)) && v < ((lua_Integer)1 << (bits - 1))
                                              : v >= 0 && v < ((lua_Integer)1 << bits));
                if (!fits) glue_bad(L, "%s: the value does not fit the field's type", what);
                mh_dtype_set_int(t, buf + at, 0, v);
            } else if (lua_type(L, -1) == LUA_TNUMBER && !ptr && mh_dtype_is_float(t)) {
                double x = lua_tonumber(L, -1);
                if (size == 4 && isfinite(x) && fabs(x) > 3.4028234663852886e38) /* FLT_MAX: it would be inf */
                    glue_bad(L, "%s: %g is beyond an f32's range (largest 3.4028235e38)", what, x);
                mh_dtype_set(t, buf + at, 0, x);
            } else {
                glue_bad(L, "%s: the value must be a number (an integer for an integer field), a table of "
                                   "them, or for ptr an array or an integer", what);
            }
            lua_pop(L, 1);
            at += size;
        }
        lua_pop(L, 3);
    }
    at = (at + maxal - 1) / maxal * maxal;
    lua_pushlstring(L, (const char *)buf, at);
    return 1;
}

const luaL_Reg glue_array_funcs[] = {{"struct", l_struct}, {NULL, NULL}};

void glue_open_array(lua_State *L)
{
    static const luaL_Reg meta[] = {{"__gc", l_array_gc}, {"__len", l_array_len}, {NULL, NULL}};
    static const luaL_Reg methods[] = {{"read", l_array_read},   {"write", l_array_write}, {"zero", l_array_zero},
                                       {"compare", l_array_compare}, {"ptr", l_array_ptr},   {"shape", l_array_shape},
                                       {"save", l_array_save},   {NULL, NULL}};
    glue_new_class(L, ARRAY_MT, meta, methods);
}
