/* dump_util.h - helpers shared by the dump tests: run mh_dump on words in
 * memory or on a file and read the JSON back. */
#ifndef MH_DUMP_UTIL_H
#define MH_DUMP_UTIL_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "trace/dump.h"

static inline char *read_file_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
    s[n] = 0;
    fclose(f);
    if (len) *len = (size_t)n;
    return s;
}

/* Dumps `buf` (bound to spec) with opts and returns the JSON text
 * (malloc'd), or NULL with e set. */
static inline char *dump_opts_to_string(const mh_spec *spec, const mh_names *names, mh_tracebuf *buf,
                                        const mh_dump_opts *opts, mh_dump_stats *st, mh_error *e)
{
    char path[] = "/tmp/mh_test_dump_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    mh_out o;
    mh_error_clear(e);
    if (mh_out_open(&o, path, e)) return NULL;
    if (mh_dump(spec, names, buf, opts, &o, st, e)) {
        mh_out_abort(&o);
        unlink(path);
        return NULL;
    }
    if (mh_out_commit(&o, e)) return NULL;
    char *s = read_file_all(path, NULL);
    unlink(path);
    return s;
}

/* The same with a mode, a clock and an optional summary. */
static inline char *dump_to_string(const mh_spec *spec, const mh_names *names, mh_tracebuf *buf, mh_dump_mode mode,
                            double ghz, mh_summary *sum, mh_dump_stats *st, mh_error *e)
{
    mh_dump_opts opts = {.mode = mode, .clock_ghz = ghz, .summary = sum};
    return dump_opts_to_string(spec, names, buf, &opts, st, e);
}

static inline char *dump_words(const mh_spec *spec, const mh_names *names, const uint32_t *w, mh_dump_mode mode, double ghz,
                        mh_summary *sum, mh_error *e)
{
    mh_tracebuf b;
    mh_tracebuf_memory(&b, w, spec->words);
    if (mh_tracebuf_bind(&b, spec, e)) return NULL;
    char *s = dump_to_string(spec, names, &b, mode, ghz, sum, NULL, e);
    mh_tracebuf_close(&b);
    return s;
}

/* The region names of the Mosaic GPU fixtures: Init 0, load 1, store 2. */
static inline void mosaic_names(mh_names *t)
{
    mh_error e;
    mh_names_init(t);
    mh_names_add(t, "Init", 0, &e);
    mh_names_add(t, "load", 1, &e);
    mh_names_add(t, "store", 2, &e);
    mh_names_finish(t, &e);
}

#endif
