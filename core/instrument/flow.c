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
    if (p->end == PT_ROLE) return 0; /* a role opens no region */
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

/* ---- regions that end at an exit (issue 24) ---------------------------------------------------
 * In an entry, a region still open where a thread returns or exits ends there: `if (i >= n)
 * return;` inside a region is CUDA's most common idiom.  An exit tail is a straight line of code
 * that ends in an unconditional exit (no branch, call or guarded exit in it).  Paths into a tail
 * may hold different open regions: the tail keeps their common prefix and each edge into it ends
 * its regions beyond that prefix (on the edge: after the instruction on a fall-through, before an
 * unconditional branch, on a guarded branch's trampoline).  At every exit, the regions still
 * open that the exit's own ends (the kernel probe's) do not close end first, innermost first. */

#define SEQ_EXIT_END 0x70000000u /* edge ends: after the other points at their place */

typedef struct {
    point *v;
    size_t n, cap;
} point_list;

static int push_point(point_list *L, const mh_ptx_func *f, uint32_t insn, uint8_t where, uint32_t id, uint32_t seq,
                      mh_error *e)
{
    if (L->n == L->cap) {
        size_t nc = L->cap ? L->cap * 2 : 64;
        point *nv = realloc(L->v, nc * sizeof *nv);
        if (!nv) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
        L->v = nv;
        L->cap = nc;
    }
    const mh_ptx_insn *in = &f->code[insn];
    size_t at = where == PT_AFTER ? in->text_end : insn_at(f, insn);
    L->v[L->n++] = (point){insn, where, 1, id, at, in->line ? in->line : f->line, seq};
    return 0;
}

/* p applied leniently (what check_flow refuses is left to it): an end pops its region when open. */
static void lenient_point(const point *p, uint32_t *cur, uint32_t *d)
{
    if (p->end == PT_ROLE) return;
    if (!p->end) { cur[(*d)++] = p->id; return; }
    for (uint32_t k = *d; k > 0; k--)
        if (cur[k - 1] == p->id) { *d = k - 1; return; }
}

/* The stacks on instruction i's edges, from its stack in (depth d): fall-through (fall, *dfall)
 * and taken (taken, *dtaken), after its points pts[k0 .. k1); the exit path's are skipped. */
static void edge_stacks(const point *pts, size_t k0, size_t k1, const uint32_t *in, uint32_t d, uint32_t *cur,
                        uint32_t *dcur, uint32_t *fall, uint32_t *dfall, uint32_t *taken, uint32_t *dtaken)
{
    size_t k = k0;
    if (d) memcpy(cur, in, d * sizeof *cur);
    *dcur = d;
    for (; k < k1 && pts[k].where == PT_BEFORE; k++) lenient_point(&pts[k], cur, dcur);
    if (*dcur) memcpy(fall, cur, *dcur * sizeof *cur), memcpy(taken, cur, *dcur * sizeof *cur);
    *dfall = *dtaken = *dcur;
    for (; k < k1 && pts[k].where == PT_AFTER; k++) lenient_point(&pts[k], fall, dfall);
    for (; k < k1 && pts[k].where == PT_EXIT; k++) {}
    for (; k < k1; k++) lenient_point(&pts[k], taken, dtaken);
}

int close_at_exits(const mh_ptx_module *m, const mh_ptx_func *f, point **pts, size_t *npts, size_t *cap, mh_error *e)
{
    (void)m;
    uint32_t n = f->ncode;
    size_t np = *npts;
    const point *P = *pts;
    if (!n || !np) return 0;
    region_stack *st = calloc(n, sizeof *st);
    char *tail = calloc(n, 1), *queued = calloc(n, 1);
    uint32_t *work = malloc((size_t)n * sizeof *work), *first = malloc(((size_t)n + 1) * sizeof *first);
    uint32_t *cur = malloc((np + 1) * sizeof *cur), *fall = malloc((np + 1) * sizeof *fall);
    uint32_t *taken = malloc((np + 1) * sizeof *taken);
    point_list add = {0};
    int rc = 0;
    if (!st || !tail || !queued || !work || !first || !cur || !fall || !taken) {
        rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory");
        goto done;
    }
    for (uint32_t i = 0, k = 0; i <= n; i++) {
        while (k < np && P[k].insn < i) k++;
        first[i] = (uint32_t)k;
    }
    for (uint32_t i = n; i-- > 0;) {
        const mh_ptx_insn *in = &f->code[i];
        int is_exit = in->op == MH_OP_RET || in->op == MH_OP_EXIT;
        if (is_exit && in->guard < 0) tail[i] = 1;
        else if (is_exit || in->op == MH_OP_BRA || in->op == MH_OP_TRAP || in->op == MH_OP_CALL ||
                 (in->op == MH_OP_OPAQUE && (in->mods & MH_MOD_OPAQUE_CALL)))
            tail[i] = 0;
        else tail[i] = i + 1 < n && tail[i + 1];
    }
    /* the stacks: a tail keeps the common prefix of its paths' (it only shrinks, so this ends) */
    uint32_t nwork = 0;
    st[0].set = 1;
    st[0].ids = malloc(sizeof *st[0].ids);
    if (!st[0].ids) { rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory"); goto done; }
    work[nwork++] = 0;
    queued[0] = 1;
    while (nwork && !rc) {
        uint32_t i = work[--nwork], dcur, dfall, dtaken;
        queued[i] = 0;
        edge_stacks(P, first[i], first[i + 1], st[i].ids, st[i].n, cur, &dcur, fall, &dfall, taken, &dtaken);
        const mh_ptx_insn *in = &f->code[i];
        int uncond_exit = (in->op == MH_OP_RET || in->op == MH_OP_EXIT || in->op == MH_OP_TRAP) && in->guard < 0;
        uint32_t to[2], ns = 0, *ids[2], d[2];
        if (in->op == MH_OP_BRA && in->o[0].reg < n) {
            int edge = first[i] < first[i + 1] && P[first[i + 1] - 1].where == PT_EDGE;
            to[ns] = (uint32_t)in->o[0].reg, ids[ns] = edge ? taken : cur, d[ns++] = edge ? dtaken : dcur;
        }
        if (!uncond_exit && !(in->op == MH_OP_BRA && in->guard < 0) && i + 1 < n)
            to[ns] = i + 1, ids[ns] = fall, d[ns++] = dfall;
        for (uint32_t s = 0; s < ns && !rc; s++) {
            region_stack *t = &st[to[s]];
            if (!t->set) {
                t->ids = malloc((np + 1) * sizeof *t->ids);
                if (!t->ids) { rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory"); break; }
                if (d[s]) memcpy(t->ids, ids[s], d[s] * sizeof *t->ids);
                t->n = d[s];
                t->set = 1;
            } else if (tail[to[s]]) {
                uint32_t c = 0;
                while (c < t->n && c < d[s] && t->ids[c] == ids[s][c]) c++;
                if (c == t->n) continue;
                t->n = c;
            } else continue; /* different stacks where no exit follows: check_flow says so */
            if (!queued[to[s]]) work[nwork++] = to[s], queued[to[s]] = 1;
        }
    }
    /* the ends on the edges into tails, and at the exits */
    for (uint32_t i = 0; i < n && !rc; i++) {
        if (!st[i].set) continue;
        uint32_t dcur, dfall, dtaken;
        edge_stacks(P, first[i], first[i + 1], st[i].ids, st[i].n, cur, &dcur, fall, &dfall, taken, &dtaken);
        const mh_ptx_insn *in = &f->code[i];
        int is_exit = in->op == MH_OP_RET || in->op == MH_OP_EXIT;
        if (is_exit) {
            /* the regions open here that the exit's own ends leave open, innermost first */
            uint32_t seq = 0;
            for (uint32_t k = dcur; k > 0 && !rc; k--) {
                int closed = 0;
                for (uint32_t q = first[i]; q < first[i + 1]; q++)
                    closed |= P[q].where == PT_EXIT && P[q].end && P[q].id == cur[k - 1];
                if (!closed) rc = push_point(&add, f, i, PT_EXIT, cur[k - 1], seq++, e);
            }
        }
        int uncond_exit = (is_exit || in->op == MH_OP_TRAP) && in->guard < 0;
        if (in->op == MH_OP_BRA && in->o[0].reg < n && tail[in->o[0].reg]) {
            uint32_t t = (uint32_t)in->o[0].reg;
            int edge = first[i] < first[i + 1] && P[first[i + 1] - 1].where == PT_EDGE;
            const uint32_t *ids = edge ? taken : cur;
            uint32_t d = edge ? dtaken : dcur;
            uint8_t where = in->guard >= 0 ? PT_EDGE : PT_BEFORE;
            for (uint32_t k = d, seq = SEQ_EXIT_END; k > st[t].n && !rc; k--)
                rc = push_point(&add, f, i, where, ids[k - 1], seq++, e);
        }
        if (!uncond_exit && !(in->op == MH_OP_BRA && in->guard < 0) && i + 1 < n && tail[i + 1])
            for (uint32_t k = dfall, seq = SEQ_EXIT_END; k > st[i + 1].n && !rc; k--)
                rc = push_point(&add, f, i, PT_AFTER, fall[k - 1], seq++, e);
    }
    if (!rc && add.n) {
        if (np + add.n > *cap) {
            point *nv = realloc(*pts, (np + add.n) * sizeof *nv);
            if (!nv) { rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory"); goto done; }
            *pts = nv;
            *cap = np + add.n;
        }
        memcpy(*pts + np, add.v, add.n * sizeof *add.v);
        *npts = np + add.n;
    }
done:
    for (uint32_t i = 0; st && i < n; i++) free(st[i].ids);
    free(st);
    free(tail);
    free(queued);
    free(work);
    free(first);
    free(cur);
    free(fall);
    free(taken);
    free(add.v);
    return rc;
}
