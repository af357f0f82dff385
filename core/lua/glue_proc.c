/* glue_proc.c - child processes for the Lua library (the sweep's workers):
 * core.spawn starts a program with pipes on its stdin and stdout (stderr is
 * shared), core.poll waits until some of them have output, and a process
 * object writes to it, reads its complete lines without blocking, signals it
 * and reaps it.  Processes, not threads: a crash or a kill of one cannot take
 * the caller down.  SIGPIPE is ignored once a child exists, so writing to a
 * dead one is an error value, not the caller's death.  Also core.xpcall_within:
 * Lua code run with a time limit (the experiment's timeout_s in process). */
#define _GNU_SOURCE
#include "lua/glue.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <unistd.h>

#define PROC_MT "mgpu.proc"

typedef struct {
    pid_t pid;          /* 0: reaped */
    int in, out;        /* our ends: its stdin (-1 closed), its stdout (-1 at EOF) */
    int status;         /* waitpid status once reaped */
    char *buf;          /* stdout bytes not yet returned as lines */
    size_t len, cap;
} l_proc;

static l_proc *check_proc(lua_State *L, int i) { return luaL_checkudata(L, i, PROC_MT); }

static void close_fd(int *fd)
{
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

/* Reaps it when it has ended (hang: wait for it); 1 when reaped. */
static int reap(l_proc *p, int hang)
{
    if (!p->pid) return 1;
    int st;
    pid_t r;
    do r = waitpid(p->pid, &st, hang ? 0 : WNOHANG);
    while (r < 0 && errno == EINTR);
    if (r != p->pid) return 0;
    p->status = st;
    p->pid = 0;
    return 1;
}

static int l_proc_gc(lua_State *L)
{
    l_proc *p = check_proc(L, 1);
    close_fd(&p->in);
    close_fd(&p->out);
    if (p->pid) { /* a process nobody waits for any more: stopped, not left behind */
        kill(p->pid, SIGKILL);
        reap(p, 1);
    }
    free(p->buf);
    p->buf = NULL;
    return 0;
}

/* core.spawn{argv = {program, args...}, env = {NAME = value, ...}} -> proc (program found on PATH) */
static int l_spawn(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    static const char *const keys[] = {"argv", "env", NULL};
    glue_check_keys(L, 1, "spawn", keys);
    lua_getfield(L, 1, "argv");
    int av = lua_gettop(L);
    if (!lua_istable(L, av) || lua_rawlen(L, av) < 1) return glue_bad(L, "%s", "spawn.argv must list the program and its arguments");
    int argc = (int)lua_rawlen(L, av);
    if (argc > 4096) return glue_bad(L, "%s", "spawn.argv: too many arguments");
    const char **argv = lua_newuserdatauv(L, sizeof *argv * (size_t)(argc + 1), 0);
    for (int i = 0; i < argc; i++) {
        lua_rawgeti(L, av, i + 1);
        if (lua_type(L, -1) != LUA_TSTRING) return glue_bad(L, "spawn.argv[%d] must be a string", i + 1);
        argv[i] = lua_tostring(L, -1); /* kept alive by the argv table */
        lua_pop(L, 1);
    }
    argv[argc] = NULL;
    lua_getfield(L, 1, "env");
    int ev = lua_gettop(L), nenv = 0;
    if (!lua_isnil(L, ev) && !lua_istable(L, ev)) return glue_bad(L, "%s", "spawn.env must be a table of strings");
    const char *env[256][2];
    if (lua_istable(L, ev)) {
        lua_pushnil(L);
        while (lua_next(L, ev)) {
            if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
                return glue_bad(L, "%s", "spawn.env: names and values must be strings");
            if (nenv == 256) return glue_bad(L, "%s", "spawn.env: more than 256 variables");
            env[nenv][0] = lua_tostring(L, -2);
            env[nenv++][1] = lua_tostring(L, -1);
            lua_pop(L, 1);
        }
    }
    l_proc *p = lua_newuserdatauv(L, sizeof *p, 0);
    memset(p, 0, sizeof *p);
    p->in = p->out = -1;
    luaL_setmetatable(L, PROC_MT);
    int to[2], from[2];
    if (pipe2(to, O_CLOEXEC) != 0) return glue_fail(L, MH_E_IO, "spawn: pipe: %s", strerror(errno));
    if (pipe2(from, O_CLOEXEC) != 0) {
        close(to[0]);
        close(to[1]);
        return glue_fail(L, MH_E_IO, "spawn: pipe: %s", strerror(errno));
    }
    signal(SIGPIPE, SIG_IGN);
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(to[0]), close(to[1]), close(from[0]), close(from[1]);
        return glue_fail(L, MH_E_IO, "spawn: fork: %s", strerror(errno));
    }
    if (pid == 0) { /* the child: only async-signal-safe calls and exec */
        dup2(to[0], 0);
        dup2(from[1], 1);
        signal(SIGPIPE, SIG_DFL);
        signal(SIGINT, SIG_DFL);
#ifdef __linux__
        /* a worker ends with its parent, however the parent ends (SIGTERM, SIGHUP, SIGKILL, a crash):
         * never an orphan spinning on a point nobody waits for; SIGTERM, so that its temporaries go
         * (out.c's handler), the default action then ending it.  A parent gone already: end now. */
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent) _exit(127);
#else
        (void)parent;
#endif
        for (int i = 0; i < nenv; i++) setenv(env[i][0], env[i][1], 1);
        execvp(argv[0], (char *const *)argv);
        static const char msg[] = "mgpu-harness: spawn: cannot run the program\n";
        ssize_t w = write(2, msg, sizeof msg - 1);
        (void)w;
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    p->pid = pid;
    p->in = to[1];
    p->out = from[0];
    fcntl(p->out, F_SETFL, fcntl(p->out, F_GETFL) | O_NONBLOCK);
    return 1;
}

/* proc:write(s): all of s to its stdin (false, message when it is gone) */
static int l_proc_write(lua_State *L)
{
    l_proc *p = check_proc(L, 1);
    size_t n;
    const char *s = luaL_checklstring(L, 2, &n);
    while (n > 0 && p->in >= 0) {
        ssize_t w = write(p->in, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) {
            lua_pushboolean(L, 0);
            lua_pushstring(L, strerror(errno));
            return 2;
        }
        s += w;
        n -= (size_t)w;
    }
    lua_pushboolean(L, n == 0);
    return 1;
}

static int l_proc_close_stdin(lua_State *L)
{
    close_fd(&check_proc(L, 1)->in);
    return 0;
}

/* Moves what its stdout has now into the buffer; 0 at EOF (or error). */
static int fill(l_proc *p)
{
    for (;;) {
        if (p->len + 65536 > p->cap) {
            size_t cap = p->cap ? p->cap * 2 : 131072;
            char *nb = realloc(p->buf, cap);
            if (!nb) return 1;
            p->buf = nb;
            p->cap = cap;
        }
        ssize_t r = read(p->out, p->buf + p->len, p->cap - p->len);
        if (r > 0) {
            p->len += (size_t)r;
            continue;
        }
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 1;
        close_fd(&p->out); /* EOF */
        return 0;
    }
}

/* proc:lines() -> {complete lines read so far}, open (false once its stdout ended; a last line
 * without a newline is returned then) */
static int l_proc_lines(lua_State *L)
{
    l_proc *p = check_proc(L, 1);
    int open = p->out >= 0 ? fill(p) : 0;
    lua_newtable(L);
    size_t start = 0;
    lua_Integer n = 0;
    for (size_t i = 0; i < p->len; i++)
        if (p->buf[i] == '\n') {
            lua_pushlstring(L, p->buf + start, i - start);
            lua_rawseti(L, -2, ++n);
            start = i + 1;
        }
    if (!open && start < p->len) {
        lua_pushlstring(L, p->buf + start, p->len - start);
        lua_rawseti(L, -2, ++n);
        start = p->len;
    }
    memmove(p->buf, p->buf + start, p->len - start);
    p->len -= start;
    lua_pushboolean(L, open);
    return 2;
}

/* proc:kill([signal = 15]) */
static int l_proc_kill(lua_State *L)
{
    l_proc *p = check_proc(L, 1);
    int sig = (int)luaL_optinteger(L, 2, SIGTERM);
    if (p->pid) kill(p->pid, sig);
    return 0;
}

/* proc:wait([hang]) -> nil while it runs (hang: wait for it), else {exited = status} or
 * {signal = number} */
static int l_proc_wait(lua_State *L)
{
    l_proc *p = check_proc(L, 1);
    if (!reap(p, lua_toboolean(L, 2))) return 0;
    lua_createtable(L, 0, 1);
    if (WIFEXITED(p->status)) glue_set_int(L, -1, "exited", WEXITSTATUS(p->status));
    else if (WIFSIGNALED(p->status)) glue_set_int(L, -1, "signal", WTERMSIG(p->status));
    return 1;
}

static int l_proc_pid(lua_State *L)
{
    lua_pushinteger(L, check_proc(L, 1)->pid);
    return 1;
}

/* core.poll({proc, ...}, timeout_s) -> {i, ...}: the processes whose stdout has something to read
 * (or ended), after at most timeout_s seconds (an empty list when none) */
static int l_poll(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    double t = luaL_checknumber(L, 2);
    int n = (int)lua_rawlen(L, 1);
    if (n > 1024) return glue_bad(L, "%s", "poll: more than 1024 processes");
    struct pollfd fds[1024];
    int idx[1024], m = 0;
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, 1, i + 1);
        l_proc *p = luaL_testudata(L, -1, PROC_MT);
        lua_pop(L, 1);
        if (!p) return glue_bad(L, "poll: entry %d is not a process", i + 1);
        if (p->out < 0 && !p->len) continue;
        if (p->len && memchr(p->buf, '\n', p->len)) t = 0; /* lines already waiting */
        fds[m].fd = p->out;
        fds[m].events = POLLIN;
        fds[m].revents = 0;
        idx[m++] = i + 1;
    }
    int ms = t <= 0 ? 0 : t > 3600 ? 3600000 : (int)(t * 1000);
    int r = m ? poll(fds, (nfds_t)m, ms) : 0;
    if (r < 0 && errno != EINTR) return glue_fail(L, MH_E_IO, "poll: %s", strerror(errno));
    lua_newtable(L);
    lua_Integer k = 0;
    for (int i = 0; i < m; i++) {
        lua_rawgeti(L, 1, idx[i]);
        l_proc *p = luaL_testudata(L, -1, PROC_MT);
        lua_pop(L, 1);
        int ready = fds[i].fd < 0 || (r > 0 && fds[i].revents) || (p->len && memchr(p->buf, '\n', p->len));
        if (ready) {
            lua_pushinteger(L, idx[i]);
            lua_rawseti(L, -2, ++k);
        }
    }
    return 1;
}

/* ---- Lua code with a time limit --------------------------------------------
 * A count hook looks at the clock every DEADLINE_COUNT instructions and, past the deadline,
 * raises `timeout`; it stays on, so code that catches the error is stopped again at its next
 * instructions.  C functions are not interrupted (emu's launch keeps its own limit), nor is
 * code in other coroutines, nor (LuaJIT) compiled traces. */
#define DEADLINE_COUNT 10000
static double deadline_at;     /* monotonic seconds; 0: none */
static double deadline_limit;
static char deadline_what[96], deadline_why[64];

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void deadline_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    if (deadline_at <= 0 || mono_s() < deadline_at) return;
    mh_error e;
    mh_error_clear(&e);
    mh_fail(&e, MH_E_TIMEOUT, "%s ran past its time limit of %g s (%s) and was stopped", deadline_what, deadline_limit,
            deadline_why);
    glue_raise(L, &e);
}

int glue_pcall_within(lua_State *L, int nargs, int nresults, int msgh, double secs, const char *what,
                      const char *why)
{
    lua_Hook old_hook = lua_gethook(L);
    int old_mask = lua_gethookmask(L), old_count = lua_gethookcount(L);
    double old_at = deadline_at, old_limit = deadline_limit, at = mono_s() + secs;
    char old_what[sizeof deadline_what], old_why[sizeof deadline_why];
    memcpy(old_what, deadline_what, sizeof old_what);
    memcpy(old_why, deadline_why, sizeof old_why);
    if (!(old_at > 0 && old_at < at)) { /* an outer limit that comes first stays */
        deadline_at = at;
        deadline_limit = secs;
        snprintf(deadline_what, sizeof deadline_what, "%s", what);
        snprintf(deadline_why, sizeof deadline_why, "%s", why);
    }
    lua_sethook(L, deadline_hook, LUA_MASKCOUNT, DEADLINE_COUNT);
    int rc = lua_pcall(L, nargs, nresults, msgh);
    lua_sethook(L, old_hook, old_mask, old_count);
    deadline_at = old_at;
    deadline_limit = old_limit;
    memcpy(deadline_what, old_what, sizeof old_what);
    memcpy(deadline_why, old_why, sizeof old_why);
    return rc;
}

/* core.xpcall_within(seconds, what, f, msgh, ...) -> as xpcall(f, msgh, ...): true and f's
 * results, or false and msgh's value; Lua code of f still running after `seconds` is stopped
 * with a `timeout` error ("WHAT ran past its time limit of S s (timeout_s) ..."). */
static int l_xpcall_within(lua_State *L)
{
    double secs = luaL_checknumber(L, 1);
    const char *what = luaL_checkstring(L, 2);
    luaL_checktype(L, 3, LUA_TFUNCTION);
    luaL_checktype(L, 4, LUA_TFUNCTION);
    if (!(secs > 0) || secs > 1e9) return glue_bad(L, "the time limit must be a number of seconds above 0, got %g", secs);
    int nargs = lua_gettop(L) - 4;
    lua_pushvalue(L, 4); /* msgh below f and its arguments */
    lua_insert(L, 3);    /* 1 secs, 2 what, 3 msgh, 4 f, 5 msgh, args... */
    lua_remove(L, 5);
    int rc = glue_pcall_within(L, nargs, LUA_MULTRET, 3, secs, what, "timeout_s");
    lua_pushboolean(L, rc == LUA_OK);
    lua_replace(L, 3); /* over msgh: ok, then the results or the handler's value */
    return lua_gettop(L) - 2;
}

const luaL_Reg glue_proc_funcs[] = {
    {"spawn", l_spawn}, {"poll", l_poll}, {"xpcall_within", l_xpcall_within}, {NULL, NULL}};

void glue_open_proc(lua_State *L)
{
    static const luaL_Reg meta[] = {{"__gc", l_proc_gc}, {NULL, NULL}};
    static const luaL_Reg methods[] = {{"write", l_proc_write}, {"close_stdin", l_proc_close_stdin},
                                       {"lines", l_proc_lines}, {"kill", l_proc_kill},
                                       {"wait", l_proc_wait},   {"pid", l_proc_pid},
                                       {NULL, NULL}};
    glue_new_class(L, PROC_MT, meta, methods);
}
