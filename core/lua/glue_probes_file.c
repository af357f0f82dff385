/* glue_probes_file.c - the probe list of `mgpu-harness instrument --probes FILE`: FILE.json (a JSON
 * array of probe objects) or FILE.lua (a Lua file returning the list), decoded into a Lua table in
 * a state of its own and checked by the one reader of dev:load's probes (glue_read_probes), so the
 * command line and the Lua API take the same probes with the same messages.  A .lua file runs in
 * a child process under alarm() and RLIMIT_CPU, which no pcall loop or __gc finalizer can catch
 * (issue 36); the child sends the probes it read back as JSON, read as a .json file's. */
#define _GNU_SOURCE
#include "lua/glue.h"
#include "lua/lua_glue.h"
#include <lualib.h>
#include "base/read_file.h"

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

struct mh_lua_probes {
    lua_State *L; /* holds the list and the probes read from it until freed */
};

/* A probe file only returns its list: one still running after PROBES_FILE_S seconds (a loop that
 * never ends, one that catches every error, a finalizer that loops) is stopped: a .lua file's
 * child is killed (SIGALRM, or SIGXCPU past PROBES_FILE_S seconds of CPU), a .json file's decoding
 * is watched by glue_pcall_within. */
#define PROBES_FILE_S 5
#define PROBES_FILE_WHY "the probe file ran past its time limit of 5 s (a probe file only returns its list)"

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

/* (path, text, is_json) -> list, probes userdata: run in protected mode, so every failure is an
 * error value. */
static int read_list(lua_State *L)
{
    const char *path = lua_tostring(L, 1);
    size_t len;
    const char *text = lua_tolstring(L, 2, &len);
    if (lua_toboolean(L, 3)) {
        lua_pushcfunction(L, glue_json_decode);
        lua_pushvalue(L, 2);
        lua_pushvalue(L, 1);
        lua_call(L, 2, 1);
    } else {
        /* text only (no precompiled chunks); the chunk sees the base library and nothing else
         * (in the child: lua_child) */
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

/* The probes read, as the JSON array a .json file would hold (malloc'ed text); NULL with e set
 * (a string that is not UTF-8, which JSON cannot hold; no memory). */
static char *probes_json(const mh_probe *p, uint32_t n, const char *path, mh_error *e)
{
    for (uint32_t i = 0; i < n; i++) {
        const char *s[] = {p[i].name, p[i].loop, p[i].around, p[i].from, p[i].to};
        for (size_t k = 0; k < sizeof s / sizeof *s; k++) {
            json_t *j = s[k] ? json_string(s[k]) : NULL;
            if (s[k] && !j) {
                mh_fail(e, MH_E_BAD_ARGUMENT, "%s: probes[%u]: \"%.40s\" is not UTF-8 text", path, i + 1, s[k]);
                return NULL;
            }
            json_decref(j);
        }
    }
    json_t *a = json_array();
    for (uint32_t i = 0; a && i < n; i++) {
        json_t *o = json_object();
        json_object_set_new(o, p[i].kind == MH_PROBE_ROLE ? "role" : "name", json_string(p[i].name));
        switch (p[i].kind) {
        case MH_PROBE_KERNEL: json_object_set_new(o, "kernel", json_true()); break;
        case MH_PROBE_LOOP:
            json_object_set_new(o, "loop", p[i].loop ? json_string(p[i].loop) : json_true());
            if (p[i].per_loop) json_object_set_new(o, "per", json_string("loop"));
            break;
        case MH_PROBE_AROUND:
        case MH_PROBE_ROLE: json_object_set_new(o, "around", json_string(p[i].around)); break;
        case MH_PROBE_RANGE:
            json_object_set_new(o, "from", p[i].from ? json_string(p[i].from) : json_integer(p[i].from_line));
            json_object_set_new(o, "to", p[i].to ? json_string(p[i].to) : json_integer(p[i].to_line));
            break;
        }
        json_array_append_new(a, o);
    }
    char *text = a ? json_dumps(a, JSON_COMPACT) : NULL;
    json_decref(a);
    if (!text) mh_fail(e, MH_E_NO_MEMORY, "%s: out of memory reading the probe list", path);
    return text;
}

/* The child's side: the file run in a state of its own (the base library without dofile and
 * loadfile, print writing to stderr), its list checked; writes 'J' and the JSON, or 'E', the
 * error's code, a newline and its message, to fd; never returns. */
static void lua_child(const char *path, const char *text, size_t len, int fd)
{
    dup2(STDERR_FILENO, STDOUT_FILENO); /* print: stdout is the PTX */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGALRM, SIG_DFL);
    signal(SIGXCPU, SIG_DFL);
    struct rlimit cpu = {PROBES_FILE_S, PROBES_FILE_S + 1};
    setrlimit(RLIMIT_CPU, &cpu);
    alarm(PROBES_FILE_S);
    char *out = NULL;
    size_t out_len = 0;
    lua_State *L = luaL_newstate();
    if (L) {
        lua_pushcfunction(L, luaopen_base);
        lua_call(L, 0, 0);
        static const char *const unsafe[] = {"dofile", "loadfile"}; /* no files */
        for (size_t i = 0; i < sizeof unsafe / sizeof *unsafe; i++) {
            lua_pushnil(L);
            lua_setglobal(L, unsafe[i]);
        }
        lua_pushcfunction(L, read_list);
        lua_pushstring(L, path);
        lua_pushlstring(L, text, len);
        lua_pushboolean(L, 0);
        int st = lua_pcall(L, 3, 3, 0);
        mh_error e;
        mh_error_clear(&e);
        char *json = NULL;
        if (st == LUA_OK) json = probes_json(lua_touserdata(L, -2), (uint32_t)lua_tointeger(L, -1), path, &e);
        else take_error(L, path, &e);
        if (st == LUA_ERRMEM) mh_fail(&e, MH_E_NO_MEMORY, "%s: out of memory reading the probe list", path);
        FILE *m = open_memstream(&out, &out_len);
        if (m && json) fprintf(m, "J%s", json);
        else if (m) fprintf(m, "E%d\n%s", (int)e.code, e.message);
        if (m) fclose(m);
        free(json);
    }
    for (size_t at = 0; out && at < out_len;) {
        ssize_t k = write(fd, out + at, out_len - at);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        at += (size_t)k;
    }
    _exit(out ? 0 : 1); /* no lua_close: no __gc finalizer runs after the list is sent */
}

/* A .lua probe file's list as JSON text (malloc'ed), run in a child process; NULL with e set. */
static char *lua_file_json(const char *path, const char *text, size_t len, mh_error *e)
{
    int fds[2];
    if (pipe(fds)) {
        mh_fail(e, MH_E_IO, "%s: cannot make a pipe for the probe file's process: %s", path, strerror(errno));
        return NULL;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        mh_fail(e, MH_E_IO, "%s: cannot start the probe file's process: %s", path, strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return NULL;
    }
    if (pid == 0) {
        close(fds[0]);
        lua_child(path, text, len, fds[1]);
    }
    close(fds[1]);
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            char *nb = realloc(buf, cap = (cap ? cap * 2 : 65536));
            if (!nb) break;
            buf = nb;
        }
        ssize_t k = read(fds[0], buf + n, cap - n - 1);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        n += (size_t)k;
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (buf) buf[n] = 0;
    if (WIFSIGNALED(status) || !buf || n == 0 || (buf[0] != 'J' && buf[0] != 'E')) {
        int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
        if (sig == SIGALRM || sig == SIGXCPU) mh_fail(e, MH_E_BAD_ARGUMENT, "%s: " PROBES_FILE_WHY, path);
        else if (sig) mh_fail(e, MH_E_BAD_ARGUMENT, "%s: the probe file's process ended by signal %d", path, sig);
        else if (!buf) mh_fail(e, MH_E_NO_MEMORY, "%s: out of memory reading the probe list", path);
        else mh_fail(e, MH_E_BAD_ARGUMENT, "%s: the probe file's process ended without a list", path);
        free(buf);
        return NULL;
    }
    if (buf[0] == 'E') {
        int code = atoi(buf + 1);
        const char *msg = strchr(buf, '\n');
        mh_fail(e, code > 0 ? (mh_code)code : MH_E_BAD_ARGUMENT, "%s", msg ? msg + 1 : buf + 1);
        free(buf);
        return NULL;
    }
    memmove(buf, buf + 1, n); /* the JSON, its NUL too */
    return buf;
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
    if (ends_with(path, ".lua")) { /* its list comes back as JSON */
        char *json = lua_file_json(path, text, len, e);
        free(text);
        if (!(text = json)) return NULL;
        len = strlen(text);
    }
    mh_lua_probes *p = calloc(1, sizeof *p);
    lua_State *L = p ? luaL_newstate() : NULL;
    if (!L) {
        free(text);
        free(p);
        mh_fail(e, MH_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    p->L = L;
    lua_pushcfunction(L, read_list);
    lua_pushstring(L, path);
    lua_pushlstring(L, text, len);
    lua_pushboolean(L, 1); /* JSON: a .json file's text, or the list a .lua file's process read */
    free(text);
    int st = glue_pcall_within(L, 3, 3, 0, PROBES_FILE_S, "the probe file", "a probe file only returns its list");
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
