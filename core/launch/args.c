/* args.c - argument checking and packing against a PTX signature. */
#include "launch/args.h"

#include <math.h>
#include <string.h>
#include "base/fp16.h"

static const char *describe(const mh_arg *a)
{
    return a->kind == MH_ARG_PTR ? "an array" : a->kind == MH_ARG_INT ? "an integer"
                                              : a->kind == MH_ARG_BYTES ? "bytes" : "a number";
}

int mh_param_is_aggregate(const mh_ptx_param *p)
{
    int bits = mh_ptx_type_bits(p->type);
    return bits == 0 || p->size * 8 != (uint32_t)bits;
}

int mh_launch_cluster(const mh_ptx_func *f, const uint32_t grid[3], const uint32_t asked[3], uint32_t out[3],
                      int *is_cluster, mh_error *e)
{
    int given = asked && (asked[0] > 1 || asked[1] > 1 || asked[2] > 1), req = f->reqcluster[0] != 0;
    for (int i = 0; i < 3; i++) out[i] = req ? f->reqcluster[i] : given ? (asked[i] ? asked[i] : 1) : 1;
    *is_cluster = given || req || f->explicitcluster;
    if (given && req && (asked[0] != f->reqcluster[0] || (asked[1] ? asked[1] : 1) != f->reqcluster[1] ||
                         (asked[2] ? asked[2] : 1) != f->reqcluster[2]))
        return mh_fail(e, MH_E_BAD_ARGUMENT, "%s declares .reqnctapercluster %u, %u, %u; the launch asks for clusters of "
                       "%ux%ux%u", f->short_name, f->reqcluster[0], f->reqcluster[1], f->reqcluster[2], asked[0],
                       asked[1] ? asked[1] : 1, asked[2] ? asked[2] : 1);
    if (f->explicitcluster && !given && !req)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "%s declares .explicitcluster: launch it with cluster = {x, y, z}", f->short_name);
    uint64_t n = (uint64_t)out[0] * out[1] * out[2];
    if (n > MH_MAX_CLUSTER)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "%s: a cluster of %ux%ux%u = %llu blocks (sm_90 takes at most %d)", f->short_name,
                       out[0], out[1], out[2], (unsigned long long)n, MH_MAX_CLUSTER);
    if (f->maxclusterrank && n > f->maxclusterrank)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "%s declares .maxclusterrank %u; clusters of %ux%ux%u have %llu blocks",
                       f->short_name, f->maxclusterrank, out[0], out[1], out[2], (unsigned long long)n);
    for (int i = 0; i < 3; i++)
        if (grid[i] % out[i])
            return mh_fail(e, MH_E_BAD_ARGUMENT, "%s: grid %ux%ux%u is not a whole number of %ux%ux%u clusters", f->short_name,
                           grid[0], grid[1], grid[2], out[0], out[1], out[2]);
    return 0;
}

int mh_args_pack(const mh_ptx_func *f, const mh_arg *args, uint32_t n, uint64_t *out, const void **where, mh_error *e)
{
    if (n != f->nparams)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "kernel %s takes %u arguments, %u were given", f->short_name, f->nparams, n);
    for (uint32_t k = 0; k < n; k++) {
        const mh_ptx_param *p = &f->params[k];
        const mh_arg *a = &args[k];
        int bits = mh_ptx_type_bits(p->type);
        uint64_t v = 0;
        out[k] = 0;
        where[k] = &out[k];
        if (mh_param_is_aggregate(p)) {
            /* an aggregate (.b8 name[N]: a struct by value) takes its bytes as they are */
            if (a->kind != MH_ARG_BYTES)
                return mh_fail(e, MH_E_BAD_ARGUMENT, "kernel %s parameter %u (%s) is a %u-byte aggregate (a struct by "
                               "value): pass its bytes (mgpu.struct{...} or string.pack), not %s", f->short_name, k, p->name,
                               p->size, describe(a));
            if (a->bytes != p->size)
                return mh_fail(e, MH_E_BAD_ARGUMENT, "kernel %s parameter %u (%s) is %u bytes; %llu bytes were given",
                               f->short_name, k, p->name, p->size, (unsigned long long)a->bytes);
            where[k] = a->data;
            continue;
        }
        if (a->kind == MH_ARG_BYTES)
            return mh_fail(e, MH_E_BAD_ARGUMENT, "kernel %s parameter %u (%s, .%s) takes a %s, not bytes", f->short_name, k,
                           p->name, mh_ptx_type_name(p->type), p->is_ptr ? "pointer (an array)" : "number");
        if (a->kind == MH_ARG_PTR) {
            if (bits != 64)
                return mh_fail(e, MH_E_BAD_ARGUMENT, "kernel %s parameter %u (%s, .%s) got %s: it is not a pointer",
                               f->short_name, k, p->name, mh_ptx_type_name(p->type), a->null ? "mgpu.null" : "an array");
            /* every pointer the launch hands over has an address, unless asked to be null
             * (mgpu.null): one without is a second mgpu.TRACE (the trace buffer goes to one
             * parameter), which the kernel would dereference at 0 */
            if (!a->ptr && !a->null)
                return mh_fail(e, MH_E_BAD_ARGUMENT, "kernel %s parameter %u (%s) got a pointer with no buffer behind "
                               "it: mgpu.TRACE given more than once? (the trace buffer goes to one parameter)",
                               f->short_name, k, p->name);
            v = a->ptr;
        } else if (p->is_ptr) {
            return mh_fail(e, MH_E_BAD_ARGUMENT, "kernel %s parameter %u (%s) is a pointer but got %s", f->short_name, k, p->name,
                           describe(a));
        } else if (mh_ptx_type_is_float(p->type)) {
            double x = a->kind == MH_ARG_INT ? (double)a->i : a->f;
            if (p->type == MH_PT_F32) {
                if (isfinite(x) && fabs(x) > 3.4028234663852886e38)
                    return mh_fail(e, MH_E_BAD_ARGUMENT, "kernel %s parameter %u (%s, .f32): %g does not fit", f->short_name, k,
                                   p->name, x);
                v = mh_f32_bits((float)x);
            } else if (p->type == MH_PT_F64) {
                v = mh_f64_bits(x);
            } else if (p->type == MH_PT_F16) {
                v = mh_double_to_half(x);
            } else {
                v = mh_double_to_bf16(x);
            }
        } else {
            if (a->kind != MH_ARG_INT)
                return mh_fail(e, MH_E_BAD_ARGUMENT, "kernel %s parameter %u (%s, .%s) needs an integer, got %g", f->short_name,
                               k, p->name, mh_ptx_type_name(p->type), a->f);
            int64_t x = a->i;
            int ok;
            if (mh_ptx_type_is_signed(p->type))
                ok = bits == 64 || (x >= -(1ll << (bits - 1)) && x < (1ll << (bits - 1)));
            else /* .uN and .bN: any value that fits N bits signed or unsigned, a negative one as its two's
                  * complement (nvcc declares a C int parameter .u32: issue 36) */
                ok = bits == 64 || (x >= -(1ll << (bits - 1)) && x < (1ll << bits));
            if (!ok)
                return mh_fail(e, MH_E_BAD_ARGUMENT, "kernel %s parameter %u (%s, .%s): %lld does not fit", f->short_name, k,
                               p->name, mh_ptx_type_name(p->type), (long long)x);
            v = (uint64_t)x & (bits == 64 ? ~0ull : (1ull << bits) - 1);
        }
        memcpy(&out[k], &v, 8);
    }
    return 0;
}
