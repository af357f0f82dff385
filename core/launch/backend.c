/* backend.c - the calls through a device's ops table (see backend.h): the
 * one place that checks whether a backend has an operation, and says so
 * when it does not. */
#include "launch/backend.h"

#include <string.h>

void mh_device_close(mh_device *d)
{
    if (d->ops && d->impl) d->ops->close(d->impl);
    d->impl = NULL;
    d->ops = NULL;
}

int mh_device_alloc(mh_device *d, uint64_t bytes, uint64_t *addr, mh_error *e)
{
    return d->ops->alloc(d->impl, bytes, addr, e);
}

int mh_device_free(mh_device *d, uint64_t addr, mh_error *e) { return d->ops->free(d->impl, addr, e); }

int mh_device_write(mh_device *d, uint64_t addr, const void *src, uint64_t bytes, mh_error *e)
{
    return d->ops->write(d->impl, addr, src, bytes, e);
}

int mh_device_read(mh_device *d, uint64_t addr, void *dst, uint64_t bytes, mh_error *e)
{
    return d->ops->read(d->impl, addr, dst, bytes, e);
}

int mh_device_memset(mh_device *d, uint64_t addr, int byte, uint64_t bytes, mh_error *e)
{
    return d->ops->memset(d->impl, addr, byte, bytes, e);
}

void *mh_device_host(mh_device *d, uint64_t addr, uint64_t bytes, mh_error *e)
{
    if (!d->ops->host) {
        mh_fail(e, MH_E_BAD_ARGUMENT, "ptr: %s memory has no host address; read() copies it",
                strcmp(d->facts.backend, "cuda") ? d->facts.backend : "GPU");
        return NULL;
    }
    return d->ops->host(d->impl, addr, bytes, e);
}

unsigned mh_device_generation(const mh_device *d) { return d->ops->generation ? d->ops->generation(d->impl) : 0; }

int mh_device_module_load(mh_device *d, const mh_module_source *src, void **mod, mh_error *e)
{
    *mod = NULL;
    if (src->image && mh_device_takes_images(d, "module", e)) return -1;
    return d->ops->module_load ? d->ops->module_load(d->impl, src, mod, e) : 0;
}

int mh_device_takes_images(mh_device *d, const char *path, mh_error *e)
{
    if (d->ops->loads_images) return 0;
    return mh_fail(e, MH_E_BAD_ARGUMENT, "%s: a cubin/fatbin runs on the cuda backend only; %s runs PTX", path,
                   d->facts.backend);
}

void mh_device_module_free(mh_device *d, void *mod)
{
    if (mod && d->ops->module_free) d->ops->module_free(mod);
}

int mh_device_kernel_check(mh_device *d, const mh_ptx_module *m, const mh_ptx_func *f, mh_error *e)
{
    return d->ops->kernel_check ? d->ops->kernel_check(d->impl, m, f, e) : 0;
}

int mh_device_kernel_facts(mh_device *d, void *mod, const mh_ptx_func *f, mh_kernel_facts *out, mh_error *e)
{
    memset(out, 0, sizeof *out);
    return d->ops->kernel_facts(d->impl, mod, f, out, e);
}

int mh_device_launch(mh_device *d, void *mod, const mh_ptx_module *m, const mh_ptx_func *f, const mh_launch_desc *l,
                     mh_launch_stats *st, mh_error *e)
{
    memset(st, 0, sizeof *st);
    st->time_ns = -1;
    return d->ops->launch(d->impl, mod, m, f, l, st, e);
}

int mh_device_tensor_map(mh_device *d, const mh_tensor_map_spec *s, unsigned char out[MH_TMAP_BYTES], mh_error *e)
{
    if (!d->ops->tensor_map)
        return mh_fail(e, MH_E_PTX_UNSUPPORTED, "tensor maps are for TMA (cp.async.bulk.tensor), which %s does not "
                       "run: the cuda backend encodes them", d->facts.backend);
    return d->ops->tensor_map(d->impl, s, out, e);
}
