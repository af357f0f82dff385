/* args.h - kernel arguments checked against a kernel's PTX signature and
 * packed into the bytes of its parameters.  A wrong launch never reaches a
 * backend: wrong count, a number where a pointer is expected (or the
 * reverse), a value that does not fit the parameter's type, each is a
 * bad_argument naming the kernel and the parameter. */
#ifndef MH_ARGS_H
#define MH_ARGS_H

#include <stdint.h>
#include "error.h"
#include "ptx.h"

typedef enum { MH_ARG_PTR, MH_ARG_INT, MH_ARG_FLOAT } mh_arg_kind;

typedef struct mh_arg {
    mh_arg_kind kind;
    uint64_t ptr;       /* device address (MH_ARG_PTR) */
    uint64_t bytes;     /* size of the buffer behind ptr, 0 if unknown */
    int64_t i;          /* MH_ARG_INT */
    double f;           /* MH_ARG_FLOAT */
} mh_arg;

/* Packs n args for f into out (f->nparams slots of 8 bytes each: out[k]
 * holds parameter k's value in its first `size` bytes). */
int mh_args_pack(const ptx_func *f, const mh_arg *args, uint32_t n, uint64_t *out, mh_error *e);

#endif
