/* flow.c - the flow check of open regions: along every path of a function, each instruction is
 * reached with one stack of open regions, an end closes the innermost one, and a .func's regions
 * end before it returns. */
#include "instrument/rewrite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Region stacks along the control flow of one function: every instruction must
 * be reached with the same stack of open regions from every path, and an
 * end must close the innermost open region.  (Compilers lay loops out with
 * the latch before the header, so the text order of markers proves nothing.) */
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

/* Applies point p to the stack cur (depth *d). */
static int apply_point(const mh_ptx_module *m, const mh_ptx_func *f, const point *p, uint32_t *cur, uint32_t *d,
                       const mh_names *names, mh_error *e)
{
    char a[300];
    if (!p->end) {
        cur[(*d)++] = p->id;
        return 0;
    }
    if (*d == 0)
        return err_at(e, m, p->line, MH_E_PTX_SYNTAX, "end \"%.400s\" without its begin on some path (in %s)",
                      pname(names, p->id), f->name);
    if (cur[*d - 1] != p->id) {
        describe_stack(names, cur, *d, a, sizeof a);
        return err_at(e, m, p->line, MH_E_PTX_SYNTAX,
                      "end \"%.200s\" does not close the innermost open region (open: %s): regions must nest and "
                      "end once", pname(names, p->id), a);
    }
    (*d)--;
    return 0;
}

/* pts: the function's points sorted by place (by_place). */
int check_flow(const mh_ptx_module *m, const mh_ptx_func *f, const point *pts, size_t npts,
                      const mh_names *names, int must_close, mh_error *e)
{
    uint32_t n = f->ncode;
    region_stack *st = calloc(n ? n : 1, sizeof *st);
    uint32_t *work = malloc((n ? n : 1) * sizeof *work), *first = malloc(((size_t)n + 1) * sizeof *first);
    uint32_t *cur = malloc((npts + 1) * sizeof *cur), *tmp = malloc((npts + 1) * sizeof *tmp);
    uint32_t *tmp2 = malloc((npts + 1) * sizeof *tmp2);
    char a[300], b[300];
    int rc = 0;
    if (!st || !work || !first || !cur || !tmp || !tmp2) { rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory"); goto done; }
    /* first[i]: the first point at instruction i (points sorted by instruction) */
    for (uint32_t i = 0, k = 0; i <= n; i++) {
        while (k < npts && pts[k].insn < i) k++;
        first[i] = (uint32_t)k;
    }
    if (!n) goto done;
    uint32_t nwork = 0;
    st[0].set = 1;
    work[nwork++] = 0;
    while (nwork && !rc) {
        uint32_t i = work[--nwork], depth = st[i].n;
        if (depth) memcpy(cur, st[i].ids, depth * sizeof *cur);
        uint32_t k = first[i], kend = first[i + 1];
        for (; !rc && k < kend && pts[k].where == PT_BEFORE; k++) rc = apply_point(m, f, &pts[k], cur, &depth, names, e);
        /* the fall-through gets the points after the instruction too (tmp, fall_depth) */
        uint32_t fall_depth = depth;
        if (depth) memcpy(tmp, cur, depth * sizeof *cur);
        for (; !rc && k < kend && pts[k].where == PT_AFTER; k++) rc = apply_point(m, f, &pts[k], tmp, &fall_depth, names, e);
        /* the exit path's points: checked on a copy, they lead nowhere; the taken edge's go to
         * the branch target (taken, taken_depth) */
        uint32_t taken_depth = depth;
        if (!rc && k < kend) {
            uint32_t dx = depth;
            if (depth) memcpy(tmp2, cur, depth * sizeof *cur);
            for (; !rc && k < kend && pts[k].where == PT_EXIT; k++) rc = apply_point(m, f, &pts[k], tmp2, &dx, names, e);
            if (depth) memcpy(tmp2, cur, depth * sizeof *cur);
            for (; !rc && k < kend; k++) rc = apply_point(m, f, &pts[k], tmp2, &taken_depth, names, e);
        }
        int has_edge = first[i] < kend && pts[kend - 1].where == PT_EDGE;
        if (rc) break;
        const mh_ptx_insn *in = &f->code[i];
        if (must_close && depth && (in->op == MH_OP_RET || in->op == MH_OP_EXIT)) {
            /* a .func's regions end inside it: its caller's own regions must nest around the call */
            rc = err_at(e, m, in->line, MH_E_PTX_SYNTAX, "region \"%s\" is still open where .func %s returns: a "
                        ".func's regions must end before it returns", mh_names_get(names, cur[depth - 1])->name,
                        f->name);
            break;
        }
        int uncond_exit = (in->op == MH_OP_RET || in->op == MH_OP_EXIT || in->op == MH_OP_TRAP) && in->guard < 0;
        struct { uint32_t to; const uint32_t *ids; uint32_t n; } succ[2];
        uint32_t ns = 0;
        if (in->op == MH_OP_BRA)
            succ[ns].to = in->o[0].reg, succ[ns].ids = has_edge ? tmp2 : cur, succ[ns++].n = has_edge ? taken_depth : depth;
        if (!uncond_exit && !(in->op == MH_OP_BRA && in->guard < 0) && i + 1 < n)
            succ[ns].to = i + 1, succ[ns].ids = tmp, succ[ns++].n = fall_depth;
        for (uint32_t s2 = 0; s2 < ns && !rc; s2++) {
            region_stack *t = &st[succ[s2].to];
            uint32_t dd = succ[s2].n;
            if (!t->set) {
                t->ids = malloc((dd ? dd : 1) * sizeof *t->ids);
                if (!t->ids) { rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory"); break; }
                if (dd) memcpy(t->ids, succ[s2].ids, dd * sizeof *t->ids);
                t->n = dd;
                t->set = 1;
                work[nwork++] = succ[s2].to;
            } else if (!same_stack(t, succ[s2].ids, dd)) {
                describe_stack(names, t->ids, t->n, a, sizeof a);
                describe_stack(names, succ[s2].ids, dd, b, sizeof b);
                rc = err_at(e, m, f->code[succ[s2].to].line, MH_E_PTX_SYNTAX,
                            "paths into this line of %s have different open regions (%s and %s): a region begins or "
                            "ends on one branch only", f->name, a, b);
            }
        }
    }
done:
    for (uint32_t i = 0; st && i < n; i++) free(st[i].ids);
    free(st);
    free(work);
    free(first);
    free(cur);
    free(tmp);
    free(tmp2);
    return rc;
}
