/* read_file.c - reading a whole file (see read_file.h). */
#include "base/read_file.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

char *mh_read_file(const char *path, size_t max, size_t *len, mh_error *e)
{
    mh_error ignored;
    if (!e) e = &ignored;
    FILE *f = fopen(path, "rb");
    if (!f) {
        mh_fail(e, MH_E_IO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) { /* fopen takes a folder; reading it fails */
        fclose(f);
        mh_fail(e, MH_E_IO, "%s: is a directory, not a file", path);
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap + 1);
    while (s) {
        n += fread(s + n, 1, cap - n, f);
        if (n < cap || (max && n > max)) break;
        char *t = cap < SIZE_MAX / 4 ? realloc(s, 2 * cap + 1) : NULL;
        if (!t) {
            free(s);
            s = NULL;
            break;
        }
        s = t;
        cap *= 2;
    }
    int bad = s && ferror(f), err = errno;
    fclose(f);
    if (!s) {
        mh_fail(e, MH_E_NO_MEMORY, "%s: out of memory reading it", path);
        return NULL;
    }
    if (bad || (max && n > max)) {
        free(s);
        if (bad) mh_fail(e, MH_E_IO, "%s: read failed: %s", path, strerror(err));
        else mh_fail(e, MH_E_IO, "%s: longer than %zu bytes", path, max);
        return NULL;
    }
    s[n] = 0;
    if (len) *len = n;
    return s;
}
