/* tracebuf.c - trace buffer access from memory or from a file in chunks. */
#define _GNU_SOURCE
#include "trace/tracebuf.h"
#include "base/npy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK_BYTES (1u << 20)

static int host_is_big_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 0;
}

/* Reads exactly n bytes at off; 0 on success. */
static int pread_all(int fd, void *dst, size_t n, uint64_t off)
{
    unsigned char *p = dst;
    while (n) {
        ssize_t r = pread(fd, p, n, (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return r < 0 ? errno : EIO;
        p += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

void mh_tracebuf_memory(mh_tracebuf *b, const uint32_t *words, uint64_t n)
{
    memset(b, 0, sizeof *b);
    b->mem = words;
    b->words = n;
    b->fd = -1;
}

/* A pipe (or any file that is not regular) read until its end; the bytes in
 * *out (malloc'd), their number in *len. */
static int read_stream(int fd, const char *path, unsigned char **out, uint64_t *len, mh_error *e)
{
    size_t cap = 1u << 16, n = 0;
    unsigned char *p = malloc(cap);
    if (!p) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    for (;;) {
        if (n == cap) {
            unsigned char *q = cap < SIZE_MAX / 2 ? realloc(p, cap * 2) : NULL;
            if (!q) {
                free(p);
                return mh_fail(e, MH_E_NO_MEMORY, "%s: out of memory reading it whole (%zu bytes so far)", path, n);
            }
            p = q;
            cap *= 2;
        }
        ssize_t r = read(fd, p + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int err = errno;
            free(p);
            return mh_fail(e, MH_E_IO, "%s: read failed: %s", path, strerror(err));
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    *out = p;
    *len = n;
    return 0;
}

/* The buffer of a pipe: read whole, .npy or raw words, converted to host order in memory. */
static int open_stream(mh_tracebuf *b, const char *path, mh_error *e)
{
    unsigned char *bytes = NULL;
    uint64_t size = 0, offset = 0;
    int big = 0;
    if (read_stream(b->fd, path, &bytes, &size, e)) return -1;
    if (mh_npy_claims(NULL, bytes, (size_t)size)) {
        mh_npy npy;
        if (mh_npy_parse(bytes, (size_t)size, &npy, e)) {
            free(bytes);
            mh_error_prefix(e, path);
            return -1;
        }
        if (size - npy.data_offset != npy.count * 4) {
            free(bytes);
            return mh_fail(e, MH_E_BAD_BUFFER, "%s: .npy shape holds %llu words but the file has %llu data bytes",
                           path, (unsigned long long)npy.count, (unsigned long long)(size - npy.data_offset));
        }
        offset = npy.data_offset;
        big = npy.big_endian;
    } else if (size % 4) {
        free(bytes);
        return mh_fail(e, MH_E_BAD_BUFFER, "%s: size %llu bytes is not a multiple of 4 (a buffer is uint32 words)",
                       path, (unsigned long long)size);
    }
    uint64_t words = (size - offset) / 4;
    memmove(bytes, bytes + offset, (size_t)(words * 4));
    b->owned = (uint32_t *)(void *)bytes; /* malloc'd memory is aligned for uint32 */
    if (big != host_is_big_endian())
        for (uint64_t i = 0; i < words; i++) b->owned[i] = __builtin_bswap32(b->owned[i]);
    b->mem = b->owned;
    b->words = words;
    return 0;
}

int mh_tracebuf_open(mh_tracebuf *b, const char *path, mh_error *e)
{
    struct stat st;
    unsigned char head[16];
    memset(b, 0, sizeof *b);
    b->fd = -1;
    b->path = strdup(path);
    if (!b->path) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    b->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (b->fd < 0 || fstat(b->fd, &st) != 0) {
        mh_fail(e, MH_E_IO, "%s: cannot open: %s", path, strerror(errno));
        goto fail;
    }
    if (S_ISDIR(st.st_mode)) {
        mh_fail(e, MH_E_IO, "%s: is a directory", path);
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) { /* a pipe, /dev/stdin, <(...): read it whole */
        if (open_stream(b, path, e)) goto fail;
        close(b->fd);
        b->fd = -1;
        return 0;
    }
    uint64_t size = (uint64_t)st.st_size, data_bytes = size;
    int file_big = 0;
    size_t head_n = size < 10 ? (size_t)size : 10;
    if (pread_all(b->fd, head, head_n, 0) == 0 && mh_npy_claims(path, head, head_n)) {
        size_t hl = size < 65536 + 12 ? (size_t)size : 65536 + 12;
        unsigned char *h = malloc(hl);
        mh_npy npy;
        int rc = !h || pread_all(b->fd, h, hl, 0) ? mh_fail(e, MH_E_IO, "cannot read the .npy header")
                                                   : mh_npy_parse(h, hl, &npy, e);
        free(h);
        if (rc) {
            mh_error_prefix(e, path);
            goto fail;
        }
        data_bytes = size - npy.data_offset;
        if (data_bytes != npy.count * 4) {
            mh_fail(e, MH_E_BAD_BUFFER, "%s: .npy shape holds %llu words but the file has %llu data bytes", path,
                    (unsigned long long)npy.count, (unsigned long long)data_bytes);
            goto fail;
        }
        b->data_offset = npy.data_offset;
        file_big = npy.big_endian;
    } else if (size % 4) {
        mh_fail(e, MH_E_BAD_BUFFER, "%s: size %llu bytes is not a multiple of 4 (a buffer is uint32 words)", path,
                (unsigned long long)size);
        goto fail;
    }
    b->words = data_bytes / 4;
    b->swap = file_big != host_is_big_endian();
    return 0;
fail:
    mh_tracebuf_close(b);
    return (int)e->code;
}

int mh_tracebuf_bind(mh_tracebuf *b, const mh_spec *spec, mh_error *e)
{
    const char *name = b->path ? b->path : "buffer";
    if (b->words != spec->words) {
        char extra[160] = "";
        if (b->words % spec->entries == 0)
            snprintf(extra, sizeof extra, " (it holds %llu traces of %llu entries)",
                     (unsigned long long)(b->words / spec->entries), (unsigned long long)spec->entries);
        return mh_fail(e, MH_E_BAD_BUFFER,
                       "%s: has %llu words but the meta describes %llu traces x %llu entries = %llu words%s", name,
                       (unsigned long long)b->words, (unsigned long long)spec->num_traces,
                       (unsigned long long)spec->entries, (unsigned long long)spec->words, extra);
    }
    b->entries = spec->entries;
    if (!b->mem) {
        uint64_t per = CHUNK_BYTES / (spec->entries * 4);
        b->chunk_cap = per ? per : 1;
        free(b->chunk);
        b->chunk = malloc(b->chunk_cap * spec->entries * 4);
        if (!b->chunk) return mh_fail(e, MH_E_NO_MEMORY, "out of memory for a %llu-entry trace",
                                      (unsigned long long)spec->entries);
        b->chunk_count = 0;
        b->last = UINT64_MAX; /* the first request, trace 0, counts as sequential */
        b->run = 63;
    }
    return 0;
}

const uint32_t *mh_tracebuf_trace(mh_tracebuf *b, uint64_t t, mh_error *e)
{
    if (b->mem) return b->mem + t * b->entries;
    /* Sequential requests (the scan) read whole chunks; out-of-order ones
     * (the emission in timeline order) read what they need, growing again
     * with each run of consecutive traces, so nothing is read many times. */
    b->run = t == b->last + 1 ? (b->run < 63 ? b->run + 1 : 63) : 0;
    b->last = t;
    if (t < b->chunk_first || t >= b->chunk_first + b->chunk_count) {
        uint64_t ntr = b->words / b->entries;
        uint64_t want = b->run >= 63 ? b->chunk_cap : (uint64_t)1 << b->run;
        if (want > b->chunk_cap) want = b->chunk_cap;
        uint64_t count = ntr - t < want ? ntr - t : want;
        size_t nbytes = (size_t)(count * b->entries * 4);
        int err = pread_all(b->fd, b->chunk, nbytes, b->data_offset + t * b->entries * 4);
        if (err) {
            b->chunk_count = 0;
            mh_fail(e, MH_E_IO, "%s: read failed at trace %llu: %s", b->path, (unsigned long long)t,
                    err == EIO ? "file shrank or I/O error" : strerror(err));
            return NULL;
        }
        if (b->swap)
            for (size_t i = 0; i < nbytes / 4; i++) b->chunk[i] = __builtin_bswap32(b->chunk[i]);
        b->chunk_first = t;
        b->chunk_count = count;
    }
    return b->chunk + (t - b->chunk_first) * b->entries;
}

void mh_tracebuf_close(mh_tracebuf *b)
{
    if (b->fd >= 0) close(b->fd);
    free(b->path);
    free(b->chunk);
    free(b->owned);
    memset(b, 0, sizeof *b);
    b->fd = -1;
}
