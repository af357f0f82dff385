/* tracebuf.h - access to the words of a trace buffer, one trace at a time,
 * whether it lies in memory (a device copy) or in a file (.bin raw
 * little-endian uint32, or .npy).  Files are read in chunks, never whole, so
 * the dump's memory does not grow with the buffer. */
#ifndef MH_TRACEBUF_H
#define MH_TRACEBUF_H

#include <stdint.h>
#include "base/error.h"
#include "trace/spec.h"

typedef struct mh_tracebuf {
    const uint32_t *mem;     /* in-memory buffer, or NULL for a file */
    uint32_t *owned;         /* a pipe's words, read whole into memory (mem points here); freed by close */
    int fd;
    int swap;                /* file words are big-endian relative to host */
    uint64_t data_offset;    /* file offset of word 0 */
    uint64_t words;          /* number of uint32 words */
    char *path;              /* for messages ("<memory>" when in memory) */
    uint64_t entries;        /* words per trace, set by mh_tracebuf_bind */
    uint32_t *chunk;         /* file chunk of whole traces */
    uint64_t chunk_first, chunk_count, chunk_cap;
    uint64_t last;           /* the previous request */
    unsigned run;            /* consecutive sequential requests before it */
} mh_tracebuf;

/* Opens a .bin or .npy (detected by its magic, not its name).  A regular file
 * is read in chunks as needed; anything else that reads (a pipe, /dev/stdin,
 * bash's <(...)) is read until its end into memory, as it cannot be read
 * twice or at an offset. */
int mh_tracebuf_open(mh_tracebuf *b, const char *path, mh_error *e);
/* Wraps host-order words already in memory (not copied, not freed). */
void mh_tracebuf_memory(mh_tracebuf *b, const uint32_t *words, uint64_t n);
/* Checks that the buffer holds exactly spec->num_traces x entries words. */
int mh_tracebuf_bind(mh_tracebuf *b, const mh_spec *spec, mh_error *e);
/* The `entries` words of trace t, valid until the next call. */
const uint32_t *mh_tracebuf_trace(mh_tracebuf *b, uint64_t t, mh_error *e);
void mh_tracebuf_close(mh_tracebuf *b);

#endif
