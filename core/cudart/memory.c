/* memory.c - device, pinned and managed memory and the copies between them.
 * Device memory is emu's; pinned (cudaMallocHost, cudaHostAlloc) and managed
 * (cudaMallocManaged) memory are emu allocations whose host memory lies at
 * their device address, so the host and kernels use the same pointer, as with
 * unified addressing.  Every copy is done when the call returns (the Async
 * forms too: emu's streams are synchronous); a pointer is device memory when
 * it lies inside one of emu's allocations, and a range that runs out of its
 * allocation is cudaErrorInvalidValue naming it.  Also the symbols:
 * cudaMemcpyTo/FromSymbol and cudaGetSymbolAddress/Size. */
#include "cudart/cudart.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *cr_device_host(const void *p, size_t n)
{
    cr_state *s = cr_get();
    mh_error e = {0};
    return s ? mh_emu_host(s->emu, (uint64_t)(uintptr_t)p, n ? n : 1, &e) : NULL;
}

/* The first allocation ending after addr. */
static size_t alloc_pos(cr_state *s, uint64_t addr)
{
    size_t lo = 0, hi = s->nallocs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->allocs[mid].addr + s->allocs[mid].size <= addr) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

cr_alloc *cr_alloc_of(uint64_t addr)
{
    cr_state *s = cr_get();
    if (!s) return NULL;
    size_t i = alloc_pos(s, addr);
    return i < s->nallocs && s->allocs[i].addr <= addr ? &s->allocs[i] : NULL;
}

static int alloc_add(cr_state *s, uint64_t addr, uint64_t size, int kind)
{
    if (s->nallocs == s->cap_allocs) {
        size_t c = s->cap_allocs ? s->cap_allocs * 2 : 64;
        cr_alloc *na = realloc(s->allocs, c * sizeof *na);
        if (!na) return -1;
        s->allocs = na;
        s->cap_allocs = c;
    }
    size_t i = alloc_pos(s, addr);
    memmove(&s->allocs[i + 1], &s->allocs[i], (s->nallocs - i) * sizeof *s->allocs);
    s->allocs[i] = (cr_alloc){addr, size, kind};
    s->nallocs++;
    return 0;
}

static cudaError_t dev_alloc(void **p, size_t n, int kind, const char *call)
{
    cr_state *s = cr_get();
    if (!p) return cr_set(cudaErrorInvalidValue, "%s: the pointer to store the address in is NULL", call);
    if (n == 0) { *p = NULL; return cudaSuccess; }
    uint64_t a = 0;
    mh_error e = {0};
    int rc = kind ? mh_emu_alloc_mapped(s->emu, n, &a, &e) : mh_emu_alloc(s->emu, n, &a, &e);
    if (rc) return cr_set(cudaErrorMemoryAllocation, "%s(%zu bytes): %s", call, n, e.message);
    if (alloc_add(s, a, n, kind ? kind : cudaMemoryTypeDevice)) {
        mh_emu_free(s->emu, a, &e);
        return cr_set(cudaErrorMemoryAllocation, "%s: out of memory", call);
    }
    *p = (void *)(uintptr_t)a;
    return cudaSuccess;
}

static cudaError_t dev_free(void *p, int host, const char *call)
{
    cr_state *s = cr_get();
    if (!p) return cudaSuccess;
    cr_alloc *h = cr_alloc_of((uint64_t)(uintptr_t)p);
    if (h && h->addr != (uint64_t)(uintptr_t)p) h = NULL;
    if (host && (!h || h->kind != cudaMemoryTypeHost))
        return cr_set(cudaErrorInvalidValue, "%s(%p): not memory of cudaMallocHost/cudaHostAlloc", call, p);
    if (!host && h && h->kind == cudaMemoryTypeHost)
        return cr_set(cudaErrorInvalidValue, "%s(%p): pinned host memory is freed with cudaFreeHost", call, p);
    mh_error e = {0};
    if (mh_emu_free(s->emu, (uint64_t)(uintptr_t)p, &e))
        return cr_set(host ? cudaErrorInvalidValue : cudaErrorInvalidDevicePointer, "%s(%p): %s", call, p, e.message);
    if (h) {
        size_t i = (size_t)(h - s->allocs);
        memmove(&s->allocs[i], &s->allocs[i + 1], (s->nallocs - i - 1) * sizeof *s->allocs);
        s->nallocs--;
    }
    return cudaSuccess;
}

CR_EXPORT cudaError_t cudaMalloc(void **p, size_t n);
cudaError_t cudaMalloc(void **p, size_t n) { CR_API(dev_alloc(p, n, 0, "cudaMalloc")); }
CR_EXPORT cudaError_t cudaMallocManaged(void **p, size_t n, unsigned flags);
cudaError_t cudaMallocManaged(void **p, size_t n, unsigned flags)
{
    (void)flags;
    CR_API(dev_alloc(p, n, cudaMemoryTypeManaged, "cudaMallocManaged"));
}
CR_EXPORT cudaError_t cudaMallocHost(void **p, size_t n);
cudaError_t cudaMallocHost(void **p, size_t n) { CR_API(dev_alloc(p, n, cudaMemoryTypeHost, "cudaMallocHost")); }
CR_EXPORT cudaError_t cudaHostAlloc(void **p, size_t n, unsigned flags);
cudaError_t cudaHostAlloc(void **p, size_t n, unsigned flags)
{
    (void)flags; /* portable, mapped, write-combined: all the same here */
    CR_API(dev_alloc(p, n, cudaMemoryTypeHost, "cudaHostAlloc"));
}
CR_EXPORT cudaError_t cudaFree(void *p);
cudaError_t cudaFree(void *p) { CR_API(dev_free(p, 0, "cudaFree")); }
CR_EXPORT cudaError_t cudaFreeHost(void *p);
cudaError_t cudaFreeHost(void *p) { CR_API(dev_free(p, 1, "cudaFreeHost")); }

static cudaError_t host_device_pointer(void **out, void *p)
{
    cr_alloc *h = cr_alloc_of((uint64_t)(uintptr_t)p);
    if (!out || !h || h->kind == cudaMemoryTypeDevice) return cr_set(cudaErrorInvalidValue, "cudaHostGetDevicePointer(%p): not pinned "
                                                  "memory of cudaHostAlloc/cudaMallocHost", p);
    *out = p;
    return cudaSuccess;
}
CR_EXPORT cudaError_t cudaHostGetDevicePointer(void **out, void *p, unsigned flags);
cudaError_t cudaHostGetDevicePointer(void **out, void *p, unsigned flags)
{
    (void)flags;
    CR_API(host_device_pointer(out, p));
}

/* The host address of one side of a copy: device memory (which must hold the n bytes), else the
 * host's own pointer. need_dev: the direction says it is device memory. */
static cudaError_t side(const void *p, size_t n, int need_dev, const char *what, const char *call, void **out)
{
    cr_state *s = cr_get();
    if (!p) return cr_set(cudaErrorInvalidValue, "%s: %s is NULL", call, what);
    mh_error e = {0};
    void *h = mh_emu_host(s->emu, (uint64_t)(uintptr_t)p, n ? n : 1, &e);
    if (h) { *out = h; return cudaSuccess; }
    if (need_dev) return cr_set(cudaErrorInvalidValue, "%s: %s %p is not %zu bytes of device memory: %s", call, what,
                                p, n, e.message);
    *out = (void *)p;
    return cudaSuccess;
}

static cudaError_t copy(void *dst, const void *src, size_t n, int kind, const char *call)
{
    if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
        return cr_set(cudaErrorInvalidMemcpyDirection, "%s: %d is not a cudaMemcpyKind", call, kind);
    if (n == 0) return cudaSuccess;
    void *d, *s;
    cudaError_t err = side(dst, n, kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice, "dst", call, &d);
    if (!err) err = side(src, n, kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice, "src", call, &s);
    if (err) return err;
    memmove(d, s, n);
    return cudaSuccess;
}

CR_EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, int kind);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, int kind) { CR_API(copy(dst, src, n, kind, "cudaMemcpy")); }
CR_EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, int kind, cudaStream_t st);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, int kind, cudaStream_t st)
{
    CR_API(cr_stream_ok(st) ? copy(dst, src, n, kind, "cudaMemcpyAsync")
                            : cr_set(cudaErrorInvalidResourceHandle, "cudaMemcpyAsync: %p is not a stream", (void *)st));
}

static cudaError_t copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                           int kind, const char *call)
{
    if (width > dpitch || width > spitch)
        return cr_set(12 /* cudaErrorInvalidPitchValue */, "%s: width %zu is more than a pitch (%zu, %zu)", call,
                      width, dpitch, spitch);
    for (size_t r = 0; r < height; r++) {
        cudaError_t err = copy((char *)dst + r * dpitch, (const char *)src + r * spitch, width, kind, call);
        if (err) return err;
    }
    return cudaSuccess;
}
CR_EXPORT cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                   size_t height, int kind);
cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                         int kind)
{
    CR_API(copy_2d(dst, dpitch, src, spitch, width, height, kind, "cudaMemcpy2D"));
}
CR_EXPORT cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                        size_t height, int kind, cudaStream_t st);
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                              int kind, cudaStream_t st)
{
    (void)st;
    CR_API(copy_2d(dst, dpitch, src, spitch, width, height, kind, "cudaMemcpy2DAsync"));
}

cudaError_t cr_memset(void *p, uint32_t v, size_t n, int size, const char *call)
{
    if (n == 0) return cudaSuccess;
    if (n > SIZE_MAX / (size_t)size) return cr_set(cudaErrorInvalidValue, "%s: %zu elements of %d bytes", call, n, size);
    if ((uintptr_t)p % (uintptr_t)size)
        return cr_set(cudaErrorInvalidValue, "%s: %p is not aligned to %d bytes", call, p, size);
    unsigned char *h;
    cudaError_t err = side(p, n * (size_t)size, 1, "devPtr", call, (void **)&h);
    if (err) return err;
    if (size == 1) memset(h, (int)v, n);
    for (size_t i = 0; size == 2 && i < n; i++) { uint16_t x = (uint16_t)v; memcpy(h + 2 * i, &x, 2); }
    for (size_t i = 0; size == 4 && i < n; i++) memcpy(h + 4 * i, &v, 4);
    return cudaSuccess;
}
static cudaError_t set(void *p, int v, size_t n, const char *call) { return cr_memset(p, (uint32_t)v, n, 1, call); }
CR_EXPORT cudaError_t cudaMemset(void *p, int v, size_t n);
cudaError_t cudaMemset(void *p, int v, size_t n) { CR_API(set(p, v, n, "cudaMemset")); }
CR_EXPORT cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t st);
cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t st)
{
    CR_API(cr_stream_ok(st) ? set(p, v, n, "cudaMemsetAsync")
                            : cr_set(cudaErrorInvalidResourceHandle, "cudaMemsetAsync: %p is not a stream", (void *)st));
}

/* ---- symbols ---------------------------------------------------------------- */

static cudaError_t symbol(const void *sym, const char *call, cr_var **vo, unsigned char **host)
{
    cr_var *v = cr_var_of(sym);
    if (!v) return cr_set(cudaErrorInvalidSymbol, "%s: %p is not a __device__, __constant__ or __managed__ variable "
                          "of the program", call, sym);
    if (cr_module_parse(v->mod))
        return cr_set(cudaErrorInvalidSymbol, "%s: variable %s: %s", call, v->name, v->mod->err.message);
    const mh_ptx_module *m = &v->mod->ptxm;
    for (uint32_t i = 0; i < m->nvars; i++)
        if (m->vars[i].func < 0 && !strcmp(m->vars[i].name, v->name) &&
            (m->vars[i].space == MH_SP_GLOBAL || m->vars[i].space == MH_SP_CONST)) {
            *vo = v;
            *host = (unsigned char *)(uintptr_t)(v->mod->data_addr + m->vars[i].offset);
            return cudaSuccess;
        }
    return cr_set(cudaErrorInvalidSymbol, "%s: variable %s is not in its module's PTX (%s)", call, v->name,
                  v->mod->arch);
}

static cudaError_t symbol_copy(const void *sym, void *buf, size_t n, size_t off, int kind, int to, const char *call)
{
    cr_var *v;
    unsigned char *h;
    cudaError_t err = symbol(sym, call, &v, &h);
    if (err) return err;
    if (off > v->size || n > v->size - off)
        return cr_set(cudaErrorInvalidValue, "%s: %zu bytes at offset %zu of %s, which has %zu", call, n, off, v->name,
                      v->size);
    if (kind == cudaMemcpyDeviceToDevice || kind == cudaMemcpyDefault) {
        void *o;
        if ((err = side(buf, n, kind == cudaMemcpyDeviceToDevice, to ? "src" : "dst", call, &o))) return err;
        buf = o;
    } else if (kind != (to ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost))
        return cr_set(cudaErrorInvalidMemcpyDirection, "%s: kind %d", call, kind);
    if (!buf && n) return cr_set(cudaErrorInvalidValue, "%s: the buffer is NULL", call);
    if (to) memmove(h + off, buf, n);
    else memmove(buf, h + off, n);
    return cudaSuccess;
}

CR_EXPORT cudaError_t cudaMemcpyToSymbol(const void *sym, const void *src, size_t n, size_t off, int kind);
cudaError_t cudaMemcpyToSymbol(const void *sym, const void *src, size_t n, size_t off, int kind)
{
    CR_API(symbol_copy(sym, (void *)src, n, off, kind, 1, "cudaMemcpyToSymbol"));
}
CR_EXPORT cudaError_t cudaMemcpyFromSymbol(void *dst, const void *sym, size_t n, size_t off, int kind);
cudaError_t cudaMemcpyFromSymbol(void *dst, const void *sym, size_t n, size_t off, int kind)
{
    CR_API(symbol_copy(sym, dst, n, off, kind, 0, "cudaMemcpyFromSymbol"));
}
CR_EXPORT cudaError_t cudaMemcpyToSymbolAsync(const void *sym, const void *src, size_t n, size_t off, int kind,
                                              cudaStream_t st);
cudaError_t cudaMemcpyToSymbolAsync(const void *sym, const void *src, size_t n, size_t off, int kind, cudaStream_t st)
{
    (void)st;
    CR_API(symbol_copy(sym, (void *)src, n, off, kind, 1, "cudaMemcpyToSymbolAsync"));
}
CR_EXPORT cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *sym, size_t n, size_t off, int kind,
                                                cudaStream_t st);
cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *sym, size_t n, size_t off, int kind, cudaStream_t st)
{
    (void)st;
    CR_API(symbol_copy(sym, dst, n, off, kind, 0, "cudaMemcpyFromSymbolAsync"));
}

static cudaError_t symbol_address(void **out, size_t *size, const void *sym, const char *call)
{
    cr_var *v;
    unsigned char *h;
    cudaError_t err = symbol(sym, call, &v, &h);
    if (err) return err;
    if (out) *out = h;
    if (size) *size = v->size;
    return cudaSuccess;
}
CR_EXPORT cudaError_t cudaGetSymbolAddress(void **out, const void *sym);
cudaError_t cudaGetSymbolAddress(void **out, const void *sym)
{
    CR_API(symbol_address(out, NULL, sym, "cudaGetSymbolAddress"));
}
CR_EXPORT cudaError_t cudaGetSymbolSize(size_t *size, const void *sym);
cudaError_t cudaGetSymbolSize(size_t *size, const void *sym) { CR_API(symbol_address(NULL, size, sym, "cudaGetSymbolSize")); }

/* ---- queries and hints -------------------------------------------------------- */

static cudaError_t pointer_attributes(cr_pointer_attributes *a, const void *p)
{
    if (!a) return cr_set(cudaErrorInvalidValue, "cudaPointerGetAttributes: attributes is NULL");
    memset(a, 0, sizeof *a);
    cr_alloc *h = cr_alloc_of((uint64_t)(uintptr_t)p);
    if (h && h->kind != cudaMemoryTypeDevice) {
        a->type = h->kind;
        a->devicePointer = a->hostPointer = (void *)p;
    } else if (cr_device_host(p, 1)) {
        a->type = cudaMemoryTypeDevice;
        a->devicePointer = (void *)p;
    } else {
        a->type = cudaMemoryTypeUnregistered;
        a->device = -2;
        a->hostPointer = (void *)p;
    }
    return cudaSuccess;
}
CR_EXPORT cudaError_t cudaPointerGetAttributes(cr_pointer_attributes *a, const void *p);
cudaError_t cudaPointerGetAttributes(cr_pointer_attributes *a, const void *p) { CR_API(pointer_attributes(a, p)); }

static cudaError_t mem_info(size_t *free_b, size_t *total)
{
    if (free_b) *free_b = (size_t)80 << 30;
    if (total) *total = (size_t)80 << 30;
    return cudaSuccess;
}
CR_EXPORT cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total);
cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total) { CR_API(mem_info(free_b, total)); }

/* Managed memory is where both sides see it already: prefetches and advice change nothing. */
CR_EXPORT cudaError_t cudaMemPrefetchAsync(void);
cudaError_t cudaMemPrefetchAsync(void) { CR_API(cudaSuccess); }
CR_EXPORT cudaError_t cudaMemAdvise(void);
cudaError_t cudaMemAdvise(void) { CR_API(cudaSuccess); }
/* Registered host memory serves copies (any host pointer does); a kernel that reads it faults on emu. */
CR_EXPORT cudaError_t cudaHostRegister(void);
cudaError_t cudaHostRegister(void) { CR_API(cudaSuccess); }
CR_EXPORT cudaError_t cudaHostUnregister(void);
cudaError_t cudaHostUnregister(void) { CR_API(cudaSuccess); }

/* Stream-ordered allocation: done at once, as everything here. */
CR_EXPORT cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t st);
cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t st)
{
    CR_API(cr_stream_ok(st) ? dev_alloc(p, n, 0, "cudaMallocAsync")
                            : cr_set(cudaErrorInvalidResourceHandle, "cudaMallocAsync: %p is not a stream", (void *)st));
}
CR_EXPORT cudaError_t cudaFreeAsync(void *p, cudaStream_t st);
cudaError_t cudaFreeAsync(void *p, cudaStream_t st)
{
    CR_API(cr_stream_ok(st) ? dev_free(p, 0, "cudaFreeAsync")
                            : cr_set(cudaErrorInvalidResourceHandle, "cudaFreeAsync: %p is not a stream", (void *)st));
}
static cudaError_t malloc_pitch(void **p, size_t *pitch, size_t width, size_t height)
{
    if (!pitch) return cr_set(cudaErrorInvalidValue, "cudaMallocPitch: pitch is NULL");
    *pitch = (width + 511) / 512 * 512;
    return dev_alloc(p, *pitch * height, 0, "cudaMallocPitch");
}
CR_EXPORT cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t width, size_t height);
cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t width, size_t height)
{
    CR_API(malloc_pitch(p, pitch, width, height));
}
CR_ALIAS(cudaFreeAsync_ptsz, cudaFreeAsync)
CR_ALIAS(cudaMallocAsync_ptsz, cudaMallocAsync)
CR_ALIAS(cudaMemPrefetchAsync_ptsz, cudaMemPrefetchAsync)
CR_ALIAS(cudaMemcpy_ptds, cudaMemcpy)
CR_ALIAS(cudaMemcpy2D_ptds, cudaMemcpy2D)
CR_ALIAS(cudaMemcpy2DAsync_ptsz, cudaMemcpy2DAsync)
CR_ALIAS(cudaMemcpyAsync_ptsz, cudaMemcpyAsync)
CR_ALIAS(cudaMemcpyFromSymbol_ptds, cudaMemcpyFromSymbol)
CR_ALIAS(cudaMemcpyFromSymbolAsync_ptsz, cudaMemcpyFromSymbolAsync)
CR_ALIAS(cudaMemcpyToSymbol_ptds, cudaMemcpyToSymbol)
CR_ALIAS(cudaMemcpyToSymbolAsync_ptsz, cudaMemcpyToSymbolAsync)
CR_ALIAS(cudaMemset_ptds, cudaMemset)
CR_ALIAS(cudaMemsetAsync_ptsz, cudaMemsetAsync)
