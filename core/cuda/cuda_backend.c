/* cuda_backend.c - the CUDA driver as a backend (launch/backend.h).  What
 * only cuda needs lives here: a module remembers how it was built, so that
 * after a sticky fault reset the context (the device's generation moved)
 * the next launch JIT-compiles it again, transparently (after an assert: the
 * one fault cuda.c resets the context for); kernel handles are
 * looked up once per JIT of their module and cached.  A device lost to a
 * fault (cuda.h: the process must be relaunched) moves no generation: every
 * call on it is refused by cuda.c with the reason, and nothing is compiled
 * again. */
#include "cuda/cuda_backend.h"
#include "cuda/cuda.h"
#include "launch/args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    mh_cuda *cu;
    mh_cuda_dev *dev;
} cuda_device;

typedef struct {
    const mh_ptx_func *f;
    void *fn;
} cached_kernel;

typedef struct {
    cuda_device *d;
    const mh_ptx_module *ptx;   /* the glue's parsed module: the PTX text, the path, the target */
    char *image;                /* a cubin/fatbin as it was given (NULL: ptx->text) */
    mh_cuda_jit jit;
    mh_cuda_module *cm;
    unsigned gen;               /* the device's generation it was compiled in */
    cached_kernel *kernels;     /* handles of this JIT's kernels */
    size_t nkernels, cap;
} cuda_module;

static void cuda_close(void *p)
{
    cuda_device *d = p;
    if (d->dev) mh_cuda_close(d->dev);
    if (d->cu) mh_cuda_unload(d->cu);
    free(d);
}

static int cuda_alloc(void *p, uint64_t n, uint64_t *a, mh_error *e) { return mh_cuda_alloc(((cuda_device *)p)->dev, n, a, e); }
static int cuda_free(void *p, uint64_t a, mh_error *e) { return mh_cuda_free(((cuda_device *)p)->dev, a, e); }
static int cuda_write(void *p, uint64_t a, const void *s, uint64_t n, mh_error *e)
{
    return mh_cuda_write(((cuda_device *)p)->dev, a, s, n, e);
}
static int cuda_read(void *p, uint64_t a, void *s, uint64_t n, mh_error *e)
{
    return mh_cuda_read(((cuda_device *)p)->dev, a, s, n, e);
}
static int cuda_memset(void *p, uint64_t a, int b, uint64_t n, mh_error *e)
{
    return mh_cuda_memset(((cuda_device *)p)->dev, a, b, n, e);
}
static unsigned cuda_generation(const void *p) { return mh_cuda_generation(((const cuda_device *)p)->dev); }

/* (Re)compiles the module for the device's current context; old handles are dropped. */
static int module_jit(cuda_module *m, mh_error *e)
{
    if (m->cm) mh_cuda_unload_module(m->cm);
    m->cm = NULL;
    m->nkernels = 0;
    m->jit.target = m->image ? NULL : m->ptx->target;
    int rc = mh_cuda_load_ptx(m->d->dev, m->image ? m->image : m->ptx->text, m->ptx->path, &m->jit, &m->cm, NULL, e);
    m->gen = mh_cuda_generation(m->d->dev);
    return rc;
}

static void cuda_module_free(void *p)
{
    cuda_module *m = p;
    if (m->cm) mh_cuda_unload_module(m->cm);
    free(m->image);
    free(m->kernels);
    free(m);
}

static int cuda_module_load(void *p, const mh_module_source *src, void **out, mh_error *e)
{
    cuda_module *m = calloc(1, sizeof *m);
    if (!m) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    m->d = p;
    m->ptx = src->ptx;
    m->jit.opt_level = src->opt_level;
    m->jit.max_regs = src->max_regs;
    if (src->image) { /* kept for a reload after a fault */
        m->image = malloc(src->image_len + 1);
        if (!m->image) {
            free(m);
            return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
        }
        memcpy(m->image, src->image, src->image_len);
        m->image[src->image_len] = 0;
    }
    if (module_jit(m, e)) {
        cuda_module_free(m);
        return -1;
    }
    *out = m;
    return 0;
}

/* The module ready in the current context, and kernel f's handle (looked up once per JIT). */
static int kernel_handle(cuda_module *m, const mh_ptx_func *f, void **fn, mh_error *e)
{
    if (m->gen != mh_cuda_generation(m->d->dev) && module_jit(m, e)) return -1;
    for (size_t i = 0; i < m->nkernels; i++)
        if (m->kernels[i].f == f) {
            *fn = m->kernels[i].fn;
            return 0;
        }
    if (mh_cuda_kernel(m->cm, f->name, fn, NULL, e)) return -1;
    if (m->nkernels == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 4;
        cached_kernel *nk = realloc(m->kernels, cap * sizeof *nk);
        if (!nk) return 0; /* not cached: looked up again next time */
        m->kernels = nk;
        m->cap = cap;
    }
    m->kernels[m->nkernels].f = f;
    m->kernels[m->nkernels++].fn = *fn;
    return 0;
}

/* What the driver compiled. */
static int cuda_kernel_facts(void *p, void *mod, const mh_ptx_func *f, mh_kernel_facts *out, mh_error *e)
{
    (void)p;
    cuda_module *m = mod;
    void *fn;
    mh_cuda_kernel_info ki;
    if (m->gen != mh_cuda_generation(m->d->dev) && module_jit(m, e)) return -1;
    if (mh_cuda_kernel(m->cm, f->name, &fn, &ki, e)) return -1;
    out->regs = ki.regs;
    out->static_smem = ki.static_smem;
    out->local_bytes = ki.local_bytes;
    out->max_threads = ki.max_threads;
    out->jit_target = mh_cuda_module_target(m->cm);
    return 0;
}

static int cuda_launch(void *p, void *mod, const mh_ptx_module *ptx, const mh_ptx_func *f, const mh_launch_desc *l,
                       mh_launch_stats *st, mh_error *e)
{
    (void)ptx;
    cuda_device *d = p;
    void *fn;
    /* the cluster against the kernel's .reqnctapercluster/.explicitcluster/.maxclusterrank, as emu checks
     * it; a kernel's own cluster shape is the driver's to apply when the launch asks for none */
    uint32_t shape[3];
    int clustered;
    if (mh_launch_cluster(f, l->grid, l->cluster, shape, &clustered, e)) return -1;
    if (kernel_handle(mod, f, &fn, e)) return -1;
    void *params[MH_LAUNCH_MAX_PARAMS];
    if (l->nparams > MH_LAUNCH_MAX_PARAMS) return mh_fail(e, MH_E_BAD_ARGUMENT, "launch %s: too many parameters", f->short_name);
    for (uint32_t i = 0; i < l->nparams; i++) params[i] = (void *)l->params[i];
    float ms = 0;
    int rc = mh_cuda_launch_ex(d->dev, fn, f->short_name, l->grid, l->block, l->cluster, l->dynamic_smem, params, l->repeat,
                               l->cooperative, l->timed ? &ms : NULL, e);
    st->time_ns = l->timed ? (double)ms * 1e6 : -1;
    return rc;
}

static int cuda_tensor_map(void *p, const mh_tensor_map_spec *s, unsigned char out[MH_TMAP_BYTES], mh_error *e)
{
    return mh_cuda_tensor_map(((cuda_device *)p)->dev, s, out, e);
}

static const mh_backend_ops cuda_ops = {
    .close = cuda_close,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .write = cuda_write,
    .read = cuda_read,
    .memset = cuda_memset,
    .generation = cuda_generation,
    .module_load = cuda_module_load,
    .module_free = cuda_module_free,
    .loads_images = 1,
    .kernel_facts = cuda_kernel_facts,
    .launch = cuda_launch,
    .tensor_map = cuda_tensor_map,
};

static void facts_of(const mh_cuda_devinfo *in, mh_device_facts *f)
{
    memset(f, 0, sizeof *f);
    f->backend = "cuda";
    snprintf(f->name, sizeof f->name, "%s", in->name);
    f->major = in->major;
    f->minor = in->minor;
    f->sms = in->sms > 0 ? (uint32_t)in->sms : 0;
    f->clock_ghz = in->clock_khz / 1e6; /* nominal, not measured: the calibration measures */
    f->memory = in->memory;
    f->max_smem = in->smem_optin > 0 ? (uint64_t)in->smem_optin : 232448u;
}

static void cuda_probe(const mh_device_opts *o, mh_backend_probe *out)
{
    memset(out, 0, sizeof *out);
    mh_cuda *c = NULL;
    mh_error e;
    mh_error_clear(&e);
    int n = 0, version = 0;
    if (mh_cuda_load(o ? o->driver : NULL, &c, &e) || mh_cuda_device_count(c, &n, &e) ||
        mh_cuda_driver_version(c, &version, &e)) {
        snprintf(out->detail, sizeof out->detail, "%s", e.message);
    } else {
        out->available = 1;
        out->devices = n;
        snprintf(out->detail, sizeof out->detail, "driver %d.%d", version / 1000, version % 1000 / 10);
        for (int i = 0; i < n && i < MH_PROBE_MAX_DEVICES; i++) {
            mh_cuda_devinfo di;
            if (mh_cuda_device_info(c, i, &di, &e)) snprintf(out->device_error[i], sizeof out->device_error[i], "%s", e.message);
            else facts_of(&di, &out->facts[i]);
        }
    }
    if (c) mh_cuda_unload(c);
}

static int cuda_open(const mh_device_opts *o, mh_device *out, mh_error *e)
{
    cuda_device *d = calloc(1, sizeof *d);
    if (!d) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    mh_cuda_devinfo di;
    int rc = mh_cuda_load(o->driver, &d->cu, e);
    if (!rc) rc = mh_cuda_open(d->cu, o->ordinal, &d->dev, e);
    if (!rc) rc = mh_cuda_device_info(d->cu, o->ordinal, &di, e);
    if (rc) {
        cuda_close(d);
        return -1;
    }
    out->ops = &cuda_ops;
    out->impl = d;
    facts_of(&di, &out->facts);
    return 0;
}

const mh_backend mh_cuda_backend = {"cuda", cuda_probe, cuda_open};
