/* glue_device.c - devices, modules and kernels of `mgpu.core`, for any
 * backend through launch/backend.h: core.device, dev:load, module:kernel,
 * kernel:info/params/device, dev:tensor_map.  Nothing here knows which
 * backend it talks to. */
#include "lua/glue.h"
#include "backends.h"
#include "base/demangle.h"
#include "launch/args.h"
#include "launch/tensor_map.h"
#include "emu/emu.h"
#include "emu/emu_occupancy.h"
#include "frontend/ptx_mma.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A compiled image rather than PTX: an ELF cubin or a fatbin (magic 0xBA55ED50). */
static int is_binary_image(const char *s, size_t n)
{
    if (n >= 4 && !memcmp(s, "\x7f" "ELF", 4)) return 1;
    return n >= 4 && (unsigned char)s[0] == 0x50 && (unsigned char)s[1] == 0xED && (unsigned char)s[2] == 0x55 &&
           (unsigned char)s[3] == 0xBA;
}

/* Pushes the whole file as a Lua string (held by Lua: an error later leaks nothing). */
static const char *push_file(lua_State *L, const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) glue_fail(L, MH_E_IO, "%s: cannot open", path);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    size_t n;
    do {
        char *p = luaL_prepbuffer(&b);
        n = fread(p, 1, LUAL_BUFFERSIZE, f);
        luaL_addsize(&b, n);
    } while (n == LUAL_BUFFERSIZE);
    int bad = ferror(f);
    fclose(f);
    if (bad) glue_fail(L, MH_E_IO, "%s: read error", path);
    luaL_pushresult(&b);
    return lua_tolstring(L, -1, len);
}

/* options.model_params (emu): {name = number, ...} into p (names held by the options table, on
 * the stack while the device opens); how many.  Which names and values are right is emu's to say
 * (emu_model.c names the parameters and their ranges). */
static uint32_t model_params(lua_State *L, int t, mh_emu_param *p)
{
    lua_getfield(L, t, "model_params");
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return 0;
    }
    glue_check_table(L, -1, "device.model_params", "{name = number, ...} (e.g. {l2_bytes_per_clk = 6000})");
    uint32_t n = 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        if (lua_type(L, -2) != LUA_TSTRING)
            glue_bad(L, "device.model_params: a key of type %s (parameters are named: {l2_bytes_per_clk = 6000})",
                     luaL_typename(L, -2));
        size_t klen;
        const char *k = lua_tolstring(L, -2, &klen);
        if (strlen(k) != klen) /* (C would read the name to its NUL: "l2_lat\0x" set l2_lat) */
            glue_bad(L, "device.model_params: a name holding a NUL byte ('%s\\0...')", k);
        if (lua_type(L, -1) != LUA_TNUMBER)
            glue_bad(L, "device.model_params.%s must be a number, not %s", k, luaL_typename(L, -1));
        if (n == MH_EMU_MAX_PARAMS) glue_bad(L, "device.model_params: more than %d parameters", MH_EMU_MAX_PARAMS);
        p[n].name = k;
        p[n].value = lua_tonumber(L, -1);
        n++;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return n;
}

/* core.device([kind [, {driver=, strict=, sms=, max_insns=, model=, model_params=, threads=}]]) -> device.  kind: "auto"
 * (default), "emu", "cuda", "cuda:N".  driver: another libcuda (tests use a fake one); strict (emu):
 * a read of a register nothing wrote stops the launch; sms (emu): virtual SMs (default: the
 * model's); max_insns (emu): the warp instructions one launch may run (a kernel_fault past them;
 * default: no limit); model (emu): the device model its virtual time comes from ("h200" by
 * default, "h100-sxm", "h100-pcie": core/emu/emu_model.c); model_params (emu): {name = number} that
 * model's parameters set otherwise (dev.model lists them; a what-if run or a re-fit); threads (emu): the workers a launch's SMs
 * run on, 1 to 1024 (default: $MGPU_EMU_THREADS, else the machine's cores; results do not depend on it). */
static int l_device_new(lua_State *L)
{
    const char *kind = luaL_optstring(L, 1, "auto");
    mh_emu_param params[MH_EMU_MAX_PARAMS];
    mh_device_opts o;
    memset(&o, 0, sizeof o);
    if (!lua_isnoneornil(L, 2)) {
        glue_check_table(L, 2, "device's options", "{driver=, strict=, sms=, max_insns=, model=, model_params=, threads=}");
        static const char *const keys[] = {"driver", "strict", "sms", "max_insns", "model", "model_params", "threads", NULL};
        glue_check_keys(L, 2, "device", keys);
        o.driver = glue_opt_string(L, 2, "device", "driver", NULL);
        o.strict = glue_opt_boolean(L, 2, "device", "strict", 0);
        o.sms = (uint32_t)glue_opt_integer(L, 2, "device", "sms", 0, 1, 100000); /* absent: the default */
        o.max_insns = (uint64_t)glue_opt_integer(L, 2, "device", "max_insns", 0, 0, LUA_MAXINTEGER);
        o.model = glue_opt_string(L, 2, "device", "model", NULL);
        if (o.model && !*o.model) glue_bad(L, "device.model is empty (models: %s; leave it out for %s)",
                                           mh_emu_model_names(), MH_EMU_DEFAULT_MODEL);
        o.threads = (uint32_t)glue_opt_integer(L, 2, "device", "threads", 0, 1, MH_EMU_MAX_THREADS);
        o.nmodel_params = model_params(L, 2, params);
        o.model_params = params;
        /* an explicit backend refuses the other's options (auto takes both: it may open either) */
        static const char *const emu_only[] = {"strict", "sms", "max_insns", "model", "model_params", "threads", NULL};
        int cuda = !strncmp(kind, "cuda", 4), emu = !strcmp(kind, "emu");
        for (int i = 0; cuda && emu_only[i]; i++) {
            lua_getfield(L, 2, emu_only[i]);
            if (!lua_isnil(L, -1))
                glue_bad(L, "device: %s is an option of emu, not of the %s backend (\"auto\" takes both)", emu_only[i], kind);
            lua_pop(L, 1);
        }
        if (emu && o.driver) glue_bad(L, "%s", "device: driver is an option of the cuda backend, not of emu (\"auto\" takes both)");
    }
    l_device *d = glue_new_object(L, sizeof *d, DEVICE_MT, 0);
    mh_error e;
    mh_error_clear(&e);
    if (mh_device_open(kind, &o, &d->dev, &e)) return glue_raise(L, &e);
    d->open = 1;
    return 1;
}

static int l_device_gc(lua_State *L)
{
    l_device *d = luaL_checkudata(L, 1, DEVICE_MT);
    if (d->open) mh_device_close(&d->dev);
    d->open = 0;
    return 0;
}

l_device *glue_check_device(lua_State *L, int i)
{
    l_device *d = luaL_checkudata(L, i, DEVICE_MT);
    if (!d->open) glue_bad(L, "%s", "device is closed");
    return d;
}

/* dev.model (emu): {name = "h100-sxm", <parameter> = value, ...}, every parameter model_params may
 * set with the value the device uses; nil on cuda */
static void push_model(lua_State *L, const mh_emu_model *m)
{
    if (!m) {
        lua_pushnil(L);
        return;
    }
    lua_newtable(L);
    lua_pushstring(L, m->name);
    lua_setfield(L, -2, "name");
    double v;
    const char *name;
    for (unsigned i = 0; (name = mh_emu_model_param(m, i, &v)); i++) {
        if (v == (double)(lua_Integer)v) lua_pushinteger(L, (lua_Integer)v);
        else lua_pushnumber(L, v);
        lua_setfield(L, -2, name);
    }
}

/* dev.backend, .name, .arch (what nvcc compiles .cu modules for), .sms, .clock_ghz (the clock
 * cycles convert with), .memory (bytes), .max_smem (dynamic shared memory per block), .model (emu:
 * its device model's parameters), or a method */
static int l_device_index(lua_State *L)
{
    l_device *d = glue_check_device(L, 1);
    const char *k = luaL_checkstring(L, 2);
    const mh_device_facts *f = &d->dev.facts;
    if (!strcmp(k, "backend")) lua_pushstring(L, f->backend);
    else if (!strcmp(k, "name")) lua_pushstring(L, f->name);
    else if (!strcmp(k, "clock_ghz")) lua_pushnumber(L, f->clock_ghz);
    else if (!strcmp(k, "arch")) lua_pushfstring(L, "sm_%d%d", f->major, f->minor);
    else if (!strcmp(k, "sms")) lua_pushinteger(L, (lua_Integer)f->sms);
    else if (!strcmp(k, "max_smem")) lua_pushinteger(L, (lua_Integer)f->max_smem);
    else if (!strcmp(k, "memory")) lua_pushinteger(L, (lua_Integer)f->memory);
    else if (!strcmp(k, "model")) push_model(L, f->model);
    else {
        luaL_getmetafield(L, 1, "methods");
        lua_getfield(L, -1, k);
    }
    return 1;
}

/* What dev:load was asked. */
typedef struct {
    const char *instrument, *sig_ptx;
    mh_scope scope;
    int opt_level, max_regs;
    const mh_probe *probes; /* probes = {...} (issue 15), read by read_probes; on the stack */
    uint32_t nprobes;
} load_opts;

/* probes = {{name=, kernel = true | loop = true or "LABEL" [, per = "loop"] | around = "mnemonic" |
 * from =, to = (labels, or PTX lines)}, ...}: into a userdata left on the stack (the strings stay
 * in the table, which the caller's stack holds too).  who begins the messages: "load", or the
 * file of `instrument --probes` (glue_probes_file.c). */
const mh_probe *glue_read_probes(lua_State *L, int t, const char *who, uint32_t *n)
{
    static const char *const keys[] = {"name", "role", "kernel", "loop", "per", "around", "from", "to", NULL};
    if (!lua_istable(L, t)) glue_bad(L, "%s: probes must be a list of tables {name =, kernel = true | loop = | around = | from =, to =}", who);
    size_t len = lua_rawlen(L, t), keys_n = 0;
    if (len > 4096) glue_bad(L, "%s: more than 4096 probes", who);
    lua_pushnil(L); /* a list: 1..n and nothing else (with a hole, # stops short and drops probes) */
    while (lua_next(L, t)) {
        keys_n++;
        lua_pop(L, 1);
    }
    if (keys_n != len)
        glue_bad(L, "%s: probes must be a list {{...}, {...}} without holes or names (%zu entries, %zu in sequence)",
                 who, keys_n, len);
    mh_probe *p = lua_newuserdatauv(L, (len ? len : 1) * sizeof *p, 0);
    for (size_t i = 0; i < len; i++) {
        char what[40], full[300]; /* full: what with who before it, for the option readers' own messages */
        snprintf(what, sizeof what, "probes[%zu]", i + 1);
        snprintf(full, sizeof full, "%s: %s", who, what);
        lua_rawgeti(L, t, (lua_Integer)i + 1);
        int q = lua_gettop(L);
        if (!lua_istable(L, q)) glue_bad(L, "%s: %s must be a table {name =, ...}", who, what);
        glue_check_keys(L, q, full, keys);
        memset(&p[i], 0, sizeof p[i]);
        p[i].name = glue_opt_string(L, q, full, "name", NULL);
        const char *role = glue_opt_string(L, q, full, "role", NULL);
        if (role && p[i].name) glue_bad(L, "%s: %s has a name and a role: a probe is a region (name =) or a role (role =)", who, what);
        if (role && !mh_role_name_ok(role, strlen(role)))
            glue_bad(L, "%s: %s.role: bad role name \"%.80s\": a role is one word of letters, digits, '_', '-' and '.', at "
                     "most %d characters (\"producer\")", who, what, role, MH_ROLE_MAX);
        if (role) p[i].name = role;
        if (!p[i].name || !*p[i].name || strpbrk(p[i].name, "\n\r\"")) glue_bad(L, "%s: %s.name must be a region name (one line, no quotes)", who, what);
        int kinds = 0;
        lua_getfield(L, q, "kernel");
        if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TBOOLEAN)
            glue_bad(L, "%s: %s.kernel must be true, got %s", who, what, glue_typename(L, -1));
        if (lua_toboolean(L, -1)) p[i].kind = MH_PROBE_KERNEL, kinds++;
        lua_getfield(L, q, "loop");
        if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TBOOLEAN && lua_type(L, -1) != LUA_TSTRING)
            glue_bad(L, "%s: %s.loop must be true or a label or pattern, got %s", who, what, glue_typename(L, -1));
        if (lua_type(L, -1) == LUA_TSTRING) p[i].kind = MH_PROBE_LOOP, p[i].loop = lua_tostring(L, -1), kinds++;
        else if (lua_toboolean(L, -1)) p[i].kind = MH_PROBE_LOOP, kinds++;
        lua_pop(L, 2);
        const char *per = glue_opt_string(L, q, full, "per", NULL);
        if (per && strcmp(per, "loop") && strcmp(per, "iteration")) glue_bad(L, "%s: %s.per must be \"loop\" or \"iteration\"", who, what);
        p[i].per_loop = per && !strcmp(per, "loop");
        if ((p[i].around = glue_opt_string(L, q, full, "around", NULL))) p[i].kind = MH_PROBE_AROUND, kinds++;
        for (int k = 0; k < 2; k++) {
            lua_getfield(L, q, k ? "to" : "from");
            if (lua_type(L, -1) == LUA_TNUMBER) {
                lua_Integer v = lua_tointeger(L, -1);
                if (v < 1 || v > UINT32_MAX) glue_bad(L, "%s: %s.%s must be a label or a line number", who, what, k ? "to" : "from");
                *(k ? &p[i].to_line : &p[i].from_line) = (uint32_t)v;
            } else if (!lua_isnil(L, -1)) *(k ? &p[i].to : &p[i].from) = glue_opt_string(L, q, full, k ? "to" : "from", NULL);
            lua_pop(L, 1);
        }
        int range = p[i].from || p[i].from_line || p[i].to || p[i].to_line;
        if (range) p[i].kind = MH_PROBE_RANGE, kinds++;
        if (range && (!(p[i].from || p[i].from_line) || !(p[i].to || p[i].to_line) || !p[i].from != !p[i].to))
            glue_bad(L, "%s: %s: from and to must both be labels or both be lines", who, what);
        if (kinds != 1) glue_bad(L, "%s: %s must have one of kernel = true, loop =, around =, from = / to =", who, what);
        if (per && p[i].kind != MH_PROBE_LOOP) glue_bad(L, "%s: %s.per is for loop probes", who, what);
        if (role && p[i].kind != MH_PROBE_AROUND)
            glue_bad(L, "%s: %s: a role probe takes around = MNEMONIC, the instruction the lane takes its role at "
                     "(\"setmaxnreg.dec\" for a producer)", who, what);
        if (role) p[i].kind = MH_PROBE_ROLE;
        lua_pop(L, 1);
    }
    *n = (uint32_t)len;
    return p;
}

static void read_load_opts(lua_State *L, int t, int in_source_table, load_opts *o)
{
    static const char *const keys[] = {"instrument", "ptx", "opt_level", "max_registers", "arch", "nvcc_flags", "probes",
                                       NULL},
                             *const src_keys[] = {"source", "name", "instrument", "ptx", "opt_level", "max_registers",
                                                  "probes", NULL},
                             *const scopes[] = {"warp", "warpgroup", NULL};
    memset(o, 0, sizeof *o);
    o->opt_level = 4;
    o->scope = MH_SCOPE_WARP;
    if (!t) return;
    glue_check_keys(L, t, "load", in_source_table ? src_keys : keys);
    int sc = glue_opt_choice(L, t, "load", "instrument", -1, scopes);
    if (sc >= 0) {
        o->instrument = scopes[sc];
        o->scope = sc == 0 ? MH_SCOPE_WARP : MH_SCOPE_WARPGROUP;
    }
    o->sig_ptx = glue_opt_string(L, t, "load", "ptx", NULL);
    o->opt_level = (int)glue_opt_integer(L, t, "load", "opt_level", 4, 0, 4);      /* cuda JIT */
    o->max_regs = (int)glue_opt_integer(L, t, "load", "max_registers", 0, 0, 255); /* cuda JIT, 0 = no cap */
    lua_getfield(L, t, "probes"); /* stays on the stack (with the probes read from it) while the load runs */
    if (lua_isnil(L, -1)) lua_pop(L, 1);
    else {
        if (!o->instrument) glue_bad(L, "%s", "load: probes need instrument = \"warp\" or \"warpgroup\"");
        o->probes = glue_read_probes(L, lua_gettop(L), "load", &o->nprobes);
    }
}

/* A .cu file: nvcc makes the PTX (lua/mgpu/nvcc.lua); pushes its path and text. */
static const char *compile_cu(lua_State *L, int opts, size_t *len, const char **path)
{
    lua_getglobal(L, "require");
    lua_pushliteral(L, "mgpu.nvcc");
    lua_call(L, 1, 1);
    lua_getfield(L, -1, "compile");
    lua_pushvalue(L, 2);
    lua_createtable(L, 0, 2);
    if (opts) {
        lua_getfield(L, opts, "arch");
        lua_setfield(L, -2, "arch");
        lua_getfield(L, opts, "nvcc_flags");
        lua_setfield(L, -2, "nvcc_flags");
    }
    lua_getfield(L, -1, "arch");
    if (lua_isnil(L, -1)) { /* the device's architecture (dev.arch) */
        lua_getfield(L, 1, "arch");
        lua_setfield(L, -3, "arch");
    }
    lua_pop(L, 1);
    lua_call(L, 2, 2); /* -> PTX path, PTX text (both stay on the stack while used) */
    *path = lua_tostring(L, -2);
    return lua_tolstring(L, -1, len);
}

/* Rewrites the markers of m and parses the rewritten text in its place. */
static void instrument_module(lua_State *L, l_module *m, const load_opts *o, const char *path)
{
    mh_error e;
    mh_error_clear(&e);
    /* a kernel with neither markers nor probes gets the kernel probe (issue 15) */
    /* aligned records: one st.global.v2.u32 per event (the launch hands the buffer at 8-aligned + 4) */
    mh_instrument_opts io = {.scope = o->scope, .probes = o->probes, .nprobes = o->nprobes, .kernel_probe = 1,
                             .aligned = 1};
    if (mh_instrument_with(&m->m, &io, &m->r, &e)) glue_raise(L, &e);
    m->instrumented = 1;
    m->scope = o->scope;
    if (!m->r.markers && !m->r.probe_points) return;
    mh_ptx_module inst;
    if (mh_ptx_parse(&inst, m->r.text, m->r.len, path, &e)) glue_raise(L, &e);
    /* messages (emu faults, strict mode) name lines of the file the user has */
    for (uint32_t fi = 0; fi < inst.nfuncs; fi++)
        for (uint32_t i = 0; i < inst.funcs[fi].ncode; i++)
            inst.funcs[fi].code[i].line = mh_instrumented_line(&m->r, inst.funcs[fi].code[i].line, NULL);
    mh_ptx_free(&m->m);
    m->m = inst;
}

/* A build error names a line of the text the backend compiled: of an instrumented module, say
 * which line of the user's file that is. */
static void map_build_error(const l_module *m, mh_error *e)
{
    if (!m->instrumented || (!m->r.markers && !m->r.probe_points) || e->line <= 0) return;
    int added;
    uint32_t orig = mh_instrumented_line(&m->r, (uint32_t)e->line, &added);
    char note[160];
    snprintf(note, sizeof note, "\n(line %lld of the instrumented module is %sline %u of %.60s)", (long long)e->line,
             added ? "code the instrumentation added at " : "", orig, m->m.path);
    size_t used = strlen(e->message);
    snprintf(e->message + used, sizeof e->message - used, "%s", note);
    e->line = orig;
}

/* dev:load(path [, {instrument = "warp"|"warpgroup", ptx = path, opt_level=, max_registers=, arch=,
 * nvcc_flags=}]) or dev:load({source=, name=, instrument=, ...}) -> module.  A cubin or fatbin
 * (cuda only) is loaded as it is and needs the PTX it was built from (ptx = path) for the
 * kernels' signatures.  A .cu file is compiled to PTX by nvcc first (lua/mgpu/nvcc.lua). */
static int l_device_load(lua_State *L)
{
    l_device *d = glue_check_device(L, 1);
    int from_source = lua_istable(L, 2);
    if (!from_source && lua_type(L, 2) != LUA_TSTRING)
        glue_bad(L, "load takes a path or a table {source=, name=, ...}, got %s", glue_typename(L, 2));
    if (!lua_isnoneornil(L, 3)) {
        glue_check_table(L, 3, "load's options", "{instrument=, probes=, ...}");
    }
    int opts = lua_istable(L, 3) ? 3 : from_source ? 2 : 0;
    load_opts o;
    read_load_opts(L, opts, opts == 2, &o);
    const char *path, *source, *image = NULL;
    size_t len = 0, image_len = 0;
    if (from_source) {
        lua_getfield(L, 2, "source");
        source = lua_tolstring(L, -1, &len);
        if (lua_type(L, -1) != LUA_TSTRING) glue_bad(L, "%s", "load{source=...}: source must be the PTX text");
        path = glue_opt_string(L, 2, "load", "name", "<string>");
    } else {
        path = luaL_checkstring(L, 2);
        size_t pl = strlen(path);
        if (pl > 3 && !strcmp(path + pl - 3, ".cu")) source = compile_cu(L, opts, &len, &path);
        else source = push_file(L, path, &len);
    }
    if (is_binary_image(source, len)) {
        mh_error e;
        mh_error_clear(&e);
        if (mh_device_takes_images(&d->dev, path, &e)) return glue_raise(L, &e);
        if (o.instrument) return glue_bad(L, "%s: a cubin/fatbin cannot be instrumented: load its PTX", path);
        if (!o.sig_ptx)
            return glue_bad(L, "%s: a cubin/fatbin needs the PTX it was built from for the kernels' signatures: "
                            "load(path, {ptx = \"kernel.ptx\"})", path);
        image = source; /* stays on the Lua stack while the backend copies it */
        image_len = len;
        path = o.sig_ptx;
        source = push_file(L, path, &len);
    }
    l_module *m = glue_new_object(L, sizeof *m, MODULE_MT, 1);
    mh_error e;
    mh_error_clear(&e);
    if (mh_ptx_parse(&m->m, source, len, path, &e)) return glue_raise(L, &e);
    m->loaded = 1;
    if (o.instrument) instrument_module(L, m, &o, path);
    mh_module_source src = {.ptx = &m->m, .image = image, .image_len = image_len, .opt_level = o.opt_level,
                            .max_regs = o.max_regs};
    /* emu builds nothing: each kernel is checked when it is taken (module:kernel), so one it
     * cannot run does not keep the module's others from running */
    if (mh_device_module_load(&d->dev, &src, &m->bm, &e)) {
        map_build_error(m, &e);
        return glue_raise(L, &e);
    }
    return 1;
}

/* The device of the module at index i (its uservalue), pushed. */
static l_device *module_device(lua_State *L, int i)
{
    lua_getiuservalue(L, i, 1);
    return luaL_checkudata(L, -1, DEVICE_MT);
}

static int l_module_gc(lua_State *L)
{
    l_module *m = luaL_checkudata(L, 1, MODULE_MT);
    if (m->bm) {
        l_device *d = module_device(L, 1);
        if (d->open) mh_device_module_free(&d->dev, m->bm);
    }
    m->bm = NULL;
    if (m->loaded) mh_ptx_free(&m->m);
    if (m->instrumented) mh_instrumented_free(&m->r);
    m->loaded = m->instrumented = 0;
    return 0;
}

/* A module that can be used: not closed (collected, or its __gc called by hand). */
static l_module *check_module(lua_State *L, int i)
{
    l_module *m = luaL_checkudata(L, i, MODULE_MT);
    if (!m->loaded) glue_bad(L, "%s", "the module is closed");
    return m;
}

static int l_module_kernel(lua_State *L)
{
    l_module *m = check_module(L, 1);
    const char *name = luaL_checkstring(L, 2);
    const mh_ptx_func *f = mh_ptx_find(&m->m, name);
    mh_error e;
    mh_error_clear(&e);
    if (!f || !f->is_entry) {
        mh_fail(&e, MH_E_NOT_FOUND, "%s: no kernel named \"%s\"", m->m.path, name);
        return glue_raise(L, &e);
    }
    l_device *d = module_device(L, 1);
    lua_pop(L, 1);
    if (mh_device_kernel_check(&d->dev, &m->m, f, &e)) return glue_raise(L, &e);
    l_kernel *k = glue_new_object(L, sizeof *k, KERNEL_MT, 1);
    k->f = f;
    return 1;
}

static int l_module_kernels(lua_State *L)
{
    l_module *m = check_module(L, 1);
    lua_newtable(L);
    lua_Integer n = 0;
    for (uint32_t i = 0; i < m->m.nfuncs; i++)
        if (m->m.funcs[i].is_entry && m->m.funcs[i].defined) {
            lua_pushstring(L, m->m.funcs[i].name);
            lua_seti(L, -2, ++n);
        }
    return 1;
}

l_module *glue_kernel_module(lua_State *L, int k)
{
    lua_getiuservalue(L, k, 1);
    l_module *m = check_module(L, lua_gettop(L));
    lua_getiuservalue(L, -1, 1);
    l_device *d = luaL_checkudata(L, -1, DEVICE_MT);
    if (!d->open) glue_bad(L, "%s", "the kernel's device is closed");
    lua_pop(L, 1);
    return m;
}

int glue_kernel_instrumented(const l_module *m, const mh_ptx_func *f)
{
    return m->instrumented && mh_instrumented_has(&m->r, f->name);
}

/* k:device() -> the device it was loaded on */
static int l_kernel_device(lua_State *L)
{
    luaL_checkudata(L, 1, KERNEL_MT);
    glue_kernel_module(L, 1);
    lua_getiuservalue(L, -1, 1);
    return 1;
}

/* k:info() -> {name=, demangled=, registers=, static_smem=, local_bytes=, max_threads=, backend=, jit_target=,
 * registers_from=, spill_stores=, spill_loads=, stack=, ptx_registers=, note=, setmaxnreg=}
 * cuda: what the driver compiled, and jit_target ("compute_90a": compiled for that
 * architecture-specific target; "context": for the device's); emu: what ptxas says (registers,
 * spills, stack) where ptxas is installed; without it registers is nil and note says why (the
 * PTX's virtual registers, ptx_registers, say nothing about a GPU's).
 * k:info{block = 256, smem = 0} adds occupancy = {blocks_per_sm=, warps_per_sm=, percent=,
 * limited_by=, limits = {warps=, blocks=, registers=, shared_memory=}, smem_per_block=,
 * registers_per_block=}: sm_90's, as the CUDA occupancy calculator computes it (registers
 * left out of the limits when unknown). */
static int l_kernel_info(lua_State *L)
{
    l_kernel *k = luaL_checkudata(L, 1, KERNEL_MT);
    uint32_t block[3] = {0, 0, 0};
    lua_Integer smem = 0;
    int occ = !lua_isnoneornil(L, 2);
    if (occ) {
        static const char *const keys[] = {"block", "smem", NULL};
        glue_check_table(L, 2, "kernel:info's options", "{block=, smem=}");
        glue_check_keys(L, 2, "info", keys);
        lua_getfield(L, 2, "block");
        int has_block = !lua_isnil(L, -1);
        lua_pop(L, 1);
        if (!has_block) return glue_bad(L, "%s", "info: block = threads per block (a number or {x, y, z}) is needed "
                                        "for the occupancy");
        glue_opt_dims32(L, 2, "info", "block", block);
        smem = glue_opt_integer(L, 2, "info", "smem", 0, 0, UINT32_MAX);
    }
    lua_settop(L, 1);
    l_module *m = glue_kernel_module(L, 1);
    l_device *d = module_device(L, -1);
    mh_kernel_facts kf;
    mh_error e;
    mh_error_clear(&e);
    if (mh_device_kernel_facts(&d->dev, m->bm, k->f, &kf, &e)) return glue_raise(L, &e);
    lua_createtable(L, 0, 14);
    /* the kernel's full name, once: as in the PTX, and demangled (messages give a short one) */
    glue_set_str(L, -1, "name", k->f->name);
    char *demangled = mh_demangle(k->f->name);
    if (demangled) glue_set_str(L, -1, "demangled", demangled);
    free(demangled);
    if (!kf.regs_unknown) glue_set_int(L, -1, "registers", kf.regs);
    if (!kf.regs_unknown) glue_set_str(L, -1, "registers_from", kf.regs_from ? kf.regs_from : "driver");
    if (kf.ptx_regs) glue_set_int(L, -1, "ptx_registers", kf.ptx_regs);
    if (kf.spill_stores >= 0 && !kf.regs_unknown) glue_set_int(L, -1, "spill_stores", kf.spill_stores);
    if (kf.spill_loads >= 0 && !kf.regs_unknown) glue_set_int(L, -1, "spill_loads", kf.spill_loads);
    if (kf.stack_bytes >= 0 && !kf.regs_unknown) glue_set_int(L, -1, "stack", kf.stack_bytes);
    if (kf.note[0]) glue_set_str(L, -1, "note", kf.note);
    glue_set_int(L, -1, "static_smem", kf.static_smem);
    glue_set_int(L, -1, "local_bytes", kf.local_bytes);
    glue_set_int(L, -1, "max_threads", kf.max_threads);
    if (kf.jit_target) glue_set_str(L, -1, "jit_target", kf.jit_target);
    glue_set_str(L, -1, "backend", d->dev.facts.backend);
    /* setmaxnreg = {{op = "dec"|"inc", count = N, line = L}, ...}: the kernel's own, in code order
     * (the occupancy is the launch count's; setmaxnreg moves registers between its warpgroups) */
    int nset = 0;
    for (uint32_t i = 0; i < k->f->ncode; i++) {
        const mh_ptx_insn *in = &k->f->code[i];
        if (in->op != MH_OP_MMA || in->callee < 0 || (uint32_t)in->callee >= m->m.nmma) continue;
        const mh_ptx_mma *r = &m->m.mma[in->callee];
        if (r->kind != MH_MMA_SETMAXNREG) continue;
        if (!nset++) {
            lua_newtable(L);
            lua_pushvalue(L, -1);
            lua_setfield(L, -3, "setmaxnreg");
        }
        lua_createtable(L, 0, 3);
        glue_set_str(L, -1, "op", r->inc ? "inc" : "dec");
        glue_set_int(L, -1, "count", r->imm);
        glue_set_int(L, -1, "line", in->line);
        lua_rawseti(L, -2, nset);
    }
    if (nset) lua_pop(L, 1);
    if (occ) {
        uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
        if (threads > 1024) return glue_bad(L, "info: a block of %llu threads (at most 1024)", (unsigned long long)threads);
        mh_occupancy o;
        mh_occupancy_sm90(kf.regs_unknown ? 0 : kf.regs, (uint64_t)kf.static_smem + (uint64_t)smem, (uint32_t)threads, &o);
        lua_createtable(L, 0, 8);
        glue_set_int(L, -1, "blocks_per_sm", o.blocks_per_sm);
        glue_set_int(L, -1, "warps_per_sm", o.warps_per_sm);
        glue_set_num(L, -1, "percent", 100.0 * o.occupancy); /* theoretical: warps per SM of the 64 */
        glue_set_str(L, -1, "limited_by", o.limited_by);
        glue_set_int(L, -1, "smem_per_block", (lua_Integer)o.smem_per_block);
        if (o.regs_per_block) glue_set_int(L, -1, "registers_per_block", o.regs_per_block);
        lua_createtable(L, 0, 4);
        glue_set_int(L, -1, "warps", o.by_warps);
        glue_set_int(L, -1, "blocks", o.by_blocks);
        if (o.by_regs >= 0) glue_set_int(L, -1, "registers", o.by_regs);
        glue_set_int(L, -1, "shared_memory", o.by_smem);
        lua_setfield(L, -2, "limits");
        lua_setfield(L, -2, "occupancy");
    }
    return 1;
}

static int l_kernel_params(lua_State *L)
{
    l_kernel *k = luaL_checkudata(L, 1, KERNEL_MT);
    l_module *m = glue_kernel_module(L, 1);
    uint32_t shown = k->f->nparams - (glue_kernel_instrumented(m, k->f) ? MH_INSTRUMENT_PARAMS : 0);
    lua_newtable(L);
    for (uint32_t i = 0; i < shown; i++) {
        const mh_ptx_param *p = &k->f->params[i];
        lua_createtable(L, 0, 6);
        glue_set_str(L, -1, "name", p->name);
        glue_set_str(L, -1, "type", mh_ptx_type_name(p->type));
        glue_set_int(L, -1, "size", p->size);
        glue_set_int(L, -1, "align", p->align);
        lua_pushboolean(L, p->is_ptr);
        lua_setfield(L, -2, "ptr");
        lua_pushboolean(L, mh_param_is_aggregate(p)); /* a struct by value: pass its bytes */
        lua_setfield(L, -2, "aggregate");
        lua_seti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

/* A tensor-map option naming one of choices, through the tensor map's own parser (nil: def). */
static int tmap_choice(lua_State *L, const char *k, int (*parse)(const char *), int def, const char *const *choices)
{
    int i = glue_opt_choice(L, 3, "tensor map:", k, -1, choices);
    return i < 0 ? def : parse(choices[i]);
}

/* dev:tensor_map(array, {box = {...}, dims =, strides =, element_strides =, swizzle =, interleave =,
 * l2 =, oob =, data_type =, offset =}) -> a tensor map (glue_tmap.c: the 128 bytes of a CUtensorMap,
 * keeping the array alive) for a kernel's __grid_constant__ parameter.  Dimensions are innermost first (the array's shape reversed,
 * by default), strides in bytes for dimensions 2.. (contiguous by default); data_type: cuda.h's
 * CUtensorMapDataType by name (default: the array's element type's); offset: bytes from the array's
 * start to element 0 (default 0).  The Driver API's rules checked before the driver is asked. */
static int l_device_tensor_map(lua_State *L)
{
    l_device *d = glue_check_device(L, 1);
    l_array *a = glue_check_array(L, 2);
    glue_check_table(L, 3, "tensor_map's options", "{...}");
    static const char *const keys[] = {"box", "dims", "strides", "element_strides", "swizzle", "interleave", "l2",
                                       "oob", "data_type", "offset", NULL};
    static const char *const interleaves[] = {"none", "16B", "32B", NULL}, *const swizzles[] = {"none", "32B", "64B", "128B", NULL},
                             *const l2s[] = {"none", "64B", "128B", "256B", NULL}, *const oobs[] = {"zero", "nan", NULL};
    glue_check_keys(L, 3, "tensor map", keys);
    if (a->dev != d) return glue_bad(L, "%s", "tensor map: the array is on another device");
    if (a->gen != mh_device_generation(&d->dev))
        return glue_bad(L, "%s", "tensor map: the array is from before a fault reset the device");
    mh_tensor_map_spec s;
    memset(&s, 0, sizeof s);
    uint64_t array_bytes = a->count * mh_dtype_size(a->dtype);
    lua_getfield(L, 3, "data_type");
    int named = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (named) {
        const char *t = glue_opt_string(L, 3, "tensor map:", "data_type", NULL);
        if ((s.data_type = mh_tensor_map_type(t)) < 0)
            return glue_bad(L, "tensor map: data_type = \"%s\" (uint8, uint16, uint32, int32, uint64, int64, float16, "
                            "float32, float64, bfloat16, float32_ftz, tfloat32, tfloat32_ftz, 16u4_align8b, 16u4_align16b, "
                            "16u6_align16b)", t);
    } else if ((s.data_type = mh_tensor_map_data_type(a->dtype)) < 0) {
        return glue_bad(L, "tensor map: an array of %s has no TMA data type of its own: name one with data_type =",
                        mh_dtype_name(a->dtype));
    }
    unsigned bits = mh_tensor_map_elem_bits(s.data_type);
    s.elem_size = bits % 8 ? 0 : bits / 8;
    s.offset = (uint64_t)glue_opt_integer(L, 3, "tensor map:", "offset", 0, 0, LUA_MAXINTEGER);
    if (s.offset >= array_bytes)
        return glue_bad(L, "tensor map: offset = %llu bytes, at or past the end of the array's %llu",
                        (unsigned long long)s.offset, (unsigned long long)array_bytes);
    s.address = a->addr + s.offset;
    s.bytes = array_bytes - s.offset;
    int n = 0, nb = 0, ns = 0, ne = 0;
    glue_opt_uint_list(L, 3, "tensor map:", "dims", s.dims, MH_TMAP_MAX_RANK, &n);
    if (!n && bits != 8 * mh_dtype_size(a->dtype))
        return glue_bad(L, "tensor map: data_type = \"%s\" has elements of %u bits, the array's (%s) %u: give dims (in "
                        "the map's elements)", mh_tensor_map_type_name(s.data_type), bits, mh_dtype_name(a->dtype),
                        (unsigned)(8 * mh_dtype_size(a->dtype)));
    if (!n) { /* the array's shape, innermost first */
        if (a->ndim > MH_TMAP_MAX_RANK)
            return glue_bad(L, "tensor map: the array has %d dimensions, TMA takes up to %d", a->ndim, MH_TMAP_MAX_RANK);
        n = a->ndim;
        for (int i = 0; i < n; i++) s.dims[i] = a->dims[n - 1 - i];
    }
    s.rank = (uint32_t)n;
    uint64_t v[MH_TMAP_MAX_RANK];
    glue_opt_uint_list(L, 3, "tensor map:", "box", v, MH_TMAP_MAX_RANK, &nb);
    if (nb != n)
        return glue_bad(L, "tensor map: box needs %d entries (one per dimension, innermost first), got %d", n, nb);
    for (int i = 0; i < n; i++) s.box[i] = v[i] > 256 ? 257 : (uint32_t)v[i];
    glue_opt_uint_list(L, 3, "tensor map:", "element_strides", v, MH_TMAP_MAX_RANK, &ne);
    if (ne && ne != n) return glue_bad(L, "tensor map: element_strides needs %d entries", n);
    for (int i = 0; i < n; i++) s.elem_strides[i] = ne ? (v[i] > 8 ? 9 : (uint32_t)v[i]) : 1;
    glue_opt_uint_list(L, 3, "tensor map:", "strides", s.strides, MH_TMAP_MAX_RANK - 1, &ns);
    if (ns && ns != n - 1)
        return glue_bad(L, "tensor map: strides needs %d entries (bytes, dimensions 2 to %d)", n - 1, n);
    if (!ns) mh_tensor_map_contiguous(&s);
    s.interleave = tmap_choice(L, "interleave", mh_tensor_map_interleave, MH_TMAP_INTERLEAVE_NONE, interleaves);
    s.swizzle = tmap_choice(L, "swizzle", mh_tensor_map_swizzle, MH_TMAP_SWIZZLE_NONE, swizzles);
    s.l2 = tmap_choice(L, "l2", mh_tensor_map_l2, MH_TMAP_L2_NONE, l2s);
    s.oob = tmap_choice(L, "oob", mh_tensor_map_oob, MH_TMAP_OOB_ZERO, oobs);
    mh_error e;
    mh_error_clear(&e);
    if (mh_tensor_map_check(&s, &e)) return glue_raise(L, &e);
    unsigned char map[MH_TMAP_BYTES];
    if (mh_device_tensor_map(&d->dev, &s, map, &e)) return glue_raise(L, &e);
    glue_push_tensor_map(L, map, 2); /* it keeps the array alive (glue_tmap.c) */
    return 1;
}

const luaL_Reg glue_device_funcs[] = {{"device", l_device_new}, {NULL, NULL}};

void glue_open_device(lua_State *L)
{
    static const luaL_Reg device_meta[] = {{"__gc", l_device_gc}, {"__index", l_device_index}, {NULL, NULL}};
    static const luaL_Reg device_methods[] = {{"load", l_device_load}, {"array", glue_array_new},
                                              {"load_npy", glue_array_load_npy}, {"tensor_map", l_device_tensor_map},
                                              {NULL, NULL}};
    static const luaL_Reg module_meta[] = {{"__gc", l_module_gc}, {NULL, NULL}};
    static const luaL_Reg module_methods[] = {{"kernel", l_module_kernel}, {"kernels", l_module_kernels}, {NULL, NULL}};
    static const luaL_Reg kernel_meta[] = {{NULL, NULL}};
    static const luaL_Reg kernel_methods[] = {{"launch", glue_kernel_launch}, {"params", l_kernel_params},
                                              {"info", l_kernel_info}, {"device", l_kernel_device}, {NULL, NULL}};
    glue_new_class(L, DEVICE_MT, device_meta, device_methods);
    glue_new_class(L, MODULE_MT, module_meta, module_methods);
    glue_new_class(L, KERNEL_MT, kernel_meta, kernel_methods);
}
