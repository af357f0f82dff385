// warp_masks.cu - warp-synchronous instructions whose lanes name different member masks in one
// instruction (tests/lua/warp_masks_spec.lua): each lane's group is the lanes with its key (as
// cooperative groups' labeled_partition makes them: cuda-samples' warpAggregatedAtomicsCG reduces
// each bucket's values with redux.sync and its group's mask), and each result must be over that
// group alone.  emu combined every lane that ran the instruction before.
// Regenerate: nvcc -ptx -arch=sm_90 -O3 -o warp_masks.ptx warp_masks.cu
extern "C" __global__ void group_ops(const int *key, const int *val, unsigned *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int k = key[i], v = val[i];
    unsigned group = __match_any_sync(__activemask(), k);
    unsigned *o = out + 7 * i;
    int pred;
    o[0] = group;
    o[1] = (unsigned)__reduce_max_sync(group, v);
    o[2] = __reduce_add_sync(group, (unsigned)v);
    o[3] = __ballot_sync(group, v > 100);
    o[4] = __all_sync(group, v > 100) + 2 * __any_sync(group, v > 100);
    o[5] = __match_all_sync(group, v & 1, &pred);
    o[6] = (unsigned)pred;
}
