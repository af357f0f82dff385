/* test_summary.c - region statistics: exact counts and extremes, quantiles
 * exact below 256 units and within 0.4% above. */
#include <math.h>
#include "check.h"
#include "trace/summary.h"

int main(void)
{
    mh_names names;
    mh_summary s;
    mh_error e;
    mh_names_init(&names);
    mh_names_add(&names, "small", 0, &e);
    mh_names_add(&names, "big", 1, &e);
    mh_names_add(&names, "unused", 2, &e);
    mh_names_finish(&names, &e);
    CHECK(mh_summary_init(&s, &names, &e) == 0);

    for (uint64_t v = 1; v <= 200; v++) mh_summary_add(&s, 0, v);
    mh_region_row r = mh_summary_row(&s, 0);
    CHECK(r.count == 200 && r.min == 1 && r.max == 200);
    CHECK(r.total == 200.0 * 201 / 2 && fabs(r.mean - 100.5) < 1e-9);
    CHECK(r.median == 100); /* nearest rank: ceil(0.5 * 200) = 100th value */
    CHECK(r.p99 == 198);

    /* 1000 values 10000..10999: quantiles within 0.4% */
    for (uint64_t v = 10000; v < 11000; v++) mh_summary_add(&s, 1, v);
    mh_summary_truncated(&s, 1);
    r = mh_summary_row(&s, 1);
    CHECK(r.count == 1000 && r.min == 10000 && r.max == 10999 && r.truncated == 1);
    CHECK(fabs((double)r.median - 10499.0) / 10499.0 < 0.004);
    CHECK(fabs((double)r.p99 - 10989.0) / 10989.0 < 0.004);

    /* one huge value stays within [min, max] */
    mh_summary_add(&s, 2, 1ull << 62);
    r = mh_summary_row(&s, 2);
    CHECK(r.median == 1ull << 62 && r.p99 == 1ull << 62);

    mh_summary_free(&s);
    mh_names_free(&names);
    return check_report("test_summary");
}
