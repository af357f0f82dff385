/* emu_memory.c - emu's device memory: allocations with device-like addresses
 * (each one apart from the next by an unmapped gap), and the checked access of
 * a kernel's loads and stores in every state space (global, shared, local,
 * param, const, and generic addresses into them), naming the nearest
 * allocation when an access falls outside. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include "emu/emu_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <errno.h>
#include <unistd.h>

/* ---- device memory -------------------------------------------------------- */

static void release_host(alloc *al)
{
    if (al->mapped) munmap(al->host, al->mapped);
    else free(al->host);
}

/* The workers a device's launches run SMs on: `asked`, else $MGPU_EMU_THREADS (an integer 1 to
 * MH_EMU_MAX_THREADS), else the machine's cores. */
static int emu_threads_of(uint32_t asked, uint32_t *out, mh_error *e)
{
    if (asked) {
        if (asked > MH_EMU_MAX_THREADS)
            return mh_fail(e, MH_E_BAD_ARGUMENT, "emu: threads = %u: at most %u", asked, MH_EMU_MAX_THREADS);
        *out = asked;
        return 0;
    }
    const char *env = getenv("MGPU_EMU_THREADS");
    if (env && *env) {
        char *end;
        errno = 0;
        long v = strtol(env, &end, 10);
        if (*end || errno || v < 1 || v > MH_EMU_MAX_THREADS)
            return mh_fail(e, MH_E_BAD_ARGUMENT, "emu: MGPU_EMU_THREADS='%.40s': an integer from 1 to %u (the workers "
                           "SMs run on)", env, MH_EMU_MAX_THREADS);
        *out = (uint32_t)v;
        return 0;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    *out = n < 1 ? 1 : n > MH_EMU_MAX_THREADS ? MH_EMU_MAX_THREADS : (uint32_t)n;
    return 0;
}

mh_emu *mh_emu_create(const mh_emu_opts *opts, mh_error *e)
{
    mh_emu *d = calloc(1, sizeof *d);
    if (!d) {
        mh_fail(e, MH_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    char why[1024];
    if (mh_emu_model_make(&d->own_model, opts ? opts->model : NULL, opts ? opts->params : NULL, opts ? opts->nparams : 0,
                          opts ? opts->params_list : NULL, why, sizeof why)) {
        mh_fail(e, MH_E_BAD_ARGUMENT, "emu: %s", why);
        free(d);
        return NULL;
    }
    d->model = &d->own_model;
    d->next_addr = GLOBAL_BASE;
    d->nsm = opts && opts->num_sms ? opts->num_sms : d->model->sms;
    d->max_warp_insns = opts ? opts->max_warp_insns : 0;
    d->strict = opts ? opts->strict : 0;
    if (emu_threads_of(opts ? opts->threads : 0, &d->threads, e)) {
        free(d);
        return NULL;
    }
    d->timer_ns = 1000000000ull; /* 1 s: far from 0, deterministic */
    return d;
}

uint32_t mh_emu_num_sms(const mh_emu *d) { return d->nsm; }

uint32_t mh_emu_threads(const mh_emu *d) { return d->threads; }

const mh_emu_model *mh_emu_model_of(const mh_emu *d) { return d->model; }

void mh_emu_destroy(mh_emu *d)
{
    if (!d) return;
    for (size_t i = 0; i < d->n; i++) release_host(&d->a[i]);
    free(d->a);
    for (size_t i = 0; i < d->npool; i++) free(d->pool[i].p);
    free(d->pool);
    free(d);
}

void *emu_pool_get(mh_emu *d, size_t bytes)
{
    for (size_t i = d->npool; i-- > 0;)
        if (d->pool[i].bytes == bytes) {
            void *p = d->pool[i].p;
            d->pool[i] = d->pool[--d->npool];
            d->pool_bytes -= bytes;
            return p;
        }
    return calloc(1, bytes ? bytes : 1);
}

void emu_pool_put(mh_emu *d, void *p, size_t bytes)
{
    if (!p) return;
    if (d->pool_bytes + bytes > EMU_POOL_MAX) { free(p); return; }
    if (d->npool == d->cap_pool) {
        size_t n = d->cap_pool ? d->cap_pool * 2 : 64;
        void *np = realloc(d->pool, n * sizeof *d->pool);
        if (!np) { free(p); return; }
        d->pool = np;
        d->cap_pool = n;
    }
    d->pool[d->npool].p = p;
    d->pool[d->npool++].bytes = bytes;
    d->pool_bytes += bytes;
}

/* Checks an allocation's size (at most 2^40 bytes) and makes room for its record in d->a. */
static int room_for_alloc(mh_emu *d, uint64_t bytes, mh_error *e)
{
    if (bytes > (1ull << 40)) return mh_fail(e, MH_E_NO_MEMORY, "emu: allocation of %llu bytes refused", (unsigned long long)bytes);
    if (d->n == d->cap) {
        size_t c = d->cap ? d->cap * 2 : 16;
        alloc *na = realloc(d->a, c * sizeof *na);
        if (!na) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
        d->a = na;
        d->cap = c;
    }
    return 0;
}

int mh_emu_alloc(mh_emu *d, uint64_t bytes, uint64_t *addr, mh_error *e)
{
    if (bytes == 0) bytes = 1;
    int rc = room_for_alloc(d, bytes, e);
    if (rc) return rc;
    unsigned char *h = calloc(1, bytes);
    if (!h) return mh_fail(e, MH_E_NO_MEMORY, "emu: out of host memory for %llu bytes", (unsigned long long)bytes);
    emu_huge(h, bytes); /* (a large calloc is a fresh mapping, untouched: the hint still applies) */
    alloc *al = &d->a[d->n++];
    al->addr = d->next_addr;
    al->size = bytes;
    al->host = h;
    al->mapped = 0;
    d->next_addr += (bytes + ALLOC_GAP + 255) & ~255ull;
    *addr = al->addr;
    return 0;
}

int mh_emu_alloc_mapped(mh_emu *d, uint64_t bytes, uint64_t *addr, mh_error *e)
{
    if (bytes == 0) bytes = 1;
    int rc = room_for_alloc(d, bytes, e);
    if (rc) return rc;
    uint64_t len = (bytes + 4095) & ~4095ull, skip = 1ull << 20;
    for (int tries = 0; tries < 40; tries++, skip *= 2) {
        /* the address may be taken (the process's own mappings; AddressSanitizer's shadow ends 2 GiB
         * above GLOBAL_BASE): skip ahead, further each time; addresses only grow, allocations stay sorted */
        uint64_t at = (d->next_addr + 4095) & ~4095ull;
        void *h = mmap((void *)(uintptr_t)at, len, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
        if (h == MAP_FAILED || (uint64_t)(uintptr_t)h != at) {
            if (h != MAP_FAILED) munmap(h, len); /* a kernel without MAP_FIXED_NOREPLACE placed it elsewhere */
            d->next_addr = at + len + ALLOC_GAP + skip;
            continue;
        }
        emu_huge(h, len);
        alloc *al = &d->a[d->n++];
        al->addr = at;
        al->size = bytes;
        al->host = h;
        al->mapped = len;
        d->next_addr = at + len + ALLOC_GAP;
        *addr = at;
        return 0;
    }
    return mh_fail(e, MH_E_NO_MEMORY, "emu: no free host address range for a mapped allocation of %llu bytes",
                   (unsigned long long)bytes);
}

/* Allocation containing [a, a+n), or NULL. Allocations are sorted by address. */
alloc *emu_find_alloc(mh_emu *d, uint64_t a, uint64_t n)
{
    size_t lo = 0, hi = d->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (d->a[mid].addr <= a) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return NULL;
    alloc *al = &d->a[lo - 1];
    return a - al->addr <= al->size && n <= al->size - (a - al->addr) ? al : NULL;
}

int mh_emu_free(mh_emu *d, uint64_t addr, mh_error *e)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->a[i].addr == addr) {
            release_host(&d->a[i]);
            memmove(&d->a[i], &d->a[i + 1], (d->n - i - 1) * sizeof *d->a);
            d->n--;
            return 0;
        }
    return mh_fail(e, MH_E_BAD_ARGUMENT, "emu: 0x%llx is not an allocation", (unsigned long long)addr);
}

static int host_range(mh_emu *d, uint64_t addr, uint64_t bytes, unsigned char **p, mh_error *e)
{
    alloc *al = emu_find_alloc(d, addr, bytes);
    if (!al) return mh_fail(e, MH_E_BAD_ARGUMENT, "emu: [0x%llx, +%llu) is not inside one allocation",
                            (unsigned long long)addr, (unsigned long long)bytes);
    *p = al->host + (addr - al->addr);
    return 0;
}

void *mh_emu_host(mh_emu *d, uint64_t addr, uint64_t bytes, mh_error *e)
{
    unsigned char *p = NULL;
    return host_range(d, addr, bytes, &p, e) ? NULL : p;
}

int mh_emu_write(mh_emu *d, uint64_t addr, const void *src, uint64_t bytes, mh_error *e)
{
    unsigned char *p = NULL;
    if (host_range(d, addr, bytes, &p, e)) return -1;
    memcpy(p, src, bytes);
    return 0;
}

int mh_emu_read(mh_emu *d, uint64_t addr, void *dst, uint64_t bytes, mh_error *e)
{
    unsigned char *p = NULL;
    if (host_range(d, addr, bytes, &p, e)) return -1;
    memcpy(dst, p, bytes);
    return 0;
}

int mh_emu_memset(mh_emu *d, uint64_t addr, int byte, uint64_t bytes, mh_error *e)
{
    unsigned char *p = NULL;
    if (host_range(d, addr, bytes, &p, e)) return -1;
    memset(p, byte, bytes);
    return 0;
}

/* Describes the allocation nearest to an access of `size` bytes at a (for out-of-range messages):
 * one it starts inside and runs past the end of, or the nearest before or after it. */
static void nearest(mh_emu *d, uint64_t a, uint64_t size, char *buf, size_t n)
{
    const alloc *best = NULL;
    uint64_t dist = UINT64_MAX;
    for (size_t i = 0; i < d->n; i++) {
        const alloc *al = &d->a[i];
        uint64_t dd = a < al->addr ? al->addr - a : a >= al->addr + al->size ? a - (al->addr + al->size) + 1 : 0;
        if (dd < dist) { dist = dd; best = al; }
    }
    if (!best) { snprintf(buf, n, "no allocations exist"); return; }
    if (a >= best->addr && a < best->addr + best->size) /* inside, its last bytes past the end */
        snprintf(buf, n, "it starts inside allocation [0x%llx, 0x%llx) of %llu bytes and runs %llu bytes past its end",
                 (unsigned long long)best->addr, (unsigned long long)(best->addr + best->size),
                 (unsigned long long)best->size, (unsigned long long)(a + size - (best->addr + best->size)));
    else if (a < best->addr)
        snprintf(buf, n, "nearest allocation [0x%llx, 0x%llx) of %llu bytes starts %llu bytes after it",
                 (unsigned long long)best->addr, (unsigned long long)(best->addr + best->size),
                 (unsigned long long)best->size, (unsigned long long)(best->addr - a));
    else
        snprintf(buf, n, "nearest allocation [0x%llx, 0x%llx) of %llu bytes ends %llu bytes before it",
                 (unsigned long long)best->addr, (unsigned long long)(best->addr + best->size),
                 (unsigned long long)best->size, (unsigned long long)(a - (best->addr + best->size)));
}

/* ---- memory access ---------------------------------------------------------- */

const char *emu_space_name(int s)
{
    static const char *const n[] = {"generic", "global", "shared", "local", "param", "const"};
    return s >= 0 && s < 6 ? n[s] : "?";
}

/* Host pointer for `size` bytes at `addr` in `space`, or NULL after a fault. */
unsigned char *emu_mem(ctx *c, const warp *w, int lane, int space, uint64_t addr, uint32_t size, int write)
{
    const char *verb = write ? "write" : "read";
    if (size > 1 && (addr & (size - 1)))
        return emu_fault(c, w, lane, "misaligned %s %s of %u bytes at 0x%llx", emu_space_name(space), verb, size,
                     (unsigned long long)addr);
    if (space == MH_SP_GENERIC) {
        if (addr - SHARED_WIN < WIN_SIZE) { space = MH_SP_SHARED; addr -= SHARED_WIN; }
        else if (addr - PARAM_WIN < WIN_SIZE) { space = MH_SP_PARAM; addr -= PARAM_WIN; } /* cvta.param */
        else if (addr - LOCAL_WIN < WIN_SIZE) {
            uint64_t lin = w->index * WARP + (uint64_t)lane;
            space = MH_SP_LOCAL;
            addr -= LOCAL_WIN;
            if (addr / (c->local_stride ? c->local_stride : 1) != lin)
                return emu_fault(c, w, lane, "generic %s at 0x%llx is another thread's local memory", verb,
                             (unsigned long long)(addr + LOCAL_WIN));
            addr %= c->local_stride ? c->local_stride : 1;
        } else space = MH_SP_GLOBAL;
    }
    /* c->writes counts the writes a waiting warp may wait for (shared and local memory; an mbarrier
     * is in shared memory), not global ones: the fast paths do not count those, and which path runs
     * depends on the allocation caches (per worker), so counting them would make the writes, and the
     * moments parked warps look again, depend on the SMs' order on the workers */
    c->writes += (uint64_t)(write && space != MH_SP_GLOBAL);
    switch (space) {
    case MH_SP_GLOBAL: {
        const alloc *al = c->last;
        if (al && addr - al->addr <= al->size && size <= al->size - (addr - al->addr))
            return al->host + (addr - al->addr);
        al = c->last = emu_find_alloc(c->d, addr, size);
        if (al) return al->host + (addr - al->addr);
        char nb[200];
        nearest(c->d, addr, size, nb, sizeof nb);
        return emu_fault(c, w, lane, "out-of-range global %s of %u bytes at 0x%llx: %s", verb, size,
                     (unsigned long long)addr, nb);
    }
    case MH_SP_SHARED:
        if (addr >= EMU_DSMEM_RANK) return emu_dsmem(c, w, lane, addr, size, write, NULL); /* another block's (mapa) */
        if (addr < c->shared_size && size <= c->shared_size - addr) return c->shared + addr;
        return emu_fault(c, w, lane, "out-of-range shared %s of %u bytes at offset 0x%llx: the block has %llu bytes of "
                     "shared memory (static + dynamic)", verb, size, (unsigned long long)addr,
                     (unsigned long long)c->shared_size);
    case MH_SP_LOCAL: {
        uint64_t lin = w->index * WARP + (uint64_t)lane;
        if (addr < c->local_stride && size <= c->local_stride - addr) return c->local + lin * c->local_stride + addr;
        return emu_fault(c, w, lane, "out-of-range local %s of %u bytes at offset 0x%llx (%llu bytes per thread)", verb,
                     size, (unsigned long long)addr, (unsigned long long)c->local_stride);
    }
    case MH_SP_PARAM:
        if (!write && addr < c->f->param_bytes && size <= c->f->param_bytes - addr) return c->params + addr;
        return emu_fault(c, w, lane, "param %s of %u bytes at offset %llu outside the %u parameter bytes", verb, size,
                     (unsigned long long)addr, c->f->param_bytes);
    case MH_SP_CONST:
        if (!write && addr < c->data_size && size <= c->data_size - addr) return c->data_host + addr;
        return emu_fault(c, w, lane, "const %s of %u bytes at offset %llu outside the module's constants", verb, size,
                     (unsigned long long)addr);
    default:
        return emu_fault(c, w, lane, "access to an unknown state space");
    }
}



/* Asks the kernel for 2 MiB pages over [p, p + bytes) (the whole 2 MiB pages inside it), for
 * buffers of several MiB that emu reads at random (device memory, the cache model's tags): each
 * access would otherwise miss the CPU's TLB as well as its cache.  A hint: no effect where
 * transparent huge pages are off. */
void emu_huge(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    uintptr_t lo = ((uintptr_t)p + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1), hi = ((uintptr_t)p + bytes) & ~(uintptr_t)((2u << 20) - 1);
    if (bytes >= (4u << 20) && hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

/* Local memory is sized for every thread of a slot but most kernels touch little of it: an
 * anonymous mapping without reserve, so a kernel's 512 KiB .local a thread costs only the
 * pages its threads write. */
unsigned char *emu_local_alloc(uint64_t bytes)
{
    void *p = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void emu_local_free(unsigned char *p, uint64_t bytes)
{
    if (p) munmap(p, (size_t)bytes);
}
