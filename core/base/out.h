/* out.h - buffered output with atomic replacement: a file is written to a
 * temporary sibling and renamed over the target only on commit, so a failed
 * run never leaves a partial file or destroys the previous one.  Also holds
 * the fast number formatting the dump's hot loop needs.
 *
 * Interruptions: the temporary files being written are registered in a small
 * static table (the one global state of out.c), so that SIGINT, SIGTERM or
 * SIGHUP removes them before the process dies: mh_out_open installs a handler
 * for those of the three still at their default action (it unlinks the
 * temporaries, then re-raises the signal with the default action), and a
 * program with its own handler (the Lua runner's Ctrl-C) calls
 * mh_out_unlink_temps from it before it dies.  A stop request (base/stop.h,
 * the runner's first Ctrl-C) makes the writes of an open output fail as
 * `interrupted` at the next flush: the caller aborts it, which removes the
 * temporary, and the request is consumed (mh_stop_clear). */
#ifndef MH_OUT_H
#define MH_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "base/error.h"

typedef struct mh_out {
    int fd;
    char *path;       /* final path, NULL for an fd given by the caller */
    char *tmp_path;   /* temporary sibling while writing */
    char *buf;
    size_t len, cap;
    int owns_fd;      /* fd opened here on a non-regular file: close it */
    int failed;       /* a write failed; errno in err (EINTR: a stop request, see mh_out_failure) */
    int err;
    int temp_slot;    /* this temporary's slot in the signal cleanup table, or -1 */
    uint64_t total;   /* bytes written so far */
} mh_out;

/* path NULL or "-" writes to stdout; a path that is a device or FIFO
 * (/dev/null) is written in place; both are not atomic. */
int mh_out_open(mh_out *o, const char *path, mh_error *e);
/* Writes to an fd the caller owns (not closed, not atomic). */
int mh_out_open_fd(mh_out *o, int fd, mh_error *e);
/* Flushes and, for a file, renames the temporary over the target. */
int mh_out_commit(mh_out *o, mh_error *e);
/* Discards the temporary file (no effect on the target). Safe after commit. */
void mh_out_abort(mh_out *o);
/* Non-zero once a write failed (or a stop was requested while it was open);
 * e then says what happened: MH_E_INTERRUPTED or MH_E_IO. */
int mh_out_failure(const mh_out *o, mh_error *e);

/* Whether two paths name one regular file, resolved: an existing file by its
 * identity (st_dev and st_ino, so a hard or symbolic link or another spelling
 * is found too), one that does not exist yet by its parent directory's
 * identity and its last name ("t.json", "./t.json" and "sub/../t.json" are
 * one file).  NULL, "-" (stdout) and an existing path that is not a regular
 * file (a device or FIFO, written in place) never name the same file as
 * anything; neither does a path whose directory does not exist. */
int mh_path_same(const char *a, const char *b);

/* Refuses (MH_E_BAD_ARGUMENT naming both) an output path that is one of the
 * command's inputs (mh_path_same), which writing it would destroy.  inputs
 * may hold NULLs.  `what` names the option ("-o", "--summary-json", "out")
 * in the message. */
int mh_out_refuse_input(const char *out_path, const char *what, const char *const *inputs, size_t n,
                        mh_error *e);

/* The one check of a command's outputs before it writes anything: no output
 * is one of the inputs, and no two outputs are one file (mh_path_same).
 * outs[i] is named by what[i] ("-o", "--names") in the message; NULL
 * entries are skipped.  MH_E_BAD_ARGUMENT. */
int mh_out_refuse_overlap(const char *const *outs, const char *const *what, size_t nout,
                          const char *const *inputs, size_t nin, mh_error *e);

/* Temporaries of processes that died without their cleanup (SIGKILL, a
 * crash) are recognised by their name, NAME.tmp.PID.XXXXXX (what mh_out_open
 * and emu's ptxas folder make): mh_stale_clean removes from dir every entry
 * so named whose PID is no process (kill(PID, 0) fails with ESRCH) and that
 * belongs to this user: a regular file, or a folder of regular files (with
 * them).  A process that is alive, or of another user, is never touched.
 * Returns how many entries it removed.  mh_out_open calls it once per
 * process for each folder it writes into (the first time). */
int mh_stale_clean(const char *dir);
/* Whether name is a temporary of that form and its pid (set when so). */
int mh_stale_name(const char *name, long *pid);

/* Unlinks every registered temporary file.  Async-signal-safe: for a signal
 * handler of the program's own (the runner's second Ctrl-C). */
void mh_out_unlink_temps(void);

void mh_out_flush_(mh_out *o);
void mh_out_write_direct_(mh_out *o, const void *s, size_t n);

static inline char *mh_out_reserve(mh_out *o, size_t n)
{
    if (o->cap - o->len < n) mh_out_flush_(o);
    return o->buf + o->len;
}

static inline void mh_out_mem(mh_out *o, const void *s, size_t n)
{
    if (o->cap - o->len < n) {
        mh_out_flush_(o);
        if (n > o->cap) { /* larger than the buffer: write through */
            mh_out_write_direct_(o, s, n);
            return;
        }
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

/* Copies n <= 64 bytes from s, which must have 64 readable bytes: a fixed
 * size copy compiles to a few vector moves instead of a memcpy call. */
static inline void mh_out_small(mh_out *o, const char *s, size_t n)
{
    char *p = mh_out_reserve(o, 64);
    memcpy(p, s, 64);
    o->len += n;
}

#define mh_out_lit(o, s) mh_out_mem((o), (s), sizeof(s) - 1)

static inline void mh_out_str(mh_out *o, const char *s) { mh_out_mem(o, s, strlen(s)); }

static inline size_t mh_ndigits(uint64_t v)
{
    size_t n = 1;
    for (;;) {
        if (v < 10) return n;
        if (v < 100) return n + 1;
        if (v < 1000) return n + 2;
        if (v < 10000) return n + 3;
        v /= 10000;
        n += 4;
    }
}

/* Writes v in decimal at p; returns the number of characters (max 20).
 * Digits go straight to p, two at a time, right to left (no staging buffer:
 * copying one out again stalls on store forwarding). */
static inline size_t mh_fmt_u64(char *p, uint64_t v)
{
    static const char pairs[201] =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
        "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";
    size_t len = mh_ndigits(v);
    char *q = p + len;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        q -= 2;
        memcpy(q, pairs + 2 * r, 2);
    }
    if (v >= 10) {
        q -= 2;
        memcpy(q, pairs + 2 * v, 2);
    } else {
        *--q = (char)('0' + v);
    }
    return len;
}

static inline void mh_out_u64(mh_out *o, uint64_t v)
{
    char *p = mh_out_reserve(o, 20);
    o->len += mh_fmt_u64(p, v);
}

/* Writes v/1000 as the shortest decimal that round-trips (what Python's
 * repr(float(v) / 1e3) prints): "380393.792", "12.5", "7.0". */
static inline void mh_out_milli(mh_out *o, uint64_t v)
{
    char *p = mh_out_reserve(o, 26);
    size_t n = mh_fmt_u64(p, v / 1000);
    unsigned f = (unsigned)(v % 1000);
    p[n++] = '.';
    p[n++] = (char)('0' + f / 100);
    if (f % 100) {
        p[n++] = (char)('0' + f / 10 % 10);
        if (f % 10) p[n++] = (char)('0' + f % 10);
    }
    o->len += n;
}

/* Writes v/1000 with exactly three decimals ("0.250"): ns as microseconds. */
static inline void mh_out_milli3(mh_out *o, int64_t v)
{
    char *p = mh_out_reserve(o, 27);
    size_t n = 0;
    uint64_t u = (uint64_t)v;
    if (v < 0) { p[n++] = '-'; u = 0 - u; }
    n += mh_fmt_u64(p + n, u / 1000);
    unsigned f = (unsigned)(u % 1000);
    p[n++] = '.';
    p[n++] = (char)('0' + f / 100);
    p[n++] = (char)('0' + f / 10 % 10);
    p[n++] = (char)('0' + f % 10);
    o->len += n;
}

#endif
