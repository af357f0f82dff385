/* test_emu_ops.c - instruction semantics on emu: tests/ptx/opzoo.ptx (nvcc
 * output of tests/ptx/opzoo.cu: integer, float, conversion, rounding, half
 * and bfloat16, warp shuffles and votes, divergence, shared and global
 * atomics) against a C reference of the same expressions, computed here
 * independently of emu's helpers. */
#include <math.h>
#include "check.h"
#include "emu_util.h"
#include "emu/emu.h"
#include "frontend/ptx.h"

#define K 48
#define BLOCKS 2
#define THREADS 64
#define N (BLOCKS * THREADS)

static uint32_t fbits(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }
static float bitsf(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }

/* bfloat16 round-to-nearest-even by scaling, not by bit tricks. */
static uint32_t bf16_ref(float x)
{
    if (x == 0) return fbits(x) >> 16;
    int e = ilogbf(x);
    double scale = ldexp(1.0, e - 7);
    float r = (float)(nearbyint((double)x / scale) * scale);
    return fbits(r) >> 16;
}

static void reference(const int *ai, const int *bi, const float *af, const float *bf, uint32_t *ref, int *gcount)
{
    *gcount = 0;
    for (int i = 0; i < N; i++) {
        int a = ai[i], b = bi[i];
        unsigned ua = (unsigned)a, ub = (unsigned)b;
        float x = af[i], y = bf[i];
        uint32_t *o = ref + i * K;
        int nz = b == 0 ? 7 : b, s = b & 31;
        o[0] = ua + ub;
        o[1] = ua - ub;
        o[2] = ua * ub;
        o[3] = (uint32_t)(((int64_t)a * b) >> 32);
        o[4] = (uint32_t)(((uint64_t)ua * ub) >> 32);
        o[5] = (uint32_t)(a / nz);
        o[6] = (uint32_t)(a % nz);
        o[7] = ua / (unsigned)nz;
        o[8] = (uint32_t)(a < b ? a : b);
        o[9] = ua > ub ? ua : ub;
        o[10] = (uint32_t)(a < 0 ? -a : a);
        o[11] = ua << s;
        o[12] = (uint32_t)(a >> s);
        o[13] = ua >> s;
        o[14] = (uint32_t)__builtin_popcount(ua);
        o[15] = ua ? (uint32_t)__builtin_clz(ua) : 32;
        uint32_t r = 0;
        for (int k = 0; k < 32; k++) r |= ((ua >> k) & 1) << (31 - k);
        o[16] = r;
        uint64_t src = (uint64_t)ub << 32 | ua;
        unsigned sel = 0x3175;
        o[17] = 0;
        for (int k = 0; k < 4; k++) o[17] |= (uint32_t)((src >> (8 * ((sel >> (4 * k)) & 7))) & 0xff) << (8 * k);
        o[18] = (uint32_t)(((int64_t)a * b) >> 7);
        o[19] = a < b ? 1u : 2u;
        o[20] = ua < ub ? 3u : 4u;
        o[21] = fbits(x + y);
        o[22] = fbits(x * y);
        o[23] = fbits(fmaf(x, y, 1.5f));
        o[24] = fbits(x / y);
        o[25] = fbits(sqrtf(fabsf(x)));
        o[26] = fbits(fminf(x, y));
        o[27] = fbits(fmaxf(x, y));
        o[28] = (uint32_t)(int)rintf(x);
        o[29] = (uint32_t)(int)x;
        o[30] = fbits(floorf(x));
        o[31] = fbits(ceilf(x));
        o[32] = fbits(rintf(x));
        _Float16 hx = (_Float16)x, hy = (_Float16)y;
        uint16_t hb;
        memcpy(&hb, &hx, 2);
        o[33] = hb;
        o[34] = fbits((float)hy);
        o[35] = bf16_ref(x);
        o[36] = x <= 0 ? 0 : (uint32_t)x;
        o[37] = x < y ? 5u : (x == y ? 6u : 7u);
        double d = fma((double)x, (double)y, (double)a);
        o[38] = fbits((float)d);
        o[39] = (uint32_t)(long long)d;
        *gcount += a & 0xff;
    }
    /* warp and block operations */
    for (int i = 0; i < N; i++) {
        int lane = i & 31, w0 = i & ~31, t = i % THREADS;
        uint32_t *o = ref + i * K;
        o[40] = (uint32_t)ai[w0 + (lane ^ 5)];
        o[41] = (uint32_t)ai[lane >= 3 ? i - 3 : i];
        o[42] = (uint32_t)ai[lane + 2 <= 31 ? i + 2 : i];
        o[43] = (uint32_t)ai[w0 + ((t * 7) & 31)];
        uint32_t ballot = 0;
        int all = 1, any = 0;
        for (int l = 0; l < 32; l++) {
            int gt = ai[w0 + l] > bi[w0 + l];
            ballot |= (uint32_t)gt << l;
            any |= gt;
            all &= ai[w0 + l] > -1000000;
        }
        o[44] = ballot;
        o[45] = (uint32_t)(all + 2 * any);
        int j = w0 + (lane ^ 1), tj = j % THREADS;
        unsigned uj = (unsigned)ai[j], acc = 0;
        if (tj % 3 == 0)
            for (int k = 0; k < (int)(uj % 7); k++) acc += (unsigned)k * uj;
        else
            acc = uj ^ 0x5a5a5a5au;
        o[46] = acc;
        unsigned mx = 0, b0 = (unsigned)(i / THREADS * THREADS);
        for (unsigned k = b0; k < b0 + THREADS; k++) if ((unsigned)ai[k] > mx) mx = (unsigned)ai[k];
        o[47] = THREADS + mx;
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    mh_ptx_module m;
    mh_error e;
    int rc = parse_ptx_file(&m, argv[1], "tests/ptx/opzoo.ptx");
    CHECK(rc == 0);
    if (rc) return check_report("test_emu_ops");

    int ai[N], bi[N];
    float af[N], bf[N];
    uint64_t s = 12345;
    for (int i = 0; i < N; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        ai[i] = (int)((s >> 33) % 2000001) - 1000000;
        bi[i] = i % 9 == 0 ? 0 : (int)((s >> 13) % 2001) - 1000;
        af[i] = i % 5 == 0 ? (float)(i % 11) - 5.5f : (float)((int)((s >> 20) % 200001) - 100000) / 97.0f;
        bf[i] = i % 7 == 0 ? af[i] : (float)((int)((s >> 40) % 20001) - 10000) / 13.0f + 0.25f;
    }
    mh_emu *d = mh_emu_create(NULL, &e);
    uint64_t dai = emu_upload(d, ai, sizeof ai), dbi = emu_upload(d, bi, sizeof bi), daf = emu_upload(d, af, sizeof af),
             dbf = emu_upload(d, bf, sizeof bf), dout = emu_upload(d, NULL, N * K * 4), dcount = emu_upload(d, NULL, 4),
             dsum = emu_upload(d, NULL, 4);
    mh_emu_arg args[] = {{&dai, 8}, {&dbi, 8}, {&daf, 8}, {&dbf, 8}, {&dout, 8}, {&dcount, 8}, {&dsum, 8}};
    mh_emu_launch l = {{BLOCKS, 1, 1}, {THREADS, 1, 1}, 0, args, 7, 0};
    rc = mh_emu_run(d, &m, "opzoo", &l, NULL, &e);
    CHECK(rc == 0);
    if (rc) fprintf(stderr, "%s\n", e.message);

    static uint32_t got[N * K], ref[N * K];
    int gcount_ref, gcount;
    float gsum;
    mh_emu_read(d, dout, got, sizeof got, &e);
    mh_emu_read(d, dcount, &gcount, 4, &e);
    mh_emu_read(d, dsum, &gsum, 4, &e);
    reference(ai, bi, af, bf, ref, &gcount_ref);
    int bad_by_k[K] = {0};
    for (int i = 0; i < N; i++)
        for (int k = 0; k < K; k++)
            if (got[i * K + k] != ref[i * K + k]) {
                if (!bad_by_k[k])
                    fprintf(stderr, "  o[%d] thread %d: emu 0x%08x, reference 0x%08x (a=%d b=%d x=%g y=%g)\n", k, i,
                            got[i * K + k], ref[i * K + k], ai[i], bi[i], (double)af[i], (double)bf[i]);
                bad_by_k[k]++;
            }
    for (int k = 0; k < K; k++) CHECK(bad_by_k[k] == 0);
    CHECK(gcount == gcount_ref);
    CHECK(gsum == 0.5f * N);
    (void)bitsf;
    mh_emu_destroy(d);
    mh_ptx_free(&m);
    return check_report("test_emu_ops");
}
