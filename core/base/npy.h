/* npy.h - reads the header of a NumPy .npy file (format versions 1-3) so a
 * uint32/int32 array can be used as a trace buffer without NumPy. */
#ifndef MH_NPY_H
#define MH_NPY_H

#include <stddef.h>
#include <stdint.h>
#include "base/error.h"

#define MH_NPY_MAX_DIMS 8

typedef struct mh_npy {
    uint64_t data_offset;  /* bytes from the file start to the array data */
    uint64_t count;        /* number of elements (product of the shape) */
    int big_endian;        /* descr was '>u4' / '>i4' */
    char kind;             /* 'f', 'i', 'u', ... (mh_npy_parse_any) */
    unsigned itemsize;     /* bytes per element */
    int ndim;
    uint64_t dims[MH_NPY_MAX_DIMS];
} mh_npy;

/* Any dtype of the form [<>|=]KIND SIZE ('<f4', '|u1', ...), C order. */
int mh_npy_parse_any(const unsigned char *p, size_t len, mh_npy *out, mh_error *e);
/* The header of a version 1.0 .npy for `descr` and dims, padded so the data
 * starts at a multiple of 64 bytes; returns its length (0 if it does not fit). */
size_t mh_npy_header(char *buf, size_t cap, const char *descr, const uint64_t *dims, int ndim);

/* Parses the header in p[0..len) (len may cover more than the header).
 * Accepts descr <u4 <i4 >u4 >i4 |u4 =u4 (4-byte integers), C order (or a 1-D
 * array in Fortran order, which is the same bytes), any shape. */
int mh_npy_parse(const unsigned char *p, size_t len, mh_npy *out, mh_error *e);
/* Whether a file is to be read as a .npy: its name ends in .npy, or it starts with the
 * magic (head: its first n bytes).  A file named .npy that does not parse is then an
 * error saying .npy, never raw words. */
int mh_npy_claims(const char *path, const unsigned char *head, size_t n);

#endif
