/* npy.c - NumPy .npy header parser.  Written here because no Debian-packaged
 * C library reads .npy; the header is a small Python dict literal. */
#include "base/npy.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && isspace((unsigned char)*p)) p++;
    return p;
}

/* Finds 'key': in the dict text and returns a pointer to its value (inside
 * [h, end)), or NULL. */
static const char *find_key(const char *h, const char *end, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = h; p + kl + 2 <= end; p++) {
        if ((*p == '\'' || *p == '"') && p[kl + 1] == *p && memcmp(p + 1, key, kl) == 0) {
            p = skip_ws(p + kl + 2, end);
            if (p >= end || *p != ':') return NULL;
            p = skip_ws(p + 1, end);
            return p < end ? p : NULL; /* a value starts inside the header */
        }
    }
    return NULL;
}

/* A key the header names twice: numpy's literal_eval keeps the last, a reader that stops at the
 * first would read another array; refused (0 when none is). */
static const char *key_twice(const char *h, const char *end)
{
    static const char *const keys[] = {"descr", "fortran_order", "shape"};
    for (int k = 0; k < 3; k++) {
        const char *v = find_key(h, end, keys[k]);
        if (v && find_key(v, end, keys[k])) return keys[k];
    }
    return NULL;
}

static int parse(const unsigned char *p, size_t len, mh_npy *out, int any, mh_error *e)
{
    uint64_t hlen, hstart;
    if (len < 10 || memcmp(p, "\x93NUMPY", 6) != 0)
        return mh_fail(e, MH_E_BAD_BUFFER, "not a .npy file (no \\x93NUMPY magic)");
    if (p[6] == 1) {
        hlen = (uint64_t)p[8] | (uint64_t)p[9] << 8;
        hstart = 10;
    } else if (p[6] == 2 || p[6] == 3) {
        if (len < 12) return mh_fail(e, MH_E_BAD_BUFFER, ".npy header is truncated");
        hlen = (uint64_t)p[8] | (uint64_t)p[9] << 8 | (uint64_t)p[10] << 16 | (uint64_t)p[11] << 24;
        hstart = 12;
    } else {
        return mh_fail(e, MH_E_BAD_BUFFER, ".npy format version %d.%d is not supported (1.0 to 3.0 are)", p[6], p[7]);
    }
    if (hstart + hlen > len)
        return mh_fail(e, MH_E_BAD_BUFFER, ".npy header claims %llu bytes but the file is shorter",
                       (unsigned long long)hlen);
    const char *h = (const char *)p + hstart, *end = h + hlen;

    const char *twice = key_twice(h, end);
    if (twice) return mh_fail(e, MH_E_BAD_BUFFER, ".npy header gives '%s' twice", twice);
    const char *d = find_key(h, end, "descr");
    if (d && *d == '[')
        return mh_fail(e, MH_E_BAD_BUFFER, ".npy dtype is structured (a list of fields): only plain number types are read");
    if (!d || end - d < 5 || (*d != '\'' && *d != '"'))
        return mh_fail(e, MH_E_BAD_BUFFER, ".npy header has no 'descr'");
    char q = *d;
    const char *dend = memchr(d + 1, q, (size_t)(end - d - 1));
    if (!dend) return mh_fail(e, MH_E_BAD_BUFFER, ".npy header: unterminated 'descr'");
    size_t dl = (size_t)(dend - d - 1);
    const char *ds = d + 1;
    if (any) {
        if (dl < 3 || dl > 4 || !strchr("<>|=", ds[0]) || !isalpha((unsigned char)ds[1]) || !isdigit((unsigned char)ds[2]) ||
            (dl == 4 && !isdigit((unsigned char)ds[3])))
            return mh_fail(e, MH_E_BAD_BUFFER, ".npy dtype '%.*s' is not a plain number type", (int)dl, ds);
        out->kind = ds[1];
        out->itemsize = (unsigned)atoi(ds + 2);
    } else if (dl != 3 || !strchr("<>|=", ds[0]) || (ds[1] != 'u' && ds[1] != 'i') || ds[2] != '4') {
        return mh_fail(e, MH_E_BAD_BUFFER,
                       ".npy dtype '%.*s' is not a 4-byte integer: a trace buffer is uint32 (or int32)",
                       (int)dl, ds);
    } else {
        out->kind = ds[1];
        out->itemsize = 4;
    }
    out->big_endian = ds[0] == '>';

    const char *s = find_key(h, end, "shape");
    if (!s || *s != '(') return mh_fail(e, MH_E_BAD_BUFFER, ".npy header has no 'shape' tuple");
    uint64_t count = 1;
    int ndim = 0;
    s++;
    for (;;) {
        s = skip_ws(s, end);
        if (s >= end) return mh_fail(e, MH_E_BAD_BUFFER, ".npy header: unterminated 'shape'");
        if (*s == ')') break;
        if (!isdigit((unsigned char)*s)) return mh_fail(e, MH_E_BAD_BUFFER, ".npy header: bad 'shape'");
        uint64_t dim = 0;
        while (s < end && isdigit((unsigned char)*s)) {
            if (dim > (UINT64_MAX - 9) / 10) return mh_fail(e, MH_E_BAD_BUFFER, ".npy shape overflows");
            dim = dim * 10 + (uint64_t)(*s++ - '0');
        }
        if (__builtin_mul_overflow(count, dim, &count))
            return mh_fail(e, MH_E_BAD_BUFFER, ".npy shape overflows 64 bits");
        if (ndim < MH_NPY_MAX_DIMS) out->dims[ndim] = dim;
        ndim++;
        s = skip_ws(s, end);
        if (s < end && *s == ',') s++;
    }

    const char *f = find_key(h, end, "fortran_order");
    if (!f) return mh_fail(e, MH_E_BAD_BUFFER, ".npy header has no 'fortran_order'");
    int fortran = end - f >= 4 && memcmp(f, "True", 4) == 0;
    const char *fe = f + (fortran ? 4 : 5);
    if (!fortran && !(end - f >= 5 && memcmp(f, "False", 5) == 0)) fe = NULL;
    if (fe) fe = skip_ws(fe, end);
    if (!fe || fe >= end || (*fe != ',' && *fe != '}'))
        return mh_fail(e, MH_E_BAD_BUFFER, ".npy header: 'fortran_order' must be True or False, not '%.*s'",
                       (int)strcspn(f, ",}\n") > 40 ? 40 : (int)strcspn(f, ",}\n"), f);
    if (fortran && ndim > 1)
        return mh_fail(e, MH_E_BAD_BUFFER,
                       ".npy array is %d-D in Fortran order: save it in C order (np.ascontiguousarray)", ndim);
    out->data_offset = hstart + hlen;
    out->count = count;
    out->ndim = ndim;
    return 0;
}

int mh_npy_parse(const unsigned char *p, size_t len, mh_npy *out, mh_error *e) { return parse(p, len, out, 0, e); }

int mh_npy_claims(const char *path, const unsigned char *head, size_t n)
{
    size_t pl = path ? strlen(path) : 0;
    if (pl >= 4 && !strcasecmp(path + pl - 4, ".npy")) return 1;
    return n >= 6 && memcmp(head, "\x93NUMPY", 6) == 0;
}
int mh_npy_parse_any(const unsigned char *p, size_t len, mh_npy *out, mh_error *e) { return parse(p, len, out, 1, e); }

size_t mh_npy_header(char *buf, size_t cap, const char *descr, const uint64_t *dims, int ndim)
{
    char dict[512];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < ndim && n < (int)sizeof dict - 32; i++)
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%llu,%s", (unsigned long long)dims[i], i + 1 < ndim ? " " : "");
    n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
    size_t total = 10 + (size_t)n + 1;
    total = (total + 63) / 64 * 64;
    if (total > cap || total - 10 > 65535) return 0;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (char)((total - 10) & 0xff);
    buf[9] = (char)((total - 10) >> 8);
    memcpy(buf + 10, dict, (size_t)n);
    memset(buf + 10 + n, ' ', total - 10 - (size_t)n - 1);
    buf[total - 1] = '\n';
    return total;
}
