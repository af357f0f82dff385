/* edits.c - the rewrite as insertions into the original text at offsets the front end recorded
 * (so everything else in the module stays byte for byte as it was), spliced at the end, and the
 * line map from the rewritten text back to the original (mh_instrumented_line). */
#include "instrument/rewrite.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void add_edit(edits *E, size_t at, uint32_t prio, const char *fmt, ...)
{
    if (E->oom) return;
    if (E->n == E->cap) {
        size_t c = E->cap ? E->cap * 2 : 32;
        edit *nv = realloc(E->v, c * sizeof *nv);
        if (!nv) { E->oom = 1; return; }
        E->v = nv;
        E->cap = c;
    }
    char buf[1024]; /* most edits fit: formatted once */
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!s) { E->oom = 1; return; }
    if ((size_t)n < sizeof buf) memcpy(s, buf, (size_t)n + 1);
    else {
        va_start(ap, fmt);
        vsnprintf(s, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    E->v[E->n].at = at;
    E->v[E->n].prio = prio;
    E->v[E->n].seq = E->n;
    E->v[E->n].text = s;
    E->v[E->n].len = (size_t)n;
    E->n++;
}

static int by_offset(const void *a, const void *b)
{
    const edit *x = a, *y = b;
    if (x->at != y->at) return x->at < y->at ? -1 : 1;
    if (x->prio != y->prio) return x->prio < y->prio ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Line breaks in n bytes at s. */
static size_t count_newlines(const char *s, size_t n)
{
    size_t c = 0;
    for (const char *p = s, *end = s + n; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++) c++;
    return c;
}

/* The line map of the rewrite: one record per insertion point (edits sorted
 * by offset; those at one offset merged). */
static int record_insertions(const char *orig, const edits *E, mh_instrumented *out, mh_error *e)
{
    out->inserted = calloc(E->n ? E->n : 1, sizeof *out->inserted);
    if (!out->inserted) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    size_t n = 0, scanned = 0;
    uint32_t line = 1;
    for (size_t i = 0; i < E->n; i++) {
        uint32_t nl = (uint32_t)count_newlines(E->v[i].text, E->v[i].len);
        if (n && E->v[i].at == E->v[i - 1].at) { /* more text at the same point */
            out->inserted[n - 1].newlines += nl;
            continue;
        }
        line += (uint32_t)count_newlines(orig + scanned, E->v[i].at - scanned);
        scanned = E->v[i].at;
        out->inserted[n].line = line;
        out->inserted[n].newlines = nl;
        /* original text on the line between the neighbouring insertion points and this one */
        size_t at = E->v[i].at, lo = n ? E->v[i - 1].at : 0, hi = at, b = at, a = at;
        for (size_t j = i + 1; j < E->n && hi == at; j++) hi = E->v[j].at;
        if (hi == at) hi = strlen(orig);
        while (b > lo && (orig[b - 1] == ' ' || orig[b - 1] == '\t')) b--;
        while (a < hi && (orig[a] == ' ' || orig[a] == '\t' || orig[a] == '\r')) a++;
        out->inserted[n].text_before = b > lo && orig[b - 1] != '\n';
        out->inserted[n].text_after = a < hi && orig[a] != '\n';
        n++;
    }
    out->ninserted = n;
    for (size_t i = 1; i < n; i++) out->inserted[i].before = out->inserted[i - 1].before + out->inserted[i - 1].newlines;
    return 0;
}

uint32_t mh_instrumented_line(const mh_instrumented *r, uint32_t line, int *added)
{
    if (added) *added = 0;
    /* the first insertion whose last rewritten line is at or after `line` (those
     * lines never decrease along the list): the line is in it, or before it */
    size_t lo = 0, hi = r->ninserted;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const mh_insertion *in = &r->inserted[mid];
        if (in->line + in->before + in->newlines < line) lo = mid + 1;
        else hi = mid;
    }
    if (lo == r->ninserted) /* after every insertion */
        return r->ninserted ? line - (r->inserted[lo - 1].before + r->inserted[lo - 1].newlines) : line;
    const mh_insertion *in = &r->inserted[lo];
    uint32_t start = in->line + in->before; /* the rewritten line the insertion begins on */
    if (line < start) return line - in->before;
    /* the first line keeps the original text before the insertion, the last one
     * the original text after it; lines between are all added */
    int original = (line == start && in->text_before) || (line == start + in->newlines && in->text_after);
    if (added) *added = !original;
    return in->line;
}

int edits_apply(edits *E, const char *orig, mh_instrumented *out, mh_error *e)
{
    /* splice */
    size_t len = strlen(orig), total = len;
    if (E->n > 1) qsort(E->v, E->n, sizeof *E->v, by_offset);
    for (size_t i = 0; i < E->n; i++) total += E->v[i].len;
    out->text = malloc(total + 1);
    if (!out->text) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    size_t at = 0, o = 0;
    for (size_t i = 0; i < E->n; i++) {
        memcpy(out->text + o, orig + at, E->v[i].at - at);
        o += E->v[i].at - at;
        at = E->v[i].at;
        memcpy(out->text + o, E->v[i].text, E->v[i].len);
        o += E->v[i].len;
    }
    memcpy(out->text + o, orig + at, len - at);
    o += len - at;
    out->text[o] = 0;
    out->len = o;
    return record_insertions(orig, E, out, e);
}

void edits_free(edits *E)
{
    for (size_t i = 0; i < E->n; i++) free(E->v[i].text);
    free(E->v);
}
