/* trace.c - exec --trace DIR: a launch of a kernel with region markers
 * (// @mgpu begin/end NAME, docs/instrumenting.md), or one the probes of
 * exec --probes reach (MGPU_CUDART_PROBES), runs its instrumented form
 * (the harness's rewrite, per warp) with a trace buffer of
 * MGPU_CUDART_TRACE_EVENTS events per warp (512 by default), and its trace is
 * written as DIR/launch-N.trace.json (Perfetto, the dump's default mode,
 * emu's virtual clock).  The program's results are the plain kernel's: the
 * records only add stores to the trace buffer.  The instrumented module has
 * __device__ data of its own: the program's variables are copied into it
 * before the launch and back after.  A trace that needed more events than it
 * had is cut, and says how many to ask for. */
#include "cudart/cudart.h"

#include "base/out.h"
#include "instrument/instrument.h"
#include "trace/dump.h"
#include "trace/summary.h"
#include "trace/tracebuf.h"

#include <stdlib.h>
#include <string.h>

typedef struct cr_traced {
    cr_module *mod;
    int tried;
    mh_instrumented r;
    mh_ptx_module m;
    uint64_t data_addr, data_size;
    int ok;
} cr_traced;

static cr_traced traced[64];

/* exec --probes: MGPU_CUDART_PROBES as cudart_cli.c writes it (records 0x1e, fields 0x1f) */
static mh_probe *probes;
static uint32_t nprobes;
static int probes_read;

static char *field(char **p, char sep)
{
    char *f = *p, *end = strchr(f, sep);
    if (!end) return NULL;
    *end = 0;
    *p = end + 1;
    return f;
}
static const char *opt_str(char *f) { return f && f[0] == '=' ? f + 1 : NULL; }

static void read_probes(void)
{
    probes_read = 1;
    const char *env = getenv("MGPU_CUDART_PROBES");
    if (!env || !*env) return;
    char *copy = strdup(env), *p = copy;
    for (char *rec; copy && (rec = field(&p, '\x1e'));) {
        char *f[9];
        int k = 0;
        char *q = rec;
        for (; k < 8; k++) if (!(f[k] = field(&q, '\x1f'))) break;
        f[8] = q;
        mh_probe *np = realloc(probes, (nprobes + 1) * sizeof *np);
        if (k < 8 || !np) { cr_say("--probes: MGPU_CUDART_PROBES is malformed"); break; }
        probes = np;
        probes[nprobes++] = (mh_probe){.kind = (mh_probe_kind)atoi(f[0]), .name = opt_str(f[1]), .loop = opt_str(f[2]),
                                       .per_loop = atoi(f[3]), .around = opt_str(f[4]), .from = opt_str(f[5]),
                                       .to = opt_str(f[6]), .from_line = (uint32_t)strtoul(f[7], NULL, 10),
                                       .to_line = (uint32_t)strtoul(f[8], NULL, 10)};
    }
    /* copy stays allocated: the probes point into it */
}

/* PTX with comments, from the objects `mgpu-harness nvcc` links in (nvcc_markers.c) */
static struct { char *text; size_t len; } kept[64];
static size_t nkept;

CR_EXPORT void mgpu_cudart_add_ptx(const char *ptx, unsigned long len);
void mgpu_cudart_add_ptx(const char *ptx, unsigned long len)
{
    if (nkept == 64 || !ptx) return;
    char *t = malloc(len + 1);
    if (!t) return;
    memcpy(t, ptx, len);
    t[len] = 0;
    kept[nkept].text = t;
    kept[nkept++].len = len;
}

/* The kept PTX that defines the module's first entry, with its markers (NULL: none). */
static const char *kept_for(const cr_module *mod, size_t *len)
{
    const mh_ptx_func *f = NULL;
    for (uint32_t i = 0; i < mod->ptxm.nfuncs && !f; i++)
        if (mod->ptxm.funcs[i].is_entry) f = &mod->ptxm.funcs[i];
    if (!f) return NULL;
    char pat[1100];
    snprintf(pat, sizeof pat, ".entry %s(", f->name);
    for (size_t i = 0; i < nkept; i++)
        if (strstr(kept[i].text, pat) && strstr(kept[i].text, "// @mgpu")) {
            *len = kept[i].len;
            return kept[i].text;
        }
    return NULL;
}

static cr_traced *instrumented(cr_module *mod)
{
    cr_traced *t = &traced[mod->index % 64];
    if (t->mod == mod && t->tried) return t->ok ? t : NULL;
    if (t->tried) return NULL; /* another module in the slot: not traced (64 modules are plenty) */
    t->mod = mod;
    t->tried = 1;
    mh_error e = {0};
    if (!probes_read) read_probes();
    mh_ptx_module with_markers, *src = &mod->ptxm;
    memset(&with_markers, 0, sizeof with_markers);
    size_t len = 0;
    const char *text = mod->ptxm.nmarkers ? NULL : kept_for(mod, &len);
    if (!mod->ptxm.nmarkers && !text && !nprobes) return NULL;
    if (text) { /* the fat binary's PTX lost its comments: the copy nvcc kept */
        if (mh_ptx_parse(&with_markers, text, len, mod->ptxm.path, &e)) {
            cr_say("--trace: the kept PTX of fat binary %d: %s", mod->index, e.message);
            return NULL;
        }
        src = &with_markers;
    }
    mh_instrument_opts io = {.scope = MH_SCOPE_WARP, .probes = probes, .nprobes = nprobes};
    int failed = mh_instrument_with(src, &io, &t->r, &e);
    if (src == &with_markers) mh_ptx_free(&with_markers);
    if (failed ||
        mh_ptx_parse(&t->m, t->r.text, t->r.len, mod->ptxm.path, &e)) {
        cr_say("--trace: the module of fat binary %d could not be instrumented: %s", mod->index, e.message);
        return NULL;
    }
    cr_state *s = cr_get();
    t->data_size = mh_emu_module_data_size(&t->m);
    if (t->data_size && mh_emu_alloc(s->emu, t->data_size, &t->data_addr, &e)) {
        cr_say("--trace: %s", e.message);
        return NULL;
    }
    if (t->data_size) { /* the rewrite's own variables start from their initialisers */
        unsigned char *h = mh_emu_host(s->emu, t->data_addr, t->data_size, &e);
        for (uint32_t i = 0; h && i < t->m.nvars; i++) {
            const mh_ptx_var *v = &t->m.vars[i];
            if (v->init && (v->space == MH_SP_GLOBAL || v->space == MH_SP_CONST)) memcpy(h + v->offset, v->init, v->size);
        }
    }
    t->ok = 1;
    return t;
}

/* The program's variables between the plain module's data and the instrumented one's. */
static void sync_vars(cr_traced *t, int to_inst)
{
    cr_state *s = cr_get();
    mh_error e = {0};
    unsigned char *plain = t->mod->data_size ? mh_emu_host(s->emu, t->mod->data_addr, t->mod->data_size, &e) : NULL;
    unsigned char *inst = t->data_size ? mh_emu_host(s->emu, t->data_addr, t->data_size, &e) : NULL;
    if (!plain || !inst) return;
    const mh_ptx_module *pm = &t->mod->ptxm;
    for (uint32_t i = 0; i < pm->nvars; i++) {
        const mh_ptx_var *v = &pm->vars[i];
        if (v->func >= 0 || (v->space != MH_SP_GLOBAL && v->space != MH_SP_CONST)) continue;
        for (uint32_t j = 0; j < t->m.nvars; j++) {
            const mh_ptx_var *w = &t->m.vars[j];
            if (w->func >= 0 || w->space != v->space || w->size != v->size || strcmp(w->name, v->name)) continue;
            if (to_inst) memcpy(inst + w->offset, plain + v->offset, v->size);
            else memcpy(plain + v->offset, inst + w->offset, v->size);
        }
    }
}

static void write_trace(cr_state *s, cr_traced *t, const mh_spec *spec, const uint32_t *words, const uint32_t *calib)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/launch-%llu.trace.json", s->trace_dir, (unsigned long long)s->launches);
    mh_error e = {0};
    mh_tracebuf b;
    mh_summary sum;
    mh_out o;
    mh_dump_stats st;
    mh_dump_opts opts = {.mode = MH_DUMP_DEFAULT, .clock_ghz = mh_emu_model_of(s->emu)->clock_ghz, .calib = calib};
    mh_tracebuf_memory(&b, words, spec->words);
    if (mh_tracebuf_bind(&b, spec, &e) || mh_summary_init(&sum, &t->r.names, &e)) {
        cr_say("--trace: %s", e.message);
        return;
    }
    opts.summary = &sum;
    if (mh_out_open(&o, path, &e)) {
        cr_say("--trace: %s", e.message);
        mh_summary_free(&sum);
        return;
    }
    if (mh_dump(spec, &t->r.names, &b, &opts, &o, &st, &e) || mh_out_commit(&o, &e)) {
        mh_out_abort(&o);
        cr_say("--trace: %s: %s", path, e.message);
    }
    mh_summary_free(&sum);
    uint64_t need = 0;
    for (uint64_t i = 0; i < spec->num_traces; i++)
        if (words[i * spec->entries + 2] + (uint64_t)MH_HEADER_WORDS > need) need = words[i * spec->entries + 2] + 3;
    if (need > spec->entries)
        cr_say("--trace: launch %llu: a warp recorded %llu events, its trace held %llu: the trace is cut "
               "(MGPU_CUDART_TRACE_EVENTS=%llu keeps them all)", (unsigned long long)s->launches,
               (unsigned long long)(need - 3) / 2, (unsigned long long)(spec->entries - 3) / 2,
               (unsigned long long)(need - 3) / 2 + 1);
}

int cr_trace_launch(cr_kernel *k, const mh_emu_launch *el, const mh_emu_extra *x, mh_emu_stats *es, mh_error *e,
                    int *rc)
{
    cr_state *s = cr_get();
    if (!s->trace_dir) return 0;
    cr_traced *t = instrumented(k->mod);
    if (!t || !mh_instrumented_has(&t->r, k->name)) return 0;
    const mh_ptx_func *f = mh_ptx_find(&t->m, k->name);
    if (!f || f->nparams != el->nargs + MH_INSTRUMENT_PARAMS) return 0;
    uint64_t events = 512;
    const char *ev = getenv("MGPU_CUDART_TRACE_EVENTS");
    if (ev && *ev) events = strtoull(ev, NULL, 10);
    mh_spec spec;
    memset(&spec, 0, sizeof spec);
    for (int i = 0; i < 3; i++) {
        spec.grid[i] = el->grid[i];
        spec.block[i] = el->block[i];
    }
    spec.scope = MH_SCOPE_WARP;
    spec.partial = (uint64_t)el->block[0] * el->block[1] * el->block[2] % MH_SCOPE_WARP != 0; /* a last, partial warp */
    spec.entries = mh_instrumented_entries(&t->r, 3 + 2 * events);
    mh_error ve = {0};
    if (mh_spec_validate(&spec, &ve)) {
        cr_say("--trace: launch %llu not traced: %s", (unsigned long long)s->launches, ve.message);
        return 0;
    }
    uint64_t buf = 0, cal = 0;
    if (mh_emu_alloc(s->emu, spec.bytes + t->r.trace_shift + 8, &buf, &ve) ||
        mh_emu_alloc(s->emu, spec.num_traces * MH_CALIB_WORDS * 4, &cal, &ve)) {
        cr_say("--trace: launch %llu not traced: %s", (unsigned long long)s->launches, ve.message);
        if (buf) mh_emu_free(s->emu, buf, &ve);
        return 0;
    }
    mh_emu_arg args[MH_LAUNCH_MAX_PARAMS + MH_INSTRUMENT_PARAMS];
    memcpy(args, el->args, el->nargs * sizeof *args);
    uint64_t trace_ptr = buf + t->r.trace_shift;
    uint32_t entries = (uint32_t)spec.entries;
    args[el->nargs] = (mh_emu_arg){&trace_ptr, 8};
    args[el->nargs + 1] = (mh_emu_arg){&entries, 4};
    args[el->nargs + 2] = (mh_emu_arg){&cal, 8};
    mh_emu_launch il = *el;
    il.args = args;
    il.nargs = el->nargs + MH_INSTRUMENT_PARAMS;
    mh_emu_extra ix = *x;
    ix.data_addr = t->data_addr;
    sync_vars(t, 1);
    *rc = mh_emu_run_ex(s->emu, &t->m, k->name, &il, &ix, es, e);
    sync_vars(t, 0);
    if (!*rc) {
        const uint32_t *words = mh_emu_host(s->emu, trace_ptr, spec.bytes, &ve);
        const uint32_t *calib = mh_emu_host(s->emu, cal, spec.num_traces * MH_CALIB_WORDS * 4, &ve);
        if (words && calib) write_trace(s, t, &spec, words, calib);
    }
    mh_emu_free(s->emu, buf, &ve);
    mh_emu_free(s->emu, cal, &ve);
    return 1;
}
