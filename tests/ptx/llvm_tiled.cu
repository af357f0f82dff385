// llvm_tiled.cu - the tiled loop with nested regions, compiled by LLVM's NVPTX
// back end (clang) instead of nvcc, so the instrumentation and emu meet that
// compiler's PTX too: labels without '$', an .extern .shared array addressed
// through `mov.u64 %rd, tile`, no .ptr on the parameters, `// begin inline asm`.
// Per tile of blockDim.x elements: load to shared, compute, store, then each
// warp sums its 32 results with shfl.down (offsets 16, 8, 4, 2, 1) into
// partial[tile * warps + warp].  Built without CUDA headers:
// Regenerate: clang -x cuda --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_80 -O3 -S -o llvm_tiled.ptx llvm_tiled.cu
// (clang 14: .version 7.0, .target sm_80; the committed PTX comes from it)
#define MGPU_BEGIN(name) asm volatile("// @mgpu begin " name ::: "memory")
#define MGPU_END(name) asm volatile("// @mgpu end " name ::: "memory")

extern "C" __attribute__((global)) void llvm_tiled(const float *__restrict__ a, float *__restrict__ c,
                                                   float *__restrict__ partial, unsigned n, float alpha)
{
    extern __attribute__((shared)) float tile[];
    unsigned t = __nvvm_read_ptx_sreg_tid_x(), tile_elems = __nvvm_read_ptx_sreg_ntid_x();
    unsigned ntiles = (n + tile_elems - 1) / tile_elems, warps = tile_elems / 32;
    for (unsigned k = __nvvm_read_ptx_sreg_ctaid_x(); k < ntiles; k += __nvvm_read_ptx_sreg_nctaid_x()) {
        MGPU_BEGIN("tile");
        unsigned i = k * tile_elems + t;
        MGPU_BEGIN("load");
        tile[t] = i < n ? a[i] : 0.0f;
        __syncthreads();
        MGPU_END("load");
        MGPU_BEGIN("compute");
        float v = tile[(t + 1) % tile_elems] * alpha + (float)k;
        MGPU_END("compute");
        MGPU_BEGIN("store");
        if (i < n) c[i] = v;
        MGPU_END("store");
        MGPU_BEGIN("reduce");
        float s = i < n ? v : 0.0f;
        for (int off = 16; off > 0; off /= 2) s += __nvvm_shfl_sync_down_f32(0xffffffffu, s, off, 31);
        if (t % 32 == 0) partial[k * warps + t / 32] = s;
        __syncthreads();
        MGPU_END("reduce");
        MGPU_END("tile");
    }
}
