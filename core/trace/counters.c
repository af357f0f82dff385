/* counters.c - per-bin "in flight" counts of regions (see counters.h). */
#include "trace/counters.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int mh_counters_init(mh_counters *c, size_t nnames, uint32_t bins, int64_t lo, int64_t hi, mh_error *e)
{
    memset(c, 0, sizeof *c);
    if (bins == 0 || bins > MH_COUNTERS_MAX_BINS)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "counters: %u bins (1 to %u)", bins, MH_COUNTERS_MAX_BINS);
    c->bins = bins;
    c->nnames = nnames;
    c->lo = (double)lo;
    c->width = hi > lo ? (double)(hi - lo) / bins : 1.0;
    c->whole = calloc(nnames ? nnames : 1, sizeof *c->whole);
    c->part = calloc(nnames ? nnames : 1, sizeof *c->part);
    if (!c->whole || !c->part) {
        mh_counters_free(c);
        return mh_fail(e, MH_E_NO_MEMORY, "%s", "out of memory for the counters");
    }
    return 0;
}

void mh_counters_free(mh_counters *c)
{
    for (size_t i = 0; i < c->nnames; i++) {
        if (c->whole) free(c->whole[i]);
        if (c->part) free(c->part[i]);
    }
    free(c->whole);
    free(c->part);
    memset(c, 0, sizeof *c);
}

static int ensure(mh_counters *c, size_t name)
{
    if (c->whole[name]) return 0;
    c->whole[name] = calloc((size_t)c->bins + 1, sizeof **c->whole);
    c->part[name] = calloc(c->bins, sizeof **c->part);
    if (c->whole[name] && c->part[name]) return 0;
    free(c->whole[name]);
    free(c->part[name]);
    c->whole[name] = c->part[name] = NULL;
    c->no_memory = 1;
    return -1;
}

/* The bin of time t, clamped to the range. */
static uint32_t bin_of(const mh_counters *c, double t)
{
    double k = floor((t - c->lo) / c->width);
    if (!(k >= 0)) return 0;
    if (k >= c->bins) return c->bins - 1;
    return (uint32_t)k;
}

void mh_counters_add(mh_counters *c, size_t name, int64_t begin, int64_t end)
{
    if (name >= c->nnames || end < begin || ensure(c, name)) return;
    double a = (double)begin, b = (double)end;
    double top = c->lo + c->width * c->bins;
    if (a < c->lo) a = c->lo;
    if (b > top) b = top;
    if (b <= a) return;
    uint32_t ka = bin_of(c, a), kb = bin_of(c, b);
    double *part = c->part[name];
    if (ka == kb) {
        part[ka] += b - a;
        return;
    }
    part[ka] += c->lo + (ka + 1) * c->width - a;      /* the rest of a's bin */
    part[kb] += b - (c->lo + kb * c->width);          /* the start of b's bin */
    c->whole[name][ka + 1] += 1;                      /* bins ka+1 .. kb-1 whole */
    c->whole[name][kb] -= 1;
}

int mh_counters_used(const mh_counters *c, size_t name) { return name < c->nnames && c->whole[name] != NULL; }

void mh_counters_values(const mh_counters *c, size_t name, double *out)
{
    if (!mh_counters_used(c, name)) {
        memset(out, 0, c->bins * sizeof *out);
        return;
    }
    double running = 0;
    for (uint32_t k = 0; k < c->bins; k++) {
        running += c->whole[name][k];
        out[k] = running + c->part[name][k] / c->width;
    }
}
