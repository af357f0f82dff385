/* instrument.c - marker rewriting (see instrument.h).  The rewrite is a set
 * of insertions into the original text at offsets the front end recorded,
 * so everything else in the module stays byte for byte as it was. */
#include "instrument/instrument.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    size_t at;      /* insert before this offset */
    size_t seq;     /* insertion order, for equal offsets */
    char *text;
} edit;

typedef struct {
    edit *v;
    size_t n, cap;
    int oom;
} edits;

static void add_edit(edits *E, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add_edit(edits *E, size_t at, const char *fmt, ...)
{
    if (E->oom) return;
    if (E->n == E->cap) {
        size_t c = E->cap ? E->cap * 2 : 32;
        edit *nv = realloc(E->v, c * sizeof *nv);
        if (!nv) { E->oom = 1; return; }
        E->v = nv;
        E->cap = c;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = malloc((size_t)n + 1);
    if (!s) { E->oom = 1; return; }
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    E->v[E->n].at = at;
    E->v[E->n].seq = E->n;
    E->v[E->n].text = s;
    E->n++;
}

static int by_offset(const void *a, const void *b)
{
    const edit *x = a, *y = b;
    if (x->at != y->at) return x->at < y->at ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

typedef struct {
    size_t off, end_of_line;  /* the comment, and where its line ends */
    uint32_t line;
    int end;                  /* 0 begin, 1 end */
    char *name;
} marker;

static uint32_t line_at(const char *text, size_t off)
{
    uint32_t l = 1;
    for (size_t i = 0; i < off; i++) l += text[i] == '\n';
    return l;
}

/* find_markers' scan; on an error *out keeps what it had found (names too). */
static int find_markers_in(const mh_ptx_module *m, marker **out, size_t *n, mh_error *e)
{
    const char *t = m->text;
    size_t len = strlen(t), cap = 0;
    *out = NULL;
    *n = 0;
    for (size_t i = 0; i + 1 < len; i++) {
        if (t[i] == '"') { /* skip strings */
            for (i++; i < len && t[i] != '"' && t[i] != '\n'; i++) {}
            continue;
        }
        if (t[i] == '/' && t[i + 1] == '*') {
            const char *c = strstr(t + i + 2, "*/");
            i = c ? (size_t)(c - t) + 1 : len;
            continue;
        }
        if (t[i] != '/' || t[i + 1] != '/') continue;
        size_t eol = i;
        while (eol < len && t[eol] != '\n') eol++;
        const char *p = t + i + 2;
        while (p < t + eol && (*p == ' ' || *p == '\t')) p++;
        if ((size_t)(t + eol - p) < 5 || memcmp(p, "@mgpu", 5) != 0) { i = eol; continue; }
        uint32_t line = line_at(t, i);
        p += 5;
        const char *q = p;
        while (q < t + eol && (*q == ' ' || *q == '\t')) q++;
        int is_end;
        if ((size_t)(t + eol - q) >= 5 && !memcmp(q, "begin", 5) && (q + 5 == t + eol || isspace((unsigned char)q[5])))
            is_end = 0, q += 5;
        else if ((size_t)(t + eol - q) >= 3 && !memcmp(q, "end", 3) && (q + 3 == t + eol || isspace((unsigned char)q[3])))
            is_end = 1, q += 3;
        else {
            e->line = line;
            return mh_fail(e, MH_E_PTX_SYNTAX, "%.200s:%u: bad marker: expected \"// @mgpu begin NAME\" or \"// @mgpu end NAME\"",
                           m->path, line);
        }
        while (q < t + eol && isspace((unsigned char)*q)) q++;
        const char *ne = t + eol;
        while (ne > q && isspace((unsigned char)ne[-1])) ne--;
        if (ne == q) {
            e->line = line;
            return mh_fail(e, MH_E_PTX_SYNTAX, "%.200s:%u: marker without a region name", m->path, line);
        }
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            marker *nv = realloc(*out, cap * sizeof *nv);
            if (!nv) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
            *out = nv;
        }
        marker *mk = &(*out)[(*n)++];
        mk->off = i;
        mk->end_of_line = eol < len ? eol + 1 : eol;
        mk->line = line;
        mk->end = is_end;
        mk->name = malloc((size_t)(ne - q) + 1);
        if (!mk->name) return mh_fail(e, MH_E_NO_MEMORY, "out of memory"); /* free(NULL) in free_markers */
        memcpy(mk->name, q, (size_t)(ne - q));
        mk->name[ne - q] = 0;
        i = eol;
    }
    return 0;
}

/* The line map of the rewrite: one record per insertion point (edits sorted
 * by offset; those at one offset merged). */
static int record_insertions(const char *orig, const edits *E, mh_instrumented *out, mh_error *e)
{
    out->inserted = calloc(E->n ? E->n : 1, sizeof *out->inserted);
    if (!out->inserted) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    size_t n = 0, scanned = 0;
    uint32_t line = 1;
    for (size_t i = 0; i < E->n; i++) {
        uint32_t nl = 0;
        for (const char *c = E->v[i].text; *c; c++) nl += *c == '\n';
        if (n && E->v[i].at == E->v[i - 1].at) { /* more text at the same point */
            out->inserted[n - 1].newlines += nl;
            continue;
        }
        for (; scanned < E->v[i].at; scanned++) line += orig[scanned] == '\n';
        out->inserted[n].line = line;
        out->inserted[n].newlines = nl;
        /* original text on the line between the neighbouring insertion points and this one */
        size_t at = E->v[i].at, lo = n ? E->v[i - 1].at : 0, hi = at, b = at, a = at;
        for (size_t j = i + 1; j < E->n && hi == at; j++) hi = E->v[j].at;
        if (hi == at) hi = strlen(orig);
        while (b > lo && (orig[b - 1] == ' ' || orig[b - 1] == '\t')) b--;
        while (a < hi && (orig[a] == ' ' || orig[a] == '\t' || orig[a] == '\r')) a++;
        out->inserted[n].text_before = b > lo && orig[b - 1] != '\n';
        out->inserted[n].text_after = a < hi && orig[a] != '\n';
        n++;
    }
    out->ninserted = n;
    return 0;
}

uint32_t mh_instrumented_line(const mh_instrumented *r, uint32_t line, int *added)
{
    uint32_t delta = 0; /* lines the insertions before have added */
    if (added) *added = 0;
    for (size_t i = 0; i < r->ninserted; i++) {
        const mh_insertion *in = &r->inserted[i];
        uint32_t start = in->line + delta; /* the rewritten line the insertion begins on */
        if (line < start) break;
        if (line <= start + in->newlines) {
            /* the first line keeps the original text before the insertion, the
             * last one the original text after it; lines between are all added */
            int original = (line == start && in->text_before) || (line == start + in->newlines && in->text_after);
            if (added) *added = !original;
            return in->line;
        }
        delta += in->newlines;
    }
    return line - delta;
}

static void free_markers(marker *v, size_t n)
{
    for (size_t i = 0; i < n; i++) free(v[i].name);
    free(v);
}

/* Finds the markers: "//" comments whose text starts with "@mgpu".  On an
 * error nothing stays allocated. */
static int find_markers(const mh_ptx_module *m, marker **out, size_t *n, mh_error *e)
{
    int rc = find_markers_in(m, out, n, e);
    if (rc) {
        free_markers(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

/* The registers every instrumented function gets. */
#define MGPU_REGS                              \
    "\t.reg .pred \t%%__mgpu_p<3>;\n"           \
    "\t.reg .b32 \t%%__mgpu_r<16>;\n"           \
    "\t.reg .b64 \t%%__mgpu_d<5>;\n"

/* Entry: d0 = the trace buffer, r0 = entries per trace, r1 = capacity. */
static const char PROLOGUE_HEAD[] =
    "\n\t// @mgpu: trace prologue (added by mgpu-harness)\n" MGPU_REGS
    "\tld.param.u64 \t%%__mgpu_d0, [__mgpu_trace];\n"
    "\tld.param.u32 \t%%__mgpu_r0, [__mgpu_entries];\n"
    "\tcvta.to.global.u64 \t%%__mgpu_d0, %%__mgpu_d0;\n"
    "\tsub.s32 \t%%__mgpu_r1, %%__mgpu_r0, 4;\n";

/* r2 = this thread's trace index, p0 = it is the trace's writer (lane 0 of
 * the warp, thread 0 of the warpgroup); printf args: scope - 1, lg, lg. */
static const char TRACE_SLOT[] =
    "\tmov.u32 \t%%__mgpu_r2, %%tid.x;\n"
    "\tmov.u32 \t%%__mgpu_r3, %%tid.y;\n"
    "\tmov.u32 \t%%__mgpu_r4, %%tid.z;\n"
    "\tmov.u32 \t%%__mgpu_r5, %%ntid.x;\n"
    "\tmov.u32 \t%%__mgpu_r6, %%ntid.y;\n"
    "\tmov.u32 \t%%__mgpu_r7, %%ntid.z;\n"
    "\tmad.lo.s32 \t%%__mgpu_r3, %%__mgpu_r4, %%__mgpu_r6, %%__mgpu_r3;\n"
    "\tmad.lo.s32 \t%%__mgpu_r2, %%__mgpu_r3, %%__mgpu_r5, %%__mgpu_r2;\n"
    "\tand.b32 \t%%__mgpu_r3, %%__mgpu_r2, %u;\n"
    "\tsetp.eq.u32 \t%%__mgpu_p0, %%__mgpu_r3, 0;\n"
    "\tshr.u32 \t%%__mgpu_r2, %%__mgpu_r2, %u;\n"
    "\tmul.lo.s32 \t%%__mgpu_r5, %%__mgpu_r5, %%__mgpu_r6;\n"
    "\tmul.lo.s32 \t%%__mgpu_r5, %%__mgpu_r5, %%__mgpu_r7;\n"
    "\tshr.u32 \t%%__mgpu_r5, %%__mgpu_r5, %u;\n"
    "\tmov.u32 \t%%__mgpu_r3, %%ctaid.x;\n"
    "\tmov.u32 \t%%__mgpu_r4, %%nctaid.y;\n"
    "\tmov.u32 \t%%__mgpu_r6, %%ctaid.y;\n"
    "\tmad.lo.s32 \t%%__mgpu_r3, %%__mgpu_r3, %%__mgpu_r4, %%__mgpu_r6;\n"
    "\tmov.u32 \t%%__mgpu_r4, %%nctaid.z;\n"
    "\tmov.u32 \t%%__mgpu_r6, %%ctaid.z;\n"
    "\tmad.lo.s32 \t%%__mgpu_r3, %%__mgpu_r3, %%__mgpu_r4, %%__mgpu_r6;\n"
    "\tmad.lo.s32 \t%%__mgpu_r2, %%__mgpu_r3, %%__mgpu_r5, %%__mgpu_r2;\n";

/* Entry: d1 = the trace's base, d2 = d1 (count 0), d4 = its calibration
 * record, and the start readings r12 (%clock), r9 (%globaltimer_lo). */
static const char PROLOGUE_TAIL[] =
    "\tld.param.u64 \t%%__mgpu_d3, [__mgpu_calib];\n"
    "\tcvta.to.global.u64 \t%%__mgpu_d3, %%__mgpu_d3;\n"
    "\tmul.wide.u32 \t%%__mgpu_d4, %%__mgpu_r2, 16;\n"
    "\tadd.s64 \t%%__mgpu_d4, %%__mgpu_d3, %%__mgpu_d4;\n"
    "\tmul.wide.u32 \t%%__mgpu_d1, %%__mgpu_r2, %%__mgpu_r0;\n"
    "\tshl.b64 \t%%__mgpu_d1, %%__mgpu_d1, 2;\n"
    "\tadd.s64 \t%%__mgpu_d1, %%__mgpu_d0, %%__mgpu_d1;\n"
    "\tmov.u32 \t%%__mgpu_r8, 0;\n"
    "\tmov.u64 \t%%__mgpu_d2, %%__mgpu_d1;\n"
    "\tmov.u32 \t%%__mgpu_r12, %%clock;\n"
    "\tmov.u32 \t%%__mgpu_r9, %%globaltimer_lo;\n";

/* An entry that calls .funcs with markers leaves the trace buffer and its
 * size where they find them (every writer stores the same values). */
static const char PUBLISH[] =
    "\t@%%__mgpu_p0 st.global.u64 \t[__mgpu_g_trace], %%__mgpu_d0;\n"
    "\t@%%__mgpu_p0 st.global.u32 \t[__mgpu_g_entries], %%__mgpu_r0;\n";

/* The module variables for that, before the first function. */
static const char GLOBALS[] =
    "// @mgpu: the trace buffer and its entries per trace, for .funcs with markers (added by mgpu-harness)\n"
    ".global .align 8 .u64 __mgpu_g_trace;\n"
    ".global .align 4 .u32 __mgpu_g_entries;\n\n";

/* A .func with markers: the same registers from the module variables, and
 * the count from the trace's header word, where its callers leave it. */
static const char FUNC_HEAD[] =
    "\n\t// @mgpu: trace state of this .func (added by mgpu-harness)\n" MGPU_REGS
    "\tld.global.u64 \t%%__mgpu_d0, [__mgpu_g_trace];\n"
    "\tld.global.u32 \t%%__mgpu_r0, [__mgpu_g_entries];\n"
    "\tsub.s32 \t%%__mgpu_r1, %%__mgpu_r0, 4;\n";
static const char FUNC_TAIL[] =
    "\tmul.wide.u32 \t%%__mgpu_d1, %%__mgpu_r2, %%__mgpu_r0;\n"
    "\tshl.b64 \t%%__mgpu_d1, %%__mgpu_d1, 2;\n"
    "\tadd.s64 \t%%__mgpu_d1, %%__mgpu_d0, %%__mgpu_d1;\n"
    "\tmov.u32 \t%%__mgpu_r8, 0;\n"
    "\t@%%__mgpu_p0 ld.global.u32 \t%%__mgpu_r8, [%%__mgpu_d1+8];\n"
    "\tmul.wide.u32 \t%%__mgpu_d2, %%__mgpu_r8, 4;\n"
    "\tadd.s64 \t%%__mgpu_d2, %%__mgpu_d1, %%__mgpu_d2;\n";

/* Around a call to a function that records events: the count goes to the
 * header word before, and comes back (with d2) after. */
static const char SYNC_BEFORE[] = "@%%__mgpu_p0 st.global.u32 \t[%%__mgpu_d1+8], %%__mgpu_r8;\n\t";
static const char SYNC_AFTER[] =
    "\n\t@%%__mgpu_p0 ld.global.u32 \t%%__mgpu_r8, [%%__mgpu_d1+8];\n"
    "\tmul.wide.u32 \t%%__mgpu_d2, %%__mgpu_r8, 4;\n"
    "\tadd.s64 \t%%__mgpu_d2, %%__mgpu_d1, %%__mgpu_d2;";

/* At a .func's returns: the count, for its caller. */
static const char FUNC_EXIT[] = "\t// @mgpu: the count back to the caller\n"
                                "\t@%%__mgpu_p0 st.global.u32 \t[%%__mgpu_d1+8], %%__mgpu_r8;\n";

/* r1 = capacity (entries - 4, signed), r8 = count, d2 = trace base + 4 x count
 * (advanced with the count, so no address arithmetic per event), p0 = writer */
static const char RECORD[] =
    "\t// @mgpu: record %s \"%s\" (tag 0x%08x)\n"
    "\tsetp.lt.and.s32 \t%%__mgpu_p1, %%__mgpu_r8, %%__mgpu_r1, %%__mgpu_p0;\n"
    "\tmov.u32 \t%%__mgpu_r10, %%clock;\n"
    "\t@%%__mgpu_p1 st.global.u32 \t[%%__mgpu_d2+12], %u;\n"
    "\t@%%__mgpu_p1 st.global.u32 \t[%%__mgpu_d2+16], %%__mgpu_r10;\n"
    "\tadd.s32 \t%%__mgpu_r8, %%__mgpu_r8, 2;\n"
    "\tadd.s64 \t%%__mgpu_d2, %%__mgpu_d2, 8;\n";

/* d4 = this trace's calibration record: %clock and %globaltimer_lo at the
 * start (r12, r9) and at the exit, for the dump to measure the SM clock. */
static const char HEADER[] =
    "\t// @mgpu: trace header and clock calibration at exit\n"
    "\tmov.u32 \t%%__mgpu_r13, %%clock;\n"
    "\tmov.u32 \t%%__mgpu_r14, %%globaltimer_lo;\n"
    "\tmov.u32 \t%%__mgpu_r11, %%smid;\n"
    "\t@%%__mgpu_p0 st.global.u32 \t[%%__mgpu_d1], %%__mgpu_r9;\n"
    "\t@%%__mgpu_p0 st.global.u32 \t[%%__mgpu_d1+4], %%__mgpu_r11;\n"
    "\t@%%__mgpu_p0 st.global.u32 \t[%%__mgpu_d1+8], %%__mgpu_r8;\n"
    "\t@%%__mgpu_p0 st.global.u32 \t[%%__mgpu_d4], %%__mgpu_r12;\n"
    "\t@%%__mgpu_p0 st.global.u32 \t[%%__mgpu_d4+4], %%__mgpu_r9;\n"
    "\t@%%__mgpu_p0 st.global.u32 \t[%%__mgpu_d4+8], %%__mgpu_r13;\n"
    "\t@%%__mgpu_p0 st.global.u32 \t[%%__mgpu_d4+12], %%__mgpu_r14;\n";

/* Whether `in` may run a function that records events (traced): a call to
 * one, or a call through a pointer (kept as text), which may call any. */
static int calls_traced(const mh_ptx_insn *in, const char *traced)
{
    int call = in->op == MH_OP_CALL || (in->op == MH_OP_OPAQUE && (in->mods & MH_MOD_OPAQUE_CALL));
    return call && (in->callee < 0 || traced[in->callee]);
}

/* What goes before every exit: the header (an entry) or the count (a .func). */
static void add_at_exit(edits *E, size_t at, int entry)
{
    if (entry) add_edit(E, at, HEADER);
    else add_edit(E, at, FUNC_EXIT);
}

static int err_at(mh_error *e, const mh_ptx_module *m, uint32_t line, mh_code code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int err_at(mh_error *e, const mh_ptx_module *m, uint32_t line, mh_code code, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    e->line = line;
    return mh_fail(e, code, "%.200s:%u: %s", m->path, line, msg);
}

/* Region stacks along the control flow of one function: every instruction must
 * be reached with the same stack of open regions from every path, and an
 * end must close the innermost open region.  (Compilers lay loops out with
 * the latch before the header, so the text order of markers proves nothing.)
 * The front end places each marker in the code as an MH_OP_NOP with MH_MOD_MARKER. */
typedef struct { uint32_t *ids; uint32_t n; int set; } region_stack;

static int same_stack(const region_stack *a, const uint32_t *ids, uint32_t n)
{
    return a->n == n && (n == 0 || !memcmp(a->ids, ids, n * sizeof *ids));
}

static void describe_stack(const mh_names *names, const uint32_t *ids, uint32_t n, char *buf, size_t len)
{
    size_t o = (size_t)snprintf(buf, len, "[");
    for (uint32_t i = 0; i < n && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s\"%s\"", i ? ", " : "", mh_names_get(names, ids[i])->name);
    if (o < len) snprintf(buf + o, len - o, "]");
}

static int check_flow(const mh_ptx_module *m, const mh_ptx_func *f, marker *mk, size_t nmk, const uint32_t *mk_id,
                      const mh_names *names, int must_close, mh_error *e)
{
    uint32_t n = f->ncode;
    region_stack *st = calloc(n, sizeof *st);
    uint32_t *work = malloc(n * sizeof *work), *at = malloc((nmk ? nmk : 1) * sizeof *at);
    uint32_t *cur = malloc((nmk + 1) * sizeof *cur);
    char a[300], b[300];
    int rc = 0;
    if (!st || !work || !at || !cur) { rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory"); goto done; }
    for (size_t k = 0; k < nmk; k++) {
        at[k] = UINT32_MAX;
        for (uint32_t i = 0; i < n; i++)
            if ((f->code[i].mods & MH_MOD_MARKER) && f->code[i].text_off == mk[k].off) at[k] = i;
        if (at[k] == UINT32_MAX) {
            rc = err_at(e, m, mk[k].line, MH_E_PTX_SYNTAX, "marker \"%s\" is not between two statements", mk[k].name);
            goto done;
        }
    }
    uint32_t nwork = 0;
    st[0].set = 1;
    work[nwork++] = 0;
    while (nwork && !rc) {
        uint32_t i = work[--nwork], depth = st[i].n;
        if (depth) memcpy(cur, st[i].ids, depth * sizeof *cur);
        for (size_t k = 0; k < nmk && !rc; k++) {
            if (at[k] != i) continue;
            if (!mk[k].end) { cur[depth++] = mk_id[k]; continue; }
            if (depth == 0)
                rc = err_at(e, m, mk[k].line, MH_E_PTX_SYNTAX, "end \"%s\" without its begin on some path (in %s)",
                            mk[k].name, f->name);
            else if (cur[depth - 1] != mk_id[k]) {
                describe_stack(names, cur, depth, a, sizeof a);
                rc = err_at(e, m, mk[k].line, MH_E_PTX_SYNTAX,
                            "end \"%s\" does not close the innermost open region (open: %s): regions must nest and end "
                            "once", mk[k].name, a);
            } else depth--;
        }
        if (rc) break;
        const mh_ptx_insn *in = &f->code[i];
        if (must_close && depth && (in->op == MH_OP_RET || in->op == MH_OP_EXIT)) {
            /* a .func's regions end inside it: its caller's own regions must nest around the call */
            rc = err_at(e, m, in->line, MH_E_PTX_SYNTAX, "region \"%s\" is still open where .func %s returns: a "
                        ".func's regions must end before it returns", mh_names_get(names, cur[depth - 1])->name,
                        f->name);
            break;
        }
        uint32_t succ[2], ns = 0;
        int uncond_exit = (in->op == MH_OP_RET || in->op == MH_OP_EXIT || in->op == MH_OP_TRAP) && in->guard < 0;
        if (in->op == MH_OP_BRA) succ[ns++] = in->o[0].reg;
        if (!uncond_exit && !(in->op == MH_OP_BRA && in->guard < 0) && i + 1 < n) succ[ns++] = i + 1;
        for (uint32_t s2 = 0; s2 < ns && !rc; s2++) {
            region_stack *t = &st[succ[s2]];
            if (!t->set) {
                t->ids = malloc((depth ? depth : 1) * sizeof *t->ids);
                if (!t->ids) { rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory"); break; }
                if (depth) memcpy(t->ids, cur, depth * sizeof *cur);
                t->n = depth;
                t->set = 1;
                work[nwork++] = succ[s2];
            } else if (!same_stack(t, cur, depth)) {
                describe_stack(names, t->ids, t->n, a, sizeof a);
                describe_stack(names, cur, depth, b, sizeof b);
                rc = err_at(e, m, f->code[succ[s2]].line, MH_E_PTX_SYNTAX,
                            "paths into this line of %s have different open regions (%s and %s): a region begins or "
                            "ends on one branch only", f->name, a, b);
            }
        }
    }
done:
    for (uint32_t i = 0; st && i < n; i++) free(st[i].ids);
    free(st);
    free(work);
    free(at);
    free(cur);
    return rc;
}

static int intern(mh_names *t, const char *name, uint32_t *id, mh_error *e)
{
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->v[i].name, name)) { *id = t->v[i].id; return 0; }
    if (t->n >= MH_NAME_ID_MAX) return mh_fail(e, MH_E_PTX_UNSUPPORTED, "more than 2^31 region names");
    *id = (uint32_t)t->n;
    return mh_names_add(t, name, *id, e);
}

int mh_instrument(const mh_ptx_module *m, mh_scope scope, mh_instrumented *out, mh_error *e)
{
    memset(out, 0, sizeof *out);
    mh_names_init(&out->names);
    mh_error_clear(e);
    if (scope != MH_SCOPE_WARP && scope != MH_SCOPE_WARPGROUP)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "scope must be warp or warpgroup");
    unsigned lg = scope == MH_SCOPE_WARP ? 5 : 7;
    marker *mk = NULL;
    size_t nmk = 0;
    edits E = {0};
    /* the added registers, labels and parameters are named __mgpu*: a module
     * that uses such names itself could collide, so it is refused */
    for (uint32_t i = 0; i < m->nregs; i++)
        if (!strncmp(m->reg_name[i], "%__mgpu", 7) || !strncmp(m->reg_name[i], "__mgpu", 6))
            return mh_fail(e, MH_E_PTX_UNSUPPORTED, "%s: register %s uses the prefix __mgpu, which the instrumentation "
                           "reserves", m->path, m->reg_name[i]);
    for (uint32_t fi = 0; fi < m->nfuncs; fi++)
        for (uint32_t k = 0; k < m->funcs[fi].nparams; k++)
            if (!strncmp(m->funcs[fi].params[k].name, "__mgpu", 6))
                return mh_fail(e, MH_E_PTX_UNSUPPORTED, "%s: parameter %s of %s uses the prefix __mgpu, which the "
                               "instrumentation reserves (is this module instrumented already?)", m->path,
                               m->funcs[fi].params[k].name, m->funcs[fi].name);
    int rc = find_markers(m, &mk, &nmk, e);
    if (rc) return rc;

    /* each marker belongs to a function body */
    int *owner = calloc(nmk ? nmk : 1, sizeof *owner);
    char *marked = calloc(m->nfuncs ? m->nfuncs : 1, 1), *traced = calloc(m->nfuncs ? m->nfuncs : 1, 1);
    if (!owner || !marked || !traced) rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < nmk && !rc; i++) {
        owner[i] = -1;
        for (uint32_t fi = 0; fi < m->nfuncs; fi++) {
            const mh_ptx_func *f = &m->funcs[fi];
            if (f->defined && mk[i].off >= f->body_open && mk[i].off < f->body_close) owner[i] = (int)fi;
        }
        if (owner[i] < 0)
            rc = err_at(e, m, mk[i].line, MH_E_PTX_SYNTAX, "marker \"%s\" outside any function body", mk[i].name);
        else
            marked[owner[i]] = traced[owner[i]] = 1;
    }
    /* traced: records events itself or calls (transitively) a function that does */
    int func_records = 0;
    for (uint32_t fi = 0; fi < m->nfuncs; fi++) func_records |= marked[fi] && !m->funcs[fi].is_entry;
    for (int changed = func_records; changed && !rc;) {
        changed = 0;
        for (uint32_t fi = 0; fi < m->nfuncs; fi++) {
            const mh_ptx_func *f = &m->funcs[fi];
            for (uint32_t i = 0; !traced[fi] && f->defined && i < f->ncode; i++)
                if (calls_traced(&f->code[i], traced)) traced[fi] = 1, changed = 1;
        }
    }
    if (!rc && func_records) {
        /* the module variables the .funcs read, before the first function */
        uint32_t first_line = UINT32_MAX;
        for (uint32_t fi = 0; fi < m->nfuncs; fi++)
            if (m->funcs[fi].line < first_line) first_line = m->funcs[fi].line;
        size_t at = 0;
        for (uint32_t l = 1; l < first_line && m->text[at]; at++) l += m->text[at] == '\n';
        add_edit(&E, at, GLOBALS);
    }

    size_t label = 0;
    for (uint32_t fi = 0; fi < m->nfuncs && !rc; fi++) {
        const mh_ptx_func *f = &m->funcs[fi];
        if (!traced[fi] || !f->defined || (!f->is_entry && !marked[fi])) continue;
        size_t first = nmk, count = 0;
        for (size_t i = 0; i < nmk; i++)
            if (owner[i] == (int)fi) {
                if (first == nmk) first = i;
                count++;
            }
        uint32_t *ids = malloc((count ? count : 1) * sizeof *ids);
        if (!ids) { rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory"); break; }
        for (size_t i = 0; i < count && !rc; i++) rc = intern(&out->names, mk[first + i].name, &ids[i], e);
        if (!rc) rc = mh_names_finish(&out->names, e);
        if (!rc) rc = check_flow(m, f, mk + first, count, ids, &out->names, !f->is_entry, e);
        free(ids);
        if (rc) break;
        if (f->is_entry) {
            /* parameters */
            if (f->params_close) {
                size_t at = f->params_close;
                while (f->nparams && at > 0 && isspace((unsigned char)m->text[at - 1])) at--; /* after the last parameter */
                add_edit(&E, at, f->nparams ? ",\n\t.param .u64 __mgpu_trace,\n\t.param .u32 __mgpu_entries,\n\t.param .u64 __mgpu_calib"
                                            : "\n\t.param .u64 __mgpu_trace,\n\t.param .u32 __mgpu_entries,\n\t.param .u64 __mgpu_calib\n");
            } else
                rc = err_at(e, m, f->line, MH_E_PTX_UNSUPPORTED, "%s has no parameter list to extend", f->name);
            add_edit(&E, f->body_open, PROLOGUE_HEAD);
            add_edit(&E, f->body_open, TRACE_SLOT, (unsigned)scope - 1, lg, lg);
            add_edit(&E, f->body_open, PROLOGUE_TAIL);
            if (func_records) add_edit(&E, f->body_open, PUBLISH);
        } else {
            add_edit(&E, f->body_open, FUNC_HEAD);
            add_edit(&E, f->body_open, TRACE_SLOT, (unsigned)scope - 1, lg, lg);
            add_edit(&E, f->body_open, FUNC_TAIL);
        }
        /* markers */
        for (size_t i = first; i < first + count && !rc; i++) {
            uint32_t id = 0;
            if ((rc = intern(&out->names, mk[i].name, &id, e))) break;
            add_edit(&E, mk[i].end_of_line, RECORD, mk[i].end ? "end" : "begin", mk[i].name,
                     id | (mk[i].end ? MH_EXIT_BIT : 0), id | (mk[i].end ? MH_EXIT_BIT : 0));
            out->markers++;
        }
        /* calls to functions that record events: the count through the header */
        for (uint32_t i = 0; func_records && i < f->ncode; i++) {
            const mh_ptx_insn *in = &f->code[i];
            if (!calls_traced(in, traced)) continue;
            add_edit(&E, in->text_off, SYNC_BEFORE);
            add_edit(&E, in->text_end, SYNC_AFTER);
        }
        /* the header (an entry) or the count (a .func) at every exit */
        int ends_with_exit = 0;
        for (uint32_t i = 0; i < f->ncode; i++) {
            const mh_ptx_insn *in = &f->code[i];
            if (in->text_off == 0 && in->text_end == 0) continue; /* the synthetic final ret */
            ends_with_exit = in->op == MH_OP_RET || in->op == MH_OP_EXIT || in->op == MH_OP_BRA || in->op == MH_OP_TRAP;
            if (in->op != MH_OP_RET && in->op != MH_OP_EXIT) continue;
            if (in->guard >= 0) {
                add_edit(&E, in->text_off, "@%s%s bra \t$__mgpu_skip%zu;\n", in->guard_neg ? "" : "!",
                         m->reg_name[in->guard], label);
                add_at_exit(&E, in->text_off, f->is_entry);
                add_edit(&E, in->text_off, "$__mgpu_skip%zu:\n\t", label);
                label++;
            } else {
                add_at_exit(&E, in->text_off, f->is_entry);
                add_edit(&E, in->text_off, "\t");
            }
        }
        if (!ends_with_exit) add_at_exit(&E, f->body_close, f->is_entry);
        if (!f->is_entry) {
            out->nfuncs++;
            continue;
        }
        char **nk = realloc(out->kernels, (out->nkernels + 1) * sizeof *nk);
        if (!nk || !(nk[out->nkernels] = strdup(f->name))) {
            if (nk) out->kernels = nk;
            rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory");
            break;
        }
        out->kernels = nk;
        out->nkernels++;
    }
    free(owner);
    free(marked);
    free(traced);
    if (!rc && nmk && !out->nkernels)
        rc = mh_fail(e, MH_E_PTX_SYNTAX, "%s: markers found but no kernel to instrument", m->path);
    if (!rc && E.oom) rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    if (!rc) rc = mh_names_finish(&out->names, e);

    if (!rc) {
        /* splice */
        size_t len = strlen(m->text), total = len;
        if (E.n > 1) qsort(E.v, E.n, sizeof *E.v, by_offset);
        for (size_t i = 0; i < E.n; i++) total += strlen(E.v[i].text);
        out->text = malloc(total + 1);
        if (!out->text) rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory");
        else {
            size_t at = 0, o = 0;
            for (size_t i = 0; i < E.n; i++) {
                memcpy(out->text + o, m->text + at, E.v[i].at - at);
                o += E.v[i].at - at;
                at = E.v[i].at;
                size_t l = strlen(E.v[i].text);
                memcpy(out->text + o, E.v[i].text, l);
                o += l;
            }
            memcpy(out->text + o, m->text + at, len - at);
            o += len - at;
            out->text[o] = 0;
            out->len = o;
            rc = record_insertions(m->text, &E, out, e);
        }
    }
    for (size_t i = 0; i < E.n; i++) free(E.v[i].text);
    free(E.v);
    free_markers(mk, nmk);
    if (rc) mh_instrumented_free(out);
    return rc;
}

void mh_instrumented_free(mh_instrumented *r)
{
    free(r->text);
    free(r->inserted);
    mh_names_free(&r->names);
    for (uint32_t i = 0; i < r->nkernels; i++) free(r->kernels[i]);
    free(r->kernels);
    memset(r, 0, sizeof *r);
}

int mh_instrumented_has(const mh_instrumented *r, const char *kernel)
{
    for (uint32_t i = 0; i < r->nkernels; i++)
        if (!strcmp(r->kernels[i], kernel)) return 1;
    return 0;
}
