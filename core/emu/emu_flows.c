/* emu_flows.c - what released a wait (issue 34; a launch with a trace asks for it): the arrive or
 * TMA completion that completed each mbarrier phase is kept per barrier, and a warp whose wait on
 * that barrier had found its phase incomplete and now finds it complete gets a flow from it (one
 * per warp and release; a wait that passes at once released nothing).  A TMA completion's flow
 * starts where the copy was issued (the thread that issued it, at its issue): the landing has no
 * thread.  The dump draws them as Chrome trace flow events (core/trace/flows.h).  Kept per SM
 * and gathered in SM order at each quantum's end, so SMs on several workers record the same list:
 * a barrier's last completion in the record of the SM whose block holds it (a cluster peer's
 * arrive writes there: the peers' SMs run on one worker, emu_workers.c), the flows in the record
 * of the waiting warp's SM. */
#include "emu/emu_internal.h"

#include <stdlib.h>

typedef struct {
    const unsigned char *p;  /* the mbarrier (host address of its 8 bytes) */
    mh_trace_flow src;       /* its last completion: the src_* half */
} last_done;

/* One SM's: the last completions of the barriers in its blocks' shared memory and the flows its
 * warps' waits took this quantum, appended to the launch's in SM order at the quantum's end
 * (emu_flows_quantum_end), so the list is the same on any number of workers. */
typedef struct {
    last_done *last;
    uint32_t nlast, cap_last;
    mh_trace_flow *v;
    uint32_t n, cap;
    int has_src;             /* a TMA landing is completing: its issue is the source */
    mh_trace_flow src;
} fsm;

struct emu_flows {
    fsm *s;                  /* per SM (emu_flows_sms) */
    uint32_t ns;
    mh_trace_flow *v;
    uint32_t n, cap;
};

int emu_flows_start(ctx *c)
{
    c->flows = calloc(1, sizeof *c->flows);
    return c->flows ? 0 : -1;
}

int emu_flows_sms(ctx *c)
{
    if (!c->flows) return 0;
    c->flows->ns = c->nsms ? c->nsms : 1;
    c->flows->s = calloc(c->flows->ns, sizeof *c->flows->s);
    return c->flows->s ? 0 : -1;
}

static fsm *here(ctx *c)
{
    struct emu_flows *f = c->flows;
    uint32_t i = !c->cs ? 0 : c->cs->id;
    return &f->s[i < f->ns ? i : 0];
}

/* The record of the SM whose block holds the mbarrier at p: warp w's block's, or a cluster peer's. */
static fsm *holder(ctx *c, const warp *w, const unsigned char *p)
{
    struct emu_flows *f = c->flows;
    const blk *b = w->b;
    for (uint32_t r = 0; r < c->cluster_n && r < MH_EMU_MAX_CLUSTER; r++) {
        const blk *x = b->peer[r];
        if (x && x->shared && p >= x->shared && p < x->shared + c->shared_size) {
            b = x;
            break;
        }
    }
    return &f->s[b->sm->id < f->ns ? b->sm->id : 0];
}

int emu_flows_quantum_end(ctx *c)
{
    struct emu_flows *f = c->flows;
    if (!f || !f->s) return 0;
    for (uint32_t i = 0; i < f->ns; i++) {
        fsm *s = &f->s[i];
        if (!s->n) continue;
        if (f->n + s->n > f->cap) {
            uint32_t cap = f->cap ? f->cap : 64;
            while (cap < f->n + s->n) cap *= 2;
            mh_trace_flow *n = realloc(f->v, cap * sizeof *n);
            if (!n) {
                mh_fail(c->e, MH_E_NO_MEMORY, "emu: out of memory for the trace's flows");
                c->faulted = 1;
                return -1;
            }
            f->v = n;
            f->cap = cap;
        }
        memcpy(f->v + f->n, s->v, s->n * sizeof *s->v);
        f->n += s->n;
        s->n = 0;
    }
    return 0;
}

void emu_flows_take(ctx *c, mh_trace_flow **v, uint32_t *n)
{
    *v = NULL;
    *n = 0;
    if (!c->flows) return;
    *v = c->flows->v;
    *n = c->flows->n;
    c->flows->v = NULL;
}

void emu_flows_free(ctx *c)
{
    if (!c->flows) return;
    for (uint32_t i = 0; c->flows->s && i < c->flows->ns; i++) {
        free(c->flows->s[i].last);
        free(c->flows->s[i].v);
    }
    free(c->flows->s);
    free(c->flows->v);
    free(c->flows);
    c->flows = NULL;
}

static void *oom(ctx *c)
{
    mh_fail(c->e, MH_E_NO_MEMORY, "emu: out of memory for the trace's flows");
    c->faulted = 1;
    return NULL;
}

void emu_flows_tma_source(ctx *c, const tma_done *d)
{
    fsm *f = here(c);
    f->has_src = d != NULL;
    if (!d) return;
    f->src.kind = MH_FLOW_TMA;
    memcpy(f->src.src_block, d->ictaid, sizeof d->ictaid);
    f->src.src_thread = d->ithread;
    f->src.src_clock = d->iclock;
}

void emu_flows_complete(ctx *c, const warp *w, int lane, const unsigned char *p)
{
    fsm *run = here(c), *f = holder(c, w, p);
    mh_trace_flow s;
    if (run->has_src) {
        s = run->src;
    } else {
        memset(&s, 0, sizeof s);
        s.kind = MH_FLOW_ARRIVE;
        memcpy(s.src_block, w->b->ctaid, sizeof s.src_block);
        s.src_thread = w->index * WARP + (uint32_t)lane;
        s.src_clock = w->b->sm->clock0 + c->now;
    }
    for (uint32_t i = 0; i < f->nlast; i++)
        if (f->last[i].p == p) {
            f->last[i].src = s;
            return;
        }
    if (f->nlast == f->cap_last) {
        uint32_t cap = f->cap_last ? 2 * f->cap_last : 16;
        last_done *n = realloc(f->last, cap * sizeof *n);
        if (!n) { oom(c); return; }
        f->last = n;
        f->cap_last = cap;
    }
    f->last[f->nlast++] = (last_done){p, s};
}

void emu_flows_wait(ctx *c, warp *w, int lane, const unsigned char *p, int done)
{
    fsm *f = here(c), *h = holder(c, w, p);
    if (!done) {
        w->fl_wait = p;
        return;
    }
    if (w->fl_wait != p) return; /* passed at once, or another lane of the warp took the flow */
    w->fl_wait = NULL;
    for (uint32_t i = 0; i < h->nlast; i++) {
        if (h->last[i].p != p) continue;
        if (f->n == f->cap) {
            uint32_t cap = f->cap ? 2 * f->cap : 64;
            mh_trace_flow *n = realloc(f->v, cap * sizeof *n);
            if (!n) { oom(c); return; }
            f->v = n;
            f->cap = cap;
        }
        mh_trace_flow x = h->last[i].src;
        memcpy(x.dst_block, w->b->ctaid, sizeof x.dst_block);
        x.dst_thread = w->index * WARP + (uint32_t)lane;
        x.dst_clock = w->b->sm->clock0 + c->now;
        f->v[f->n++] = x;
        return;
    }
}
