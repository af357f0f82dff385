/* npy.h - reads the header of a NumPy .npy file (format versions 1-3) so a
 * uint32/int32 array can be used as a trace buffer without NumPy. */
#ifndef MH_NPY_H
#define MH_NPY_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"

typedef struct mh_npy {
    uint64_t data_offset;  /* bytes from the file start to the array data */
    uint64_t count;        /* number of elements (product of the shape) */
    int big_endian;        /* descr was '>u4' / '>i4' */
} mh_npy;

/* Parses the header in p[0..len) (len may cover more than the header).
 * Accepts descr <u4 <i4 >u4 >i4 |u4 =u4 (4-byte integers), C order (or a 1-D
 * array in Fortran order, which is the same bytes), any shape. */
int mh_npy_parse(const unsigned char *p, size_t len, mh_npy *out, mh_error *e);

#endif
