/* probes.c - probes (issue 15): the regions of an mh_probe placed as record points of an entry's
 * code (kernel, loops, around an instruction, a range), from its control-flow graph (cfg.c). */
#include "instrument/rewrite.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- probes (issue 15) -----------------------------------------------------------------------
 * Each probe becomes points of an entry's code, from its control-flow graph at instruction
 * level: dominators (Cooper, Harvey and Kennedy's iteration over the reverse postorder) and
 * natural loops (a back edge u -> h where h dominates u; the loop is h and what reaches u
 * without passing h; loops with one header are one loop).  A region ends on an edge: a
 * branch's only edge (before it), a fall-through (after the instruction), or a guarded
 * branch's taken edge (PT_EDGE: the branch is sent to a trampoline that records and branches
 * on). */

/* The order of points at one place: probes' ends, innermost first, then their begins,
 * outermost first (rank: larger is further in), then markers in text order (SEQ_MARKER on): a
 * loop's iteration begins before a marker at its header and ends after one at its latch. */
#define RANK_MAX 0xffffu
enum { RANK_KERNEL = 0, RANK_RANGE = 1, RANK_AROUND = 10000 };
/* Probes of one rank at one place (two `around` probes of one instruction, two kernel probes)
 * nest in the order they are listed: the first begins first and ends last (issue 25: they used
 * to end in the order they began, a nesting error the user had not made). */
#define PROBE_ORDER 4096u /* probes in one list at most (core/lua/glue_device.c: 4096) */
static uint32_t probe_seq(int end, uint32_t rank, uint32_t k)
{
    uint32_t within = k < PROBE_ORDER ? k : PROBE_ORDER - 1;
    return (end ? RANK_MAX - rank : RANK_MAX + 1 + rank) * PROBE_ORDER + (end ? PROBE_ORDER - 1 - within : within);
}

/* What probe_points collects for one entry. */
typedef struct {
    const mh_ptx_module *m;
    const mh_ptx_func *f;
    cfg g;
    nat_loop *loops;
    uint32_t nloops;
    point *pts;
    size_t n, cap;
    mh_names *names;
    name_index *index, *roles; /* the regions' names, the roles' */
    char ***strings;  /* names made here (NAME@LINE), kept until the index is gone */
    size_t *nstrings;
    uint32_t *locs, *loc_lines, nlocs; /* .loc directives of the body: offsets and lines */
    uint32_t probe;   /* the index of the probe whose points are being added */
} probe_ctx;

static int add_point(probe_ctx *c, uint32_t insn, uint8_t where, int end, uint32_t id, uint32_t rank, mh_error *e)
{
    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 64;
        point *nv = realloc(c->pts, nc * sizeof *nv);
        if (!nv) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
        c->pts = nv;
        c->cap = nc;
    }
    const mh_ptx_insn *in = &c->f->code[insn];
    size_t at = where == PT_AFTER ? in->text_end : insn_at(c->f, insn);
    c->pts[c->n++] = (point){insn, where, (uint8_t)(end == PT_ROLE ? PT_ROLE : end != 0), id, at,
                             in->line ? in->line : c->f->line, probe_seq(end == 1, rank, c->probe)};
    return 0;
}

/* A region (id, rank) that ends on the edge u -> v. */
static int end_on_edge(probe_ctx *c, uint32_t u, uint32_t v, uint32_t id, uint32_t rank, mh_error *e)
{
    const mh_ptx_insn *in = &c->f->code[u];
    if (in->op == MH_OP_BRA && v == (uint32_t)in->o[0].reg && v != u + 1)
        return add_point(c, u, in->guard >= 0 ? PT_EDGE : PT_BEFORE, 1, id, rank, e);
    return add_point(c, u, PT_AFTER, 1, id, rank, e);
}

static int begin_on_edge(probe_ctx *c, uint32_t u, uint32_t v, uint32_t id, uint32_t rank, mh_error *e)
{
    const mh_ptx_insn *in = &c->f->code[u];
    if (in->op == MH_OP_BRA && v == (uint32_t)in->o[0].reg && v != u + 1)
        return add_point(c, u, in->guard >= 0 ? PT_EDGE : PT_BEFORE, 0, id, rank, e);
    return add_point(c, u, PT_AFTER, 0, id, rank, e);
}

static int name_id(probe_ctx *c, const char *s, size_t len, uint32_t *id, mh_error *e)
{
    int rc = intern(c->names, c->index, s, len, id, e);
    if (rc == MH_E_BAD_META) /* the names table refuses what JSON cannot carry */
        rc = mh_fail(e, MH_E_BAD_ARGUMENT, "probes[%u]: its name is not valid UTF-8 (trace names are JSON strings)",
                     c->probe + 1);
    return rc;
}

/* The id of a made name (kept in c->strings while the index points into it). */
static int made_name_id(probe_ctx *c, const char *fmt, const char *a, uint32_t b, uint32_t *id, mh_error *e)
{
    int len = snprintf(NULL, 0, fmt, a, b);
    char *s = len >= 0 ? malloc((size_t)len + 1) : NULL;
    char **nv = s ? realloc(*c->strings, (*c->nstrings + 1) * sizeof *nv) : NULL;
    if (!nv) {
        free(s);
        return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    }
    *c->strings = nv;
    snprintf(s, (size_t)len + 1, fmt, a, b);
    nv[(*c->nstrings)++] = s;
    return name_id(c, s, (size_t)len, id, e);
}

/* The source line of instruction i: the last .loc before it in the body, else 0. */
static uint32_t source_line(const probe_ctx *c, uint32_t i)
{
    size_t off = insn_at(c->f, i);
    uint32_t lo = 0, hi = c->nlocs;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (c->locs[mid] < off) lo = mid + 1; else hi = mid;
    }
    return lo ? c->loc_lines[lo - 1] : 0;
}

static int scan_locs(probe_ctx *c, mh_error *e)
{
    const char *t = c->m->text;
    uint32_t cap = 0;
    for (size_t p = c->f->body_open; p + 5 < c->f->body_close; p++) {
        if (memcmp(t + p, ".loc", 4) || !(t[p + 4] == ' ' || t[p + 4] == '\t') || (p && !isspace((unsigned char)t[p - 1])))
            continue;
        /* .loc FILE LINE COL */
        const char *q = t + p + 4;
        char *endp;
        strtoul(q, &endp, 10);
        if (endp == q) continue;
        unsigned long line = strtoul(endp, &endp, 10);
        if (c->nlocs == cap) {
            cap = cap ? cap * 2 : 64;
            uint32_t *a = realloc(c->locs, cap * sizeof *a), *b = a ? realloc(c->loc_lines, cap * sizeof *b) : NULL;
            if (a) c->locs = a;
            if (b) c->loc_lines = b;
            if (!a || !b) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
        }
        c->locs[c->nlocs] = (uint32_t)p;
        c->loc_lines[c->nlocs++] = (uint32_t)line;
    }
    return 0;
}

/* The instruction at the k-th label `name` of the body (the first after "name:"; k from 0: blocks
 * may each define a label of one name, issue 30), or UINT32_MAX past the last. */
static uint32_t label_insn_k(const probe_ctx *c, const char *name, uint32_t k)
{
    const char *t = c->m->text;
    size_t len = strlen(name);
    if (!len) return UINT32_MAX;
    for (size_t p = c->f->body_open; p + len < c->f->body_close; p++) {
        if (memcmp(t + p, name, len) || t[p + len] != ':') continue;
        char before = p > c->f->body_open ? t[p - 1] : '\n';
        if (!(before == '\n' || before == ' ' || before == '\t' || before == '{' || before == ';' || before == '}')) continue;
        if (k--) continue;
        for (uint32_t i = 0; i < c->f->ncode; i++)
            if (insn_at(c->f, i) > p) return i;
        return c->f->ncode ? c->f->ncode - 1 : UINT32_MAX;
    }
    return UINT32_MAX;
}

static uint32_t label_insn(const probe_ctx *c, const char *name) { return label_insn_k(c, name, 0); }

/* Whether a label `name` of the body is at instruction i (any of the blocks that define one). */
static int label_at(const probe_ctx *c, const char *name, uint32_t i)
{
    uint32_t at;
    for (uint32_t k = 0; (at = label_insn_k(c, name, k)) != UINT32_MAX; k++)
        if (at == i) return 1;
    return 0;
}

/* Whether instruction i's mnemonic starts with prefix, up to a '.' or its end. */
static int mnemonic_is(const mh_ptx_module *m, const mh_ptx_insn *in, const char *prefix)
{
    if (in->text_off == 0 && in->text_end == 0) return 0;
    const char *p = m->text + in->text_off, *end = m->text + in->text_end;
    if (*p == '@') {
        while (p < end && !isspace((unsigned char)*p)) p++;
        while (p < end && isspace((unsigned char)*p)) p++;
    }
    size_t len = strlen(prefix);
    if ((size_t)(end - p) < len || memcmp(p, prefix, len)) return 0;
    char next = p + len < end ? p[len] : ' ';
    return next == '.' || isspace((unsigned char)next) || next == ';' || prefix[len - 1] == '.';
}

/* Records: a region per iteration of loop l (or per whole loop), named id. */
static int loop_region(probe_ctx *c, const nat_loop *l, uint32_t id, int whole, uint32_t rank, const char *pn,
                       mh_error *e)
{
    const mh_ptx_func *f = c->f;
    int rc = 0;
    if (whole) {
        if (l->header == 0)
            return err_at(e, c->m, f->code[0].line, MH_E_PTX_UNSUPPORTED, "probe \"%.100s\": the loop of %s starts at "
                          "its first instruction, so it has no way in to record its begin on", pn, f->name);
        for (uint32_t q = c->g.pred_at[l->header]; !rc && q < c->g.pred_at[l->header + 1]; q++) {
            uint32_t u = c->g.preds[q];
            if (!in_loop(l, u) && c->g.order[u] != UINT32_MAX) rc = begin_on_edge(c, u, l->header, id, rank, e);
        }
    } else rc = add_point(c, l->header, PT_BEFORE, 0, id, rank, e);
    for (uint32_t b = 0; !rc && b < l->nbody; b++) {
        uint32_t u = l->body[b];
        const mh_ptx_insn *in = &f->code[u];
        for (uint32_t j = 0; !rc && j < 2; j++) {
            uint32_t v = c->g.succ[u][j];
            if (v == UINT32_MAX) continue;
            if (!in_loop(l, v) || (!whole && v == l->header)) rc = end_on_edge(c, u, v, id, rank, e);
        }
        /* a guarded exit inside the loop leaves it on its exit path */
        if (!rc && (in->op == MH_OP_RET || in->op == MH_OP_EXIT) && in->guard >= 0)
            rc = add_point(c, u, PT_EXIT, 1, id, rank, e);
    }
    return rc;
}

/* The points of every probe in entry f, appended to c->pts; *matched[k] set for the probes
 * that matched something here. */
static int probe_points(probe_ctx *c, const mh_probe *probes, uint32_t np, char *matched, int kernel_default,
                        mh_error *e)
{
    const mh_ptx_module *m = c->m;
    const mh_ptx_func *f = c->f;
    int rc = 0;
    for (uint32_t k = 0; !rc && k < np + (kernel_default != 0); k++) {
        static const mh_probe kernel_probe = {MH_PROBE_KERNEL, "kernel", NULL, 0, NULL, NULL, NULL, 0, 0};
        const mh_probe *p = k < np ? &probes[k] : &kernel_probe;
        const char *pn = p->name;
        uint32_t id;
        c->probe = k;
        switch (p->kind) {
        case MH_PROBE_KERNEL:
            rc = name_id(c, pn, strlen(pn), &id, e);
            if (!rc) rc = add_point(c, 0, PT_BEFORE, 0, id, RANK_KERNEL, e);
            for (uint32_t i = 0; !rc && i < f->ncode; i++) {
                const mh_ptx_insn *in = &f->code[i];
                int synthetic = in->text_off == 0 && in->text_end == 0;
                if ((in->op != MH_OP_RET && in->op != MH_OP_EXIT) || (synthetic && c->g.order[i] == UINT32_MAX)) continue;
                rc = add_point(c, i, PT_EXIT, 1, id, RANK_KERNEL, e);
            }
            if (k < np) matched[k] = 1;
            break;
        case MH_PROBE_LOOP:
            for (uint32_t li = 0; !rc && li < c->nloops; li++) {
                const nat_loop *l = &c->loops[li];
                if (p->loop && !label_at(c, p->loop, l->header)) continue; /* every block's label of the name */
                uint32_t line = source_line(c, l->header);
                rc = made_name_id(c, "%s@%u", pn, line ? line : f->code[l->header].line, &id, e);
                if (!rc) rc = loop_region(c, l, id, p->per_loop, 10 * l->depth + (p->per_loop ? 2 : 5), pn, e);
                matched[k] = 1;
            }
            if (!rc && p->loop && !matched[k] && label_insn(c, p->loop) != UINT32_MAX)
                rc = err_at(e, m, f->code[label_insn(c, p->loop)].line, MH_E_BAD_ARGUMENT, "probe \"%.100s\": label "
                            "%.100s of %s is not the header of a loop", pn, p->loop, f->name);
            break;
        case MH_PROBE_ROLE:
        case MH_PROBE_AROUND: {
            int spin = !strncmp(p->around, "mbarrier.try_wait", 17) || !strncmp(p->around, "mbarrier.test_wait", 18) ||
                       !strcmp(p->around, "mbarrier");
            char *done = c->nloops ? calloc(c->nloops, 1) : NULL;
            if (c->nloops && !done) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
            if (p->kind == MH_PROBE_ROLE) { /* a role: taken before each match, no region */
                size_t before = c->names->n;
                rc = intern(c->names, c->roles, pn, strlen(pn), &id, e);
                if (!rc && c->names->n > before) c->names->v[c->names->n - 1].role = 1;
                for (uint32_t i = 0; !rc && i < f->ncode; i++) {
                    const mh_ptx_insn *in = &f->code[i];
                    if ((in->mods & MH_MOD_MARKER) || !mnemonic_is(m, in, p->around)) continue;
                    matched[k] = 1;
                    rc = add_point(c, i, PT_BEFORE, PT_ROLE, id, RANK_AROUND, e);
                }
                free(done);
                break;
            }
            rc = name_id(c, pn, strlen(pn), &id, e);
            for (uint32_t i = 0; !rc && i < f->ncode; i++) {
                const mh_ptx_insn *in = &f->code[i];
                if ((in->mods & MH_MOD_MARKER) || !mnemonic_is(m, in, p->around)) continue;
                matched[k] = 1;
                if (in->op == MH_OP_BRA || in->op == MH_OP_RET || in->op == MH_OP_EXIT || in->op == MH_OP_TRAP) {
                    rc = err_at(e, m, in->line, MH_E_BAD_ARGUMENT, "probe \"%.100s\": around = \"%.100s\" matches a "
                                "branch or exit of %s: a region cannot go around one", pn, p->around, f->name);
                    break;
                }
                int waits = spin && (mnemonic_is(m, in, "mbarrier.try_wait") || mnemonic_is(m, in, "mbarrier.test_wait"));
                uint32_t best = UINT32_MAX;
                for (uint32_t li = 0; waits && li < c->nloops; li++)
                    if (in_loop(&c->loops[li], i) && (best == UINT32_MAX || c->loops[li].depth > c->loops[best].depth))
                        best = li;
                if (best != UINT32_MAX) { /* the wait is polled: the region is the loop */
                    if (!done[best]) rc = loop_region(c, &c->loops[best], id, 1, 10 * c->loops[best].depth + 2, pn, e);
                    done[best] = 1;
                    continue;
                }
                rc = add_point(c, i, PT_BEFORE, 0, id, RANK_AROUND, e);
                if (!rc) rc = add_point(c, i, PT_AFTER, 1, id, RANK_AROUND, e);
            }
            free(done);
            break;
        }
        case MH_PROBE_RANGE: {
            uint32_t a = UINT32_MAX, b = UINT32_MAX;
            if (p->from) a = label_insn(c, p->from);
            else
                for (uint32_t i = 0; i < f->ncode && a == UINT32_MAX; i++)
                    if (f->code[i].line >= p->from_line && !(f->code[i].text_off == 0 && f->code[i].text_end == 0)) a = i;
            if (p->to) b = label_insn(c, p->to);
            else
                for (uint32_t i = 0; i < f->ncode && b == UINT32_MAX; i++)
                    if (f->code[i].line > p->to_line || (f->code[i].text_off == 0 && f->code[i].text_end == 0)) b = i;
            if (a == UINT32_MAX || b == UINT32_MAX) break; /* not in this entry */
            const char *twice = p->from && label_insn_k(c, p->from, 1) != UINT32_MAX ? p->from
                                : p->to && label_insn_k(c, p->to, 1) != UINT32_MAX ? p->to : NULL;
            if (twice) { /* labels of one name in several blocks (issue 30): which one is meant? */
                uint32_t l0 = f->code[label_insn_k(c, twice, 0)].line, l1 = f->code[label_insn_k(c, twice, 1)].line;
                rc = err_at(e, m, l1, MH_E_BAD_ARGUMENT, "probe \"%.100s\": label %.100s is defined in more than one "
                            "block of %s (before lines %u and %u): a range needs labels defined once (or lines)", pn,
                            twice, f->name, l0, l1);
                break;
            }
            if (!p->from && (f->code[a].line > p->to_line || (f->code[a].text_off == 0 && f->code[a].text_end == 0)))
                break; /* nothing of the lines is in this entry */
            matched[k] = 1;
            char fa[120], tb[120];
            if (p->from) snprintf(fa, sizeof fa, "%.100s", p->from); else snprintf(fa, sizeof fa, "line %u", p->from_line);
            if (p->to) snprintf(tb, sizeof tb, "%.100s", p->to); else snprintf(tb, sizeof tb, "line %u", p->to_line);
            if (a == b) { /* an empty range: a region of nothing */
                rc = err_at(e, m, f->code[b].line ? f->code[b].line : f->line, MH_E_BAD_ARGUMENT,
                            "probe \"%.100s\": from %s and to %s are the same place in %s: a range holds the code "
                            "from its from up to its to, here none", pn, fa, tb, f->name);
                break;
            }
            if (!dominates(&c->g, a, b)) {
                rc = err_at(e, m, f->code[b].line ? f->code[b].line : f->line, MH_E_BAD_ARGUMENT,
                            "probe \"%.100s\": from %s does not dominate its to %s in %s: some path reaches the to "
                            "without passing the from", pn, fa, tb, f->name);
                break;
            }
            rc = name_id(c, pn, strlen(pn), &id, e);
            if (!rc) rc = add_point(c, a, PT_BEFORE, 0, id, RANK_RANGE, e);
            if (!rc) rc = add_point(c, b, PT_BEFORE, 1, id, RANK_RANGE, e);
            break;
        }
        }
    }
    return rc;
}

/* The message for a probe (probes[k + 1]) that matched nothing in any entry. */
static int unmatched(const mh_ptx_module *m, const mh_probe *p, uint32_t k, mh_error *e)
{
    char what[260];
    if (p->kind == MH_PROBE_AROUND || p->kind == MH_PROBE_ROLE) snprintf(what, sizeof what, "around = \"%.200s\"", p->around);
    else if (p->kind == MH_PROBE_LOOP) snprintf(what, sizeof what, "loop%s%.200s", p->loop ? " = " : " (no natural loop)", p->loop ? p->loop : "");
    else if (p->from || p->to) snprintf(what, sizeof what, "from %.100s to %.100s (labels of one kernel)", p->from ? p->from : "(a line)", p->to ? p->to : "(a line)");
    else snprintf(what, sizeof what, "from line %u to line %u", p->from_line, p->to_line);
    return mh_fail(e, MH_E_BAD_ARGUMENT, "%s: probe \"%.100s\": %s matches nothing in any kernel (probes[%u])", m->path,
                   p->name, what, k + 1);
}

int probes_collect(rewrite *w, const mh_instrument_opts *opts, mh_error *e)
{
    const mh_ptx_module *m = w->m;
    size_t nf = m->nfuncs ? m->nfuncs : 1;
    int rc = 0;
    w->fpts = calloc(nf, sizeof *w->fpts);
    w->fnpts = calloc(nf, sizeof *w->fnpts);
    char *matched = calloc(opts->nprobes + 1, 1);
    if (!w->fpts || !w->fnpts || !matched) rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    for (uint32_t fi = 0; !rc && (opts->nprobes || opts->kernel_probe) && fi < m->nfuncs; fi++) {
        const mh_ptx_func *f = &m->funcs[fi];
        if (!f->is_entry || !f->defined) continue;
        probe_ctx c = {.m = m, .f = f, .names = &w->out->names, .index = &w->index, .roles = &w->roles, .strings = &w->made,
                       .nstrings = &w->nmade};
        rc = cfg_build(&c.g, m, f, e);
        if (rc) break;
        rc = find_loops(&c.g, &c.loops, &c.nloops, e);
        if (!rc) rc = scan_locs(&c, e);
        if (!rc) rc = probe_points(&c, opts->probes, opts->nprobes, matched, 0, e);
        if (!rc && !c.n && opts->kernel_probe && !w->traced[fi]) rc = probe_points(&c, NULL, 0, matched, 1, e);
        w->fpts[fi] = c.pts;
        w->fnpts[fi] = c.n;
        if (c.n) w->traced[fi] = 1;
        cfg_free(&c.g);
        loops_free(c.loops, c.nloops);
        free(c.locs);
        free(c.loc_lines);
    }
    for (uint32_t k = 0; !rc && k < opts->nprobes; k++)
        if (!matched[k]) rc = unmatched(m, &opts->probes[k], k, e);
    free(matched);
    return rc;
}
