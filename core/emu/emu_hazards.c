/* emu_hazards.c - strict mode's Hopper hazards (issue 34): emu copies at issue, so a kernel that
 * reads a TMA's destination before its mbarrier phase completes gets the right data on emu and
 * stale data on a GPU.  In strict mode every block's shared memory has a shadow, one entry per
 * 4-byte word: the async-proxy write still to land on it (the copy's pc, and what retires it: a
 * phase count of an mbarrier of the block, or a cp.async group of a warp) and the wgmma that
 * reads it (its warp and wgmma group).  Three faults follow, each naming both lines:
 * (a) a thread (ld/st/atom, ldmatrix, a wgmma's operands) touching a word an async copy is to
 *     write whose completion no thread of the block has observed (a wait that found the phase
 *     complete, cp.async.wait_group/wait_all of the issuing warp): a wait on the wrong parity;
 * (b) an async copy writing a word a wgmma of a group not yet retired by wgmma.wait_group reads:
 *     the missing wait for the consumers' "empty" barrier;
 * (c) a complete_tx bringing more bytes than its phase still expects once every arrival is in, or
 *     landing on a later phase than the one it was issued in (that phase completed without it):
 *     an expect_tx smaller than the bytes the copies deliver.
 * Observations are per block (a thread that waits and then releases others with bar.sync is the
 * common pattern); cp.async.mbarrier.arrive counts as the warp's cp.async completing. */
#include "emu/emu_internal.h"
#include "frontend/ptx_mma.h"
#include "frontend/ptx_source.h"

#include <stdio.h>
#include <stdlib.h>

enum { HZ_NONE, HZ_MBAR, HZ_CPASYNC };

typedef struct {
    uint32_t wpc;           /* the async write's pc + 1 (0: none pending) */
    uint32_t wref;          /* HZ_MBAR: its mbarrier's offset; HZ_CPASYNC: the issuing warp */
    uint32_t wneed;         /* HZ_MBAR: the phase count that retires it; HZ_CPASYNC: the warp's cp.async number */
    uint32_t rpc;           /* the reading wgmma's pc + 1 (0: none) */
    uint32_t rwarp, rgroup; /* its warp and group (commit count + 1 when issued) */
    uint8_t wkind;
} hz_word;

typedef struct {
    uint32_t off, done, seen, expect_pc; /* an mbarrier: phases completed, observed; the last expect_tx's pc + 1 */
} hz_mbar;

#define HZ_MAX_MBARS 256
#define HZ_GROUPS 8

typedef struct {
    uint64_t block;         /* the block (linear index + 1) the shadow is of; 0: none yet */
    hz_word *w;             /* shared_size / 4 words */
    hz_mbar mb[HZ_MAX_MBARS];
    uint32_t nmb;
    /* cp.async per warp: copies issued, copies retired (their number), the count at each commit */
    uint32_t *cpa_seq, *cpa_done, *cpa_ngroups, (*cpa_group)[HZ_GROUPS];
} hz_slot;

struct emu_hz {
    hz_slot *slots;         /* per slot: SM i's slot s at i * resident + s */
    uint32_t nslots, nwords;
};

int emu_hz_start(ctx *c)
{
    c->hz = calloc(1, sizeof *c->hz);
    if (!c->hz) return -1;
    c->hz->nslots = c->nsms * c->resident;
    c->hz->nwords = (uint32_t)((c->shared_size + 3) / 4);
    c->hz->slots = calloc(c->hz->nslots ? c->hz->nslots : 1, sizeof *c->hz->slots);
    return c->hz->slots ? 0 : -1;
}

void emu_hz_free(ctx *c)
{
    if (!c->hz) return;
    for (uint32_t i = 0; c->hz->slots && i < c->hz->nslots; i++) {
        hz_slot *s = &c->hz->slots[i];
        free(s->w);
        free(s->cpa_seq);
        free(s->cpa_done);
        free(s->cpa_ngroups);
        free(s->cpa_group);
    }
    free(c->hz->slots);
    free(c->hz);
    c->hz = NULL;
}

static void *oom(ctx *c)
{
    mh_fail(c->e, MH_E_NO_MEMORY, "emu: out of memory for strict mode's shadow of shared memory");
    c->faulted = 1;
    return NULL;
}

/* Block b's shadow, reset when its slot holds another block than last time (NULL: out of memory). */
static hz_slot *slot_of(ctx *c, const blk *b)
{
    struct emu_hz *h = c->hz;
    hz_slot *s = &h->slots[b->sm->id * c->resident + (uint32_t)(b - b->sm->blks)];
    uint64_t id = 1 + b->ctaid[0] + (uint64_t)c->grid[0] * (b->ctaid[1] + (uint64_t)c->grid[1] * b->ctaid[2]);
    if (s->block == id) return s;
    if (!s->w) {
        s->w = calloc(h->nwords ? h->nwords : 1, sizeof *s->w);
        s->cpa_seq = calloc(c->nwarps, sizeof *s->cpa_seq);
        s->cpa_done = calloc(c->nwarps, sizeof *s->cpa_done);
        s->cpa_ngroups = calloc(c->nwarps, sizeof *s->cpa_ngroups);
        s->cpa_group = calloc(c->nwarps, sizeof *s->cpa_group);
        if (!s->w || !s->cpa_seq || !s->cpa_done || !s->cpa_ngroups || !s->cpa_group) return oom(c);
    } else {
        memset(s->w, 0, (size_t)h->nwords * sizeof *s->w);
        memset(s->cpa_seq, 0, c->nwarps * sizeof *s->cpa_seq);
        memset(s->cpa_done, 0, c->nwarps * sizeof *s->cpa_done);
        memset(s->cpa_ngroups, 0, c->nwarps * sizeof *s->cpa_ngroups);
    }
    s->nmb = 0;
    s->block = id;
    return s;
}

/* The block of w's cluster whose shared memory holds host pointer p, and p's offset there. */
static blk *owner_of(ctx *c, const warp *w, const unsigned char *p, uint32_t *off)
{
    blk *b = w->b;
    for (uint32_t r = 0; r <= emu_cluster_size(c); r++) {
        blk *x = r == 0 ? b : emu_cluster_size(c) > 1 ? b->peer[r - 1] : NULL;
        if (x && x->shared && p >= x->shared && p < x->shared + c->shared_size) {
            *off = (uint32_t)(p - x->shared);
            return x;
        }
    }
    return NULL;
}

/* The block a shared::cluster address names (its offset in *off); NULL: none (emu_dsmem faulted). */
static blk *block_at(ctx *c, const warp *w, uint64_t addr, uint32_t *off)
{
    uint64_t hi = addr / EMU_DSMEM_RANK;
    *off = (uint32_t)(addr % EMU_DSMEM_RANK);
    if (!hi) return w->b;
    if (hi - 1 >= emu_cluster_size(c)) return NULL;
    return emu_cluster_size(c) == 1 ? w->b : w->b->peer[hi - 1];
}

static hz_mbar *mbar_of(ctx *c, hz_slot *s, uint32_t off, int add)
{
    for (uint32_t i = 0; i < s->nmb; i++)
        if (s->mb[i].off == off) return &s->mb[i];
    if (!add || s->nmb == HZ_MAX_MBARS) return NULL; /* (past 256 mbarriers a block: not tracked) */
    (void)c;
    s->mb[s->nmb] = (hz_mbar){off, 0, 0, 0};
    return &s->mb[s->nmb++];
}

/* "FILE.cu:LINE (PTX path:line)" of pc into buf. */
static const char *where(const ctx *c, uint32_t pc, char *buf, size_t len)
{
    const mh_ptx_insn *in = pc < c->ncode ? &c->code[pc] : NULL;
    mh_ptx_where(c->m, in ? in->text_off : 0, in ? in->line : 0, buf, len);
    return buf;
}

static const char *copy_name(const ctx *c, uint32_t pc)
{
    return pc < c->ncode && c->code[pc].op == MH_OP_CP_ASYNC ? "cp.async" : "async copy";
}

/* Whether word x's async write is still to be observed complete. */
static int pending(const hz_slot *s, hz_word *x)
{
    if (!x->wpc) return 0;
    int live;
    if (x->wkind == HZ_CPASYNC) {
        live = x->wneed >= s->cpa_done[x->wref];
    } else {
        live = 1;
        for (uint32_t i = 0; i < s->nmb; i++)
            if (s->mb[i].off == x->wref) live = s->mb[i].seen < x->wneed;
    }
    if (!live) x->wpc = 0; /* observed: forgotten */
    return live;
}

/* (a): `what` (a read or write by c->cur) of shared bytes [off, off + n) of block b. */
static int check_access(ctx *c, const warp *w, int lane, blk *b, uint64_t off, uint64_t n, const char *what)
{
    hz_slot *s = slot_of(c, b);
    if (!s) return -1;
    for (uint64_t k = off / 4; k < (off + n + 3) / 4 && k < c->hz->nwords; k++) {
        hz_word *x = &s->w[k];
        if (!pending(s, x)) continue;
        char at[400];
        const char *how = x->wkind == HZ_CPASYNC
                              ? "before the issuing thread's cp.async.wait_group/wait_all retired it"
                              : "before any thread of the block saw its mbarrier phase complete (a wait on the wrong "
                                "parity or phase?)";
        emu_fault(c, w, lane, "%s of shared 0x%llx, which the %s at %s is still to write: %s; a GPU reads the old "
                  "bytes (strict mode)", what, (unsigned long long)(k * 4), copy_name(c, x->wpc - 1),
                  where(c, x->wpc - 1, at, sizeof at), how);
        return -1;
    }
    return 0;
}

/* (b): whether the wgmma read of word x is over for a copy warp w issues now: the reading warp
 * waited for its group, or another warp of its warpgroup did and that wait has ended (a wgmma is
 * the warpgroup's), unless w is itself of that warpgroup: then w must have waited for the group in
 * its own program order (issuing the copy between its commit and its wait is the race, whatever
 * the other warps did meanwhile). */
static int read_over(const ctx *c, const warp *w, const blk *b, const hz_word *x)
{
    const warp *r = &b->warps[x->rwarp];
    if (x->rgroup <= r->mma.retired) return 1;
    if (x->rgroup > r->mma.wgdone || c->now < r->mma.wgdone_at) return 0;
    if (w->b == b && w->index >> 2 == x->rwarp >> 2) return w->mma.base + (x->rgroup - r->mma.base) <= w->mma.retired;
    return 1;
}

int emu_hz_copy(ctx *c, warp *w, int lane, uint64_t dst, uint64_t n, uint64_t bar, uint32_t *need)
{
    uint32_t off, boff;
    blk *b = block_at(c, w, dst, &off), *bb = block_at(c, w, bar, &boff);
    *need = 0;
    if (!b) return 0;
    hz_slot *s = slot_of(c, b);
    if (!s) return -1;
    uint32_t pc = (uint32_t)(c->cur - c->code);
    hz_mbar *m = NULL;
    if (bb == b) { /* the barrier completes in the destination's block (multicast: the same offsets) */
        m = mbar_of(c, s, boff, 1);
        if (m) *need = m->done + 1;
    }
    for (uint64_t k = off / 4; k < (off + n + 3) / 4 && k < c->hz->nwords; k++) {
        hz_word *x = &s->w[k];
        if (x->rpc && x->rwarp < c->nwarps && !read_over(c, w, b, x)) {
            char wg[400];
            uint32_t t[3];
            thread_of(c, &b->warps[x->rwarp], 0, t);
            emu_fault(c, w, lane, "the async copy writes shared 0x%llx, which the wgmma.mma_async at %s (warp %u, "
                      "thread (%u,%u,%u)) still reads: its group was not retired by wgmma.wait_group, so the "
                      "consumer never said the buffer is free (a missing wait on the 'empty' barrier?) (strict mode)",
                      (unsigned long long)(k * 4), where(c, x->rpc - 1, wg, sizeof wg), x->rwarp, t[0], t[1], t[2]);
            return -1;
        }
        if (m) {
            x->wpc = pc + 1;
            x->wkind = HZ_MBAR;
            x->wref = boff;
            x->wneed = m->done + 1;
        }
    }
    return 0;
}

int emu_hz_land(ctx *c, warp *w, const tma_done *d, const unsigned char *p)
{
    if (!d->need) return 0;
    hz_slot *s = slot_of(c, d->b);
    if (!s) return -1;
    hz_mbar *m = mbar_of(c, s, d->off, 0);
    mbar b = mb_load(p);
    int later = m && m->done + 1 != d->need, over = b.pending == 0 && b.tx < (int64_t)d->bytes;
    if (!later && !over) return 0;
    char at[400], ex[460] = "";
    const mh_ptx_insn *cur = c->cur;
    c->cur = &c->code[d->pc]; /* the fault is the copy's */
    if (m && m->expect_pc) snprintf(ex, sizeof ex, " (the last expect_tx on it: %s)", where(c, m->expect_pc - 1, at, sizeof at));
    if (later)
        emu_fault(c, w, 0, "complete_tx of %u bytes lands on a later phase of the mbarrier at shared 0x%x than the one "
                  "the copy was issued in: that phase completed without these bytes, so expect_tx counted fewer bytes "
                  "than the copies deliver%s (strict mode)", d->bytes, d->off, ex);
    else
        emu_fault(c, w, 0, "complete_tx of %u bytes on the mbarrier at shared 0x%x, whose phase expects %lld more bytes "
                  "with every arrival in: expect_tx counted fewer bytes than the copies deliver%s (strict mode)", d->bytes,
                  d->off, (long long)b.tx, ex);
    c->cur = cur;
    return -1;
}

static hz_mbar *mbar_at(ctx *c, const warp *w, const unsigned char *p)
{
    uint32_t off;
    blk *b = owner_of(c, w, p, &off);
    hz_slot *s = b ? slot_of(c, b) : NULL;
    return s ? mbar_of(c, s, off, 1) : NULL;
}

void emu_hz_phase(ctx *c, const warp *w, const unsigned char *p)
{
    hz_mbar *m = mbar_at(c, w, p);
    if (m) m->done++;
}

void emu_hz_observe(ctx *c, const warp *w, const unsigned char *p)
{
    hz_mbar *m = mbar_at(c, w, p);
    if (m && m->seen < m->done) m->seen = m->done;
}

void emu_hz_expect(ctx *c, const warp *w, const unsigned char *p)
{
    hz_mbar *m = mbar_at(c, w, p);
    if (m) m->expect_pc = (uint32_t)(c->cur - c->code) + 1;
}

int emu_hz_wgmma_read(ctx *c, warp *w, uint64_t off, uint32_t n)
{
    if (check_access(c, w, 0, w->b, off, n, "wgmma's read")) return -1;
    hz_slot *s = slot_of(c, w->b);
    if (!s) return -1;
    for (uint64_t k = off / 4; k < (off + n + 3) / 4 && k < c->hz->nwords; k++) {
        s->w[k].rpc = (uint32_t)(c->cur - c->code) + 1;
        s->w[k].rwarp = w->index;
        s->w[k].rgroup = w->mma.ngroups + 1;
    }
    return 0;
}

/* cp.async's commit_group, wait_group N and wait_all (decoded as MH_OP_MEMBAR: read from the text). */
static void cp_async_order(ctx *c, warp *w, const mh_ptx_insn *in)
{
    const char *t = c->m->text;
    if (!t || in->text_end <= in->text_off) return;
    const char *b = t + in->text_off, *e = t + in->text_end, *q = NULL;
    for (const char *p = b; p + 9 <= e && !q; p++)
        if (!memcmp(p, "cp.async.", 9)) q = p + 9;
    if (!q) return;
    hz_slot *s = slot_of(c, w->b);
    if (!s) return;
    uint32_t i = w->index;
    if (!strncmp(q, "commit_group", 12)) {
        s->cpa_group[i][s->cpa_ngroups[i] % HZ_GROUPS] = s->cpa_seq[i];
        s->cpa_ngroups[i]++;
    } else if (!strncmp(q, "wait_all", 8)) {
        s->cpa_done[i] = s->cpa_seq[i];
    } else if (!strncmp(q, "wait_group", 10)) {
        uint32_t n = (uint32_t)strtoul(q + 10, NULL, 10), g = s->cpa_ngroups[i];
        if (g > n) { /* groups up to g - n - 1 are complete: the copies before that group's commit */
            uint32_t upto = n < HZ_GROUPS ? s->cpa_group[i][(g - n - 1) % HZ_GROUPS] : 0;
            if (upto > s->cpa_done[i]) s->cpa_done[i] = upto;
        }
    }
}

/* The shared offset lane l's address of operand o falls on (space `space`), or UINT64_MAX. */
static uint64_t shared_off(ctx *c, const warp *w, const mh_ptx_opnd *o, int space, int l)
{
    uint64_t a = address(c, w, o, l);
    if (space == MH_SP_GENERIC) return a - SHARED_WIN < WIN_SIZE ? a - SHARED_WIN : UINT64_MAX;
    return space == MH_SP_SHARED && a < EMU_DSMEM_RANK ? a : UINT64_MAX;
}

int emu_hz_insn(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t emask)
{
    const mh_ptx_opnd *ao = NULL;
    uint64_t size = (uint64_t)elem_bytes((mh_ptx_type)in->type) * (in->vec ? in->vec : 1);
    int space = in->space, write = 0;
    switch (in->op) {
    case MH_OP_LD: ao = &in->o[1]; break;
    case MH_OP_ST: ao = &in->o[0]; write = 1; break;
    case MH_OP_ATOM: ao = &in->o[1]; write = 1; size = (uint64_t)elem_bytes((mh_ptx_type)in->type); break;
    case MH_OP_RED: ao = &in->o[0]; write = 1; size = (uint64_t)elem_bytes((mh_ptx_type)in->type); break;
    case MH_OP_MEMBAR: cp_async_order(c, w, in); return c->faulted ? -1 : 0;
    case MH_OP_MBARRIER:
        if (in->cmp == MH_MB_CP_ASYNC_ARRIVE) { /* its cp.asyncs complete on the mbarrier: taken as done */
            hz_slot *s = slot_of(c, w->b);
            if (!s) return -1;
            s->cpa_done[w->index] = s->cpa_seq[w->index];
        }
        return 0;
    case MH_OP_CP_ASYNC: {
        hz_slot *s = slot_of(c, w->b);
        if (!s) return -1;
        uint32_t n = (uint32_t)in->o[2].imm, seq = s->cpa_seq[w->index]++, pc = (uint32_t)(c->cur - c->code);
        for (int l = 0; l < WARP; l++) {
            if (!(emask >> l & 1)) continue;
            uint64_t off = address(c, w, &in->o[0], l);
            if (off >= c->shared_size) continue; /* emu_mem names it */
            if (check_access(c, w, l, w->b, off, n, "cp.async's write")) return -1;
            for (uint64_t k = off / 4; k < (off + n + 3) / 4 && k < c->hz->nwords; k++)
                s->w[k] = (hz_word){.wpc = pc + 1, .wkind = HZ_CPASYNC, .wref = w->index, .wneed = seq,
                                    .rpc = s->w[k].rpc, .rwarp = s->w[k].rwarp, .rgroup = s->w[k].rgroup};
        }
        return 0;
    }
    case MH_OP_MMA: {
        const mh_ptx_mma *r = &c->mma[in->callee];
        if (r->kind != MH_MMA_LDMATRIX && r->kind != MH_MMA_STMATRIX) return 0;
        write = r->kind == MH_MMA_STMATRIX;
        space = r->space;
        size = 16;
        mh_ptx_opnd o = r->addr;
        if ((o.kind == MH_OPK_REG || o.kind == MH_OPK_ADDR) && o.reg != UINT32_MAX) o.reg -= c->reg_lo;
        for (int l = 0; l < 8 * r->num && l < WARP; l++) { /* lanes 8j..8j+7 give matrix j's rows */
            uint64_t off = shared_off(c, w, &o, space, l);
            if (off != UINT64_MAX && check_access(c, w, l, w->b, off, size, write ? "stmatrix's write" : "ldmatrix's read"))
                return -1;
        }
        return 0;
    }
    default: return 0;
    }
    if (space != MH_SP_SHARED && space != MH_SP_GENERIC) return 0;
    for (int l = 0; l < WARP; l++) {
        if (!(emask >> l & 1)) continue;
        uint64_t off = shared_off(c, w, ao, space, l);
        if (off != UINT64_MAX && check_access(c, w, l, w->b, off, size, write ? "write" : "read")) return -1;
    }
    return 0;
}
