/* summary.h - per-region duration statistics (count, total, mean, min,
 * median, p99, max) gathered while the dump streams.  Memory is fixed per
 * region name: exact count/total/min/max, and a log-linear histogram for the
 * quantiles (exact below 256 units, else within 0.4%). */
#ifndef MH_SUMMARY_H
#define MH_SUMMARY_H

#include <stdint.h>
#include <stdio.h>
#include "error.h"
#include "names.h"

typedef struct mh_region_stats {
    uint64_t count, min, max, truncated;
    double total;
    uint64_t *hist;   /* MH_HIST_BUCKETS counters, allocated on first use */
} mh_region_stats;

typedef struct mh_summary {
    const mh_names *names;    /* stats[i] belongs to names->v[i] */
    mh_region_stats *stats;
    const char *unit;         /* "ns" or "cycles" */
    int no_memory;
} mh_summary;

typedef struct mh_region_row {
    const char *name;
    uint64_t count, truncated;
    double total, mean;
    uint64_t min, median, p99, max;
} mh_region_row;

int mh_summary_init(mh_summary *s, const mh_names *names, mh_error *e);
void mh_summary_free(mh_summary *s);
/* Records one closed region of `name_index` lasting `d` units. */
void mh_summary_add(mh_summary *s, size_t name_index, uint64_t d);
static inline void mh_summary_truncated(mh_summary *s, size_t name_index) { s->stats[name_index].truncated++; }

/* Row for name i (rows with count == 0 and truncated == 0 are skipped by
 * the printers). */
mh_region_row mh_summary_row(const mh_summary *s, size_t i);
/* Value at quantile q (0..1, nearest rank) of the recorded durations. */
uint64_t mh_summary_quantile(const mh_region_stats *st, double q);

/* A table for the terminal, regions in name-id order. */
void mh_summary_print(const mh_summary *s, FILE *f);
/* {"unit": ..., "regions": [{...}, ...]} written atomically to path. */
int mh_summary_write_json(const mh_summary *s, const char *path, mh_error *e);

#endif
