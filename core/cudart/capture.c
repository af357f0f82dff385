/* capture.c - exec --capture DIR: every launch written down so that
 * `mgpu-harness DIR/launches.lua` replays it (lua/mgpu/capture.lua) and checks
 * it against what the program's own run produced.  Per launch: the kernel
 * (the module's PTX, written once per content of its __device__/__constant__
 * data, which becomes the variables' initialisers), grid, block, cluster,
 * dynamic shared memory, cooperative, each parameter's bytes with the device
 * pointers and tensor maps found inside them (any 8-byte-aligned word that
 * points into one of the program's allocations; any 64-byte-aligned emu
 * tensor map), and every allocation they reach: its bytes before the launch
 * (l<N>-b<J>.in.npy, bytes) and, when the launch changed it, after (.out.npy).
 * Bytes of a struct parameter the host never wrote are zeroed and listed:
 * while capturing, every runtime call paints the free stack below it with a
 * 4-byte pattern, so a struct built after the call keeps the pattern where
 * the program wrote nothing (its padding, members left unset); runs of at
 * least two such bytes count (docs/cudart.md: a heuristic). */
#include "cudart/cudart.h"

#include "emu/emu_tma.h"
#include "launch/args.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const unsigned char PAINT[4] = {0xa5, 0x3c, 0x5a, 0xc3};

/* Paints 64 KiB of the stack below the caller (noinline: its frame is that memory). */
__attribute__((noinline)) static void paint_below(void)
{
    volatile unsigned char buf[64 * 1024];
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = PAINT[(uintptr_t)&buf[i] & 3];
}

void cr_capture_paint(void)
{
    cr_state *s = cr_get();
    if (s && s->capture_dir) paint_below();
}

typedef struct cap_buf {
    uint64_t addr, size;
    unsigned char *before;
} cap_buf;

struct cr_capture_launch {
    cr_kernel *k;
    cr_launch l;
    uint32_t nargs;
    unsigned char *bytes[MH_LAUNCH_MAX_PARAMS];
    uint32_t sizes[MH_LAUNCH_MAX_PARAMS];
    cap_buf *bufs;
    size_t nbufs;
    char *text;                  /* the launch's Lua table, built up */
    size_t len, cap;
    char skip[256];              /* why this launch cannot be replayed ("" : it can) */
    char module_file[64];
};

static char *entries;            /* the launches' Lua tables, written out at the end */
static size_t entries_len, entries_cap;
static unsigned long nwritten;

static void add(char **t, size_t *len, size_t *cap, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void add(char **t, size_t *len, size_t *cap, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(*t ? *t + *len : NULL, *t ? *cap - *len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) return;
        if (*t && *len + (size_t)n < *cap) { *len += (size_t)n; return; }
        size_t c = (*cap ? *cap * 2 : 4096) + (size_t)n;
        char *nt = realloc(*t, c);
        if (!nt) return;
        *t = nt;
        *cap = c;
    }
}
#define CADD(c, ...) add(&(c)->text, &(c)->len, &(c)->cap, __VA_ARGS__)

static void lua_bytes(cr_capture_launch *c, const unsigned char *p, size_t n)
{
    CADD(c, "\"");
    for (size_t i = 0; i < n; i++) CADD(c, "\\x%02x", p[i]);
    CADD(c, "\"");
}

static int write_file(const char *dir, const char *name, const void *head, size_t hn, const void *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) {
        cr_say("cannot write the capture's %s: %s", path, strerror(errno));
        return -1;
    }
    int ok = (!hn || fwrite(head, 1, hn, f) == hn) && (!n || fwrite(p, 1, n, f) == n);
    if (fclose(f) || !ok) {
        cr_say("writing the capture's %s failed", path);
        return -1;
    }
    return 0;
}

static int write_npy(const char *dir, const char *name, const char *dtype, const void *p, size_t n)
{
    size_t esize = (size_t)(dtype[2] - '0');
    if (dtype[3] >= '0' && dtype[3] <= '9') esize = esize * 10 + (size_t)(dtype[3] - '0');
    char head[128];
    int hl = snprintf(head + 10, sizeof head - 10, "{'descr': '%s', 'fortran_order': False, 'shape': (%zu,), }",
                      dtype, n / esize);
    size_t total = 10 + (size_t)hl + 1;
    size_t pad = (64 - total % 64) % 64;
    memset(head + 10 + hl, ' ', pad);
    head[10 + hl + pad] = '\n';
    memcpy(head, "\x93NUMPY\x01\x00", 8);
    uint16_t hlen = (uint16_t)(hl + pad + 1);
    head[8] = (char)(hlen & 0xff);
    head[9] = (char)(hlen >> 8);
    return write_file(dir, name, head, 10 + hlen, p, n);
}

/* The buffer of allocation a (added at its first reference). */
static long buf_of(cr_capture_launch *c, const cr_alloc *a)
{
    for (size_t i = 0; i < c->nbufs; i++)
        if (c->bufs[i].addr == a->addr) return (long)i;
    cap_buf *nb = realloc(c->bufs, (c->nbufs + 1) * sizeof *nb);
    if (!nb) return -1;
    c->bufs = nb;
    cap_buf *b = &c->bufs[c->nbufs];
    b->addr = a->addr;
    b->size = a->size;
    b->before = malloc(a->size ? a->size : 1);
    if (!b->before) return -1;
    memcpy(b->before, cr_device_host((void *)(uintptr_t)a->addr, a->size), a->size);
    return (long)c->nbufs++;
}

/* cuda.h's CUtensorMapDataType as dev:tensor_map's data_type names it */
static const char *tmap_type_name(int t)
{
    static const char *const names[] = {"uint8", "uint16", "uint32", "int32", "uint64", "int64", "float16",
                                        "float32", "float64", "bfloat16", "float32_ftz", "tfloat32", "tfloat32_ftz"};
    return t >= 0 && t < 13 ? names[t] : "uint8";
}

/* The tensor maps, pointers and never-written bytes of parameter i. */
static void scan_param(cr_capture_launch *c, uint32_t i, const mh_ptx_param *p)
{
    unsigned char *b = c->bytes[i];
    uint32_t n = c->sizes[i];
    unsigned char *taken = calloc(1, n + 1); /* bytes of a tensor map: no pointers there */
    if (!taken) return;
    int agg = mh_param_is_aggregate(p);
    CADD(c, "    { bytes = ");
    size_t bytes_at = c->len;
    lua_bytes(c, b, n);
    if (agg) { /* never written: runs of >= 2 painted bytes, zeroed */
        CADD(c, ", unset = {");
        const unsigned char *orig = c->l.args[i];
        for (uint32_t o = 0; o < n;) {
            uint32_t e = o;
            while (e < n && orig[e] == PAINT[((uintptr_t)&orig[e]) & 3]) e++;
            if (e - o >= 2) {
                CADD(c, " {%u, %u},", o, e - o);
                memset(b + o, 0, e - o);
                for (uint32_t z = o; z < e; z++) /* the zeros in the bytes written above */
                    memcpy(c->text + bytes_at + 1 + z * 4, "\\x00", 4);
            }
            o = e > o ? e : o + 1;
        }
        CADD(c, " }");
        CADD(c, ", tmaps = {");
        for (uint32_t o = 0; n >= MH_TMAP_BYTES && o + MH_TMAP_BYTES <= n; o += 64) {
            mh_tensor_map_spec s;
            if (mh_emu_tensor_map_decode(b + o, &s)) continue;
            cr_alloc *a = cr_alloc_of(s.address);
            if (!a) {
                snprintf(c->skip, sizeof c->skip, "parameter %u: a tensor map at byte %u of memory that is no "
                         "allocation", i, o);
                continue;
            }
            long bi = buf_of(c, a);
            if (bi < 0) continue;
            memset(taken + o, 1, MH_TMAP_BYTES);
            CADD(c, " { at = %u, buf = %ld, offset = %llu, data_type = \"%s\", dims = {", o, bi + 1,
                 (unsigned long long)(s.address - a->addr), tmap_type_name(s.data_type));
            for (uint32_t d = 0; d < s.rank; d++) CADD(c, "%llu,", (unsigned long long)s.dims[d]);
            CADD(c, "}, strides = {");
            for (uint32_t d = 0; d + 1 < s.rank; d++) CADD(c, "%llu,", (unsigned long long)s.strides[d]);
            CADD(c, "}, box = {");
            for (uint32_t d = 0; d < s.rank; d++) CADD(c, "%u,", s.box[d]);
            CADD(c, "}, element_strides = {");
            for (uint32_t d = 0; d < s.rank; d++) CADD(c, "%u,", s.elem_strides[d]);
            static const char *const il[] = {"none", "16B", "32B"}, *const sw[] = {"none", "32B", "64B", "128B"},
                                     *const l2[] = {"none", "64B", "128B", "256B"}, *const oob[] = {"zero", "nan"};
            CADD(c, "}, interleave = \"%s\", swizzle = \"%s\", l2 = \"%s\", oob = \"%s\" },", il[s.interleave < 3 ? s.interleave : 0],
                 sw[s.swizzle & 3], l2[s.l2 & 3], oob[s.oob & 1]);
        }
        CADD(c, " }");
    }
    CADD(c, ", ptrs = {");
    for (uint32_t o = 0; o + 8 <= n; o += 8) {
        if (taken[o]) continue;
        uint64_t v;
        memcpy(&v, b + o, 8);
        cr_alloc *a = v ? cr_alloc_of(v) : NULL;
        if (!a) {
            cr_state *s = cr_get();
            for (size_t m = 0; v && s && m < s->nmods; m++)
                if (s->mods[m]->data_size && v >= s->mods[m]->data_addr &&
                    v < s->mods[m]->data_addr + s->mods[m]->data_size)
                    snprintf(c->skip, sizeof c->skip, "parameter %u: a pointer at byte %u to a __device__ variable "
                             "(the replay cannot place arrays there)", i, o);
            continue;
        }
        long bi = buf_of(c, a);
        if (bi >= 0) CADD(c, " { at = %u, buf = %ld, offset = %llu },", o, bi + 1, (unsigned long long)(v - a->addr));
    }
    CADD(c, " } },\n");
    free(taken);
}

/* The module's PTX with its variables' current bytes as initialisers, written once per content. */
static void module_file(cr_capture_launch *c, cr_module *m)
{
    cr_state *s = cr_get();
    static unsigned long versions;
    static struct { cr_module *m; unsigned char *data; char name[64]; } last[64];
    size_t slot = (size_t)m->index % 64;
    const unsigned char *data = (const unsigned char *)(uintptr_t)m->data_addr;
    if (last[slot].m == m && (!m->data_size || !memcmp(last[slot].data, data, m->data_size))) {
        snprintf(c->module_file, sizeof c->module_file, "%s", last[slot].name);
        return;
    }
    char *text = NULL;
    size_t len = 0, cap = 0;
    const char *src = m->ptx;
    /* each module variable's declaration gets its bytes: `.global .align A .b8 NAME[N] = {...};` */
    size_t at = 0;
    while (src[at]) {
        const char *line_end = strchr(src + at, '\n');
        size_t ll = line_end ? (size_t)(line_end - (src + at)) + 1 : strlen(src + at);
        int done = 0;
        for (uint32_t v = 0; m->data_size && v < m->ptxm.nvars && !done; v++) {
            const mh_ptx_var *var = &m->ptxm.vars[v];
            if (var->func >= 0 || !var->size || (var->space != MH_SP_GLOBAL && var->space != MH_SP_CONST)) continue;
            const char *sp = var->space == MH_SP_GLOBAL ? ".global" : ".const";
            const char *hit = strstr(src + at, sp);
            if (!hit || hit >= src + at + ll) continue;
            const char *nm = strstr(hit, var->name);
            size_t nl = strlen(var->name);
            if (!nm || nm >= src + at + ll || (nm[nl] != '[' && nm[nl] != ';' && nm[nl] != ' ' && nm[nl] != '=')) continue;
            if (nm[-1] != ' ' && nm[-1] != '\t') continue;
            const char *semi = strchr(nm, ';');
            if (!semi) continue;
            add(&text, &len, &cap, "%.*s%s .align %u .b8 %s[%llu] = {", (int)(hit - (src + at)), src + at, sp,
                var->align ? var->align : 1, var->name, (unsigned long long)var->size);
            for (uint64_t j = 0; j < var->size; j++) add(&text, &len, &cap, "%s%u", j ? "," : "", data[var->offset + j]);
            add(&text, &len, &cap, "};%s", semi[1] == '\n' ? "" : "\n");
            at = (size_t)(semi + 1 - src);
            done = 1;
        }
        if (!done) {
            add(&text, &len, &cap, "%.*s", (int)ll, src + at);
            at += ll;
        }
    }
    char name[64];
    snprintf(name, sizeof name, "module-%d-%lu.ptx", m->index, ++versions);
    if (text) write_file(s->capture_dir, name, NULL, 0, text, len);
    free(text);
    free(last[slot].data);
    last[slot].m = m;
    last[slot].data = m->data_size ? malloc(m->data_size) : NULL;
    if (last[slot].data) memcpy(last[slot].data, data, m->data_size);
    snprintf(last[slot].name, sizeof last[slot].name, "%s", name);
    snprintf(c->module_file, sizeof c->module_file, "%s", name);
}

cr_capture_launch *cr_capture_before(cr_kernel *k, const cr_launch *l, const mh_emu_arg *args, uint32_t nargs)
{
    cr_state *s = cr_get();
    if (!s || !s->capture_dir) return NULL;
    cr_capture_launch *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->k = k;
    c->l = *l;
    c->nargs = nargs;
    module_file(c, k->mod);
    CADD(c, "  { kernel = \"%s\", module = \"%s\", grid = {%u, %u, %u}, block = {%u, %u, %u}, cluster = {%u, %u, "
         "%u}, smem = %zu, cooperative = %s,\n   params = {\n", k->name, c->module_file, l->grid.x, l->grid.y,
         l->grid.z, l->block.x, l->block.y, l->block.z, l->cluster[0], l->cluster[1], l->cluster[2], l->smem,
         l->cooperative ? "true" : "false");
    for (uint32_t i = 0; i < nargs; i++) {
        c->sizes[i] = args[i].size;
        c->bytes[i] = malloc(args[i].size ? args[i].size : 1);
        if (!c->bytes[i]) continue;
        memcpy(c->bytes[i], args[i].data, args[i].size);
        scan_param(c, i, &k->f->params[i]);
    }
    CADD(c, "   },\n");
    return c;
}

void cr_capture_after(cr_capture_launch *c, int ok)
{
    if (!c) return;
    cr_state *s = cr_get();
    unsigned long n = ++nwritten;
    CADD(c, "   buffers = {\n");
    for (size_t i = 0; i < c->nbufs; i++) {
        cap_buf *b = &c->bufs[i];
        char in[64], out[64];
        snprintf(in, sizeof in, "l%lu-b%zu.in.npy", n, i + 1);
        snprintf(out, sizeof out, "l%lu-b%zu.out.npy", n, i + 1);
        const unsigned char *now = cr_device_host((void *)(uintptr_t)b->addr, b->size);
        int changed = now && memcmp(now, b->before, b->size) != 0;
        write_npy(s->capture_dir, in, "|u1", b->before, b->size);
        if (changed) write_npy(s->capture_dir, out, "|u1", now, b->size);
        CADD(c, "    { size = %llu, input = \"%s\"", (unsigned long long)b->size, in);
        if (changed) CADD(c, ", output = \"%s\"", out);
        CADD(c, " },\n");
        free(b->before);
    }
    CADD(c, "   },\n");
    if (!ok) CADD(c, "   failed = true, -- the launch failed in the program's run\n");
    if (c->skip[0]) CADD(c, "   skip = [[%s]],\n", c->skip);
    CADD(c, "  },\n");
    add(&entries, &entries_len, &entries_cap, "%.*s", (int)c->len, c->text ? c->text : "");
    for (uint32_t i = 0; i < c->nargs; i++) free(c->bytes[i]);
    free(c->bufs);
    free(c->text);
    free(c);
}

void cr_capture_finish(void)
{
    cr_state *s = cr_get();
    if (!s || !s->capture_dir) return;
    char *t = NULL;
    size_t len = 0, cap = 0;
    add(&t, &len, &cap, "-- launches.lua: the launches of a CUDA program, written by `mgpu-harness exec --capture`.\n"
        "-- `mgpu-harness launches.lua [emu|cuda]` replays each on a device (emu by default) from the inputs\n"
        "-- the program gave it and checks every buffer it wrote against the program's run (docs/cudart.md).\n"
        "return require(\"mgpu.capture\").replay(..., {\n dir = (debug.getinfo(1, \"S\").source:match(\"^@(.*)/[^/]*$\") "
        "or \".\"),\n launches = {\n%.*s }\n})\n", (int)entries_len, entries ? entries : "");
    write_file(s->capture_dir, "launches.lua", NULL, 0, t, len);
    free(t);
}
