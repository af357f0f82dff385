/* emu_internal.h - what the parts of emu share (emu.c, emu_memory.c, emu_exec.c,
 * emu_sync.c, emu_slowpath.c, emu_sched.c, emu_check.c): the state of a launch
 * (the device, its SMs, their resident blocks and warps), the small helpers the
 * interpreter inlines, and the functions one part calls in another.  Not a public
 * header: nothing outside core/emu includes it. */
#ifndef MH_EMU_INTERNAL_H
#define MH_EMU_INTERNAL_H

#include "emu/emu.h"
#include "emu/emu_printf.h"
#include "emu/emu_model.h"
#include "base/fp16.h"

#include <stdint.h>
#include <string.h>

#define WARP 32
#define GLOBAL_BASE 0x0000100000000000ull  /* first device allocation */
#define ALLOC_GAP 0x10000ull               /* unmapped bytes between allocations */
#define SHARED_WIN 0x00007e0000000000ull   /* generic window of shared memory */
#define LOCAL_WIN 0x00007f0000000000ull    /* generic window of local memory */
#define PARAM_WIN 0x00007d0000000000ull    /* generic window of the kernel's parameters (cvta.param) */
/* shared::cluster addresses: a block's own shared::cta offsets, or (rank + 1) * EMU_DSMEM_RANK +
 * offset for the block of that rank in the cluster (what mapa gives); generic: SHARED_WIN + that */
#define EMU_DSMEM_RANK 0x1000000ull
#define EMU_WARN_LINES 32 /* source lines a launch warns about (emu_warn) */
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
    uint64_t mapped;        /* mh_emu_alloc_mapped: host == addr, munmap'ed (this many bytes) */
} alloc;

struct mh_emu {
    alloc *a;
    size_t n, cap;
    uint64_t next_addr;
    uint32_t nsm;
    const mh_emu_model *model; /* every timing parameter (emu_model.c): own_model */
    mh_emu_model own_model;    /* the named model with the options' model_params set */
    uint64_t max_warp_insns;
    int strict;
    uint32_t threads;       /* workers a launch's SMs run on (emu_workers.c), >= 1 */
    uint64_t timer_ns;      /* %globaltimer at the next launch's start */
    /* slots' buffers of earlier launches, kept for the next (emu_pool_get/put) */
    struct { void *p; size_t bytes; } *pool;
    size_t npool, cap_pool, pool_bytes;
};

#define MAX_CALL_DEPTH 32

typedef struct {
    uint32_t ret_pc;
    int32_t retvar;         /* caller's .param variable receiving the return value, -1 none */
    uint32_t callee;
} call_frame;

typedef struct blk blk;
/* The register scoreboard's plan of one instruction (emu_scoreboard.c): at sb_regs[off] the ndst
 * rows it writes, then the nsrc rows it reads; lat: its result latency in cycles. */
typedef struct {
    uint32_t off;
    uint16_t ndst, nsrc;
    uint32_t lat;
    uint32_t d0;            /* the first row it writes (sb_regs[off]), when ndst */
} emu_sb;
#define MH_EMU_MAX_CLUSTER 16   /* blocks a cluster may have (sm_90's non-portable limit) */

typedef struct {
    uint64_t *r;            /* registers: module registers x 32 lanes */
    uint32_t *written;      /* strict mode: per register, the lanes that wrote it */
    uint64_t *rdy;          /* per row: the cycle its value is ready for a dependent instruction (emu_scoreboard.c) */
    uint32_t sb_pc;         /* kpc when the scheduler, at the warp's last issue, found the rows kpc's instruction
                             * reads ready by `ready` (step_warp need not look again), else EMU_NO_PC */
    /* the issue model (emu_sched below): what every issue reads, in the first 64 bytes with r */
    blk *b;                 /* its block */
    uint64_t ready;         /* the first cycle it may issue its next instruction */
    uint32_t kpc, kmask;    /* known: every active lane is at kpc, kmask is them */
    uint8_t known;
    uint8_t pc_stale;       /* the fast paths moved kpc without writing pc[] of the kmask lanes (implies
                             * known); emu_sync_pcs writes them before anything reads pc[] */
    uint8_t sched;          /* W_RUN, W_WAIT, W_PARK, W_DONE */
    uint8_t sp;             /* its sub-partition */
    uint16_t slot;          /* its warp slot on the SM (ties between equally ready warps) */
    uint8_t spi;            /* while it can issue: its index in its sub-partition's w[] */
    uint8_t tile_live;      /* see tile below */
    uint32_t pc[WARP];
    uint8_t st[WARP];
    uint8_t depth[WARP];    /* call depth per lane */
    uint8_t bar[WARP];      /* LANE_NBARRIER: the barrier waited at */
    call_frame (*stack)[MAX_CALL_DEPTH]; /* per lane; NULL when the kernel calls no defined function
                                          * (12 KiB a warp that a launch would otherwise allocate and zero) */
    uint32_t index;         /* warp index in the block */
    /* the grid-wide stall check: the addresses its loads touched since the last progress */
    uint64_t ld_lo, ld_hi;
    uint32_t ld_epoch;      /* the epoch ld_lo/ld_hi belong to (0: no load yet) */
    uint32_t ld_pc;         /* the pc of its latest load (where it waits) */
    uint8_t ld_pcs;         /* its loads of the epoch were at more than one pc */
    uint64_t spin_hash;     /* a stall being verified: its registers when it last polled at ld_pc */
    uint32_t spins;         /* polls in a row at ld_pc with the same registers */
    /* its tensor core work (emu_mma.c): when its last wgmma's accumulators are ready (`pending`); the
     * ends of its last 8 committed wgmma groups */
    struct { uint64_t pending, group[8], wgdone_at; uint32_t ngroups, retired, base, wgdone; uint8_t waits; } mma;
    /* retired: groups this warp waited for; base: ngroups when the block started (a group's number
     * in the block is ngroups - base, the same in the four warps of a warpgroup); wgdone: groups
     * some warp of the warpgroup waited for (their shared-memory reads are over from wgdone_at, the
     * cycle that wait ends); waits: it waits
     * at wgmma.wait_group for a warp of its warpgroup to commit */
    uint32_t *acc;          /* strict mode: per register, the wgmma group (commit count + 1 when issued)
                             * whose accumulator or A fragment it is; pending while above mma.retired */
    uint32_t nreg;          /* setmaxnreg: the registers a thread of this warp holds (ctx.regs at start;
                             * 0: not known yet) */
    /* barrier.cluster: the lanes that arrived and not yet waited, and the cluster phase each arrived in */
    uint32_t cl_arrived, cl_phase;
    /* its bulk copies (emu_tma.c): the latest end of those not committed; the ends of its last 8 bulk groups */
    struct { uint64_t pending, group[8]; uint32_t ngroups; } bulk;
    uint32_t nsetmax, setmax_pc; /* setmaxnreg: how many the warp ran, and the pc of the last */
    uint32_t nwgmma, wgmma_pc; /* wgmma.mma_async: the same */
    /* stall reasons (emu_stalls.c, counting only): its last issue's cycle, pc, the end of its cost
     * and the reasons of the cycles after it (EMU_NO_PC: none yet in this block) */
    uint64_t st_last, st_end;
    uint32_t st_pc;
    uint8_t st_cost_why, st_wait_why;
    const unsigned char *fl_wait; /* flows (emu_flows.c): the mbarrier a wait of it found incomplete, NULL: none */
    const mh_ptx_insn *red;  /* the bar.red its lanes wait at (its d is written when the barrier opens), NULL: none */
    /* wgmma's f32 accumulators kept as a 16 x N tile between chained wgmmas (emu_mma.c): while
     * tile_live, the registers of the D list at tile_off (tile_n entries) hold stale values and the
     * tile the current ones, written back before any other instruction names one of them */
    float *tile;
    uint32_t tile_off;
    uint16_t tile_n, tile_N;
} warp;
#define EMU_NO_PC UINT32_MAX

typedef struct vsm vsm;
enum { FRESH_SHARED = 1, FRESH_REGS = 2 };

/* A block resident on a virtual SM (a slot of it): its memory and warps. */
struct blk {
    vsm *sm;                /* the SM whose slot it is */
    int busy;               /* holds a block now */
    uint8_t fresh;          /* FRESH_*: buffers new from calloc, still zero (the slot's first block) */
    int vacant;             /* its block finished at `end` and the next block of the grid is owed to it */
    uint32_t ctaid[3];
    unsigned char *shared, *local, *frames;
    uint64_t *regs;
    uint32_t *written;
    uint64_t *rdy;          /* its warps' rows' ready cycles (nregs a warp) */
    warp *warps;
    call_frame (*stacks)[MAX_CALL_DEPTH]; /* its warps' call stacks (WARP per warp), NULL without calls */
    uint32_t bar_arrived[NUM_BARRIERS]; /* threads arrived at each counted barrier */
    uint32_t red_true, red_all; /* bar.red: threads arrived with a true predicate, and all arrived */
    uint32_t running;       /* warps that can issue (W_RUN) */
    uint32_t parked;        /* warps whose lanes all wait at an incomplete mbarrier phase (W_PARK) */
    uint32_t live;          /* warps not finished */
    uint64_t park_writes;   /* memory writes when a parked warp last looked */
    uint64_t round_writes;  /* memory writes at the last round in which every warp waited */
    uint64_t stalled;       /* such rounds in a row without a write */
    uint64_t end;           /* when its last warp finished */
    /* clusters (emu_cluster.c): its rank, the blocks of its cluster by rank (itself included), and
     * (kept by rank 0) the cluster barrier's arrivals and phase */
    int64_t reg_free;       /* setmaxnreg: registers of the block's pool (ctx.regs x its threads) that
                             * setmaxnreg.dec freed and no setmaxnreg.inc took yet */
    uint32_t rank;
    blk *peer[MH_EMU_MAX_CLUSTER];
    int done;               /* finished, its slot kept until every block of the cluster has */
    uint32_t cl_arrived;
    int cl_phase;
    /* bulk copies' complete_tx in its SM's tma_q landing on this block's mbarriers, and the earliest one's
     * due (emu_tma.c): an mbarrier operation with none due skips the queue */
    uint32_t tma_n;
    uint64_t tma_due;
};

#define SUBPARTS 4          /* sub-partitions of an SM, each issuing one warp instruction per cycle */
#define SM_MAX_WARPS 64     /* sm_90: 2048 threads */

typedef struct {
    warp *w[SM_MAX_WARPS];  /* its warps that can issue */
    uint64_t ready[SM_MAX_WARPS]; /* their ready and slot, side by side (a scan touches no warp) */
    uint16_t slot[SM_MAX_WARPS];
    uint32_t n;
    uint64_t free;          /* the first cycle it can issue again */
    uint64_t pipe_free[MH_PIPE_N]; /* the first cycle each execution pipe takes another instruction */
    warp *best;             /* the one it issues next (NULL: to be found) */
    uint8_t bi;             /* best's index in w[] */
    uint8_t pf;             /* the registers best's next instruction reads were prefetched */
} subpart;

/* A bulk copy's complete_tx still to land on an mbarrier (emu_tma.c): copies are made at issue,
 * their transaction bytes arrive on the barrier at `due`. */
typedef struct {
    uint64_t due; blk *b; uint32_t off, bytes;
    uint32_t pc, need;              /* the copy's pc; the phase count it is for (strict mode: emu_hazards.c) */
    uint32_t ictaid[3], ithread;    /* who issued it, and when (%clock64): a flow's source (emu_flows.c) */
    uint64_t iclock;
} tma_done;

/* A virtual SM: its sub-partitions and resident slots. */
struct vsm {
    subpart *sps;           /* its SUBPARTS sub-partitions (ctx.sps_mem): kept out of vsm so that the
                             * device loop's scan of every SM's next event reads a small, dense array */
    blk *blks;              /* `resident` slots, their memory allocated on first use */
    uint32_t id;
    uint64_t clock0;        /* its %clock at the launch's start */
    uint64_t end;           /* when its last block ended */
    uint64_t vacant_at;     /* the earliest vacant slot's end (UINT64_MAX: none) */
    uint64_t next;          /* the cycle of its next event (an issue or a dispatch), UINT64_MAX: idle */
    uint64_t lsu_free;      /* the first cycle its memory pipe (L1 and shared memory) takes a wavefront */
    uint64_t tma_free;      /* the first cycle its TMA unit starts another copy */
    uint8_t held;           /* stopped before a strong operation, for the quantum's serial part */
    /* kept per SM so that SMs on different workers share nothing (emu_workers.c): */
    tma_done *tma_q;        /* complete_tx still to land on its blocks' mbarriers, in no order */
    uint32_t ntma_q, cap_tma_q;
    float **tiles;          /* its warps' wgmma accumulator tiles, freed at the launch's end */
    uint32_t ntiles, cap_tiles;
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
    int data_owned;         /* data_addr was allocated for this launch (not mh_emu_extra.data_addr) */
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
    uint64_t quiet_writes, quiet_rounds; /* rounds of mbarrier waits (any block's) since writes was quiet_writes
                                          * (on workers: summed over the SMs at each quantum's end) */
    const mh_ptx_insn *cur;    /* for fault messages */
    blk *cb;                /* the block of the instruction running; its memory and warps: */
    unsigned char *shared, *local, *frames;
    warp *warps;
    uint32_t *bar_arrived;
    int released;           /* a counted barrier completed: warps of the block may go on */
    /* the device: every SM, run in virtual-time order (the scheduler below) */
    vsm *sms;
    subpart *sps_mem;       /* the SMs' sub-partitions, SUBPARTS an SM */
    uint32_t nsms;          /* SMs that get blocks: min(SMs, blocks of the grid) */
    vsm *cs;                /* the SM running */
    uint32_t resident;      /* blocks an SM holds at once */
    uint64_t nblocks, next_block; /* blocks of the grid; the next one to dispatch (blockIdx order) */
    /* the grid-wide stall check (progress: a store, an atomic that changed memory, a barrier
     * arrival, an exit; the scheduler checks it between quanta) */
    uint64_t progress, seen_progress;
    uint32_t epoch;         /* moves on with each progress the scheduler sees */
    uint64_t progress_t, progress_insns; /* the cycle and the warp instructions when it last saw one */
    uint64_t quiet_t, quiet_insns; /* the cycle and the warp instructions when it last saw one (kept
                                    * through verifications) */
    int verify;             /* a stall is being verified: polls compare the warps' registers */
    uint64_t verify_insns;  /* the warp instructions when the verification began */
    uint32_t cluster[3], cluster_n; /* the cluster's shape and blocks (1x1x1: none) */
    int cluster_explicit;   /* launched with a cluster (%is_explicit_cluster) */
    uint32_t cluster_waiting; /* slots whose vacancy waits for the others of a whole cluster */
    uint64_t grid_ws;       /* cooperative launch: the grid workspace's address (%envreg1/2), 0: none */
    int envreg_read;        /* the kernel read %envreg1/2 (a trap then likely means: not cooperative) */
    int slow;               /* strict mode or counting: the checks around each instruction */
    uint64_t *counts;       /* counting: MH_CT_COUNT per instruction of code */
    mh_outbuf out;          /* what the kernel printed */
    mh_outbuf warn;         /* warnings (emu_warn): one line each, once per source line */
    uint32_t warn_lines[EMU_WARN_LINES], nwarn_lines; /* the source lines warned about */
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
    int frames_used;        /* some instruction reaches the frames (a call, a .param access other than a
                             * kernel parameter's): else a slot has none and a block clears none */
    /* registers: the kernel's and its callees' [reg_lo, reg_lo + nregs) of the module's, renumbered from 0 */
    uint32_t reg_lo, nregs;
    uint8_t *fast;          /* per instruction: its fast-path kind (emu_fast.c), 0: the general path */
    uint16_t *pipe;         /* per instruction: its pipe (MH_PIPE_*) << 8 | the cycles it holds it (emu_model.c) */
    emu_sb *sb;             /* per instruction: the rows it reads and writes, its result latency (emu_scoreboard.c) */
    uint32_t *sb_regs;      /* the lists sb's entries point into */
    uint64_t sb_until;      /* step_warp deferred the warp (4): the cycle its operands are ready */
    uint8_t *acc_touch;     /* per instruction: it may name a wgmma accumulator register (NULL: no tiles kept) */
    struct emu_wg_b *wgb;   /* the last wgmma's B operand, for the other warps of its warpgroup (emu_mma.c) */
    uint64_t *kconst;       /* per instruction: an EMU_FK_CONST's value (as put() stores it) */
    int packed;             /* registers packed by live range (emu_regpack.c): nregs rows a warp, */
    uint32_t *zero_rows, nzero_rows; /* and the rows a block starts with cleared (the others unread) */
    /* the tensor-core records and their register lists the code's MMA instructions name: the module's,
     * or the launch's copies renamed to rows when packing renamed the code (emu_regpack.c) */
    const struct mh_ptx_mma *mma;
    const uint32_t *mma_regs;
    struct mh_ptx_mma *own_mma;
    uint32_t *own_mma_regs;
    int calls;              /* the code calls a defined function (warps need call stacks) */
    uint32_t regs;          /* registers a thread gets at launch (ptxas's count; 0: not known, and
                             * setmaxnreg then checks only its rules, no pool) */
    int setmaxnreg_off;     /* ptxas dropped the kernel's setmaxnreg (C7507): rules only, no pool */
    uint64_t local_lo;      /* the kernel's .local variables start here in the module's layout */
    struct emu_hz *hz;      /* strict mode: the Hopper hazards' shadow of shared memory (emu_hazards.c), else NULL */
    struct emu_regions *regions; /* an instrumented kernel: who ran its begin markers (emu_regions.c), else NULL */
    struct emu_flows *flows;  /* a launch with a trace: what released each mbarrier wait (emu_flows.c), else NULL */
    struct emu_mt *mt;      /* the memory hierarchy's and tensor cores' time (emu_memtime.c) */
    uint64_t mt_last_line;  /* emu_mt_touch: the 128-byte line recorded last (UINT64_MAX: not recording) */
    uint32_t workers;       /* workers the SMs ran on; serial: why the launch runs on one worker whatever the
                             * threads (NULL: it may run on several); such a launch applies each SM's L2
                             * changes after its turn (emu_mt_sm_end), as before threads */
    const char *serial;
    uint8_t *strong;        /* with workers: per instruction, a strong operation (emu_workers.c) */
    int hold;               /* a warp about to run a strong operation holds its SM (vsm.held) until the
                             * quantum's serial part */
    struct emu_par *par;    /* the SMs' workers (emu_workers.c), NULL: the SMs run one after another here */
} ctx;

static inline uint64_t align16(uint64_t v) { return (v + 15) & ~15ull; }


/* the issue model's states of a warp (emu_sched.c) */
enum { W_RUN, W_WAIT, W_PARK, W_DONE };

/* ---- faults and stops (emu.c) ---- */
void *emu_fault(ctx *c, const warp *w, int lane, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* What the PTX leaves undefined and emu lets happen outside strict mode: a line of the launch's
 * warnings (mh_emu_stats.warnings) naming file:line, kernel, block and thread, once per source line
 * (the first EMU_WARN_LINES lines). */
void emu_warn(ctx *c, const warp *w, int lane, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int emu_poll_stop(ctx *c);
void emu_uninitialised(ctx *c, const warp *w, uint32_t reg, int lane);
double emu_monotonic_s(void);
uint64_t emu_sreg(ctx *c, const warp *w, uint32_t id, int lane);
uint64_t emu_sym_addr(ctx *c, int v);

/* ---- memory (emu_memory.c) ---- */
/* A buffer of `bytes` for a slot's registers, warps, shared memory or frames: one an earlier launch
 * gave back (its old contents: callers clear what they need), else a new zeroed one; NULL when out
 * of memory.  emu_pool_put gives it back for the next launch (up to EMU_POOL_MAX bytes kept; the
 * rest is freed): a launch's slots would otherwise be new memory every launch, the page faults
 * of which were a fifth of a memory-bound kernel's time.  mh_emu_destroy frees what is kept. */
#define EMU_POOL_MAX (256u << 20)
void *emu_pool_get(mh_emu *d, size_t bytes);
void emu_pool_put(mh_emu *d, void *p, size_t bytes);
#define MH_EMU_MAX_LOCAL (512u * 1024u) /* local memory a thread may have (CUDA's limit since sm_20) */
/* A slot's local memory: reserved, its pages given (zeroed) when first touched. */
unsigned char *emu_local_alloc(uint64_t bytes);
void emu_huge(void *p, size_t bytes);   /* 2 MiB pages over a big buffer read at random: a hint */
void emu_local_free(unsigned char *p, uint64_t bytes);
alloc *emu_find_alloc(mh_emu *d, uint64_t a, uint64_t n);
const char *emu_space_name(int s);
unsigned char *emu_mem(ctx *c, const warp *w, int lane, int space, uint64_t addr, uint32_t size, int write);

/* ---- instructions (emu_exec.c, emu_sync.c) ---- */
int emu_exec_insn(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t mask, uint32_t *next);
uint64_t emu_atomic(mh_ptx_aop op, mh_ptx_type t, unsigned char *p, uint64_t b, uint64_t cv);
int emu_exec_mbarrier(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t emask);
int emu_bar_counted(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t emask);
int emu_extern_call(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t emask);

/* ---- tensor cores (emu_mma.c) ---- */
/* At launch: which instructions may name a wgmma accumulator register (c->acc_touch), for the
 * accumulator tiles; 0, or -1 out of memory. */
int emu_mma_plan(ctx *c);
/* Writes warp w's accumulator tile back to its registers. */
void emu_acc_flush(ctx *c, warp *w);

/* ---- bulk copies and clusters (emu_tma.c, emu_cluster.c, emu_sync.c) ---- */
int emu_tma_exec(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t emask);
/* Lands the complete_tx due by `now` on block b's barriers (0, or -1 after a fault). */
int emu_tma_settle(ctx *c, warp *w, blk *b, uint64_t now);
/* The earliest complete_tx still to land on block b's barriers (UINT64_MAX: none). */
uint64_t emu_tma_next_due(const ctx *c, const blk *b);
/* Drops what is still to land on block b (its slot gets another block). */
void emu_tma_forget(ctx *c, blk *b);
/* complete_tx of `bytes` on the mbarrier at shared::cluster address addr (lane l's) */
int emu_mbar_tx(ctx *c, warp *w, int l, uint64_t addr, int64_t bytes);
int emu_mbar_tx_host(ctx *c, warp *w, int l, unsigned char *p, int64_t bytes);
/* Host pointer of `size` bytes at a shared::cluster address (its block in *owner when asked),
 * or NULL after a fault. */
unsigned char *emu_dsmem(ctx *c, const warp *w, int lane, uint64_t addr, uint32_t size, int write, blk **owner);
uint32_t emu_cluster_size(const ctx *c);
/* The launch's cluster from the launch (req: 0 or 1x1x1 none) and the kernel's directives, checked. */
int emu_cluster_setup(ctx *c, const uint32_t req[3], mh_error *e);
uint64_t emu_cluster_sreg(const ctx *c, const warp *w, uint32_t id);
/* Block `linear` of dispatch order j (clusters whole, in cluster order, each by rank). */
uint64_t emu_cluster_block_of(const ctx *c, uint64_t j);
int emu_cluster_exec(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t emask);

/* ---- the fast path of converged warps (emu_fast.c) ---- */
/* An instruction's fast-path kind: 0 none, below EMU_FK_MEM an ALU instruction (emu_fast_exec),
 * from EMU_FK_MEM up a global load or store (emu_fast_mem): EMU_FK_MEM | store << 4 | signed << 3 |
 * (8-byte elements) << 2 | log2(vector length). */
#define EMU_FK_MEM 0x80u
/* Kinds the launch decides (emu.c's link_code), below EMU_FK_MEM but not emu_fast_exec's: a register
 * set to a launch constant (ld.param of a kernel parameter, mov of %ntid and the like; its value
 * in ctx's kconst[pc]), and a mov of a special register a warp's lanes compute (%tid, %ctaid, ...). */
#define EMU_FK_CONST 0x70u
#define EMU_FK_SREG 0x71u
/* An EMU_FK_CONST whose register every reader now has as an immediate (emu_regpack.c's fold): it
 * issues and writes nothing on the fast path. */
#define EMU_FK_DEAD 0x72u
uint8_t emu_fast_kind(const mh_ptx_insn *in);
void emu_fast_exec(warp *w, const mh_ptx_insn *in, uint8_t kind);
/* The launch-time kinds of the kernel's instructions (EMU_FK_CONST with its value in kconst[pc],
 * EMU_FK_SREG) where fast[pc] is none yet. */
void emu_fast_consts(ctx *c);
/* A converged warp's EMU_FK_CONST or EMU_FK_SREG instruction at pc. */
void emu_fast_const(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t pc);
/* A converged, unguarded warp's ld/st.global (or generic below the windows) of kind `kind` (see
 * above): 1 when it ran (c->cost its cycles, counted when counting), 0 when the general path must
 * run it (an address outside the allocation the instruction touched last, misaligned, or none yet),
 * without having touched anything. */
int emu_fast_mem(ctx *c, warp *w, const mh_ptx_insn *in, uint8_t kind);
/* A converged, unguarded warp's ld/st.shared at [register + offset] of its block's shared memory
 * (emu_exec.c's fast_shared: every lane inside and aligned), outside strict mode and counting:
 * 1 when it ran (c->cost its cycles, as the general path's), 0 when the general path must run it,
 * nothing touched. */
int emu_fast_shared(ctx *c, warp *w, const mh_ptx_insn *in);

/* ---- strict mode and counting (emu_slowpath.c) ---- */
int emu_strict_sources(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t mask);
/* Strict mode: register r (the kernel's numbering) belongs to a wgmma not yet waited for; an
 * instruction other than a wgmma reading (or writing) it faults: 1 then. */
int emu_strict_pending(ctx *c, const warp *w, uint32_t r, int write);
void emu_strict_dests(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t mask);
void emu_count_insn(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t mask);
/* Counting: warp w issued c->cur at cycle t (c->cost its cost, w->ready still the cycle it could
 * have issued from): the warp-cycles since its last issue charged to their reasons (emu_stalls.c).
 * Called where the instruction is counted (the fast paths' and the slow path's existing tests of
 * counting), so that a launch without stats pays nothing for it. */
void emu_stall_issue(ctx *c, warp *w, uint64_t t);
/* Counting: warp w, ready to issue, waits until `until` for a row its next instruction reads (the
 * scoreboard): those cycles are charged as its previous instruction's, reason wait. */
void emu_stall_defer(ctx *c, warp *w, uint64_t until);

/* ---- strict mode: Hopper's hazards (emu_hazards.c; c->hz NULL when not strict) ---- */
/* Each returns -1 after a fault it reported, else 0.  Async-proxy writes of shared memory are
 * marked per 4-byte word with the completion that retires them (an mbarrier phase, a warp's
 * cp.async group); wgmma's shared operands with their warp's group. */
int emu_hz_start(ctx *c);
void emu_hz_free(ctx *c);
/* A bulk or tensor copy (c->cur) writing n bytes at shared::cluster address dst, completing on the
 * mbarrier at shared::cluster address bar: (b) against wgmmas in flight, then marked; *need the
 * phase count its complete_tx is for. */
int emu_hz_copy(ctx *c, warp *w, int lane, uint64_t dst, uint64_t n, uint64_t bar, uint32_t *need);
/* (c): a copy's complete_tx about to land on the mbarrier at p (block d->b). */
int emu_hz_land(ctx *c, warp *w, const tma_done *d, const unsigned char *p);
/* The mbarrier at p completed a phase; a wait found it complete; an expect_tx (c->cur) on it. */
void emu_hz_phase(ctx *c, const warp *w, const unsigned char *p);
void emu_hz_observe(ctx *c, const warp *w, const unsigned char *p);
void emu_hz_expect(ctx *c, const warp *w, const unsigned char *p);
/* (a) before instruction in runs: its shared accesses; cp.async marks and their groups. */
int emu_hz_insn(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t emask);
/* A wgmma's read of shared bytes [off, off + n) of its block: (a), then marked as read by its group. */
int emu_hz_wgmma_read(ctx *c, warp *w, uint64_t off, uint32_t n);

/* ---- regions no one records (emu_regions.c; c->regions NULL unless instrumented) ---- */
int emu_regions_start(ctx *c);  /* -1: out of memory */
void emu_regions_free(ctx *c);
/* A marker ran for the lanes of mask. */
void emu_regions_marker(ctx *c, const warp *w, const mh_ptx_insn *in, uint32_t mask);
/* After the launch: a warning (c->warn) per region only threads that do not write the trace entered. */
void emu_regions_warn(ctx *c);

/* ---- flows: what released a wait (emu_flows.c; c->flows NULL unless asked) ---- */
int emu_flows_start(ctx *c);    /* -1: out of memory */
int emu_flows_sms(ctx *c);      /* the per-SM records, once c->nsms is known; -1: out of memory */
int emu_flows_quantum_end(ctx *c); /* the SMs' flows of the quantum appended in SM order; -1: out of memory */
void emu_flows_free(ctx *c);
/* The flows recorded (the caller's, malloc'd), taken from c. */
void emu_flows_take(ctx *c, mh_trace_flow **v, uint32_t *n);
/* The TMA landing d completes what it completes (NULL: done landing). */
void emu_flows_tma_source(ctx *c, const tma_done *d);
/* The mbarrier at p completed a phase (by lane `lane` of w, or the TMA landing). */
void emu_flows_complete(ctx *c, const warp *w, int lane, const unsigned char *p);
/* Lane `lane` of w waited on the mbarrier at p and found its phase complete (done) or not. */
void emu_flows_wait(ctx *c, warp *w, int lane, const unsigned char *p, int done);

/* ---- registers packed by live range (emu_regpack.c) ---- */
/* Renames the kernel's registers in c->code to shared rows where packing applies (c->packed, c->nregs
 * the rows, c->zero_rows); 0 (packed or not), -1 out of memory. */
int emu_pack_registers(ctx *c);
/* Calls f(r, dst, arg) for each register (a row of c->nregs) instruction `in` names, in o[], its
 * guard, dst2 or its tensor-core record (dst: it writes it); 0, or -1 when one is out of range. */
int emu_insn_regs(const ctx *c, const mh_ptx_insn *in, void (*f)(uint32_t, int, void *), void *arg);

/* ---- the register scoreboard (emu_scoreboard.c) ---- */
/* Plans c->sb (per instruction: the rows it reads and writes, its result latency); 0, -1 out of memory. */
int emu_sb_plan(ctx *c);
/* The first cycle warp w may issue pc's instruction: when the last of the rows it reads is ready. */
static inline uint64_t emu_sb_ready(const ctx *c, const warp *w, uint32_t pc)
{
    const emu_sb *s = &c->sb[pc];
    const uint32_t *r = c->sb_regs + s->off + s->ndst, n = s->nsrc;
    const uint64_t *rdy = w->rdy;
    uint64_t t = 0;
    for (uint32_t i = 0; i < n; i++)
        if (rdy[r[i]] > t) t = rdy[r[i]];
    return t;
}
/* Warp w issued pc's instruction, which started on its pipe at `go`: the rows it writes are ready at
 * go + its latency (go for an instruction without one: a row another register of a packed launch
 * held before is not waited for). */
static inline void emu_sb_issued(const ctx *c, warp *w, uint32_t pc, uint64_t go)
{
    const emu_sb *s = &c->sb[pc];
    if (!s->ndst) return;
    uint64_t at = go + s->lat;
    w->rdy[s->d0] = at;
    if (__builtin_expect(s->ndst > 1, 0))
        for (uint32_t i = 1, n = s->ndst; i < n; i++) w->rdy[c->sb_regs[s->off + i]] = at;
}

/* ---- the scheduler (emu_sched.c) ---- */
int emu_run_grid(ctx *c, uint64_t *longest);
/* Runs SM sm through the issue model until its next issue would pass `limit` or reach a vacancy. */
int emu_run_sm(ctx *c, vsm *sm, uint64_t limit);

/* ---- SMs in parallel (emu_workers.c) ---- */
/* Why the launch's SMs must run one after another (a strong operation, clusters, ...), NULL: they
 * may run on workers. */
const char *emu_par_serial_reason(const ctx *c);
/* Starts `threads` workers for the launch (c->par); -1 out of memory. */
int emu_par_start(ctx *c, uint32_t threads);
void emu_par_stop(ctx *c);
uint32_t emu_par_workers(const ctx *c);
/* The SMs run[0..nrun) (in SM order) through the quantum to `limit` on the workers, their results
 * merged in SM order: 0, or -1 after the first fault in SM order (c->e). */
int emu_par_quantum(ctx *c, const uint32_t *run, uint32_t nrun, uint64_t limit);
/* Gives slot b's memory back (to the device's pool, for the next launch). */
void emu_slot_release(ctx *c, blk *b);
void emu_spin_observe(ctx *c, warp *w, uint32_t pc);

/* ---- inline helpers of the interpreter ---- */
static inline void thread_of(ctx *c, const warp *w, int lane, uint32_t t[3])
{
    uint32_t lin = w->index * WARP + (uint32_t)lane;
    t[0] = lin % c->block[0];
    t[1] = lin / c->block[0] % c->block[1];
    t[2] = lin / (c->block[0] * c->block[1]);
}

/* The pcs of a warp the fast paths ran (they keep only kpc): written out before pc[] is read. */
static inline void emu_sync_pcs(warp *w)
{
    if (!w->pc_stale) return;
    for (int l = 0; l < WARP; l++)
        if (w->kmask >> l & 1) w->pc[l] = w->kpc;
    w->pc_stale = 0;
}

/* ---- values --------------------------------------------------------------- */

#define REG(W_, R_, L_) ((W_)->r[(size_t)(R_) * WARP + (size_t)(L_)])

static inline uint64_t mask_bits(int bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }
static inline int64_t sext(uint64_t v, int bits)
{
    return bits >= 64 || bits <= 0 ? (int64_t)v : (int64_t)(v << (64 - bits)) >> (64 - bits);
}



static inline __attribute__((always_inline)) uint64_t val(ctx *c, const warp *w, const mh_ptx_opnd *o, int lane)
{
    uint64_t v;
    if (__builtin_expect(o->kind == MH_OPK_REG && !o->neg, 1)) return REG(w, o->reg, lane);
    switch (o->kind) {
    case MH_OPK_REG: v = REG(w, o->reg, lane); break;
    case MH_OPK_IMM: v = (uint64_t)o->imm; break;
    case MH_OPK_SREG: v = emu_sreg(c, w, o->reg, lane); break;
    case MH_OPK_SYM: v = emu_sym_addr(c, o->sym); break;
    case MH_OPK_PARAM_ADDR: v = c->f->params[o->param].offset; break; /* a kernel parameter's .param address */
    default: v = 0;
    }
    return o->neg ? !v : v;
}

/* A warp-synchronous instruction's member mask for lane l, its operand k (shfl 4; vote, redux,
 * match 2; elect, bar.warp.sync 1 or 0): the lane's own, or every lane for a form without one. */
static inline uint32_t emu_member_mask(ctx *c, const warp *w, const mh_ptx_insn *in, int k, int l)
{
    return in->nopnds > k ? (uint32_t)val(c, w, &in->o[k], l) : 0xffffffffu;
}

/* A value of type t as a register holds it: predicates 0/1, signed types sign-extended, the rest
 * zero-extended. */
static inline uint64_t reg_value(uint64_t v, mh_ptx_type t)
{
    int bits = mh_ptx_type_bits(t);
    if (t == MH_PT_PRED) return v != 0;
    if (mh_ptx_type_is_signed(t)) return (uint64_t)sext(v, bits);
    return v & mask_bits(bits);
}

static inline void put(ctx *c, warp *w, uint32_t reg, int lane, uint64_t v, mh_ptx_type t)
{
    (void)c;
    REG(w, reg, lane) = reg_value(v, t);
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
    unsigned char *p = emu_mem(c, w, lane, space, addr, size, write);
    if (p && (space == MH_SP_GLOBAL || (space == MH_SP_GENERIC && addr < SHARED_WIN))) *slot = c->last;
    return p;
}

static inline uint64_t ld_elem(const unsigned char *p, int bytes)
{
    switch (bytes) { /* fixed sizes: single loads, no memcpy call */
    case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
    case 8: { uint64_t v; memcpy(&v, p, 8); return v; }
    case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
    default: return *p;
    }
}

/* The low `bytes` bytes of v to p (fixed sizes: single stores, not a copy loop). */
static inline void st_elem(unsigned char *p, uint64_t v, int bytes)
{
    switch (bytes) {
    case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
    case 8: memcpy(p, &v, 8); break;
    case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
    default: *p = (unsigned char)v;
    }
}

static inline int elem_bytes(mh_ptx_type t)
{
    int b = mh_ptx_type_bits(t) / 8;
    return b ? b : 1;
}

/* The running warp's access of wf wavefronts through its SM's memory pipe (L1 and shared memory, a
 * wavefront a cycle): it waits for the pipe, holds it wf cycles; what the warp pays beyond its issue
 * cycle (the wait and wf - 1). */
static inline uint64_t emu_pipe_cost(ctx *c, uint32_t wf)
{
    vsm *sm = c->cs;
    uint64_t t = c->now + 1, start = sm->lsu_free > t ? sm->lsu_free : t;
    sm->lsu_free = start + wf;
    return (start - t) + wf - 1;
}

static inline uint64_t address(ctx *c, const warp *w, const mh_ptx_opnd *o, int lane)
{
    uint64_t base = 0;
    if (o->reg != UINT32_MAX) base = REG(w, o->reg, lane);
    else if (o->sym >= 0) base = emu_sym_addr(c, o->sym);
    else if (o->param >= 0) base = c->f->params[o->param].offset;
    return base + (uint64_t)o->imm;
}

/* Frame regions of function fi for one thread: formal params, returns,
 * the .param variables of its call sequences. */
static inline unsigned char *frame(ctx *c, const warp *w, int lane, uint32_t fi, int part)
{
    const mh_ptx_func *F = &c->m->funcs[fi];
    uint64_t off = c->frame_off[fi];
    if (part >= 1) off += align16(F->param_bytes);
    if (part >= 2) off += align16(F->ret_bytes);
    return c->frames + (w->index * WARP + (uint64_t)lane) * c->frame_bytes + off;
}

/* An mbarrier object (8 bytes in shared memory): its phase, the arrivals
 * pending and expected per phase, and the transaction bytes still to come
 * (a 21-bit two's-complement field: complete_tx may come before expect_tx).
 * The layout is emu's own; kernels treat the object as opaque. */
#define MH_MB_FIELD 0x1FFFFFull
typedef struct { int phase; int64_t pending, expected, tx; } mbar;

static inline mbar mb_load(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    int64_t tx = (int64_t)(v >> 42 & MH_MB_FIELD);
    if (tx & 0x100000) tx -= 0x200000;
    return (mbar){.phase = (int)(v >> 63), .pending = (int64_t)(v & MH_MB_FIELD), .expected = (int64_t)(v >> 21 & MH_MB_FIELD),
                  .tx = tx};
}

static inline void mb_store(unsigned char *p, mbar b)
{
    uint64_t v = (uint64_t)b.phase << 63 | ((uint64_t)b.tx & MH_MB_FIELD) << 42 | ((uint64_t)b.expected & MH_MB_FIELD) << 21 |
                 ((uint64_t)b.pending & MH_MB_FIELD);
    memcpy(p, &v, 8);
}


/* The grid-wide stall check's record of a load (or an atomic that changed nothing): the
 * span of addresses the warp's loads touched since the last progress, and where it is. */
static inline void note_load(ctx *c, warp *w, int space, uint64_t a)
{
    if (__builtin_expect(c->verify, 0)) emu_spin_observe(c, w, (uint32_t)(c->cur - c->code));
    if (space == MH_SP_SHARED) a += SHARED_WIN;
    uint32_t pc = (uint32_t)(c->cur - c->code);
    if (w->ld_epoch != c->epoch) {
        w->ld_epoch = c->epoch;
        w->ld_lo = w->ld_hi = a;
        w->ld_pcs = 0;
    } else {
        if (a < w->ld_lo) w->ld_lo = a;
        if (a > w->ld_hi) w->ld_hi = a;
        if (pc != w->ld_pc) w->ld_pcs = 1;
    }
    w->ld_pc = pc;
}


#endif
