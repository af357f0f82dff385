/* emu_printf.h - a kernel's printf on emu: vprintf(format, args) formatted as a GPU
 * does (the conversions d i u x X o c s p f F e E g G a A and %%, with flags, width,
 * precision (also '*') and the length modifiers hh h l ll z j t L), reading the
 * argument buffer nvcc lays out (each argument at its own alignment: ints and chars
 * as 4 bytes, long, long long, pointers and doubles (floats are promoted) as 8).
 * Output goes to a growing buffer, printed by the caller after the launch. */
#ifndef MH_EMU_PRINTF_H
#define MH_EMU_PRINTF_H

#include <stddef.h>
#include <stdint.h>

#define MH_PRINTF_LIMIT (4u << 20) /* bytes of output a launch keeps; the rest is dropped, said once */

typedef struct mh_outbuf {
    char *p;
    size_t n, cap;
    int dropped;                 /* output past MH_PRINTF_LIMIT was dropped */
} mh_outbuf;

void mh_outbuf_add(mh_outbuf *b, const char *s, size_t n);

/* The argument buffer and strings the format needs, read from device memory: 0, or
 * -1 after the reader raised a fault (the launch stops). */
typedef struct mh_printf_io {
    void *ctx;
    int (*arg)(void *ctx, uint64_t off, void *dst, uint32_t size);     /* bytes at the argument buffer + off */
    int (*str)(void *ctx, uint64_t addr, char *dst, size_t cap);       /* a NUL-terminated string at addr */
} mh_printf_io;

/* Formats fmt into out; returns the arguments it took (what printf returns on a GPU), or -1. */
int mh_emu_printf(const char *fmt, const mh_printf_io *io, mh_outbuf *out);

#endif
