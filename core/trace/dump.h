/* dump.h - turns a trace buffer into a Chrome/Perfetto trace (JSON), in two
 * modes (docs/DESIGN.md "Dump"):
 *   MH_DUMP_MOSAIC  the same JSON value JAX's ProfilerSpec.dump writes, its
 *                   errors and messages included (byte-identical formatting);
 *   MH_DUMP_DEFAULT 64-bit unwrapped clocks, cycles converted with a known SM
 *                   clock rate (or said to be cycles), process/thread names,
 *                   errors that say how many entries were needed.
 * Two streaming passes: a scan that validates every trace and gathers what
 * the order and the overhead estimate need (memory per trace, not per event),
 * then the emission in timeline order. */
#ifndef MH_DUMP_H
#define MH_DUMP_H

#include <stdint.h>
#include "base/error.h"
#include "trace/names.h"
#include "base/out.h"
#include "trace/spec.h"
#include "trace/summary.h"
#include "trace/tracebuf.h"
#include "trace/flows.h"

typedef enum { MH_DUMP_DEFAULT = 0, MH_DUMP_MOSAIC = 1 } mh_dump_mode;

typedef void (*mh_warn_fn)(void *ctx, const char *message);

typedef struct mh_dump_opts {
    mh_dump_mode mode;
    double clock_ghz;      /* SM clock in GHz; 0: unknown, times stay cycles */
    mh_summary *summary;   /* optional: region statistics are added here */
    const uint32_t *calib; /* optional (default mode): per trace %clock and %globaltimer_lo at its
                            * start and exit (4 words, instrumented kernels); the SM clock is then
                            * measured from them and events are placed from the trace's own start */
    uint32_t counter_bins; /* default mode, optional: after the events, a counter track per region
                            * name: the mean number of traces inside it in each of this many equal
                            * bins of the span (1 .. MH_COUNTERS_MAX_BINS) */
    mh_warn_fn warn;       /* optional: warnings (first few of each kind) */
    void *warn_ctx;
    const mh_trace_flow *flows; /* default mode, optional: flow events between traces (emu's, flows.h), after the
                                 * events; one whose end's trace has no events is left out.  None: the dump is
                                 * what it was without them, byte for byte.  Mosaic mode never has them */
    uint32_t nflows;
} mh_dump_opts;

typedef struct mh_dump_stats {
    uint64_t traces;            /* traces in the buffer */
    uint64_t traces_with_events;
    uint64_t events;            /* events written (synthetic ends included) */
    uint64_t truncated_traces;  /* traces that ended with open regions */
    uint64_t full_traces;       /* traces with no room left for another event (3 + n + 2 > entries), counted
                                 * when the kernel may have dropped events past its capacity: one that writes
                                 * its own trace with a bounds check (Mosaic style).  Not counted with
                                 * calibration words (a harness-instrumented kernel counts past its capacity,
                                 * so its full trace is complete and an overflow is insufficient_space) */
    uint64_t full_trace;        /* the first full trace, when full_traces > 0 */
    uint64_t clock_warnings;    /* clock went backwards */
    uint32_t overhead_cycles;   /* Mosaic mode: estimated profiling overhead */
    uint64_t bytes;             /* bytes of JSON written */
    double clock_ghz_measured;  /* from calib, 0 when not measured */
    uint64_t calib_traces;      /* traces the measurement used */
    uint32_t timer_step_ns;     /* %globaltimer's step as the calibration words show it */
    double clock_bound;         /* the measurement is within this fraction (step / mean trace length) */
    int clock_measured_used;    /* 1: events converted with the measured clock; 0: with the given one */
} mh_dump_stats;

/* Dumps buf (already bound to spec) to out.  On error nothing more is
 * written; the caller aborts `out` so no partial file remains. */
int mh_dump(const mh_spec *spec, const mh_names *names, mh_tracebuf *buf, const mh_dump_opts *opts, mh_out *out,
            mh_dump_stats *stats, mh_error *e);

#endif
