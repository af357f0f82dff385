/* emu_regions.c - regions no one records (issue 34): in an instrumented kernel only one thread of
 * each trace writes it (the lowest of its warp or warpgroup: the instrumentation's %__mgpu_p0), so
 * a region that only other threads enter (`if (t % 32 == 5) { MGPU_BEGIN("lane5"); ... }`, a TMA
 * producer in warp 1 of a warpgroup) leaves nothing in the trace.  emu sees each "begin" marker
 * run and whether a writing thread was among the lanes that ran it; after the launch, each begin
 * marker that ran and never with a writer is a warning naming the region and its .cu line; so is
 * each "role" marker (a role only such threads took labels no lane).
 * Only for instrumented modules (emu_regions_start finds no %__mgpu_p0 otherwise): markers of a
 * plain module cost what they did. */
#include "emu/emu_internal.h"
#include "frontend/ptx_source.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

struct emu_regions {
    uint32_t *p0;           /* per function: its %__mgpu_p0 (the kernel's numbering), UINT32_MAX: none */
    uint64_t (*runs)[2];    /* per pc: times a begin marker ran with a writer, without one */
};

int emu_regions_start(ctx *c)
{
    const mh_ptx_module *m = c->m;
    int any = 0;
    for (uint32_t r = c->reg_lo; r < c->reg_lo + c->nregs && r < m->nregs && !any; r++)
        any = !strcmp(m->reg_name[r], "%__mgpu_p0");
    if (!any) return 0;
    struct emu_regions *g = calloc(1, sizeof *g);
    if (!g) return -1;
    g->p0 = malloc((m->nfuncs ? m->nfuncs : 1) * sizeof *g->p0);
    g->runs = calloc(c->ncode ? c->ncode : 1, sizeof *g->runs);
    if (!g->p0 || !g->runs) {
        free(g->p0);
        free(g->runs);
        free(g);
        return -1;
    }
    /* each function's p0 as emu's code names it (registers may be packed into shared rows by live
     * range, emu_regpack.c): the guard of the instrumentation's first "@%__mgpu_p0" instruction */
    for (uint32_t fi = 0; fi < m->nfuncs; fi++) g->p0[fi] = UINT32_MAX;
    for (uint32_t pc = 0; pc < c->ncode; pc++) {
        const mh_ptx_insn *in = &c->code[pc];
        uint32_t fi = c->insn_func[pc];
        if (g->p0[fi] != UINT32_MAX || in->guard < 0 || in->guard_neg || in->text_end <= in->text_off) continue;
        const char *t = m->text + in->text_off;
        if (!strncmp(t, "@%__mgpu_p0", 11) && !(isalnum((unsigned char)t[11]) || t[11] == '_'))
            g->p0[fi] = (uint32_t)in->guard;
    }
    c->regions = g;
    return 0;
}

void emu_regions_free(ctx *c)
{
    if (!c->regions) return;
    free(c->regions->p0);
    free(c->regions->runs);
    free(c->regions);
    c->regions = NULL;
}

/* The marker comment of `in` is "// @mgpu begin NAME" or "// @mgpu role NAME" (*role 1): NAME's bytes,
 * else NULL. */
static const char *begin_name(const ctx *c, const mh_ptx_insn *in, int *len, int *role)
{
    const char *t = c->m->text;
    if (!t || !in->text_off) return NULL;
    const char *p = t + in->text_off;
    if (strncmp(p, "//", 2)) return NULL;
    p += 2;
    while (*p == ' ' || *p == '\t') p++;
    if (strncmp(p, "@mgpu", 5)) return NULL;
    p += 5;
    while (*p == ' ' || *p == '\t') p++;
    *role = !strncmp(p, "role", 4) && (p[4] == ' ' || p[4] == '\t');
    if (!*role && (strncmp(p, "begin", 5) || (p[5] != ' ' && p[5] != '\t'))) return NULL;
    p += *role ? 4 : 5;
    while (*p == ' ' || *p == '\t') p++;
    const char *e = p;
    while (*e && *e != '\n' && *e != '\r') e++;
    while (e > p && (e[-1] == ' ' || e[-1] == '\t')) e--;
    *len = (int)(e - p);
    return p;
}

void emu_regions_marker(ctx *c, const warp *w, const mh_ptx_insn *in, uint32_t mask)
{
    uint32_t pc = (uint32_t)(in - c->code), p0 = c->regions->p0[c->insn_func[pc]];
    if (p0 == UINT32_MAX) return;
    int writer = 0;
    for (int l = 0; l < WARP && !writer; l++) writer = (mask >> l & 1) && REG(w, p0, l) != 0;
    __atomic_fetch_add(&c->regions->runs[pc][writer ? 0 : 1], 1, __ATOMIC_RELAXED); /* SMs on workers (emu_workers.c) */
}

void emu_regions_warn(ctx *c)
{
    if (!c->regions) return;
    for (uint32_t pc = 0; pc < c->ncode; pc++) {
        const uint64_t *r = c->regions->runs[pc];
        int len, role = 0;
        const char *name;
        if (r[0] || !r[1] || !(name = begin_name(c, &c->code[pc], &len, &role))) continue;
        char where[1000], line[1400];
        mh_ptx_where(c->m, c->code[pc].text_off, c->code[pc].line, where, sizeof where);
        int k = role ? snprintf(line, sizeof line, "%s: %s: role %.*s was taken %llu times, only by threads that do not "
                                "write the trace (the lowest thread of each warp or warpgroup writes it): no lane is "
                                "labelled with it\n", where, c->f->name, len < 200 ? len : 200, name,
                                (unsigned long long)r[1]) : snprintf(line, sizeof line, "%s: %s: region %.*s was entered %llu times, only by threads that do not "
                         "write the trace (the lowest thread of each warp or warpgroup writes it): it is not in the "
                         "trace or the summary\n", where, c->f->name, len < 200 ? len : 200, name,
                         (unsigned long long)r[1]);
        if (k > 0) mh_outbuf_add(&c->warn, line, (size_t)k < sizeof line ? (size_t)k : sizeof line - 1);
    }
}
