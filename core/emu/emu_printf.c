/* emu_printf.c - CUDA printf formatting for emu (see emu_printf.h). */
#include "emu/emu_printf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mh_outbuf_add(mh_outbuf *b, const char *s, size_t n)
{
    if (b->dropped) return;
    if (b->n + n > MH_PRINTF_LIMIT) {
        static const char note[] = "\n[emu: printf output past 4 MiB dropped]\n";
        n = 0;
        s = note;
        b->dropped = 1;
        n = sizeof note - 1;
    }
    if (b->n + n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 256;
        while (c < b->n + n + 1) c *= 2;
        char *p = realloc(b->p, c);
        if (!p) { b->dropped = 1; return; }
        b->p = p;
        b->cap = c;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

/* reads an argument of `size` bytes at the next offset aligned to its size */
static int take(const mh_printf_io *io, uint64_t *off, uint32_t size, void *dst)
{
    *off = (*off + size - 1) / size * size;
    if (io->arg(io->ctx, *off, dst, size)) return -1;
    *off += size;
    return 0;
}

int mh_emu_printf(const char *fmt, const mh_printf_io *io, mh_outbuf *out)
{
    uint64_t off = 0;
    int nargs = 0;
    const char *p = fmt;
    while (*p) {
        const char *pct = strchr(p, '%');
        if (!pct) {
            mh_outbuf_add(out, p, strlen(p));
            break;
        }
        mh_outbuf_add(out, p, (size_t)(pct - p));
        p = pct + 1;
        if (*p == '%') {
            mh_outbuf_add(out, "%", 1);
            p++;
            continue;
        }
        /* %[flags][width][.precision][length]conversion */
        char spec[64];
        size_t sn = 0;
        spec[sn++] = '%';
        while (*p && strchr("-+ #0", *p) && sn < 16) spec[sn++] = *p++;
        int width = -1, prec = -1;
        if (*p == '*') {
            int32_t v;
            if (take(io, &off, 4, &v)) return -1;
            nargs++;
            width = v;
            p++;
        } else {
            while (*p >= '0' && *p <= '9') width = (width < 0 ? 0 : width * 10) + (*p++ - '0');
        }
        if (*p == '.') {
            p++;
            prec = 0;
            if (*p == '*') {
                int32_t v;
                if (take(io, &off, 4, &v)) return -1;
                nargs++;
                prec = v;
                p++;
            } else {
                while (*p >= '0' && *p <= '9') prec = prec * 10 + (*p++ - '0');
            }
        }
        if (width > 4096) width = 4096; /* what one conversion may print */
        if (prec > 4096) prec = 4096;
        if (width >= 0) sn += (size_t)snprintf(spec + sn, sizeof spec - sn, "%d", width);
        if (prec >= 0) sn += (size_t)snprintf(spec + sn, sizeof spec - sn, ".%d", prec);
        int len = 0; /* 1: hh, 2: h, 8: l ll z j t (64 bits) */
        if (p[0] == 'h' && p[1] == 'h') { len = 1; p += 2; }
        else if (p[0] == 'h') { len = 2; p++; }
        else if (p[0] == 'l' && p[1] == 'l') { len = 8; p += 2; }
        else if (*p == 'l' || *p == 'z' || *p == 'j' || *p == 't') { len = 8; p++; }
        else if (*p == 'L') p++; /* long double: a double on the device */
        char conv = *p;
        if (!conv) break;
        p++;
        char buf[4200 + 64];
        int n = 0;
        switch (conv) {
        case 'd': case 'i': {
            long long v;
            if (len == 8) { int64_t x; if (take(io, &off, 8, &x)) return -1; v = x; }
            else { int32_t x; if (take(io, &off, 4, &x)) return -1; v = len == 1 ? (signed char)x : len == 2 ? (short)x : x; }
            memcpy(spec + sn, "lld", 4);
            n = snprintf(buf, sizeof buf, spec, v);
            break;
        }
        case 'u': case 'x': case 'X': case 'o': {
            unsigned long long v;
            if (len == 8) { uint64_t x; if (take(io, &off, 8, &x)) return -1; v = x; }
            else { uint32_t x; if (take(io, &off, 4, &x)) return -1; v = len == 1 ? (unsigned char)x : len == 2 ? (unsigned short)x : x; }
            spec[sn] = 'l';
            spec[sn + 1] = 'l';
            spec[sn + 2] = conv;
            spec[sn + 3] = 0;
            n = snprintf(buf, sizeof buf, spec, v);
            break;
        }
        case 'c': {
            int32_t x;
            if (take(io, &off, 4, &x)) return -1;
            spec[sn] = 'c';
            spec[sn + 1] = 0;
            n = snprintf(buf, sizeof buf, spec, (unsigned char)x);
            break;
        }
        case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A': {
            double x;
            if (take(io, &off, 8, &x)) return -1;
            spec[sn] = conv;
            spec[sn + 1] = 0;
            n = snprintf(buf, sizeof buf, spec, x);
            break;
        }
        case 's': {
            uint64_t a;
            if (take(io, &off, 8, &a)) return -1;
            char s[4097];
            if (!a) strcpy(s, "(null)");
            else if (io->str(io->ctx, a, s, prec >= 0 && prec < 4096 ? (size_t)prec + 1 : sizeof s)) return -1;
            spec[sn] = 's';
            spec[sn + 1] = 0;
            n = snprintf(buf, sizeof buf, spec, s);
            break;
        }
        case 'p': {
            uint64_t a;
            if (take(io, &off, 8, &a)) return -1;
            spec[sn] = 'p';
            spec[sn + 1] = 0;
            n = snprintf(buf, sizeof buf, spec, (void *)(uintptr_t)a);
            break;
        }
        default: /* not a conversion printf knows (%n included): printed as it stands */
            mh_outbuf_add(out, pct, (size_t)(p - pct));
            continue;
        }
        nargs++;
        if (n > 0) mh_outbuf_add(out, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
    }
    return nargs;
}
