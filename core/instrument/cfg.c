/* cfg.c - a function's control-flow graph at instruction level: successors and predecessors,
 * the reverse postorder, dominators (Cooper, Harvey and Kennedy's iteration over the reverse
 * postorder) and natural loops (a back edge u -> h where h dominates u; the loop is h and what
 * reaches u without passing h; loops with one header are one loop).  The probes use them. */
#include "instrument/rewrite.h"

#include <stdlib.h>
#include <string.h>

void cfg_free(cfg *g)
{
    free(g->succ);
    free(g->pred_at);
    free(g->preds);
    free(g->rpo);
    free(g->order);
    free(g->idom);
}

int cfg_build(cfg *g, const mh_ptx_module *m, const mh_ptx_func *f, mh_error *e)
{
    memset(g, 0, sizeof *g);
    g->m = m;
    g->f = f;
    uint32_t n = g->n = f->ncode;
    g->succ = malloc((n ? n : 1) * sizeof *g->succ);
    g->pred_at = calloc((size_t)n + 2, sizeof *g->pred_at);
    g->preds = malloc(((size_t)n * 2 + 1) * sizeof *g->preds);
    g->rpo = malloc((n ? n : 1) * sizeof *g->rpo);
    g->order = malloc((n ? n : 1) * sizeof *g->order);
    g->idom = malloc((n ? n : 1) * sizeof *g->idom);
    uint32_t *stack = malloc((n ? n : 1) * sizeof *stack), *next = calloc(n ? n : 1, sizeof *next);
    if (!g->succ || !g->pred_at || !g->preds || !g->rpo || !g->order || !g->idom || !stack || !next) {
        free(stack);
        free(next);
        cfg_free(g);
        return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    }
    for (uint32_t i = 0; i < n; i++) {
        const mh_ptx_insn *in = &f->code[i];
        int uncond_exit = (in->op == MH_OP_RET || in->op == MH_OP_EXIT || in->op == MH_OP_TRAP) && in->guard < 0;
        g->succ[i][0] = g->succ[i][1] = UINT32_MAX;
        uint32_t k = 0;
        if (in->op == MH_OP_BRA) g->succ[i][k++] = in->o[0].reg;
        if (!uncond_exit && !(in->op == MH_OP_BRA && in->guard < 0) && i + 1 < n &&
            !(k && g->succ[i][0] == i + 1))
            g->succ[i][k++] = i + 1;
        for (uint32_t j = 0; j < k; j++) g->pred_at[g->succ[i][j] + 1]++;
    }
    for (uint32_t i = 0; i < n; i++) g->pred_at[i + 1] += g->pred_at[i];
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < 2; j++)
            if (g->succ[i][j] != UINT32_MAX) {
                uint32_t v = g->succ[i][j];
                g->preds[g->pred_at[v] + next[v]++] = i;
            }
    /* postorder by an iterative DFS from 0, then reversed */
    for (uint32_t i = 0; i < n; i++) g->order[i] = UINT32_MAX, next[i] = 0;
    uint32_t sp = 0, npost = 0;
    if (n) {
        stack[sp++] = 0;
        g->order[0] = 0; /* on the stack */
    }
    while (sp) {
        uint32_t u = stack[sp - 1];
        if (next[u] < 2) {
            uint32_t v = g->succ[u][next[u]++];
            if (v != UINT32_MAX && g->order[v] == UINT32_MAX) {
                g->order[v] = 0;
                stack[sp++] = v;
            }
            continue;
        }
        g->rpo[npost++] = u;
        sp--;
    }
    for (uint32_t i = 0; i < npost / 2; i++) {
        uint32_t t = g->rpo[i];
        g->rpo[i] = g->rpo[npost - 1 - i];
        g->rpo[npost - 1 - i] = t;
    }
    g->nreach = npost;
    for (uint32_t i = 0; i < n; i++) g->order[i] = UINT32_MAX, g->idom[i] = UINT32_MAX;
    for (uint32_t i = 0; i < npost; i++) g->order[g->rpo[i]] = i;
    if (n) g->idom[0] = 0;
    for (int changed = 1; changed && n;) {
        changed = 0;
        for (uint32_t r = 1; r < npost; r++) {
            uint32_t b = g->rpo[r], nd = UINT32_MAX;
            for (uint32_t q = g->pred_at[b]; q < g->pred_at[b + 1]; q++) {
                uint32_t p = g->preds[q];
                if (g->idom[p] == UINT32_MAX) continue;
                if (nd == UINT32_MAX) { nd = p; continue; }
                uint32_t x = p, y = nd;
                while (x != y) {
                    while (g->order[x] > g->order[y]) x = g->idom[x];
                    while (g->order[y] > g->order[x]) y = g->idom[y];
                }
                nd = x;
            }
            if (nd != UINT32_MAX && g->idom[b] != nd) g->idom[b] = nd, changed = 1;
        }
    }
    free(stack);
    free(next);
    return 0;
}

int dominates(const cfg *g, uint32_t a, uint32_t b)
{
    if (g->order[a] == UINT32_MAX || g->order[b] == UINT32_MAX) return 0;
    /* a dominator comes first in reverse postorder: the forward edges of a long straight line
     * are answered here, not by a walk to the entry (issue 25: dev:load of a kernel with 10,000
     * markers spent 1 s in that walk, quadratic in the instructions) */
    if (g->order[a] > g->order[b]) return 0;
    while (b != a && b != 0) b = g->idom[b];
    return b == a;
}

int in_loop(const nat_loop *l, uint32_t v)
{
    uint32_t lo = 0, hi = l->nbody;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (l->body[mid] == v) return 1;
        if (l->body[mid] < v) lo = mid + 1; else hi = mid;
    }
    return 0;
}

static int by_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

void loops_free(nat_loop *L, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) free(L[i].body);
    free(L);
}

int find_loops(const cfg *g, nat_loop **out, uint32_t *nout, mh_error *e)
{
    uint32_t n = g->n, nl = 0;
    nat_loop *L = NULL;
    uint32_t *stamp = malloc((n ? n : 1) * sizeof *stamp), *work = malloc((n ? n : 1) * sizeof *work);
    int *loop_of = malloc((n ? n : 1) * sizeof *loop_of);
    int rc = 0;
    if (!stamp || !work || !loop_of) rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    for (uint32_t i = 0; !rc && i < n; i++) stamp[i] = UINT32_MAX, loop_of[i] = -1;
    for (uint32_t r = 0; !rc && r < g->nreach; r++) {
        uint32_t u = g->rpo[r];
        for (uint32_t j = 0; !rc && j < 2; j++) {
            uint32_t h = g->succ[u][j];
            if (h == UINT32_MAX || !dominates(g, h, u)) continue;
            /* a back edge u -> h: h's loop gets what reaches u without passing h */
            if (loop_of[h] < 0) {
                nat_loop *nv = realloc(L, (nl + 1) * sizeof *nv);
                if (!nv) { rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory"); break; }
                L = nv;
                L[nl] = (nat_loop){h, NULL, 0, 0};
                loop_of[h] = (int)nl++;
            }
            nat_loop *l = &L[loop_of[h]];
            uint32_t id = (uint32_t)loop_of[h], nw = 0;
            for (uint32_t q = 0; q < l->nbody; q++) stamp[l->body[q]] = id;
            uint32_t cap = l->nbody + 16;
            uint32_t *nb = realloc(l->body, cap * sizeof *nb);
            if (!nb) { rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory"); break; }
            l->body = nb;
            if (stamp[h] != id) stamp[h] = id, l->body[l->nbody++] = h;
            if (stamp[u] != id) stamp[u] = id, l->body[l->nbody++] = u, work[nw++] = u;
            while (nw && !rc) {
                uint32_t v = work[--nw];
                for (uint32_t q = g->pred_at[v]; q < g->pred_at[v + 1]; q++) {
                    uint32_t p = g->preds[q];
                    if (stamp[p] == id || g->order[p] == UINT32_MAX) continue;
                    stamp[p] = id;
                    if (l->nbody == cap) {
                        cap *= 2;
                        nb = realloc(l->body, cap * sizeof *nb);
                        if (!nb) { rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory"); break; }
                        l->body = nb;
                    }
                    l->body[l->nbody++] = p;
                    work[nw++] = p;
                }
            }
            /* stamps of this loop stay: the next back edge to h adds to the same body (ids are
             * unique per loop, so another loop's stamps never collide) */
        }
    }
    for (uint32_t i = 0; !rc && i < nl; i++) qsort(L[i].body, L[i].nbody, sizeof *L[i].body, by_u32);
    for (uint32_t i = 0; !rc && i < nl; i++)
        for (uint32_t j = 0; j < nl; j++) L[j].depth += in_loop(&L[i], L[j].header);
    if (!rc && nl > 1) {
        /* in order of their headers */
        for (uint32_t i = 1; i < nl; i++)
            for (uint32_t j = i; j > 0 && L[j - 1].header > L[j].header; j--) {
                nat_loop t = L[j];
                L[j] = L[j - 1];
                L[j - 1] = t;
            }
    }
    free(stamp);
    free(work);
    free(loop_of);
    if (rc) {
        loops_free(L, nl);
        return rc;
    }
    *out = L;
    *nout = nl;
    return 0;
}
