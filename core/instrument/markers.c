/* markers.c - the markers as the front end recorded them (m->markers) turned into record points:
 * their grammar, the function each belongs to, which functions record events, and region
 * names to ids (markers' and probes'). */
#include "instrument/rewrite.h"

#include <stdlib.h>
#include <string.h>

/* The markers are the front end's records (m->markers): the lexer read each
 * "// @mgpu" comment once, its kind, name, line and offsets. */
#define NAME_MAX_SHOWN 600 /* a name in a message: the messages are shorter than this anyway */
static int name_shown(const mh_ptx_marker *mk) { return (int)(mk->name_len < NAME_MAX_SHOWN ? mk->name_len : NAME_MAX_SHOWN); }
#define MK_NAME(m, mk) name_shown(mk), (m)->text + (mk)->name_off

/* Every marker must read "// @mgpu begin NAME", "// @mgpu end NAME" or "// @mgpu role NAME" (NAME
 * one word, mh_role_name_ok): the first one that does not is the error, wherever it is. */
int check_grammar(const mh_ptx_module *m, mh_error *e)
{
    for (size_t i = 0; i < m->nmarkers; i++) {
        const mh_ptx_marker *mk = &m->markers[i];
        if (mk->kind == MH_MARKER_BAD_VERB) {
            e->line = mk->line;
            return mh_fail(e, MH_E_PTX_SYNTAX, "%.200s:%u: bad marker: expected \"// @mgpu begin NAME\" or \"// @mgpu end NAME\"",
                           m->path, mk->line);
        }
        if (mk->kind == MH_MARKER_NO_NAME) {
            e->line = mk->line;
            return mh_fail(e, MH_E_PTX_SYNTAX, "%.200s:%u: marker without a region name", m->path, mk->line);
        }
        if (mk->kind == MH_MARKER_ROLE && !mh_role_name_ok(m->text + mk->name_off, mk->name_len)) {
            e->line = mk->line;
            return err_at(e, m, mk->line, MH_E_PTX_SYNTAX, "bad role name \"%.*s\": a role is one word of letters, "
                          "digits, '_', '-' and '.', at most %d characters (\"// @mgpu role producer\", "
                          "MGPU_ROLE(\"consumer-1\"))", MK_NAME(m, mk), MH_ROLE_MAX);
        }
    }
    return 0;
}

static uint64_t name_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static name_slot *name_find(const name_index *x, const char *s, size_t len)
{
    size_t i = (size_t)name_hash(s, len) & (x->cap - 1);
    while (x->v[i].s && (x->v[i].len != len || memcmp(x->v[i].s, s, len))) i = (i + 1) & (x->cap - 1);
    return &x->v[i];
}

static int name_index_grow(name_index *x)
{
    name_index y = {calloc(x->cap ? x->cap * 2 : 64, sizeof *y.v), x->cap ? x->cap * 2 : 64, x->n};
    if (!y.v) return -1;
    for (size_t i = 0; i < x->cap; i++)
        if (x->v[i].s) *name_find(&y, x->v[i].s, x->v[i].len) = x->v[i];
    free(x->v);
    *x = y;
    return 0;
}

/* The id of the name (len bytes at s, which must stay valid while the index lives: the module's
 * text or the probes'), added to t (and the index) when new. */
int intern(mh_names *t, name_index *x, const char *s, size_t len, uint32_t *id, mh_error *e)
{
    if ((x->n + 1) * 2 > x->cap && name_index_grow(x)) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    name_slot *slot = name_find(x, s, len);
    if (slot->s) { *id = slot->id; return 0; }
    if (t->n >= MH_NAME_ID_MAX) return mh_fail(e, MH_E_PTX_UNSUPPORTED, "more than 2^31 region names");
    char *name = malloc(len + 1);
    if (!name) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    memcpy(name, s, len);
    name[len] = 0;
    *id = (uint32_t)t->n;
    int rc = mh_names_add(t, name, *id, e);
    free(name);
    if (rc) return rc;
    slot->s = s;
    slot->len = len;
    slot->id = *id;
    x->n++;
    return 0;
}

/* Whether `in` may run a function that records events (traced): a call to
 * one, or a call through a pointer (kept as text), which may call any. */
int calls_traced(const mh_ptx_insn *in, const char *traced)
{
    int call = in->op == MH_OP_CALL || (in->op == MH_OP_OPAQUE && (in->mods & MH_MOD_OPAQUE_CALL));
    return call && (in->callee < 0 || traced[in->callee]);
}

/* A defined function's body, [open, close) in the text. */
typedef struct { uint32_t open, close, func; } body;

static int by_open(const void *a, const void *b)
{
    uint32_t x = ((const body *)a)->open, y = ((const body *)b)->open;
    return (x > y) - (x < y);
}

/* The marker (an index into mk, sorted by offset) at offset off, or nmk. */
static size_t marker_at(const mh_ptx_marker *mk, size_t nmk, size_t off)
{
    size_t lo = 0, hi = nmk;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (mk[mid].off == off) return mid;
        if (mk[mid].off < off) lo = mid + 1; else hi = mid;
    }
    return nmk;
}

int marker_owners(rewrite *w, mh_error *e)
{
    const mh_ptx_module *m = w->m;
    const mh_ptx_marker *mk = m->markers;
    size_t nmk = m->nmarkers;
    /* each marker belongs to a function body: the markers and the bodies (which
     * do not overlap) in text order, side by side; a function's markers are a
     * run of the list, from first[fi], count[fi] long */
    size_t nf = m->nfuncs ? m->nfuncs : 1;
    int *owner = calloc(nmk ? nmk : 1, sizeof *owner);
    body *bodies = malloc(nf * sizeof *bodies);
    uint32_t nbodies = 0;
    size_t *first = w->first = malloc(nf * sizeof *first), *count = w->count = calloc(nf, sizeof *count);
    char *marked = w->marked = calloc(nf, 1), *traced = w->traced = calloc(nf, 1);
    int rc = 0;
    if (!owner || !bodies || !first || !count || !marked || !traced) rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    for (uint32_t fi = 0; !rc && fi < m->nfuncs; fi++) {
        first[fi] = nmk;
        const mh_ptx_func *f = &m->funcs[fi];
        if (f->defined) bodies[nbodies++] = (body){f->body_open, f->body_close, fi};
    }
    if (!rc && nmk && nbodies > 1) qsort(bodies, nbodies, sizeof *bodies, by_open); /* (parsed in text order) */
    for (size_t i = 0, b = 0; i < nmk && !rc; i++) {
        while (b < nbodies && bodies[b].close <= mk[i].off) b++;
        owner[i] = b < nbodies && bodies[b].open <= mk[i].off ? (int)bodies[b].func : -1;
        if (owner[i] < 0) {
            rc = err_at(e, m, mk[i].line, MH_E_PTX_SYNTAX, "marker \"%.*s\" outside any function body",
                        MK_NAME(m, &mk[i]));
            break;
        }
        marked[owner[i]] = traced[owner[i]] = 1;
        if (!count[owner[i]]++) first[owner[i]] = i;
    }
    free(owner);
    free(bodies);
    return rc;
}

void traced_functions(rewrite *w)
{
    const mh_ptx_module *m = w->m;
    char *traced = w->traced;
    /* traced: records events itself or calls (transitively) a function that does */
    int func_records = 0;
    for (uint32_t fi = 0; fi < m->nfuncs; fi++) func_records |= w->marked[fi] && !m->funcs[fi].is_entry;
    for (int changed = func_records; changed;) {
        changed = 0;
        for (uint32_t fi = 0; fi < m->nfuncs; fi++) {
            const mh_ptx_func *f = &m->funcs[fi];
            for (uint32_t i = 0; !traced[fi] && f->defined && i < f->ncode; i++)
                if (calls_traced(&f->code[i], traced)) traced[fi] = 1, changed = 1;
        }
    }
    w->func_records = func_records;
}

int marker_points(const mh_ptx_module *m, const mh_ptx_func *f, const mh_ptx_marker *fmk, size_t fn,
                         const uint32_t *ids, point **pts, size_t *npts, size_t *cap, mh_error *e)
{
    uint32_t *at = malloc((fn ? fn : 1) * sizeof *at);
    if (!at) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    /* each marker's instruction: the front end's MH_OP_NOP at the comment */
    for (size_t k = 0; k < fn; k++) at[k] = UINT32_MAX;
    for (uint32_t i = 0; i < f->ncode; i++) {
        if (!(f->code[i].mods & MH_MOD_MARKER)) continue;
        size_t k = marker_at(fmk, fn, f->code[i].text_off);
        if (k < fn) at[k] = i;
    }
    int rc = 0;
    for (size_t k = 0; k < fn && !rc; k++) {
        if (at[k] == UINT32_MAX) {
            rc = err_at(e, m, fmk[k].line, MH_E_PTX_SYNTAX, "marker \"%.*s\" is not between two statements",
                        MK_NAME(m, &fmk[k]));
            break;
        }
        if (*npts == *cap) {
            size_t nc = *cap ? *cap * 2 : 64;
            point *nv = realloc(*pts, nc * sizeof *nv);
            if (!nv) { rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory"); break; }
            *pts = nv;
            *cap = nc;
        }
        (*pts)[(*npts)++] = (point){at[k], PT_BEFORE, fmk[k].kind == MH_MARKER_ROLE ? PT_ROLE : fmk[k].kind == MH_MARKER_END,
                                    ids[k],
                                    fmk[k].eol + (m->text[fmk[k].eol] == '\n'), fmk[k].line,
                                    SEQ_MARKER + (uint32_t)k};
    }
    free(at);
    return rc;
}
