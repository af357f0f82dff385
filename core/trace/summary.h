/* summary.h - per-region duration statistics (count, total, mean, min,
 * median, p99, max) gathered while the dump streams, and the kernel's
 * timeline (span, SMs, when each SM's last trace ended).  Memory is fixed per
 * region name: exact count/total/min/max, and a log-linear histogram for the
 * quantiles (exact below 256 units, else within 0.4%); the timeline keeps two
 * numbers per SM. */
#ifndef MH_SUMMARY_H
#define MH_SUMMARY_H

#include <stdint.h>
#include <stdio.h>
#include "base/error.h"
#include "trace/names.h"

typedef struct mh_region_stats {
    uint64_t count, min, max, truncated;
    uint64_t total;   /* the exact sum of the durations recorded */
    uint64_t *hist;   /* MH_HIST_BUCKETS counters, allocated on first use */
} mh_region_stats;

/* SM ids the timeline keeps apart (sm_90 has 132; a larger %smid is a
 * corrupt header and only counted). */
#define MH_TIMELINE_MAX_SM 4096u

/* The kernel's timeline as the default dump places it: times in the
 * summary's unit from the dump's ts 0. */
typedef struct mh_timeline {
    uint64_t traces;              /* traces with events */
    int64_t first, last;          /* earliest and latest event */
    uint32_t nsm;                 /* slots in sm_first/sm_last (largest SM id seen + 1) */
    int64_t *sm_first, *sm_last;  /* per SM id; sm_last < sm_first where the SM had no trace */
    uint64_t sm_out_of_range;     /* traces whose %smid was MH_TIMELINE_MAX_SM or more */
} mh_timeline;

typedef struct mh_summary {
    const mh_names *names;    /* stats[i] belongs to names->v[i] */
    mh_region_stats *stats;
    const char *unit;         /* "ns" or "cycles" */
    mh_timeline timeline;     /* filled by the default dump only */
    int no_memory;
} mh_summary;

typedef struct mh_region_row {
    const char *name;
    uint64_t count, truncated;
    double total, mean;
    uint64_t min, median, p99, max;
    double concurrency;       /* total / span: the mean number of traces inside the region; 0 without a timeline */
} mh_region_row;

/* The timeline in figures: span = last - first; sms = SMs with a trace;
 * sm_done_* = when SMs' last events were, from the first event (the first SM
 * to finish, the median SM, the last: a tail shows as min << max). */
typedef struct mh_timeline_row {
    uint64_t traces, sms, sm_out_of_range;
    int64_t span, sm_done_min, sm_done_median, sm_done_max;
} mh_timeline_row;

int mh_summary_init(mh_summary *s, const mh_names *names, mh_error *e);
void mh_summary_free(mh_summary *s);
/* Records one closed region of `name_index` lasting `d` units.  The dump
 * passes the duration its trace shows (end ts - begin ts, each converted from
 * cycles once), so the summary's totals, min and max are the trace's own. */
void mh_summary_add(mh_summary *s, size_t name_index, uint64_t d);
static inline void mh_summary_truncated(mh_summary *s, size_t name_index) { s->stats[name_index].truncated++; }
/* Records one trace with events: on SM `smid`, from `first` to `last`. */
void mh_summary_trace(mh_summary *s, uint32_t smid, int64_t first, int64_t last);
/* 1 and *row filled when the dump recorded a timeline, else 0. */
int mh_summary_timeline(const mh_summary *s, mh_timeline_row *row);

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
