/* runner.c - the embedded runner of mgpu-harness, as lua.c is Lua's: a Lua
 * state with the standard libraries, mgpu.core and the embedded lua/ sources
 * preloaded, `arg`, the script run in protected mode (an experiment file is
 * handed to mgpu.experiment), error values mapped to exit statuses, and
 * Ctrl-C turned into an `interrupted` error at the next Lua step.
 *
 * Errors: an error value (a table with a code) exits with its code's status
 * and is printed with the script line that raised it, "script.lua:12:
 * message [code]": the innermost frame that is the user's Lua (not C, not
 * the embedded lua/ library, whose chunks are "@[embedded] lua/...").  Any
 * other Lua error (error("..."), a syntax error, a bad index) is the user's
 * script failing: `script_error`, exit status 7, with its traceback; so is a
 * table with no code or a code the harness does not raise (error{}).  A
 * script file that cannot be read is an io_error (1).
 *
 * Ctrl-C: the first one is a stop request (base/stop.h) that emu's launch and
 * an output being written (base/out.h) poll, and a Lua hook that raises
 * `interrupted` at the next Lua step unless one of them has already turned
 * the request into an error (and consumed it); the second one removes the
 * temporaries of the outputs being written and ends the process as SIGINT
 * does. */
#define _POSIX_C_SOURCE 200809L /* sigaction */
#include "lua/glue.h"
#include "lua/lua_glue.h"
#include "base/out.h"
#include "base/stop.h"

#include <lualib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define WHERE_KEY "mgpu.runner.where" /* registry: where the uncaught error value was raised */

/* package.preload loader for an embedded module: upvalue 1 is its index. */
static int load_embedded(lua_State *L)
{
    const mh_embedded_lua *m = &mh_embedded_lua_modules[lua_tointeger(L, lua_upvalueindex(1))];
    char chunk[128];
    snprintf(chunk, sizeof chunk, "@[embedded] lua/%s.lua", m->module);
    if (luaL_loadbuffer(L, m->source, m->size, chunk) != LUA_OK) return lua_error(L);
    lua_pushstring(L, m->module);
    lua_call(L, 1, 1);
    return 1;
}

/* Records in the registry the innermost frame of the user's own Lua code
 * ("script.lua:12"): not C, not an embedded lua/ module, not a built-in
 * command's chunk (their sources do not start with '@' or are
 * "@[embedded] ..."). */
static void note_where(lua_State *L)
{
    lua_Debug ar;
    for (int level = 1; lua_getstack(L, level, &ar); level++) {
        if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0 || ar.source[0] != '@' ||
            !strncmp(ar.source, "@[embedded]", 11))
            continue;
        lua_pushfstring(L, "%s:%d", ar.short_src, ar.currentline);
        lua_setfield(L, LUA_REGISTRYINDEX, WHERE_KEY);
        return;
    }
}

/* The message handler: error values pass through (with where they came
 * from noted), anything else gets a traceback, the user's frames in it. */
static int traceback(lua_State *L)
{
    if (lua_type(L, 1) == LUA_TTABLE) {
        note_where(L);
        lua_settop(L, 1);
        return 1;
    }
    const char *msg = lua_tostring(L, 1);
    if (!msg) msg = luaL_tolstring(L, 1, NULL);
    luaL_traceback(L, L, msg, 1);
    return 1;
}

/* Runs the script in protected mode (called through lua_pcall). */
static int run_protected(lua_State *L)
{
    const char *path = lua_touserdata(L, 1);
    int argc = (int)lua_tointeger(L, 2);
    char **argv = lua_touserdata(L, 3);
    const char *code = lua_touserdata(L, 4); /* a built-in command's Lua code, or NULL */
    luaL_openlibs(L);
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
    lua_pushcfunction(L, luaopen_mgpu_core);
    lua_setfield(L, -2, "mgpu.core");
    for (lua_Integer i = 0; mh_embedded_lua_modules[i].module; i++) {
        lua_pushinteger(L, i);
        lua_pushcclosure(L, load_embedded, 1);
        lua_setfield(L, -2, mh_embedded_lua_modules[i].module);
    }
    lua_pop(L, 1);
    lua_createtable(L, argc, 1);
    lua_pushstring(L, path);
    lua_seti(L, -2, 0);
    for (int i = 0; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_seti(L, -2, i + 1);
    }
    lua_setglobal(L, "arg");
    lua_pushcfunction(L, traceback);
    int h = lua_gettop(L);
    int load = code ? luaL_loadbuffer(L, code, strlen(code), path) : luaL_loadfile(L, path);
    if (load == LUA_ERRFILE) { /* the script itself cannot be read: an I/O error, not a script error */
        mh_error e;
        mh_error_clear(&e);
        mh_fail(&e, MH_E_IO, "%s", lua_tostring(L, -1));
        return glue_raise(L, &e);
    }
    if (load != LUA_OK) return lua_error(L);
    for (int i = 0; i < argc; i++) lua_pushstring(L, argv[i]);
    if (lua_pcall(L, argc, 1, h) != LUA_OK) return lua_error(L);
    /* a script that returns a value is taken as an experiment: mgpu.experiment.main runs a table
     * that is one and refuses anything else (bad_argument); a plain script returns nothing */
    if (!code && !lua_isnil(L, -1)) {
        lua_getglobal(L, "require");
        lua_pushliteral(L, "mgpu.experiment");
        lua_call(L, 1, 1);
        lua_getfield(L, -1, "main");
        lua_pushvalue(L, -3);
        lua_getglobal(L, "arg");
        if (lua_pcall(L, 2, 1, h) != LUA_OK) return lua_error(L);
        lua_pushinteger(L, lua_tointeger(L, -1));
        return 1;
    }
    lua_pushinteger(L, lua_isinteger(L, -1) && code ? lua_tointeger(L, -1) : 0);
    return 1;
}

/* Ctrl-C (see the top of the file). */
static lua_State *interrupt_L;
static volatile sig_atomic_t sigints;

static void interrupt_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    lua_sethook(L, NULL, 0, 0);
    if (!mh_stop_requested()) return; /* a launch or an output already raised it as an error */
    mh_stop_clear();
    mh_error e;
    mh_error_clear(&e);
    mh_fail(&e, MH_E_INTERRUPTED, "interrupted (Ctrl-C)");
    glue_raise(L, &e);
}

static void on_sigint(int sig)
{
    if (sigints++ == 0 && interrupt_L) {
        mh_stop_request();
        lua_sethook(interrupt_L, interrupt_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
        return;
    }
    mh_out_unlink_temps(); /* the second one: nothing half-written stays behind */
    static const char msg[] = "\nmgpu-harness: interrupted again (a second Ctrl-C): stopping now, without finishing the "
                              "point; results.jsonl keeps the points that finished (--resume DIR runs the rest)\n";
    ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1); /* async-signal-safe */
    (void)w;
    signal(sig, SIG_DFL);
    raise(sig);
}

static int exit_status_for_code(const char *code)
{
    for (int c = 0; c < MH_E_COUNT_; c++)
        if (strcmp(code, mh_code_name((mh_code)c)) == 0) return mh_code_exit_status((mh_code)c);
    /* codes the Lua library raises: nvcc refusing a .cu is bad input, as a JIT error is */
    if (!strcmp(code, "compile_failed")) return mh_code_exit_status(MH_E_JIT_FAILED);
    if (!strcmp(code, "bad_results")) return mh_code_exit_status(MH_E_BAD_META); /* a results file: bad input */
    /* a failed check or expected count, a point whose worker died: a failed point's status */
    if (!strcmp(code, "check_failed") || !strcmp(code, "worker_lost")) return mh_code_exit_status(MH_E_SCRIPT_ERROR);
    /* a code the harness never raises: the script made it (error{code = 'mine'}), a script error */
    return mh_code_exit_status(MH_E_SCRIPT_ERROR);
}

/* Prints a plain Lua error: its first line (the message, with the place Lua
 * gave it) marked [script_error], then the rest (the traceback). */
static void print_script_error(const char *msg)
{
    const char *nl = strchr(msg, '\n');
    int first = nl ? (int)(nl - msg) : (int)strlen(msg);
    fprintf(stderr, "mgpu-harness: %.*s [%s]%s\n", first, msg, mh_code_name(MH_E_SCRIPT_ERROR), nl ? nl : "");
}

static int run_lua(const char *path, const char *code, int argc, char **argv)
{
    lua_State *L = luaL_newstate();
    if (!L) {
        fputs("mgpu-harness: cannot create a Lua state (out of memory)\n", stderr);
        return 1;
    }
    struct sigaction sa, old_sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    mh_stop_clear();
    sigints = 0;
    interrupt_L = L;
    sigaction(SIGINT, &sa, &old_sa);
    lua_pushcfunction(L, run_protected);
    lua_pushlightuserdata(L, (void *)path);
    lua_pushinteger(L, argc);
    lua_pushlightuserdata(L, argv);
    lua_pushlightuserdata(L, (void *)code);
    int status = 0;
    if (lua_pcall(L, 4, 1, 0) == LUA_OK) {
        status = (int)lua_tointeger(L, -1);
    } else {
        if (lua_type(L, -1) == LUA_TTABLE) {
            lua_getfield(L, -1, "code"); /* strings only: a number is no code */
            const char *ecode = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
            lua_getfield(L, -2, "message");
            const char *msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
            lua_getfield(L, LUA_REGISTRYINDEX, WHERE_KEY);
            const char *where = lua_tostring(L, -1);
            fprintf(stderr, "mgpu-harness: %s%s%s [%s]\n", where ? where : "", where ? ": " : "",
                    msg ? msg : "an error value with no message (a table without code= and message=)",
                    ecode ? ecode : mh_code_name(MH_E_SCRIPT_ERROR));
            /* a table without a code is the script's own error value: a script error */
            status = ecode ? exit_status_for_code(ecode) : mh_code_exit_status(MH_E_SCRIPT_ERROR);
        } else {
            const char *msg = lua_tostring(L, -1);
            print_script_error(msg ? msg : "(error object is not a string)");
            status = mh_code_exit_status(MH_E_SCRIPT_ERROR);
        }
    }
    sigaction(SIGINT, &old_sa, NULL);
    interrupt_L = NULL;
    mh_stop_clear();
    lua_close(L);
    return status;
}

int mh_lua_run_script(const char *path, int argc, char **argv) { return run_lua(path, NULL, argc, argv); }

int mh_lua_run_builtin(const char *name, const char *code, int argc, char **argv)
{
    return run_lua(name, code, argc, argv);
}


