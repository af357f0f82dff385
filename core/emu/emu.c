/* emu.c - the CPU executor of PTX (see emu.h).
 *
 * Costs on the virtual clock: every warp instruction issued costs 1 cycle on
 * the SM clock; a global/generic memory access 8 more, a shared one 2 more.
 * SM s starts each launch at its own offset (s x 1000003 cycles), as real SMs'
 * %clock values are not aligned; %globaltimer is the launch's start time plus
 * the SM's elapsed cycles / MH_EMU_CLOCK_GHZ. */
#include "emu/emu.h"
#include "base/stop.h"
#include "frontend/ptx_effects.h"
#include "launch/launch_shape.h"
#include "emu/emu_round.h"
#include "emu/emu_occupancy.h"
#include "emu/emu_counters.h"
#include "emu/emu_printf.h"
#include "base/fp16.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WARP 32
#define GLOBAL_BASE 0x0000100000000000ull  /* first device allocation */
#define ALLOC_GAP 0x10000ull               /* unmapped bytes between allocations */
#define SHARED_WIN 0x00007e0000000000ull   /* generic window of shared memory */
#define LOCAL_WIN 0x00007f0000000000ull    /* generic window of local memory */
#define WIN_SIZE 0x0000010000000000ull

/* LANE_WSYNC: arrived at a warp-synchronous instruction (shfl.sync,
 * vote.sync, bar.warp.sync) and waiting for the rest of its member mask. */
/* LANE_NBARRIER: waiting at a barrier with a thread count (bar.sync a, b), released when b
 * threads have arrived at barrier a, whatever the other warps do (named barriers of
 * warp-specialized kernels); LANE_BARRIER: at a barrier of the whole block. */
enum { LANE_ACTIVE = 0, LANE_BARRIER, LANE_EXITED, LANE_WSYNC, LANE_YIELD, LANE_NBARRIER };
#define NUM_BARRIERS 16

typedef struct {
    uint64_t addr, size;
    unsigned char *host;
} alloc;

struct mh_emu {
    alloc *a;
    size_t n, cap;
    uint64_t next_addr;
    uint32_t nsm;
    uint64_t max_warp_insns;
    int strict;
    uint64_t timer_ns;      /* %globaltimer at the next launch's start */
};

#define MAX_CALL_DEPTH 32

typedef struct {
    uint32_t ret_pc;
    int32_t retvar;         /* caller's .param variable receiving the return value, -1 none */
    uint32_t callee;
} call_frame;

typedef struct blk blk;

typedef struct {
    uint64_t *r;            /* registers: module registers x 32 lanes */
    uint32_t *written;      /* strict mode: per register, the lanes that wrote it */
    uint32_t pc[WARP];
    uint8_t st[WARP];
    uint8_t depth[WARP];    /* call depth per lane */
    uint8_t bar[WARP];      /* LANE_NBARRIER: the barrier waited at */
    call_frame stack[WARP][MAX_CALL_DEPTH];
    uint32_t index;         /* warp index in the block */
    /* the issue model (emu_sched below) */
    blk *b;                 /* its block */
    uint64_t ready;         /* the first cycle it may issue its next instruction */
    uint32_t kpc, kmask;    /* known: every active lane is at kpc, kmask is them */
    uint8_t known;
    uint8_t sched;          /* W_RUN, W_WAIT, W_PARK, W_DONE */
    uint8_t sp;             /* its sub-partition */
    uint16_t slot;          /* its warp slot on the SM (ties between equally ready warps) */
    /* the grid-wide stall check: the addresses its loads touched since the last progress */
    uint64_t ld_lo, ld_hi;
    uint32_t ld_epoch;      /* the epoch ld_lo/ld_hi belong to (0: no load yet) */
    uint32_t ld_pc;         /* the pc of its latest load (where it waits) */
    uint64_t spin_hash;     /* a stall being verified: its registers when it last polled at ld_pc */
    uint32_t spins;         /* polls in a row at ld_pc with the same registers */
} warp;

typedef struct vsm vsm;

/* A block resident on a virtual SM (a slot of it): its memory and warps. */
struct blk {
    vsm *sm;                /* the SM whose slot it is */
    int busy;               /* holds a block now */
    int vacant;             /* its block finished at `end` and the next block of the grid is owed to it */
    uint32_t ctaid[3];
    unsigned char *shared, *local, *frames;
    uint64_t *regs;
    uint32_t *written;
    warp *warps;
    uint32_t bar_arrived[NUM_BARRIERS]; /* threads arrived at each counted barrier */
    uint32_t running;       /* warps that can issue (W_RUN) */
    uint32_t parked;        /* warps whose lanes all wait at an incomplete mbarrier phase (W_PARK) */
    uint32_t live;          /* warps not finished */
    uint64_t park_writes;   /* memory writes when a parked warp last looked */
    uint64_t round_writes;  /* memory writes at the last round in which every warp waited */
    uint64_t stalled;       /* such rounds in a row without a write */
    uint64_t end;           /* when its last warp finished */
};

#define SUBPARTS 4          /* sub-partitions of an SM, each issuing one warp instruction per cycle */
#define SM_MAX_WARPS 64     /* sm_90: 2048 threads */

typedef struct {
    warp *w[SM_MAX_WARPS];  /* its warps that can issue */
    uint32_t n;
    uint64_t free;          /* the first cycle it can issue again */
    warp *best;             /* the one it issues next (NULL: to be found) */
} subpart;

/* A virtual SM: its sub-partitions and resident slots. */
struct vsm {
    subpart sps[SUBPARTS];
    blk *blks;              /* `resident` slots, their memory allocated on first use */
    uint32_t id;
    uint64_t clock0;        /* its %clock at the launch's start */
    uint64_t end;           /* when its last block ended */
    uint64_t vacant_at;     /* the earliest vacant slot's end (UINT64_MAX: none) */
    uint64_t next;          /* the cycle of its next event (an issue or a dispatch), UINT64_MAX: idle */
};

typedef struct {
    mh_emu *d;
    const mh_ptx_module *m;
    const mh_ptx_func *f;
    mh_error *e;
    unsigned char *params;
    uint64_t shared_size;
    uint64_t local_stride;
    uint64_t data_addr;     /* module .global/.const segment */
    unsigned char *data_host;
    uint64_t data_size;
    uint32_t grid[3], block[3], nthreads, nwarps, dyn_smem;
    uint32_t ctaid[3], sm;  /* the block of the instruction running, and its SM */
    uint64_t clock0;        /* the SM's %clock at the launch's start */
    uint64_t now;           /* the cycle the running instruction issued at (SM time since the launch began) */
    uint64_t cost;          /* cycles the running instruction keeps its warp from issuing again */
    int faulted;
    double deadline;        /* CLOCK_MONOTONIC seconds the launch must end by, 0: none */
    uint64_t warp_insns, thread_insns;
    uint64_t writes;          /* memory writes so far: a round of mbarrier waits without one made no progress */
    const mh_ptx_insn *cur;    /* for fault messages */
    blk *cb;                /* the block of the instruction running; its memory and warps: */
    unsigned char *shared, *local, *frames;
    warp *warps;
    uint32_t *bar_arrived;
    int released;           /* a counted barrier completed: warps of the block may go on */
    /* the device: every SM, run in virtual-time order (the scheduler below) */
    vsm *sms;
    uint32_t nsms;          /* SMs that get blocks: min(SMs, blocks of the grid) */
    vsm *cs;                /* the SM running */
    uint32_t resident;      /* blocks an SM holds at once */
    uint64_t nblocks, next_block; /* blocks of the grid; the next one to dispatch (blockIdx order) */
    /* the grid-wide stall check (progress: a store, an atomic that changed memory, a barrier
     * arrival, an exit; the scheduler checks it between quanta) */
    uint64_t progress, seen_progress;
    uint32_t epoch;         /* moves on with each progress the scheduler sees */
    uint64_t progress_t, progress_insns; /* the cycle and the warp instructions when it last saw one */
    int verify;             /* a stall is being verified: polls compare the warps' registers */
    uint64_t verify_insns;  /* the warp instructions when the verification began */
    uint64_t grid_ws;       /* cooperative launch: the grid workspace's address (%envreg1/2), 0: none */
    int envreg_read;        /* the kernel read %envreg1/2 (a trap then likely means: not cooperative) */
    int slow;               /* strict mode or counting: the checks around each instruction */
    uint64_t *counts;       /* counting: MH_CT_COUNT per instruction of code */
    mh_outbuf out;          /* what the kernel printed */
    const alloc *last;      /* the allocation of the previous global access */
    const alloc **icache;   /* per instruction: the allocation it last accessed */
    /* all defined functions' code, one after another (pcs are global) */
    mh_ptx_insn *code;
    uint32_t ncode;
    uint32_t *insn_func;    /* function of each pc */
    uint32_t *base;         /* first pc of each function */
    /* per-thread parameter frames of .funcs: formal params, returns, call-sequence variables */
    uint64_t *frame_off;    /* per function, inside a thread's frame */
    uint64_t frame_bytes;   /* per thread */
    /* registers: the kernel's and its callees' [reg_lo, reg_lo + nregs) of the module's, renumbered from 0 */
    uint32_t reg_lo, nregs;
} ctx;

static inline uint64_t align16(uint64_t v) { return (v + 15) & ~15ull; }

/* ---- device memory -------------------------------------------------------- */

mh_emu *mh_emu_create(const mh_emu_opts *opts, mh_error *e)
{
    mh_emu *d = calloc(1, sizeof *d);
    if (!d) {
        mh_fail(e, MH_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    d->next_addr = GLOBAL_BASE;
    d->nsm = opts && opts->num_sms ? opts->num_sms : MH_EMU_DEFAULT_SMS;
    d->max_warp_insns = opts ? opts->max_warp_insns : 0;
    d->strict = opts ? opts->strict : 0;
    d->timer_ns = 1000000000ull; /* 1 s: far from 0, deterministic */
    return d;
}

uint32_t mh_emu_num_sms(const mh_emu *d) { return d->nsm; }

void mh_emu_destroy(mh_emu *d)
{
    if (!d) return;
    for (size_t i = 0; i < d->n; i++) free(d->a[i].host);
    free(d->a);
    free(d);
}

int mh_emu_alloc(mh_emu *d, uint64_t bytes, uint64_t *addr, mh_error *e)
{
    if (bytes == 0) bytes = 1;
    if (bytes > (1ull << 40)) return mh_fail(e, MH_E_NO_MEMORY, "emu: allocation of %llu bytes refused", (unsigned long long)bytes);
    if (d->n == d->cap) {
        size_t c = d->cap ? d->cap * 2 : 16;
        alloc *na = realloc(d->a, c * sizeof *na);
        if (!na) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
        d->a = na;
        d->cap = c;
    }
    unsigned char *h = calloc(1, bytes);
    if (!h) return mh_fail(e, MH_E_NO_MEMORY, "emu: out of host memory for %llu bytes", (unsigned long long)bytes);
    alloc *al = &d->a[d->n++];
    al->addr = d->next_addr;
    al->size = bytes;
    al->host = h;
    d->next_addr += (bytes + ALLOC_GAP + 255) & ~255ull;
    *addr = al->addr;
    return 0;
}

/* Allocation containing [a, a+n), or NULL. Allocations are sorted by address. */
static alloc *find_alloc(mh_emu *d, uint64_t a, uint64_t n)
{
    size_t lo = 0, hi = d->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (d->a[mid].addr <= a) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return NULL;
    alloc *al = &d->a[lo - 1];
    return a - al->addr <= al->size && n <= al->size - (a - al->addr) ? al : NULL;
}

int mh_emu_free(mh_emu *d, uint64_t addr, mh_error *e)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->a[i].addr == addr) {
            free(d->a[i].host);
            memmove(&d->a[i], &d->a[i + 1], (d->n - i - 1) * sizeof *d->a);
            d->n--;
            return 0;
        }
    return mh_fail(e, MH_E_BAD_ARGUMENT, "emu: 0x%llx is not an allocation", (unsigned long long)addr);
}

static int host_range(mh_emu *d, uint64_t addr, uint64_t bytes, unsigned char **p, mh_error *e)
{
    alloc *al = find_alloc(d, addr, bytes);
    if (!al) return mh_fail(e, MH_E_BAD_ARGUMENT, "emu: [0x%llx, +%llu) is not inside one allocation",
                            (unsigned long long)addr, (unsigned long long)bytes);
    *p = al->host + (addr - al->addr);
    return 0;
}

void *mh_emu_host(mh_emu *d, uint64_t addr, uint64_t bytes, mh_error *e)
{
    unsigned char *p = NULL;
    return host_range(d, addr, bytes, &p, e) ? NULL : p;
}

int mh_emu_write(mh_emu *d, uint64_t addr, const void *src, uint64_t bytes, mh_error *e)
{
    unsigned char *p = NULL;
    if (host_range(d, addr, bytes, &p, e)) return -1;
    memcpy(p, src, bytes);
    return 0;
}

int mh_emu_read(mh_emu *d, uint64_t addr, void *dst, uint64_t bytes, mh_error *e)
{
    unsigned char *p = NULL;
    if (host_range(d, addr, bytes, &p, e)) return -1;
    memcpy(dst, p, bytes);
    return 0;
}

int mh_emu_memset(mh_emu *d, uint64_t addr, int byte, uint64_t bytes, mh_error *e)
{
    unsigned char *p = NULL;
    if (host_range(d, addr, bytes, &p, e)) return -1;
    memset(p, byte, bytes);
    return 0;
}

/* ---- faults --------------------------------------------------------------- */

static void thread_of(ctx *c, const warp *w, int lane, uint32_t t[3])
{
    uint32_t lin = w->index * WARP + (uint32_t)lane;
    t[0] = lin % c->block[0];
    t[1] = lin / c->block[0] % c->block[1];
    t[2] = lin / (c->block[0] * c->block[1]);
}

static void *fault(ctx *c, const warp *w, int lane, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void *fault(ctx *c, const warp *w, int lane, const char *fmt, ...)
{
    if (c->faulted) return NULL;
    char what[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    uint32_t t[3];
    thread_of(c, w, lane, t);
    c->e->line = c->cur ? c->cur->line : 0;
    mh_fail(c->e, MH_E_KERNEL_FAULT, "%.200s:%u: %s: %s (block (%u,%u,%u), thread (%u,%u,%u))", c->m->path,
            c->cur ? c->cur->line : 0, c->f->name, what, c->ctaid[0], c->ctaid[1], c->ctaid[2], t[0], t[1], t[2]);
    c->faulted = 1;
    return NULL;
}

static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Every few thousand warp instructions: a stop request (Ctrl-C) or the launch's time limit
 * ends it, so that a kernel that never ends cannot hang the harness. */
static int poll_stop(ctx *c)
{
    if (mh_stop_requested()) {
        mh_fail(c->e, MH_E_INTERRUPTED, "interrupted (Ctrl-C) while %s ran on emu (block (%u,%u,%u))", c->f->name,
                c->ctaid[0], c->ctaid[1], c->ctaid[2]);
        c->faulted = 1;
        return 1;
    }
    if (c->deadline > 0 && monotonic_s() > c->deadline) {
        mh_fail(c->e, MH_E_TIMEOUT, "%s ran past its time limit on emu and was stopped (block (%u,%u,%u), %llu warp "
                "instructions)", c->f->name, c->ctaid[0], c->ctaid[1], c->ctaid[2], (unsigned long long)c->warp_insns);
        c->faulted = 1;
        return 1;
    }
    return 0;
}

/* Strict mode: a register read before any instruction wrote it. */
static void uninitialised(ctx *c, const warp *w, uint32_t reg, int lane)
{
    fault(c, w, lane, "read of register %s, which no instruction has written (strict mode)", c->m->reg_name[reg + c->reg_lo]);
}

/* Describes the allocation nearest to a (for out-of-range messages). */
static void nearest(mh_emu *d, uint64_t a, char *buf, size_t n)
{
    const alloc *best = NULL;
    uint64_t dist = UINT64_MAX;
    for (size_t i = 0; i < d->n; i++) {
        const alloc *al = &d->a[i];
        uint64_t dd = a < al->addr ? al->addr - a : a >= al->addr + al->size ? a - (al->addr + al->size) + 1 : 0;
        if (dd < dist) { dist = dd; best = al; }
    }
    if (!best) { snprintf(buf, n, "no allocations exist"); return; }
    if (a < best->addr)
        snprintf(buf, n, "nearest allocation [0x%llx, 0x%llx) of %llu bytes starts %llu bytes after it",
                 (unsigned long long)best->addr, (unsigned long long)(best->addr + best->size),
                 (unsigned long long)best->size, (unsigned long long)(best->addr - a));
    else
        snprintf(buf, n, "nearest allocation [0x%llx, 0x%llx) of %llu bytes ends %llu bytes before it",
                 (unsigned long long)best->addr, (unsigned long long)(best->addr + best->size),
                 (unsigned long long)best->size, (unsigned long long)(a - (best->addr + best->size)));
}

/* ---- memory access ---------------------------------------------------------- */

static const char *space_name(int s)
{
    static const char *const n[] = {"generic", "global", "shared", "local", "param", "const"};
    return s >= 0 && s < 6 ? n[s] : "?";
}

/* Host pointer for `size` bytes at `addr` in `space`, or NULL after a fault. */
static unsigned char *mem(ctx *c, const warp *w, int lane, int space, uint64_t addr, uint32_t size, int write)
{
    const char *verb = write ? "write" : "read";
    c->writes += (uint64_t)write;
    if (size > 1 && (addr & (size - 1)))
        return fault(c, w, lane, "misaligned %s %s of %u bytes at 0x%llx", space_name(space), verb, size,
                     (unsigned long long)addr);
    if (space == MH_SP_GENERIC) {
        if (addr - SHARED_WIN < WIN_SIZE) { space = MH_SP_SHARED; addr -= SHARED_WIN; }
        else if (addr - LOCAL_WIN < WIN_SIZE) {
            uint64_t lin = w->index * WARP + (uint64_t)lane;
            space = MH_SP_LOCAL;
            addr -= LOCAL_WIN;
            if (addr / (c->local_stride ? c->local_stride : 1) != lin)
                return fault(c, w, lane, "generic %s at 0x%llx is another thread's local memory", verb,
                             (unsigned long long)(addr + LOCAL_WIN));
            addr %= c->local_stride ? c->local_stride : 1;
        } else space = MH_SP_GLOBAL;
    }
    switch (space) {
    case MH_SP_GLOBAL: {
        const alloc *al = c->last;
        if (al && addr - al->addr <= al->size && size <= al->size - (addr - al->addr))
            return al->host + (addr - al->addr);
        al = c->last = find_alloc(c->d, addr, size);
        if (al) return al->host + (addr - al->addr);
        char nb[200];
        nearest(c->d, addr, nb, sizeof nb);
        return fault(c, w, lane, "out-of-range global %s of %u bytes at 0x%llx: %s", verb, size,
                     (unsigned long long)addr, nb);
    }
    case MH_SP_SHARED:
        if (addr < c->shared_size && size <= c->shared_size - addr) return c->shared + addr;
        return fault(c, w, lane, "out-of-range shared %s of %u bytes at offset 0x%llx: the block has %llu bytes of "
                     "shared memory (static + dynamic)", verb, size, (unsigned long long)addr,
                     (unsigned long long)c->shared_size);
    case MH_SP_LOCAL: {
        uint64_t lin = w->index * WARP + (uint64_t)lane;
        if (addr < c->local_stride && size <= c->local_stride - addr) return c->local + lin * c->local_stride + addr;
        return fault(c, w, lane, "out-of-range local %s of %u bytes at offset 0x%llx (%llu bytes per thread)", verb,
                     size, (unsigned long long)addr, (unsigned long long)c->local_stride);
    }
    case MH_SP_PARAM:
        if (!write && addr < c->f->param_bytes && size <= c->f->param_bytes - addr) return c->params + addr;
        return fault(c, w, lane, "param %s of %u bytes at offset %llu outside the %u parameter bytes", verb, size,
                     (unsigned long long)addr, c->f->param_bytes);
    case MH_SP_CONST:
        if (!write && addr < c->data_size && size <= c->data_size - addr) return c->data_host + addr;
        return fault(c, w, lane, "const %s of %u bytes at offset %llu outside the module's constants", verb, size,
                     (unsigned long long)addr);
    default:
        return fault(c, w, lane, "access to an unknown state space");
    }
}

/* The common case inline: an aligned global (or generic, below the windows)
 * access inside the allocation of the previous one. */
static inline unsigned char *mem_fast(ctx *c, const warp *w, int lane, int space, uint64_t addr, uint32_t size,
                                      int write)
{
    /* each instruction remembers the allocation it last touched */
    const alloc **slot = &c->icache[c->cur - c->code];
    const alloc *al = *slot;
    if (al && (space == MH_SP_GLOBAL || (space == MH_SP_GENERIC && addr < SHARED_WIN)) && !(addr & (size - 1)) &&
        addr - al->addr <= al->size && size <= al->size - (addr - al->addr))
        return al->host + (addr - al->addr);
    unsigned char *p = mem(c, w, lane, space, addr, size, write);
    if (p && (space == MH_SP_GLOBAL || (space == MH_SP_GENERIC && addr < SHARED_WIN))) *slot = c->last;
    return p;
}

/* ---- values --------------------------------------------------------------- */

#define REG(W_, R_, L_) ((W_)->r[(size_t)(R_) * WARP + (size_t)(L_)])

static inline uint64_t mask_bits(int bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }
static inline int64_t sext(uint64_t v, int bits)
{
    return bits >= 64 || bits <= 0 ? (int64_t)v : (int64_t)(v << (64 - bits)) >> (64 - bits);
}

static uint64_t sreg(ctx *c, const warp *w, uint32_t id, int lane)
{
    uint32_t lin = w->index * WARP + (uint32_t)lane, t[3];
    thread_of(c, w, lane, t);
    uint64_t clock = c->clock0 + c->now;
    uint64_t timer = c->d->timer_ns + (uint64_t)((double)c->now / MH_EMU_CLOCK_GHZ);
    (void)lin;
    switch (id) {
    case MH_SR_TID_X: return t[0];
    case MH_SR_TID_Y: return t[1];
    case MH_SR_TID_Z: return t[2];
    case MH_SR_NTID_X: return c->block[0];
    case MH_SR_NTID_Y: return c->block[1];
    case MH_SR_NTID_Z: return c->block[2];
    case MH_SR_CTAID_X: return c->ctaid[0];
    case MH_SR_CTAID_Y: return c->ctaid[1];
    case MH_SR_CTAID_Z: return c->ctaid[2];
    case MH_SR_NCTAID_X: return c->grid[0];
    case MH_SR_NCTAID_Y: return c->grid[1];
    case MH_SR_NCTAID_Z: return c->grid[2];
    case MH_SR_LANEID: return (uint64_t)lane;
    case MH_SR_WARPID: return w->index;
    case MH_SR_NWARPID: return c->nwarps;
    case MH_SR_SMID: return c->sm;
    case MH_SR_NSMID: return c->d->nsm;
    case MH_SR_CLOCK: return clock & 0xffffffffu;
    case MH_SR_CLOCK_HI: return clock >> 32;
    case MH_SR_CLOCK64: return clock;
    case MH_SR_GLOBALTIMER: return timer;
    case MH_SR_GLOBALTIMER_LO: return timer & 0xffffffffu;
    case MH_SR_GLOBALTIMER_HI: return timer >> 32;
    case MH_SR_LANEMASK_EQ: return 1u << lane;
    case MH_SR_LANEMASK_LT: return (1u << lane) - 1;
    case MH_SR_LANEMASK_LE: return (2ull << lane) - 1;
    case MH_SR_LANEMASK_GT: return ~((2ull << lane) - 1) & 0xffffffffu;
    case MH_SR_LANEMASK_GE: return ~((1ull << lane) - 1) & 0xffffffffu;
    case MH_SR_DYNAMIC_SMEM_SIZE: return c->dyn_smem;
    case MH_SR_TOTAL_SMEM_SIZE: return c->shared_size;
    case MH_SR_AGGR_SMEM_SIZE: return c->shared_size; /* no reserved shared memory on emu */
    case MH_SR_ENVREG0 + 1: c->envreg_read = 1; return c->grid_ws >> 32;         /* the grid workspace, as the */
    case MH_SR_ENVREG0 + 2: c->envreg_read = 1; return c->grid_ws & 0xffffffffu; /* driver hands it over */
    default: return 0;
    }
}

/* Address of variable v as a kernel sees it (state-space address). */
static uint64_t sym_addr(ctx *c, int v)
{
    const mh_ptx_var *var = &c->m->vars[v];
    if (var->space == MH_SP_GLOBAL) return c->data_addr + var->offset;
    return var->offset; /* shared, local, const: offsets in their space */
}

static inline uint64_t val(ctx *c, const warp *w, const mh_ptx_opnd *o, int lane)
{
    uint64_t v;
    if (__builtin_expect(o->kind == MH_OPK_REG && !o->neg, 1)) return REG(w, o->reg, lane);
    switch (o->kind) {
    case MH_OPK_REG: v = REG(w, o->reg, lane); break;
    case MH_OPK_IMM: v = (uint64_t)o->imm; break;
    case MH_OPK_SREG: v = sreg(c, w, o->reg, lane); break;
    case MH_OPK_SYM: v = sym_addr(c, o->sym); break;
    default: v = 0;
    }
    return o->neg ? !v : v;
}

static inline void put(ctx *c, warp *w, uint32_t reg, int lane, uint64_t v, mh_ptx_type t)
{
    (void)c;
    int bits = mh_ptx_type_bits(t);
    if (t == MH_PT_PRED) v = v != 0;
    else if (mh_ptx_type_is_signed(t)) v = (uint64_t)sext(v, bits);
    else v &= mask_bits(bits);
    REG(w, reg, lane) = v;
}

static inline double fget(uint64_t v, mh_ptx_type t)
{
    switch (t) {
    case MH_PT_F32: return mh_f32_from_bits((uint32_t)v);
    case MH_PT_F64: return mh_f64_from_bits(v);
    case MH_PT_F16: return mh_half_to_float((uint16_t)v);
    case MH_PT_BF16: return mh_bf16_to_float((uint16_t)v);
    default: return 0;
    }
}

static inline uint64_t fput(double d, mh_ptx_type t)
{
    switch (t) {
    case MH_PT_F32: return mh_f32_bits((float)d);
    case MH_PT_F64: return mh_f64_bits(d);
    case MH_PT_F16: return mh_double_to_half(d);
    case MH_PT_BF16: return mh_double_to_bf16(d);
    default: return 0;
    }
}

/* ---- arithmetic ------------------------------------------------------------ */

static uint64_t int_op(const mh_ptx_insn *in, uint64_t a, uint64_t b, uint64_t cc)
{
    mh_ptx_type t = (mh_ptx_type)in->type;
    int bits = mh_ptx_type_bits(t), sgn = mh_ptx_type_is_signed(t);
    int64_t sa = sext(a, bits), sb = sext(b, bits);
    uint64_t ua = a & mask_bits(bits), ub = b & mask_bits(bits);
    switch (in->op) {
    case MH_OP_ADD:
        if ((in->mods & MH_MOD_SAT) && t == MH_PT_S32) {
            int64_t r = sa + sb;
            return (uint64_t)(r > INT32_MAX ? INT32_MAX : r < INT32_MIN ? INT32_MIN : r);
        }
        return a + b;
    case MH_OP_SUB:
        if ((in->mods & MH_MOD_SAT) && t == MH_PT_S32) {
            int64_t r = sa - sb;
            return (uint64_t)(r > INT32_MAX ? INT32_MAX : r < INT32_MIN ? INT32_MIN : r);
        }
        return a - b;
    case MH_OP_MUL:
    case MH_OP_MAD: {
        uint64_t r;
        if (in->mods & MH_MOD_WIDE) r = sgn ? (uint64_t)(sa * sb) : ua * ub;
        else if (in->mods & MH_MOD_HI) {
            if (bits == 64) r = sgn ? (uint64_t)(((__int128)sa * sb) >> 64) : (uint64_t)(((unsigned __int128)ua * ub) >> 64);
            else r = sgn ? (uint64_t)((sa * sb) >> bits) : (ua * ub) >> bits;
        } else r = a * b;
        return in->op == MH_OP_MAD ? r + cc : r;
    }
    case MH_OP_MUL24:
    case MH_OP_MAD24: {
        uint64_t r = sgn ? (uint64_t)(sext(a, 24) * sext(b, 24)) : (ua & 0xffffff) * (ub & 0xffffff);
        if (in->mods & MH_MOD_HI) r >>= 16;
        return in->op == MH_OP_MAD24 ? r + cc : r;
    }
    case MH_OP_DIV:
        if (sgn) return sb == 0 ? ~0ull : (sa == INT64_MIN && sb == -1) ? (uint64_t)sa : (uint64_t)(sa / sb);
        return ub == 0 ? ~0ull : ua / ub;
    case MH_OP_REM:
        if (sgn) return sb == 0 ? (uint64_t)sa : (sb == -1) ? 0 : (uint64_t)(sa % sb);
        return ub == 0 ? ua : ua % ub;
    case MH_OP_MIN: return sgn ? (uint64_t)(sa < sb ? sa : sb) : (ua < ub ? ua : ub);
    case MH_OP_MAX: return sgn ? (uint64_t)(sa > sb ? sa : sb) : (ua > ub ? ua : ub);
    case MH_OP_ABS: return (uint64_t)(sa < 0 ? -sa : sa);
    case MH_OP_NEG: return (uint64_t)-sa;
    case MH_OP_AND: return t == MH_PT_PRED ? (a && b) : a & b;
    case MH_OP_OR: return t == MH_PT_PRED ? (a || b) : a | b;
    case MH_OP_XOR: return t == MH_PT_PRED ? ((a != 0) ^ (b != 0)) : a ^ b;
    case MH_OP_NOT: return t == MH_PT_PRED ? !a : ~a;
    case MH_OP_CNOT: return ua == 0;
    case MH_OP_SHL: { uint64_t s = b & 0xffffffffu; return s >= (uint64_t)bits ? 0 : a << s; }
    case MH_OP_SHR: {
        uint64_t s = b & 0xffffffffu;
        if (sgn) return (uint64_t)(s >= (uint64_t)bits ? (sa < 0 ? -1 : 0) : sa >> s);
        return s >= (uint64_t)bits ? 0 : ua >> s;
    }
    case MH_OP_CLZ: return bits == 64 ? (ua ? (uint64_t)__builtin_clzll(ua) : 64) : (ua ? (uint64_t)__builtin_clz((uint32_t)ua) : 32);
    case MH_OP_POPC: return (uint64_t)__builtin_popcountll(ua);
    case MH_OP_BREV: {
        uint64_t r = 0;
        for (int i = 0; i < bits; i++) r |= ((ua >> i) & 1) << (bits - 1 - i);
        return r;
    }
    case MH_OP_BFE: {
        uint32_t pos = (uint32_t)b & 0xff, len = (uint32_t)cc & 0xff;
        if (len == 0) return 0;
        uint64_t field = pos >= (uint32_t)bits ? 0 : ua >> pos;
        if (len < 64) field &= (1ull << len) - 1;
        if (sgn) {
            uint32_t msb = pos + len - 1 >= (uint32_t)bits ? (uint32_t)bits - 1 : pos + len - 1;
            int sbit = (int)((ua >> msb) & 1);
            if (len >= (uint32_t)bits || pos + len > (uint32_t)bits) {
                /* field runs past the top: sign fill from the source's sign bit */
                uint32_t keep = pos >= (uint32_t)bits ? 0 : (uint32_t)bits - pos;
                field = keep >= 64 ? ua >> pos : (ua >> pos) & ((1ull << keep) - 1);
                if (sbit) field |= ~0ull << keep;
                return field;
            }
            if (sbit) field |= ~0ull << len;
        }
        return field;
    }
    default: return 0;
    }
}

/* the op's letter for mh_round_op, or 0 when it has no rounding modifier */
static int round_letter(int op)
{
    switch (op) {
    case MH_OP_ADD: return 'a';
    case MH_OP_SUB: return 's';
    case MH_OP_MUL: return 'm';
    case MH_OP_FMA: case MH_OP_MAD: return 'f';
    case MH_OP_DIV: return 'd';
    case MH_OP_SQRT: return 'q';
    case MH_OP_RCP: return 'r';
    default: return 0;
    }
}

static inline double flt_op_plain(const mh_ptx_insn *in, double a, double b, double cc);

/* .ftz and directed rounding: kept out of the interpreter's hot path */
static __attribute__((noinline, cold)) double flt_op_special(const mh_ptx_insn *in, double a, double b, double cc)
{
    if ((in->mods & MH_MOD_FTZ) && in->type == MH_PT_F16) {
        /* f16 .ftz: subnormal inputs are zeros, and a result that rounds to a subnormal half */
        double r = flt_op_plain(in, mh_ftz(a, 0x1p-14), mh_ftz(b, 0x1p-14), mh_ftz(cc, 0x1p-14));
        uint16_t h = mh_double_to_half(r);
        return (h & 0x7c00) == 0 && (h & 0x3ff) ? copysign(0.0, r) : r;
    }
    int ftz = (in->mods & MH_MOD_FTZ) && in->type == MH_PT_F32;
    if (ftz) { a = mh_ftz32(a); b = mh_ftz32(b); cc = mh_ftz32(cc); }
    double r;
    if (in->rnd >= MH_RND_RZ && in->rnd <= MH_RND_RP && round_letter(in->op)) {
        /* directed rounding: only f32/f64 get here (mh_emu_check_module refuses the rest) */
        r = mh_round_op(round_letter(in->op), in->type == MH_PT_F64, in->rnd, a, b, cc);
        if (in->mods & MH_MOD_SAT) r = isnan(r) ? 0 : r < 0 ? 0 : r > 1 ? 1 : r;
    } else {
        r = flt_op_plain(in, a, b, cc);
    }
    return ftz ? mh_ftz32(r) : r;
}

static inline int flt_special(const mh_ptx_insn *in)
{
    return (in->mods & MH_MOD_FTZ) || (in->rnd >= MH_RND_RZ && in->rnd <= MH_RND_RP);
}

static inline double flt_op(const mh_ptx_insn *in, double a, double b, double cc)
{
    return flt_special(in) ? flt_op_special(in, a, b, cc) : flt_op_plain(in, a, b, cc);
}

static inline double flt_op_plain(const mh_ptx_insn *in, double a, double b, double cc)
{
    double r;
    switch (in->op) {
    /* a sum of two halves is exact in f64 or, when their bits lie more than 53
     * apart, cannot sit on a tie of the half type: one rounding (fput's) */
    case MH_OP_ADD: r = a + b; break;
    case MH_OP_SUB: r = a - b; break;
    case MH_OP_MUL: r = a * b; break;
    case MH_OP_FMA:
    case MH_OP_MAD:
        r = in->type == MH_PT_F64 ? fma(a, b, cc)
            : in->type == MH_PT_F32 ? (double)fmaf((float)a, (float)b, (float)cc)
            : mh_fma_odd(a, b, cc); /* f16/bf16: the caller's rounding to the half is the only one */
        break;
    case MH_OP_DIV: r = a / b; break;
    case MH_OP_MIN: r = isnan(a) ? b : isnan(b) ? a : (a < b || (a == b && signbit(a))) ? a : b; break;
    case MH_OP_MAX: r = isnan(a) ? b : isnan(b) ? a : (a > b || (a == b && !signbit(a))) ? a : b; break;
    case MH_OP_ABS: r = fabs(a); break;
    case MH_OP_NEG: r = -a; break;
    case MH_OP_SQRT: r = sqrt(a); break;
    case MH_OP_RSQRT: r = 1.0 / sqrt(a); break;
    case MH_OP_RCP: r = 1.0 / a; break;
    case MH_OP_EX2: r = exp2(a); break;
    case MH_OP_LG2: r = log2(a); break;
    case MH_OP_SIN: r = sin(a); break;
    case MH_OP_COS: r = cos(a); break;
    case MH_OP_TANH: r = tanh(a); break;
    case MH_OP_COPYSIGN: r = copysign(b, a); break;
    default: r = 0;
    }
    if (in->type == MH_PT_F32 && in->op != MH_OP_FMA && in->op != MH_OP_MAD) r = (float)r;
    if (in->mods & MH_MOD_SAT) r = isnan(r) ? 0 : r < 0 ? 0 : r > 1 ? 1 : r;
    return r;
}

/* setp/set: a comparison result combined with predicate p (BoolOp 1 and, 2 or, 3 xor) */
static inline int bool_op(int op, int r, int p) { return op == 1 ? r && p : op == 2 ? r || p : r ^ p; }

/* What set writes for true into a destination (or a half) of type t: 1.0 of a
 * float type, all ones otherwise. */
static uint64_t set_true(mh_ptx_type t)
{
    return t == MH_PT_F32 ? mh_f32_bits(1.0f) : t == MH_PT_F16 ? 0x3c00 : t == MH_PT_BF16 ? 0x3f80 : mask_bits(mh_ptx_type_bits(t));
}

static int compare(mh_ptx_cmp cmp, mh_ptx_type t, uint64_t a, uint64_t b, int ftz)
{
    if (mh_ptx_type_is_float(t)) {
        double x = fget(a, t), y = fget(b, t);
        if (ftz && t == MH_PT_F32) { x = mh_ftz32(x); y = mh_ftz32(y); }
        if (ftz && t == MH_PT_F16) { /* subnormal halves compare as zeros */
            if (fabs(x) < 0x1p-14) x = copysign(0.0, x);
            if (fabs(y) < 0x1p-14) y = copysign(0.0, y);
        }
        int un = isnan(x) || isnan(y);
        switch (cmp) {
        case MH_CMP_EQ: return !un && x == y;
        case MH_CMP_NE: return !un && x != y;
        case MH_CMP_LT: return !un && x < y;
        case MH_CMP_LE: return !un && x <= y;
        case MH_CMP_GT: return !un && x > y;
        case MH_CMP_GE: return !un && x >= y;
        case MH_CMP_EQU: return un || x == y;
        case MH_CMP_NEU: return un || x != y;
        case MH_CMP_LTU: return un || x < y;
        case MH_CMP_LEU: return un || x <= y;
        case MH_CMP_GTU: return un || x > y;
        case MH_CMP_GEU: return un || x >= y;
        case MH_CMP_NUM: return !un;
        case MH_CMP_NAN: return un;
        default: return 0;
        }
    }
    int bits = mh_ptx_type_bits(t);
    int64_t sa = sext(a, bits), sb = sext(b, bits);
    uint64_t ua = a & mask_bits(bits), ub = b & mask_bits(bits);
    int sgn = mh_ptx_type_is_signed(t);
    switch (cmp) {
    case MH_CMP_EQ: return ua == ub;
    case MH_CMP_NE: return ua != ub;
    case MH_CMP_LT: return sgn ? sa < sb : ua < ub;
    case MH_CMP_LE: return sgn ? sa <= sb : ua <= ub;
    case MH_CMP_GT: return sgn ? sa > sb : ua > ub;
    case MH_CMP_GE: return sgn ? sa >= sb : ua >= ub;
    case MH_CMP_LO: return ua < ub;
    case MH_CMP_LS: return ua <= ub;
    case MH_CMP_HI: return ua > ub;
    case MH_CMP_HS: return ua >= ub;
    default: return 0;
    }
}

static double round_int(double x, int rnd)
{
    switch (rnd) {
    case MH_RND_RNI: return nearbyint(x);
    case MH_RND_RZI: return trunc(x);
    case MH_RND_RMI: return floor(x);
    case MH_RND_RPI: return ceil(x);
    default: return x;
    }
}

/* d to f16 (bf = 0) or bf16 under .rz/.rm/.rp: the nearest half, moved one
 * step toward d's other side when it lies past d in the mode's direction */
static uint16_t half_directed(double d, int rnd, int bf)
{
    uint16_t h = bf ? mh_double_to_bf16(d) : mh_double_to_half(d);
    double v = bf ? mh_bf16_to_float(h) : mh_half_to_float(h);
    if (isnan(d) || v == d) return h;
    int move = rnd == MH_RND_RZ ? fabs(v) > fabs(d) : rnd == MH_RND_RM ? v > d : v < d;
    if (!move) return h;
    int toward_minus = v > d, negative = (h & 0x8000) != 0;
    /* sign-magnitude bits: a larger magnitude is one more */
    return (uint16_t)(toward_minus == negative ? h + 1 : h - 1);
}

/* cvt: value a of type `from` converted to `to`. */
static uint64_t convert(const mh_ptx_insn *in, uint64_t a)
{
    mh_ptx_type to = (mh_ptx_type)in->type, from = (mh_ptx_type)in->type2;
    int tb = mh_ptx_type_bits(to), fb = mh_ptx_type_bits(from);
    if (!mh_ptx_type_is_float(from) && !mh_ptx_type_is_float(to)) {
        int64_t sv = mh_ptx_type_is_signed(from) ? sext(a, fb) : (int64_t)(a & mask_bits(fb));
        int from_unsigned_big = !mh_ptx_type_is_signed(from) && fb == 64 && (a >> 63);
        if (in->mods & MH_MOD_SAT) {
            if (mh_ptx_type_is_signed(to)) {
                int64_t lo = -(int64_t)(1ull << (tb - 1)), hi = (int64_t)((1ull << (tb - 1)) - 1);
                if (from_unsigned_big || sv > hi) return (uint64_t)hi;
                if (sv < lo) return (uint64_t)lo;
            } else {
                uint64_t hi = mask_bits(tb);
                if (!from_unsigned_big && sv < 0) return 0;
                if (from_unsigned_big ? a > hi : (uint64_t)sv > hi) return hi;
            }
        }
        return (uint64_t)sv;
    }
    int ftz = (in->mods & MH_MOD_FTZ) != 0;
    int directed = in->rnd >= MH_RND_RZ && in->rnd <= MH_RND_RP;
    if (mh_ptx_type_is_float(from) && !mh_ptx_type_is_float(to)) {
        double x = fget(a, from);
        if (ftz && from == MH_PT_F32) x = mh_ftz32(x);
        x = round_int(x, in->rnd ? in->rnd : MH_RND_RZI);
        if (isnan(x)) return 0;
        if (mh_ptx_type_is_signed(to)) {
            double lo = -ldexp(1, tb - 1), hi = ldexp(1, tb - 1) - 1;
            return (uint64_t)(int64_t)(x < lo ? lo : x > hi ? hi : x);
        }
        double hi = ldexp(1, tb) - 1;
        if (x <= 0) return 0;
        if (x >= hi) return mask_bits(tb);
        return (uint64_t)x;
    }
    if (!mh_ptx_type_is_float(from)) {
        int sgn = mh_ptx_type_is_signed(from);
        uint64_t v = sgn ? (uint64_t)sext(a, fb) : a & mask_bits(fb); /* the integer in 64 bits */
        double x = sgn ? (double)(int64_t)v : (double)v;                /* exact below 2^53 */
        if (directed && (to == MH_PT_F16 || to == MH_PT_BF16)) return half_directed(x, in->rnd, to == MH_PT_BF16);
        if (directed) return fput(mh_round_int(in->rnd, to == MH_PT_F32, sgn, v), to);
        if (fb == 64 && to == MH_PT_F32) /* one rounding, not two through double */
            return mh_f32_bits(sgn ? (float)(int64_t)v : (float)v);
        return fput(x, to);
    }
    double x = fget(a, from);
    if (ftz && from == MH_PT_F32) x = mh_ftz32(x);
    if (in->rnd >= MH_RND_RNI) x = round_int(x, in->rnd);
    if (directed && from == MH_PT_F64 && to == MH_PT_F32) x = mh_round_narrow(in->rnd, x);
    if (directed && (to == MH_PT_F16 || to == MH_PT_BF16) && !(in->mods & MH_MOD_SAT))
        return half_directed(x, in->rnd, to == MH_PT_BF16);
    if (in->mods & MH_MOD_SAT) x = isnan(x) ? 0 : x < 0 ? 0 : x > 1 ? 1 : x;
    if (ftz && to == MH_PT_F32) x = mh_ftz32((float)x);
    return fput(x, to);
}

static uint32_t prmt(uint32_t a, uint32_t b, uint32_t sel)
{
    uint64_t src = (uint64_t)b << 32 | a;
    uint32_t r = 0;
    for (int i = 0; i < 4; i++) {
        uint32_t s = (sel >> (4 * i)) & 0xf;
        uint8_t byte = (uint8_t)(src >> (8 * (s & 7)));
        if (s & 8) byte = (byte & 0x80) ? 0xff : 0;
        r |= (uint32_t)byte << (8 * i);
    }
    return r;
}

/* ---- one instruction for the lanes in `mask` ------------------------------- */

static inline uint64_t ld_elem(const unsigned char *p, int bytes)
{
    switch (bytes) { /* fixed sizes: single loads, no memcpy call */
    case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
    case 8: { uint64_t v; memcpy(&v, p, 8); return v; }
    case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
    default: return *p;
    }
}

static int elem_bytes(mh_ptx_type t)
{
    int b = mh_ptx_type_bits(t) / 8;
    return b ? b : 1;
}

static uint64_t address(ctx *c, const warp *w, const mh_ptx_opnd *o, int lane)
{
    uint64_t base = 0;
    if (o->reg != UINT32_MAX) base = REG(w, o->reg, lane);
    else if (o->sym >= 0) base = sym_addr(c, o->sym);
    else if (o->param >= 0) base = c->f->params[o->param].offset;
    return base + (uint64_t)o->imm;
}

/* Frame regions of function fi for one thread: formal params, returns,
 * the .param variables of its call sequences. */
static unsigned char *frame(ctx *c, const warp *w, int lane, uint32_t fi, int part)
{
    const mh_ptx_func *F = &c->m->funcs[fi];
    uint64_t off = c->frame_off[fi];
    if (part >= 1) off += align16(F->param_bytes);
    if (part >= 2) off += align16(F->ret_bytes);
    return c->frames + (w->index * WARP + (uint64_t)lane) * c->frame_bytes + off;
}

/* Host pointer of a .param access: kernel parameters, a .func's formal
 * parameters or returns, or a call-sequence variable. */
static unsigned char *param_ptr(ctx *c, const warp *w, int lane, const mh_ptx_opnd *o, uint32_t size, int write)
{
    uint32_t fi = c->insn_func[c->cur - c->code];
    const mh_ptx_func *F = &c->m->funcs[fi];
    uint64_t off = (uint64_t)o->imm, limit;
    unsigned char *base;
    const char *what;
    if (o->sym >= 0) {
        const mh_ptx_var *v = &c->m->vars[o->sym];
        if (v->space != MH_SP_PARAM || v->func < 0) /* ld.param [a_shared_variable] */
            return fault(c, w, lane, "%s.param of %s, which is a %s variable, not a parameter", write ? "st" : "ld",
                         v->name, space_name(v->space));
        base = frame(c, w, lane, (uint32_t)v->func, 2) + v->offset;
        limit = v->size;
        what = v->name;
    } else if (o->param >= 0 && F->is_entry) {
        if (write) return fault(c, w, lane, "write to a kernel parameter");
        base = c->params + F->params[o->param].offset;
        limit = F->params[o->param].size;
        what = F->params[o->param].name;
    } else if (o->param >= 0) {
        base = frame(c, w, lane, fi, 0) + F->params[o->param].offset;
        limit = F->params[o->param].size;
        what = F->params[o->param].name;
    } else if (o->param <= -2) {
        const mh_ptx_param *r = &F->rets[-2 - o->param];
        base = frame(c, w, lane, fi, 1) + r->offset;
        limit = r->size;
        what = r->name;
    } else {
        return fault(c, w, lane, ".param access through a register is not supported");
    }
    if (off > limit || size > limit - off)
        return fault(c, w, lane, "%s of %u bytes at offset %llu of .param %s (%llu bytes)", write ? "write" : "read", size,
                     (unsigned long long)off, what, (unsigned long long)limit);
    return base + off;
}

static uint64_t atomic(mh_ptx_aop op, mh_ptx_type t, unsigned char *p, uint64_t b, uint64_t cv)
{
    int bytes = elem_bytes(t), bits = bytes * 8;
    uint64_t old = ld_elem(p, bytes), r = old;
    int sgn = mh_ptx_type_is_signed(t);
    switch (op) {
    case AOP_ADD:
        if (mh_ptx_type_is_float(t)) r = fput(fget(old, t) + fget(b, t), t);
        else r = old + b;
        break;
    case AOP_MIN: r = sgn ? (sext(old, bits) < sext(b, bits) ? old : b) : ((old & mask_bits(bits)) < (b & mask_bits(bits)) ? old : b); break;
    case AOP_MAX: r = sgn ? (sext(old, bits) > sext(b, bits) ? old : b) : ((old & mask_bits(bits)) > (b & mask_bits(bits)) ? old : b); break;
    case AOP_INC: r = (old & mask_bits(bits)) >= (b & mask_bits(bits)) ? 0 : old + 1; break;
    case AOP_DEC: r = ((old & mask_bits(bits)) == 0 || (old & mask_bits(bits)) > (b & mask_bits(bits))) ? b : old - 1; break;
    case AOP_AND: r = old & b; break;
    case AOP_OR: r = old | b; break;
    case AOP_XOR: r = old ^ b; break;
    case AOP_EXCH: r = b; break;
    case AOP_CAS: r = (old & mask_bits(bits)) == (b & mask_bits(bits)) ? cv : old; break;
    }
    memcpy(p, &r, (size_t)bytes);
    return old;
}

/* An mbarrier object (8 bytes in shared memory): its phase, the arrivals
 * pending and expected per phase, and the transaction bytes still to come
 * (a 21-bit two's-complement field: complete_tx may come before expect_tx).
 * The layout is emu's own; kernels treat the object as opaque. */
#define MH_MB_FIELD 0x1FFFFFull
typedef struct { int phase; int64_t pending, expected, tx; } mbar;

static mbar mb_load(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    int64_t tx = (int64_t)(v >> 42 & MH_MB_FIELD);
    if (tx & 0x100000) tx -= 0x200000;
    return (mbar){.phase = (int)(v >> 63), .pending = (int64_t)(v & MH_MB_FIELD), .expected = (int64_t)(v >> 21 & MH_MB_FIELD),
                  .tx = tx};
}

static void mb_store(unsigned char *p, mbar b)
{
    uint64_t v = (uint64_t)b.phase << 63 | ((uint64_t)b.tx & MH_MB_FIELD) << 42 | ((uint64_t)b.expected & MH_MB_FIELD) << 21 |
                 ((uint64_t)b.pending & MH_MB_FIELD);
    memcpy(p, &v, 8);
}

/* mbarrier.arrive / expect_tx / complete_tx / test_wait / try_wait and
 * cp.async.mbarrier.arrive (emu's cp.async copies at issue, so it arrives at
 * once).  A phase completes when no arrival and no transaction byte is
 * pending; a wait that finds its phase not complete sets its predicate false
 * and the lane yields, so the other warps run before it tries again. */
static int exec_mbarrier(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t emask)
{
    const mh_ptx_opnd *o = in->o;
    int k = in->cmp, ai = k == MH_MB_EXPECT_TX || k == MH_MB_COMPLETE_TX || k == MH_MB_CP_ASYNC_ARRIVE ? 0 : 1;
    c->cost += 2;
    for (int l = 0; l < WARP; l++) {
        if (!(emask >> l & 1)) continue;
        int wait = k == MH_MB_TEST_WAIT || k == MH_MB_TRY_WAIT;
        unsigned char *p = mem(c, w, l, in->space ? in->space : MH_SP_SHARED, address(c, w, &o[ai], l), 8, !wait);
        if (!p) return -1;
        mbar b = mb_load(p);
        int64_t arrive = 0;
        switch (k) {
        case MH_MB_ARRIVE: arrive = in->nopnds > 2 ? (int64_t)val(c, w, &o[2], l) : 1; break;
        case MH_MB_ARRIVE_EXPECT_TX: b.tx += (int64_t)val(c, w, &o[2], l); arrive = 1; break;
        case MH_MB_EXPECT_TX: b.tx += (int64_t)val(c, w, &o[1], l); break;
        case MH_MB_COMPLETE_TX: b.tx -= (int64_t)val(c, w, &o[1], l); break;
        case MH_MB_CP_ASYNC_ARRIVE: arrive = (in->mods & MH_MOD_NOINC) ? 1 : 0; break; /* without .noinc: +1 then -1 */
        default: { /* test_wait / try_wait: is the phase of the state (or of the parity) complete? */
            uint64_t s = val(c, w, &o[2], l);
            int waited = (in->mods & MH_MOD_PARITY) ? (int)(s & 1) : (int)(s >> 63);
            int done = waited != b.phase;
            put(c, w, o[0].reg, l, (uint64_t)done, MH_PT_PRED);
            if (!done) w->st[l] = LANE_YIELD; /* its pc moves on: the loop around it asks again */
            continue;
        }
        }
        if (k == MH_MB_ARRIVE || k == MH_MB_ARRIVE_EXPECT_TX) { /* the state: the phase arrived at */
            if (o[0].kind == MH_OPK_REG) put(c, w, o[0].reg, l, (uint64_t)b.phase << 63, MH_PT_B64);
        }
        b.pending -= arrive;
        if (b.pending < 0)
            return fault(c, w, l, "mbarrier: more arrivals than the %lld it expects per phase",
                         (long long)b.expected), -1;
        if (b.tx > 0xFFFFF || b.tx < -0xFFFFF)
            return fault(c, w, l, "mbarrier: transaction count %lld out of range", (long long)b.tx), -1;
        if (b.pending == 0 && b.tx == 0 && (arrive || k == MH_MB_COMPLETE_TX)) { /* the phase completes */
            b.phase ^= 1;
            b.pending = b.expected;
        }
        mb_store(p, b);
    }
    return 0;
}

/* bar.sync a, b (wait) and bar.arrive a, b (go on): b threads, a multiple of
 * 32, arriving at barrier a release the ones waiting there. */
static int bar_counted(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t emask)
{
    int l0 = __builtin_ctz(emask);
    uint64_t id = val(c, w, &in->o[0], l0);
    uint64_t need = in->nopnds > 1 ? val(c, w, &in->o[1], l0) : c->nthreads;
    if (id >= NUM_BARRIERS) return fault(c, w, l0, "barrier %llu: there are %d", (unsigned long long)id, NUM_BARRIERS), -1;
    if (need == 0 || need % WARP || need > (uint64_t)c->nwarps * WARP)
        return fault(c, w, l0, "barrier %llu: a thread count of %llu (a multiple of 32, at most the block's %u)",
                     (unsigned long long)id, (unsigned long long)need, c->nwarps * WARP), -1;
    int wait = in->cmp != 2;
    for (int l = 0; l < WARP; l++)
        if (emask >> l & 1) {
            c->bar_arrived[id]++;
            if (wait) {
                w->st[l] = LANE_NBARRIER;
                w->bar[l] = (uint8_t)id;
            }
        }
    if (c->bar_arrived[id] < need) return 0;
    c->bar_arrived[id] = 0; /* complete: everyone waiting there goes on */
    for (uint32_t i = 0; i < c->nwarps; i++)
        for (int l = 0; l < WARP; l++)
            if (c->warps[i].st[l] == LANE_NBARRIER && c->warps[i].bar[l] == id) c->warps[i].st[l] = LANE_ACTIVE;
    c->released = 1; /* the scheduler wakes the warps that have lanes going on */
    return 0;
}

/* ---- calls without a body: printf and assert ---------------------------------- */

typedef struct {
    ctx *c;
    const warp *w;
    int lane;
    uint64_t args;          /* the argument buffer's address */
} printf_ctx;

static int pf_arg(void *p, uint64_t off, void *dst, uint32_t size)
{
    printf_ctx *x = p;
    const unsigned char *s = mem(x->c, x->w, x->lane, MH_SP_GENERIC, x->args + off, size, 0);
    if (!s) return -1;
    memcpy(dst, s, size);
    return 0;
}

/* a NUL-terminated string at a generic address, cut at cap - 1 bytes */
static int pf_str(void *p, uint64_t addr, char *dst, size_t cap)
{
    printf_ctx *x = p;
    size_t i = 0;
    for (; i + 1 < cap; i++) {
        const unsigned char *s = mem(x->c, x->w, x->lane, MH_SP_GENERIC, addr + i, 1, 0);
        if (!s) return -1;
        if (!*s) break;
        dst[i] = (char)*s;
    }
    dst[i] = 0;
    return 0;
}

/* argument k of a call (a .param variable of the caller's call sequence), up to 8 bytes */
static uint64_t call_arg(ctx *c, const warp *w, int lane, const mh_ptx_insn *in, int k)
{
    const mh_ptx_var *v = &c->m->vars[in->o[in->cmp + k].sym];
    uint64_t x = 0;
    memcpy(&x, frame(c, w, lane, (uint32_t)v->func, 2) + v->offset, v->size < 8 ? v->size : 8);
    return x;
}

/* vprintf(format, args) and __assertfail(message, file, line, function, char size): the
 * only functions without a body emu runs (mh_emu_check_kernel refuses the others).  The
 * lanes print in lane order; what they print comes out after the launch. */
static int extern_call(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t emask)
{
    const mh_ptx_func *g = &c->m->funcs[in->callee];
    int assert_fail = !strcmp(g->name, "__assertfail");
    for (int l = 0; l < WARP; l++) {
        if (!(emask >> l & 1)) continue;
        printf_ctx x = {c, w, l, 0};
        mh_printf_io io = {&x, pf_arg, pf_str};
        if (assert_fail) {
            char msg[512], file[512], fn[512];
            uint32_t line = (uint32_t)call_arg(c, w, l, in, 2);
            if (pf_str(&x, call_arg(c, w, l, in, 0), msg, sizeof msg) ||
                pf_str(&x, call_arg(c, w, l, in, 1), file, sizeof file) ||
                pf_str(&x, call_arg(c, w, l, in, 3), fn, sizeof fn))
                return -1;
            fault(c, w, l, "assertion `%.200s` failed at %.150s:%u in %.150s", msg, file, line, fn);
            return -1;
        }
        char fmt[4096];
        uint64_t f = call_arg(c, w, l, in, 0);
        x.args = call_arg(c, w, l, in, 1);
        int32_t n = -1; /* printf's result: the arguments, -1 for a NULL format */
        if (f) {
            if (pf_str(&x, f, fmt, sizeof fmt)) return -1;
            n = mh_emu_printf(fmt, &io, &c->out);
            if (n < 0) return -1;
        }
        if (in->cmp) { /* the return value */
            const mh_ptx_var *v = &c->m->vars[in->o[0].sym];
            memcpy(frame(c, w, l, (uint32_t)v->func, 2) + v->offset, &n, v->size < 4 ? v->size : 4);
        }
    }
    return 0;
}

/* The grid-wide stall check's record of a load (or an atomic that changed nothing): the
 * span of addresses the warp's loads touched since the last progress, and where it is. */
static void spin_observe(ctx *c, warp *w, uint32_t pc);

static inline void note_load(ctx *c, warp *w, int space, uint64_t a)
{
    if (__builtin_expect(c->verify, 0)) spin_observe(c, w, (uint32_t)(c->cur - c->code));
    if (space == MH_SP_SHARED) a += SHARED_WIN;
    if (w->ld_epoch != c->epoch) {
        w->ld_epoch = c->epoch;
        w->ld_lo = w->ld_hi = a;
    } else {
        if (a < w->ld_lo) w->ld_lo = a;
        if (a > w->ld_hi) w->ld_hi = a;
    }
    w->ld_pc = (uint32_t)(c->cur - c->code);
}

/* Returns -1 on a fault; 1 when every lane of mask went on to the same
 * *next pc (and none left the active state); 0 otherwise. */
static int exec_insn(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t mask, uint32_t *next)
{
    const mh_ptx_type t = (mh_ptx_type)in->type;
    uint32_t emask = mask;
    if (in->guard >= 0) {
        emask = 0;
        for (int l = 0; l < WARP; l++)
            if ((mask >> l & 1) && ((REG(w, (uint32_t)in->guard, l) != 0) ^ in->guard_neg)) emask |= 1u << l;
    }
    if (in->mods & MH_MOD_MARKER) { /* a marker comment: not an instruction, free */
        for (int l = 0; l < WARP; l++)
            if (mask >> l & 1) w->pc[l]++;
        *next = (uint32_t)(c->cur - c->code) + 1;
        return 1;
    }
    c->warp_insns++;
    c->thread_insns += (uint64_t)__builtin_popcount(emask);
    c->cost += 1;
    int branch = 0;
    const mh_ptx_opnd *o = in->o;

#define LANES for (int l = 0; l < WARP; l++) if (emask >> l & 1)
    switch (in->op) {
    case MH_OP_NOP: case MH_OP_MEMBAR: case MH_OP_PREFETCH: break;
    case MH_OP_MOV:
        if (o[0].kind == MH_OPK_VEC) { /* unpack */
            int part = mh_ptx_type_bits(t) / o[0].n;
            LANES {
                uint64_t v = val(c, w, &o[1], l);
                for (int k = 0; k < o[0].n; k++)
                    if (o[0].vec[k] != UINT32_MAX) put(c, w, o[0].vec[k], l, (v >> (k * part)) & mask_bits(part), MH_PT_B64);
            }
        } else if (o[1].kind == MH_OPK_VEC) { /* pack */
            int part = mh_ptx_type_bits(t) / o[1].n;
            LANES {
                uint64_t v = 0;
                for (int k = 0; k < o[1].n; k++) {
                    uint32_t r = o[1].vec[k];
                    uint64_t x = r == UINT32_MAX ? 0 : (r & MH_PTX_VEC_SREG) ? sreg(c, w, r & ~MH_PTX_VEC_SREG, l) : REG(w, r, l);
                    v |= (x & mask_bits(part)) << (k * part);
                }
                put(c, w, o[0].reg, l, v, t);
            }
        } else {
            LANES put(c, w, o[0].reg, l, val(c, w, &o[1], l), t);
        }
        break;
    case MH_OP_LD: {
        int eb = elem_bytes(t);
        c->cost += in->space == MH_SP_SHARED ? 2 : in->space == MH_SP_PARAM ? 0 : 8;
        LANES {
            unsigned char *p = in->space == MH_SP_PARAM
                                   ? param_ptr(c, w, l, &o[1], (uint32_t)(eb * in->vec), 0)
                                   : mem_fast(c, w, l, in->space, address(c, w, &o[1], l), (uint32_t)(eb * in->vec), 0);
            if (!p) return -1;
            if (o[0].kind == MH_OPK_VEC) {
                for (int k = 0; k < o[0].n; k++)
                    if (o[0].vec[k] != UINT32_MAX) put(c, w, o[0].vec[k], l, ld_elem(p + k * eb, eb), t);
            } else {
                put(c, w, o[0].reg, l, ld_elem(p, eb), t);
            }
        }
        if (emask && in->space != MH_SP_PARAM && in->space != MH_SP_CONST)
            note_load(c, w, in->space, address(c, w, &o[1], __builtin_ctz(emask)));
        break;
    }
    case MH_OP_ST: {
        int eb = elem_bytes(t);
        c->cost += in->space == MH_SP_SHARED ? 2 : 8;
        LANES {
            unsigned char *p = in->space == MH_SP_PARAM
                                   ? param_ptr(c, w, l, &o[0], (uint32_t)(eb * in->vec), 1)
                                   : mem_fast(c, w, l, in->space, address(c, w, &o[0], l), (uint32_t)(eb * in->vec), 1);
            if (!p) return -1;
            if (o[1].kind == MH_OPK_VEC) {
                for (int k = 0; k < o[1].n; k++) {
                    uint32_t r = o[1].vec[k];
                    uint64_t v = r == UINT32_MAX ? 0 : (r & MH_PTX_VEC_SREG) ? sreg(c, w, r & ~MH_PTX_VEC_SREG, l) : REG(w, r, l);
                    memcpy(p + k * eb, &v, (size_t)eb);
                }
            } else {
                uint64_t v = val(c, w, &o[1], l);
                memcpy(p, &v, (size_t)eb);
            }
        }
        c->progress += in->space != MH_SP_PARAM;
        break;
    }
    case MH_OP_CVTA:
        LANES {
            uint64_t a = val(c, w, &o[1], l), lin = w->index * WARP + (uint64_t)l;
            if (in->space == MH_SP_SHARED) a = (in->mods & MH_MOD_TO) ? a - SHARED_WIN : a + SHARED_WIN;
            else if (in->space == MH_SP_LOCAL)
                a = (in->mods & MH_MOD_TO) ? (a - LOCAL_WIN) % (c->local_stride ? c->local_stride : 1)
                                        : a + LOCAL_WIN + lin * c->local_stride;
            put(c, w, o[0].reg, l, a, t);
        }
        break;
    case MH_OP_CVT:
        if ((t == MH_PT_F16X2 || t == MH_PT_BF16X2) && in->nopnds >= 3) {
            /* cvt.rn.f16x2.f32 d, a, b: a rounded into the upper half, b into the lower */
            mh_ptx_type h = t == MH_PT_F16X2 ? MH_PT_F16 : MH_PT_BF16;
            LANES {
                uint64_t hi = fput(fget(val(c, w, &o[1], l), (mh_ptx_type)in->type2), h);
                uint64_t lo = fput(fget(val(c, w, &o[2], l), (mh_ptx_type)in->type2), h);
                put(c, w, o[0].reg, l, hi << 16 | lo, MH_PT_B32);
            }
            break;
        }
        LANES put(c, w, o[0].reg, l, convert(in, val(c, w, &o[1], l)), t);
        break;
    case MH_OP_TESTP: /* testp.class.f32/f64 p, a (the PTX front end took the class) */
        LANES {
            double x = fget(val(c, w, &o[1], l), t);
            int r;
            switch (in->cmp) {
            case MH_TESTP_FINITE: r = isfinite(x); break;
            case MH_TESTP_INFINITE: r = isinf(x); break;
            case MH_TESTP_NUMBER: r = !isnan(x); break;
            case MH_TESTP_NOTANUMBER: r = isnan(x); break;
            case MH_TESTP_NORMAL: r = t == MH_PT_F32 ? isnormal((float)x) : isnormal(x); break;
            default: r = t == MH_PT_F32 ? fpclassify((float)x) == FP_SUBNORMAL : fpclassify(x) == FP_SUBNORMAL; break;
            }
            put(c, w, o[0].reg, l, r != 0, MH_PT_PRED);
        }
        break;
    case MH_OP_SETP:
    case MH_OP_SET: {
        /* on packed halves (PTX ISA 9.1, 9.7.7) each half is compared as its own type: setp's p
         * comes from the low halves and q from the high ones (q is not a complement there), set
         * writes each half of d; else q is the complement and set writes all of d */
        mh_ptx_type src = in->op == MH_OP_SET ? (mh_ptx_type)in->type2 : t;
        int packed = src == MH_PT_F16X2 || src == MH_PT_BF16X2;
        mh_ptx_type ct = !packed ? src : src == MH_PT_F16X2 ? MH_PT_F16 : MH_PT_BF16;
        uint64_t one = set_true(!packed ? t : t == MH_PT_F16X2 ? MH_PT_F16 : t == MH_PT_BF16X2 ? MH_PT_BF16 : MH_PT_B16);
        LANES {
            uint64_t a = val(c, w, &o[1], l), b = val(c, w, &o[2], l);
            int r = compare((mh_ptx_cmp)in->cmp, ct, packed ? a & 0xffff : a, packed ? b & 0xffff : b, in->mods & MH_MOD_FTZ);
            int r2 = packed ? compare((mh_ptx_cmp)in->cmp, ct, a >> 16 & 0xffff, b >> 16 & 0xffff, in->mods & MH_MOD_FTZ) : !r;
            if (in->boolop) {
                int p = val(c, w, &o[3], l) != 0;
                r = bool_op(in->boolop, r, p);
                r2 = bool_op(in->boolop, r2, p);
            }
            if (in->op == MH_OP_SETP) {
                put(c, w, o[0].reg, l, (uint64_t)r, MH_PT_PRED);
                if (in->dst2 >= 0) put(c, w, (uint32_t)in->dst2, l, (uint64_t)r2, MH_PT_PRED);
            } else if (packed) {
                put(c, w, o[0].reg, l, (r ? one : 0) | (r2 ? one : 0) << 16, MH_PT_B32);
            } else {
                put(c, w, o[0].reg, l, r ? one : 0, t);
            }
        }
        break;
    }
    case MH_OP_SELP: LANES put(c, w, o[0].reg, l, val(c, w, &o[3], l) ? val(c, w, &o[1], l) : val(c, w, &o[2], l), t); break;
    case MH_OP_BFI:
        LANES {
            uint64_t a = val(c, w, &o[1], l), b = val(c, w, &o[2], l);
            uint32_t pos = (uint32_t)val(c, w, &o[3], l) & 0xff, len = (uint32_t)val(c, w, &o[4], l) & 0xff;
            int bits = mh_ptx_type_bits(t);
            uint64_t r = b;
            if (len && pos < (uint32_t)bits) {
                uint64_t m = (len >= 64 ? ~0ull : (1ull << len) - 1) << pos;
                r = (b & ~m) | ((a << pos) & m);
            }
            put(c, w, o[0].reg, l, r, t);
        }
        break;
    case MH_OP_PRMT:
        LANES put(c, w, o[0].reg, l, prmt((uint32_t)val(c, w, &o[1], l), (uint32_t)val(c, w, &o[2], l),
                                          (uint32_t)val(c, w, &o[3], l)), t);
        break;
    case MH_OP_LOP3:
        LANES {
            uint64_t a = val(c, w, &o[1], l), b = val(c, w, &o[2], l), cc = val(c, w, &o[3], l);
            uint32_t lut = (uint32_t)val(c, w, &o[4], l), r = 0;
            for (int bit = 0; bit < 32; bit++) {
                int idx = (int)(((a >> bit) & 1) << 2 | ((b >> bit) & 1) << 1 | ((cc >> bit) & 1));
                r |= ((lut >> idx) & 1) << bit;
            }
            put(c, w, o[0].reg, l, r, t);
        }
        break;
    case MH_OP_BRA:
        LANES w->pc[l] = o[0].reg;
        branch = 1;
        break;
    case MH_OP_CALL: {
        const mh_ptx_func *callee = &c->m->funcs[in->callee];
        if (!callee->defined) { /* printf or assert: it runs here, the lanes go on */
            if (extern_call(c, w, in, emask)) return -1;
            break;
        }
        uint32_t pc = (uint32_t)(c->cur - c->code);
        int nret = in->cmp;
        LANES {
            if (w->depth[l] == MAX_CALL_DEPTH) return fault(c, w, l, "call depth exceeds %d", MAX_CALL_DEPTH), -1;
            for (int k = 0; k + nret < in->nopnds; k++) {
                const mh_ptx_var *v = &c->m->vars[o[nret + k].sym];
                const mh_ptx_param *p = &callee->params[k];
                memcpy(frame(c, w, l, (uint32_t)in->callee, 0) + p->offset, frame(c, w, l, (uint32_t)v->func, 2) + v->offset,
                       v->size < p->size ? v->size : p->size);
            }
            call_frame *cf = &w->stack[l][w->depth[l]++];
            cf->ret_pc = pc + 1;
            cf->retvar = nret ? o[0].sym : -1;
            cf->callee = (uint32_t)in->callee;
            w->pc[l] = c->base[in->callee];
        }
        branch = 1;
        break;
    }
    case MH_OP_RET:
        LANES {
            if (!w->depth[l]) {
                w->st[l] = LANE_EXITED;
                c->progress++;
                continue;
            }
            const call_frame *cf = &w->stack[l][--w->depth[l]];
            if (cf->retvar >= 0) {
                const mh_ptx_var *v = &c->m->vars[cf->retvar];
                const mh_ptx_func *callee = &c->m->funcs[cf->callee];
                uint32_t n = callee->nrets ? callee->rets[0].size : 0;
                memcpy(frame(c, w, l, (uint32_t)v->func, 2) + v->offset, frame(c, w, l, cf->callee, 1),
                       v->size < n ? v->size : n);
            }
            w->pc[l] = cf->ret_pc;
        }
        branch = 1;
        break;
    case MH_OP_EXIT:
        LANES w->st[l] = LANE_EXITED;
        c->progress++;
        break;
    case MH_OP_BAR:
        if (in->cmp == 1) break; /* bar.warp.sync: lanes already run together */
        c->progress++;
        if (in->cmp == 2 || in->nopnds > 1) { /* a thread count: bar.sync a, b / bar.arrive a, b */
            if (bar_counted(c, w, in, emask)) return -1;
            break;
        }
        LANES w->st[l] = LANE_BARRIER;
        break;
    case MH_OP_TRAP:
        if (c->envreg_read && !c->grid_ws)
            LANES return fault(c, w, l, "trap instruction: the kernel reads the grid workspace of cooperative groups "
                               "(%%envreg1/%%envreg2), which only a cooperative launch has (launch{cooperative = "
                               "true}): cg::this_grid() traps without it, as on a GPU"), -1;
        LANES return fault(c, w, l, "trap instruction"), -1;
        break;
    case MH_OP_MBARRIER_INIT:
        LANES {
            unsigned char *p = mem(c, w, l, in->space, address(c, w, &o[0], l), 8, 1);
            if (!p) return -1;
            uint64_t n = val(c, w, &o[1], l) & MH_MB_FIELD;
            mb_store(p, (mbar){.pending = (int64_t)n, .expected = (int64_t)n});
        }
        c->progress++;
        break;
    case MH_OP_MBARRIER:
        if (exec_mbarrier(c, w, in, emask)) return -1;
        c->progress += in->cmp != MH_MB_TEST_WAIT && in->cmp != MH_MB_TRY_WAIT;
        break;
    case MH_OP_CP_ASYNC: {
        /* cp.async.{ca,cg}.shared.global [dst], [src], size{, src-size | ignore-src}: copied at
         * issue, so a correctly synchronised kernel sees what it would on a GPU (a kernel that
         * reads before its wait_group sees the data early: emu cannot show that race) */
        c->cost += 8;
        uint32_t size = (uint32_t)o[2].imm;
        int pred4 = in->nopnds > 3 && o[3].kind == MH_OPK_REG && c->m->reg_type[o[3].reg + c->reg_lo] == MH_PT_PRED;
        LANES {
            uint32_t src_size = size;
            if (in->nopnds > 3 && !pred4) src_size = (uint32_t)val(c, w, &o[3], l);
            if (pred4 && val(c, w, &o[3], l)) src_size = 0; /* ignore-src: zeros */
            if (src_size > size) /* the size itself (4, 8 or 16) was checked by the front end */
                return fault(c, w, l, "cp.async of %u bytes with a source size of %u (at most the size)", size,
                             src_size), -1;
            unsigned char *d = mem(c, w, l, MH_SP_SHARED, address(c, w, &o[0], l), size, 1);
            if (!d) return -1;
            if (src_size) {
                const unsigned char *p = mem(c, w, l, MH_SP_GLOBAL, address(c, w, &o[1], l), src_size, 0);
                if (!p) return -1;
                memmove(d, p, src_size);
            }
            memset(d + src_size, 0, size - src_size);
        }
        c->progress++;
        break;
    }
    case MH_OP_ATOM:
    case MH_OP_RED: {
        int changed = 0;
        c->cost += in->space == MH_SP_SHARED ? 4 : 16;
        LANES {
            const mh_ptx_opnd *ao = in->op == MH_OP_ATOM ? &o[1] : &o[0];
            const mh_ptx_opnd *bo = ao + 1;
            unsigned char *p = mem(c, w, l, in->space, address(c, w, ao, l), (uint32_t)elem_bytes(t), 1);
            if (!p) return -1;
            uint64_t old = atomic((mh_ptx_aop)in->cmp, t, p, val(c, w, bo, l),
                                  in->cmp == AOP_CAS ? val(c, w, bo + 1, l) : 0);
            changed |= old != ld_elem(p, elem_bytes(t));
            if (in->op == MH_OP_ATOM) put(c, w, o[0].reg, l, old, t);
        }
        if (changed) c->progress++; /* a failed compare-and-swap is a poll, as a load is */
        else if (emask) note_load(c, w, in->space, address(c, w, in->op == MH_OP_ATOM ? &o[1] : &o[0], __builtin_ctz(emask)));
        break;
    }
    case MH_OP_SHFL: {
        uint64_t src[WARP];
        for (int l = 0; l < WARP; l++) src[l] = o[1].kind == MH_OPK_REG ? REG(w, o[1].reg, l) : val(c, w, &o[1], l);
        LANES {
            uint32_t bval = (uint32_t)val(c, w, &o[2], l) & 31, cv = (uint32_t)val(c, w, &o[3], l);
            uint32_t cval = cv & 31, seg = (cv >> 8) & 31, lane = (uint32_t)l;
            uint32_t maxl = (lane & seg) | (cval & ~seg), minl = lane & seg, j;
            int ok;
            switch (in->cmp) {
            case SHFL_UP: j = lane - bval; ok = (int32_t)j >= (int32_t)maxl; break;
            case SHFL_DOWN: j = lane + bval; ok = j <= maxl; break;
            case SHFL_BFLY: j = lane ^ bval; ok = j <= maxl; break;
            default: j = minl | (bval & ~seg); ok = j <= maxl; break;
            }
            if (!ok) j = lane;
            put(c, w, o[0].reg, l, src[j & 31], t);
            if (in->dst2 >= 0) put(c, w, (uint32_t)in->dst2, l, (uint64_t)ok, MH_PT_PRED);
        }
        break;
    }
    case MH_OP_VOTE: {
        uint32_t ballot = 0, members = emask;
        LANES if (val(c, w, &o[1], l)) ballot |= 1u << l;
        LANES {
            uint64_t r;
            switch (in->cmp) {
            case VOTE_ALL: r = (ballot & members) == members; break;
            case VOTE_ANY: r = (ballot & members) != 0; break;
            case VOTE_UNI: r = (ballot & members) == members || (ballot & members) == 0; break;
            default: r = ballot; break;
            }
            put(c, w, o[0].reg, l, r, in->cmp == VOTE_BALLOT ? MH_PT_B32 : MH_PT_PRED);
        }
        break;
    }
    case MH_OP_REDUX: {
        /* one value from every member lane, to all of them (the waiting is done: see wsync) */
        int sgn = t == MH_PT_S32;
        uint64_t acc = in->cmp == AOP_AND ? 0xffffffffu : in->cmp == AOP_MIN ? (sgn ? 0x7fffffffu : 0xffffffffu)
                     : in->cmp == AOP_MAX ? (sgn ? 0x80000000u : 0) : 0;
        LANES {
            uint32_t v = (uint32_t)val(c, w, &o[1], l), a = (uint32_t)acc;
            switch (in->cmp) {
            case AOP_ADD: a += v; break;
            case AOP_MIN: a = sgn ? ((int32_t)v < (int32_t)a ? v : a) : (v < a ? v : a); break;
            case AOP_MAX: a = sgn ? ((int32_t)v > (int32_t)a ? v : a) : (v > a ? v : a); break;
            case AOP_AND: a &= v; break;
            case AOP_OR: a |= v; break;
            default: a ^= v; break;
            }
            acc = a;
        }
        LANES put(c, w, o[0].reg, l, acc, MH_PT_B32);
        break;
    }
    case MH_OP_MATCH: {
        /* lanes of the member mask holding the same value (the waiting is done: see wsync) */
        uint64_t v[WARP];
        LANES v[l] = val(c, w, &o[1], l) & (t == MH_PT_B64 ? ~0ull : 0xffffffffull);
        int all = 1;
        LANES {
            uint32_t same = 0;
            for (int j = 0; j < WARP; j++)
                if ((emask >> j & 1) && v[j] == v[l]) same |= 1u << j;
            if (same != emask) all = 0;
            if (in->cmp == 0) put(c, w, o[0].reg, l, same, MH_PT_B32);
        }
        if (in->cmp == 1)
            LANES {
                put(c, w, o[0].reg, l, all ? emask : 0, MH_PT_B32);
                if (in->dst2 >= 0) put(c, w, (uint32_t)in->dst2, l, (uint64_t)all, MH_PT_PRED);
            }
        break;
    }
    case MH_OP_ACTIVEMASK: LANES put(c, w, o[0].reg, l, mask, MH_PT_B32); break;
    default:
        if (t == MH_PT_F16X2 || t == MH_PT_BF16X2) {
            /* packed halves: the operation on each 16-bit half, as its own type */
            mh_ptx_insn h = *in;
            h.type = t == MH_PT_F16X2 ? MH_PT_F16 : MH_PT_BF16;
            LANES {
                uint64_t a = val(c, w, &o[1], l), b = in->nopnds > 2 ? val(c, w, &o[2], l) : 0;
                uint64_t cc = in->nopnds > 3 ? val(c, w, &o[3], l) : 0, r = 0;
                for (int half = 0; half < 2; half++) {
                    int s = 16 * half;
                    double x = fget(a >> s & 0xffff, (mh_ptx_type)h.type), y = fget(b >> s & 0xffff, (mh_ptx_type)h.type);
                    double z = fget(cc >> s & 0xffff, (mh_ptx_type)h.type);
                    r |= (fput(flt_op(&h, x, y, z), (mh_ptx_type)h.type) & 0xffff) << s;
                }
                put(c, w, o[0].reg, l, r, MH_PT_B32);
            }
        } else if (mh_ptx_type_is_float(t)) {
            /* decided once per instruction, not per lane: the plain path is the hot one */
            int special = flt_special(in);
            LANES {
                double a = fget(val(c, w, &o[1], l), t);
                double b = in->nopnds > 2 ? fget(val(c, w, &o[2], l), t) : 0;
                double cc = in->nopnds > 3 ? fget(val(c, w, &o[3], l), t) : 0;
                double r = special ? flt_op_special(in, a, b, cc) : flt_op_plain(in, a, b, cc);
                put(c, w, o[0].reg, l, fput(r, t), t);
            }
        } else {
            mh_ptx_type dt = t;
            if (in->mods & MH_MOD_WIDE) dt = mh_ptx_type_is_signed(t) ? (mh_ptx_type_bits(t) == 32 ? MH_PT_S64 : MH_PT_S32)
                                                                : (mh_ptx_type_bits(t) == 32 ? MH_PT_U64 : MH_PT_U32);
            if (in->op == MH_OP_CLZ || in->op == MH_OP_POPC) dt = MH_PT_U32;
            if (!(in->mods & (MH_MOD_SAT | MH_MOD_HI | MH_MOD_WIDE)) && mh_ptx_type_bits(t) >= 32 &&
                (in->op == MH_OP_ADD || in->op == MH_OP_SUB || in->op == MH_OP_MUL || in->op == MH_OP_MAD || in->op == MH_OP_AND ||
                 in->op == MH_OP_OR || in->op == MH_OP_XOR) && t != MH_PT_PRED) {
                /* the common integer operations, without a dispatch per lane */
                const mh_ptx_opnd *o1 = &o[1], *o2 = &o[2], *o3 = &o[3];
                switch (in->op) {
                case MH_OP_ADD: LANES put(c, w, o[0].reg, l, val(c, w, o1, l) + val(c, w, o2, l), dt); break;
                case MH_OP_SUB: LANES put(c, w, o[0].reg, l, val(c, w, o1, l) - val(c, w, o2, l), dt); break;
                case MH_OP_MUL: LANES put(c, w, o[0].reg, l, val(c, w, o1, l) * val(c, w, o2, l), dt); break;
                case MH_OP_MAD:
                    LANES put(c, w, o[0].reg, l, val(c, w, o1, l) * val(c, w, o2, l) + val(c, w, o3, l), dt);
                    break;
                case MH_OP_AND: LANES put(c, w, o[0].reg, l, val(c, w, o1, l) & val(c, w, o2, l), dt); break;
                case MH_OP_OR: LANES put(c, w, o[0].reg, l, val(c, w, o1, l) | val(c, w, o2, l), dt); break;
                default: LANES put(c, w, o[0].reg, l, val(c, w, o1, l) ^ val(c, w, o2, l), dt); break;
                }
                break;
            }
            LANES {
                uint64_t a = val(c, w, &o[1], l);
                uint64_t b = in->nopnds > 2 ? val(c, w, &o[2], l) : 0;
                uint64_t cc = in->nopnds > 3 ? val(c, w, &o[3], l) : 0;
                put(c, w, o[0].reg, l, int_op(in, a, b, cc), dt);
            }
        }
        break;
    }
#undef LANES
    /* advance the pcs of the lanes that took part and did not branch (branch-free: vectorises) */
    uint32_t adv = branch ? (mask & ~emask) : mask;
    for (int l = 0; l < WARP; l++) w->pc[l] += (adv >> l) & 1;
    if (in->op == MH_OP_RET || in->op == MH_OP_EXIT || in->op == MH_OP_BAR) return 0;
    if (!branch || emask == 0) {
        *next = (uint32_t)(c->cur - c->code) + 1;
        return 1;
    }
    if (emask == mask) {
        *next = in->op == MH_OP_CALL ? c->base[in->callee] : in->o[0].reg;
        return 1;
    }
    return 0;
}

/* ---- strict mode: reads of registers nothing wrote ---------------------------- */
/* Kept out of exec_insn: these run before and after an instruction only when
 * the device is strict, so the interpreter's hot path does not pay for them. */

static int writes_o0(const mh_ptx_insn *in) { return mh_ptx_writes_dst(in); }

/* Lanes of mask that the guard lets through (the guard itself must be written). */
static uint32_t strict_guard(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t mask, int *bad)
{
    if (in->guard < 0) return mask;
    uint32_t g = (uint32_t)in->guard, em = 0;
    for (int l = 0; l < WARP; l++) {
        if (!(mask >> l & 1)) continue;
        if (!(w->written[g] >> l & 1)) {
            uninitialised(c, w, g, l);
            *bad = 1;
            return 0;
        }
        if ((REG(w, g, l) != 0) ^ in->guard_neg) em |= 1u << l;
    }
    return em;
}

static int check_reg(ctx *c, const warp *w, uint32_t r, uint32_t lanes)
{
    if (r == UINT32_MAX || (r & MH_PTX_VEC_SREG)) return 0;
    uint32_t missing = lanes & ~w->written[r];
    if (!missing) return 0;
    uninitialised(c, w, r, __builtin_ctz(missing));
    return 1;
}

static int strict_sources(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t mask)
{
    int bad = 0;
    uint32_t em = strict_guard(c, w, in, mask, &bad);
    if (bad || !em || (in->mods & MH_MOD_MARKER)) return bad;
    for (int k = writes_o0(in) ? 1 : 0; k < in->nopnds; k++) {
        const mh_ptx_opnd *o = &in->o[k];
        if (o->kind == MH_OPK_REG && check_reg(c, w, o->reg, em)) return 1;
        if (o->kind == MH_OPK_ADDR && o->reg != UINT32_MAX && check_reg(c, w, o->reg, em)) return 1;
        if (o->kind == MH_OPK_VEC)
            for (int j = 0; j < o->n; j++)
                if (check_reg(c, w, o->vec[j], em)) return 1;
    }
    if (writes_o0(in) && in->o[0].kind == MH_OPK_ADDR && in->o[0].reg != UINT32_MAX) return check_reg(c, w, in->o[0].reg, em);
    return 0;
}

static void strict_dests(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t mask)
{
    (void)c;
    if (!writes_o0(in)) return;
    uint32_t em = mask;
    if (in->guard >= 0) {
        em = 0;
        for (int l = 0; l < WARP; l++)
            if ((mask >> l & 1) && ((REG(w, (uint32_t)in->guard, l) != 0) ^ in->guard_neg)) em |= 1u << l;
    }
    const mh_ptx_opnd *o = &in->o[0];
    if (o->kind == MH_OPK_REG) w->written[o->reg] |= em;
    if (o->kind == MH_OPK_VEC)
        for (int j = 0; j < o->n; j++)
            if (o->vec[j] != UINT32_MAX && !(o->vec[j] & MH_PTX_VEC_SREG)) w->written[o->vec[j]] |= em;
    if (in->dst2 >= 0) w->written[in->dst2] |= em;
}

/* ---- counting (mh_emu_launch.stats; the rules: emu_counters.h) ------------------ */
/* Called before the instruction runs (its address registers may be its destination),
 * from step_warp's slow path only: with counting off the interpreter does not pay. */
static __attribute__((noinline)) void count_insn(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t mask)
{
    uint64_t *v = c->counts + (size_t)(in - c->code) * MH_CT_COUNT;
    uint32_t em = mask;
    if (in->guard >= 0) {
        em = 0;
        for (int l = 0; l < WARP; l++)
            if ((mask >> l & 1) && ((REG(w, (uint32_t)in->guard, l) != 0) ^ in->guard_neg)) em |= 1u << l;
    }
    v[MH_CT_INST]++;
    v[MH_CT_THREAD_INST] += (uint64_t)__builtin_popcount(mask);
    v[MH_CT_PRED_ON] += (uint64_t)__builtin_popcount(em);
    if (!em) return;
    const mh_ptx_opnd *ao;
    uint32_t size = (uint32_t)elem_bytes((mh_ptx_type)in->type);
    int kind = in->op; /* LD, ST, ATOM, RED, CP_ASYNC */
    switch (in->op) {
    case MH_OP_LD:
        if (in->space == MH_SP_PARAM || in->space == MH_SP_CONST) return;
        ao = &in->o[1];
        size *= in->vec ? in->vec : 1;
        break;
    case MH_OP_ST:
        if (in->space == MH_SP_PARAM) return;
        ao = &in->o[0];
        size *= in->vec ? in->vec : 1;
        break;
    case MH_OP_ATOM: ao = &in->o[1]; break;
    case MH_OP_RED: ao = &in->o[0]; break;
    case MH_OP_CP_ASYNC: ao = &in->o[1]; size = (uint32_t)in->o[2].imm; break;
    default: return;
    }
    uint64_t ga[WARP], sa[WARP], ls[WARP * 8];
    uint8_t sl[WARP];
    uint32_t ng = 0, ns = 0, nl = 0;
    int pred4 = kind == MH_OP_CP_ASYNC && in->nopnds > 3 && in->o[3].kind == MH_OPK_REG &&
                c->m->reg_type[in->o[3].reg + c->reg_lo] == MH_PT_PRED;
    for (int l = 0; l < WARP; l++) {
        if (!(em >> l & 1)) continue;
        if (kind == MH_OP_CP_ASYNC && in->nopnds > 3) { /* a source size of 0 (or ignore-src) reads nothing */
            uint64_t sz = val(c, w, &in->o[3], l);
            if (pred4 ? sz != 0 : sz == 0) continue;
        }
        uint64_t a = address(c, w, ao, l);
        int sp = kind == MH_OP_CP_ASYNC ? MH_SP_GLOBAL : in->space;
        if (sp == MH_SP_GENERIC) {
            if (a - SHARED_WIN < WIN_SIZE) { sp = MH_SP_SHARED; a -= SHARED_WIN; }
            else if (a - LOCAL_WIN < WIN_SIZE) { sp = MH_SP_LOCAL; a = (a - LOCAL_WIN) % (c->local_stride ? c->local_stride : 1); }
            else sp = MH_SP_GLOBAL;
        }
        if (sp == MH_SP_GLOBAL) ga[ng++] = a >> 5; /* an aligned access of up to 16 bytes is in one sector */
        else if (sp == MH_SP_SHARED) { sa[ns] = a; sl[ns++] = (uint8_t)l; }
        else if (sp == MH_SP_LOCAL) /* word k of lane l lies at (k * 32 + l) * 4 in the warp's local memory */
            for (uint64_t k = a / 4; k <= (a + size - 1) / 4; k++) ls[nl++] = (k * 32 + (uint64_t)l) * 4 >> 5;
    }
    if (ng) {
        uint64_t sec = mh_ct_distinct(ga, ng);
        int r = kind == MH_OP_LD ? MH_CT_GLD_REQ : kind == MH_OP_ST ? MH_CT_GST_REQ : kind == MH_OP_ATOM ? MH_CT_GATOM_REQ
              : kind == MH_OP_RED ? MH_CT_GRED_REQ : MH_CT_LDGSTS_REQ;
        v[r]++;
        v[r + 1] += sec;
        if (kind == MH_OP_LD || kind == MH_OP_ST) v[r + 2] += (uint64_t)ng * size;
    }
    if (ns) {
        uint32_t phases, wf = mh_ct_wavefronts(sa, sl, ns, size, &phases);
        if (kind == MH_OP_LD) { v[MH_CT_SLD_REQ]++; v[MH_CT_SLD_WF] += wf; v[MH_CT_SLD_BC] += wf - phases; }
        else if (kind == MH_OP_ST) { v[MH_CT_SST_REQ]++; v[MH_CT_SST_WF] += wf; v[MH_CT_SST_BC] += wf - phases; }
        else if (kind == MH_OP_ATOM || kind == MH_OP_RED) { v[MH_CT_SATOM_REQ]++; v[MH_CT_SATOM_WF] += wf; }
    }
    if (nl && (kind == MH_OP_LD || kind == MH_OP_ST)) {
        uint64_t sec = mh_ct_distinct(ls, nl);
        int r = kind == MH_OP_LD ? MH_CT_LLD_REQ : MH_CT_LST_REQ;
        v[r]++;
        v[r + 1] += sec;
    }
}

/* ---- the issue model ------------------------------------------------------------ */
/* A virtual SM holds as many blocks as a GPU's would (threads, warps, blocks, shared
 * memory and, where ptxas told them, registers per SM: emu_occupancy.c); the rest of
 * its blocks wait for one to finish, so a large grid runs in waves.  Its warps sit in
 * 4 sub-partitions (warp slot % 4); each cycle every sub-partition issues one
 * instruction of the warp that has been ready longest, and that instruction's cost
 * (1 cycle, more for memory: see exec_insn) delays only its warp's next issue.
 * Instructions run in the order of their issue cycles (sub-partition number breaks a
 * tie), so the warps of an SM interleave as on a GPU, deterministically.  Block b runs
 * on SM b % nsm; the first wave's block b starts at cycle b (one block handed out a
 * cycle), a later block when the one before it in its slot ends, and a block's warps
 * start one a cycle.  SMs run one after another, each from cycle 0 of the launch. */
enum { W_RUN, W_WAIT, W_PARK, W_DONE };

/* Rounds of mbarrier waits in a row without a memory write before emu calls it
 * a deadlock (a wait loop may also watch %globaltimer, so one round is not proof). */
#define STALLED_ROUNDS 10000

static inline void enter_block(ctx *c, blk *b)
{
    if (c->cb == b) return;
    c->cb = b;
    c->shared = b->shared;
    c->local = b->local;
    c->frames = b->frames;
    c->warps = b->warps;
    c->bar_arrived = b->bar_arrived;
    memcpy(c->ctaid, b->ctaid, sizeof c->ctaid);
    c->cs = b->sm;
    c->sm = b->sm->id;
    c->clock0 = b->sm->clock0;
}

static void sp_add(ctx *c, warp *w)
{
    (void)c;
    subpart *s = &w->b->sm->sps[w->sp];
    s->w[s->n++] = w;
    s->best = NULL;
}

static void sp_remove(ctx *c, warp *w)
{
    (void)c;
    subpart *s = &w->b->sm->sps[w->sp];
    for (uint32_t i = 0; i < s->n; i++)
        if (s->w[i] == w) {
            s->w[i] = s->w[--s->n];
            break;
        }
    s->best = NULL;
}

/* The warp that has waited longest (the earliest ready; the lower slot on a tie). */
static warp *sp_find(subpart *s)
{
    warp *best = s->w[0];
    for (uint32_t i = 1; i < s->n; i++) {
        warp *w = s->w[i];
        if (w->ready < best->ready || (w->ready == best->ready && w->slot < best->slot)) best = w;
    }
    return s->best = best;
}

static void wake(ctx *c, warp *w, uint64_t when)
{
    w->sched = W_RUN;
    w->known = 0;
    if (w->ready < when) w->ready = when;
    w->b->running++;
    sp_add(c, w);
}

/* Warps of block b waiting at a barrier that now have lanes going on (a counted barrier
 * completed by another warp) issue again from `when`. */
static void wake_released(ctx *c, blk *b, uint64_t when)
{
    for (uint32_t i = 0; i < c->nwarps; i++) {
        warp *w = &b->warps[i];
        if (w->sched != W_WAIT) continue;
        for (int l = 0; l < WARP; l++)
            if (w->st[l] == LANE_ACTIVE) {
                wake(c, w, when);
                break;
            }
    }
}

/* Parked warps (all their lanes at an incomplete mbarrier phase) try again. */
static void unpark(ctx *c, blk *b, uint64_t when)
{
    for (uint32_t i = 0; i < c->nwarps && b->parked; i++) {
        warp *w = &b->warps[i];
        if (w->sched != W_PARK) continue;
        for (int l = 0; l < WARP; l++)
            if (w->st[l] == LANE_YIELD) w->st[l] = LANE_ACTIVE;
        b->parked--;
        wake(c, w, when);
    }
    b->park_writes = c->writes;
}

/* The memory of slot b, allocated when the slot first gets a block. */
static int slot_memory(ctx *c, blk *b)
{
    if (b->warps) return 0;
    uint32_t nregs = c->nregs;
    b->shared = calloc(1, c->shared_size ? c->shared_size : 1);
    b->local = calloc(1, c->local_stride * c->nwarps * WARP + 1);
    b->frames = calloc((size_t)c->nwarps * WARP, c->frame_bytes ? c->frame_bytes : 1);
    b->regs = calloc((size_t)c->nwarps * nregs * WARP, sizeof *b->regs);
    b->written = c->d->strict ? calloc((size_t)c->nwarps * nregs, sizeof *b->written) : NULL;
    b->warps = calloc(c->nwarps, sizeof *b->warps);
    if (b->shared && b->local && b->frames && b->regs && (!c->d->strict || b->written) && b->warps) return 0;
    free(b->warps);
    b->warps = NULL;
    mh_fail(c->e, MH_E_NO_MEMORY, "emu: out of memory for block %llu's registers and memory (%u warps)",
            (unsigned long long)c->next_block, c->nwarps);
    c->faulted = 1;
    return -1;
}

static int start_block(ctx *c, blk *b, uint64_t linear, uint64_t when)
{
    if (slot_memory(c, b)) return -1;
    uint32_t nregs = c->nregs, entry = (uint32_t)(c->f - c->m->funcs);
    /* blocks in CUDA's order: x fastest */
    b->ctaid[0] = (uint32_t)(linear % c->grid[0]);
    b->ctaid[1] = (uint32_t)(linear / c->grid[0] % c->grid[1]);
    b->ctaid[2] = (uint32_t)(linear / ((uint64_t)c->grid[0] * c->grid[1]));
    memset(b->shared, 0, c->shared_size);
    memset(b->regs, 0, (size_t)c->nwarps * nregs * WARP * sizeof *b->regs);
    if (b->written) memset(b->written, 0, (size_t)c->nwarps * nregs * sizeof *b->written);
    memset(b->frames, 0, (size_t)c->nwarps * WARP * c->frame_bytes);
    memset(b->bar_arrived, 0, sizeof b->bar_arrived);
    b->running = b->live = c->nwarps;
    b->parked = 0;
    b->stalled = 0;
    b->park_writes = b->round_writes = c->writes;
    b->end = when;
    b->busy = 1;
    b->vacant = 0;
    uint32_t slot0 = (uint32_t)(b - b->sm->blks) * c->nwarps;
    for (uint32_t i = 0; i < c->nwarps; i++) {
        warp *w = &b->warps[i];
        w->r = b->regs + (size_t)i * nregs * WARP;
        w->written = b->written ? b->written + (size_t)i * nregs : NULL;
        w->index = i;
        w->b = b;
        w->ready = when + i; /* the SM launches a block's warps one a cycle */
        w->known = 0;
        w->sched = W_RUN;
        w->slot = (uint16_t)(slot0 + i);
        w->sp = (uint8_t)((slot0 + i) % SUBPARTS);
        for (int ln = 0; ln < WARP; ln++) {
            w->pc[ln] = c->base[entry];
            w->depth[ln] = 0;
            w->st[ln] = i * WARP + (uint32_t)ln < c->nthreads ? LANE_ACTIVE : LANE_EXITED;
        }
        sp_add(c, w);
    }
    return 0;
}

/* Block b has no warp that can issue. */
static int block_stuck(ctx *c, blk *b)
{
    uint64_t when = c->now + c->cost;
    if (!b->live) { /* finished: the grid's next block is owed to this slot (the scheduler dispatches) */
        vsm *sm = b->sm;
        b->busy = 0;
        c->progress++;
        if (b->end > sm->end) sm->end = b->end;
        if (c->next_block < c->nblocks) {
            b->vacant = 1;
            if (b->end < sm->vacant_at) sm->vacant_at = b->end;
        }
        return 0;
    }
    if (b->parked) {
        /* lanes that found an mbarrier phase incomplete try again first; a bar.sync
         * opens only when no lane can go on otherwise (every live lane is at it) */
        b->stalled = c->writes == b->round_writes ? b->stalled + 1 : 0;
        b->round_writes = c->writes;
        if (b->stalled > STALLED_ROUNDS) {
            for (uint32_t i = 0; i < c->nwarps; i++)
                for (int l = 0; l < WARP; l++)
                    if (b->warps[i].st[l] == LANE_YIELD)
                        return fault(c, &b->warps[i], l, "deadlock: every warp waits (mbarrier phases that nothing "
                                     "completes, or a bar.sync the waiting warps never reach)"), -1;
        }
        unpark(c, b, when);
        return 0;
    }
    /* no lane can go on: a block-wide bar.sync opens, from the last warp's arrival */
    int any = 0;
    for (uint32_t i = 0; i < c->nwarps; i++) {
        warp *w = &b->warps[i];
        if (w->sched != W_WAIT) continue;
        for (int l = 0; l < WARP; l++)
            if (w->st[l] == LANE_BARRIER) {
                any = 1;
                if (w->ready > when) when = w->ready;
                break;
            }
    }
    if (!any) /* only counted barriers, short of their counts: nothing will come */
        for (uint32_t i = 0; i < c->nwarps; i++)
            for (int l = 0; l < WARP; l++)
                if (b->warps[i].st[l] == LANE_NBARRIER)
                    return fault(c, &b->warps[i], l, "deadlock: waiting at barrier %u, where %u threads have "
                                 "arrived and no other thread can run", b->warps[i].bar[l],
                                 b->bar_arrived[b->warps[i].bar[l]]), -1;
    for (uint32_t i = 0; i < c->nwarps; i++) {
        warp *w = &b->warps[i];
        if (w->sched != W_WAIT) continue;
        int go = 0;
        for (int l = 0; l < WARP; l++)
            if (w->st[l] == LANE_BARRIER) {
                w->st[l] = LANE_ACTIVE;
                go = 1;
            }
        if (go) wake(c, w, when);
    }
    return 0;
}

/* A warp with no active lane: it waits (a barrier), is parked (mbarrier waits), has
 * finished, or goes on (lanes at a warp-synchronous instruction it can release). */
static int settle(ctx *c, warp *w)
{
    int yield = 0, wsync = 0, live = 0;
    for (int l = 0; l < WARP; l++) {
        uint8_t s = w->st[l];
        if (s == LANE_ACTIVE) return 0;
        yield |= s == LANE_YIELD;
        wsync |= s == LANE_WSYNC;
        live |= s != LANE_EXITED;
    }
    if (wsync && !yield) return 0;
    blk *b = w->b;
    sp_remove(c, w);
    b->running--;
    if (yield) {
        w->sched = W_PARK;
        b->parked++;
        b->park_writes = c->writes;
    } else if (!live) {
        w->sched = W_DONE;
        b->live--;
        if (w->ready > b->end) b->end = w->ready;
    } else {
        w->sched = W_WAIT;
    }
    return b->running ? 0 : block_stuck(c, b);
}

/* Issues warp w's next instruction: 1 when it did and the warp has active lanes left,
 * 2 when it did and has none, 0 when it had none to issue, -1 on a fault. */
static int step_warp(ctx *c, warp *w)
{
    const mh_ptx_insn *code = c->code;
    for (;;) {
        int forced = 0; /* a warp-synchronous group released without all members */
        uint32_t pc = w->kpc, mask = w->kmask;
        if (!w->known) {
            pc = UINT32_MAX;
            mask = 0;
            for (int l = 0; l < WARP; l++) {
                if (w->st[l] != LANE_ACTIVE) continue;
                if (w->pc[l] < pc) { pc = w->pc[l]; mask = 1u << l; }
                else if (w->pc[l] == pc) mask |= 1u << l;
            }
        }
        if (!mask) {
            /* nothing can run: lanes still waiting at a warp-synchronous
             * instruction for members that will not come go on without them
             * (unless some only yielded at an mbarrier wait: they come back) */
            for (int l = 0; l < WARP; l++)
                if (w->st[l] == LANE_YIELD) return 0;
            pc = UINT32_MAX;
            for (int l = 0; l < WARP; l++)
                if (w->st[l] == LANE_WSYNC && w->pc[l] < pc) pc = w->pc[l];
            if (pc == UINT32_MAX) return 0;
            for (int l = 0; l < WARP; l++)
                if (w->st[l] == LANE_WSYNC && w->pc[l] == pc) { w->st[l] = LANE_ACTIVE; mask |= 1u << l; }
            forced = 1;
        }
        if (pc >= c->ncode) { /* fell off the end: like ret */
            for (int l = 0; l < WARP; l++) if (mask >> l & 1) w->st[l] = LANE_EXITED;
            w->known = 0;
            continue;
        }
        const mh_ptx_insn *in = &code[pc];
        c->cur = in;
        if (in->mods & MH_MOD_MARKER) { /* a marker comment: not an instruction, free */
            for (int l = 0; l < WARP; l++) w->pc[l] += (mask >> l) & 1;
            w->kpc = pc + 1; /* still right when it was known */
            continue;
        }
        int wsync = in->op == MH_OP_SHFL || in->op == MH_OP_VOTE || in->op == MH_OP_REDUX || in->op == MH_OP_MATCH ||
                    (in->op == MH_OP_BAR && in->cmp == 1);
        if (wsync && !forced) {
            /* wait until every live lane of the member mask has arrived */
            int mi = in->op == MH_OP_SHFL ? 4 : in->op == MH_OP_VOTE || in->op == MH_OP_REDUX || in->op == MH_OP_MATCH ? 2 : 0;
            const mh_ptx_opnd *mo = &in->o[mi];
            uint32_t members = in->nopnds > mi
                                   ? (uint32_t)val(c, w, mo, __builtin_ctz(mask)) : 0xffffffffu;
            uint32_t live = 0, here = mask;
            for (int l = 0; l < WARP; l++) {
                live |= (uint32_t)(w->st[l] != LANE_EXITED) << l;
                if (w->st[l] == LANE_WSYNC && w->pc[l] == pc) here |= 1u << l;
            }
            if ((here & members & live) != (members & live)) {
                for (int l = 0; l < WARP; l++) if (mask >> l & 1) w->st[l] = LANE_WSYNC;
                w->known = 0;
                continue;
            }
            for (int l = 0; l < WARP; l++) if ((here >> l & 1) && w->st[l] == LANE_WSYNC) w->st[l] = LANE_ACTIVE;
            mask = here;
        }
        if (__builtin_expect(c->slow, 0)) {
            if (w->written && strict_sources(c, w, in, mask)) return -1;
            if (c->counts) count_insn(c, w, in, mask);
        }
        uint32_t next;
        c->cost = 0;
        int rc = exec_insn(c, w, in, mask, &next);
        if (rc < 0 || c->faulted) return -1;
        if (__builtin_expect(c->slow, 0) && w->written) strict_dests(c, w, in, mask);
        /* still converged when the lanes that ran are all the active ones and
         * went on together (exec_insn says so with rc == 1) */
        uint32_t active = 0;
        for (int l = 0; l < WARP; l++) active |= (uint32_t)(w->st[l] == LANE_ACTIVE) << l;
        w->known = rc == 1 && active == mask;
        w->kpc = next;
        w->kmask = mask;
        if (c->d->max_warp_insns && c->warp_insns > c->d->max_warp_insns) {
            fault(c, w, __builtin_ctz(mask), "the launch ran more than %llu warp instructions, the device's max_insns "
                  "budget (endless loop?)", (unsigned long long)c->d->max_warp_insns);
            return -1;
        }
        if (__builtin_expect((c->warp_insns & 0x3fff) == 0, 0) && poll_stop(c)) return -1;
        return active ? 1 : 2;
    }
}


/* ---- the device: every SM in virtual-time order ----------------------------------- */
/* Every SM with work advances in turn: the one whose next event (an instruction's issue or a
 * slot's dispatch) comes first runs for a quantum, until it passes the next SM's time by
 * QUANTUM cycles, so a block spinning on a flag another SM's block stores sees the store
 * about when a GPU would (within QUANTUM cycles).  Blocks are dispatched in blockIdx order:
 * the first wave block j to SM j % SMs at cycle j (one block a cycle, round the SMs), then
 * each next block to the slot that freed first (the lower SM on a tie), decided only once
 * every SM has reached that cycle, so the order is the GPU's and the same every run.  An SM
 * stops issuing at a vacancy until it is dispatched, so one SM's issue order is exactly what
 * the per-SM issue model gives: a launch's trace does not depend on the quantum. */
#define QUANTUM 256

/* Cycles and warp instructions without progress anywhere before emu looks for a grid-wide
 * stall; and the span of addresses a waiting warp's loads may cover (a poll of flags).  A
 * stall is a deadlock when every live warp waits at a barrier or an mbarrier or spins: polls
 * twice more at one pc with all its registers unchanged (checked for at most STALL_INSNS
 * more warp instructions; a loop over a small tile changes its registers and is not one). */
#define STALL_CYCLES (1ull << 14)
#define STALL_INSNS (1ull << 18)
#define POLL_SPAN 4096

/* The cycle of SM sm's next event: its next issue or its earliest vacancy. */
static uint64_t sm_next_event(vsm *sm)
{
    uint64_t t = sm->vacant_at;
    for (int i = 0; i < SUBPARTS; i++) {
        subpart *p = &sm->sps[i];
        if (!p->n) continue;
        warp *w = p->best ? p->best : sp_find(p);
        uint64_t ti = w->ready > p->free ? w->ready : p->free;
        if (ti < t) t = ti;
    }
    return t;
}

/* The grid's next block to SM sm's earliest vacant slot. */
static int dispatch(ctx *c, vsm *sm)
{
    blk *b = NULL;
    for (uint32_t s = 0; s < c->resident; s++) {
        blk *x = &sm->blks[s];
        if (x->vacant && (!b || x->end < b->end)) b = x;
    }
    int rc = 0;
    if (b && c->next_block < c->nblocks) rc = start_block(c, b, c->next_block++, b->end);
    if (c->next_block >= c->nblocks) /* nothing more to hand out: the vacancies stay empty */
        for (uint32_t s = 0; s < c->resident; s++) sm->blks[s].vacant = 0;
    else if (b)
        b->vacant = 0;
    sm->vacant_at = UINT64_MAX;
    for (uint32_t s = 0; s < c->resident; s++)
        if (sm->blks[s].vacant && sm->blks[s].end < sm->vacant_at) sm->vacant_at = sm->blks[s].end;
    c->cb = NULL;
    return rc;
}

/* Runs SM sm through the issue model until its next issue would pass `limit` or reach a
 * vacancy; sm->next is then its next event. */
static int run_sm(ctx *c, vsm *sm, uint64_t limit)
{
    for (;;) {
        /* the sub-partition that issues first, and its warp */
        uint64_t t = UINT64_MAX;
        subpart *s = NULL;
        for (int i = 0; i < SUBPARTS; i++) {
            subpart *p = &sm->sps[i];
            if (!p->n) continue;
            warp *w = p->best ? p->best : sp_find(p);
            uint64_t ti = w->ready > p->free ? w->ready : p->free;
            if (ti < t) { t = ti; s = p; }
        }
        if (!s || t >= sm->vacant_at || t > limit) {
            sm->next = t < sm->vacant_at ? t : sm->vacant_at;
            return 0;
        }
        warp *w = s->best;
        blk *b = w->b;
        c->now = t;
        c->cost = 0;
        enter_block(c, b);
        int rc = step_warp(c, w);
        if (rc < 0) return -1;
        if (rc) {
            s->free = t + 1;
            w->ready = t + c->cost;
            s->best = NULL;
        }
        if (c->released) {
            c->released = 0;
            wake_released(c, b, t + c->cost);
        }
        if (rc != 1 && settle(c, w)) return -1;
        if (b->parked && c->writes != b->park_writes) unpark(c, b, t + c->cost);
    }
}

/* A warp that may wait: at a barrier or an mbarrier, or polling a few addresses since the last
 * progress; `confirmed` asks more of a polling warp: it polled at the same pc twice more with the
 * same registers (a spin: a loop whose state does not change, not a loop over a small tile). */
static int warp_waits(const ctx *c, const warp *w, int confirmed)
{
    if (w->sched == W_WAIT || w->sched == W_PARK) return 1;
    if (!(w->ld_epoch == c->epoch && w->ld_hi - w->ld_lo <= POLL_SPAN)) return 0;
    return !confirmed || w->spins >= 2;
}

/* During a verification: warp w polls at pc; its registers (every lane) the same as at its last poll there? */
static void spin_observe(ctx *c, warp *w, uint32_t pc)
{
    uint32_t nregs = c->nregs;
    uint64_t h = 1469598103934665603ull ^ pc;
    for (size_t i = 0; i < (size_t)nregs * WARP; i++) h = (h ^ w->r[i]) * 1099511628211ull;
    for (int l = 0; l < WARP; l++) h = (h ^ w->pc[l] ^ (uint64_t)w->st[l] << 32) * 1099511628211ull;
    if (pc == w->ld_pc && h == w->spin_hash) w->spins++;
    else w->spins = 0;
    w->spin_hash = h;
}

/* Whether every live warp of the resident blocks waits (confirmed: see warp_waits). */
static int all_wait(const ctx *c, int confirmed)
{
    for (uint32_t i = 0; i < c->nsms; i++)
        for (uint32_t s = 0; s < c->resident; s++) {
            const blk *b = &c->sms[i].blks[s];
            if (!b->busy) continue;
            for (uint32_t k = 0; k < c->nwarps; k++)
                if (b->warps[k].sched != W_DONE && !warp_waits(c, &b->warps[k], confirmed)) return 0;
        }
    return 1;
}

/* Where warp w waits: the pc of its poll, or of its first waiting lane. */
static uint32_t wait_pc(const warp *w)
{
    if (w->sched == W_RUN) return w->ld_pc;
    for (int l = 0; l < WARP; l++)
        if (w->st[l] != LANE_EXITED) return w->pc[l];
    return w->pc[0];
}

/* A deadlock, verified: the fault names the lines the blocks wait at (up to 6 of them, with
 * their first blocks) and the blocks not yet resident. */
static int deadlock(ctx *c, uint64_t now)
{
    uint32_t lines[6], nblk[6], nl = 0, waiting = 0;
    char who[6][160];
    for (uint32_t s = 0; s < c->resident; s++) /* slot by slot: the first wave in blockIdx order */
        for (uint32_t i = 0; i < c->nsms; i++) {
            blk *b = &c->sms[i].blks[s];
            if (!b->busy) continue;
            const warp *rep = NULL;
            for (uint32_t k = 0; k < c->nwarps; k++) {
                const warp *w = &b->warps[k];
                if (w->sched == W_DONE) continue;
                if (!rep || (rep->sched != W_RUN && w->sched == W_RUN)) rep = w;
            }
            if (!rep) continue;
            waiting++;
            uint32_t pc = wait_pc(rep), line = pc < c->ncode ? c->code[pc].line : 0, j = 0;
            while (j < nl && lines[j] != line) j++;
            if (j == nl && nl < 6) {
                lines[nl] = line;
                nblk[nl] = 0;
                who[nl][0] = 0;
                const char *op = pc < c->ncode ? mh_ptx_op_name((mh_ptx_op)c->code[pc].op) : "?";
                snprintf(who[nl], sizeof who[nl], "%s", op);
                nl++;
            }
            if (j < nl) {
                size_t n = strlen(who[j]);
                if (nblk[j] < 4)
                    snprintf(who[j] + n, sizeof who[j] - n, "%s(%u,%u,%u)", nblk[j] ? ", " : ") block ",
                             b->ctaid[0], b->ctaid[1], b->ctaid[2]);
                nblk[j]++;
            }
        }
    if (!waiting) return 0;
    char msg[1400];
    size_t n = (size_t)snprintf(msg, sizeof msg, "deadlock: no warp has made progress (a store, an atomic that changed "
                                "memory, a barrier arrival, an exit) for %llu cycles while every warp waits:",
                                (unsigned long long)(now - c->progress_t));
    for (uint32_t j = 0; j < nl && n < sizeof msg; j++)
        n += (size_t)snprintf(msg + n, sizeof msg - n, "%s %.200s:%u (%s%s (%u block%s)", j ? ";" : "", c->m->path,
                              lines[j], who[j], nblk[j] > 4 ? ", ..." : "", nblk[j], nblk[j] == 1 ? "" : "s");
    if (c->next_block < c->nblocks && n < sizeof msg)
        snprintf(msg + n, sizeof msg - n, "; %llu blocks of the grid are not resident yet (an SM holds %u at once, "
                 "%u SMs: blocks that wait for later blocks need a cooperative launch or fewer blocks)",
                 (unsigned long long)(c->nblocks - c->next_block), c->resident, c->nsms);
    c->e->line = nl ? lines[0] : 0;
    mh_fail(c->e, MH_E_KERNEL_FAULT, "%.200s: %s: %s", c->m->path, c->f->name, msg);
    c->faulted = 1;
    return 1;
}

/* Runs the whole grid: the first wave, then every SM in virtual-time order; the longest
 * SM's end in *longest. */
static int run_grid(ctx *c, uint64_t *longest)
{
    uint64_t first = c->nblocks < (uint64_t)c->nsms * c->resident ? c->nblocks : (uint64_t)c->nsms * c->resident;
    for (uint32_t i = 0; i < c->nsms; i++) {
        vsm *sm = &c->sms[i];
        sm->id = i;
        sm->clock0 = (uint64_t)i * 1000003ull; /* SMs' %clock values are not aligned */
        sm->vacant_at = UINT64_MAX;
        for (uint32_t s = 0; s < c->resident; s++) sm->blks[s].sm = sm;
    }
    for (uint64_t j = 0; j < first; j++) /* the first wave: one block a cycle, round the SMs */
        if (start_block(c, &c->sms[j % c->nsms].blks[j / c->nsms], j, j)) return -1;
    c->next_block = first;
    c->epoch = 1;
    for (uint32_t i = 0; i < c->nsms; i++) c->sms[i].next = sm_next_event(&c->sms[i]);
    for (;;) {
        vsm *a = NULL;
        uint64_t t1 = UINT64_MAX, t2 = UINT64_MAX;
        for (uint32_t i = 0; i < c->nsms; i++) {
            uint64_t n = c->sms[i].next;
            if (n < t1) { t2 = t1; t1 = n; a = &c->sms[i]; }
            else if (n < t2) t2 = n;
        }
        if (!a) break;
        if (a->vacant_at <= t1) {
            if (dispatch(c, a)) return -1;
            a->next = sm_next_event(a);
            continue;
        }
        if (run_sm(c, a, t2 == UINT64_MAX ? UINT64_MAX : t2 + QUANTUM)) return -1;
        if (c->progress != c->seen_progress) {
            c->seen_progress = c->progress;
            c->epoch++;
            c->progress_t = t1;
            c->progress_insns = c->warp_insns;
            c->verify = 0;
        } else if (c->verify) {
            if (all_wait(c, 1)) return deadlock(c, t1), -1;
            if (c->warp_insns - c->verify_insns > STALL_INSNS) { /* some warp's state changes: it works */
                c->verify = 0;
                c->epoch++;
                c->progress_t = t1;
                c->progress_insns = c->warp_insns;
            }
        } else if (t1 - c->progress_t > STALL_CYCLES && c->warp_insns - c->progress_insns > STALL_INSNS) {
            if (all_wait(c, 0)) { /* every warp seems to wait: verify that the pollers spin */
                c->verify = 1;
                c->verify_insns = c->warp_insns;
                for (uint32_t i = 0; i < c->nsms; i++)
                    for (uint32_t s = 0; s < c->resident; s++)
                        for (uint32_t k = 0; c->sms[i].blks[s].busy && k < c->nwarps; k++)
                            c->sms[i].blks[s].warps[k].spins = 0;
            } else { /* some warp works: look again after another stretch */
                c->epoch++;
                c->progress_t = t1;
                c->progress_insns = c->warp_insns;
            }
        }
    }
    *longest = 0;
    for (uint32_t i = 0; i < c->nsms; i++)
        if (c->sms[i].end > *longest) *longest = c->sms[i].end;
    return 0;
}

/* 1 when function f reaches itself through calls (recursion needs register
 * frames, which emu does not have). */
static int recursive(const mh_ptx_module *m, uint32_t f, uint32_t at, int depth)
{
    if (depth > (int)m->nfuncs) return 1;
    const mh_ptx_func *F = &m->funcs[at];
    for (uint32_t i = 0; i < F->ncode; i++) {
        const mh_ptx_insn *in = &F->code[i];
        if (in->op != MH_OP_CALL) continue;
        if ((uint32_t)in->callee == f || recursive(m, f, (uint32_t)in->callee, depth + 1)) return 1;
    }
    return 0;
}

static int c_var_func(const mh_ptx_module *m, int32_t v) { return m->vars[v].func; }

/* Whether function fi's code is something emu can run (calls are checked
 * here; the functions they reach by the caller). */
static int check_function(const mh_ptx_module *m, uint32_t fi, mh_error *e)
{
    const mh_ptx_func *f = &m->funcs[fi];
    for (uint32_t i = 0; i < f->ncode; i++) {
        const mh_ptx_insn *in = &f->code[i];
        char why[300] = "";
        if (in->op == MH_OP_MATCH && in->type != MH_PT_B32 && in->type != MH_PT_B64) {
            snprintf(why, sizeof why, "match.sync on .%s: only .b32 and .b64", mh_ptx_type_name((mh_ptx_type)in->type));
        } else if (in->op == MH_OP_REDUX && in->type != MH_PT_U32 && in->type != MH_PT_S32 && in->type != MH_PT_B32) {
            snprintf(why, sizeof why, "redux.sync on .%s is not supported by emu (u32, s32, b32)",
                     mh_ptx_type_name((mh_ptx_type)in->type));
        } else if (in->op == MH_OP_OPAQUE && (in->mods & MH_MOD_OPAQUE_CALL)) {
            if (in->callee >= 0)
                snprintf(why, sizeof why, "call to %s with more than %d parameters and returns: not supported by emu "
                         "(the cuda backend runs it)", m->funcs[in->callee].name, MH_PTX_MAX_OPNDS);
            else
                snprintf(why, sizeof why, "call through a function pointer: not supported by emu (the cuda backend "
                         "runs it)");
        } else if (in->op == MH_OP_OPAQUE) {
            const char *t = m->text + in->text_off, *s = t;
            if (*s == '@') /* past the guard */
                while (*s && !isspace((unsigned char)*s)) s++;
            while (*s == ' ' || *s == '\t') s++;
            size_t n = strcspn(s, " \t\n;");
            snprintf(why, sizeof why, "instruction '%.*s' is not supported by emu (the cuda backend runs it)",
                     (int)(n < 120 ? n : 120), s);
        } else if (in->op == MH_OP_CALL) {
            const mh_ptx_func *g = &m->funcs[in->callee];
            int args = in->nopnds - in->cmp;
            int known = !g->defined && ((!strcmp(g->name, "vprintf") && args == 2 && in->cmp <= 1) ||
                                        (!strcmp(g->name, "__assertfail") && args == 5 && in->cmp == 0));
            if (known) {
                for (int k = 0; k < in->nopnds; k++)
                    if (in->o[k].kind != MH_OPK_SYM || in->o[k].sym < 0 || c_var_func(m, in->o[k].sym) < 0)
                        snprintf(why, sizeof why, "call to %s with an argument that is not a .param variable", g->name);
            } else if (!g->defined)
                snprintf(why, sizeof why, "call to %s, which has no body in this module (of the extern functions emu "
                         "runs vprintf and __assertfail: printf and assert)", g->name);
            else if ((uint32_t)(in->nopnds - in->cmp) != g->nparams || (uint32_t)in->cmp > g->nrets)
                snprintf(why, sizeof why, "call to %s passes %d arguments and %d returns; it declares %u and %u",
                         g->name, in->nopnds - in->cmp, in->cmp, g->nparams, g->nrets);
            else if (recursive(m, (uint32_t)in->callee, (uint32_t)in->callee, 0))
                snprintf(why, sizeof why, "%s is recursive: recursion is not supported by emu", g->name);
        } else if (in->rnd >= MH_RND_RZ && in->rnd <= MH_RND_RP &&
                   (in->type == MH_PT_F16 || in->type == MH_PT_BF16 || in->type == MH_PT_F16X2 || in->type == MH_PT_BF16X2) &&
                   !(in->op == MH_OP_CVT && (in->type == MH_PT_F16 || in->type == MH_PT_BF16) && !(in->mods & MH_MOD_SAT))) {
            snprintf(why, sizeof why, "rounding modifier .%s on a half-precision result is not supported by emu "
                     "(only .rn, except cvt to f16/bf16; .rz/.rm/.rp are computed for f32 and f64)",
                     in->rnd == MH_RND_RZ ? "rz" : in->rnd == MH_RND_RM ? "rm" : "rp");
        } else if ((in->type == MH_PT_F16X2 || in->type == MH_PT_BF16X2) &&
                   !(in->op == MH_OP_MOV || in->op == MH_OP_LD || in->op == MH_OP_ST || in->op == MH_OP_CVT || in->op == MH_OP_ADD ||
                     in->op == MH_OP_SUB || in->op == MH_OP_MUL || in->op == MH_OP_FMA || in->op == MH_OP_MIN ||
                     in->op == MH_OP_MAX || in->op == MH_OP_NEG || in->op == MH_OP_ABS || in->op == MH_OP_EX2 ||
                     in->op == MH_OP_TANH || in->op == MH_OP_SETP || in->op == MH_OP_SET)) {
            snprintf(why, sizeof why, "%s on packed f16x2/bf16x2 is not supported by emu yet",
                     mh_ptx_op_name((mh_ptx_op)in->op));
        }
        for (int k = 0; !why[0] && in->op != MH_OP_OPAQUE && k < in->nopnds; k++) {
            /* special registers of clusters, reserved shared memory, the driver: not on emu */
            const mh_ptx_opnd *o = &in->o[k];
            int sr = o->kind == MH_OPK_SREG ? (int)o->reg : -1;
            for (int j = 0; o->kind == MH_OPK_VEC && j < 4; j++)
                if (o->vec[j] != UINT32_MAX && (o->vec[j] & MH_PTX_VEC_SREG)) sr = (int)(o->vec[j] & ~MH_PTX_VEC_SREG);
            if (o->kind == MH_OPK_PARAM_ADDR) {
                snprintf(why, sizeof why, "takes the address of parameter %s (a __grid_constant__ parameter, such as "
                         "a TMA descriptor): not supported by emu (the cuda backend runs it)",
                         f->params[o->param].name);
            } else if (o->kind == MH_OPK_FUNC) {
                snprintf(why, sizeof why, "takes the address of function %s: function pointers are not supported by "
                         "emu (the cuda backend runs them)", m->funcs[o->reg].name);
            } else if (sr >= MH_SR_NOT_ON_EMU_ && sr != MH_SR_ENVREG0 + 1 && sr != MH_SR_ENVREG0 + 2) {
                char name[32];
                snprintf(why, sizeof why, "special register %s is not available on emu (the cuda backend runs it)",
                         mh_ptx_sreg_name(sr, name, sizeof name));
            }
        }
        if (why[0]) {
            e->line = in->line;
            if (in->op == MH_OP_OPAQUE) return mh_fail(e, MH_E_PTX_UNSUPPORTED, "%.200s:%u: %s", m->path, in->line, why);
            return mh_fail(e, MH_E_PTX_UNSUPPORTED, "%.200s:%u: %s: %s", m->path, in->line,
                           mh_ptx_op_name((mh_ptx_op)in->op), why);
        }
    }
    return 0;
}

int mh_emu_check_module(const mh_ptx_module *m, mh_error *e)
{
    for (uint32_t fi = 0; fi < m->nfuncs; fi++)
        if (check_function(m, fi, e)) return (int)e->code;
    return 0;
}

int mh_emu_check_kernel(const mh_ptx_module *m, const mh_ptx_func *f, mh_error *e)
{
    for (uint32_t i = 0; i < m->nvars; i++)
        if (m->vars[i].address_init_line) {
            e->line = m->vars[i].address_init_line;
            return mh_fail(e, MH_E_PTX_UNSUPPORTED, "%.200s:%u: %s is initialised with an address (generic(...)): not "
                           "supported by emu (the cuda backend's driver fills it in)", m->path,
                           m->vars[i].address_init_line, m->vars[i].name);
        }
    /* the kernel and every function it reaches through calls */
    unsigned char *seen = calloc(m->nfuncs, 1);
    uint32_t *todo = malloc(m->nfuncs * sizeof *todo), n = 0;
    int rc = 0;
    if (!seen || !todo) rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    else {
        todo[n++] = (uint32_t)(f - m->funcs);
        seen[todo[0]] = 1;
    }
    while (!rc && n) {
        uint32_t fi = todo[--n];
        rc = check_function(m, fi, e);
        for (uint32_t i = 0; !rc && i < m->funcs[fi].ncode; i++) {
            const mh_ptx_insn *in = &m->funcs[fi].code[i];
            if (in->op == MH_OP_CALL && in->callee >= 0 && !seen[in->callee]) {
                seen[in->callee] = 1;
                todo[n++] = (uint32_t)in->callee;
            }
        }
    }
    free(seen);
    free(todo);
    return rc;
}

/* The registers of the kernel and the functions it calls, [*lo, *hi) of the module's numbering
 * (each function's registers are one range). */
static int kernel_regs(ctx *c, uint32_t *lo, uint32_t *hi)
{
    const mh_ptx_module *m = c->m;
    unsigned char *seen = calloc(m->nfuncs ? m->nfuncs : 1, 1);
    uint32_t *todo = malloc((m->nfuncs ? m->nfuncs : 1) * sizeof *todo), n = 0;
    if (!seen || !todo) { free(seen); free(todo); return -1; }
    *lo = UINT32_MAX;
    *hi = 0;
    todo[n++] = (uint32_t)(c->f - m->funcs);
    seen[todo[0]] = 1;
    while (n) {
        const mh_ptx_func *F = &m->funcs[todo[--n]];
        if (F->nregs && F->first_reg < *lo) *lo = F->first_reg;
        if (F->nregs && F->first_reg + F->nregs > *hi) *hi = F->first_reg + F->nregs;
        for (uint32_t i = 0; i < F->ncode; i++)
            if (F->code[i].op == MH_OP_CALL && F->code[i].callee >= 0 && !seen[F->code[i].callee]) {
                seen[F->code[i].callee] = 1;
                todo[n++] = (uint32_t)F->code[i].callee;
            }
    }
    if (*lo > *hi) *lo = *hi = 0;
    free(seen);
    free(todo);
    return 0;
}

/* An instruction's registers renumbered from the kernel's first (instructions of functions the
 * kernel does not reach never run; their numbers may fall outside). */
static void renumber(mh_ptx_insn *in, uint32_t lo)
{
    if (in->guard >= 0) in->guard -= (int32_t)lo;
    if (in->dst2 >= 0) in->dst2 -= (int32_t)lo;
    for (int k = 0; k < in->nopnds && k < MH_PTX_MAX_OPNDS; k++) {
        mh_ptx_opnd *o = &in->o[k];
        if (o->kind == MH_OPK_REG || (o->kind == MH_OPK_ADDR && o->reg != UINT32_MAX)) o->reg -= lo;
        if (o->kind == MH_OPK_VEC)
            for (int j = 0; j < o->n && j < 4; j++)
                if (o->vec[j] != UINT32_MAX && !(o->vec[j] & MH_PTX_VEC_SREG)) o->vec[j] -= lo;
    }
}

/* Lays every defined function's code end to end, with branch targets made
 * global and registers the kernel's own (from 0), and sizes the per-thread
 * parameter frames. */
static int link_code(ctx *c, mh_error *e)
{
    const mh_ptx_module *m = c->m;
    uint32_t n = 0;
    for (uint32_t fi = 0; fi < m->nfuncs; fi++) n += m->funcs[fi].defined ? m->funcs[fi].ncode : 0;
    c->code = malloc((n ? n : 1) * sizeof *c->code);
    c->insn_func = malloc((n ? n : 1) * sizeof *c->insn_func);
    c->base = calloc(m->nfuncs ? m->nfuncs : 1, sizeof *c->base);
    c->frame_off = calloc(m->nfuncs ? m->nfuncs : 1, sizeof *c->frame_off);
    if (!c->code || !c->insn_func || !c->base || !c->frame_off) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    uint32_t hi;
    if (kernel_regs(c, &c->reg_lo, &hi)) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    c->nregs = hi > c->reg_lo ? hi - c->reg_lo : 1;
    uint32_t at = 0;
    for (uint32_t fi = 0; fi < m->nfuncs; fi++) {
        const mh_ptx_func *F = &m->funcs[fi];
        c->frame_off[fi] = c->frame_bytes;
        c->frame_bytes += align16(F->param_bytes) + align16(F->ret_bytes) + align16(F->callarea_bytes);
        if (!F->defined) continue;
        c->base[fi] = at;
        memcpy(c->code + at, F->code, F->ncode * sizeof *c->code);
        for (uint32_t i = 0; i < F->ncode; i++) {
            c->insn_func[at + i] = fi;
            mh_ptx_insn *in = &c->code[at + i];
            if (in->op == MH_OP_BRA) in->o[0].reg += at; /* a label: renumber leaves it */
            if (c->reg_lo) renumber(in, c->reg_lo);
        }
        at += F->ncode;
    }
    c->ncode = n;
    return 0;
}

int mh_emu_run(mh_emu *d, const mh_ptx_module *m, const char *name, const mh_emu_launch *l, mh_emu_stats *st,
               mh_error *e)
{
    mh_emu_stats s;
    memset(&s, 0, sizeof s);
    int rc = mh_emu_run_ex(d, m, name, l, NULL, &s, e);
    free(s.output);
    s.output = NULL;
    s.output_len = 0;
    if (s.counts) s.counts->release(s.counts);
    s.counts = NULL;
    if (st) *st = s;
    return rc;
}

int mh_emu_run_ex(mh_emu *d, const mh_ptx_module *m, const char *name, const mh_emu_launch *l, const mh_emu_extra *x,
                  mh_emu_stats *st, mh_error *e)
{
    static const mh_emu_extra none;
    if (!x) x = &none;
    if (st) memset(st, 0, sizeof *st);
    mh_error_clear(e);
    const mh_ptx_func *f = mh_ptx_find(m, name);
    if (!f || !f->is_entry) return mh_fail(e, MH_E_NOT_FOUND, "%s: no kernel (.entry) named \"%s\"", m->path, name);
    if (mh_emu_check_kernel(m, f, e)) return (int)e->code;
    /* what a GPU would refuse, emu refuses (sm_90's limits) */
    if (mh_launch_shape_check(f, l->grid, l->block, l->dynamic_smem, MH_SMEM_PER_BLOCK_SM90, e)) return (int)e->code;
    if (l->nargs != f->nparams)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "%s takes %u arguments, %u given", name, f->nparams, l->nargs);

    ctx c;
    memset(&c, 0, sizeof c);
    c.d = d;
    c.m = m;
    c.f = f;
    c.e = e;
    memcpy(c.grid, l->grid, sizeof c.grid);
    memcpy(c.block, l->block, sizeof c.block);
    c.nthreads = l->block[0] * l->block[1] * l->block[2];
    c.nwarps = (c.nthreads + WARP - 1) / WARP;
    c.dyn_smem = l->dynamic_smem;
    if (l->timeout_s > 0) c.deadline = monotonic_s() + l->timeout_s;
    c.shared_size = f->shared_bytes + l->dynamic_smem;
    c.local_stride = (f->local_bytes + 15) & ~15ull;
    c.params = calloc(1, f->param_bytes ? f->param_bytes : 1);
    for (uint32_t i = 0; i < f->nparams; i++) {
        if (l->args[i].size != f->params[i].size) {
            free(c.params);
            return mh_fail(e, MH_E_BAD_ARGUMENT, "%s: argument %u (%s) is %u bytes, the parameter is %u", name, i,
                           f->params[i].name, l->args[i].size, f->params[i].size);
        }
        memcpy(c.params + f->params[i].offset, l->args[i].data, l->args[i].size);
    }
    /* module .global/.const data */
    uint64_t data = 0;
    for (uint32_t i = 0; i < m->nvars; i++)
        if (m->vars[i].space == MH_SP_GLOBAL || m->vars[i].space == MH_SP_CONST)
            if (m->vars[i].offset + m->vars[i].size > data) data = m->vars[i].offset + m->vars[i].size;
    int rc = 0;
    if (data) {
        if (mh_emu_alloc(d, data, &c.data_addr, e)) { free(c.params); return -1; }
        alloc *al = find_alloc(d, c.data_addr, data);
        c.data_host = al->host;
        c.data_size = data;
        for (uint32_t i = 0; i < m->nvars; i++)
            if (m->vars[i].init && (m->vars[i].space == MH_SP_GLOBAL || m->vars[i].space == MH_SP_CONST))
                memcpy(c.data_host + m->vars[i].offset, m->vars[i].init, m->vars[i].size);
    }
    c.nblocks = (uint64_t)l->grid[0] * l->grid[1] * l->grid[2];
    /* the blocks an SM holds at once: a GPU's limits, and no more than the SM gets */
    mh_occupancy occ;
    mh_occupancy_sm90(x->regs_per_thread, c.shared_size, c.nthreads, &occ);
    uint64_t per_sm = (c.nblocks + d->nsm - 1) / d->nsm;
    c.resident = occ.blocks_per_sm > 0 ? (uint32_t)occ.blocks_per_sm : 1;
    if (x->cooperative && c.nblocks > (uint64_t)c.resident * d->nsm) {
        rc = mh_fail(e, MH_E_BAD_ARGUMENT, "%s: a cooperative grid of %llu blocks cannot be resident at once: %u "
                       "blocks per SM x %u SMs = %llu (blocks of %u threads, %llu bytes of shared memory%s)", name,
                       (unsigned long long)c.nblocks, c.resident, d->nsm, (unsigned long long)c.resident * d->nsm,
                       c.nthreads, (unsigned long long)c.shared_size,
                       x->regs_per_thread ? ", the registers ptxas gives" : "");
        goto done;
    }
    if (x->cooperative) { /* the driver's grid workspace: {size, barrier} (cooperative_groups/details/driver_abi.h) */
        uint32_t ws[4] = {8, 0, 0, 0};
        if (mh_emu_alloc(d, sizeof ws, &c.grid_ws, e) || mh_emu_write(d, c.grid_ws, ws, sizeof ws, e)) { rc = -1; goto done; }
    }
    if (c.resident > per_sm) c.resident = (uint32_t)per_sm;
    if (link_code(&c, e)) { rc = -1; goto done; }
    c.icache = calloc(c.ncode ? c.ncode : 1, sizeof *c.icache);
    c.nsms = c.nblocks < d->nsm ? (uint32_t)c.nblocks : d->nsm;
    c.sms = calloc(c.nsms ? c.nsms : 1, sizeof *c.sms);
    int slots_ok = c.sms != NULL;
    for (uint32_t i = 0; c.sms && i < c.nsms; i++)
        if (!(c.sms[i].blks = calloc(c.resident, sizeof *c.sms[i].blks))) slots_ok = 0;
    if (x->stats) c.counts = calloc((size_t)(c.ncode ? c.ncode : 1) * MH_CT_COUNT, sizeof *c.counts);
    if (!c.icache || !slots_ok || (x->stats && !c.counts)) { rc = mh_fail(e, MH_E_NO_MEMORY, "emu: out of memory for the launch"); goto done; }
    c.slow = d->strict || c.counts;
    uint64_t longest = 0;
    rc = run_grid(&c, &longest) ? -1 : 0;
    d->timer_ns += (uint64_t)((double)longest / MH_EMU_CLOCK_GHZ) + 1000;
    if (st) {
        st->warp_insns = c.warp_insns;
        st->thread_insns = c.thread_insns;
        st->cycles = longest;
        st->blocks_per_sm = c.resident;
        if (!rc && c.counts) rc = mh_ct_build(m, c.code, c.ncode, c.counts, &st->counts, e);
    }
done:
    if (st) { /* what the kernel printed, also when it faulted (a GPU prints it too) */
        st->output = c.out.p;
        st->output_len = c.out.n;
    } else {
        free(c.out.p);
    }
    free(c.counts);
    if (c.data_addr) mh_emu_free(d, c.data_addr, &(mh_error){0});
    if (c.grid_ws) mh_emu_free(d, c.grid_ws, &(mh_error){0});
    free(c.params);
    for (uint32_t i = 0; c.sms && i < c.nsms; i++) {
        for (uint32_t s = 0; c.sms[i].blks && s < c.resident; s++) {
            blk *b = &c.sms[i].blks[s];
            free(b->shared);
            free(b->local);
            free(b->frames);
            free(b->warps);
            free(b->regs);
            free(b->written);
        }
        free(c.sms[i].blks);
    }
    free(c.sms);
    free(c.icache);
    free(c.code);
    free(c.insn_func);
    free(c.base);
    free(c.frame_off);
    return rc;
}
