/* Reads `.entry NAME( .param ... )` from a PTX file: each parameter's size from its type
 * (.u32: 4, .b64: 8, ...) times its array length ([N]). */
#include "ptx_params.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t type_size(const char *t)
{
    size_t bits = (size_t)atoi(t + 2); /* .u32 .b8 .f16 .s64 */
    if (!strncmp(t, ".pred", 5)) return 1;
    return bits ? bits / 8 : 0;
}

static int parse(const char *p, ptx_entry *e)
{
    e->n = 0;
    while (*p && *p != ')') {
        const char *end = p;
        while (*end && *end != ',' && *end != ')') end++;
        size_t size = 0, count = 1;
        for (const char *q = p; q < end; q++) { /* the last type token wins: .param .align 8 .b8 x[16] */
            if (*q == '.' && q + 2 < end && strchr("usbf", q[1]) && isdigit((unsigned char)q[2])) size = type_size(q);
            if (*q == '[') count = (size_t)strtoull(q + 1, NULL, 10);
        }
        if (strstr(p, ".param") && strstr(p, ".param") < end) {
            if (!size || e->n == PTX_MAX_PARAMS) return -1;
            e->size[e->n++] = size * count;
        }
        p = *end == ',' ? end + 1 : end;
    }
    return 0;
}

int ptx_entry_params(const char *path, const char *name, ptx_entry *e)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (!s || fread(s, 1, (size_t)n, f) != (size_t)n) { fclose(f); free(s); return -1; }
    fclose(f);
    s[n] = 0;
    size_t len = strlen(name);
    int rc = -1;
    for (char *p = strstr(s, ".entry "); p; p = strstr(p + 1, ".entry ")) {
        char *q = p + 7;
        while (*q == ' ') q++;
        if (strncmp(q, name, len) || (q[len] != '(' && !isspace((unsigned char)q[len]))) continue;
        q = strchr(q, '(');
        if (q) rc = parse(q + 1, e);
        break;
    }
    free(s);
    return rc;
}
