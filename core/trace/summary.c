/* summary.c - region duration statistics with a log-linear histogram, and
 * the kernel's timeline (span, SMs, when each SM finished). */
#include "trace/summary.h"
#include "base/out.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Values below 256 have a bucket each; above, 128 buckets per power of two. */
#define SUB_BITS 7
#define EXACT 256u
#define MH_HIST_BUCKETS (EXACT + (64 - 8) * (1u << SUB_BITS))

static size_t bucket_of(uint64_t v)
{
    if (v < EXACT) return (size_t)v;
    unsigned ex = 63u - (unsigned)__builtin_clzll(v); /* 8..63 */
    size_t sub = (size_t)((v >> (ex - SUB_BITS)) & ((1u << SUB_BITS) - 1));
    return EXACT + (ex - 8) * (1u << SUB_BITS) + sub;
}

/* Midpoint of a bucket's value range. */
static uint64_t bucket_mid(size_t b)
{
    if (b < EXACT) return b;
    size_t k = b - EXACT;
    unsigned ex = (unsigned)(k >> SUB_BITS) + 8;
    uint64_t sub = k & ((1u << SUB_BITS) - 1);
    uint64_t lo = ((uint64_t)(1u << SUB_BITS) + sub) << (ex - SUB_BITS);
    uint64_t width = (uint64_t)1 << (ex - SUB_BITS);
    return lo + width / 2;
}

int mh_summary_init(mh_summary *s, const mh_names *names, mh_error *e)
{
    memset(s, 0, sizeof *s);
    s->names = names;
    s->unit = "ns";
    s->stats = calloc(names->n ? names->n : 1, sizeof *s->stats);
    if (!s->stats) return mh_fail(e, MH_E_NO_MEMORY, "out of memory for the summary");
    return 0;
}

void mh_summary_free(mh_summary *s)
{
    if (s->stats)
        for (size_t i = 0; i < s->names->n; i++) free(s->stats[i].hist);
    free(s->stats);
    free(s->timeline.sm_first);
    free(s->timeline.sm_last);
    memset(s, 0, sizeof *s);
}

void mh_summary_add(mh_summary *s, size_t i, uint64_t d)
{
    mh_region_stats *st = &s->stats[i];
    if (!st->hist) {
        st->hist = calloc(MH_HIST_BUCKETS, sizeof *st->hist);
        if (!st->hist) { s->no_memory = 1; return; }
    }
    if (st->count == 0 || d < st->min) st->min = d;
    if (d > st->max) st->max = d;
    st->count++;
    st->total += d;
    st->hist[bucket_of(d)]++;
}

void mh_summary_trace(mh_summary *s, uint32_t smid, int64_t first, int64_t last)
{
    mh_timeline *t = &s->timeline;
    if (!t->traces || first < t->first) t->first = first;
    if (!t->traces || last > t->last) t->last = last;
    t->traces++;
    if (smid >= MH_TIMELINE_MAX_SM) { t->sm_out_of_range++; return; }
    if (smid >= t->nsm) {
        uint32_t n = smid + 1 > 2 * t->nsm ? smid + 1 : 2 * t->nsm;
        if (n > MH_TIMELINE_MAX_SM) n = MH_TIMELINE_MAX_SM;
        int64_t *f = realloc(t->sm_first, n * sizeof *f);
        if (f) t->sm_first = f;
        int64_t *l = f ? realloc(t->sm_last, n * sizeof *l) : NULL;
        if (!l) { s->no_memory = 1; return; }
        t->sm_last = l;
        for (uint32_t i = t->nsm; i < n; i++) { f[i] = INT64_MAX; l[i] = INT64_MIN; }
        t->nsm = n;
    }
    if (first < t->sm_first[smid]) t->sm_first[smid] = first;
    if (last > t->sm_last[smid]) t->sm_last[smid] = last;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int mh_summary_timeline(const mh_summary *s, mh_timeline_row *row)
{
    const mh_timeline *t = &s->timeline;
    memset(row, 0, sizeof *row);
    if (!t->traces) return 0;
    row->traces = t->traces;
    row->span = t->last - t->first;
    row->sm_out_of_range = t->sm_out_of_range;
    int64_t *done = malloc((t->nsm ? t->nsm : 1) * sizeof *done);
    if (!done) return 0;
    uint64_t n = 0;
    for (uint32_t i = 0; i < t->nsm; i++)
        if (t->sm_last[i] >= t->sm_first[i]) done[n++] = t->sm_last[i] - t->first;
    row->sms = n;
    if (n) {
        qsort(done, n, sizeof *done, cmp_i64);
        row->sm_done_min = done[0];
        row->sm_done_median = done[(n - 1) / 2]; /* the lower median: a time some SM really finished at */
        row->sm_done_max = done[n - 1];
    }
    free(done);
    return 1;
}

uint64_t mh_summary_quantile(const mh_region_stats *st, double q)
{
    if (!st->count || !st->hist) return 0;
    uint64_t rank = (uint64_t)ceil(q * (double)st->count);
    if (rank < 1) rank = 1;
    uint64_t seen = 0;
    for (size_t b = 0; b < MH_HIST_BUCKETS; b++) {
        seen += st->hist[b];
        if (seen >= rank) {
            uint64_t v = bucket_mid(b);
            return v < st->min ? st->min : v > st->max ? st->max : v;
        }
    }
    return st->max;
}

mh_region_row mh_summary_row(const mh_summary *s, size_t i)
{
    const mh_region_stats *st = &s->stats[i];
    mh_region_row r;
    r.name = s->names->v[i].name;
    r.count = st->count;
    r.truncated = st->truncated;
    r.total = (double)st->total; /* exact up to 2^53 units (104 days of ns) */
    r.mean = st->count ? (double)st->total / (double)st->count : 0;
    r.min = st->min;
    r.max = st->max;
    r.median = mh_summary_quantile(st, 0.5);
    r.p99 = mh_summary_quantile(st, 0.99);
    int64_t span = s->timeline.traces ? s->timeline.last - s->timeline.first : 0;
    r.concurrency = span > 0 ? (double)st->total / (double)span : 0;
    return r;
}

/* "812 ns", "1.25 us", "3.10 ms" for ns; plain integers for cycles. */
static void fmt_value(char *buf, size_t n, double v, int is_ns)
{
    if (!is_ns) { snprintf(buf, n, "%.0f", v); return; }
    if (v < 1e3) snprintf(buf, n, "%.0f ns", v);
    else if (v < 1e6) snprintf(buf, n, "%.2f us", v / 1e3);
    else if (v < 1e9) snprintf(buf, n, "%.2f ms", v / 1e6);
    else snprintf(buf, n, "%.2f s", v / 1e9);
}

void mh_summary_print(const mh_summary *s, FILE *f)
{
    int is_ns = strcmp(s->unit, "ns") == 0;
    int w = 6;
    for (size_t i = 0; i < s->names->n; i++) {
        int l = (int)strlen(s->names->v[i].name);
        if (l > w) w = l;
    }
    if (w > 40) w = 40;
    mh_timeline_row tl;
    int has_tl = mh_summary_timeline(s, &tl);
    fprintf(f, "%-*s %9s %11s %10s %10s %10s %10s %10s%s%s\n", w, "region", "count", "total", "mean", "min",
            "median", "p99", "max", has_tl ? "  in flight" : "", is_ns ? "" : "  (cycles)");
    for (size_t i = 0; i < s->names->n; i++) {
        mh_region_row r = mh_summary_row(s, i);
        if (!r.count && !r.truncated) continue;
        char v[6][32];
        fmt_value(v[0], sizeof v[0], r.total, is_ns);
        fmt_value(v[1], sizeof v[1], r.mean, is_ns);
        fmt_value(v[2], sizeof v[2], (double)r.min, is_ns);
        fmt_value(v[3], sizeof v[3], (double)r.median, is_ns);
        fmt_value(v[4], sizeof v[4], (double)r.p99, is_ns);
        fmt_value(v[5], sizeof v[5], (double)r.max, is_ns);
        fprintf(f, "%-*.*s %9llu %11s %10s %10s %10s %10s %10s", w, w, r.name, (unsigned long long)r.count, v[0],
                v[1], v[2], v[3], v[4], v[5]);
        if (has_tl) fprintf(f, " %10.2f", r.concurrency);
        if (r.truncated) fprintf(f, "  (+%llu truncated)", (unsigned long long)r.truncated);
        fputc('\n', f);
    }
    if (!has_tl) return;
    char span[32], lo[32], mid[32], hi[32];
    fmt_value(span, sizeof span, (double)tl.span, is_ns);
    fmt_value(lo, sizeof lo, (double)tl.sm_done_min, is_ns);
    fmt_value(mid, sizeof mid, (double)tl.sm_done_median, is_ns);
    fmt_value(hi, sizeof hi, (double)tl.sm_done_max, is_ns);
    fprintf(f, "span %s%s from the first event to the last: %llu traces on %llu SMs", span, is_ns ? "" : " cycles",
            (unsigned long long)tl.traces, (unsigned long long)tl.sms);
    if (tl.sm_out_of_range) fprintf(f, " (+%llu with an SM id above %u)", (unsigned long long)tl.sm_out_of_range,
                                    MH_TIMELINE_MAX_SM - 1);
    fprintf(f, "\nSMs done (last event, from the first): first SM %s, median %s, last %s\n", lo, mid, hi);
}

int mh_summary_write_json(const mh_summary *s, const char *path, mh_error *e)
{
    json_t *root = json_object(), *regions = json_array();
    json_object_set_new(root, "unit", json_string(s->unit));
    json_object_set_new(root, "quantiles", json_string("nearest rank; exact below 256 units, else within 0.4%"));
    for (size_t i = 0; i < s->names->n; i++) {
        mh_region_row r = mh_summary_row(s, i);
        if (!r.count && !r.truncated) continue;
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(r.name));
        json_object_set_new(o, "count", json_integer((json_int_t)r.count));
        json_object_set_new(o, "total", json_real(r.total));
        json_object_set_new(o, "mean", json_real(r.mean));
        json_object_set_new(o, "min", json_integer((json_int_t)r.min));
        json_object_set_new(o, "median", json_integer((json_int_t)r.median));
        json_object_set_new(o, "p99", json_integer((json_int_t)r.p99));
        json_object_set_new(o, "max", json_integer((json_int_t)r.max));
        json_object_set_new(o, "truncated", json_integer((json_int_t)r.truncated));
        if (s->timeline.traces) json_object_set_new(o, "concurrency", json_real(r.concurrency));
        json_array_append_new(regions, o);
    }
    json_object_set_new(root, "regions", regions);
    mh_timeline_row tl;
    if (mh_summary_timeline(s, &tl)) {
        json_t *t = json_object();
        json_object_set_new(t, "span", json_integer((json_int_t)tl.span));
        json_object_set_new(t, "traces", json_integer((json_int_t)tl.traces));
        json_object_set_new(t, "sms", json_integer((json_int_t)tl.sms));
        json_object_set_new(t, "sm_done_min", json_integer((json_int_t)tl.sm_done_min));
        json_object_set_new(t, "sm_done_median", json_integer((json_int_t)tl.sm_done_median));
        json_object_set_new(t, "sm_done_max", json_integer((json_int_t)tl.sm_done_max));
        if (tl.sm_out_of_range) json_object_set_new(t, "sm_out_of_range", json_integer((json_int_t)tl.sm_out_of_range));
        json_object_set_new(root, "timeline", t);
    }
    char *text = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (!text) return mh_fail(e, MH_E_NO_MEMORY, "out of memory for the summary JSON");
    mh_out o;
    int rc = mh_out_open(&o, path, e);
    if (!rc) {
        mh_out_str(&o, text);
        mh_out_lit(&o, "\n");
        rc = mh_out_commit(&o, e);
    }
    free(text);
    return rc;
}
