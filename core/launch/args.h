/* args.h - kernel arguments checked against a kernel's PTX signature and
 * packed into the bytes of its parameters.  A wrong launch never reaches a
 * backend: wrong count, a number where a pointer is expected (or the
 * reverse), a value that does not fit the parameter's type, each is a
 * bad_argument naming the kernel and the parameter. */
#ifndef MH_ARGS_H
#define MH_ARGS_H

#include <stdint.h>
#include "base/error.h"
#include "frontend/ptx.h"

typedef enum { MH_ARG_PTR, MH_ARG_INT, MH_ARG_FLOAT, MH_ARG_BYTES } mh_arg_kind;

typedef struct mh_arg {
    mh_arg_kind kind;
    uint64_t ptr;       /* device address (MH_ARG_PTR) */
    uint64_t bytes;     /* size of the buffer behind ptr, 0 if unknown; MH_ARG_BYTES: length of data */
    int64_t i;          /* MH_ARG_INT */
    double f;           /* MH_ARG_FLOAT */
    const void *data;   /* MH_ARG_BYTES: the parameter's bytes as they are (a struct by value) */
    int null;           /* MH_ARG_PTR: a null pointer on purpose (mgpu.null): ptr 0, bytes 0 */
} mh_arg;

/* Whether parameter p is an aggregate (.b8 name[N], a struct by value): its
 * argument is its bytes. */
int mh_param_is_aggregate(const mh_ptx_param *p);

/* Packs n args for f: a scalar parameter k's value goes to the first `size`
 * bytes of out[k] (f->nparams slots of 8 bytes), and where[k] points at the
 * bytes of parameter k: &out[k], or an aggregate's (.b8 name[N], a struct
 * by value) own bytes, which must be exactly N long. */
int mh_args_pack(const mh_ptx_func *f, const mh_arg *args, uint32_t n, uint64_t *out, const void **where, mh_error *e);

/* The cluster a launch of kernel f runs with: `asked` (launch{cluster=}; zeros or 1x1x1: none
 * asked) against the kernel's .reqnctapercluster (the shape when none is asked; another one is
 * refused), .explicitcluster (a cluster must be given) and .maxclusterrank (blocks at most), at
 * most MH_MAX_CLUSTER blocks, the grid a whole number of clusters.  out: the shape (1x1x1: none);
 * *is_cluster: a cluster launch (%is_explicit_cluster).  bad_argument naming the rule. */
#define MH_MAX_CLUSTER 16
int mh_launch_cluster(const mh_ptx_func *f, const uint32_t grid[3], const uint32_t asked[3], uint32_t out[3],
                      int *is_cluster, mh_error *e);

#endif
