/* out.c - buffered, atomically replaced output files, and the removal of
 * their temporaries when a signal ends the process (see out.h). */
#define _GNU_SOURCE
#include "base/out.h"
#include "base/stop.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define BUF_BYTES (1u << 17)

/* --- temporaries a signal must not leave behind ------------------------------
 * A fixed table, so that the handler touches only static memory: a slot's path
 * is written while the slot is unused, then the slot is marked used. */
#define TEMP_SLOTS 16
static char temp_path[TEMP_SLOTS][PATH_MAX];
static volatile sig_atomic_t temp_used[TEMP_SLOTS];
static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP};

void mh_out_unlink_temps(void)
{
    for (int i = 0; i < TEMP_SLOTS; i++)
        if (temp_used[i]) unlink(temp_path[i]);
}

static void on_fatal_signal(int sig)
{
    int saved = errno;
    mh_out_unlink_temps();
    signal(sig, SIG_DFL);
    errno = saved;
    raise(sig); /* delivered when the handler returns: the process ends as the signal's default does */
}

/* Installs the cleanup for the signals still at their default action. */
static void install_cleanup(void)
{
    for (size_t i = 0; i < sizeof cleanup_signals / sizeof *cleanup_signals; i++) {
        struct sigaction old;
        if (sigaction(cleanup_signals[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
            (old.sa_flags & SA_SIGINFO))
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        for (size_t j = 0; j < sizeof cleanup_signals / sizeof *cleanup_signals; j++)
            sigaddset(&sa.sa_mask, cleanup_signals[j]);
        sigaction(cleanup_signals[i], &sa, NULL);
    }
}

static int register_temp(const char *path)
{
    if (strlen(path) >= PATH_MAX) return -1;
    for (int i = 0; i < TEMP_SLOTS; i++) {
        if (temp_used[i]) continue;
        memcpy(temp_path[i], path, strlen(path) + 1);
        atomic_signal_fence(memory_order_seq_cst);
        temp_used[i] = 1;
        return i;
    }
    return -1; /* more than TEMP_SLOTS at once: this one is not cleaned up by a signal */
}

static void unregister_temp(mh_out *o)
{
    if (o->tmp_path && o->temp_slot >= 0 && o->temp_slot < TEMP_SLOTS) temp_used[o->temp_slot] = 0;
    o->temp_slot = -1;
}

static void block_signals(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof cleanup_signals / sizeof *cleanup_signals; i++) sigaddset(&set, cleanup_signals[i]);
    sigprocmask(SIG_BLOCK, &set, old);
}

/* --- temporaries of dead processes ------------------------------------------ */

int mh_stale_name(const char *name, long *pid)
{
    const char *t = strstr(name, ".tmp."), *next;
    for (; t; t = next) { /* the last ".tmp." that the form follows */
        next = strstr(t + 1, ".tmp.");
        const char *p = t + 5, *d = p;
        while (*d >= '0' && *d <= '9') d++;
        if (d == p || d - p > 9 || *d != '.') continue;
        const char *x = d + 1;
        size_t n = strlen(x);
        if (n != 6) continue;
        int alnum = 1;
        for (size_t i = 0; i < n; i++)
            if (!((x[i] >= '0' && x[i] <= '9') || (x[i] >= 'a' && x[i] <= 'z') || (x[i] >= 'A' && x[i] <= 'Z')))
                alnum = 0;
        if (!alnum) continue;
        long v = strtol(p, NULL, 10);
        if (v <= 1) continue;
        *pid = v;
        return 1;
    }
    return 0;
}

/* A folder of regular files only, emptied and removed; 0 when done. */
static int remove_flat_dir(const char *path)
{
    DIR *d = opendir(path);
    if (!d) return -1;
    struct dirent *de;
    char p[PATH_MAX];
    int rc = 0;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        struct stat st;
        if (snprintf(p, sizeof p, "%s/%s", path, de->d_name) >= (int)sizeof p || lstat(p, &st) != 0 ||
            !S_ISREG(st.st_mode) || unlink(p) != 0)
            rc = -1;
    }
    closedir(d);
    return rc ? rc : rmdir(path);
}

int mh_stale_clean(const char *dir)
{
    DIR *d = opendir(dir && *dir ? dir : ".");
    if (!d) return 0;
    int removed = 0;
    struct dirent *de;
    char p[PATH_MAX];
    long me = (long)getpid();
    while ((de = readdir(d))) {
        long pid;
        if (!mh_stale_name(de->d_name, &pid) || pid == me) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive (or not ours to ask): left alone */
        struct stat st;
        if (snprintf(p, sizeof p, "%s/%s", dir && *dir ? dir : ".", de->d_name) >= (int)sizeof p ||
            lstat(p, &st) != 0 || st.st_uid != getuid())
            continue;
        if (S_ISREG(st.st_mode) ? unlink(p) == 0 : S_ISDIR(st.st_mode) && remove_flat_dir(p) == 0) removed++;
    }
    closedir(d);
    return removed;
}

/* mh_stale_clean of path's folder, the first time this process writes there. */
static void clean_once(const char *path)
{
    static struct { dev_t dev; ino_t ino; } seen[64];
    static int nseen;
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    struct stat st;
    if (stat(dir, &st) != 0) return;
    for (int i = 0; i < nseen; i++)
        if (seen[i].dev == st.st_dev && seen[i].ino == st.st_ino) return;
    if (nseen < 64) {
        seen[nseen].dev = st.st_dev;
        seen[nseen].ino = st.st_ino;
        nseen++;
    }
    mh_stale_clean(dir);
}

/* --- outputs that are inputs ---------------------------------------------- */

/* A path's identity for mh_path_same: kind 1 an existing regular file or FIFO
 * (dev, ino), kind 2 a name not there yet (its directory's dev, ino and
 * the last name), 0 nothing comparable. */
typedef struct {
    int kind;
    dev_t dev;
    ino_t ino;
    char name[256];
} path_id;

static void path_id_of(const char *p, path_id *id)
{
    struct stat st;
    id->kind = 0;
    if (!p || !*p || !strcmp(p, "-")) return;
    if (stat(p, &st) == 0) {
        /* a FIFO too: the same one as input and output blocked forever (issue 36) */
        if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) return;
        id->kind = 1;
        id->dev = st.st_dev;
        id->ino = st.st_ino;
        return;
    }
    if (errno != ENOENT) return;
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/') n--; /* "t.json/" is not a file to be made; compare it as t.json */
    size_t slash = n;
    while (slash > 0 && p[slash - 1] != '/') slash--;
    size_t name_len = n - slash;
    if (name_len == 0 || name_len >= sizeof id->name || !strncmp(p + slash, ".", name_len) ||
        (name_len == 2 && !strncmp(p + slash, "..", 2)))
        return;
    char dir[PATH_MAX];
    if (slash == 0) {
        strcpy(dir, ".");
    } else {
        if (slash >= sizeof dir) return;
        memcpy(dir, p, slash);
        dir[slash] = 0;
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return;
    id->kind = 2;
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    memcpy(id->name, p + slash, name_len);
    id->name[name_len] = 0;
}

int mh_path_same(const char *a, const char *b)
{
    path_id ia, ib;
    path_id_of(a, &ia);
    path_id_of(b, &ib);
    if (!ia.kind || ia.kind != ib.kind || ia.dev != ib.dev || ia.ino != ib.ino) return 0;
    return ia.kind == 1 || !strcmp(ia.name, ib.name);
}

int mh_out_refuse_input(const char *out_path, const char *what, const char *const *inputs, size_t n,
                        mh_error *e)
{
    for (size_t i = 0; i < n; i++)
        if (inputs[i] && mh_path_same(out_path, inputs[i]))
            return mh_fail(e, MH_E_BAD_ARGUMENT,
                           "%s %s is the input %s (the same file): writing it would destroy it; nothing was "
                           "written (name another output file)",
                           what, out_path, inputs[i]);
    return 0;
}

int mh_out_refuse_overlap(const char *const *outs, const char *const *what, size_t nout,
                          const char *const *inputs, size_t nin, mh_error *e)
{
    for (size_t i = 0; i < nout; i++) {
        if (!outs[i]) continue;
        if (mh_out_refuse_input(outs[i], what[i], inputs, nin, e)) return -1;
        for (size_t j = 0; j < i; j++)
            if (outs[j] && mh_path_same(outs[i], outs[j]))
                return mh_fail(e, MH_E_BAD_ARGUMENT,
                               "%s %s and %s %s name the same file: one would overwrite the other; nothing was "
                               "written",
                               what[j], outs[j], what[i], outs[i]);
    }
    return 0;
}

static int alloc_buf(mh_out *o, mh_error *e)
{
    o->cap = BUF_BYTES;
    o->buf = malloc(o->cap);
    if (!o->buf) return mh_fail(e, MH_E_NO_MEMORY, "out of memory for the output buffer");
    return 0;
}

int mh_out_open_fd(mh_out *o, int fd, mh_error *e)
{
    memset(o, 0, sizeof *o);
    o->fd = fd;
    o->temp_slot = -1;
    return alloc_buf(o, e);
}

int mh_out_open(mh_out *o, const char *path, mh_error *e)
{
    if (!path || strcmp(path, "-") == 0) return mh_out_open_fd(o, STDOUT_FILENO, e);
    if (!*path) return mh_fail(e, MH_E_BAD_ARGUMENT, "an output file's path is the empty string");
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* A device, FIFO or socket (/dev/null, a pipe): write to it in place;
         * replacing it with a file would destroy it. */
        if (S_ISDIR(st.st_mode)) return mh_fail(e, MH_E_IO, "%s: is a directory", path);
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0) return mh_fail(e, MH_E_IO, "%s: cannot open for writing: %s", path, strerror(errno));
        if (mh_out_open_fd(o, fd, e)) {
            close(fd);
            return -1;
        }
        o->owns_fd = 1;
        return 0;
    }
    memset(o, 0, sizeof *o);
    o->fd = -1;
    o->temp_slot = -1;
    size_t n = strlen(path);
    o->path = strdup(path);
    o->tmp_path = malloc(n + 32);
    if (!o->path || !o->tmp_path) {
        mh_out_abort(o);
        return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    }
    /* named by this process (mh_stale_name), so that the next run can tell it left it if it dies */
    snprintf(o->tmp_path, n + 32, "%s.tmp.%ld.XXXXXX", path, (long)getpid());
    clean_once(path);
    /* created and registered with the cleanup signals blocked: none can fall in between */
    install_cleanup();
    sigset_t old;
    block_signals(&old);
    o->fd = mkostemp(o->tmp_path, O_CLOEXEC);
    int mk_errno = errno;
    if (o->fd >= 0) o->temp_slot = register_temp(o->tmp_path);
    sigprocmask(SIG_SETMASK, &old, NULL);
    errno = mk_errno;
    if (o->fd < 0) {
        int err = errno;
        free(o->tmp_path);
        o->tmp_path = NULL;
        mh_out_abort(o);
        return mh_fail(e, MH_E_IO, "%s: cannot create a temporary file next to it: %s", path, strerror(err));
    }
    /* mkstemp makes 0600; give the file the usual permissions. */
    mode_t um = umask(0);
    umask(um);
    (void)fchmod(o->fd, 0666 & ~um);
    return alloc_buf(o, e);
}

static void write_all(mh_out *o, const char *p, size_t n)
{
    if (o->failed) return;
    if (mh_stop_requested()) { /* Ctrl-C under the runner: this output stops here, as `interrupted` */
        mh_stop_clear();
        o->failed = 1;
        o->err = EINTR;
        return;
    }
    while (n) {
        ssize_t w = write(o->fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) {
            o->failed = 1;
            o->err = errno;
            return;
        }
        p += w;
        n -= (size_t)w;
        o->total += (uint64_t)w;
    }
}

void mh_out_flush_(mh_out *o)
{
    write_all(o, o->buf, o->len);
    o->len = 0;
}

void mh_out_write_direct_(mh_out *o, const void *s, size_t n) { write_all(o, s, n); }

int mh_out_failure(const mh_out *o, mh_error *e)
{
    if (!o->failed) return 0;
    const char *name = o->path ? o->path : "output";
    if (o->err == EINTR)
        return mh_fail(e, MH_E_INTERRUPTED, "interrupted (Ctrl-C) while writing %s; nothing was written", name);
    return mh_fail(e, MH_E_IO, "%s: write failed: %s", name, strerror(o->err));
}

int mh_out_commit(mh_out *o, mh_error *e)
{
    const char *name = o->path ? o->path : "output";
    mh_out_flush_(o);
    int rc = 0;
    if (o->failed) {
        rc = mh_out_failure(o, e);
    } else if (o->owns_fd) {
        if (close(o->fd) != 0) rc = mh_fail(e, MH_E_IO, "output: write failed: %s", strerror(errno));
        o->fd = -1;
    } else if (o->path) {
        if (close(o->fd) != 0) rc = mh_fail(e, MH_E_IO, "%s: write failed: %s", name, strerror(errno));
        o->fd = -1;
        if (!rc && rename(o->tmp_path, o->path) != 0)
            rc = mh_fail(e, MH_E_IO, "%s: cannot replace it: %s", name, strerror(errno));
        if (!rc) {
            unregister_temp(o); /* after the rename: a signal in between unlinks a name that is gone */
            free(o->tmp_path);
            o->tmp_path = NULL;
        }
    }
    mh_out_abort(o);
    return rc;
}

void mh_out_abort(mh_out *o)
{
    if ((o->path || o->owns_fd) && o->fd >= 0) close(o->fd);
    if (o->tmp_path) unlink(o->tmp_path);
    unregister_temp(o);
    free(o->tmp_path);
    free(o->path);
    free(o->buf);
    memset(o, 0, sizeof *o);
    o->fd = -1;
    o->temp_slot = -1;
}
