/* emit.c - the code the instrumentation adds, as edits: the prologue and a .func's head, runs of
 * records under one bounds check, the count around calls, the code at exits, an entry's exit
 * block, and trampolines for the taken edges of guarded branches. */
#include "instrument/rewrite.h"

#include <ctype.h>
#include <stdlib.h>

/* The registers every instrumented function gets. */
/* ---- the code added ------------------------------------------------------------------------
 * Registers: d0 the trace buffer (the header of trace 0), r0 entries per trace, r2 the trace's
 * index, p0 "this thread writes the trace", r8 the count (event words so far, also past the
 * capacity), d2 the trace's base + 4 x count (events go to [d2+12] on), p1 "this run of records
 * fits".  Only r8, d2, p0 and p1 live through the kernel: the start words are written in the
 * prologue, and the trace's base (d2 - 4 x count) and calibration record are computed again at
 * an exit. */
#define MGPU_REGS                              \
    "\t.reg .pred \t%%__mgpu_p<3>;\n"           \
    "\t.reg .b32 \t%%__mgpu_r<20>;\n"           \
    "\t.reg .b64 \t%%__mgpu_d<5>;\n"

/* Entry: d0 = the trace buffer, r0 = entries per trace. */
static const char PROLOGUE_HEAD[] =
    "\n\t// @mgpu: trace prologue (added by mgpu-harness)\n" MGPU_REGS
    "\tld.param.u64 \t%%__mgpu_d0, [__mgpu_trace];\n"
    "\tld.param.u32 \t%%__mgpu_r0, [__mgpu_entries];\n"
    "\tcvta.to.global.u64 \t%%__mgpu_d0, %%__mgpu_d0;\n";

/* r2 = this thread's trace index, p0 = it is the trace's writer (lane 0 of
 * the warp, thread 0 of the warpgroup: the lowest thread, also of a last,
 * partial one); a block has ceil(threads / scope) traces.  printf args:
 * scope - 1, lg, scope - 1, lg. */
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
    "\tadd.s32 \t%%__mgpu_r5, %%__mgpu_r5, %u;\n"
    "\tshr.u32 \t%%__mgpu_r5, %%__mgpu_r5, %u;\n"
    "\tmov.u32 \t%%__mgpu_r3, %%ctaid.x;\n"
    "\tmov.u32 \t%%__mgpu_r4, %%nctaid.y;\n"
    "\tmov.u32 \t%%__mgpu_r6, %%ctaid.y;\n"
    "\tmad.lo.s32 \t%%__mgpu_r3, %%__mgpu_r3, %%__mgpu_r4, %%__mgpu_r6;\n"
    "\tmov.u32 \t%%__mgpu_r4, %%nctaid.z;\n"
    "\tmov.u32 \t%%__mgpu_r6, %%ctaid.z;\n"
    "\tmad.lo.s32 \t%%__mgpu_r3, %%__mgpu_r3, %%__mgpu_r4, %%__mgpu_r6;\n"
    "\tmad.lo.s32 \t%%__mgpu_r2, %%__mgpu_r3, %%__mgpu_r5, %%__mgpu_r2;\n";

/* Entry: the trace's base d1, its calibration record d4; the start readings
 * (%clock, %globaltimer_lo) go to the header's first word and the
 * calibration record now, so nothing of them stays live; count 0. */
static const char PROLOGUE_TAIL[] =
    "\tmul.wide.u32 \t%%__mgpu_d1, %%__mgpu_r2, %%__mgpu_r0;\n"
    "\tshl.b64 \t%%__mgpu_d1, %%__mgpu_d1, 2;\n"
    "\tadd.s64 \t%%__mgpu_d1, %%__mgpu_d0, %%__mgpu_d1;\n"
    "\tld.param.u64 \t%%__mgpu_d3, [__mgpu_calib];\n"
    "\tcvta.to.global.u64 \t%%__mgpu_d3, %%__mgpu_d3;\n"
    "\tmul.wide.u32 \t%%__mgpu_d4, %%__mgpu_r2, 16;\n"
    "\tadd.s64 \t%%__mgpu_d4, %%__mgpu_d3, %%__mgpu_d4;\n"
    "\tmov.u32 \t%%__mgpu_r12, %%clock;\n"
    "\tmov.u32 \t%%__mgpu_r9, %%globaltimer_lo;\n"
    "\t@%%__mgpu_p0 st.global.u32 \t[%%__mgpu_d1], %%__mgpu_r9;\n"
    "\t@%%__mgpu_p0 st.global.v2.u32 \t[%%__mgpu_d4], {%%__mgpu_r12, %%__mgpu_r9};\n"
    "\tmov.u32 \t%%__mgpu_r8, 0;\n"
    "\tmov.u64 \t%%__mgpu_d2, %%__mgpu_d1;\n";

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
    "\tld.global.u32 \t%%__mgpu_r0, [__mgpu_g_entries];\n";
static const char FUNC_TAIL[] =
    "\tmul.wide.u32 \t%%__mgpu_d1, %%__mgpu_r2, %%__mgpu_r0;\n"
    "\tshl.b64 \t%%__mgpu_d1, %%__mgpu_d1, 2;\n"
    "\tadd.s64 \t%%__mgpu_d1, %%__mgpu_d0, %%__mgpu_d1;\n"
    "\tmov.u32 \t%%__mgpu_r8, 0;\n"
    "\t@%%__mgpu_p0 ld.global.u32 \t%%__mgpu_r8, [%%__mgpu_d1+8];\n"
    "\tmul.wide.u32 \t%%__mgpu_d2, %%__mgpu_r8, 4;\n"
    "\tadd.s64 \t%%__mgpu_d2, %%__mgpu_d1, %%__mgpu_d2;\n";

/* d3 = the trace's base, from d2 and the count. */
#define TRACE_BASE_D3                                         \
    "\tmul.wide.u32 \t%%__mgpu_d3, %%__mgpu_r8, 4;\n"         \
    "\tsub.s64 \t%%__mgpu_d3, %%__mgpu_d2, %%__mgpu_d3;\n"

/* Around a call to a function that records events: the count goes to the
 * header word before, and comes back (with d2) after. */
static const char SYNC_BEFORE[] = TRACE_BASE_D3 "\t@%%__mgpu_p0 st.global.u32 \t[%%__mgpu_d3+8], %%__mgpu_r8;\n\t";
static const char SYNC_AFTER[] =
    "\n" TRACE_BASE_D3
    "\t@%%__mgpu_p0 ld.global.u32 \t%%__mgpu_r8, [%%__mgpu_d3+8];\n"
    "\tmul.wide.u32 \t%%__mgpu_d2, %%__mgpu_r8, 4;\n"
    "\tadd.s64 \t%%__mgpu_d2, %%__mgpu_d3, %%__mgpu_d2;";

/* At a .func's returns: the count, for its caller. */
static const char FUNC_EXIT[] = "\t// @mgpu: the count back to the caller\n" TRACE_BASE_D3
                                "\t@%%__mgpu_p0 st.global.u32 \t[%%__mgpu_d3+8], %%__mgpu_r8;\n";

/* The start of a run of n records: the count and d2 move past the run at once (nothing reads
 * them before the run's end: it holds no call or exit), and the run fits when the count now +
 * 2 < entries, i.e. the count before + 2n + 3 <= entries (r15 = count + 2, r16 or r0 = entries).
 * printf args: n, plural, 2n, 8n. */
static const char CHECK_ENTRY[] =
    "\t// @mgpu: bounds check of the next %u record%s\n"
    "\tadd.s32 \t%%__mgpu_r8, %%__mgpu_r8, %u;\n"
    "\tadd.s64 \t%%__mgpu_d2, %%__mgpu_d2, %u;\n"
    "\tadd.s32 \t%%__mgpu_r15, %%__mgpu_r8, 2;\n"
    "\tld.param.u32 \t%%__mgpu_r16, [__mgpu_entries];\n"
    "\tsetp.lt.and.s32 \t%%__mgpu_p1, %%__mgpu_r15, %%__mgpu_r16, %%__mgpu_p0;\n";
static const char CHECK_FUNC[] =
    "\t// @mgpu: bounds check of the next %u record%s\n"
    "\tadd.s32 \t%%__mgpu_r8, %%__mgpu_r8, %u;\n"
    "\tadd.s64 \t%%__mgpu_d2, %%__mgpu_d2, %u;\n"
    "\tadd.s32 \t%%__mgpu_r15, %%__mgpu_r8, 2;\n"
    "\tsetp.lt.and.s32 \t%%__mgpu_p1, %%__mgpu_r15, %%__mgpu_r0, %%__mgpu_p0;\n";

/* Record k of a run of n: (tag, %clock) at [d2 + 12 + 8k - 8n] (d2 is past the run already)
 * when the run fits.  The aligned layout stores both words at once (the offset is 8-aligned
 * there); printf args: what, name, tag, tag, offset (the legacy layout: what, name, tag,
 * offset, tag, offset + 4). */
static const char RECORD_V2[] =
    "\t// @mgpu: record %s \"%s\" (tag 0x%08x)\n"
    "\tmov.u32 \t%%__mgpu_r11, %u;\n"
    "\tmov.u32 \t%%__mgpu_r10, %%clock;\n"
    "\t@%%__mgpu_p1 st.global.v2.u32 \t[%%__mgpu_d2+%d], {%%__mgpu_r11, %%__mgpu_r10};\n";
static const char RECORD_LEGACY[] =
    "\t// @mgpu: record %s \"%s\" (tag 0x%08x)\n"
    "\tmov.u32 \t%%__mgpu_r10, %%clock;\n"
    "\t@%%__mgpu_p1 st.global.u32 \t[%%__mgpu_d2+%d], %u;\n"
    "\t@%%__mgpu_p1 st.global.u32 \t[%%__mgpu_d2+%d], %%__mgpu_r10;\n";

/* At an entry's exit: the header's SM id and count (at the trace's base + 4: 8-aligned in the
 * aligned layout) and the calibration's exit readings, the record found again from the slot. */
static const char HEADER_HEAD[] =
    "\t// @mgpu: trace header and clock calibration at exit\n"
    "\tmov.u32 \t%%__mgpu_r13, %%clock;\n"
    "\tmov.u32 \t%%__mgpu_r14, %%globaltimer_lo;\n"
    "\tmov.u32 \t%%__mgpu_r11, %%smid;\n" TRACE_BASE_D3;
static const char HEADER_V2[] = "\t@%%__mgpu_p0 st.global.v2.u32 \t[%%__mgpu_d3+4], {%%__mgpu_r11, %%__mgpu_r8};\n";
static const char HEADER_LEGACY[] = "\t@%%__mgpu_p0 st.global.u32 \t[%%__mgpu_d3+4], %%__mgpu_r11;\n"
                                    "\t@%%__mgpu_p0 st.global.u32 \t[%%__mgpu_d3+8], %%__mgpu_r8;\n";
static const char HEADER_CALIB[] =
    "\tld.param.u64 \t%%__mgpu_d1, [__mgpu_calib];\n"
    "\tcvta.to.global.u64 \t%%__mgpu_d1, %%__mgpu_d1;\n"
    "\tmul.wide.u32 \t%%__mgpu_d4, %%__mgpu_r2, 16;\n"
    "\tadd.s64 \t%%__mgpu_d4, %%__mgpu_d1, %%__mgpu_d4;\n"
    "\t@%%__mgpu_p0 st.global.v2.u32 \t[%%__mgpu_d4+8], {%%__mgpu_r13, %%__mgpu_r14};\n";

#define RUN_MAX 32 /* records under one bounds check at most (a longer run is split) */

/* What tells the code added from the user's (emu's counters leave it out, issue 24): every
 * instruction added names a __mgpu register, parameter or label, or ends its line with a
 * "// mgpu:" comment (no "@": not a marker comment, which the front end keeps as a statement);
 * a branch added in front of one of the user's exits or guarded branches,
 * with its guard, that takes the user's instruction's place ends its line with STAND_IN, and
 * emu counts it as that instruction (core/emu/emu_counters.c, MH_CT_STAND_IN there). */
#define STAND_IN "\t// mgpu: stands for the line below"

/* An instruction after which the straight line ends: a branch, a call, an exit. */
static int ends_line(const mh_ptx_insn *in)
{
    return in->op == MH_OP_BRA || in->op == MH_OP_RET || in->op == MH_OP_EXIT || in->op == MH_OP_TRAP ||
           in->op == MH_OP_CALL || (in->op == MH_OP_OPAQUE && (in->mods & MH_MOD_OPAQUE_CALL));
}

/* The code of one function's points: runs of records, each under one bounds check.  A run is
 * at most RUN_MAX points of one straight line of code (no label that is a branch target, no
 * branch, call or exit between them); its check goes where that line begins, or right after
 * the previous run of the line, so it overlaps the code before the first record.  Points on
 * the exit path of a guarded exit are a run of their own in front of its header (exit_code).
 * seg: each instruction's line number; lone: the line number given to points outside any
 * (after a call, on a guarded exit path), which then run alone. */
typedef struct {
    edits *E;
    const mh_ptx_module *m;
    const mh_ptx_func *f;
    const mh_names *names;
    int aligned, entry;
} emit_ctx;

static void emit_check(const emit_ctx *c, size_t at, uint32_t prio, uint32_t count)
{
    add_edit(c->E, at, prio, c->entry ? CHECK_ENTRY : CHECK_FUNC, count, count == 1 ? "" : "s", 2 * count, 8 * count);
}

static void emit_record(const emit_ctx *c, const point *p, uint32_t k, uint32_t count, uint32_t prio)
{
    uint32_t tag = p->id | (p->end == 1 ? MH_EXIT_BIT : 0); /* a role's record: its id, tagged as a begin */
    int off = 12 + 8 * (int)k - 8 * (int)count;
    const char *what = p->end == PT_ROLE ? "role" : p->end ? "end" : "begin", *name = pname(c->names, p->id);
    if (c->aligned) add_edit(c->E, p->at, prio, RECORD_V2, what, name, tag, tag, off);
    else add_edit(c->E, p->at, prio, RECORD_LEGACY, what, name, tag, off, tag, off + 4);
}

/* The runs of pts[0 .. n) (sorted by place, none on a guarded exit's path). */
static int emit_runs(const emit_ctx *c, const point *pts, size_t n, mh_error *e)
{
    const mh_ptx_func *f = c->f;
    uint32_t *seg = malloc((f->ncode ? f->ncode : 1) * sizeof *seg);
    uint32_t *seg_first = malloc(((size_t)f->ncode + 1) * sizeof *seg_first);
    char *target = calloc(f->ncode ? f->ncode : 1, 1);
    if (!seg || !seg_first || !target) {
        free(seg);
        free(seg_first);
        free(target);
        return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    }
    for (uint32_t i = 0; i < f->ncode; i++)
        if (f->code[i].op == MH_OP_BRA && f->code[i].o[0].reg < f->ncode) target[f->code[i].o[0].reg] = 1;
    uint32_t ns = 0;
    for (uint32_t i = 0; i < f->ncode; i++) {
        if (i == 0 || target[i] || ends_line(&f->code[i - 1])) seg_first[ns++] = i;
        seg[i] = ns - 1;
    }
    uint32_t prev = UINT32_MAX; /* the line of the previous run (UINT32_MAX: none or alone) */
    for (size_t i = 0; i < n;) {
        /* a point after a call stands alone: its line begins after the call */
        int alone = pts[i].where == PT_AFTER && ends_line(&f->code[pts[i].insn]);
        uint32_t s = alone ? UINT32_MAX : seg[pts[i].insn];
        size_t j = i + 1;
        while (!alone && j < n && j - i < RUN_MAX && seg[pts[j].insn] == s &&
               !(pts[j].where == PT_AFTER && ends_line(&f->code[pts[j].insn])))
            j++;
        uint32_t count = (uint32_t)(j - i);
        if (alone) emit_check(c, pts[i].at, P_RECORD, count);
        else if (s != prev) emit_check(c, insn_at(f, seg_first[s]), P_CHECK, count); /* where the line begins */
        else emit_check(c, pts[i - 1].at, P_RECORD, count);                         /* after the previous run */
        for (size_t k = i; k < j; k++) emit_record(c, &pts[k], (uint32_t)(k - i), count, P_RECORD);
        prev = s;
        i = j;
    }
    free(seg);
    free(seg_first);
    free(target);
    return 0;
}

/* The records of pts[0 .. n) all at offset `at` (an exit path, a trampoline), in runs of at
 * most RUN_MAX under one bounds check each. */
static void emit_records_at(const emit_ctx *c, size_t at, const point *pts, size_t n)
{
    for (size_t k = 0; k < n; k += RUN_MAX) {
        uint32_t count = (uint32_t)(n - k < RUN_MAX ? n - k : RUN_MAX);
        emit_check(c, at, P_EXIT, count);
        for (uint32_t q = 0; q < count; q++) {
            point p = pts[k + q];
            p.at = at;
            emit_record(c, &p, q, count, P_EXIT);
        }
    }
}

/* The code at an exit instruction i of f, after the exit path's own points xp[0 .. nx) for a
 * guarded exit.  A .func stores its count back (FUNC_EXIT) there; an entry branches to its one
 * exit block (exit_block), which writes the header: its ~35 instructions are in the code once,
 * whatever the number of exits (the original exit instruction stays, unreachable, so the
 * module's text is kept). */
static void exit_code(const emit_ctx *c, uint32_t i, const point *xp, size_t nx, size_t exit_label, size_t *label)
{
    const mh_ptx_insn *in = &c->f->code[i];
    size_t at = in->text_off;
    const char *g = in->guard >= 0 ? c->m->reg_name[in->guard] : "";
    if (in->guard >= 0 && nx && c->entry) {
        /* the exit path's records out of line, after the exit block: the branch there has the
         * exit's own guard, so it stands for the exit (emu counts it as the user's: STAND_IN) */
        add_edit(c->E, at, P_EXIT, "@%s%s bra \t$__mgpu_xpath%zu; " STAND_IN "\n\t", in->guard_neg ? "!" : "", g, *label);
        (*label)++; /* the block itself: exit_paths, after the exit block */
    } else if (in->guard >= 0 && (nx || !c->entry)) {
        add_edit(c->E, at, P_EXIT, "@%s%s bra \t$__mgpu_skip%zu;\n", in->guard_neg ? "" : "!", g, *label);
        emit_records_at(c, at, xp, nx);
        if (c->entry) add_edit(c->E, at, P_EXIT, "\tbra \t$__mgpu_exit%zu;\n", exit_label);
        else add_edit(c->E, at, P_EXIT, FUNC_EXIT);
        add_edit(c->E, at, P_FILL, "$__mgpu_skip%zu:\n\t", *label);
        (*label)++;
    } else if (in->guard >= 0) /* an entry's guarded exit without points of its own */
        add_edit(c->E, at, P_EXIT, "@%s%s bra \t$__mgpu_exit%zu; " STAND_IN "\n\t", in->guard_neg ? "!" : "", g,
                 exit_label);
    else if (c->entry) add_edit(c->E, at, P_EXIT, "bra \t$__mgpu_exit%zu; " STAND_IN "\n\t", exit_label);
    else {
        add_edit(c->E, at, P_EXIT, FUNC_EXIT);
        add_edit(c->E, at, P_FILL, "\t");
    }
}

/* The out-of-line exit paths of an entry's guarded exits with points (exit_code's
 * $__mgpu_xpathN, labels from first on in the exits' order), after its exit block. */
static void exit_paths(const emit_ctx *c, const point *pts, size_t npts, size_t first, size_t exit_label)
{
    size_t end = c->f->body_open, k = 0, label = first;
    for (uint32_t i = 0; i < c->f->ncode; i++) {
        const mh_ptx_insn *in = &c->f->code[i];
        if ((in->text_off == 0 && in->text_end == 0) || (in->op != MH_OP_RET && in->op != MH_OP_EXIT)) continue;
        while (k < npts && pts[k].insn < i) k++;
        size_t x = k;
        while (x < npts && pts[x].insn == i && pts[x].where != PT_EXIT) x++;
        size_t xe = x;
        while (xe < npts && pts[xe].insn == i) xe++;
        if (in->guard < 0 || xe == x) continue;
        add_edit(c->E, end, P_EXIT, "$__mgpu_xpath%zu:\t// @mgpu: the exit path of line %u\n", label++, in->line);
        emit_records_at(c, end, pts + x, xe - x);
        add_edit(c->E, end, P_EXIT, "\tbra \t$__mgpu_exit%zu;\n", exit_label);
    }
}

/* An entry's exit block, at the end of its body (reached by falling off the end too): the
 * header's SM id and count, the calibration's exit readings, exit. */
static void exit_block(const emit_ctx *c, size_t exit_label, unsigned scope)
{
    size_t at = c->f->body_close;
    unsigned lg = scope == MH_SCOPE_WARP ? 5 : 7;
    add_edit(c->E, at, P_EXIT, "$__mgpu_exit%zu:\n", exit_label);
    add_edit(c->E, at, P_EXIT, HEADER_HEAD);
    add_edit(c->E, at, P_EXIT, c->aligned ? HEADER_V2 : HEADER_LEGACY);
    add_edit(c->E, at, P_EXIT, TRACE_SLOT, scope - 1, lg, scope - 1, lg);
    add_edit(c->E, at, P_EXIT, HEADER_CALIB);
    add_edit(c->E, at, P_EXIT, "\texit; \t// mgpu: the kernel ends here\n");
}

/* The text of branch i's target label (the last word before its ';'). */
static void branch_target(const mh_ptx_module *m, const mh_ptx_insn *in, const char **s, int *len)
{
    const char *b = m->text + in->text_off, *p = m->text + in->text_end;
    while (p > b && (p[-1] == ';' || isspace((unsigned char)p[-1]))) p--;
    const char *q = p;
    while (q > b && !isspace((unsigned char)q[-1]) && q[-1] != ',') q--;
    *s = q;
    *len = (int)(p - q);
}

/* The block of f a branch is in (0: the body). */
static uint32_t branch_block(const emit_ctx *c, uint32_t insn) { return mh_ptx_block_at(c->f, c->f->code[insn].text_off); }

/* The trampoline of the taken edge of the guarded branch whose points are pts[0 .. n): before the
 * branch, the same guard sends control to it; it records and branches to the target.  It goes at
 * `at`, the top of the branch's own block (the body's: after the exit block), so the target's
 * name means there what it means at the branch (the innermost label in sight, issue 30), and no
 * branch enters a block from outside it. */
static void trampoline(const emit_ctx *c, const point *pts, size_t n, size_t at, size_t *label)
{
    const mh_ptx_insn *in = &c->f->code[pts[0].insn];
    const char *t;
    int tl;
    branch_target(c->m, in, &t, &tl);
    add_edit(c->E, in->text_off, P_SYNC_BEFORE, "@%s%s bra \t$__mgpu_edge%zu; " STAND_IN "\n\t",
             in->guard_neg ? "!" : "", c->m->reg_name[in->guard], *label);
    add_edit(c->E, at, P_EXIT, "$__mgpu_edge%zu:\t// @mgpu: the edge to %.*s\n", *label, tl, t);
    emit_records_at(c, at, pts, n);
    add_edit(c->E, at, P_EXIT, "\tbra \t%.*s; \t// mgpu: on to the edge's target\n", tl, t);
    (*label)++;
}

/* The end of the edge points of the branch at pts[i] (or i itself when pts[i] is not one). */
static size_t edge_end(const point *pts, size_t n, size_t i)
{
    size_t j = i;
    while (j < n && pts[j].insn == pts[i].insn && pts[j].where == PT_EDGE) j++;
    return j;
}

/* The trampolines of the guarded branches of the body itself, after the exit block. */
static void trampolines(const emit_ctx *c, const point *pts, size_t n, size_t *label)
{
    for (size_t i = 0, j; i < n; i = j > i ? j : i + 1) {
        j = edge_end(pts, n, i);
        if (j > i && branch_block(c, pts[i].insn) == 0) trampoline(c, pts + i, j - i, c->f->body_open, label);
    }
}

/* The trampolines of the guarded branches inside blocks, at the top of each branch's block, jumped
 * over there ("bra $__mgpu_bodyN", then the trampolines of the block, then the label), block by
 * block.  -1: out of memory. */
static int block_trampolines(const emit_ctx *c, const point *pts, size_t n, size_t *label, mh_error *e)
{
    uint32_t nb = c->f->nblocks;
    if (nb <= 1) return 0;
    char *has = calloc(nb, 1);
    if (!has) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    for (size_t i = 0, j; i < n; i = j > i ? j : i + 1)
        if ((j = edge_end(pts, n, i)) > i) has[branch_block(c, pts[i].insn)] = 1;
    for (uint32_t b = 1; b < nb; b++) {
        if (!has[b]) continue;
        size_t at = c->f->blocks[b].open, over = (*label)++;
        add_edit(c->E, at, P_EXIT, "\n\tbra \t$__mgpu_body%zu; \t// mgpu: over the edges of this block\n", over);
        for (size_t i = 0, j; i < n; i = j > i ? j : i + 1)
            if ((j = edge_end(pts, n, i)) > i && branch_block(c, pts[i].insn) == b) trampoline(c, pts + i, j - i, at, label);
        add_edit(c->E, at, P_EXIT, "$__mgpu_body%zu:\n", over);
    }
    free(has);
    return 0;
}

void emit_globals(edits *E, const mh_ptx_module *m)
{
    /* the module variables the .funcs read, before the first function */
    uint32_t first_line = UINT32_MAX;
    for (uint32_t fi = 0; fi < m->nfuncs; fi++)
        if (m->funcs[fi].line < first_line) first_line = m->funcs[fi].line;
    size_t at = 0;
    for (uint32_t l = 1; l < first_line && m->text[at]; at++) l += m->text[at] == '\n';
    add_edit(E, at, P_SYNC_AFTER, GLOBALS);
}

/* An entry's parameters and prologue, or a .func's head. */
static int emit_head(edits *E, const mh_ptx_module *m, const mh_ptx_func *f, int func_records, unsigned scope,
                     mh_error *e)
{
    unsigned lg = scope == MH_SCOPE_WARP ? 5 : 7;
    if (f->is_entry) {
        /* parameters */
        if (f->params_close) {
            size_t at = f->params_close;
            while (f->nparams && at > 0 && isspace((unsigned char)m->text[at - 1])) at--; /* after the last parameter */
            add_edit(E, at, P_SYNC_AFTER, f->nparams ? ",\n\t.param .u64 __mgpu_trace,\n\t.param .u32 __mgpu_entries,\n\t.param .u64 __mgpu_calib"
                                        : "\n\t.param .u64 __mgpu_trace,\n\t.param .u32 __mgpu_entries,\n\t.param .u64 __mgpu_calib\n");
        } else
            return err_at(e, m, f->line, MH_E_PTX_UNSUPPORTED, "%s has no parameter list to extend", f->name);
        add_edit(E, f->body_open, P_SYNC_AFTER, PROLOGUE_HEAD);
        add_edit(E, f->body_open, P_SYNC_AFTER, TRACE_SLOT, scope - 1, lg, scope - 1, lg);
        add_edit(E, f->body_open, P_SYNC_AFTER, PROLOGUE_TAIL);
        if (func_records) add_edit(E, f->body_open, P_SYNC_AFTER, PUBLISH);
    } else {
        add_edit(E, f->body_open, P_SYNC_AFTER, FUNC_HEAD);
        add_edit(E, f->body_open, P_SYNC_AFTER, TRACE_SLOT, scope - 1, lg, scope - 1, lg);
        add_edit(E, f->body_open, P_SYNC_AFTER, FUNC_TAIL);
    }
    return 0;
}

/* The records, in runs (the points on guarded exits' paths go with those exits). */
static int emit_records(const emit_ctx *c, const point *pts, size_t npts, mh_error *e)
{
    const mh_ptx_func *f = c->f;
    size_t nrun = 0;
    point *run_pts = malloc((npts ? npts : 1) * sizeof *run_pts);
    if (!run_pts) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < npts; i++)
        if (!(pts[i].where == PT_EXIT && f->code[pts[i].insn].guard >= 0) && pts[i].where != PT_EDGE)
            run_pts[nrun++] = pts[i];
    int rc = emit_runs(c, run_pts, nrun, e);
    free(run_pts);
    return rc;
}

/* The header (an entry: in its exit block) or the count (a .func) at every exit. */
static int emit_exits(const emit_ctx *c, const point *pts, size_t npts, unsigned scope, size_t *label, mh_error *e)
{
    const mh_ptx_func *f = c->f;
    int ends_with_exit = 0;
    size_t k = 0, exit_label = (*label)++, first_path = *label; /* exit_code numbers the exit paths first */
    for (uint32_t i = 0; i < f->ncode; i++) {
        const mh_ptx_insn *in = &f->code[i];
        if (in->text_off == 0 && in->text_end == 0) continue; /* the synthetic final ret */
        ends_with_exit = in->op == MH_OP_RET || in->op == MH_OP_EXIT || in->op == MH_OP_BRA || in->op == MH_OP_TRAP;
        if (in->op != MH_OP_RET && in->op != MH_OP_EXIT) continue;
        while (k < npts && pts[k].insn < i) k++;
        size_t x = k;
        while (x < npts && pts[x].insn == i && pts[x].where != PT_EXIT) x++;
        size_t xe = x;
        while (xe < npts && pts[xe].insn == i) xe++;
        exit_code(c, i, pts + x, in->guard >= 0 ? xe - x : 0, exit_label, label);
    }
    if (f->is_entry) {
        exit_block(c, exit_label, scope);
        /* the exit paths and trampolines go right after the prologue, jumped over: there they
         * have lower addresses than the code that branches to them, as the user's branch
         * targets had, so emu's lowest-pc-first reconvergence (and its counters) stay the
         * plain kernel's; at the end, divergent paths met later */
        int out_of_line = 0;
        for (size_t q = 0; q < npts; q++)
            out_of_line |= (pts[q].where == PT_EDGE && branch_block(c, pts[q].insn) == 0) ||
                           (pts[q].where == PT_EXIT && f->code[pts[q].insn].guard >= 0);
        size_t body = *label;
        if (out_of_line) {
            (*label)++;
            add_edit(c->E, f->body_open, P_EXIT, "\tbra \t$__mgpu_body%zu; \t// mgpu: over the exit paths and edges\n",
                     body);
        }
        exit_paths(c, pts, npts, first_path, exit_label);
        trampolines(c, pts, npts, label);
        if (out_of_line) add_edit(c->E, f->body_open, P_EXIT, "$__mgpu_body%zu:\n", body);
        return block_trampolines(c, pts, npts, label, e);
    } else if (!ends_with_exit) add_edit(c->E, f->body_close, P_EXIT, FUNC_EXIT);
    return 0;
}

int emit_function(rewrite *w, const mh_ptx_func *f, unsigned scope, mh_error *e)
{
    emit_ctx c = {&w->E, w->m, f, &w->out->names, w->out->aligned, f->is_entry};
    int rc = emit_head(&w->E, w->m, f, w->func_records, scope, e);
    if (!rc) rc = emit_records(&c, w->pts, w->npts, e);
    if (rc) return rc;
    /* calls to functions that record events: the count through the header */
    for (uint32_t i = 0; w->func_records && i < f->ncode; i++) {
        const mh_ptx_insn *in = &f->code[i];
        if (!calls_traced(in, w->traced)) continue;
        add_edit(&w->E, in->text_off, P_SYNC_BEFORE, SYNC_BEFORE);
        add_edit(&w->E, in->text_end, P_SYNC_AFTER, SYNC_AFTER);
    }
    return emit_exits(&c, w->pts, w->npts, scope, &w->label, e);
}
