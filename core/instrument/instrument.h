/* instrument.h - rewrites a PTX module so that its region markers record a
 * trace (docs/DESIGN.md "Instrumenting kernels").  Markers are comments:
 *     // @mgpu begin NAME        ...        // @mgpu end NAME
 * Each entry with markers gets three parameters appended, passed by the
 * harness, never by the user:
 *     .param .u64 __mgpu_trace     the trace buffer (traces x entries uint32, Mosaic's layout);
 *                                  with aligned records, an address 4 mod 8 (MH_TRACE_SHIFT)
 *     .param .u32 __mgpu_entries   entries_per_warpgroup (words per trace; even with aligned
 *                                  records: mh_instrumented_entries)
 *     .param .u64 __mgpu_calib     per trace 4 uint32: %clock and %globaltimer_lo
 *                                  at its start and at its exit (clock calibration)
 * The writer of a trace is lane 0 of its warp (scope warp) or thread 0 of its
 * warpgroup (the lowest thread, also of a last, partial one); it stores
 * (tag, %clock) for each marker it passes while the trace has room, and
 * counts every event even past the capacity, so the header's count says
 * exactly how many entries the kernel needed.  The bounds check is made once
 * per straight-line run of records (all of the run fits, or none of it is
 * stored; the count is exact either way).  The header's start word is
 * written in the prologue, its SM id and count at every exit. */
#ifndef MH_INSTRUMENT_H
#define MH_INSTRUMENT_H

#define MH_INSTRUMENT_PARAMS 3   /* parameters appended to an instrumented kernel */
#define MH_TRACE_SHIFT 4         /* aligned records: the kernel's __mgpu_trace is an 8-aligned
                                  * allocation + 4, where the trace buffer (the dump's words) begins */

#include <stddef.h>
#include "base/error.h"
#include "trace/names.h"
#include "frontend/ptx.h"
#include "trace/spec.h"

/* Where the rewrite inserted lines: `newlines` line breaks into original line
 * `line`; text_before / text_after: whether that line has more than blanks
 * before / after the insertion point.  (`before` lets mh_instrumented_line
 * search the list instead of walking it.) */
typedef struct mh_insertion {
    uint32_t line, newlines;
    uint32_t before;       /* line breaks the insertions before this one added */
    uint8_t text_before, text_after;
} mh_insertion;

typedef struct mh_instrumented {
    char *text;            /* the rewritten module, NUL-terminated */
    size_t len;
    mh_insertion *inserted; /* in text order: for mapping lines back (mh_instrumented_line) */
    size_t ninserted;
    mh_names names;        /* region names, ids in order of first appearance */
    uint32_t markers;      /* markers rewritten */
    char **kernels;        /* entries that were instrumented */
    uint32_t nkernels;
    uint32_t nfuncs;       /* .funcs with markers that were instrumented */
    int aligned;           /* records are one st.global.v2.u32 each: the launch hands the kernel a
                            * trace buffer at trace_shift bytes past an 8-aligned allocation and an
                            * even entries per trace (mh_instrumented_entries) */
    uint32_t trace_shift;  /* MH_TRACE_SHIFT when aligned, else 0 */
    uint32_t probe_points; /* records placed by probes (markers counts the markers) */
} mh_instrumented;

/* A probe: regions placed by the instrumentation in any entry's code, no markers needed (issue
 * 15).  Probes apply to the module's entries (their bodies; a .func's code is not probed: a
 * .func reached by calls keeps its markers).  A probe that matches nothing in any entry is an
 * error, as is one whose regions would not nest with the others or with the markers. */
typedef enum {
    MH_PROBE_KERNEL, /* a begin at entry, an end before every exit (guarded exits too) */
    MH_PROBE_LOOP,   /* the natural loops: a region per iteration named NAME@LINE (the header's
                      * source line from .loc, else its PTX line); nested loops nest */
    MH_PROBE_AROUND, /* a region around each instruction whose mnemonic starts with `around` at a
                      * '.' ("bar.sync", "ld.global"); a wait that is polled in a loop
                      * (mbarrier.try_wait, mbarrier.test_wait) gets the whole loop */
    MH_PROBE_RANGE,  /* from a label (or line) to a label (or line): from must dominate to */
    MH_PROBE_ROLE,   /* no region: `name` is a role (mh_role_name_ok) the lane takes before each
                      * instruction `around` matches ({role = "producer", around = "setmaxnreg.dec"}) */
} mh_probe_kind;

typedef struct mh_probe {
    mh_probe_kind kind;
    const char *name;            /* the region name (loops: the prefix of NAME@LINE) */
    const char *loop;            /* LOOP: NULL every loop, else the header's label */
    int per_loop;                /* LOOP: one region per whole loop instead of per iteration */
    const char *around;          /* AROUND: the mnemonic prefix */
    const char *from, *to;       /* RANGE: labels ("$L__BB0_3"), or NULL for a line: */
    uint32_t from_line, to_line; /* RANGE: PTX lines; the region holds lines from_line .. to_line */
} mh_probe;

typedef struct mh_instrument_opts {
    mh_scope scope;
    int aligned;           /* 1: aligned records (see mh_instrumented.aligned); 0: two st.global.u32
                            * per record, any alignment and any entries (the default) */
    const mh_probe *probes; /* probes[0 .. nprobes) */
    uint32_t nprobes;
    int kernel_probe;      /* 1: an entry with neither markers nor probes of its own (and no call
                            * to a .func with markers) gets the kernel probe, named "kernel" */
} mh_instrument_opts;

/* Instruments every entry of m that has markers or calls a .func that has, for traces of `scope`
 * (and, with mh_instrument_with, every entry the probes reach).
 * A module without markers (or probes) comes back unchanged (markers == probe_points == 0).  Errors
 * (MH_E_PTX_SYNTAX / MH_E_PTX_UNSUPPORTED) name the file and line: an end
 * without its begin, an end that closes another region than the innermost
 * open one, a region a .func leaves open when it returns, a malformed marker.
 * Markers in a .func are recorded too: its callers in instrumented functions
 * leave the count in the trace's header word around the call, and the
 * entries publish the trace buffer in two module variables it reads. */
int mh_instrument(const mh_ptx_module *m, mh_scope scope, mh_instrumented *out, mh_error *e);
/* The same with options (mh_instrument: {scope}, everything else 0). */
int mh_instrument_with(const mh_ptx_module *m, const mh_instrument_opts *o, mh_instrumented *out, mh_error *e);
/* The entries per trace to launch r's kernels with for a trace that needs `entries`: rounded
 * up to even for aligned records (an event's address is then 8-aligned), else `entries`. */
uint64_t mh_instrumented_entries(const mh_instrumented *r, uint64_t entries);
void mh_instrumented_free(mh_instrumented *r);
int mh_instrumented_has(const mh_instrumented *r, const char *kernel);
/* The original module's line for line `line` of the rewritten text (JIT logs
 * and emu messages speak of the rewritten text).  *added (may be NULL) is set
 * when the line holds only code the instrumentation added; the result is then
 * the original line it was added at. */
uint32_t mh_instrumented_line(const mh_instrumented *r, uint32_t line, int *added);

#endif
