/* test_summary_trace.c - the region summary against the events of the trace it
 * came with: a generated buffer (nested regions, irregular cycle counts, a
 * clock rate that is not a whole number of cycles per ns) is dumped in the
 * default mode, the JSON is read back, and per region the count, total, min
 * and max must be exactly what the trace's own B/E pairs give (end ts minus
 * begin ts), and the mean their total over the count.  Also the summary JSON
 * (--summary-json) says the same as the rows. */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include "check.h"
#include "dump_util.h"
#include "trace/dump.h"

#define NAMES 3
#define MAX_DEPTH 8

typedef struct {
    uint64_t count, total, min, max;
} agg;

static uint32_t rng = 12345;
static uint32_t next_rand(void)
{
    rng = rng * 1103515245u + 12345u;
    return rng >> 8;
}

/* One trace: regions nested up to 3 deep, each event 1..997 cycles after the last. */
static void fill_trace(uint32_t *w, uint64_t entries, uint32_t start, uint32_t smid)
{
    uint64_t cap = (entries - 3) / 2, k = 0;
    uint32_t clock = next_rand(), stack[MAX_DEPTH];
    unsigned depth = 0;
    w[0] = start;
    w[1] = smid;
    while (k + depth < cap) { /* invariant: k + depth <= cap, room for every close */
        if (depth == 0 && k + 2 > cap) break;
        int open = depth == 0 || (depth < 3 && next_rand() % 2 && k + depth + 2 <= cap);
        clock += 1 + next_rand() % 997;
        if (open) {
            stack[depth++] = next_rand() % NAMES;
            w[3 + 2 * k] = stack[depth - 1];
        } else {
            w[3 + 2 * k] = stack[--depth] | MH_EXIT_BIT;
        }
        w[4 + 2 * k] = clock;
        k++;
    }
    while (depth) { /* close what is open (room was kept for it) */
        clock += 1 + next_rand() % 997;
        w[3 + 2 * k] = stack[--depth] | MH_EXIT_BIT;
        w[4 + 2 * k] = clock;
        k++;
    }
    w[2] = (uint32_t)(2 * k);
}

/* ts (microseconds, 3 decimals) -> integer ns */
static int64_t ts_ns(json_t *ev) { return (int64_t)llround(json_number_value(json_object_get(ev, "ts")) * 1000.0); }

/* Per region, what the trace's B/E pairs say; 0 on success. */
static int trace_durations(const char *json, const mh_names *names, agg *out)
{
    json_error_t je;
    json_t *root = json_loads(json, 0, &je);
    if (!root) return -1;
    json_t *evs = json_object_get(root, "traceEvents");
    /* open regions per tid: name index and begin time */
    enum { MAX_TID = 4096 };
    static int64_t at[MAX_TID][MAX_DEPTH];
    static size_t who[MAX_TID][MAX_DEPTH];
    static unsigned depth[MAX_TID];
    memset(depth, 0, sizeof depth);
    size_t i;
    json_t *ev;
    json_array_foreach(evs, i, ev) {
        const char *ph = json_string_value(json_object_get(ev, "ph"));
        if (!ph || (strcmp(ph, "B") && strcmp(ph, "E"))) continue;
        json_int_t tid = json_integer_value(json_object_get(ev, "tid"));
        const char *name = json_string_value(json_object_get(ev, "name"));
        size_t idx = 0;
        while (idx < names->n && strcmp(names->v[idx].name, name)) idx++;
        if (tid < 0 || tid >= MAX_TID || idx == names->n) { json_decref(root); return -1; }
        if (ph[0] == 'B') {
            if (depth[tid] == MAX_DEPTH) { json_decref(root); return -1; }
            at[tid][depth[tid]] = ts_ns(ev);
            who[tid][depth[tid]++] = idx;
        } else {
            if (!depth[tid] || who[tid][depth[tid] - 1] != idx) { json_decref(root); return -1; }
            depth[tid]--;
            uint64_t d = (uint64_t)(ts_ns(ev) - at[tid][depth[tid]]);
            agg *a = &out[idx];
            if (!a->count || d < a->min) a->min = d;
            if (d > a->max) a->max = d;
            a->count++;
            a->total += d;
        }
    }
    json_decref(root);
    return 0;
}

static void run_case(double ghz, uint64_t grid, uint64_t entries)
{
    mh_spec spec;
    mh_names names;
    mh_error e;
    mh_spec_init(&spec, grid, 128, MH_SCOPE_WARP, entries);
    CHECK(mh_spec_validate(&spec, &e) == 0);
    mh_names_init(&names);
    mh_names_add(&names, "alpha", 0, &e);
    mh_names_add(&names, "beta", 1, &e);
    mh_names_add(&names, "gamma", 2, &e);
    mh_names_finish(&names, &e);
    uint32_t *w = calloc(spec.words, 4);
    for (uint64_t t = 0; t < spec.num_traces; t++)
        fill_trace(w + t * entries, entries, 1000u + (uint32_t)(next_rand() % 300), (uint32_t)(t % 132));

    mh_summary sum;
    CHECK(mh_summary_init(&sum, &names, &e) == 0);
    char *json = dump_words(&spec, &names, w, MH_DUMP_DEFAULT, ghz, &sum, &e);
    CHECK(json != NULL);
    agg want[NAMES];
    memset(want, 0, sizeof want);
    CHECK(json && trace_durations(json, &names, want) == 0);
    for (size_t i = 0; i < NAMES; i++) {
        mh_region_row r = mh_summary_row(&sum, i);
        CHECK(r.count == want[i].count);
        CHECK(r.total == (double)want[i].total);
        CHECK(r.min == want[i].min);
        CHECK(r.max == want[i].max);
        CHECK(r.count && fabs(r.mean - (double)want[i].total / (double)want[i].count) < 1e-9 * r.mean);
        CHECK(r.median >= r.min && r.median <= r.max && r.p99 >= r.median && r.p99 <= r.max);
        if (r.total != (double)want[i].total || r.max != want[i].max || r.min != want[i].min)
            fprintf(stderr, "  %.3g GHz region %s: summary total %.0f min %" PRIu64 " max %" PRIu64
                    "; trace total %" PRIu64 " min %" PRIu64 " max %" PRIu64 "\n", ghz, r.name, r.total, r.min, r.max,
                    want[i].total, want[i].min, want[i].max);
    }

    /* the JSON summary says the same */
    char path[] = "/tmp/mh_test_sumjson_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    CHECK(mh_summary_write_json(&sum, path, &e) == 0);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    unlink(path);
    CHECK(root != NULL);
    json_t *regions = json_object_get(root, "regions"), *o;
    size_t k;
    json_array_foreach(regions, k, o) {
        const char *name = json_string_value(json_object_get(o, "name"));
        for (size_t i = 0; i < NAMES; i++) {
            if (strcmp(names.v[i].name, name)) continue;
            CHECK(json_number_value(json_object_get(o, "total")) == (double)want[i].total);
            CHECK((uint64_t)json_integer_value(json_object_get(o, "max")) == want[i].max);
            CHECK((uint64_t)json_integer_value(json_object_get(o, "min")) == want[i].min);
            CHECK((uint64_t)json_integer_value(json_object_get(o, "count")) == want[i].count);
        }
    }
    json_decref(root);
    free(json);
    mh_summary_free(&sum);
    mh_names_free(&names);
    free(w);
}

int main(void)
{
    run_case(1.98, 33, 3 + 2 * 200);   /* H200's clock: 1.98 cycles per ns */
    run_case(1.4998, 8, 3 + 2 * 500);  /* emu's measured clock */
    run_case(0, 4, 3 + 2 * 100);       /* no clock: cycles, exact either way */
    return check_report("test_summary_trace");
}
