/* test_counters.c - the "in flight" counters against a direct computation:
 * random regions over random spans and bin counts, each bin's mean
 * occupancy equal to the overlap of every region with it over its width;
 * regions outside the range are clipped; bad bin counts are refused. */
#include "check.h"
#include "trace/counters.h"

#include <math.h>
#include <stdlib.h>

static double overlap(double a, double b, double lo, double hi)
{
    double x = a > lo ? a : lo, y = b < hi ? b : hi;
    return y > x ? y - x : 0;
}

int main(void)
{
    mh_error e;
    unsigned seed = 12345;
    int bad = 0;
    for (int round = 0; round < 200; round++) {
        int64_t lo = (int64_t)(rand_r(&seed) % 1000) - 500, hi = lo + 1 + rand_r(&seed) % 100000;
        uint32_t bins = 1 + (uint32_t)(rand_r(&seed) % 300);
        size_t names = 1 + (size_t)(rand_r(&seed) % 4);
        mh_counters c;
        if (mh_counters_init(&c, names, bins, lo, hi, &e)) { CHECK(!"init"); continue; }
        int n = rand_r(&seed) % 50;
        int64_t (*reg)[3] = malloc((size_t)(n ? n : 1) * sizeof *reg);
        for (int i = 0; i < n; i++) {
            /* some regions start before lo or end after hi: clipped */
            int64_t a = lo - 50 + rand_r(&seed) % (hi - lo + 100), b = a + rand_r(&seed) % (hi - lo + 1);
            reg[i][0] = (int64_t)(rand_r(&seed) % names);
            reg[i][1] = a;
            reg[i][2] = b;
            mh_counters_add(&c, (size_t)reg[i][0], a, b);
        }
        double *v = malloc(bins * sizeof *v);
        double width = (double)(hi - lo) / bins;
        for (size_t nm = 0; nm < names; nm++) {
            mh_counters_values(&c, nm, v);
            for (uint32_t k = 0; k < bins; k++) {
                double b0 = (double)lo + k * width, b1 = b0 + width, want = 0;
                for (int i = 0; i < n; i++)
                    if ((size_t)reg[i][0] == nm) want += overlap((double)reg[i][1], (double)reg[i][2], b0, b1);
                want /= width;
                if (fabs(v[k] - want) > 1e-9 * (1 + want)) {
                    if (bad++ < 5)
                        fprintf(stderr, "  round %d name %zu bin %u: %.12g, want %.12g\n", round, nm, k, v[k], want);
                }
            }
        }
        CHECK(c.no_memory == 0);
        free(v);
        free(reg);
        mh_counters_free(&c);
    }
    CHECK(bad == 0);

    mh_counters c;
    CHECK(mh_counters_init(&c, 2, 0, 0, 10, &e) != 0 && e.code == MH_E_BAD_ARGUMENT);
    CHECK(mh_counters_init(&c, 2, MH_COUNTERS_MAX_BINS + 1, 0, 10, &e) != 0);
    CHECK_CONTAINS(e.message, "bins");
    /* an unused name reads all zeros and is not "used"; an end before a begin is ignored */
    CHECK(mh_counters_init(&c, 2, 4, 0, 40, &e) == 0);
    mh_counters_add(&c, 0, 30, 10);
    mh_counters_add(&c, 7, 0, 10); /* no such name */
    double v[4] = {1, 1, 1, 1};
    mh_counters_values(&c, 1, v);
    CHECK(!mh_counters_used(&c, 1) && v[0] == 0 && v[3] == 0);
    mh_counters_free(&c);
    return check_report("test_counters");
}
