/* bench_util.h - what the bench programs that link the core share: a clock in seconds and a PTX
 * file of the source tree parsed (dumpbench links nothing of the core and keeps its own clock). */
#ifndef MH_BENCH_UTIL_H
#define MH_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "base/read_file.h"
#include "frontend/ptx.h"

/* Seconds on clock clk (CLOCK_MONOTONIC: wall time; CLOCK_THREAD_CPUTIME_ID: this thread's CPU time). */
static inline double bench_seconds(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Parses dir/rel into m (its path in messages: rel); 0, or -1 with the reason on stderr. */
static inline int bench_load_ptx(mh_ptx_module *m, const char *dir, const char *rel)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    size_t got;
    mh_error e;
    char *s = mh_read_file(path, 0, &got, &e);
    if (!s) {
        fprintf(stderr, "%s\n", e.message);
        return -1;
    }
    int rc = mh_ptx_parse(m, s, got, rel, &e);
    if (rc) fprintf(stderr, "%s\n", e.message);
    free(s);
    return rc;
}

#endif
