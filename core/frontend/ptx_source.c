/* ptx_source.c - the source line of a PTX statement (see ptx_source.h): the .loc before
 * it in its function and the .file that names its file number.  Read from the module's
 * text when a message needs it (faults, deadlocks, warnings: rare), so the front end
 * keeps no table for it. */
#include "frontend/ptx_source.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether the directive or keyword w starts at s, a word of text t (blank or line start before). */
static int word_at(const char *t, const char *s, const char *w)
{
    size_t n = strlen(w);
    return !strncmp(s, w, n) && (s == t || isspace((unsigned char)s[-1])) && (isspace((unsigned char)s[n]) || !s[n]);
}

static const char *skip_space(const char *s)
{
    while (*s && isspace((unsigned char)*s)) s++;
    return s;
}

/* An unsigned integer at *s (white space before it skipped): 0 and *s unchanged when none. */
static unsigned long number(const char **s)
{
    const char *p = skip_space(*s);
    if (!isdigit((unsigned char)*p)) return 0;
    char *end;
    unsigned long v = strtoul(p, &end, 10);
    *s = end;
    return v;
}

/* A quoted string at *s: its bytes in [*a, *a + *n); 0 when there is none. */
static int quoted(const char **s, const char **a, size_t *n)
{
    const char *p = *s;
    while (*p == ' ' || *p == '\t') p++;
    if (*p != '"') return 0;
    const char *q = strchr(p + 1, '"'), *nl = strchr(p + 1, '\n');
    if (!q || (nl && nl < q)) return 0;
    *a = p + 1;
    *n = (size_t)(q - p - 1);
    *s = q + 1;
    return 1;
}

/* File number `num`'s name (from its .file) as "NAME" or "DIR/NAME" into buf. */
static void file_name(const char *t, unsigned long num, char *buf, size_t len)
{
    for (const char *q = t; (q = strstr(q, ".file")) != NULL; q += 5) {
        if (!word_at(t, q, ".file")) continue;
        const char *s = q + 5, *a, *b;
        size_t na, nb;
        if (number(&s) != num || !quoted(&s, &a, &na)) continue;
        const char *after = s;
        while (*after == ' ' || *after == '\t' || *after == ',') after++;
        if (*after == '"' && quoted(&after, &b, &nb)) /* a directory and a file name (LLVM) */
            snprintf(buf, len, "%.*s/%.*s", (int)(na < 200 ? na : 200), a, (int)(nb < 200 ? nb : 200), b);
        else
            snprintf(buf, len, "%.*s", (int)(na < 300 ? na : 300), a);
        return;
    }
    snprintf(buf, len, "<file %lu>", num);
}

int mh_ptx_source_at(const mh_ptx_module *m, size_t off, char *buf, size_t len)
{
    if (len) buf[0] = 0;
    const char *t = m ? m->text : NULL;
    if (!t || !off || !len) return 0;
    size_t tl = strlen(t);
    if (off > tl) return 0;
    const char *loc = NULL;
    for (const char *q = t + off; q-- > t;) {
        if (*q != '.') continue;
        if (word_at(t, q, ".entry") || word_at(t, q, ".func")) break;
        if (word_at(t, q, ".loc")) { loc = q; break; }
    }
    if (!loc) return 0;
    const char *s = loc + 4;
    unsigned long file = number(&s), line = number(&s);
    if (!line) return 0;
    number(&s); /* the column */
    char name[420], at[420] = "";
    file_name(t, file, name, sizeof name);
    /* [, function_name LABEL [+ N]] [, inlined_at FILE LINE COLUMN] (the grammar ptx_parse.c reads) */
    for (s = skip_space(s); *s == ',';) {
        s = skip_space(s + 1);
        if (!strncmp(s, "function_name", 13)) {
            s = skip_space(s + 13);
            while (*s && !isspace((unsigned char)*s) && *s != ',') s++;
            s = skip_space(s);
            if (*s == '+') { s++; number(&s); }
        } else if (!strncmp(s, "inlined_at", 10)) {
            s += 10;
            unsigned long f2 = number(&s), l2 = number(&s);
            number(&s);
            if (l2) {
                char n2[420];
                file_name(t, f2, n2, sizeof n2);
                snprintf(at, sizeof at, ", inlined at %.300s:%lu", n2, l2);
            }
        } else {
            break;
        }
        s = skip_space(s);
    }
    snprintf(buf, len, "%.400s:%lu%s", name, line, at);
    return 1;
}

void mh_ptx_where(const mh_ptx_module *m, size_t off, uint32_t line, char *buf, size_t len)
{
    char src[900];
    const char *path = m && m->path ? m->path : "<ptx>";
    if (mh_ptx_source_at(m, off, src, sizeof src)) snprintf(buf, len, "%.700s (PTX %.200s:%u)", src, path, line);
    else snprintf(buf, len, "%.200s:%u", path, line);
}
