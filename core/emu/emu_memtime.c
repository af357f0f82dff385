/* emu_memtime.c - the memory hierarchy and the tensor cores in virtual time.
 *
 * Caches: an L1 per SM (4-way, 128-byte lines; what the resident blocks' shared memory leaves
 * of the model's L1 + shared bytes) for loads but ld.cg's (the PTX ISA's "cache at global level":
 * L2 only, EMU_MT_LD_CG), and the device's L2 (16-way, 128-byte lines,
 * the model's size, sets picked by a hash of the line as a GPU's slices are) for everything.
 * Both start empty at each launch (deterministic; a GPU's L2 may still hold an earlier
 * launch's data: emu's "hot" equals "cold").  Stores allocate in L2, not in L1; the HBM's
 * bandwidth is taken for every byte stored, when it is stored, but the L2 is written back: a
 * store waits for the HBM only beyond the model's l2_dirty_frac of the L2 still to be written (no
 * dirty line is tracked: the bytes are written back, in time, as they are stored).
 *
 * Bandwidths: the L2's and the HBM's are the device's, shared by all SMs.  emu runs SMs one
 * after another in turns of a few hundred cycles, so a shared resource cannot be a single
 * "free at" cycle (an SM behind in time would queue behind one ahead).  Each is a ring of
 * 64-cycle windows holding the bytes served in them: a transfer takes the room left from its
 * window on, and ends when its last byte is served; under the bandwidth, transfers in the same
 * windows do not delay each other whatever order the SMs ran in.  An SM's own path to L2 (the
 * model's port bytes a cycle) and its TMA unit are a cycle counter each, as the L1 pipe is.
 *
 * Latency: an access waits for the level that serves its farthest line (L1, L2 or HBM), plus
 * the L2's loaded latency (an M/D/1 queue's wait at the L2's recent utilisation: l2_load_wait),
 * plus the queueing above.  Loads and atomics keep their warp that long (outside the register
 * scoreboard: a warp's independent loads do not overlap); stores and cp.async only the queueing.
 *
 * SMs in parallel (issue 33, threads = N): within a quantum each SM sees the L2's tags and the
 * bandwidth windows as they were at the quantum's start plus its own changes (struct mt_view);
 * the changes are applied at the quantum's end (emu_mt_quantum_end) SM by SM in SM number order,
 * so the times do not depend on which SM ran first or on which worker.
 *
 * Tensor cores: one per sub-partition (warp slot % 4), shared by the warps on it: an operation
 * starts when it is free and takes macs / (the model's rate for its type) cycles. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "emu/emu_memtime.h"
#include "emu/emu_model.h"
#include "frontend/ptx_mma.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define LINE_SHIFT 7
#define WIN_SHIFT 6                 /* 64-cycle windows */
#define RING 16384                  /* windows a bandwidth remembers (1M cycles) */
#define L2_WAYS 16
#define L1_WAYS 4
#define MAX_TOUCH 4096              /* lines a TMA copy records (a 256 x 256 box of 4 bytes: 2048) */

typedef struct {
    double rate;                    /* bytes a cycle */
    uint64_t first_free;            /* every window from the last take's start to here is full */
    uint64_t tag[RING];
    double used[RING];
} bw_ring;

typedef struct { uint64_t w; double bytes; } bw_add; /* a window's bytes an SM took this quantum */
/* A set of W ways, field by field (a lookup reads only the tags: 2 CPU cache lines of an L2 set,
 * 1 of an L1 set, instead of 6 and 2 as an array of ways): the tags (line + 1, 0: empty), then (L1)
 * the access counter when each was last used, or (L2) the cycle its data is there (a miss in flight
 * until then).  An L2 set's recency is one word beside, in l2_order (l2_to_front): the ways' 8-byte
 * access counters were two more CPU cache lines for each access the quantum's end replays.  Sets
 * start on 64-byte boundaries. */
#define L1_SET (2 * L1_WAYS)        /* uint64_t words of an L1 set: tags, used */
#define L2_SET (2 * L2_WAYS)        /* of an L2 set: tags, ready */
#define ORDER_EMPTY 0x0123456789abcdefull /* a fresh L2 set's l2_order: way 15 first, way 0 last */

/* One SM's changes to the shared state in the current quantum (applied at its end): its L2
 * accesses in order (a read miss with the HBM bytes it took and when), the lines among them
 * (line + 1 -> the ready cycle it saw: a hash), and the bytes it took from each bandwidth's windows. */
typedef struct {
    struct { uint64_t line, ready, at; double fetched; uint32_t set; } *log; /* set: the line's L2 set */
    uint32_t nlog, cap_log;
    uint64_t *hkey, *hval;          /* line + 1 (0: empty), ready */
    uint32_t hcap, hn, hfree;       /* hfree: the empty slot view_line's last miss ended at */
    bw_add *add[2];                 /* [0] the L2's bandwidth, [1] the HBM's */
    uint32_t nadd[2], cap_add[2];
    uint64_t l1tick;                /* its L1's LRU clock */
    uint64_t *touch;                /* the lines of the TMA copy it is issuing (MAX_TOUCH, at its first copy) */
    uint32_t ntouch;
    int oom;                        /* out of memory: its changes are dropped (timing only) */
} mt_view;

struct emu_mt {
    const mh_emu_model *m;
    mt_view *views;                 /* per SM */
    uint32_t nviews;
    bw_ring l2bw, hbm;
    double wb_clk;                  /* the HBM backlog, in cycles, stores do not wait for (write-back) */
    uint64_t *l2;                   /* l2_sets x L2_SET words (sets_map) */
    size_t l2_len, l1_len;          /* their mappings' bytes */
    uint64_t *l2_order;             /* per L2 set: its ways from the most recently used on (l2_to_front) */
    uint32_t l2_sets;
    uint64_t *l1;                   /* nsms x l1_sets x L1_SET words (sets_map) */
    uint32_t l1_sets;
    uint64_t l2_mod, l1_mod;        /* mod_magic of l2_sets, l1_sets (set_of's remainder) */
    uint64_t *port_free, *dsm_free; /* per SM: its paths to L2 (2 a SM: data in, data out), to other SMs' shared memory */
    uint64_t *tc_free;              /* per SM x 4 sub-partitions: its tensor core */
};

/* A line's set among `sets`: a hash's high 32 bits modulo sets.  The remainder without a division
 * (Lemire, Kaser and Kurz, "Faster remainder by direct computation", 2019: exact for every 32-bit
 * x and d): magic = 2^64 / d rounded up, then x mod d = the high 64 bits of (magic * x mod 2^64) * d,
 * here from two 32-bit halves (no 128-bit type in C11).  A lookup computed the set with a 32-bit
 * division up to four times per line. */
static inline uint64_t mod_magic(uint32_t d) { return d ? UINT64_MAX / d + 1 : 0; }
static inline uint32_t set_of(uint64_t line, uint32_t sets, uint64_t magic)
{
    uint32_t x = (uint32_t)((line * 0x9e3779b97f4a7c15ull) >> 32);
    uint64_t low = magic * x;
    return (uint32_t)((((low >> 32) * sets) + (((low & 0xffffffffu) * sets) >> 32)) >> 32);
}

/* n zeroed words from a 2 MiB boundary, in a mapping of their own asked for 2 MiB pages before the
 * first touch (*len: the bytes mapped, for sets_unmap; sets are read at random, megabytes apart, and
 * from the C heap they were on 4 KiB pages the CPU's TLB misses on almost every lookup). */
#define HUGE_PAGE (2ull << 20)
static uint64_t *sets_map(size_t n, size_t *len)
{
    size_t bytes = (n * sizeof(uint64_t) + 4095) & ~(size_t)4095, all = bytes + HUGE_PAGE;
    uint8_t *p = mmap(NULL, all, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    uint8_t *a = (uint8_t *)(((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    if (a > p) munmap(p, (size_t)(a - p));
    if (a + bytes < p + all) munmap(a + bytes, (size_t)(p + all - (a + bytes)));
    emu_huge(a, bytes);
    *len = bytes;
    return (uint64_t *)a;
}

static void sets_unmap(uint64_t *p, size_t len)
{
    if (p) munmap(p, len);
}

int emu_mt_start(ctx *c)
{
    struct emu_mt *t = calloc(1, sizeof *t);
    if (!t) return -1;
    t->m = c->d->model;
    t->l2bw.rate = t->m->l2_bytes_per_clk;
    t->hbm.rate = mh_emu_model_hbm_bpc(t->m);
    t->wb_clk = (double)t->m->l2_bytes * t->m->l2_dirty_frac / t->hbm.rate;
    uint32_t n = c->nsms ? c->nsms : 1;
    t->port_free = calloc(2 * (size_t)n, sizeof *t->port_free);
    t->dsm_free = calloc(n, sizeof *t->dsm_free);
    t->tc_free = calloc((size_t)n * SUBPARTS, sizeof *t->tc_free);
    t->views = calloc(n, sizeof *t->views);
    t->nviews = n;
    uint64_t smem = (uint64_t)c->resident * c->shared_size, l1 = t->m->l1_bytes > smem ? t->m->l1_bytes - smem : 0;
    t->l1_sets = (uint32_t)(l1 >> LINE_SHIFT) / L1_WAYS;
    t->l2_sets = (uint32_t)((t->m->l2_bytes >> LINE_SHIFT) / L2_WAYS);
    /* allocated here, not at first use: SMs on other workers read them (pages given when touched) */
    if (t->l2_sets && !(t->l2 = sets_map((size_t)t->l2_sets * L2_SET, &t->l2_len))) t->l2_sets = 0;
    if (t->l2_sets && !(t->l2_order = malloc((size_t)t->l2_sets * sizeof *t->l2_order))) {
        sets_unmap(t->l2, t->l2_len);
        t->l2 = NULL;
        t->l2_sets = 0;
    }
    for (uint32_t i = 0; i < t->l2_sets; i++) t->l2_order[i] = ORDER_EMPTY;
    if (t->l1_sets && !(t->l1 = sets_map((size_t)n * t->l1_sets * L1_SET, &t->l1_len))) t->l1_sets = 0;
    t->l2_mod = mod_magic(t->l2_sets);
    t->l1_mod = mod_magic(t->l1_sets);
    c->mt = t;
    c->mt_last_line = UINT64_MAX;
    if (!t->port_free || !t->dsm_free || !t->tc_free || !t->views) return emu_mt_free(c), -1;
    return 0;
}

void emu_mt_free(ctx *c)
{
    struct emu_mt *t = c->mt;
    if (!t) return;
    for (uint32_t i = 0; t->views && i < t->nviews; i++) {
        mt_view *v = &t->views[i];
        free(v->log);
        free(v->hkey);
        free(v->hval);
        free(v->add[0]);
        free(v->add[1]);
        free(v->touch);
    }
    free(t->views);
    sets_unmap(t->l2, t->l2_len);
    free(t->l2_order);
    sets_unmap(t->l1, t->l1_len);
    free(t->port_free);
    free(t->dsm_free);
    free(t->tc_free);
    free(t);
    c->mt = NULL;
}

/* ---- bandwidth shared by the SMs: the windows ---- */

/* The bytes SM view v took this quantum from window w of ring k (a pointer to add to; NULL: none yet
 * and `make` not asked, or out of memory). */
static double *view_add(mt_view *v, int k, uint64_t w, int make)
{
    for (uint32_t i = v->nadd[k]; i-- > 0;)
        if (v->add[k][i].w == w) return &v->add[k][i].bytes;
    if (!make || v->oom) return NULL;
    if (v->nadd[k] == v->cap_add[k]) {
        uint32_t cap = v->cap_add[k] ? 2 * v->cap_add[k] : 16;
        bw_add *a = realloc(v->add[k], cap * sizeof *a);
        if (!a) return v->oom = 1, NULL;
        v->add[k] = a;
        v->cap_add[k] = cap;
    }
    v->add[k][v->nadd[k]] = (bw_add){w, 0};
    return &v->add[k][v->nadd[k]++].bytes;
}

/* `bytes` through b (ring k) from cycle `at` on, as SM view v sees it (the windows at the quantum's
 * start plus its own takes): the cycle its last byte is served. */
static uint64_t bw_take(bw_ring *b, int k, mt_view *v, uint64_t at, double bytes)
{
    double cap = b->rate * (double)(1u << WIN_SHIFT);
    uint64_t w = at >> WIN_SHIFT;
    if (w <= b->first_free && w + RING / 2 > b->first_free) w = b->first_free; /* the full ones skipped */
    for (uint32_t i = 0;; i++, w++) {
        uint32_t s = (uint32_t)(w & (RING - 1));
        double *own = view_add(v, k, w, 0), used = (b->tag[s] == w + 1 ? b->used[s] : 0) + (own ? *own : 0);
        double room = cap - used;
        if (room >= bytes || i >= RING / 2) {
            if (!own) own = view_add(v, k, w, 1);
            if (own) *own += bytes;
            used += bytes;
            uint64_t end = (w << WIN_SHIFT) + (uint64_t)(used / b->rate);
            return end > at ? end : at;
        }
        if (room > 0) {
            if (!own) own = view_add(v, k, w, 1);
            if (own) *own += room;
            bytes -= room;
        }
    }
}

/* The bytes an SM took in window w, added to the ring at the quantum's end: what does not fit
 * (other SMs took the room in the same quantum) spills into the windows after it, so the ring
 * serves no more than its bandwidth and later takes queue behind the excess. */
static void bw_apply(bw_ring *b, uint64_t w, double bytes)
{
    double cap = b->rate * (double)(1u << WIN_SHIFT);
    for (uint32_t i = 0; bytes > 0; i++, w++) {
        uint32_t s = (uint32_t)(w & (RING - 1));
        if (b->tag[s] != w + 1) b->tag[s] = w + 1, b->used[s] = 0;
        double room = cap - b->used[s];
        if (room >= bytes || i >= RING / 2) {
            b->used[s] += bytes;
            return;
        }
        if (room > 0) b->used[s] = cap, bytes -= room;
    }
}

/* After the quantum's takes: every window from first_free on that is full is skipped by later takes. */
static void bw_settle(bw_ring *b)
{
    double cap = b->rate * (double)(1u << WIN_SHIFT);
    for (uint32_t i = 0; i < RING / 2; i++) {
        uint32_t s = (uint32_t)(b->first_free & (RING - 1));
        if (b->tag[s] != b->first_free + 1 || b->used[s] < cap) return;
        b->first_free++;
    }
}

/* The L2's utilisation over the LOAD_SPAN windows that end LOAD_LAG cycles before `at`: windows
 * every SM has passed (the scheduler keeps the SMs within a quantum, 256 cycles, of each other),
 * so no transfer will add to them and the figure does not depend on the order the SMs ran in
 * (read during a quantum they are the device's, before its start: final, not in any SM's view). */
#define LOAD_LAG 512
#define LOAD_SPAN 8
static double l2_utilisation(const bw_ring *b, uint64_t at)
{
    if (at < LOAD_LAG + ((uint64_t)LOAD_SPAN << WIN_SHIFT)) return 0;
    uint64_t end = (at - LOAD_LAG) >> WIN_SHIFT;
    double used = 0;
    for (uint64_t w = end - LOAD_SPAN; w < end; w++) {
        uint32_t s = (uint32_t)(w & (RING - 1));
        if (b->tag[s] == w + 1) used += b->used[s];
    }
    return used / (b->rate * (double)(LOAD_SPAN << WIN_SHIFT));
}

/* The loaded latency's queueing term: an M/D/1 queue's mean wait, rho / (2 (1 - rho)) service
 * times (the model's l2_load_clk), at the L2's recent utilisation rho (capped at 0.95: beyond,
 * the windows' own queue above is what grows).  0 on an idle L2. */
static uint32_t l2_load_wait(const struct emu_mt *t, uint64_t at)
{
    double rho = l2_utilisation(&t->l2bw, at);
    if (rho <= 0) return 0;
    if (rho > 0.95) rho = 0.95;
    return (uint32_t)(t->m->l2_load_clk * rho / (2 * (1 - rho)) + 0.5);
}

/* ---- caches ---- */

/* Looks `line` up in the ways of its L1 set; a miss puts it in the least recently used way (the
 * first of equals: an empty one, the lowest).  Returns whether it hit.  (The tags first, then on a
 * miss the least used: two loops without a chain from one way to the next, where one loop
 * reloading used[lru] made each way wait for the last; a line is in at most one way, so the
 * answer is the same.) */
static int cache_access(uint64_t *set, uint32_t ways, uint64_t line, uint64_t tick)
{
    uint64_t *used = set + ways;
    for (uint32_t i = 0; i < ways; i++)
        if (set[i] == line + 1) {
            used[i] = tick;
            return 1;
        }
    uint32_t lru = 0;
    uint64_t least = used[0];
    for (uint32_t i = 1; i < ways; i++)
        if (used[i] < least) least = used[i], lru = i;
    set[lru] = line + 1;
    used[lru] = tick;
    return 0;
}

/* An L2 set's recency: its 16 ways as 4-bit numbers, the most recently used in the low nibble, the
 * next victim in the high one.  A fresh set's order puts way 15 first and way 0 last, so its empty
 * ways are taken lowest first, and an access moves its way to the front: the victim is the lowest
 * empty way, else the least recently used, as with a counter per way and the first of equals (the
 * empty ways, counter 0, never move: they stay at the back in that order). */
static inline uint64_t l2_to_front(uint64_t order, uint32_t way)
{
    uint64_t x = ~(order ^ (way * 0x1111111111111111ull)); /* way's nibble: all ones */
    x &= x >> 1;
    x &= x >> 2;
    uint32_t p = (uint32_t)__builtin_ctzll(x & 0x1111111111111111ull) / 4; /* way's position */
    uint64_t above = p == 15 ? 0 : order & (~0ull << (4 * p + 4)), below = order & ((1ull << (4 * p)) - 1);
    return above | below << 4 | way;
}

/* The L2's access to `line` in set si at the quantum's end, in the order the SMs' accesses are
 * replayed; a miss puts it in the set's victim way, its data there at `ready`.  Returns whether it hit. */
static int l2_access(struct emu_mt *t, uint32_t si, uint64_t line, uint64_t ready)
{
    uint64_t *set = t->l2 + (size_t)si * L2_SET;
    uint32_t way = L2_WAYS;
    for (uint32_t i = 0; i < L2_WAYS; i++)
        if (set[i] == line + 1) way = i;
    int hit = way < L2_WAYS;
    if (!hit) {
        way = (uint32_t)(t->l2_order[si] >> 60);
        set[way] = line + 1;
        set[L2_WAYS + way] = ready;
    }
    t->l2_order[si] = l2_to_front(t->l2_order[si], way);
    return hit;
}

/* SM view v's entry for `line` among the lines it asked the L2 for this quantum; NULL: none (then
 * v->hfree is the slot view_add_line fills, unless the table must grow first). */
static uint64_t *view_line(mt_view *v, uint64_t line)
{
    if (!v->hcap) return NULL;
    for (uint32_t h = (uint32_t)((line * 0x9e3779b97f4a7c15ull) >> 40) & (v->hcap - 1);; h = (h + 1) & (v->hcap - 1)) {
        if (v->hkey[h] == line + 1) return &v->hval[h];
        if (!v->hkey[h]) return v->hfree = h, NULL;
    }
}

/* Adds `line` (view_line just found it absent), ready `ready` (out of memory: not added, v->oom). */
static void view_add_line(mt_view *v, uint64_t line, uint64_t ready)
{
    if (v->oom) return;
    uint32_t h = v->hfree;
    if (2 * (v->hn + 1) > v->hcap) { /* grow (and rehash), then the line's slot in the new table */
        uint32_t cap = v->hcap ? 2 * v->hcap : 256;
        uint64_t *k = calloc(cap, sizeof *k), *x = calloc(cap, sizeof *x);
        if (!k || !x) return free(k), free(x), (void)(v->oom = 1);
        for (uint32_t i = 0; i < v->hcap; i++)
            if (v->hkey[i]) {
                uint32_t g = (uint32_t)(((v->hkey[i] - 1) * 0x9e3779b97f4a7c15ull) >> 40) & (cap - 1);
                while (k[g]) g = (g + 1) & (cap - 1);
                k[g] = v->hkey[i];
                x[g] = v->hval[i];
            }
        free(v->hkey);
        free(v->hval);
        v->hkey = k;
        v->hval = x;
        v->hcap = cap;
        h = (uint32_t)((line * 0x9e3779b97f4a7c15ull) >> 40) & (v->hcap - 1);
        while (v->hkey[h]) h = (h + 1) & (v->hcap - 1);
    }
    v->hkey[h] = line + 1;
    v->hval[h] = ready;
    v->hn++;
}

/* The L2's answer for `line` asked at cycle `at` by SM view v: the latency to the SM (an L2 hit's,
 * plus the wait for a miss in flight; a miss's); *missed: it was not there.  The tags are read as
 * they were at the quantum's start (plus v's own lines); the access is logged for the quantum's end,
 * a miss with the `fetch` bytes it reads from HBM (0 for a store's: written through, not merged). */
static uint32_t l2_latency(struct emu_mt *t, mt_view *v, uint64_t line, uint32_t si, uint64_t at, double fetch,
                           int *missed)
{
    const mh_emu_model *m = t->m;
    *missed = 1;
    if (!t->l2_sets) return m->hbm_lat;
    uint64_t *own = view_line(v, line), ready = 0;
    int hit = own != NULL;
    if (own) ready = *own;
    else {
        const uint64_t *set = t->l2 + (size_t)si * L2_SET;
        for (uint32_t i = 0; i < L2_WAYS && !hit; i++)
            if (set[i] == line + 1) hit = 1, ready = set[L2_WAYS + i];
        if (!hit) ready = at + m->hbm_lat - m->l2_lat;
        view_add_line(v, line, ready);
    }
    if (!v->oom) {
        if (v->nlog == v->cap_log) {
            uint32_t cap = v->cap_log ? 2 * v->cap_log : 256;
            void *p = realloc(v->log, cap * sizeof *v->log);
            if (!p) v->oom = 1;
            else v->log = p, v->cap_log = cap;
        }
        if (!v->oom)
            v->log[v->nlog++] = (__typeof__(*v->log)){line, ready, at, hit ? 0 : fetch, si};
    }
    if (!hit) return m->hbm_lat;
    *missed = 0;
    return m->l2_lat + (uint32_t)(ready > at ? ready - at : 0);
}

static int l1_access(ctx *c, struct emu_mt *t, uint64_t line, uint32_t si)
{
    if (!t->l1_sets) return 0;
    uint64_t *sm = t->l1 + (size_t)c->cs->id * t->l1_sets * L1_SET;
    return cache_access(sm + (size_t)si * L1_SET, L1_WAYS, line, ++t->views[c->cs->id].l1tick);
}

/* The merge of misses in flight: SM view v read `bytes` of a line from HBM from cycle `at` on that a
 * lower SM missed in the same quantum (seen when the logs are replayed in SM order); the line came
 * once, so those bytes are taken back from v's HBM windows (the earliest from at's on), and later
 * quanta queue behind one fetch, not several.  (Its latency stays: the SM ran the quantum already.) */
static void refund(mt_view *v, uint64_t at, double bytes)
{
    uint64_t w0 = at >> WIN_SHIFT;
    while (bytes > 0) {
        bw_add *e = NULL;
        for (uint32_t i = 0; i < v->nadd[1]; i++) {
            bw_add *a = &v->add[1][i];
            if (a->w >= w0 && a->bytes > 0 && (!e || a->w < e->w)) e = a;
        }
        if (!e) return;
        double d = e->bytes < bytes ? e->bytes : bytes;
        e->bytes -= d;
        bytes -= d;
    }
}

/* The replay's look-ahead: the sets of the accesses 2 x APPLY_AHEAD entries on (their tags and
 * recency word), then APPLY_AHEAD entries on the word a miss writes (its way read from the recency
 * word fetched before), are fetched into the CPU's cache while the current one is applied (a
 * quantum's sets are scattered over the model's L2, megabytes, and each would otherwise stall the
 * replay on its own miss). */
#define APPLY_AHEAD 8

/* The set of the access `ahead` entries after v's entry k: in v's log, else in the next view's (the
 * SM replayed next; NULL: none); UINT32_MAX: none there. */
static inline uint32_t set_ahead(const mt_view *v, const mt_view *next, uint32_t k, uint32_t ahead)
{
    if (k + ahead < v->nlog) return v->log[k + ahead].set;
    k = k + ahead - v->nlog;
    return next && k < next->nlog ? next->log[k].set : UINT32_MAX;
}

/* SM view v's changes applied (next: the view applied after it, whose first sets the look-ahead
 * reaches; NULL: none). */
static void view_apply(struct emu_mt *t, mt_view *v, const mt_view *next)
{
    for (uint32_t k = 0; k < v->nlog; k++) {
        uint32_t si = set_ahead(v, next, k, 2 * APPLY_AHEAD);
        if (si != UINT32_MAX) {
            const uint64_t *s = t->l2 + (size_t)si * L2_SET;
            for (uint32_t j = 0; j < L2_WAYS; j += 8) __builtin_prefetch(s + j, 1);
            __builtin_prefetch(&t->l2_order[si], 1);
        }
        if ((si = set_ahead(v, next, k, APPLY_AHEAD)) != UINT32_MAX)
            __builtin_prefetch(t->l2 + (size_t)si * L2_SET + L2_WAYS + (t->l2_order[si] >> 60), 1);
        int hit = l2_access(t, v->log[k].set, v->log[k].line, v->log[k].ready);
        if (hit && v->log[k].fetched > 0) refund(v, v->log[k].at, v->log[k].fetched); /* (it missed at the start) */
    }
    for (uint32_t k = 0; k < v->nadd[0]; k++) bw_apply(&t->l2bw, v->add[0][k].w, v->add[0][k].bytes);
    for (uint32_t k = 0; k < v->nadd[1]; k++) bw_apply(&t->hbm, v->add[1][k].w, v->add[1][k].bytes);
    if (v->hn) memset(v->hkey, 0, v->hcap * sizeof *v->hkey);
    v->nlog = v->hn = v->nadd[0] = v->nadd[1] = 0;
    v->oom = 0;
}

void emu_mt_quantum_end(ctx *c)
{
    struct emu_mt *t = c->mt;
    if (!t) return;
    for (uint32_t i = 0; i < t->nviews; i++) view_apply(t, &t->views[i], i + 1 < t->nviews ? &t->views[i + 1] : NULL);
    bw_settle(&t->l2bw);
    bw_settle(&t->hbm);
}

void emu_mt_sm_end(ctx *c, uint32_t sm)
{
    struct emu_mt *t = c->mt;
    if (!t || sm >= t->nviews) return;
    view_apply(t, &t->views[sm], NULL);
    bw_settle(&t->l2bw);
    bw_settle(&t->hbm);
}

/* ---- a warp's access ---- */

/* The distinct 128-byte lines among ad[0..n) with the 32-byte sectors each touches (bit masks), in
 * the order they first come.  The sectors of the line at hand gather in a register and are written
 * when the line changes (a byte in memory ORed lane after lane waited for its own last store). */
static uint32_t lines_of(const uint64_t *ad, uint32_t n, uint32_t size, uint64_t *line, uint8_t *sect)
{
    uint64_t sz = size ? size : 1, gap = 0;
    for (uint32_t i = 1; i < n; i++) gap |= ad[i] - ad[i - 1] - sz;
    if (!gap && ad[n - 1] + sz > ad[0]) { /* lanes one after another (a coalesced warp): one range */
        uint64_t a = ad[0], e = ad[n - 1] + sz;
        uint32_t k = 0;
        for (uint64_t l = a >> LINE_SHIFT; l <= (e - 1) >> LINE_SHIFT; l++) {
            uint64_t lo = l << LINE_SHIFT > a ? l << LINE_SHIFT : a;
            uint64_t hi = (l + 1) << LINE_SHIFT < e ? (l + 1) << LINE_SHIFT : e;
            uint32_t first = (uint32_t)(lo >> 5) & 3, last = (uint32_t)((hi - 1) >> 5) & 3;
            line[k] = l;
            sect[k++] = (uint8_t)(((2u << last) - 1) & ~((1u << first) - 1));
        }
        return k;
    }
    uint32_t k = 0, j = 0;
    uint64_t cur = UINT64_MAX; /* line[j], the line at hand (no line is UINT64_MAX) */
    uint32_t m = 0;            /* its sectors not yet in sect[j] */
    for (uint32_t i = 0; i < n; i++)
        for (uint64_t a = ad[i], e = ad[i] + (size ? size : 1); a < e; a = ((a >> 5) + 1) << 5) {
            uint64_t l = a >> LINE_SHIFT;
            if (l != cur) {
                if (k) sect[j] |= (uint8_t)m;
                for (j = 0; j < k && line[j] != l; j++) {}
                if (j == k) line[k] = l, sect[k++] = 0;
                cur = l;
                m = 0;
            }
            m |= 1u << ((a >> 5) & 3);
        }
    if (k) sect[j] |= (uint8_t)m;
    return k;
}

/* `bytes` between the L2 and SM sm (`miss` of them also through HBM), asked at cycle `at`, the
 * farthest line answering after `lat` cycles: the cycle the last byte has crossed the SM's port.
 * The shared bandwidths add their queueing to the latency; the port takes the bytes one
 * transfer after another once they are there. */
static uint64_t transfer(struct emu_mt *t, uint32_t sm, uint64_t at, uint32_t lat, double bytes, double miss, int out)
{
    mt_view *v = &t->views[sm];
    if (lat) lat += l2_load_wait(t, at);
    double q = (double)bw_take(&t->l2bw, 0, v, at, bytes) - (double)at - bytes / t->l2bw.rate;
    if (miss > 0) {
        double h = (double)bw_take(&t->hbm, 1, v, at, miss) - (double)at - miss / t->hbm.rate;
        if (out) h -= t->wb_clk; /* a store's bytes reach HBM later (written back): it waits only when
                                  * more than l2_dirty_frac of the L2 is still to be written */
        if (h > q) q = h;
    }
    uint64_t there = at + lat + (q > 0 ? (uint64_t)q : 0);
    uint64_t *pf = &t->port_free[2 * (size_t)sm + (out != 0)];
    uint64_t ps = *pf > there ? *pf : there;
    *pf = ps + (uint64_t)(bytes / t->m->sm_port_bytes_per_clk + 0.5);
    return *pf;
}

/* The sets of `line` in the model's L1 (*s1; only for a load and an L1 there) and L2 (*s2), fetched
 * into the CPU's cache (they are far apart in the model's arrays, megabytes, and each lookup would
 * otherwise wait for its own miss): the L1 set, the L2 set's tags. */
static inline void sets_of(const ctx *c, const struct emu_mt *t, uint64_t line, int op, uint32_t *s1, uint32_t *s2)
{
    if (op == EMU_MT_LD && t->l1_sets) {
        *s1 = set_of(line, t->l1_sets, t->l1_mod);
        __builtin_prefetch(t->l1 + ((size_t)c->cs->id * t->l1_sets + *s1) * L1_SET);
    }
    if (t->l2_sets) {
        *s2 = set_of(line, t->l2_sets, t->l2_mod);
        const uint64_t *tags = t->l2 + (size_t)*s2 * L2_SET;
        for (uint32_t j = 0; j < L2_WAYS; j += 8) __builtin_prefetch(tags + j);
    }
}

void emu_mt_prefetch(const ctx *c, const uint64_t *ad, uint32_t n, int op)
{
    const struct emu_mt *t = c->mt;
    if (!t) return;
    uint64_t last = UINT64_MAX;
    uint32_t s1, s2;
    for (uint32_t i = 0; i < n; i++)
        if (ad[i] >> LINE_SHIFT != last) sets_of(c, t, last = ad[i] >> LINE_SHIFT, op, &s1, &s2);
}

/* the bytes of a line's sectors (a 4-bit mask): 32 a sector */
static const uint8_t SECTOR_BYTES[16] = {0, 32, 32, 64, 32, 64, 64, 96, 32, 64, 64, 96, 64, 96, 96, 128};

uint64_t emu_mt_global(ctx *c, const uint64_t *ad, uint32_t n, uint32_t size, int op)
{
    struct emu_mt *t = c->mt;
    if (!t || !n) return 0;
    uint64_t line[4 * WARP];
    uint8_t sect[4 * WARP];
    uint32_t s1[4 * WARP], s2[4 * WARP];
    uint32_t k = lines_of(ad, n, size > 16 ? 16 : size, line, sect);
    for (uint32_t i = 0; i < k; i++) sets_of(c, t, line[i], op, &s1[i], &s2[i]);
    uint64_t at = c->now + 1;
    uint32_t lat = 0;
    double bytes = 0, miss = 0;
    mt_view *v = &t->views[c->cs->id];
    for (uint32_t i = 0; i < k; i++) {
        double b = SECTOR_BYTES[sect[i] & 15];
        if (op == EMU_MT_LD && l1_access(c, t, line[i], s1[i])) {
            if (lat < t->m->l1_lat) lat = t->m->l1_lat;
            continue;
        }
        bytes += b;
        int missed;
        uint32_t l = l2_latency(t, v, line[i], s2[i], at, op == EMU_MT_ST ? 0 : b, &missed);
        if (missed || op == EMU_MT_ST) miss += b;
        if (l > lat) lat = l;
    }
    if (op == EMU_MT_ATOM && lat < t->m->l2_lat) lat = t->m->l2_lat; /* atomics are done at the L2 */
    if (op == EMU_MT_ST || op == EMU_MT_ASYNC) lat = 0;               /* the warp does not wait for them */
    uint64_t end = at + lat;
    if (bytes > 0) end = transfer(t, c->cs->id, at, lat, bytes, miss, op == EMU_MT_ST);
    return end - at - (lat && end > at ? 1 : 0); /* (the issue cycle is the warp's 1) */
}

uint64_t emu_mt_shared(ctx *c, const uint64_t *sa, uint32_t n, uint32_t size, int op)
{
    struct emu_mt *t = c->mt;
    if (!t) return 0;
    uint32_t own = c->cb ? c->cb->rank : 0, remote = 0;
    for (uint32_t i = 0; i < n; i++)
        if (sa[i] >= EMU_DSMEM_RANK && sa[i] / EMU_DSMEM_RANK - 1 != own) remote++;
    uint32_t lat = t->m->smem_lat;
    if (!remote) return lat > 1 ? lat - 1 : 0;
    /* the SM-to-SM network: its latency, and the bytes through the SM's path to the others */
    uint32_t sm = c->cs->id;
    uint64_t at = c->now + 1, s = t->dsm_free[sm] > at ? t->dsm_free[sm] : at;
    t->dsm_free[sm] = s + (uint64_t)((double)remote * size / t->m->dsmem_bytes_per_clk);
    uint64_t queued = s - at;
    if (op == EMU_MT_ST) return queued;
    return (t->m->dsmem_lat ? t->m->dsmem_lat - 1 : 0) + queued; /* (a latency of 0: model_params) */
}

/* ---- TMA ---- */

/* The lines of a TMA copy are recorded in the issuing SM's view (SMs on other workers issue theirs
 * at the same time); the recording is on between emu_mt_tma_begin and emu_mt_tma_end, one copy of
 * the running warp (c->mt_last_line is the worker's). */
void emu_mt_tma_begin(ctx *c)
{
    if (!c->mt) return;
    mt_view *v = &c->mt->views[c->cs->id];
    if (!v->touch) v->touch = malloc(MAX_TOUCH * sizeof *v->touch); /* (none: no line recorded, timing only) */
    v->ntouch = 0;
    c->mt_last_line = UINT64_MAX - 1; /* recording (no line is this) */
}

void emu_mt_touch_slow(ctx *c, uint64_t ga)
{
    if (c->mt_last_line == UINT64_MAX) return; /* not recording */
    mt_view *v = &c->mt->views[c->cs->id];
    uint64_t l = ga >> LINE_SHIFT;
    c->mt_last_line = l;
    for (uint32_t i = v->ntouch > 8 ? v->ntouch - 8 : 0; i < v->ntouch; i++) /* rows revisit recent lines */
        if (v->touch[i] == l) return;
    if (v->touch && v->ntouch < MAX_TOUCH) v->touch[v->ntouch++] = l;
}

void emu_mt_touch_range(ctx *c, uint64_t ga, uint64_t bytes)
{
    if (!c->mt || c->mt_last_line == UINT64_MAX) return;
    for (uint64_t a = ga >> LINE_SHIFT << LINE_SHIFT; a < ga + bytes; a += 1u << LINE_SHIFT) emu_mt_touch_slow(c, a);
}

uint64_t emu_mt_tma_end(ctx *c, vsm *sm, uint64_t now, uint64_t bytes, int kind)
{
    struct emu_mt *t = c->mt;
    c->mt_last_line = UINT64_MAX; /* stop recording: a multicast's further blocks get the same bytes */
    if (!t) return now;
    uint64_t start = sm->tma_free > now ? sm->tma_free : now;
    if (kind == EMU_MT_TMA_DSMEM) { /* shared memory to another block's: the SM-to-SM network */
        sm->tma_free = start + (uint64_t)((double)bytes / t->m->dsmem_bytes_per_clk);
        return sm->tma_free + t->m->dsmem_lat;
    }
    uint32_t lat = 0;
    mt_view *v = &t->views[sm->id];
    double miss = 0, per = v->ntouch ? (double)bytes / v->ntouch : 0;
    for (uint32_t i = 0; i < v->ntouch; i++) {
        int missed;
        uint32_t l = l2_latency(t, v, v->touch[i], t->l2_sets ? set_of(v->touch[i], t->l2_sets, t->l2_mod) : 0, start,
                                kind == EMU_MT_TMA_STORE ? 0 : per, &missed);
        if (missed || kind == EMU_MT_TMA_STORE) miss += per;
        if (l > lat) lat = l;
    }
    if (kind == EMU_MT_TMA_STORE) lat = t->m->l2_lat; /* written into the L2, acknowledged */
    uint64_t end = transfer(t, sm->id, start, lat, (double)bytes, miss, kind == EMU_MT_TMA_STORE);
    sm->tma_free = start + 1; /* the unit takes the next copy's requests; the port orders the bytes */
    return end + t->m->tma_lat;
}

/* ---- tensor cores ---- */

uint64_t emu_mt_mma(ctx *c, const warp *w, int atype, uint64_t macs, uint32_t fetch)
{
    const mh_emu_model *m = c->d->model;
    uint64_t rate = atype == MH_MT_TF32 ? m->mma_tf32 : atype == MH_MT_F64 ? m->mma_f64
                  : mh_mma_type_bits(atype) == 8 ? m->mma_8bit : m->mma_f16;
    uint64_t cy = (macs + rate - 1) / rate;
    if (!cy) cy = 1;
    if (!c->mt) return c->now + fetch + cy;
    uint64_t *tc = &c->mt->tc_free[(size_t)w->b->sm->id * SUBPARTS + w->sp];
    uint64_t start = *tc > c->now + fetch ? *tc : c->now + fetch; /* its operands read while the core is busy */
    *tc = start + cy;
    return *tc;
}
