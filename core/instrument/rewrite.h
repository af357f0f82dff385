/* rewrite.h - what the parts of the instrumentation share (internal to core/instrument): the
 * text edits, record points, region name ids, the control-flow graph and natural loops, and the
 * state of one rewrite that mh_instrument_with's steps pass along (instrument.c). */
#ifndef MH_INSTRUMENT_REWRITE_H
#define MH_INSTRUMENT_REWRITE_H

#include "instrument/instrument.h"

#include <stddef.h>
#include <stdint.h>

/* ---- text edits (edits.c) ------------------------------------------------------------------ */
typedef struct {
    size_t at;      /* insert before this offset */
    uint32_t prio;  /* at equal offsets: the order of the kinds of code (P_*) */
    size_t seq;     /* insertion order, for equal offsets and priorities */
    char *text;
    size_t len;
} edit;

typedef struct {
    edit *v;
    size_t n, cap;
    int oom;
} edits;

/* What may be inserted at one offset, in the order it runs: the count read back after a call
 * (that ends just there), a run's bounds check, its records, the count stored before a call, the
 * code at an exit, and the indentation put back before the original statement. */
enum { P_SYNC_AFTER, P_CHECK, P_RECORD, P_SYNC_BEFORE, P_EXIT, P_FILL };

void add_edit(edits *E, size_t at, uint32_t prio, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Splices E's edits into orig (E sorted there) and records the line map: out->text, out->len,
 * out->inserted. */
int edits_apply(edits *E, const char *orig, mh_instrumented *out, mh_error *e);
void edits_free(edits *E);

/* An error at a line of m: "path:line: message" (instrument.c). */
int err_at(mh_error *e, const mh_ptx_module *m, uint32_t line, mh_code code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* ---- record points -------------------------------------------------------------------------
 * Every marker (and, with probes, every probe's begin and end) is a point of one function's code:
 * before instruction `insn` on every path into it, after it on its fall-through, on the exit
 * path of an exit, or on the taken edge of a guarded branch (code reached through a trampoline
 * the branch is sent to).  The checks, the runs and the code all work on points. */
enum { PT_BEFORE, PT_AFTER, PT_EXIT, PT_EDGE }; /* PT_EDGE: on a guarded branch's taken edge */
#define SEQ_MARKER 0x40000000u /* markers' order at one place: after the probes' (see probe_seq) */

#define PT_ROLE 2 /* point.end of a role marker: a begin-tagged record that opens no region */

typedef struct {
    uint32_t insn;
    uint8_t where, end; /* end: 0 begin, 1 end, PT_ROLE a role */
    uint32_t id;       /* region name */
    size_t at;         /* where its record goes in the text */
    uint32_t line;     /* for messages */
    uint32_t seq;      /* order among points at one place */
} point;

static inline const char *pname(const mh_names *names, uint32_t id) { return mh_names_get(names, id)->name; }

/* Where instruction i's text begins (the synthetic final ret: at the body's close). */
static inline size_t insn_at(const mh_ptx_func *f, uint32_t i)
{
    const mh_ptx_insn *in = &f->code[i];
    return in->text_off == 0 && in->text_end == 0 ? f->body_close : in->text_off;
}

/* ---- region names (markers.c) ---------------------------------------------------------------- */
/* Region names to ids: an open-addressing hash table over the names' bytes in
 * the module text, ids in order of first appearance (the names table's
 * order).  A linear search made a module with many names quadratic. */
typedef struct {
    const char *s;  /* NULL: empty slot */
    size_t len;
    uint32_t id;
} name_slot;

typedef struct {
    name_slot *v;
    size_t cap, n;  /* cap: a power of two, at most half full */
} name_index;

/* The id of the name (len bytes at s, which must stay valid while the index lives: the module's
 * text or the probes'), added to t (and the index) when new. */
int intern(mh_names *t, name_index *x, const char *s, size_t len, uint32_t *id, mh_error *e);

/* Whether `in` may run a function that records events (traced): a call to
 * one, or a call through a pointer (kept as text), which may call any. */
int calls_traced(const mh_ptx_insn *in, const char *traced);

/* ---- the control-flow graph, dominators, natural loops (cfg.c) ------------------------------- */
typedef struct {
    const mh_ptx_module *m;
    const mh_ptx_func *f;
    uint32_t n;
    uint32_t (*succ)[2];  /* UINT32_MAX: none */
    uint32_t *pred_at, *preds;
    uint32_t *rpo, *order, nreach; /* order[i]: i's place in rpo (UINT32_MAX: unreachable) */
    uint32_t *idom;
} cfg;

void cfg_free(cfg *g);
/* f's graph at instruction level, its reverse postorder and immediate dominators. */
int cfg_build(cfg *g, const mh_ptx_module *m, const mh_ptx_func *f, mh_error *e);
/* Whether a dominates b (both reachable). */
int dominates(const cfg *g, uint32_t a, uint32_t b);

typedef struct {
    uint32_t header;
    uint32_t *body, nbody; /* sorted */
    uint32_t depth;        /* loops whose body holds the header, this one included */
} nat_loop;

int in_loop(const nat_loop *l, uint32_t v);
void loops_free(nat_loop *L, uint32_t n);
/* The natural loops of g, in order of their headers. */
int find_loops(const cfg *g, nat_loop **out, uint32_t *nout, mh_error *e);

/* ---- one rewrite: what mh_instrument_with's steps share --------------------------------------- */
typedef struct {
    const mh_ptx_module *m;
    mh_instrumented *out;
    edits E;
    name_index index;
    name_index roles;       /* role names ("// @mgpu role NAME"): ids of their own, beside the regions' */
    size_t *first, *count;  /* function fi's markers: m->markers[first[fi] .. + count[fi]) */
    char *marked, *traced;  /* fi has markers / records events itself or calls (transitively) one that does */
    int func_records;       /* some .func has markers (the entries publish the trace buffer) */
    point **fpts;           /* each entry's probe points, fnpts[fi] of them */
    size_t *fnpts;
    char **made;            /* names made by the probes (NAME@LINE), kept until the index is gone */
    size_t nmade;
    point *pts;             /* the points of the function being instrumented */
    size_t npts, cap;
    size_t label;           /* the next $__mgpu_* label */
} rewrite;

/* markers.c: every marker reads "// @mgpu begin|end|role NAME" (a role's NAME one word). */
int check_grammar(const mh_ptx_module *m, mh_error *e);
/* markers.c: each marker's function (w->first, w->count, w->marked), and which functions record
 * events (w->traced, w->func_records). */
int marker_owners(rewrite *w, mh_error *e);
void traced_functions(rewrite *w);
/* markers.c: the points of function f's markers fmk[0 .. fn) (names ids[]), appended to *pts. */
int marker_points(const mh_ptx_module *m, const mh_ptx_func *f, const mh_ptx_marker *fmk, size_t fn,
                  const uint32_t *ids, point **pts, size_t *npts, size_t *cap, mh_error *e);
/* probes.c: each entry's probe points (w->fpts, w->fnpts; an entry with points is traced); a
 * probe that matches nothing in any entry is an error. */
int probes_collect(rewrite *w, const mh_instrument_opts *opts, mh_error *e);
/* flow.c: pts[0 .. npts) (f's points, sorted by place) keep regions nested on every path;
 * must_close: a .func, whose regions end before it returns. */
int check_flow(const mh_ptx_module *m, const mh_ptx_func *f, const point *pts, size_t npts,
               const mh_names *names, int must_close, mh_error *e);
/* flow.c: in an entry, the regions still open where a thread exits end there (issue 24): ends
 * appended to *pts (f's points sorted by place; *npts, *cap updated) on the edges into the exit
 * tails whose paths differ, and at each exit for what stays open; sort again after. */
int close_at_exits(const mh_ptx_module *m, const mh_ptx_func *f, point **pts, size_t *npts, size_t *cap, mh_error *e);
/* emit.c: the module variables .funcs with markers read, before the first function. */
void emit_globals(edits *E, const mh_ptx_module *m);
/* emit.c: all the code added to function f for its points pts[0 .. npts) (sorted by place): an
 * entry's parameters and prologue or a .func's head, the runs of records, the count around calls
 * to traced functions, the code at every exit, an entry's exit block and trampolines. */
int emit_function(rewrite *w, const mh_ptx_func *f, unsigned scope, mh_error *e);

#endif
