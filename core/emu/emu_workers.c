/* emu_workers.c - SMs in parallel within a quantum (issue 33, mgpu.device("emu", {threads = N})).
 *
 * The scheduler (emu_sched.c) advances the device in quanta; within one, every SM with work runs
 * emu_run_sm to the quantum's end.  For a launch whose SMs can be kept apart within a quantum
 * (emu_par_serial_reason: no cooperative launch, strict mode or counting; mbarriers, bulk copies,
 * wgmma, setmaxnreg and clusters are fine), they run on `threads` workers, each with its own copy
 * of the launch's ctx (the running instruction's fields, the allocation cache, wgmma's B cache,
 * its error, printf and warning buffers); an SM's copy queue, accumulator tiles, TMA line list and
 * flows are its own (vsm, emu_memtime.c, emu_flows.c), the deadlock check's quiet rounds summed at
 * the quantum's end.  The SMs go to workers by units: an SM alone, or with clusters the SMs holding
 * one cluster's blocks, run one after another in SM order (make_units).
 * Each unit starts the quantum from the device's counters as they were at its start (instructions,
 * writes, the warned lines) and leaves its own results in its sm_q; at the end they are merged in
 * unit order: counters summed, printf output and warnings appended (a line warned about once, by
 * the first unit in order), the fault of the first unit in order reported.  A warp about to run a strong
 * operation (a global atomic or bulk reduction, a fence, a .volatile/.relaxed/.acquire/.release
 * global access) holds its SM; after the merge the held SMs go on one at a time in (time, SM)
 * order to the quantum's end.  One worker runs the same steps in the same order, so any number
 * gives the same results. */
#include "emu/emu_internal.h"
#include "emu/emu_memtime.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct {                /* one unit's results of the quantum (an SM, or the SMs a cluster links) */
    uint64_t insns, tinsns, progress, writes;
    uint64_t quiet_rounds;      /* the deadlock check's rounds it added since its last write (or since the start) */
    int fault;
    mh_error err;
    mh_outbuf out, warn;
    uint32_t wl[EMU_WARN_LINES], nwl; /* the lines it warned about (in warn's order) */
} sm_q;

typedef struct emu_worker {
    ctx c;                      /* its copy of the launch's ctx */
    const alloc **icache;       /* its allocation cache, kept across quanta */
    const alloc *last;
    struct emu_wg_b *wgb;       /* its wgmma B cache (emu_mma.c), kept across quanta */
    mh_error e;
    pthread_t th;
    int started;
    struct emu_par *p;
} emu_worker;

struct emu_par {
    uint32_t nworkers;
    emu_worker *w;
    sm_q *q;                    /* per unit */
    uint32_t *order;            /* the SMs of this quantum by unit, each unit's in SM order */
    uint32_t *ustart;           /* unit k's SMs: order[ustart[k] .. ustart[k + 1]) (units by their first SM) */
    uint32_t *link;             /* per SM: union-find parent (SMs holding blocks of one cluster; the lowest is the root) */
    uint8_t *seen;              /* per SM: a root whose unit is made (make_units) */
    uint32_t nunits;
    uint64_t limit;
    ctx base;                   /* the launch's ctx at the quantum's start */
    atomic_uint next;           /* the next unit a worker takes */
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    uint64_t gen;               /* quanta started */
    uint32_t busy;              /* workers still in this quantum */
    int quit;
};

/* The statement's text holds `word`. */
static int insn_says(const ctx *c, const mh_ptx_insn *in, const char *word)
{
    if (in->text_end <= in->text_off || !c->m->text) return 0;
    size_t n = strlen(word), len = in->text_end - in->text_off;
    const char *s = c->m->text + in->text_off;
    for (size_t i = 0; i + n <= len; i++)
        if (!memcmp(s + i, word, n)) return 1;
    return 0;
}

/* Whether instruction `in` is a strong operation another SM may see within a quantum: a global (or
 * generic) atomic or reduction, a fence wider than the block, a .volatile/.relaxed/.acquire/.release
 * access outside shared and local memory. */
static int strong_op(const ctx *c, const mh_ptx_insn *in)
{
    switch (in->op) {
    case MH_OP_ATOM:
    case MH_OP_RED: return in->space != MH_SP_SHARED || insn_says(c, in, "cluster");
    case MH_OP_MEMBAR: /* a proxy fence or mbarrier_init's orders the thread's own accesses (emu's copies are made
                        * at issue), so neither is seen by another SM */
        return !insn_says(c, in, "cp.async") && !insn_says(c, in, ".cta") && !insn_says(c, in, ".proxy") &&
               !insn_says(c, in, "mbarrier_init");
    case MH_OP_TMA: /* a bulk reduction into global memory: atomic additions other SMs may make too */
        return insn_says(c, in, "reduce") && insn_says(c, in, ".global");
    case MH_OP_LD:
    case MH_OP_ST:
        return in->space != MH_SP_SHARED && in->space != MH_SP_LOCAL && in->space != MH_SP_PARAM &&
               (insn_says(c, in, ".volatile") || insn_says(c, in, ".relaxed") || insn_says(c, in, ".acquire") ||
                insn_says(c, in, ".release") || insn_says(c, in, ".mmio"));
    default: return 0;
    }
}

const char *emu_par_serial_reason(const ctx *c)
{
    if (c->slow) return "strict mode or counting";
    if (c->hz) return "hazard checks"; /* (flows are kept per SM: emu_flows.c; region checks count with
                                         * atomic additions) */
    if (c->grid_ws) return "a cooperative launch";
    /* wgmma and setmaxnreg (tiles per SM, the B cache per worker, the pool per block), mbarriers and
     * bulk copies (copy queues, TMA line lists and flows per SM) and clusters (the SMs holding a
     * cluster's blocks run as one unit, emu_par_quantum) run on workers */
    for (uint32_t pc = 0; pc < c->ncode; pc++) {
        const mh_ptx_insn *in = &c->code[pc];
        switch (in->op) {
        case MH_OP_OPAQUE: return "an undecoded instruction";
        default: break;
        }
    }
    return NULL;
}

/* Unit u's SMs through the quantum on worker w, one after another in SM order (a cluster's peers see
 * each other's writes and counters as one worker running them in turn would), its results in its sm_q. */
static void run_one(emu_worker *w, uint32_t u)
{
    struct emu_par *p = w->p;
    ctx *c = &w->c;
    sm_q *q = &p->q[u];
    c->warp_insns = p->base.warp_insns;
    c->thread_insns = 0;
    c->progress = 0;
    c->writes = p->base.writes;
    c->quiet_writes = p->base.quiet_writes;
    c->quiet_rounds = p->base.quiet_rounds;
    c->cb = NULL;
    c->faulted = 0;
    c->out.n = 0;
    c->out.dropped = 0;
    c->warn.n = 0;
    c->nwarn_lines = p->base.nwarn_lines;
    memcpy(c->warn_lines, p->base.warn_lines, sizeof c->warn_lines);
    mh_error_clear(c->e);
    int rc = 0;
    for (uint32_t i = p->ustart[u]; i < p->ustart[u + 1] && !rc; i++) {
        c->cb = NULL;
        rc = emu_run_sm(c, &c->sms[p->order[i]], p->limit);
    }
    q->insns = c->warp_insns - p->base.warp_insns;
    q->tinsns = c->thread_insns;
    q->progress = c->progress;
    q->writes = c->writes - p->base.writes;
    q->quiet_rounds = q->writes ? 0 : c->quiet_writes != p->base.quiet_writes ? c->quiet_rounds : c->quiet_rounds - p->base.quiet_rounds;
    q->fault = rc != 0;
    if (rc) q->err = *c->e;
    q->out.n = q->warn.n = 0;
    q->out.dropped = c->out.dropped;
    if (c->out.n) mh_outbuf_add(&q->out, c->out.p, c->out.n);
    if (c->warn.n) mh_outbuf_add(&q->warn, c->warn.p, c->warn.n);
    q->nwl = 0;
    for (uint32_t i = p->base.nwarn_lines; i < c->nwarn_lines; i++) q->wl[q->nwl++] = c->warn_lines[i];
}

/* Worker w's share of the quantum: SMs taken one at a time until none is left. */
static void work(emu_worker *w)
{
    struct emu_par *p = w->p;
    w->c = p->base;
    w->c.icache = w->icache;
    w->c.last = w->last;
    w->c.wgb = w->wgb;
    w->c.e = &w->e;
    w->c.out = (mh_outbuf){0};
    w->c.warn = (mh_outbuf){0};
    for (;;) {
        uint32_t i = atomic_fetch_add(&p->next, 1);
        if (i >= p->nunits) break;
        run_one(w, i);
    }
    w->last = w->c.last;
    w->wgb = w->c.wgb;
    free(w->c.out.p);
    free(w->c.warn.p);
}

static void *worker_main(void *arg)
{
    emu_worker *w = arg;
    struct emu_par *p = w->p;
    uint64_t seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->quit && p->gen == seen) pthread_cond_wait(&p->go, &p->mu);
        if (p->quit) break;
        seen = p->gen;
        pthread_mutex_unlock(&p->mu);
        work(w);
        pthread_mutex_lock(&p->mu);
        if (--p->busy == 0) pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

int emu_par_start(ctx *c, uint32_t threads)
{
    struct emu_par *p = calloc(1, sizeof *p);
    if (!p) return -1;
    c->par = p;
    if (threads > c->nsms) threads = c->nsms ? c->nsms : 1;
    p->nworkers = threads ? threads : 1;
    p->w = calloc(p->nworkers, sizeof *p->w);
    uint32_t n = c->nsms ? c->nsms : 1;
    p->q = calloc(n, sizeof *p->q);
    p->order = calloc(n, sizeof *p->order);
    p->ustart = calloc(n + 1, sizeof *p->ustart);
    p->link = calloc(n, sizeof *p->link);
    p->seen = calloc(n, 1);
    if (!p->w || !p->q || !p->order || !p->ustart || !p->link || !p->seen) return -1;
    /* strong operations: a warp reaching one holds its SM until the quantum's serial part (c->hold) */
    if (!(c->strong = calloc(c->ncode ? c->ncode : 1, 1))) return -1;
    for (uint32_t pc = 0; pc < c->ncode; pc++) c->strong[pc] = (uint8_t)strong_op(c, &c->code[pc]);
    c->hold = 1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    for (uint32_t i = 0; i < p->nworkers; i++) {
        emu_worker *w = &p->w[i];
        w->p = p;
        if (!(w->icache = calloc(c->ncode ? c->ncode : 1, sizeof *w->icache))) return -1;
    }
    for (uint32_t i = 1; i < p->nworkers; i++) { /* worker 0 is the launching thread */
        if (pthread_create(&p->w[i].th, NULL, worker_main, &p->w[i])) {
            p->nworkers = i; /* fewer workers: the same results */
            break;
        }
        p->w[i].started = 1;
    }
    return 0;
}

uint32_t emu_par_workers(const ctx *c) { return c->par ? c->par->nworkers : 1; }

void emu_par_stop(ctx *c)
{
    struct emu_par *p = c->par;
    if (!p) return;
    if (p->w) {
        pthread_mutex_lock(&p->mu);
        p->quit = 1;
        pthread_cond_broadcast(&p->go);
        pthread_mutex_unlock(&p->mu);
        for (uint32_t i = 1; i < p->nworkers; i++)
            if (p->w[i].started) pthread_join(p->w[i].th, NULL);
        for (uint32_t i = 0; i < p->nworkers; i++) {
            free(p->w[i].icache);
            free(p->w[i].wgb);
        }
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->go);
        pthread_cond_destroy(&p->done);
    }
    for (uint32_t i = 0; p->q && i < (c->nsms ? c->nsms : 1); i++) {
        free(p->q[i].out.p);
        free(p->q[i].warn.p);
    }
    free(p->q);
    free(p->order);
    free(p->ustart);
    free(p->link);
    free(p->seen);
    free(p->w);
    free(p);
    free(c->strong);
    c->strong = NULL;
    c->hold = 0;
    c->par = NULL;
}

/* Appends SM q's warnings to the launch's, a source line once (the first SM's, in SM order). */
static void merge_warnings(ctx *c, const sm_q *q)
{
    const char *s = q->warn.p;
    for (uint32_t i = 0; i < q->nwl && s; i++) {
        const char *e = memchr(s, '\n', q->warn.n - (size_t)(s - q->warn.p));
        size_t n = e ? (size_t)(e - s) + 1 : q->warn.n - (size_t)(s - q->warn.p);
        int seen = 0;
        for (uint32_t k = 0; k < c->nwarn_lines; k++) seen |= c->warn_lines[k] == q->wl[i];
        if (!seen && c->nwarn_lines < EMU_WARN_LINES) {
            c->warn_lines[c->nwarn_lines++] = q->wl[i];
            mh_outbuf_add(&c->warn, s, n);
        }
        s = e ? e + 1 : NULL;
    }
}

static uint32_t root(uint32_t *link, uint32_t i)
{
    while (link[i] != i) i = link[i] = link[link[i]];
    return i;
}

/* The quantum's units: without clusters each SM of run[] alone; with them, the SMs that hold blocks of
 * one cluster (linked through the blocks resident now: a peer's shared memory, mbarriers, copy queue,
 * cluster barrier and slots) together, so that what one writes into another is never written while
 * the other runs on another worker.  Units in the order of their first SM, each's SMs in SM order. */
static void make_units(ctx *c, struct emu_par *p, const uint32_t *run, uint32_t nrun)
{
    p->nunits = 0;
    if (c->cluster_n <= 1) {
        for (uint32_t i = 0; i < nrun; i++) p->order[i] = run[i], p->ustart[i] = i;
        p->nunits = nrun;
        p->ustart[nrun] = nrun;
        return;
    }
    for (uint32_t i = 0; i < c->nsms; i++) p->link[i] = i;
    for (uint32_t i = 0; i < c->nsms; i++)
        for (uint32_t s = 0; s < c->resident; s++) {
            const blk *b = &c->sms[i].blks[s];
            if (!b->busy) continue;
            for (uint32_t r = 0; r < c->cluster_n; r++) {
                uint32_t x = root(p->link, i), y = root(p->link, b->peer[r]->sm->id);
                if (x != y) p->link[x > y ? x : y] = x < y ? x : y; /* the lower SM is the root */
            }
        }
    /* run[] is in SM order: a unit's first SM in run[] starts it */
    memset(p->seen, 0, c->nsms);
    uint32_t k = 0;
    for (uint32_t i = 0; i < nrun; i++) {
        uint32_t r = root(p->link, run[i]);
        if (p->seen[r]) continue;
        p->seen[r] = 1;
        p->ustart[p->nunits++] = k;
        for (uint32_t j = i; j < nrun; j++)
            if (root(p->link, run[j]) == r) p->order[k++] = run[j];
    }
    p->ustart[p->nunits] = k;
}

int emu_par_quantum(ctx *c, const uint32_t *run, uint32_t nrun, uint64_t limit)
{
    struct emu_par *p = c->par;
    p->base = *c;
    make_units(c, p, run, nrun);
    p->limit = limit;
    atomic_store(&p->next, 0);
    uint32_t helpers = p->nworkers - 1, nunits = p->nunits;
    if (helpers > nunits - 1) helpers = nunits ? nunits - 1 : 0; /* one unit needs no other worker */
    if (helpers) {
        pthread_mutex_lock(&p->mu);
        p->busy = p->nworkers - 1;
        p->gen++;
        pthread_cond_broadcast(&p->go);
        pthread_mutex_unlock(&p->mu);
    }
    work(&p->w[0]);
    if (helpers) {
        pthread_mutex_lock(&p->mu);
        while (p->busy) pthread_cond_wait(&p->done, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
    /* the units' results in their order; the deadlock check's quiet rounds: the units' added to the
     * device's while nothing was written, else none (a write anywhere resets them) */
    c->cb = NULL;
    uint64_t quiet = 0;
    for (uint32_t i = 0; i < nunits; i++) quiet += p->q[i].quiet_rounds;
    for (uint32_t i = 0; i < nunits; i++) {
        sm_q *q = &p->q[i];
        c->warp_insns += q->insns;
        c->thread_insns += q->tinsns;
        c->progress += q->progress;
        c->writes += q->writes;
        if (q->out.n) mh_outbuf_add(&c->out, q->out.p, q->out.n);
        if (q->out.dropped) c->out.dropped = 1;
        if (q->nwl) merge_warnings(c, q);
        if (q->fault) {
            *c->e = q->err;
            c->faulted = 1;
            return -1;
        }
    }
    if (c->writes != p->base.writes) {
        c->quiet_writes = c->writes;
        c->quiet_rounds = 0;
    } else
        c->quiet_rounds += quiet;
    /* the serial part: SMs held at a strong operation go on here, one at a time in (time, SM) order,
     * each to the quantum's end (further strong operations included) */
    for (;;) {
        vsm *h = NULL;
        for (uint32_t i = 0; i < nrun; i++) {
            vsm *sm = &c->sms[run[i]];
            if (sm->held && (!h || sm->next < h->next)) h = sm;
        }
        if (!h) break;
        h->held = 0;
        c->hold = 0;
        int rc = emu_run_sm(c, h, limit);
        c->hold = 1;
        if (rc) {
            for (uint32_t i = 0; i < nrun; i++) c->sms[run[i]].held = 0;
            return -1;
        }
    }
    c->cb = NULL;
    return 0;
}
