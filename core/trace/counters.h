/* counters.h - "in flight" counters for the timeline: per region name, the
 * mean number of traces inside that region in each of N equal time bins of
 * the kernel's span.  The dump adds every region (begin, end) as it streams;
 * each costs O(1) (difference counts for the bins it covers whole, the
 * partial bins at its two ends directly), memory is names x bins. */
#ifndef MH_COUNTERS_H
#define MH_COUNTERS_H

#include <stddef.h>
#include <stdint.h>
#include "base/error.h"

#define MH_COUNTERS_MAX_BINS 100000u

typedef struct mh_counters {
    uint32_t bins;
    size_t nnames;
    double lo, width;       /* bin k covers [lo + k width, lo + (k + 1) width) */
    double **whole;         /* per name (NULL until used): bins + 1 difference counts of whole bins covered */
    double **part;          /* per name: time covered in bins that a region covers in part */
    int no_memory;
} mh_counters;

/* Bins over [lo, hi) (times in the dump's unit); hi > lo. */
int mh_counters_init(mh_counters *c, size_t nnames, uint32_t bins, int64_t lo, int64_t hi, mh_error *e);
void mh_counters_free(mh_counters *c);
/* One region of name `name` from `begin` to `end` (end >= begin). */
void mh_counters_add(mh_counters *c, size_t name, int64_t begin, int64_t end);
/* 1 when name was ever inside a region. */
int mh_counters_used(const mh_counters *c, size_t name);
/* Fills out[0..bins) with the mean number of traces inside `name` per bin. */
void mh_counters_values(const mh_counters *c, size_t name, double *out);

#endif
