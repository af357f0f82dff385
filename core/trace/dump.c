/* dump.c - trace buffer -> Chrome trace JSON, Mosaic-compatible and default
 * modes.  See dump.h and docs/DESIGN.md "Dump". */
#include "trace/dump.h"
#include "trace/counters.h"
#include "trace/meta.h"
#include "version.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WARN_LIMIT 5                 /* warnings shown per kind */
#define BACKWARD_LIMIT 0x80000000u   /* a step this large is a clock going back */

static const char MOSAIC_INSUFFICIENT[] = "Insufficient space to capture a full trace";
static const char MOSAIC_ODD[] =
    "Profiler collected an odd number of trace events. This likely indicates memory corruption due to "
    "insufficient profiling space. Try again with a larger profiling space.";

/* One trace that has events, as the scan leaves it for the emission. */
typedef struct {
    int64_t key;       /* first event time used for ordering */
    uint64_t trace;
    uint32_t start;    /* header word 0 */
    uint32_t smid;     /* header word 1 */
    uint32_t first_clock; /* %clock of the first event */
    uint64_t cycles;   /* first event to last, unwrapped as emit_trace does (the counters' span) */
    uint32_t role[2];  /* the roles its lane took ("// @mgpu role NAME"): name indices, in order */
    uint8_t nroles;    /* how many distinct: 0, 1, 2, or 3 for more than 2 */
} live_trace;

typedef struct {
    const mh_spec *spec;
    const mh_names *names;
    mh_tracebuf *buf;
    const mh_dump_opts *opts;
    mh_out *out;
    mh_dump_stats *st;
    mh_error *e;
    live_trace *live;
    uint64_t nlive;
    uint32_t *stack;          /* open regions: name index */
    uint64_t *stack_at;       /* open regions: cycles at begin (default mode) */
    uint64_t stack_cap;
    uint32_t overhead;
    int64_t origin;           /* default mode: smallest trace start offset */
    double ghz;               /* default mode: the clock used (given or measured) */
    char *prefix;             /* per name and phase: the event text up to "ts": */
    size_t *prefix_at;        /* offsets into prefix: [2 * name_index + end], plus the end */
    mh_counters *counters;    /* default mode, opts->counter_bins > 0: regions in flight per bin */
    uint64_t counters_pid;    /* their process: after every SM's (Perfetto treats pid 0 as special) */
    uint64_t full_n;          /* event words of the first full trace (stats->full_trace) */
} dump_ctx;

/* Builds, for every name and phase, the constant text that starts an event,
 * separator included, so the hot loop copies it instead of formatting it. */
static int build_prefixes(dump_ctx *c)
{
    int mosaic = c->opts->mode == MH_DUMP_MOSAIC;
    size_t n = c->names->n, total = 0;
    for (size_t i = 0; i < n; i++) total += 2 * (c->names->v[i].json_len + 40);
    c->prefix = calloc(total + 64, 1); /* + 64: mh_out_small reads 64 bytes */
    c->prefix_at = malloc((2 * n + 1) * sizeof *c->prefix_at);
    if (!c->prefix || !c->prefix_at) return mh_fail(c->e, MH_E_NO_MEMORY, "out of memory");
    size_t at = 0;
    for (size_t i = 0; i < 2 * n; i++) {
        const mh_name *nm = &c->names->v[i / 2];
        const char *ph = i % 2 ? "E" : "B";
        c->prefix_at[i] = at;
        at += (size_t)sprintf(c->prefix + at, mosaic ? ", {\"name\": %s, \"ph\": \"%s\", \"ts\": "
                                                     : ",\n{\"name\":%s,\"ph\":\"%s\",\"ts\":",
                              nm->json, ph);
    }
    c->prefix_at[2 * n] = at;
    return 0;
}

static void warn(dump_ctx *c, uint64_t *counter, const char *fmt, ...)
{
    (*counter)++;
    if (!c->opts->warn || *counter > WARN_LIMIT) return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    c->opts->warn(c->opts->warn_ctx, msg);
}

/* "block 3 · warp 1" or "block (1,2,0) · warpgroup 0". */
static int trace_label(const mh_spec *s, uint64_t t, char *buf, size_t n)
{
    mh_trace_loc l = mh_spec_locate(s, t);
    if (s->grid[1] == 1 && s->grid[2] == 1)
        return snprintf(buf, n, "block %llu \xc2\xb7 %s %llu", (unsigned long long)l.block, mh_scope_name(s->scope),
                        (unsigned long long)l.local);
    return snprintf(buf, n, "block (%llu,%llu,%llu) \xc2\xb7 %s %llu", (unsigned long long)l.bx,
                    (unsigned long long)l.by, (unsigned long long)l.bz, mh_scope_name(s->scope),
                    (unsigned long long)l.local);
}

static int grow_stack(dump_ctx *c, uint64_t need)
{
    if (need <= c->stack_cap) return 0;
    uint64_t cap = c->stack_cap ? c->stack_cap : 64;
    while (cap < need) cap *= 2;
    uint32_t *s = realloc(c->stack, cap * sizeof *s);
    if (!s) return mh_fail(c->e, MH_E_NO_MEMORY, "out of memory for %llu nested regions", (unsigned long long)need);
    c->stack = s;
    uint64_t *a = realloc(c->stack_at, cap * sizeof *a);
    if (!a) return mh_fail(c->e, MH_E_NO_MEMORY, "out of memory for %llu nested regions", (unsigned long long)need);
    c->stack_at = a;
    c->stack_cap = cap;
    return 0;
}

static int bad_trace(dump_ctx *c, uint64_t t, const char *fmt, ...)
{
    char where[96], what[700];
    va_list ap;
    trace_label(c->spec, t, where, sizeof where);
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    c->e->trace = (int64_t)t;
    return mh_fail(c->e, MH_E_BAD_TRACE, "trace %llu (%s): %s", (unsigned long long)t, where, what);
}

/* Validates the events of trace t (n words, even, fits); the first problem
 * is reported.  Also folds the consecutive-time differences into *min_diff
 * (Mosaic's overhead estimate). */
static int scan_events(dump_ctx *c, uint64_t t, const uint32_t *w, uint64_t n, uint32_t *min_diff,
                       uint64_t *cycles, live_trace *l)
{
    int mosaic = c->opts->mode == MH_DUMP_MOSAIC;
    uint64_t depth = 0, acc = 0, regions = 0; /* regions: the events so far that are not roles */
    uint32_t prev = 0;                        /* the time of the last of them */
    l->nroles = 0;
    if (!mosaic && grow_stack(c, n / 2)) return -1;
    for (uint64_t k = 0; k < n / 2; k++) {
        uint32_t tag = w[3 + 2 * k], time = w[4 + 2 * k];
        uint32_t id = tag & MH_NAME_ID_MASK;
        const mh_name *nm = mh_names_get(c->names, id);
        if (!nm) return bad_trace(c, t, "event %llu has unknown name id %u (not in the meta's names or roles)",
                                  (unsigned long long)k, id);
        if (k) {
            uint32_t d = time - w[2 + 2 * k];
            acc += d >= BACKWARD_LIMIT ? 0 : d; /* as emit_trace unwraps it */
        }
        uint32_t idx = (uint32_t)(nm - c->names->v);
        if (nm->role) {
            /* a role names the lane: no region, and not in Mosaic's overhead estimate (its dump is then
             * JAX's of the buffer without the roles' events) */
            if (tag & MH_EXIT_BIT)
                return bad_trace(c, t, "event %llu ends role \"%s\": a role's event is a begin (roles are not regions)",
                                 (unsigned long long)k, nm->name);
            int seen = 0;
            for (uint8_t r = 0; r < l->nroles && r < 2; r++) seen |= l->role[r] == idx;
            if (!seen && l->nroles < 2) l->role[l->nroles++] = idx;
            else if (!seen) l->nroles = 3;
            continue;
        }
        if (regions++) {
            uint32_t d = time - prev;
            if (d < *min_diff) *min_diff = d;
        }
        prev = time;
        if (!(tag & MH_EXIT_BIT)) {
            if (!mosaic) c->stack[depth] = idx;
            depth++;
        } else if (depth == 0) {
            return bad_trace(c, t, "event %llu ends \"%s\" but no region is open (unbalanced end event)",
                             (unsigned long long)k, nm->name);
        } else {
            depth--;
            if (!mosaic && c->stack[depth] != idx)
                return bad_trace(c, t, "event %llu ends \"%s\" but the innermost open region is \"%s\"",
                                 (unsigned long long)k, nm->name, c->names->v[c->stack[depth]].name);
        }
    }
    *cycles = acc;
    return 0;
}

static int by_key(const void *a, const void *b)
{
    const live_trace *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->trace > y->trace) - (x->trace < y->trace);
}

/* Pass 1: validate everything, collect traces with events. */
static int scan(dump_ctx *c)
{
    const mh_spec *s = c->spec;
    uint64_t E = s->entries, capacity = E - MH_HEADER_WORDS;
    uint64_t short_traces = 0, worst_trace = 0, worst_n = 0;
    uint32_t min_diff = 12; /* Mosaic's initial value: 12 cycles */
    int have_err = 0;
    mh_error first_err;
    mh_error_clear(&first_err);

    c->live = malloc((s->num_traces ? s->num_traces : 1) * sizeof *c->live);
    if (!c->live) return mh_fail(c->e, MH_E_NO_MEMORY, "out of memory for %llu traces",
                                 (unsigned long long)s->num_traces);
    for (uint64_t t = 0; t < s->num_traces; t++) {
        const uint32_t *w = mh_tracebuf_trace(c->buf, t, c->e);
        if (!w) return -1;
        uint64_t n = w[2];
        if (n > capacity) {
            if (n > worst_n) { worst_n = n; worst_trace = t; }
            short_traces++;
            continue;
        }
        /* no room for another event (2 words): a kernel that bounds-checks its own trace may have
         * dropped events here (an instrumented one counts past its capacity: n > capacity above) */
        if (!c->opts->calib && n + 2 > capacity) {
            if (!c->st->full_traces) {
                c->st->full_trace = t;
                c->full_n = n;
            }
            c->st->full_traces++;
        }
        if (have_err || n == 0) continue;
        if (n & 1) {
            char where[96];
            trace_label(s, t, where, sizeof where);
            first_err.trace = (int64_t)t;
            if (c->opts->mode == MH_DUMP_MOSAIC)
                mh_fail(&first_err, MH_E_ODD_EVENTS, "%s", MOSAIC_ODD);
            else
                mh_fail(&first_err, MH_E_ODD_EVENTS,
                        "trace %llu (%s) counted %llu event words, an odd number: the buffer is likely corrupt "
                        "(a kernel that overran its profiling space); retry with a larger entries_per_warpgroup",
                        (unsigned long long)t, where, (unsigned long long)n);
            have_err = 1;
            continue;
        }
        uint64_t cycles = 0;
        live_trace *l = &c->live[c->nlive];
        if (scan_events(c, t, w, n, &min_diff, &cycles, l)) {
            if (c->e->code != MH_E_BAD_TRACE) return -1;
            first_err = *c->e;
            have_err = 1;
            continue;
        }
        c->nlive++;
        l->trace = t;
        l->start = w[0];
        l->smid = w[1];
        l->first_clock = w[4];
        l->cycles = cycles;
    }
    if (short_traces) {
        c->e->required = (int64_t)(worst_n + MH_HEADER_WORDS);
        c->e->capacity = (int64_t)E;
        c->e->trace = (int64_t)worst_trace;
        if (c->opts->mode == MH_DUMP_MOSAIC) return mh_fail(c->e, MH_E_INSUFFICIENT_SPACE, "%s", MOSAIC_INSUFFICIENT);
        char where[96];
        trace_label(s, worst_trace, where, sizeof where);
        return mh_fail(c->e, MH_E_INSUFFICIENT_SPACE,
                       "insufficient space: %llu of %llu traces recorded more than fits in entries_per_warpgroup=%llu; "
                       "trace %llu (%s) needed the most, %llu entries (3 header + %llu event words), %llu more than "
                       "it had; use entries_per_warpgroup >= %llu",
                       (unsigned long long)short_traces, (unsigned long long)s->num_traces, (unsigned long long)E,
                       (unsigned long long)worst_trace, where, (unsigned long long)(worst_n + MH_HEADER_WORDS),
                       (unsigned long long)worst_n, (unsigned long long)(worst_n + MH_HEADER_WORDS - E),
                       (unsigned long long)(worst_n + MH_HEADER_WORDS));
    }
    if (have_err) {
        *c->e = first_err;
        return -1;
    }
    /* Mosaic: overhead = min difference (uint32) - 1, not below 0; JAX computes
     * the subtraction in uint32, so a zero difference wraps to 2^32-1 there and
     * we do the same to give the same output. */
    c->overhead = c->opts->mode == MH_DUMP_MOSAIC ? min_diff - 1u : 0;
    c->st->overhead_cycles = c->overhead;

    /* Order: Mosaic sorts traces by the ts of their first event, which is
     * their start word.  The default mode unwraps starts around the first
     * trace's (they span far less than the 4.29 s wrap of the 32-bit timer). */
    int64_t lo = 0;
    for (uint64_t i = 0; i < c->nlive; i++) {
        live_trace *l = &c->live[i];
        l->key = c->opts->mode == MH_DUMP_MOSAIC ? (int64_t)l->start : (int64_t)(int32_t)(l->start - c->live[0].start);
        if (i == 0 || l->key < lo) lo = l->key;
    }
    c->origin = lo;
    qsort(c->live, c->nlive, sizeof *c->live, by_key);
    return 0;
}

static uint32_t gcd32(uint32_t a, uint32_t b)
{
    while (b) {
        uint32_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Measures the SM clock from the calibration words: cycles over timer ns,
 * summed over the traces with events.  %globaltimer advances in steps (32 ns
 * on recent GPUs, 1 us on some), so each reading is off by up to a step, and
 * traces that start and end together are off alike: the measurement is
 * within step / (mean trace length).  The step is the GCD of the readings'
 * distances from the first one. */
static int measure_clock(dump_ctx *c)
{
    const uint32_t *k = c->opts->calib;
    double cycles = 0, ns = 0;
    uint64_t used = 0, ran = 0, odd = 0;
    uint32_t step = 0, t0 = 0;
    for (uint64_t i = 0; i < c->nlive; i++) {
        const uint32_t *w = k + c->live[i].trace * MH_CALIB_WORDS;
        uint32_t dc = w[2] - w[0], dt = w[3] - w[1];
        if (dc) ran++;
        if (dt >= 0x80000000u || dc >= 0x80000000u) odd++; /* a clock going back, or a trace of seconds */
        if (dt == 0 || dt >= 0x80000000u || dc >= 0x80000000u) continue;
        if (!used) t0 = w[1];
        step = gcd32(gcd32(step, w[1] - t0), w[3] - t0);
        cycles += dc;
        ns += dt;
        used++;
    }
    /* a trace with events ran cycles between its start and its exit: words that say none of
     * them did are not an instrumented kernel's calibration (a file of zeros, another file) */
    if (c->nlive && !ran)
        return mh_fail(c->e, MH_E_BAD_BUFFER, "the calibration words say that none of the %llu traces with events ran "
                       "a cycle (%%clock at start and exit equal: a file of zeros, or not this trace's --calib)",
                       (unsigned long long)c->nlive);
    /* words most of which go backwards, or that measure a rate no GPU runs at, are not this
     * trace's calibration (random words fell back to cycles, or gave 2e-05 GHz: issue 36) */
    if (odd > used)
        return mh_fail(c->e, MH_E_BAD_BUFFER, "the calibration words of %llu of the %llu traces with events have "
                       "%%clock or %%globaltimer going backwards between start and exit: not this trace's --calib",
                       (unsigned long long)odd, (unsigned long long)c->nlive);
    /* below a microsecond in all the measurement means nothing: keep the given rate */
    if (ns < 1000 || cycles <= 0) return 0;
    if (!mh_clock_ghz_ok(cycles / ns))
        return mh_fail(c->e, MH_E_BAD_BUFFER, "the calibration words measure an SM clock of %.3g GHz (%.0f cycles in "
                       "%.0f ns of %%globaltimer over %llu traces), outside %g to %g GHz: not this trace's --calib",
                       cycles / ns, cycles, ns, (unsigned long long)used, MH_CLOCK_GHZ_MIN, MH_CLOCK_GHZ_MAX);
    c->st->clock_ghz_measured = cycles / ns;
    c->st->calib_traces = used;
    c->st->timer_step_ns = step;
    c->st->clock_bound = (double)step * (double)used / ns;
    /* a coarse measurement gives way to a given rate (the driver's nominal clock) */
    c->st->clock_measured_used = c->st->clock_bound <= 0.005 || !(c->opts->clock_ghz > 0);
    return 0;
}

static void write_dims(mh_out *o, const uint64_t v[3])
{
    mh_out_lit(o, "[");
    for (int i = 0; i < 3; i++) {
        if (i) mh_out_lit(o, ",");
        mh_out_u64(o, v[i]);
    }
    mh_out_lit(o, "]");
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Default mode: top-level metadata and one process name per SM. */
static int default_prologue(dump_ctx *c)
{
    mh_out *o = c->out;
    const mh_spec *s = c->spec;
    int cycles = !(c->ghz > 0);
    mh_out_lit(o, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"mgpu-harness " MH_VERSION "\",");
    if (cycles) {
        mh_out_lit(o, "\"time_unit\":\"cycles\",\"note\":\"no SM clock rate was given (--clock-ghz): event times "
                      "are SM clock cycles shown as if they were ns (1 us on the timeline = 1000 cycles); trace "
                      "start offsets are %globaltimer ns\",");
    } else {
        char g[400];
        const mh_dump_stats *st = c->st;
        if (st->clock_ghz_measured > 0 && st->clock_measured_used)
            snprintf(g, sizeof g, "\"time_unit\":\"ns\",\"clock_ghz\":%.6g,\"clock\":\"measured from %%clock and "
                     "%%globaltimer at the start and exit of %llu traces (timer step %u ns: within %.2g%%)\",", c->ghz,
                     (unsigned long long)st->calib_traces, st->timer_step_ns, 100 * st->clock_bound);
        else if (st->clock_ghz_measured > 0)
            snprintf(g, sizeof g, "\"time_unit\":\"ns\",\"clock_ghz\":%.17g,\"clock\":\"given; the calibration "
                     "read %.4g GHz, but the traces are too short for the timer's %u ns step: within %.2g%% only\",",
                     c->ghz, st->clock_ghz_measured, st->timer_step_ns, 100 * st->clock_bound);
        else
            snprintf(g, sizeof g, "\"time_unit\":\"ns\",\"clock_ghz\":%.17g,", c->ghz);
        mh_out_str(o, g);
    }
    mh_out_lit(o, "\"scope\":\"");
    mh_out_str(o, mh_scope_name(s->scope));
    mh_out_lit(o, "\",\"entries_per_warpgroup\":");
    mh_out_u64(o, s->entries);
    mh_out_lit(o, ",\"grid\":");
    write_dims(o, s->grid);
    mh_out_lit(o, ",\"block\":");
    write_dims(o, s->block);
    mh_out_lit(o, ",\"traces\":");
    mh_out_u64(o, s->num_traces);
    mh_out_lit(o, ",\"origin\":\"ts 0 = the earliest trace start\"},\n\"traceEvents\":[\n");

    /* Distinct SMs, sorted. */
    uint32_t *sm = malloc((c->nlive ? c->nlive : 1) * sizeof *sm);
    if (!sm) return mh_fail(c->e, MH_E_NO_MEMORY, "out of memory");
    for (uint64_t i = 0; i < c->nlive; i++) sm[i] = c->live[i].smid;
    qsort(sm, c->nlive, sizeof *sm, cmp_u32);
    int first = 1;
    for (uint64_t i = 0; i < c->nlive; i++) {
        if (i && sm[i] == sm[i - 1]) continue;
        if (!first) mh_out_lit(o, ",\n");
        first = 0;
        mh_out_lit(o, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":");
        mh_out_u64(o, (uint64_t)sm[i] + 1);
        mh_out_lit(o, ",\"args\":{\"name\":\"SM ");
        mh_out_u64(o, sm[i]);
        mh_out_lit(o, "\"}},\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":");
        mh_out_u64(o, (uint64_t)sm[i] + 1);
        mh_out_lit(o, ",\"args\":{\"sort_index\":");
        mh_out_u64(o, sm[i]);
        mh_out_lit(o, "}}");
    }
    free(sm);
    return 0;
}

static void default_thread_meta(dump_ctx *c, uint64_t pid, uint64_t tid, const live_trace *l, int *first)
{
    mh_out *o = c->out;
    char label[96 + 2 * (MH_ROLE_MAX + 3) + 8];
    int len = trace_label(c->spec, l->trace, label, 96);
    /* its roles (one-word names, mh_role_name_ok: nothing to escape): "... · producer" */
    for (uint8_t r = 0; r < l->nroles && r < 2 && len > 0 && len < 96; r++)
        len += snprintf(label + len, sizeof label - (size_t)len, "%s%s", r ? "/" : " \xc2\xb7 ", c->names->v[l->role[r]].name);
    if (l->nroles > 2 && len > 0 && (size_t)len < sizeof label - 4) snprintf(label + len, sizeof label - (size_t)len, "/...");
    if (!*first) mh_out_lit(o, ",\n");
    *first = 0;
    mh_out_lit(o, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":");
    mh_out_u64(o, pid);
    mh_out_lit(o, ",\"tid\":");
    mh_out_u64(o, tid);
    mh_out_lit(o, ",\"args\":{\"name\":\"");
    mh_out_str(o, label);
    mh_out_lit(o, "\"}},\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":");
    mh_out_u64(o, pid);
    mh_out_lit(o, ",\"tid\":");
    mh_out_u64(o, tid);
    mh_out_lit(o, ",\"args\":{\"sort_index\":");
    mh_out_u64(o, tid);
    mh_out_lit(o, "}}");
}

/* Writes the start of an event: its name/phase prefix.  Mosaic mode leaves
 * out the ", " separator before the very first event. */
static inline void emit_prefix(dump_ctx *c, uint32_t idx, int end, int *first)
{
    size_t k = 2 * (size_t)idx + (end != 0), skip = *first ? 2 : 0;
    size_t len = c->prefix_at[k + 1] - c->prefix_at[k] - skip;
    const char *p = c->prefix + c->prefix_at[k] + skip;
    *first = 0;
    if (len <= 64) mh_out_small(c->out, p, len);
    else mh_out_mem(c->out, p, len);
}

static inline uint64_t cycles_to_units(double ghz, uint64_t cycles)
{
    return ghz > 0 ? (uint64_t)((double)cycles / ghz + 0.5) : cycles;
}

/* Default mode: where trace l's first event is on the timeline, in the
 * output's unit from ts 0. */
static int64_t trace_base(const dump_ctx *c, const live_trace *l)
{
    int64_t base = (int64_t)(int32_t)(l->start - c->live[0].start) - c->origin;
    if (c->opts->calib && c->ghz > 0) {
        /* the first event's distance from the trace's start, on its own clock */
        uint32_t since = l->first_clock - c->opts->calib[l->trace * MH_CALIB_WORDS];
        if (since < 0x80000000u) base += (int64_t)cycles_to_units(c->ghz, since);
    }
    return base;
}

/* Default mode with counters: bins over the span of every trace's events. */
static int init_counters(dump_ctx *c, mh_counters *cnt)
{
    int64_t lo = 0, hi = 0;
    uint32_t top_sm = 0;
    for (uint64_t i = 0; i < c->nlive; i++) {
        const live_trace *l = &c->live[i];
        if (l->smid > top_sm) top_sm = l->smid;
        int64_t a = trace_base(c, l), b = a + (int64_t)cycles_to_units(c->ghz, l->cycles);
        if (i == 0 || a < lo) lo = a;
        if (i == 0 || b > hi) hi = b;
    }
    if (mh_counters_init(cnt, c->names->n, c->opts->counter_bins, lo, hi, c->e)) return -1;
    c->counters = cnt;
    c->counters_pid = (uint64_t)top_sm + 2;
    return 0;
}

/* Default mode with counters: after the events, one counter track per region
 * name, a value per bin, and 0 at the span's end, in a process of their own
 * ("regions in flight", sorted first; its pid follows the SMs' smid + 1). */
static int emit_counters(dump_ctx *c)
{
    const mh_counters *cnt = c->counters;
    mh_out *o = c->out;
    double *v = malloc(cnt->bins * sizeof *v);
    if (!v) return mh_fail(c->e, MH_E_NO_MEMORY, "%s", "out of memory for the counters");
    char pid[48];
    snprintf(pid, sizeof pid, ",\"pid\":%llu,", (unsigned long long)c->counters_pid);
    mh_out_lit(o, ",\n{\"name\":\"process_name\",\"ph\":\"M\"");
    mh_out_str(o, pid);
    mh_out_lit(o, "\"args\":{\"name\":\"regions in flight\"}},\n{\"name\":\"process_sort_index\",\"ph\":\"M\"");
    mh_out_str(o, pid);
    mh_out_lit(o, "\"args\":{\"sort_index\":-1}}");
    for (size_t i = 0; i < c->names->n; i++) {
        if (!mh_counters_used(cnt, i)) continue;
        mh_counters_values(cnt, i, v);
        char head[64];
        for (uint32_t k = 0; k <= cnt->bins; k++) {
            mh_out_lit(o, ",\n{\"name\":");
            mh_out_mem(o, c->names->v[i].json, c->names->v[i].json_len);
            mh_out_lit(o, ",\"ph\":\"C\",\"ts\":");
            mh_out_milli3(o, (int64_t)llround(cnt->lo + k * cnt->width));
            mh_out_str(o, pid);
            snprintf(head, sizeof head, "\"args\":{\"in flight\":%.6g}}", k < cnt->bins ? v[k] : 0.0);
            mh_out_str(o, head);
        }
    }
    free(v);
    if (cnt->no_memory) return mh_fail(c->e, MH_E_NO_MEMORY, "%s", "out of memory for the counters");
    return 0;
}

/* ---- flows (emu's, flows.h): what released a wait, between two traces ---- */

/* The live trace of thread `thread` of block `b` (NULL: outside the grid, or a trace without events). */
static const live_trace *flow_trace(const dump_ctx *c, const uint64_t *at, const uint32_t b[3], uint32_t thread)
{
    const mh_spec *s = c->spec;
    if (b[0] >= s->grid[0] || b[1] >= s->grid[1] || b[2] >= s->grid[2]) return NULL;
    uint64_t lin = ((uint64_t)b[0] * s->grid[1] + b[1]) * s->grid[2] + b[2]; /* Mosaic's order of blocks */
    uint64_t t = lin * s->traces_per_block + thread / (uint32_t)s->scope;
    return t < s->num_traces && at[t] ? &c->live[at[t] - 1] : NULL;
}

/* A %clock64 reading of trace l's SM on the timeline, as its events are placed. */
static int64_t flow_ts(const dump_ctx *c, const live_trace *l, uint64_t clock)
{
    int32_t d = (int32_t)((uint32_t)clock - l->first_clock);
    int64_t base = trace_base(c, l);
    return d >= 0 ? base + (int64_t)cycles_to_units(c->ghz, (uint64_t)d) : base - (int64_t)cycles_to_units(c->ghz, (uint64_t)-(int64_t)d);
}

/* an event's end: its time and its place (the SM's process, the trace's thread) */
static void ts_place(mh_out *o, int64_t ts, const live_trace *l)
{
    mh_out_milli3(o, ts);
    mh_out_lit(o, ",\"pid\":");
    mh_out_u64(o, (uint64_t)l->smid + 1);
    mh_out_lit(o, ",\"tid\":");
    mh_out_u64(o, l->trace + 1);
    mh_out_lit(o, "}");
}

static void flow_event(dump_ctx *c, const char *name, int finish, uint64_t id, int64_t ts, const live_trace *l)
{
    mh_out *o = c->out;
    /* first an instant event at the same place and cat: Chrome DevTools' Performance panel binds a flow
     * to the event with its cat, pid, tid and ts (Perfetto and Catapult to the enclosing slice) */
    mh_out_lit(o, ",\n{\"name\":\"");
    mh_out_str(o, finish ? "mbarrier wait" : name);
    mh_out_lit(o, "\",\"cat\":\"mbarrier\",\"ph\":\"i\",\"s\":\"t\",\"ts\":");
    ts_place(o, ts, l);
    mh_out_lit(o, ",\n{\"name\":\"");
    mh_out_str(o, name);
    mh_out_lit(o, "\",\"cat\":\"mbarrier\",\"ph\":\"");
    mh_out_str(o, finish ? "f\",\"bp\":\"e" : "s");
    mh_out_lit(o, "\",\"id\":");
    mh_out_u64(o, id);
    mh_out_lit(o, ",\"ts\":");
    ts_place(o, ts, l);
}

/* Default mode with flows: each one an "s" on its source's trace and an "f" bound to the enclosing
 * slice ("bp": "e") on its destination's, ids from 1 in the order emu recorded them; one whose end
 * has no trace with events is left out. */
static int emit_flows(dump_ctx *c)
{
    const mh_spec *s = c->spec;
    uint64_t *at = calloc(s->num_traces ? s->num_traces : 1, sizeof *at);
    if (!at) return mh_fail(c->e, MH_E_NO_MEMORY, "%s", "out of memory for the flows");
    for (uint64_t i = 0; i < c->nlive; i++) at[c->live[i].trace] = i + 1;
    uint64_t id = 0;
    for (uint32_t i = 0; i < c->opts->nflows; i++) {
        const mh_trace_flow *f = &c->opts->flows[i];
        const live_trace *a = flow_trace(c, at, f->src_block, f->src_thread), *b = flow_trace(c, at, f->dst_block, f->dst_thread);
        if (!a || !b) continue;
        const char *name = f->kind == MH_FLOW_TMA ? "TMA complete_tx" : "mbarrier arrive";
        id++;
        /* an end that rounds to its start's nanosecond (a release a cycle after the arrive) is written a
         * nanosecond later: Chrome DevTools drops a flow whose two ends have the same time */
        int64_t ta = flow_ts(c, a, f->src_clock), tb = flow_ts(c, b, f->dst_clock);
        if (tb == ta && f->dst_clock != f->src_clock) tb++;
        flow_event(c, name, 0, id, ta, a);
        flow_event(c, name, 1, id, tb, b);
    }
    free(at);
    return 0;
}

/* Pass 2: events of one trace in timeline order. */
static int emit_trace(dump_ctx *c, const live_trace *l, int *first_out)
{
    int first_local = *first_out, *first = &first_local;
    const uint32_t *w = mh_tracebuf_trace(c->buf, l->trace, c->e);
    if (!w) return -1;
    int mosaic = c->opts->mode == MH_DUMP_MOSAIC;
    double ghz = c->ghz;
    mh_summary *sum = c->opts->summary;
    mh_out *o = c->out;
    uint64_t n = w[2] / 2, depth = 0, shown = 0; /* shown: events written (a role's are not) */
    uint64_t pid = (uint64_t)l->smid + 1, tid = l->trace + 1;
    uint32_t first_clock = w[4], prev_clock = w[4], last32 = 0;
    uint64_t acc = 0;                                   /* cycles since the first event */
    int64_t base_ns = mosaic ? 0 : trace_base(c, l);
    int64_t last_ns = base_ns;
    mh_counters *cnt = c->counters;

    /* The constant end of every event of this trace. */
    char suffix[128] = {0}; /* used <= 64, readable 64 for mh_out_small */
    size_t sl = 0;
    sl += (size_t)sprintf(suffix, mosaic ? ", \"pid\": " : ",\"pid\":");
    sl += mh_fmt_u64(suffix + sl, pid);
    sl += (size_t)sprintf(suffix + sl, mosaic ? ", \"tid\": " : ",\"tid\":");
    sl += mh_fmt_u64(suffix + sl, tid);
    suffix[sl++] = '}';

    if (grow_stack(c, n)) return -1;
    if (!mosaic) default_thread_meta(c, pid, tid, l, first);
    if (mosaic && l->nroles) /* Mosaic's times are from the first region event: the roles' are left out */
        for (uint64_t k = 0; k < n; k++) {
            const mh_name *nm = mh_names_get(c->names, w[3 + 2 * k] & MH_NAME_ID_MASK);
            if (!nm->role) { first_clock = w[4 + 2 * k]; break; }
        }
    for (uint64_t k = 0; k < n; k++) {
        uint32_t tag = w[3 + 2 * k], clock = w[4 + 2 * k];
        int end = (tag & MH_EXIT_BIT) != 0;
        const mh_name *nm = mh_names_get(c->names, tag & MH_NAME_ID_MASK);
        uint32_t idx = (uint32_t)(nm - c->names->v);

        uint32_t step = clock - prev_clock;
        if (step >= BACKWARD_LIMIT) {
            if (!mosaic)
                warn(c, &c->st->clock_warnings, "trace %llu event %llu: %%clock went back by %u cycles; taken as 0",
                     (unsigned long long)l->trace, (unsigned long long)k, 0u - step);
            step = 0;
        }
        acc += step;
        prev_clock = clock;
        if (nm->role) continue; /* the lane's label says it (default_thread_meta) */

        emit_prefix(c, idx, end, first);
        if (mosaic) {
            uint32_t t32 = (clock - first_clock) - (uint32_t)(shown * (uint64_t)c->overhead);
            if (shown && last32 >= t32) {
                if (last32 - t32 > 10)
                    warn(c, &c->st->clock_warnings,
                         "Profiler clock went significantly backwards for event %s `%s`: %u -> %u",
                         end ? "end" : "start", nm->name, last32, t32);
                t32 = last32 + 1;
            }
            last32 = t32;
            mh_out_milli(o, (uint32_t)(l->start + t32));
        } else {
            last_ns = base_ns + (int64_t)cycles_to_units(ghz, acc);
            mh_out_milli3(o, last_ns);
        }
        mh_out_small(o, suffix, sl);
        if (!end) {
            c->stack[depth] = idx;
            c->stack_at[depth] = acc;
            depth++;
        } else {
            depth--;
            /* the duration the trace shows: end ts - begin ts, each converted once (converting the
             * difference instead can read 1 ns off, and a region's max below its longest event) */
            if (sum)
                mh_summary_add(sum, c->stack[depth],
                               mosaic ? cycles_to_units(ghz, acc - c->stack_at[depth])
                                      : cycles_to_units(ghz, acc) - cycles_to_units(ghz, c->stack_at[depth]));
            if (cnt)
                mh_counters_add(cnt, c->stack[depth], base_ns + (int64_t)cycles_to_units(ghz, c->stack_at[depth]),
                                last_ns);
        }
        shown++;
    }
    c->st->events += shown;
    if (sum && !mosaic) mh_summary_trace(sum, l->smid, base_ns, last_ns);
    if (depth) {
        /* Truncated by a bounds-checked kernel: close the open regions,
         * innermost first, at the last event's time (the default mode marks
         * them with args.truncated). */
        c->st->truncated_traces++;
        while (depth--) {
            emit_prefix(c, c->stack[depth], 1, first);
            if (mosaic) {
                mh_out_milli(o, (uint32_t)(l->start + last32));
                mh_out_mem(o, suffix, sl);
            } else {
                mh_out_milli3(o, last_ns);
                mh_out_mem(o, suffix, sl - 1);
                mh_out_lit(o, ",\"args\":{\"truncated\":true}}");
            }
            if (sum) mh_summary_truncated(sum, c->stack[depth]);
            if (cnt)
                mh_counters_add(cnt, c->stack[depth], base_ns + (int64_t)cycles_to_units(ghz, c->stack_at[depth]),
                                last_ns);
            c->st->events++;
        }
    }
    *first_out = first_local;
    return 0;
}

int mh_dump(const mh_spec *spec, const mh_names *names, mh_tracebuf *buf, const mh_dump_opts *opts, mh_out *out,
            mh_dump_stats *stats, mh_error *e)
{
    mh_dump_stats local;
    dump_ctx c;
    memset(&c, 0, sizeof c);
    if (!stats) stats = &local;
    memset(stats, 0, sizeof *stats);
    c.spec = spec;
    c.names = names;
    c.buf = buf;
    c.opts = opts;
    c.out = out;
    c.st = stats;
    c.e = e;
    stats->traces = spec->num_traces;
    uint64_t start_bytes = out->total + out->len;

    int rc = build_prefixes(&c);
    if (!rc) rc = scan(&c);
    c.ghz = opts->clock_ghz;
    if (!rc && opts->mode == MH_DUMP_DEFAULT && opts->calib) {
        rc = measure_clock(&c);
        if (!rc && stats->clock_ghz_measured > 0 && stats->clock_measured_used) c.ghz = stats->clock_ghz_measured;
    }
    if (opts->summary) opts->summary->unit = c.ghz > 0 ? "ns" : "cycles";
    mh_counters counters;
    if (!rc && opts->counter_bins && opts->mode == MH_DUMP_MOSAIC)
        rc = mh_fail(e, MH_E_BAD_ARGUMENT, "%s", "counters are for the default mode (Mosaic's dump has none)");
    if (!rc && opts->counter_bins && c.nlive) rc = init_counters(&c, &counters);
    if (!rc) {
        stats->traces_with_events = c.nlive;
        int first = 1;
        if (opts->mode == MH_DUMP_MOSAIC) {
            mh_out_lit(out, "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [");
        } else {
            rc = default_prologue(&c);
            first = rc ? 1 : (c.nlive == 0);
        }
        for (uint64_t i = 0; !rc && i < c.nlive; i++) {
            rc = emit_trace(&c, &c.live[i], &first);
            /* a write failed or a stop was requested (Ctrl-C under the runner): stop here */
            if (!rc && mh_out_failure(out, e)) rc = -1;
        }
        if (!rc && opts->nflows && opts->mode == MH_DUMP_DEFAULT && c.nlive) rc = emit_flows(&c);
        if (!rc && c.counters) rc = emit_counters(&c);
        if (!rc) mh_out_str(out, opts->mode == MH_DUMP_MOSAIC ? "]}" : "\n]}\n");
        if (!rc && opts->summary && opts->summary->no_memory)
            rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory for the region summary");
    }
    if (!rc && stats->truncated_traces && opts->warn) {
        char msg[200];
        snprintf(msg, sizeof msg,
                 "%llu traces ended with open regions (truncated by a bounds check?); they were closed at their "
                 "last event",
                 (unsigned long long)stats->truncated_traces);
        opts->warn(opts->warn_ctx, msg);
    }
    if (!rc && stats->full_traces && opts->warn) {
        char msg[600];
        uint64_t cap = spec->entries - MH_HEADER_WORDS;
        snprintf(msg, sizeof msg,
                 "%llu of %llu traces are full (trace %llu holds %llu event words of the %llu that "
                 "entries_per_warpgroup=%llu leaves, no room for another event): possibly truncated by the "
                 "kernel's own bounds check, which drops the events past its capacity; run it with a larger "
                 "entries_per_warpgroup (a kernel compiled for a fixed capacity must be rebuilt for it)",
                 (unsigned long long)stats->full_traces, (unsigned long long)spec->num_traces,
                 (unsigned long long)stats->full_trace,
                 (unsigned long long)c.full_n, (unsigned long long)cap,
                 (unsigned long long)spec->entries);
        opts->warn(opts->warn_ctx, msg);
    }
    if (!rc && stats->clock_warnings > WARN_LIMIT && opts->warn) {
        char msg[160];
        snprintf(msg, sizeof msg, "... %llu clock warnings in all", (unsigned long long)stats->clock_warnings);
        opts->warn(opts->warn_ctx, msg);
    }
    stats->bytes = out->total + out->len - start_bytes;
    free(c.live);
    free(c.stack);
    free(c.stack_at);
    free(c.prefix);
    free(c.prefix_at);
    if (c.counters) mh_counters_free(c.counters);
    return rc ? -1 : 0;
}
