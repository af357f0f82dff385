/* out.c - buffered, atomically replaced output files. */
#define _GNU_SOURCE
#include "base/out.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define BUF_BYTES (1u << 17)

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
    return alloc_buf(o, e);
}

int mh_out_open(mh_out *o, const char *path, mh_error *e)
{
    if (!path || strcmp(path, "-") == 0) return mh_out_open_fd(o, STDOUT_FILENO, e);
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
    size_t n = strlen(path);
    o->path = strdup(path);
    o->tmp_path = malloc(n + 16);
    if (!o->path || !o->tmp_path) {
        mh_out_abort(o);
        return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    }
    snprintf(o->tmp_path, n + 16, "%s.tmp.XXXXXX", path);
    o->fd = mkostemp(o->tmp_path, O_CLOEXEC);
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

int mh_out_commit(mh_out *o, mh_error *e)
{
    const char *name = o->path ? o->path : "output";
    mh_out_flush_(o);
    int rc = 0;
    if (o->failed) {
        rc = mh_fail(e, MH_E_IO, "%s: write failed: %s", name, strerror(o->err));
    } else if (o->owns_fd) {
        if (close(o->fd) != 0) rc = mh_fail(e, MH_E_IO, "output: write failed: %s", strerror(errno));
        o->fd = -1;
    } else if (o->path) {
        if (close(o->fd) != 0) rc = mh_fail(e, MH_E_IO, "%s: write failed: %s", name, strerror(errno));
        o->fd = -1;
        if (!rc && rename(o->tmp_path, o->path) != 0)
            rc = mh_fail(e, MH_E_IO, "%s: cannot replace it: %s", name, strerror(errno));
        if (!rc) {
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
    free(o->tmp_path);
    free(o->path);
    free(o->buf);
    memset(o, 0, sizeof *o);
    o->fd = -1;
}
