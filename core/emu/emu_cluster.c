/* emu_cluster.c - thread-block clusters on emu: the launch's cluster shape, the order blocks are
 * dispatched in (whole clusters), the cluster special registers, barrier.cluster, mapa,
 * getctarank, elect.sync, and distributed shared memory (shared::cluster addresses into another
 * block's shared memory). */
#include "emu/emu_internal.h"
#include "launch/args.h"

#include <stdio.h>

uint32_t emu_cluster_size(const ctx *c) { return c->cluster_n ? c->cluster_n : 1; }

int emu_cluster_setup(ctx *c, const uint32_t req[3], mh_error *e)
{
    if (mh_launch_cluster(c->f, c->grid, req, c->cluster, &c->cluster_explicit, e)) return (int)e->code;
    c->cluster_n = c->cluster[0] * c->cluster[1] * c->cluster[2];
    return 0;
}

uint64_t emu_cluster_block_of(const ctx *c, uint64_t j)
{
    uint32_t n = emu_cluster_size(c);
    if (n == 1) return j;
    const uint32_t *cl = c->cluster;
    uint64_t q = j / n, r = j % n, nx = c->grid[0] / cl[0], ny = c->grid[1] / cl[1];
    uint64_t x = q % nx * cl[0] + r % cl[0], y = q / nx % ny * cl[1] + r / cl[0] % cl[1];
    uint64_t z = q / (nx * ny) * cl[2] + r / ((uint64_t)cl[0] * cl[1]);
    return x + c->grid[0] * (y + (uint64_t)c->grid[1] * z);
}

uint64_t emu_cluster_sreg(const ctx *c, const warp *w, uint32_t id)
{
    const uint32_t *cl = c->cluster, *ct = w->b->ctaid;
    uint32_t one[3] = {1, 1, 1};
    if (!c->cluster_n) cl = one;
    switch (id) {
    case MH_SR_CLUSTERID_X: case MH_SR_CLUSTERID_Y: case MH_SR_CLUSTERID_Z:
        return ct[id - MH_SR_CLUSTERID_X] / cl[id - MH_SR_CLUSTERID_X];
    case MH_SR_NCLUSTERID_X: case MH_SR_NCLUSTERID_Y: case MH_SR_NCLUSTERID_Z:
        return c->grid[id - MH_SR_NCLUSTERID_X] / cl[id - MH_SR_NCLUSTERID_X];
    case MH_SR_CLUSTER_CTAID_X: case MH_SR_CLUSTER_CTAID_Y: case MH_SR_CLUSTER_CTAID_Z:
        return ct[id - MH_SR_CLUSTER_CTAID_X] % cl[id - MH_SR_CLUSTER_CTAID_X];
    case MH_SR_CLUSTER_NCTAID_X: case MH_SR_CLUSTER_NCTAID_Y: case MH_SR_CLUSTER_NCTAID_Z:
        return cl[id - MH_SR_CLUSTER_NCTAID_X];
    case MH_SR_CLUSTER_CTARANK: return w->b->rank;
    case MH_SR_CLUSTER_NCTARANK: return emu_cluster_size(c);
    case MH_SR_IS_EXPLICIT_CLUSTER: return (uint64_t)c->cluster_explicit;
    default: return 0;
    }
}

/* The block of rank `rank` in block b's cluster (NULL: no such rank). */
static blk *cluster_block(ctx *c, blk *b, uint32_t rank)
{
    if (rank >= emu_cluster_size(c)) return NULL;
    return emu_cluster_size(c) == 1 ? b : b->peer[rank];
}

unsigned char *emu_dsmem(ctx *c, const warp *w, int lane, uint64_t addr, uint32_t size, int write, blk **owner)
{
    uint64_t hi = addr / EMU_DSMEM_RANK, off = addr % EMU_DSMEM_RANK;
    blk *b = w->b;
    c->writes += (uint64_t)write;
    if (hi) {
        b = hi - 1 < UINT32_MAX ? cluster_block(c, w->b, (uint32_t)(hi - 1)) : NULL;
        if (!b)
            return emu_fault(c, w, lane, "shared::cluster address 0x%llx names block rank %llu; the cluster has %u",
                             (unsigned long long)addr, (unsigned long long)(hi - 1), emu_cluster_size(c));
        if (!b->live && c->d->strict)
            return emu_fault(c, w, lane, "shared::cluster %s at 0x%llx: block rank %llu of the cluster has exited (its "
                             "shared memory is gone: a cluster barrier before exiting keeps it)", write ? "write" : "read",
                             (unsigned long long)addr, (unsigned long long)(hi - 1));
        if (!b->live) /* undefined in CUDA, done by real kernels at small sizes: emu keeps the memory until the cluster ends */
            emu_warn(c, w, lane, "shared::cluster %s at 0x%llx: block rank %llu of the cluster has exited (undefined: "
                     "a cluster barrier before exiting keeps its shared memory); emu lets it land, strict mode faults",
                     write ? "write" : "read", (unsigned long long)addr, (unsigned long long)(hi - 1));
    }
    if (size <= 16 && size > 1 && !(size & (size - 1)) && (off & (size - 1)))
        return emu_fault(c, w, lane, "misaligned shared %s of %u bytes at 0x%llx", write ? "write" : "read", size,
                         (unsigned long long)addr);
    if (owner) *owner = b;
    if (off < c->shared_size && size <= c->shared_size - off) return b->shared + off;
    return emu_fault(c, w, lane, "out-of-range shared::cluster %s of %u bytes at 0x%llx: the block has %llu bytes of "
                     "shared memory (static + dynamic)", write ? "write" : "read", size, (unsigned long long)addr,
                     (unsigned long long)c->shared_size);
}

/* Threads of block b's cluster that have not exited. */
static uint32_t cluster_live(const ctx *c, blk *b)
{
    uint32_t n = 0;
    for (uint32_t r = 0; r < emu_cluster_size(c); r++) {
        const blk *p = cluster_block((ctx *)c, b, r);
        for (uint32_t i = 0; p && i < c->nwarps; i++)
            for (int l = 0; l < WARP; l++) n += p->warps[i].st[l] != LANE_EXITED;
    }
    return n;
}

/* The cluster barrier completes when every live thread of the cluster has arrived. */
static void cluster_bar_settle(ctx *c, blk *p0, blk *b)
{
    if (p0->cl_arrived && p0->cl_arrived >= cluster_live(c, b)) {
        p0->cl_arrived = 0;
        p0->cl_phase ^= 1;
        c->writes++; /* parked waiters look again */
    }
}

int emu_cluster_exec(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t emask)
{
    const mh_ptx_opnd *o = in->o;
    blk *b = w->b, *p0 = cluster_block(c, b, 0);
    c->cost += 2;
    switch (in->cmp) {
    case MH_CL_ARRIVE:
        for (int l = 0; l < WARP; l++) {
            if (!(emask >> l & 1)) continue;
            if (w->cl_arrived >> l & 1)
                return emu_fault(c, w, l, "barrier.cluster.arrive twice without a barrier.cluster.wait between"), -1;
            w->cl_arrived |= 1u << l;
            w->cl_phase = (w->cl_phase & ~(1u << l)) | (uint32_t)p0->cl_phase << l;
            p0->cl_arrived++;
        }
        c->progress++;
        c->writes++;
        cluster_bar_settle(c, p0, b);
        return 0;
    case MH_CL_WAIT:
        cluster_bar_settle(c, p0, b); /* threads that exited no longer count */
        for (int l = 0; l < WARP; l++) {
            if (!(emask >> l & 1)) continue;
            if (!(w->cl_arrived >> l & 1))
                return emu_fault(c, w, l, "barrier.cluster.wait without a barrier.cluster.arrive before it"), -1;
            if ((int)(w->cl_phase >> l & 1) == p0->cl_phase) { /* its phase is not complete: ask again */
                w->st[l] = LANE_YIELD;
                w->pc[l]--; /* the pcs advance after the instruction: it stays here */
                continue;
            }
            w->cl_arrived &= ~(1u << l);
        }
        return 0;
    case MH_CL_MAPA: case MH_CL_GETCTARANK: {
        int generic = in->space != MH_SP_SHARED;
        for (int l = 0; l < WARP; l++) {
            if (!(emask >> l & 1)) continue;
            uint64_t a = val(c, w, &o[1], l);
            if (generic) {
                if (a - SHARED_WIN >= WIN_SIZE)
                    return emu_fault(c, w, l, "%s of 0x%llx: not a generic address of shared memory",
                                     in->cmp == MH_CL_MAPA ? "mapa" : "getctarank", (unsigned long long)a), -1;
                a -= SHARED_WIN;
            }
            uint64_t hi = a / EMU_DSMEM_RANK, off = a % EMU_DSMEM_RANK;
            if (in->cmp == MH_CL_GETCTARANK) {
                put(c, w, o[0].reg, l, hi ? hi - 1 : b->rank, (mh_ptx_type)in->type);
                continue;
            }
            uint64_t rank = val(c, w, &o[2], l) & 0xffffffffu;
            if (rank >= emu_cluster_size(c))
                return emu_fault(c, w, l, "mapa to block rank %llu; the cluster has %u", (unsigned long long)rank,
                                 emu_cluster_size(c)), -1;
            uint64_t d = (rank + 1) * EMU_DSMEM_RANK + off;
            put(c, w, o[0].reg, l, generic ? d + SHARED_WIN : d, (mh_ptx_type)in->type);
        }
        return 0;
    }
    default: { /* elect.sync d|p, members: the lowest lane of the members elected */
        if (!emask) return 0;
        uint32_t members = (uint32_t)val(c, w, &o[1], __builtin_ctz(emask)) & emask;
        int leader = members ? __builtin_ctz(members) : -1;
        for (int l = 0; l < WARP; l++) {
            if (!(emask >> l & 1)) continue;
            if (o[0].kind == MH_OPK_REG) put(c, w, o[0].reg, l, (uint64_t)(leader < 0 ? 0 : leader), MH_PT_B32);
            put(c, w, (uint32_t)in->dst2, l, l == leader, MH_PT_PRED);
        }
        return 0;
    }
    }
}
