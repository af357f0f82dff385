/* emu_util.h - helpers the C tests that run PTX on emu share: a PTX file of the source tree parsed,
 * a device buffer uploaded, kernel arguments from a spec string, and one launch (with the
 * instrumentation's trace arguments or without) whose buffers are read back. */
#ifndef MH_EMU_UTIL_H
#define MH_EMU_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "dump_util.h"
#include "emu/emu.h"
#include "frontend/ptx.h"
#include "instrument/instrument.h"

/* Parses root/rel into m (its path in messages: rel); 0, or nonzero with the reason (an unreadable
 * file, the parser's message) on stderr. */
static inline int parse_ptx_file(mh_ptx_module *m, const char *root, const char *rel)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    size_t n;
    char *t = read_file_all(path, &n);
    if (!t) {
        fprintf(stderr, "  cannot read %s\n", path);
        return -1;
    }
    mh_error e;
    int rc = mh_ptx_parse(m, t, n, rel, &e);
    if (rc) fprintf(stderr, "  %s\n", e.message);
    free(t);
    return rc;
}

/* A kernel argument from a variable: its address and size. */
#define ARG(v) {&(v), sizeof(v)}

/* A new buffer of `bytes` on d holding host's bytes (zeros where host is NULL); a failed
 * allocation or write is a failed CHECK. */
static inline uint64_t emu_upload(mh_emu *d, const void *host, uint64_t bytes)
{
    uint64_t a = 0;
    mh_error e;
    CHECK(mh_emu_alloc(d, bytes, &a, &e) == 0);
    if (host) CHECK(mh_emu_write(d, a, host, bytes, &e) == 0);
    else CHECK(mh_emu_memset(d, a, 0, bytes, &e) == 0);
    return a;
}

/* ---- arguments: f:N floats, i:N ints, z:N zero words (buffers); u:V u32, g:V f32 (values) ---- */
enum { MAX_ARGS = 8 };

typedef struct {
    uint32_t nargs;
    uint64_t ptr[MAX_ARGS], val[MAX_ARGS], buf[MAX_ARGS]; /* buf: where the caller put the buffers */
    uint32_t size[MAX_ARGS], words[MAX_ARGS];
    uint32_t *init[MAX_ARGS];
} arg_set;

static inline void args_parse(arg_set *a, const char *spec)
{
    memset(a, 0, sizeof *a);
    for (const char *p = spec; *p && a->nargs < MAX_ARGS;) {
        char kind = p[0];
        const char *v = p + 2;
        uint32_t i = a->nargs++;
        if (kind == 'u' || kind == 'g') {
            a->size[i] = 4;
            if (kind == 'u') a->val[i] = strtoul(v, NULL, 10);
            else {
                float f = strtof(v, NULL);
                uint32_t bits;
                memcpy(&bits, &f, 4);
                a->val[i] = bits;
            }
        } else {
            a->size[i] = 8;
            a->words[i] = (uint32_t)strtoul(v, NULL, 10);
            a->init[i] = calloc(a->words[i] ? a->words[i] : 1, 4);
            for (uint32_t k = 0; kind != 'z' && k < a->words[i]; k++) {
                float f = (float)(k % 13) * 0.5f - 1.0f;
                if (kind == 'f') memcpy(&a->init[i][k], &f, 4);
                else a->init[i][k] = k % 97;
            }
        }
        while (*p && *p != ' ') p++;
        while (*p == ' ') p++;
    }
}

static inline void args_free(arg_set *a)
{
    for (uint32_t i = 0; i < a->nargs; i++) free(a->init[i]);
}

/* A 1-D launch of `kernel`; timed: the arguments (bits) whose buffers hold times (%clock,
 * %globaltimer), zeroed in what is read back. */
typedef struct {
    const char *kernel;
    uint32_t grid, block, smem, timed;
} emu_kernel;

/* Runs k of module m with the buffers a->buf[] reset to their initial values, the trace (when
 * trace) at `trace` with `entries` and calibration words at calib; out: the buffers' words after
 * the run, concatenated. */
static inline int emu_run_args(mh_emu *d, const mh_ptx_module *m, const emu_kernel *k, arg_set *a, uint64_t trace,
                               unsigned entries, uint64_t calib, uint32_t *out, mh_error *e)
{
    mh_emu_arg args[MAX_ARGS + MH_INSTRUMENT_PARAMS];
    uint32_t n = 0, o = 0;
    for (uint32_t i = 0; i < a->nargs; i++) {
        if (a->size[i] == 8) {
            a->ptr[i] = a->buf[i];
            mh_emu_write(d, a->buf[i], a->init[i], a->words[i] * 4ull, e);
            args[n++] = (mh_emu_arg){&a->ptr[i], 8};
        } else args[n++] = (mh_emu_arg){&a->val[i], 4};
    }
    uint64_t t = trace, cal = calib;
    if (trace) {
        args[n++] = (mh_emu_arg){&t, 8};
        args[n++] = (mh_emu_arg){&entries, 4};
        args[n++] = (mh_emu_arg){&cal, 8};
    }
    mh_emu_launch l = {{k->grid, 1, 1}, {k->block, 1, 1}, k->smem, args, n, 0};
    int rc = mh_emu_run(d, m, k->kernel, &l, NULL, e);
    for (uint32_t i = 0; !rc && i < a->nargs; i++)
        if (a->size[i] == 8) {
            mh_emu_read(d, a->buf[i], out + o, a->words[i] * 4ull, e);
            if (k->timed >> i & 1) memset(out + o, 0, a->words[i] * 4ull);
            o += a->words[i];
        }
    return rc;
}

#endif
