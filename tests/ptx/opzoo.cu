// opzoo.cu - many PTX operations on per-thread inputs, for test_emu_ops:
// emu's results are compared with a C reference of the same expressions.
// Regenerate: nvcc -ptx -arch=sm_90 -O3 -o opzoo.ptx opzoo.cu
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#define K 48  // outputs per thread

extern "C" __global__ void opzoo(const int *ai, const int *bi, const float *af, const float *bf, unsigned *out,
                                 int *gcount, float *gsum)
{
    __shared__ int s_count;
    __shared__ unsigned s_max;
    unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    if (t == 0) { s_count = 0; s_max = 0; }
    __syncthreads();
    int a = ai[i], b = bi[i];
    unsigned ua = (unsigned)a, ub = (unsigned)b;
    float x = af[i], y = bf[i];
    unsigned *o = out + (size_t)i * K;
    int nz = b == 0 ? 7 : b;
    o[0] = a + b;
    o[1] = a - b;
    o[2] = a * b;
    o[3] = __mulhi(a, b);
    o[4] = __umulhi(ua, ub);
    o[5] = a / nz;
    o[6] = a % nz;
    o[7] = ua / (unsigned)nz;
    o[8] = min(a, b);
    o[9] = max(ua, ub);
    o[10] = abs(a);
    o[11] = a << (b & 31);
    o[12] = a >> (b & 31);
    o[13] = ua >> (b & 31);
    o[14] = __popc(ua);
    o[15] = __clz(a);
    o[16] = __brev(ua);
    o[17] = __byte_perm(ua, ub, 0x3175);
    o[18] = (unsigned)(((long long)a * b) >> 7);
    o[19] = a < b ? 1u : 2u;
    o[20] = ua < ub ? 3u : 4u;
    o[21] = __float_as_uint(x + y);
    o[22] = __float_as_uint(x * y);
    o[23] = __float_as_uint(fmaf(x, y, 1.5f));
    o[24] = __float_as_uint(x / y);
    o[25] = __float_as_uint(sqrtf(fabsf(x)));
    o[26] = __float_as_uint(fminf(x, y));
    o[27] = __float_as_uint(fmaxf(x, y));
    o[28] = (unsigned)__float2int_rn(x);
    o[29] = (unsigned)(int)x;
    o[30] = __float_as_uint(floorf(x));
    o[31] = __float_as_uint(ceilf(x));
    o[32] = __float_as_uint(rintf(x));
    o[33] = (unsigned)__half_as_ushort(__float2half_rn(x));
    o[34] = __float_as_uint(__half2float(__float2half_rn(y)));
    o[35] = (unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(x));
    o[36] = (unsigned)x;  // saturates: negative -> 0
    o[37] = x < y ? 5u : (x == y ? 6u : 7u);
    double d = (double)x * (double)y + (double)a;
    o[38] = __float_as_uint((float)d);
    o[39] = (unsigned)(long long)d;
    // warp operations
    o[40] = __shfl_xor_sync(0xffffffffu, ua, 5);
    o[41] = __shfl_up_sync(0xffffffffu, ua, 3);
    o[42] = __shfl_down_sync(0xffffffffu, ua, 2);
    o[43] = __shfl_sync(0xffffffffu, ua, (t * 7) & 31);
    o[44] = __ballot_sync(0xffffffffu, a > b);
    o[45] = __all_sync(0xffffffffu, a > -1000000) + 2 * __any_sync(0xffffffffu, a > b);
    // divergence: a per-lane loop, then a reconverged warp op
    unsigned acc = 0;
    if (t % 3 == 0) {
        for (int k = 0; k < (int)(ua % 7); k++) acc += (unsigned)k * ua;
    } else {
        acc = ua ^ 0x5a5a5a5au;
    }
    o[46] = __shfl_xor_sync(0xffffffffu, acc, 1);
    // atomics
    atomicAdd(&s_count, 1);
    atomicMax(&s_max, ua);
    atomicAdd(gcount, a & 0xff);
    atomicAdd(gsum, 0.5f);
    __syncthreads();
    o[47] = (unsigned)s_count + s_max;
}
