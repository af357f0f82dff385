/* names.c - interned region-name table and JSON string encoding. */
#include "trace/names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mh_names_init(mh_names *t) { memset(t, 0, sizeof *t); }

void mh_names_free(mh_names *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->v[i].name);
        free(t->v[i].json);
    }
    free(t->v);
    free(t->dense);
    memset(t, 0, sizeof *t);
}

/* Decodes one UTF-8 sequence; returns its length or 0 if invalid. */
static size_t utf8_decode(const unsigned char *p, uint32_t *cp)
{
    if (p[0] < 0x80) { *cp = p[0]; return 1; }
    size_t len = (p[0] & 0xE0) == 0xC0 ? 2 : (p[0] & 0xF0) == 0xE0 ? 3 : (p[0] & 0xF8) == 0xF0 ? 4 : 0;
    if (!len) return 0;
    uint32_t c = p[0] & (0x7F >> len);
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        c = (c << 6) | (p[i] & 0x3F);
    }
    static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (c < min_cp[len] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
    *cp = c;
    return len;
}

char *mh_json_quote(const char *s, size_t *len_out)
{
    size_t n = strlen(s);
    char *out = malloc(n * 12 + 3); /* worst case: 4 bytes -> 12 chars */
    if (!out) return NULL;
    char *o = out;
    const unsigned char *p = (const unsigned char *)s;
    *o++ = '"';
    while (*p) {
        uint32_t c;
        size_t k = utf8_decode(p, &c);
        if (!k) { free(out); return NULL; }
        p += k;
        switch (c) {
        case '"': *o++ = '\\'; *o++ = '"'; continue;
        case '\\': *o++ = '\\'; *o++ = '\\'; continue;
        case '\n': *o++ = '\\'; *o++ = 'n'; continue;
        case '\r': *o++ = '\\'; *o++ = 'r'; continue;
        case '\t': *o++ = '\\'; *o++ = 't'; continue;
        case '\b': *o++ = '\\'; *o++ = 'b'; continue;
        case '\f': *o++ = '\\'; *o++ = 'f'; continue;
        default: break;
        }
        if (c >= 0x20 && c < 0x7F) { *o++ = (char)c; continue; }
        if (c >= 0x10000) {
            uint32_t v = c - 0x10000;
            o += sprintf(o, "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
        } else {
            o += sprintf(o, "\\u%04x", c);
        }
    }
    *o++ = '"';
    *o = '\0';
    if (len_out) *len_out = (size_t)(o - out);
    return out;
}

/* Adds name (a region's; a role's when role) with id. */
static int add(mh_names *t, const char *name, uint64_t id, int role, mh_error *e)
{
    if (id > MH_NAME_ID_MAX)
        return mh_fail(e, MH_E_BAD_META,
                       "%s \"%s\" has id %llu: ids must be below 2^31 (bit 31 of a tag marks an end event)",
                       role ? "role" : "name", name, (unsigned long long)id);
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        mh_name *v = realloc(t->v, cap * sizeof *v);
        if (!v) return mh_fail(e, MH_E_NO_MEMORY, "out of memory for the name table");
        t->v = v;
        t->cap = cap;
    }
    mh_name *m = &t->v[t->n];
    m->id = (uint32_t)id;
    m->name = strdup(name);
    m->json = mh_json_quote(name, &m->json_len);
    m->role = role;
    if (!m->name || !m->json) {
        free(m->name);
        free(m->json);
        return mh_fail(e, MH_E_BAD_META, "name with id %llu is not valid UTF-8", (unsigned long long)id);
    }
    t->n++;
    return 0;
}

int mh_names_add(mh_names *t, const char *name, uint64_t id, mh_error *e) { return add(t, name, id, 0, e); }

int mh_names_add_role(mh_names *t, const char *name, uint64_t id, mh_error *e)
{
    if (!mh_role_name_ok(name, strlen(name)))
        return mh_fail(e, MH_E_BAD_META, "bad role name \"%.80s\": a role is one word of letters, digits, '_', '-' "
                       "and '.', at most %d characters (\"producer\", \"consumer-1\")", name, MH_ROLE_MAX);
    return add(t, name, id, 1, e);
}

int mh_role_name_ok(const char *s, size_t len)
{
    if (!len || len > MH_ROLE_MAX) return 0;
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
              s[i] == '_' || s[i] == '-' || s[i] == '.'))
            return 0;
    return 1;
}

static int by_id(const void *a, const void *b)
{
    uint32_t x = ((const mh_name *)a)->id, y = ((const mh_name *)b)->id;
    return (x > y) - (x < y);
}

int mh_names_finish(mh_names *t, mh_error *e)
{
    if (t->n > 1) qsort(t->v, t->n, sizeof *t->v, by_id);
    for (size_t i = 1; i < t->n; i++)
        if (t->v[i].id == t->v[i - 1].id)
            return mh_fail(e, MH_E_BAD_META, "%s \"%s\" and %s \"%s\" share id %u (names and roles: one id each)",
                           t->v[i - 1].role ? "role" : "name", t->v[i - 1].name, t->v[i].role ? "role" : "name",
                           t->v[i].name, t->v[i].id);
    free(t->dense);
    t->dense = NULL;
    t->dense_len = 0;
    if (t->n && t->v[t->n - 1].id < 4 * t->n + 4096) {
        t->dense_len = t->v[t->n - 1].id + 1;
        t->dense = calloc(t->dense_len, sizeof *t->dense);
        if (!t->dense) return mh_fail(e, MH_E_NO_MEMORY, "out of memory for the name table");
        for (size_t i = 0; i < t->n; i++) t->dense[t->v[i].id] = &t->v[i];
    }
    return 0;
}
