/* glue_probe.c - what this machine has, for the Lua library's choices
 * (`--workers auto`: one worker per GPU on cuda, per core on emu):
 * core.probe() reports each backend as `mgpu-harness info` does, core.cpus()
 * the online cores. */
#include "lua/glue.h"
#include "backends.h"

#include <unistd.h>

static void push_facts(lua_State *L, const mh_device_facts *f)
{
    lua_createtable(L, 0, 8);
    glue_set_str(L, -1, "backend", f->backend ? f->backend : "?");
    glue_set_str(L, -1, "name", f->name);
    lua_pushfstring(L, "sm_%d%d", f->major, f->minor);
    lua_setfield(L, -2, "arch");
    glue_set_int(L, -1, "sms", (lua_Integer)f->sms);
    glue_set_num(L, -1, "clock_ghz", f->clock_ghz);
    glue_set_int(L, -1, "memory", (lua_Integer)f->memory);
    lua_pushboolean(L, f->virtual_time);
    lua_setfield(L, -2, "virtual_time");
}

/* core.probe([{driver = path}]) -> {emu = {available=, detail=, devices = {facts...}}, cuda = {...}} */
static int l_probe(lua_State *L)
{
    mh_device_opts o = {0};
    if (!lua_isnoneornil(L, 1)) {
        luaL_checktype(L, 1, LUA_TTABLE);
        static const char *const keys[] = {"driver", NULL};
        glue_check_keys(L, 1, "probe", keys);
        o.driver = glue_opt_string(L, 1, "probe", "driver", NULL);
    }
    lua_newtable(L);
    for (int b = 0; mh_backends[b]; b++) {
        mh_backend_probe *p = lua_newuserdatauv(L, sizeof *p, 0); /* large: the collector's */
        mh_backends[b]->probe(&o, p);
        lua_createtable(L, 0, 3);
        lua_pushboolean(L, p->available);
        lua_setfield(L, -2, "available");
        glue_set_str(L, -1, "detail", p->detail);
        lua_newtable(L);
        for (int i = 0; i < p->devices && i < MH_PROBE_MAX_DEVICES; i++) {
            push_facts(L, &p->facts[i]);
            if (p->device_error[i][0]) glue_set_str(L, -1, "error", p->device_error[i]);
            lua_rawseti(L, -2, i + 1);
        }
        lua_setfield(L, -2, "devices");
        lua_setfield(L, -3, mh_backends[b]->name);
        lua_pop(L, 1);
    }
    return 1;
}

static int l_cpus(lua_State *L)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    lua_pushinteger(L, n > 0 ? n : 1);
    return 1;
}

const luaL_Reg glue_probe_funcs[] = {{"probe", l_probe}, {"cpus", l_cpus}, {NULL, NULL}};
