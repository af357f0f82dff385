/* glue_host.c - what the Lua library needs from the host: JSON encoding and
 * decoding (jansson), SHA-256 of files (nettle), atomic writes, appended
 * lines, directories, a tty check and a monotonic clock. */
#define _GNU_SOURCE
#include "lua/glue.h"
#include "base/out.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers for the Lua library: JSON, hashing, files, time -------------- */

static json_t *to_json(lua_State *L, int idx, int depth)
{
    idx = lua_absindex(L, idx);
    if (depth > 64) luaL_error(L, "json: nesting deeper than 64 (a cycle?)");
    switch (lua_type(L, idx)) {
    case LUA_TNIL: return json_null();
    case LUA_TBOOLEAN: return json_boolean(lua_toboolean(L, idx));
    case LUA_TNUMBER:
        if (lua_isinteger(L, idx)) return json_integer((json_int_t)lua_tointeger(L, idx));
        if (!isfinite(lua_tonumber(L, idx))) return json_null();
        return json_real(lua_tonumber(L, idx));
    case LUA_TSTRING: {
        size_t n;
        const char *str = lua_tolstring(L, idx, &n);
        json_t *j = json_stringn(str, n);
        if (!j) luaL_error(L, "json: a string is not valid UTF-8");
        return j;
    }
    case LUA_TTABLE: {
        lua_Integer n = (lua_Integer)lua_rawlen(L, idx), count = 0;
        lua_pushnil(L);
        while (lua_next(L, idx)) {
            count++;
            lua_pop(L, 1);
        }
        if (n > 0 && count == n) {
            json_t *arr = json_array();
            for (lua_Integer i = 1; i <= n; i++) {
                lua_rawgeti(L, idx, i);
                json_array_append_new(arr, to_json(L, -1, depth + 1));
                lua_pop(L, 1);
            }
            return arr;
        }
        json_t *obj = json_object();
        lua_pushnil(L);
        while (lua_next(L, idx)) {
            lua_pushvalue(L, -2);
            const char *k = lua_tostring(L, -1); /* numbers become strings */
            if (!k) luaL_error(L, "json: table keys must be strings or numbers");
            json_object_set_new(obj, k, to_json(L, -2, depth + 1));
            lua_pop(L, 2);
        }
        return obj;
    }
    default:
        return json_string(luaL_typename(L, idx)); /* functions, userdata: their type name */
    }
}

static void push_json(lua_State *L, json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        const char *k;
        json_t *v;
        lua_createtable(L, 0, (int)json_object_size(j));
        json_object_foreach(j, k, v) {
            push_json(L, v);
            lua_setfield(L, -2, k);
        }
        break;
    }
    case JSON_ARRAY:
        lua_createtable(L, (int)json_array_size(j), 0);
        for (size_t i = 0; i < json_array_size(j); i++) {
            push_json(L, json_array_get(j, i));
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        break;
    case JSON_STRING: lua_pushlstring(L, json_string_value(j), json_string_length(j)); break;
    case JSON_INTEGER: lua_pushinteger(L, (lua_Integer)json_integer_value(j)); break;
    case JSON_REAL: lua_pushnumber(L, json_real_value(j)); break;
    case JSON_TRUE: lua_pushboolean(L, 1); break;
    case JSON_FALSE: lua_pushboolean(L, 0); break;
    default: lua_pushnil(L); break;
    }
}

/* core.json_encode(value [, pretty]) -> string (keys sorted) */
static int l_json_encode(lua_State *L)
{
    luaL_checkany(L, 1);
    json_t *j = to_json(L, 1, 0);
    char *s = json_dumps(j, JSON_SORT_KEYS | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17) |
                                (lua_toboolean(L, 2) ? JSON_INDENT(1) : JSON_COMPACT));
    json_decref(j);
    if (!s) return luaL_error(L, "json: cannot encode");
    lua_pushstring(L, s);
    free(s);
    return 1;
}

/* core.json_decode(string [, origin]) -> value; bad JSON raises bad_argument with the line */
int glue_json_decode(lua_State *L)
{
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    json_error_t je;
    json_t *j = json_loadb(s, n, JSON_DECODE_ANY, &je);
    if (!j) {
        mh_error e;
        mh_error_clear(&e);
        e.line = je.line;
        mh_fail(&e, MH_E_BAD_ARGUMENT, "%s: invalid JSON at line %d, column %d: %s", luaL_optstring(L, 2, "json"),
                je.line, je.column, je.text);
        return glue_raise(L, &e);
    }
    push_json(L, j);
    json_decref(j);
    return 1;
}

/* core.sha256_file(path) -> hex digest */
static int l_sha256_file(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    FILE *f = fopen(path, "rb");
    if (!f) return glue_fail(L, MH_E_IO, "%s: cannot open", path);
    struct sha256_ctx ctx;
    sha256_init(&ctx);
    unsigned char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) sha256_update(&ctx, n, buf);
    fclose(f);
    uint8_t d[SHA256_DIGEST_SIZE];
    sha256_digest(&ctx, sizeof d, d);
    char hex[2 * SHA256_DIGEST_SIZE + 1];
    for (int i = 0; i < SHA256_DIGEST_SIZE; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
    lua_pushstring(L, hex);
    return 1;
}

/* core.write_file(path, string): atomic (temporary file, then rename) */
static int l_write_file(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    size_t n;
    const char *s = luaL_checklstring(L, 2, &n);
    mh_out o;
    mh_error e;
    mh_error_clear(&e);
    if (mh_out_open(&o, path, &e)) return glue_raise(L, &e);
    mh_out_mem(&o, s, n);
    if (mh_out_commit(&o, &e)) return glue_raise(L, &e);
    return 0;
}

/* core.append_line(path, string): appends string and "\n", flushed to the OS */
static int l_append_line(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    size_t n;
    const char *s = luaL_checklstring(L, 2, &n);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) return glue_fail(L, MH_E_IO, "%s: cannot open for appending", path);
    char *line = malloc(n + 1);
    if (!line) { close(fd); return glue_fail(L, MH_E_NO_MEMORY, "%s", "out of memory"); }
    memcpy(line, s, n);
    line[n] = '\n';
    ssize_t w = write(fd, line, n + 1); /* one write: a line is never split by an interruption between writes */
    free(line);
    close(fd);
    if (w != (ssize_t)(n + 1)) return glue_fail(L, MH_E_IO, "%s: write failed", path);
    return 0;
}

/* core.mkdir_p(path) */
static int l_mkdir_p(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    char buf[4096];
    size_t n = strlen(path);
    if (n >= sizeof buf) return glue_fail(L, MH_E_BAD_ARGUMENT, "%s", "path too long");
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != 0) continue;
        char c = buf[i];
        buf[i] = 0;
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return glue_fail(L, MH_E_IO, "%s: cannot create", buf);
        buf[i] = c;
    }
    return 0;
}

static int l_isatty(lua_State *L)
{
    lua_pushboolean(L, isatty((int)luaL_optinteger(L, 1, 2)));
    return 1;
}

/* core.now() -> monotonic seconds */
static int l_now(lua_State *L)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    lua_pushnumber(L, (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9);
    return 1;
}

#define LOCK_MT "mgpu.lock"

typedef struct {
    int fd; /* -1: released */
} l_lock;

static int l_lock_release(lua_State *L)
{
    l_lock *k = luaL_checkudata(L, 1, LOCK_MT);
    if (k->fd >= 0) close(k->fd); /* closing the descriptor drops the flock */
    k->fd = -1;
    return 0;
}

/* core.lock(path) -> lock: an exclusive lock on the file at path (created), held until
 * lock:release() or the lock is collected, with the holder's pid written in it.  Held by
 * another process (or another lock of this one): a `busy` error naming the holder. */
static int l_lock_new(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    l_lock *k = lua_newuserdatauv(L, sizeof *k, 0);
    k->fd = -1;
    if (luaL_newmetatable(L, LOCK_MT)) {
        lua_pushcfunction(L, l_lock_release);
        lua_setfield(L, -2, "__gc");
        lua_newtable(L);
        lua_pushcfunction(L, l_lock_release);
        lua_setfield(L, -2, "release");
        lua_setfield(L, -2, "__index");
    }
    lua_setmetatable(L, -2);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) return glue_fail(L, MH_E_IO, "%s: cannot open the lock file: %s", path, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int err = errno;
        char pid[32] = "";
        ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
        close(fd);
        if (n > 0) pid[strcspn(pid, "\n")] = 0;
        else pid[0] = 0;
        if (err == EWOULDBLOCK)
            return glue_fail(L, MH_E_BUSY, "%s is held by %s%s: another run is using this folder", path,
                             pid[0] ? "process " : "another process", pid);
        return glue_fail(L, MH_E_IO, "%s: cannot lock: %s", path, strerror(err));
    }
    k->fd = fd;
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n)
        return glue_fail(L, MH_E_IO, "%s: cannot write the lock file", path);
    return 1;
}

/* core.exe_path() -> the absolute path of the running executable (workers and Slurm jobs run
 * the same binary), or nil and the reason */
static int l_exe_path(lua_State *L)
{
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) {
        lua_pushnil(L);
        lua_pushstring(L, strerror(errno));
        return 2;
    }
    lua_pushlstring(L, buf, (size_t)n);
    return 1;
}

/* core.realpath(path) -> the absolute path with symbolic links resolved, or nil and the reason */
static int l_realpath(lua_State *L)
{
    char *r = realpath(luaL_checkstring(L, 1), NULL);
    if (!r) {
        lua_pushnil(L);
        lua_pushstring(L, strerror(errno));
        return 2;
    }
    lua_pushstring(L, r);
    free(r);
    return 1;
}

/* core.link(existing, new) -> true, or nil and the reason: a hard link (merge shares point files) */
static int l_link(lua_State *L)
{
    if (link(luaL_checkstring(L, 1), luaL_checkstring(L, 2)) != 0) {
        lua_pushnil(L);
        lua_pushstring(L, strerror(errno));
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* core.same_file(a, b) -> whether the two paths name one regular file, also one not made yet
 * (base/out.h mh_path_same: the file's identity, or its folder's and its name) */
static int l_same_file(lua_State *L)
{
    lua_pushboolean(L, mh_path_same(luaL_checkstring(L, 1), luaL_checkstring(L, 2)));
    return 1;
}

/* core.list_dir(path) -> the names in folder path (not "." and ".."), in no order; nil, message
 * when it cannot be read */
static int l_list_dir(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    DIR *d = opendir(path);
    if (!d) {
        lua_pushnil(L);
        lua_pushfstring(L, "%s: %s", path, strerror(errno));
        return 2;
    }
    lua_newtable(L);
    lua_Integer n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        lua_pushstring(L, e->d_name);
        lua_rawseti(L, -2, ++n);
    }
    closedir(d);
    return 1;
}

/* core.getpid() -> this process's id */
static int l_getpid(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)getpid());
    return 1;
}

const luaL_Reg glue_host_funcs[] = {
    {"lock", l_lock_new},           {"exe_path", l_exe_path},       {"realpath", l_realpath},
    {"getpid", l_getpid},           {"link", l_link},               {"same_file", l_same_file},
    {"json_encode", l_json_encode}, {"json_decode", glue_json_decode}, {"sha256_file", l_sha256_file},
    {"write_file", l_write_file},   {"append_line", l_append_line}, {"mkdir_p", l_mkdir_p},
    {"isatty", l_isatty},           {"now", l_now},                 {"list_dir", l_list_dir},
    {NULL, NULL},
};
