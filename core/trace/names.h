/* names.h - the interned region-name table of a trace: id -> name, with each
 * name pre-encoded as a JSON string literal so the dump never escapes in its
 * hot loop. */
#ifndef MH_NAMES_H
#define MH_NAMES_H

#include <stddef.h>
#include <stdint.h>
#include "base/error.h"
#include "trace/spec.h"

typedef struct mh_name {
    uint32_t id;
    char *name;      /* UTF-8, NUL-terminated */
    char *json;      /* "name" as a JSON literal, quotes included, ASCII only */
    size_t json_len;
    uint8_t role;    /* 1: a lane's role ("// @mgpu role NAME"): its events name the trace's lane,
                      * they are not regions (the dump leaves them out and labels the lane) */
} mh_name;

typedef struct mh_names {
    mh_name *v;          /* sorted by id after mh_names_finish */
    size_t n, cap;
    const mh_name **dense; /* id -> entry when ids are small, else NULL */
    uint32_t dense_len;
} mh_names;

void mh_names_init(mh_names *t);
void mh_names_free(mh_names *t);

/* Adds name with id; ids must be < 2^31 (bit 31 marks an end event). */
int mh_names_add(mh_names *t, const char *name, uint64_t id, mh_error *e);

/* Adds a role (a lane's name, not a region): as mh_names_add, flagged. */
int mh_names_add_role(mh_names *t, const char *name, uint64_t id, mh_error *e);

/* Whether s (len bytes) is a role name: one word of letters, digits, '_', '-' and '.', at most
 * MH_ROLE_MAX bytes (it ends up in a lane's label: "block 0 · warpgroup 0 · producer"). */
#define MH_ROLE_MAX 48
int mh_role_name_ok(const char *s, size_t len);

/* Sorts, rejects duplicate ids, builds the lookup.  Call once after adding. */
int mh_names_finish(mh_names *t, mh_error *e);

/* Lookup by id; NULL when unknown. */
static inline const mh_name *mh_names_get(const mh_names *t, uint32_t id)
{
    if (t->dense) return id < t->dense_len ? t->dense[id] : NULL;
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->v[mid].id == id) return &t->v[mid];
        if (t->v[mid].id < id) lo = mid + 1; else hi = mid;
    }
    return NULL;
}

/* Encodes s as a JSON string literal the way Python's json.dumps does with
 * ensure_ascii (\uXXXX for non-ASCII, surrogate pairs above U+FFFF).
 * Returns a malloc'd string or NULL on invalid UTF-8 / no memory. */
char *mh_json_quote(const char *s, size_t *len_out);

#endif
