/* emu_scoreboard.c - the issue model's register scoreboard: result latency.  A register (a row of
 * the warp's file) written by a pipe's instruction (emu_model.c's pipes: f32 and f16 arithmetic,
 * integer ALU, f64, the special-function unit, conversions, shuffles) is ready for a dependent
 * instruction of the same warp the class's latency after the instruction started on its pipe
 * (emu_model.c's lat); an instruction issues once every row it reads (sources, address and vector
 * operands, the guard predicate, a tensor-core record's inputs) is ready.  Until then its warp
 * waits and its sub-partition issues another warp's instruction, so a dependent chain of f32 FMAs
 * takes 4 cycles an FMA and eight independent chains still one a cycle.  Loads, tensor cores,
 * barriers and atomics keep blocking their warp for their cost (the rows they write are ready when
 * the warp issues again); every write sets its rows' ready cycle, so a row that packing
 * (emu_regpack.c) gives to another register never makes it wait for a value it does not read.
 * There is no wait for a row's earlier write (no write-after-write check): ptxas's fixed-latency
 * schedule orders those, and packing stays invisible in the cycles.
 * The lists are planned once per launch (emu_sb_plan), so an issue reads a few words per operand;
 * they hold only the rows some instruction with a latency writes (a row only loads, moves and the
 * like write is always ready by the time its warp issues again). */
#include "emu/emu_internal.h"

#include <stdlib.h>

/* An instruction's rows as they are collected: writes and reads apart, without repeats, only the
 * tracked ones (those some instruction with a latency writes: the others are always ready). */
typedef struct {
    uint32_t dst[256], src[256];
    uint32_t nd, ns;
    int over; /* more than 256 of either: the instruction is not planned (issues as before) */
    const uint8_t *tracked;
} rows;

static void mark_dst(uint32_t r, int dst, void *arg)
{
    if (dst) ((uint8_t *)arg)[r] = 1;
}

static void add_row(uint32_t r, int dst, void *arg)
{
    rows *x = arg;
    if (!x->tracked[r]) return;
    uint32_t *l = dst ? x->dst : x->src, *n = dst ? &x->nd : &x->ns;
    for (uint32_t i = 0; i < *n; i++)
        if (l[i] == r) return;
    if (*n == 256) {
        x->over = 1;
        return;
    }
    l[(*n)++] = r;
}

int emu_sb_plan(ctx *c)
{
    uint32_t n = c->ncode;
    c->sb = calloc(n + 1, sizeof *c->sb); /* and an empty entry at n (a warp's kpc past the end) */
    if (!c->sb) return -1;
    size_t cap = 4 * (size_t)(n ? n : 1), used = 0;
    c->sb_regs = malloc(cap * sizeof *c->sb_regs);
    rows *x = malloc(sizeof *x);
    uint8_t *tracked = calloc(c->nregs ? c->nregs : 1, 1);
    if (!c->sb_regs || !x || !tracked) {
        free(x);
        free(tracked);
        return -1;
    }
    for (uint32_t pc = 0; pc < n; pc++)
        if (!(c->code[pc].mods & MH_MOD_MARKER) && c->d->model->lat[mh_emu_lat_of(&c->code[pc])])
            (void)emu_insn_regs(c, &c->code[pc], mark_dst, tracked);
    x->tracked = tracked;
    for (uint32_t pc = 0; pc < n; pc++) {
        const mh_ptx_insn *in = &c->code[pc];
        if (in->mods & MH_MOD_MARKER) continue; /* a marker comment: not an instruction */
        x->nd = x->ns = 0;
        x->over = 0;
        if (emu_insn_regs(c, in, add_row, x) || x->over) continue; /* out of range: the fault comes at run time */
        if (used + x->nd + x->ns > cap) {
            while (used + x->nd + x->ns > cap) cap *= 2;
            uint32_t *g = realloc(c->sb_regs, cap * sizeof *g);
            if (!g) {
                free(x);
                free(tracked);
                return -1;
            }
            c->sb_regs = g;
        }
        emu_sb *s = &c->sb[pc];
        s->off = (uint32_t)used;
        s->ndst = (uint16_t)x->nd;
        s->nsrc = (uint16_t)x->ns;
        s->lat = c->d->model->lat[mh_emu_lat_of(in)];
        s->d0 = x->nd ? x->dst[0] : 0;
        memcpy(c->sb_regs + used, x->dst, x->nd * sizeof *x->dst);
        memcpy(c->sb_regs + used + x->nd, x->src, x->ns * sizeof *x->src);
        used += x->nd + x->ns;
    }
    free(x);
    free(tracked);
    return 0;
}
