/* emu_backend.c - the emu executor as a backend (launch/backend.h): memory
 * is host memory (so it has a host address), modules need no build (emu
 * runs the parsed PTX and checks each kernel when it is taken), a launch
 * reports exact instruction counts and virtual cycles, and there is no TMA. */
#include "emu/emu_backend.h"
#include "emu/emu.h"
#include "launch/launch_shape.h"

#include <stdio.h>
#include <string.h>

static void emu_close(void *d) { mh_emu_destroy(d); }
static int emu_alloc(void *d, uint64_t n, uint64_t *a, mh_error *e) { return mh_emu_alloc(d, n, a, e); }
static int emu_free(void *d, uint64_t a, mh_error *e) { return mh_emu_free(d, a, e); }
static int emu_write(void *d, uint64_t a, const void *p, uint64_t n, mh_error *e) { return mh_emu_write(d, a, p, n, e); }
static int emu_read(void *d, uint64_t a, void *p, uint64_t n, mh_error *e) { return mh_emu_read(d, a, p, n, e); }
static int emu_memset(void *d, uint64_t a, int b, uint64_t n, mh_error *e) { return mh_emu_memset(d, a, b, n, e); }
static void *emu_host(void *d, uint64_t a, uint64_t n, mh_error *e) { return mh_emu_host(d, a, n, e); }

static int emu_kernel_check(void *d, const mh_ptx_module *m, const mh_ptx_func *f, mh_error *e)
{
    (void)d;
    return mh_emu_check_kernel(m, f, e);
}

/* From the PTX: registers are its virtual registers, which say nothing about a GPU's. */
static int emu_kernel_facts(void *d, void *mod, const mh_ptx_func *f, mh_kernel_facts *out, mh_error *e)
{
    (void)d;
    (void)mod;
    (void)e;
    out->regs = (int)f->nregs;
    out->static_smem = (int)f->shared_bytes;
    out->local_bytes = (int)f->local_bytes;
    out->max_threads = f->maxntid[0] ? (int)(f->maxntid[0] * (f->maxntid[1] ? f->maxntid[1] : 1) *
                                             (f->maxntid[2] ? f->maxntid[2] : 1))
                                     : 1024;
    return 0;
}

/* emu has no clusters: it runs the grid as it is (PTX using cluster features is refused). */
static int emu_launch(void *d, void *mod, const mh_ptx_module *m, const mh_ptx_func *f, const mh_launch_desc *l,
                      mh_launch_stats *st, mh_error *e)
{
    (void)mod;
    mh_emu_arg args[MH_LAUNCH_MAX_PARAMS];
    if (l->nparams > MH_LAUNCH_MAX_PARAMS || l->nparams > f->nparams)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "launch %s: %u parameters", f->name, l->nparams);
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
    mh_emu_stats es;
    memset(&es, 0, sizeof es);
    int rc = mh_emu_run(d, m, f->name, &el, &es, e);
    st->counted = 1;
    st->cycles = es.cycles;
    st->warp_insns = es.warp_insns;
    st->thread_insns = es.thread_insns;
    st->time_ns = (double)es.cycles / MH_EMU_CLOCK_GHZ; /* virtual: facts.virtual_time says so */
    return rc;
}

static const mh_backend_ops emu_ops = {
    .close = emu_close,
    .alloc = emu_alloc,
    .free = emu_free,
    .write = emu_write,
    .read = emu_read,
    .memset = emu_memset,
    .host = emu_host,
    .kernel_check = emu_kernel_check,
    .kernel_facts = emu_kernel_facts,
    .launch = emu_launch,
};

static void emu_facts(uint32_t sms, mh_device_facts *f)
{
    memset(f, 0, sizeof *f);
    f->backend = "emu";
    snprintf(f->name, sizeof f->name, "emu (CPU PTX executor)");
    f->major = 9;
    f->minor = 0;
    f->sms = sms;
    f->clock_ghz = MH_EMU_CLOCK_GHZ;
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
    emu_facts(o && o->sms ? o->sms : MH_EMU_DEFAULT_SMS, &out->facts[0]);
}

static int emu_open(const mh_device_opts *o, mh_device *out, mh_error *e)
{
    mh_emu_opts eo = {0};
    eo.strict = o->strict;
    eo.num_sms = o->sms;
    eo.max_warp_insns = o->max_insns;
    mh_emu *d = mh_emu_create(&eo, e);
    if (!d) return -1;
    out->ops = &emu_ops;
    out->impl = d;
    emu_facts(mh_emu_num_sms(d), &out->facts);
    return 0;
}

const mh_backend mh_emu_backend = {"emu", emu_probe, emu_open};
