/* emu_cluster.c - thread-block clusters on emu: the blocks of a cluster, their ranks, and
 * distributed shared memory (shared::cluster addresses into another block's shared memory). */
#include "emu/emu_internal.h"

#include <stdio.h>

uint32_t emu_cluster_size(const ctx *c) { (void)c; return 1; }

/* The block of rank `rank` in the cluster of block b (NULL: no such rank). */
static blk *cluster_block(ctx *c, blk *b, uint32_t rank)
{
    return rank < emu_cluster_size(c) ? b : NULL;
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
