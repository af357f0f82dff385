/* emu_backend.c - the emu executor as a backend (launch/backend.h): memory
 * is host memory (so it has a host address), modules need no build (emu
 * runs the parsed PTX and checks each kernel when it is taken), a launch
 * reports exact instruction counts and virtual cycles (and, asked, exact
 * counters per source line), and tensor maps are emu's own encoding
 * (emu_tma.h).  A module's registers,
 * spills and stack are ptxas's where ptxas is installed (asked once per
 * module, when kernel:info or a launch first needs them): they also size
 * the virtual SM's residency. */
#include "emu/emu_backend.h"
#include "emu/emu.h"
#include "emu/emu_ptxas.h"
#include "emu/emu_tma.h"
#include "launch/launch_shape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A module on emu: the parsed PTX and what ptxas says of it (asked once). */
typedef struct emu_dev emu_dev;

typedef struct emu_module {
    emu_dev *dev;
    const mh_ptx_module *ptx;
    int asked;
    mh_ptxas_info info;
    struct emu_module *prev, *next;
} emu_module;

/* The device: the executor, and its modules (freed with it if the caller did not). */
struct emu_dev {
    mh_emu *emu;
    emu_module *mods;
};

static void mod_unlink(emu_dev *d, emu_module *m)
{
    if (m->prev) m->prev->next = m->next;
    else d->mods = m->next;
    if (m->next) m->next->prev = m->prev;
    mh_ptxas_info_free(&m->info);
    free(m);
}

static const mh_ptxas_info *ptxas_of(emu_module *m)
{
    if (!m->asked) {
        mh_ptxas_info_get(m->ptx->text, strlen(m->ptx->text), m->ptx->target, &m->info);
        m->asked = 1;
    }
    return &m->info;
}

static void emu_close(void *p)
{
    emu_dev *d = p;
    while (d->mods) mod_unlink(d, d->mods);
    mh_emu_destroy(d->emu);
    free(d);
}
#define EMU(p) (((emu_dev *)(p))->emu)
static int emu_alloc(void *d, uint64_t n, uint64_t *a, mh_error *e) { return mh_emu_alloc(EMU(d), n, a, e); }
static int emu_free(void *d, uint64_t a, mh_error *e) { return mh_emu_free(EMU(d), a, e); }
static int emu_write(void *d, uint64_t a, const void *p, uint64_t n, mh_error *e) { return mh_emu_write(EMU(d), a, p, n, e); }
static int emu_read(void *d, uint64_t a, void *p, uint64_t n, mh_error *e) { return mh_emu_read(EMU(d), a, p, n, e); }
static int emu_memset(void *d, uint64_t a, int b, uint64_t n, mh_error *e) { return mh_emu_memset(EMU(d), a, b, n, e); }
static void *emu_host(void *d, uint64_t a, uint64_t n, mh_error *e) { return mh_emu_host(EMU(d), a, n, e); }

/* emu builds nothing; the module object only keeps ptxas's answer */
static int emu_module_load(void *p, const mh_module_source *src, void **mod, mh_error *e)
{
    emu_dev *d = p;
    emu_module *m = calloc(1, sizeof *m);
    if (!m) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    m->dev = d;
    m->ptx = src->ptx;
    m->next = d->mods;
    if (d->mods) d->mods->prev = m;
    d->mods = m;
    *mod = m;
    return 0;
}

static void emu_module_free(void *mod)
{
    emu_module *m = mod;
    mod_unlink(m->dev, m);
}

static int emu_kernel_check(void *d, const mh_ptx_module *m, const mh_ptx_func *f, mh_error *e)
{
    (void)d;
    return mh_emu_check_kernel(m, f, e);
}

/* Registers, spills and stack from ptxas (where it is installed); the PTX's virtual
 * registers are reported as such, never as the registers. */
static int emu_kernel_facts(void *d, void *mod, const mh_ptx_func *f, mh_kernel_facts *out, mh_error *e)
{
    (void)d;
    (void)e;
    out->static_smem = (int)f->shared_bytes;
    out->local_bytes = (int)f->local_bytes;
    out->max_threads = f->maxntid[0] ? (int)(f->maxntid[0] * (f->maxntid[1] ? f->maxntid[1] : 1) *
                                             (f->maxntid[2] ? f->maxntid[2] : 1))
                                     : 1024;
    out->ptx_regs = (int)f->nregs;
    out->regs_unknown = 1;
    out->spill_stores = out->spill_loads = out->stack_bytes = -1;
    if (!mod) {
        snprintf(out->note, sizeof out->note, "registers unknown: the module was not loaded through the device");
        return 0;
    }
    const mh_ptxas_info *pi = ptxas_of(mod);
    const mh_ptxas_kernel *k = pi->ok ? mh_ptxas_find(pi, f->name) : NULL;
    if (!k) {
        snprintf(out->note, sizeof out->note, "registers unknown: %.200s", pi->ok ? "ptxas did not name this kernel" : pi->note);
        return 0;
    }
    out->regs = k->regs;
    out->regs_unknown = 0;
    out->regs_from = "ptxas";
    out->spill_stores = k->spill_stores;
    out->spill_loads = k->spill_loads;
    out->stack_bytes = k->stack;
    snprintf(out->note, sizeof out->note, "ptxas -arch=%s%s", pi->arch,
             k->setmaxnreg_ignored ? "; ptxas ignores the kernel's setmaxnreg (C7507: registers live across them), "
             "so they do nothing" : "");
    return 0;
}

/* A launch: its cluster (launch{cluster=} or the kernel's .reqnctapercluster) runs resident together. */
static int emu_launch(void *d, void *mod, const mh_ptx_module *m, const mh_ptx_func *f, const mh_launch_desc *l,
                      mh_launch_stats *st, mh_error *e)
{
    mh_emu_arg args[MH_LAUNCH_MAX_PARAMS];
    if (l->nparams > MH_LAUNCH_MAX_PARAMS || l->nparams > f->nparams)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "launch %s: %u parameters", f->short_name, l->nparams);
    for (uint32_t i = 0; i < l->nparams; i++) {
        args[i].data = l->params[i];
        args[i].size = f->params[i].size;
    }
    mh_emu_launch el;
    memset(&el, 0, sizeof el);
    memcpy(el.grid, l->grid, sizeof el.grid);
    memcpy(el.block, l->block, sizeof el.block);
    el.dynamic_smem = l->dynamic_smem;
    el.args = args;
    el.nargs = l->nparams;
    el.timeout_s = l->timeout_s;
    mh_emu_extra x = {.stats = l->stats, .cooperative = l->cooperative, .flows = l->flows};
    memcpy(x.cluster, l->cluster, sizeof x.cluster); /* checked against the kernel's directives (emu_cluster.c) */
    if (mod) { /* the SM holds as many blocks as the registers ptxas gives allow */
        const mh_ptxas_info *pi = ptxas_of(mod);
        const mh_ptxas_kernel *k = pi->ok ? mh_ptxas_find(pi, f->name) : NULL;
        if (k) x.regs_per_thread = k->regs;
        if (k) x.setmaxnreg_ignored = k->setmaxnreg_ignored;
    }
    mh_emu_stats es;
    int rc = mh_emu_run_ex(EMU(d), m, f->name, &el, &x, &es, e);
    st->counted = 1;
    st->cycles = es.cycles;
    st->warp_insns = es.warp_insns;
    st->thread_insns = es.thread_insns;
    st->blocks_per_sm = es.blocks_per_sm;
    st->output = es.output;
    st->output_len = es.output_len;
    st->warnings = es.warnings;
    st->warnings_len = es.warnings_len;
    st->counts = es.counts;
    st->flows = es.flows;
    st->nflows = es.nflows;
    st->time_ns = (double)es.cycles / mh_emu_model_of(EMU(d))->clock_ghz; /* virtual: facts.virtual_time says so */
    return rc;
}

static int emu_tensor_map(void *d, const mh_tensor_map_spec *s, unsigned char out[MH_TMAP_BYTES], mh_error *e)
{
    (void)d;
    return mh_emu_tensor_map(s, out, e);
}

static const mh_backend_ops emu_ops = {
    .close = emu_close,
    .alloc = emu_alloc,
    .free = emu_free,
    .write = emu_write,
    .read = emu_read,
    .memset = emu_memset,
    .host = emu_host,
    .module_load = emu_module_load,
    .module_free = emu_module_free,
    .kernel_check = emu_kernel_check,
    .kernel_facts = emu_kernel_facts,
    .launch = emu_launch,
    .tensor_map = emu_tensor_map,
};

static void emu_facts(uint32_t sms, const mh_emu_model *m, mh_device_facts *f)
{
    memset(f, 0, sizeof *f);
    f->backend = "emu";
    snprintf(f->name, sizeof f->name, "emu (CPU PTX executor)");
    f->major = 9;
    f->minor = 0;
    f->sms = sms;
    f->clock_ghz = m->clock_ghz; /* the one clock emu's cycles are converted with */
    f->memory = (uint64_t)1 << 40;
    f->max_smem = MH_SMEM_PER_BLOCK_SM90;
    f->virtual_time = 1;
}

static void emu_probe(const mh_device_opts *o, mh_backend_probe *out)
{
    memset(out, 0, sizeof *out);
    out->available = 1;
    out->devices = 1;
    snprintf(out->detail, sizeof out->detail, "available: CPU executor of PTX (deterministic; its times are virtual, not GPU timings)");
    mh_emu_model m;
    char why[1024];
    if (mh_emu_model_make(&m, o ? o->model : NULL, o ? o->model_params : NULL, o ? o->nmodel_params : 0, NULL, why,
                          sizeof why))
        m = *mh_emu_model_find(NULL); /* (emu_open names what is wrong) */
    emu_facts(o && o->sms ? o->sms : m.sms, &m, &out->facts[0]);
}

static int emu_open(const mh_device_opts *o, mh_device *out, mh_error *e)
{
    mh_emu_opts eo = {0};
    eo.strict = o->strict;
    eo.num_sms = o->sms;
    eo.max_warp_insns = o->max_insns;
    eo.model = o->model;
    eo.params = o->model_params;
    eo.nparams = o->nmodel_params;
    eo.threads = o->threads;
    emu_dev *d = calloc(1, sizeof *d);
    if (!d) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    d->emu = mh_emu_create(&eo, e);
    if (!d->emu) {
        free(d);
        return -1;
    }
    out->ops = &emu_ops;
    out->impl = d;
    emu_facts(mh_emu_num_sms(d->emu), mh_emu_model_of(d->emu), &out->facts);
    out->facts.model = mh_emu_model_of(d->emu);
    return 0;
}

const mh_backend mh_emu_backend = {"emu", emu_probe, emu_open};
