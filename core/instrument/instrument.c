/* instrument.c - marker rewriting (see instrument.h): mh_instrument_with's steps, one function
 * at a time, over the parts in this folder (rewrite.h): markers.c, probes.c (with cfg.c),
 * flow.c, emit.c, and edits.c, which splices the edits into the original text. */
#include "instrument/rewrite.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether s (at least n bytes) starts the word w at a word boundary of text t. */
static int word_at(const char *t, const char *s, const char *w)
{
    size_t n = strlen(w);
    return !strncmp(s, w, n) && (s == t || isspace((unsigned char)s[-1])) && (s[n] == ' ' || s[n] == '\t');
}

/* The source file and line (from the last .loc before PTX line `line` in its function, and the
 * .file it names) as "FILE:LINE" in buf; 0 when the PTX has none there (issue 24: errors name
 * the .cu line a user edits, not only the cached PTX's). */
static int source_of(const mh_ptx_module *m, uint32_t line, char *buf, size_t len)
{
    const char *t = m->text, *p = t;
    if (!t || !line) return 0;
    for (uint32_t l = 1; l < line && *p; p++) l += *p == '\n';
    const char *loc = NULL;
    for (const char *q = p; q > t; q--) {
        if (word_at(t, q, ".entry") || word_at(t, q, ".func")) break;
        if (word_at(t, q, ".loc")) { loc = q; break; }
    }
    if (!loc) return 0;
    char *end;
    unsigned long file = strtoul(loc + 4, &end, 10), src = strtoul(end, NULL, 10);
    if (!src) return 0;
    for (const char *q = t; (q = strstr(q, ".file")) != NULL; q += 5) {
        if (!word_at(t, q, ".file") || strtoul(q + 5, &end, 10) != file) continue;
        const char *a = strchr(end, '"'), *nl = strchr(end, '\n');
        if (!a || (nl && a > nl)) return 0;
        const char *b = strchr(a + 1, '"');
        if (!b || (nl && b > nl)) return 0;
        snprintf(buf, len, "%.*s:%lu", (int)(b - a - 1 < 300 ? b - a - 1 : 300), a + 1, src);
        return 1;
    }
    return 0;
}

int err_at(mh_error *e, const mh_ptx_module *m, uint32_t line, mh_code code, const char *fmt, ...)
{
    char msg[600], src[340];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    e->line = line;
    if (source_of(m, line, src, sizeof src)) return mh_fail(e, code, "%.340s (PTX %.200s:%u): %s", src, m->path, line, msg);
    return mh_fail(e, code, "%.200s:%u: %s", m->path, line, msg);
}

static int by_place(const void *a, const void *b)
{
    const point *x = a, *y = b;
    if (x->insn != y->insn) return x->insn < y->insn ? -1 : 1;
    if (x->where != y->where) return x->where < y->where ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The added registers, labels and parameters are named __mgpu*: a module
 * that uses such names itself could collide, so it is refused. */
static int check_reserved(const mh_ptx_module *m, mh_error *e)
{
    for (uint32_t i = 0; i < m->nregs; i++)
        if (!strncmp(m->reg_name[i], "%__mgpu", 7) || !strncmp(m->reg_name[i], "__mgpu", 6))
            return mh_fail(e, MH_E_PTX_UNSUPPORTED, "%s: register %s uses the prefix __mgpu, which the instrumentation "
                           "reserves", m->path, m->reg_name[i]);
    for (uint32_t fi = 0; fi < m->nfuncs; fi++)
        for (uint32_t k = 0; k < m->funcs[fi].nparams; k++)
            if (!strncmp(m->funcs[fi].params[k].name, "__mgpu", 6))
                return mh_fail(e, MH_E_PTX_UNSUPPORTED, "%s: parameter %s of %s uses the prefix __mgpu, which the "
                               "instrumentation reserves (is this module instrumented already?)", m->path,
                               m->funcs[fi].params[k].name, m->funcs[fi].name);
    return 0;
}

/* The points of function fi in w->pts: its probes', then its markers' (whose names are interned
 * here, after the probes'), sorted by place and checked along the control flow. */
static int function_points(rewrite *w, uint32_t fi, mh_error *e)
{
    const mh_ptx_module *m = w->m;
    const mh_ptx_func *f = &m->funcs[fi];
    mh_instrumented *out = w->out;
    size_t fn = w->count[fi];
    const mh_ptx_marker *fmk = fn ? m->markers + w->first[fi] : NULL;
    uint32_t *ids = malloc((fn ? fn : 1) * sizeof *ids);
    if (!ids) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    int rc = 0;
    for (size_t i = 0; i < fn && !rc; i++) {
        int role = fmk[i].kind == MH_MARKER_ROLE;
        size_t before = out->names.n;
        rc = intern(&out->names, role ? &w->roles : &w->index, m->text + fmk[i].name_off, fmk[i].name_len, &ids[i], e);
        if (!rc && role && out->names.n > before) out->names.v[out->names.n - 1].role = 1; /* a new role */
        if (rc == MH_E_BAD_META) /* the names table refuses what JSON cannot carry: say where it came from */
            rc = err_at(e, m, fmk[i].line, MH_E_PTX_SYNTAX, "the region name of this marker is not valid UTF-8 "
                        "(trace names are JSON strings)");
    }
    if (!rc) rc = mh_names_finish(&out->names, e);
    w->npts = 0;
    if (!rc && w->fnpts[fi] > w->cap) {
        point *nv = realloc(w->pts, w->fnpts[fi] * sizeof *nv);
        if (!nv) rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory");
        else w->pts = nv, w->cap = w->fnpts[fi];
    }
    if (!rc && w->fnpts[fi]) memcpy(w->pts, w->fpts[fi], w->fnpts[fi] * sizeof *w->pts);
    w->npts = w->fnpts[fi];
    out->probe_points += (uint32_t)w->npts;
    if (!rc) rc = marker_points(m, f, fmk, fn, ids, &w->pts, &w->npts, &w->cap, e);
    free(ids);
    if (!rc && w->npts > 1) qsort(w->pts, w->npts, sizeof *w->pts, by_place);
    if (!rc && f->is_entry && w->npts) {
        /* regions still open where a thread exits end there (issue 24) */
        size_t before = w->npts;
        rc = close_at_exits(m, f, &w->pts, &w->npts, &w->cap, e);
        if (!rc && w->npts > before) qsort(w->pts, w->npts, sizeof *w->pts, by_place);
    }
    if (!rc) rc = check_flow(m, f, w->pts, w->npts, &out->names, !f->is_entry, e);
    out->markers += (uint32_t)fn;
    return rc;
}

/* Instruments function fi when it records events: its points, their code, its name in the
 * list of kernels (an entry) or the count of .funcs. */
static int instrument_function(rewrite *w, uint32_t fi, unsigned scope, mh_error *e)
{
    const mh_ptx_func *f = &w->m->funcs[fi];
    mh_instrumented *out = w->out;
    if (!w->traced[fi] || !f->defined || (!f->is_entry && !w->marked[fi])) return 0;
    int rc = function_points(w, fi, e);
    if (!rc) rc = emit_function(w, f, scope, e);
    if (rc) return rc;
    if (!f->is_entry) {
        out->nfuncs++;
        return 0;
    }
    char **nk = realloc(out->kernels, (out->nkernels + 1) * sizeof *nk);
    if (!nk || !(nk[out->nkernels] = strdup(f->name))) {
        if (nk) out->kernels = nk;
        return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    }
    out->kernels = nk;
    out->nkernels++;
    return 0;
}

static void rewrite_free(rewrite *w)
{
    free(w->pts);
    for (uint32_t fi = 0; w->fpts && fi < w->m->nfuncs; fi++) free(w->fpts[fi]);
    free(w->fpts);
    free(w->fnpts);
    free(w->first);
    free(w->count);
    free(w->marked);
    free(w->traced);
    free(w->index.v);
    free(w->roles.v);
    for (size_t i = 0; i < w->nmade; i++) free(w->made[i]);
    free(w->made);
}

/* The rewrite must be PTX the front end reads (and so, by the ptxas referee of the tests, PTX
 * ptxas takes): one it cannot read is an error, never a module handed on to fail in the JIT or
 * to run wrong (issue 30: trampolines outside the block of their branch's target). */
static int reads_back(const mh_ptx_module *m, const mh_instrumented *out, mh_error *e)
{
    mh_ptx_module again;
    char path[300];
    snprintf(path, sizeof path, "%.200s (instrumented)", m->path);
    if (mh_ptx_parse(&again, out->text, out->len, path, e) == 0) {
        mh_ptx_free(&again);
        return 0;
    }
    char why[sizeof e->message];
    snprintf(why, sizeof why, "%s", e->message);
    e->line = 0; /* (a line of the rewrite, not of the module) */
    return mh_fail(e, MH_E_PTX_UNSUPPORTED, "%s: the instrumentation wrote PTX that does not read back (%.700s): a bug of "
                   "mgpu-harness, please report it with this module; without markers or probes it loads as it is",
                   m->path, why);
}

int mh_instrument(const mh_ptx_module *m, mh_scope scope, mh_instrumented *out, mh_error *e)
{
    mh_instrument_opts o = {.scope = scope};
    return mh_instrument_with(m, &o, out, e);
}

int mh_instrument_with(const mh_ptx_module *m, const mh_instrument_opts *opts, mh_instrumented *out, mh_error *e)
{
    memset(out, 0, sizeof *out);
    mh_names_init(&out->names);
    mh_error_clear(e);
    mh_scope scope = opts->scope;
    if (scope != MH_SCOPE_WARP && scope != MH_SCOPE_WARPGROUP)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "scope must be warp or warpgroup");
    out->aligned = opts->aligned != 0;
    out->trace_shift = out->aligned ? MH_TRACE_SHIFT : 0;
    int rc = check_reserved(m, e);
    if (!rc) rc = check_grammar(m, e);
    if (rc) return rc;

    rewrite w = {.m = m, .out = out};
    rc = marker_owners(&w, e);
    if (!rc) traced_functions(&w);
    if (!rc && w.func_records) emit_globals(&w.E, m);
    /* the probes' points of each entry (before the markers' names: their ids come first) */
    if (!rc) rc = probes_collect(&w, opts, e);
    for (uint32_t fi = 0; fi < m->nfuncs && !rc; fi++) rc = instrument_function(&w, fi, (unsigned)scope, e);
    rewrite_free(&w);

    if (!rc && m->nmarkers && !out->nkernels)
        rc = mh_fail(e, MH_E_PTX_SYNTAX, "%s: markers found but no kernel to instrument", m->path);
    if (!rc && w.E.oom) rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    if (!rc) rc = mh_names_finish(&out->names, e);
    if (!rc) rc = edits_apply(&w.E, m->text, out, e);
    edits_free(&w.E);
    if (!rc) rc = reads_back(m, out, e);
    if (rc) mh_instrumented_free(out);
    return rc;
}

void mh_instrumented_free(mh_instrumented *r)
{
    free(r->text);
    free(r->inserted);
    mh_names_free(&r->names);
    for (uint32_t i = 0; i < r->nkernels; i++) free(r->kernels[i]);
    free(r->kernels);
    memset(r, 0, sizeof *r);
}

int mh_instrumented_has(const mh_instrumented *r, const char *kernel)
{
    for (uint32_t i = 0; i < r->nkernels; i++)
        if (!strcmp(r->kernels[i], kernel)) return 1;
    return 0;
}

uint64_t mh_instrumented_entries(const mh_instrumented *r, uint64_t entries)
{
    return r->aligned && (entries & 1) ? entries + 1 : entries;
}
