/* emu.c - the CPU executor of PTX (see emu.h): a launch from its checks to its
 * statistics (the code of the kernel and its callees laid end to end with the
 * kernel's own registers, the parameters, the module's data, the SMs' slots),
 * faults and stops, and the special registers.  The parts: emu_memory.c (device
 * memory and checked access), emu_exec.c (one instruction), emu_sync.c
 * (barriers, mbarriers, atomics, printf/assert), emu_slowpath.c (strict mode,
 * counting), emu_sched.c (the issue model and the device's scheduler),
 * emu_check.c (what emu runs); docs/DESIGN.md "emu's engine" walks through them.
 *
 * SM s starts each launch at its own %clock offset (s x 1000003 cycles), as real
 * SMs' %clock values are not aligned; %globaltimer is the launch's start time
 * plus the SM's elapsed cycles / the model's clock (emu_model.c). */
#include "emu/emu_memtime.h"
#include "emu/emu_internal.h"
#include "base/stop.h"
#include "frontend/ptx_effects.h"
#include "frontend/ptx_source.h"
#include "launch/launch_shape.h"
#include "emu/emu_round.h"
#include "emu/emu_occupancy.h"
#include "emu/emu_counters.h"
#include "emu/emu_printf.h"
#include "base/fp16.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- faults --------------------------------------------------------------- */

/* The one form of emu's faults and warnings: "WHERE: KERNEL: WHAT (block (x,y,z), thread (x,y,z))",
 * WHERE being FILE.cu:LINE (PTX path:line) where the module has .loc (issue 34), else the PTX line. */
static int located(ctx *c, const warp *w, int lane, uint32_t line, char *out, size_t n, const char *fmt, va_list ap)
{
    char what[900], where[1000];
    vsnprintf(what, sizeof what, fmt, ap);
    uint32_t t[3];
    thread_of(c, w, lane, t);
    mh_ptx_where(c->m, c->cur ? c->cur->text_off : 0, line, where, sizeof where);
    return snprintf(out, n, "%s: %s: %s (block (%u,%u,%u), thread (%u,%u,%u))", where, c->f->short_name, what,
                    c->ctaid[0], c->ctaid[1], c->ctaid[2], t[0], t[1], t[2]);
}

void *emu_fault(ctx *c, const warp *w, int lane, const char *fmt, ...)
{
    if (c->faulted) return NULL;
    char msg[2048];
    c->e->line = c->cur ? c->cur->line : 0;
    va_list ap;
    va_start(ap, fmt);
    located(c, w, lane, c->e->line, msg, sizeof msg, fmt, ap);
    va_end(ap);
    mh_fail(c->e, MH_E_KERNEL_FAULT, "%s", msg);
    c->faulted = 1;
    return NULL;
}

void emu_warn(ctx *c, const warp *w, int lane, const char *fmt, ...)
{
    uint32_t line = c->cur ? c->cur->line : 0;
    for (uint32_t i = 0; i < c->nwarn_lines; i++)
        if (c->warn_lines[i] == line) return;
    if (c->nwarn_lines == EMU_WARN_LINES) return;
    c->warn_lines[c->nwarn_lines++] = line;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = located(c, w, lane, line, msg, sizeof msg - 1, fmt, ap);
    va_end(ap);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof msg - 1 ? (size_t)n : sizeof msg - 2;
    msg[len++] = '\n';
    mh_outbuf_add(&c->warn, msg, len);
}

double emu_monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Every few thousand warp instructions: a stop request (Ctrl-C) or the launch's time limit
 * ends it, so that a kernel that never ends cannot hang the harness. */
int emu_poll_stop(ctx *c)
{
    if (mh_stop_requested()) {
        mh_fail(c->e, MH_E_INTERRUPTED, "interrupted (Ctrl-C) while %s ran on emu (block (%u,%u,%u))", c->f->short_name,
                c->ctaid[0], c->ctaid[1], c->ctaid[2]);
        c->faulted = 1;
        return 1;
    }
    if (c->deadline > 0 && emu_monotonic_s() > c->deadline) {
        mh_fail(c->e, MH_E_TIMEOUT, "%s ran past its time limit on emu and was stopped (block (%u,%u,%u), %llu warp "
                "instructions)", c->f->short_name, c->ctaid[0], c->ctaid[1], c->ctaid[2], (unsigned long long)c->warp_insns);
        c->faulted = 1;
        return 1;
    }
    return 0;
}

/* Strict mode: a register read before any instruction wrote it. */
void emu_uninitialised(ctx *c, const warp *w, uint32_t reg, int lane)
{
    emu_fault(c, w, lane, "read of register %s, which no instruction has written (strict mode)", c->m->reg_name[reg + c->reg_lo]);
}


uint64_t emu_sreg(ctx *c, const warp *w, uint32_t id, int lane)
{
    uint32_t lin = w->index * WARP + (uint32_t)lane, t[3];
    thread_of(c, w, lane, t);
    uint64_t clock = c->clock0 + c->now;
    uint64_t timer = c->d->timer_ns + (uint64_t)((double)c->now / c->d->model->clock_ghz);
    (void)lin;
    switch (id) {
    case MH_SR_TID_X: return t[0];
    case MH_SR_TID_Y: return t[1];
    case MH_SR_TID_Z: return t[2];
    case MH_SR_NTID_X: return c->block[0];
    case MH_SR_NTID_Y: return c->block[1];
    case MH_SR_NTID_Z: return c->block[2];
    case MH_SR_CTAID_X: return c->ctaid[0];
    case MH_SR_CTAID_Y: return c->ctaid[1];
    case MH_SR_CTAID_Z: return c->ctaid[2];
    case MH_SR_NCTAID_X: return c->grid[0];
    case MH_SR_NCTAID_Y: return c->grid[1];
    case MH_SR_NCTAID_Z: return c->grid[2];
    case MH_SR_LANEID: return (uint64_t)lane;
    case MH_SR_WARPID: return w->index;
    case MH_SR_NWARPID: return c->nwarps;
    case MH_SR_SMID: return c->sm;
    case MH_SR_NSMID: return c->d->nsm;
    case MH_SR_CLOCK: return clock & 0xffffffffu;
    case MH_SR_CLOCK_HI: return clock >> 32;
    case MH_SR_CLOCK64: return clock;
    case MH_SR_GLOBALTIMER: return timer;
    case MH_SR_GLOBALTIMER_LO: return timer & 0xffffffffu;
    case MH_SR_GLOBALTIMER_HI: return timer >> 32;
    case MH_SR_LANEMASK_EQ: return 1u << lane;
    case MH_SR_LANEMASK_LT: return (1u << lane) - 1;
    case MH_SR_LANEMASK_LE: return (2ull << lane) - 1;
    case MH_SR_LANEMASK_GT: return ~((2ull << lane) - 1) & 0xffffffffu;
    case MH_SR_LANEMASK_GE: return ~((1ull << lane) - 1) & 0xffffffffu;
    case MH_SR_DYNAMIC_SMEM_SIZE: return c->dyn_smem;
    case MH_SR_TOTAL_SMEM_SIZE: return c->shared_size;
    case MH_SR_AGGR_SMEM_SIZE: return c->shared_size; /* no reserved shared memory on emu */
    case MH_SR_ENVREG0 + 1: c->envreg_read = 1; return c->grid_ws >> 32;         /* the grid workspace, as the */
    case MH_SR_ENVREG0 + 2: c->envreg_read = 1; return c->grid_ws & 0xffffffffu; /* driver hands it over */
    default: return id >= MH_SR_CLUSTERID_X && id <= MH_SR_IS_EXPLICIT_CLUSTER ? emu_cluster_sreg(c, w, id) : 0;
    }
}

/* Address of variable v as a kernel sees it (state-space address). */
uint64_t emu_sym_addr(ctx *c, int v)
{
    const mh_ptx_var *var = &c->m->vars[v];
    if (var->space == MH_SP_GLOBAL) return c->data_addr + var->offset;
    if (var->space == MH_SP_LOCAL) return var->offset - c->local_lo; /* the kernel's own span, from 0 */
    if (var->space == MH_SP_SHARED && var->size == 0) return c->f->dyn_offset; /* dynamic: after the kernel's own */
    if (var->space == MH_SP_SHARED && c->f->shared_offsets) /* the kernel's own layout (ptx_smem.c) */
        return c->f->shared_offsets[var->shared_slot];
    return var->offset; /* const: offsets in their space */
}

/* The functions the kernel reaches through calls, itself included: seen[f] (malloc'd; NULL: no memory). */
static unsigned char *reached(const ctx *c)
{
    const mh_ptx_module *m = c->m;
    unsigned char *seen = calloc(m->nfuncs ? m->nfuncs : 1, 1);
    uint32_t *todo = malloc((m->nfuncs ? m->nfuncs : 1) * sizeof *todo), n = 0;
    if (!seen || !todo) { free(seen); free(todo); return NULL; }
    todo[n++] = (uint32_t)(c->f - m->funcs);
    seen[todo[0]] = 1;
    while (n) {
        const mh_ptx_func *F = &m->funcs[todo[--n]];
        for (uint32_t i = 0; i < F->ncode; i++)
            if (F->code[i].op == MH_OP_CALL && F->code[i].callee >= 0 && !seen[F->code[i].callee]) {
                seen[F->code[i].callee] = 1;
                todo[n++] = (uint32_t)F->code[i].callee;
            }
    }
    free(todo);
    return seen;
}

/* The registers of the kernel and the functions it calls, [*lo, *hi) of the module's numbering
 * (each function's registers are one range). */
static int kernel_regs(ctx *c, uint32_t *lo, uint32_t *hi)
{
    const mh_ptx_module *m = c->m;
    unsigned char *seen = reached(c);
    if (!seen) return -1;
    *lo = UINT32_MAX;
    *hi = 0;
    for (uint32_t fi = 0; fi < m->nfuncs; fi++) {
        const mh_ptx_func *F = &m->funcs[fi];
        if (!seen[fi] || !F->nregs) continue;
        if (F->first_reg < *lo) *lo = F->first_reg;
        if (F->first_reg + F->nregs > *hi) *hi = F->first_reg + F->nregs;
    }
    if (*lo > *hi) *lo = *hi = 0;
    free(seen);
    return 0;
}

/* The kernel's local memory: the span of the .local variables of the functions it reaches
 * (the front end lays out a module's locals one after another), [*lo, *hi). */
static int kernel_locals(ctx *c, uint64_t *lo, uint64_t *hi)
{
    const mh_ptx_module *m = c->m;
    unsigned char *seen = reached(c);
    if (!seen) return -1;
    *lo = UINT64_MAX;
    *hi = 0;
    for (uint32_t i = 0; i < m->nvars; i++) {
        const mh_ptx_var *v = &m->vars[i];
        if (v->space != MH_SP_LOCAL || (v->func >= 0 && !seen[v->func])) continue;
        if (v->offset < *lo) *lo = v->offset;
        if (v->offset + v->size > *hi) *hi = v->offset + v->size;
    }
    if (*lo > *hi) *lo = *hi = 0;
    free(seen);
    return 0;
}

/* An instruction's registers renumbered from the kernel's first (instructions of functions the
 * kernel does not reach never run; their numbers may fall outside). */
static void renumber(mh_ptx_insn *in, uint32_t lo)
{
    if (in->guard >= 0) in->guard -= (int32_t)lo;
    if (in->dst2 >= 0) in->dst2 -= (int32_t)lo;
    for (int k = 0; k < in->nopnds && k < MH_PTX_MAX_OPNDS; k++) {
        mh_ptx_opnd *o = &in->o[k];
        if (o->kind == MH_OPK_REG || (o->kind == MH_OPK_ADDR && o->reg != UINT32_MAX)) o->reg -= lo;
        if (o->kind == MH_OPK_VEC)
            for (int j = 0; j < o->n && j < 4; j++)
                if (o->vec[j] != UINT32_MAX && !(o->vec[j] & MH_PTX_VEC_SREG)) o->vec[j] -= lo;
    }
}

/* Lays every defined function's code end to end, with branch targets made
 * global and registers the kernel's own (from 0), and sizes the per-thread
 * parameter frames. */
static int link_code(ctx *c, mh_error *e)
{
    const mh_ptx_module *m = c->m;
    uint32_t n = 0;
    for (uint32_t fi = 0; fi < m->nfuncs; fi++) n += m->funcs[fi].defined ? m->funcs[fi].ncode : 0;
    c->code = malloc((n ? n : 1) * sizeof *c->code);
    c->insn_func = malloc((n ? n : 1) * sizeof *c->insn_func);
    c->base = calloc(m->nfuncs ? m->nfuncs : 1, sizeof *c->base);
    c->frame_off = calloc(m->nfuncs ? m->nfuncs : 1, sizeof *c->frame_off);
    if (!c->code || !c->insn_func || !c->base || !c->frame_off) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    uint32_t hi;
    if (kernel_regs(c, &c->reg_lo, &hi)) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    c->nregs = hi > c->reg_lo ? hi - c->reg_lo : 1;
    uint32_t at = 0;
    for (uint32_t fi = 0; fi < m->nfuncs; fi++) {
        const mh_ptx_func *F = &m->funcs[fi];
        c->frame_off[fi] = c->frame_bytes;
        c->frame_bytes += align16(F->param_bytes) + align16(F->ret_bytes) + align16(F->callarea_bytes);
        if (!F->defined) continue;
        c->base[fi] = at;
        memcpy(c->code + at, F->code, F->ncode * sizeof *c->code);
        for (uint32_t i = 0; i < F->ncode; i++) {
            c->insn_func[at + i] = fi;
            mh_ptx_insn *in = &c->code[at + i];
            if (in->op == MH_OP_BRA) in->o[0].reg += at; /* a label: renumber leaves it */
            if (in->op == MH_OP_CALL && in->callee >= 0 && m->funcs[in->callee].defined) c->calls = 1;
            /* the per-thread .param frames: for calls and .param accesses other than a kernel parameter's */
            if (in->op == MH_OP_CALL || ((in->op == MH_OP_LD || in->op == MH_OP_ST) && in->space == MH_SP_PARAM &&
                                         (!F->is_entry || in->o[in->op == MH_OP_LD].sym >= 0 ||
                                          in->o[in->op == MH_OP_LD].param < 0)))
                c->frames_used = 1;
            if (c->reg_lo) renumber(in, c->reg_lo);
        }
        at += F->ncode;
    }
    c->ncode = n;
    c->fast = malloc(n ? n : 1);
    if (!c->fast) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    for (uint32_t i = 0; i < n; i++) c->fast[i] = emu_fast_kind(&c->code[i]);
    c->pipe = malloc((n ? n : 1) * sizeof *c->pipe);
    if (!c->pipe) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    for (uint32_t i = 0; i < n; i++) { /* the issue model's pipe of each instruction (emu_model.c) */
        unsigned units, p = (unsigned)mh_emu_pipe_of(&c->code[i], &units), cy = mh_emu_pipe_cycles(c->d->model, (int)p, units);
        c->pipe[i] = (uint16_t)(cy ? p << 8 | (cy < 255 ? cy : 255) : 0);
    }
    c->kconst = calloc(n ? n : 1, sizeof *c->kconst);
    if (!c->kconst) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    emu_fast_consts(c);
    c->mma = m->mma;
    c->mma_regs = m->mma_regs;
    if (emu_pack_registers(c) || emu_mma_plan(c) || emu_sb_plan(c)) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    return 0;
}

int mh_emu_run(mh_emu *d, const mh_ptx_module *m, const char *name, const mh_emu_launch *l, mh_emu_stats *st,
               mh_error *e)
{
    mh_emu_stats s;
    memset(&s, 0, sizeof s);
    int rc = mh_emu_run_ex(d, m, name, l, NULL, &s, e);
    free(s.output);
    s.output = NULL;
    s.output_len = 0;
    free(s.warnings);
    s.warnings = NULL;
    s.warnings_len = 0;
    if (s.counts) s.counts->release(s.counts);
    s.counts = NULL;
    free(s.flows);
    s.flows = NULL;
    s.nflows = 0;
    if (st) *st = s;
    return rc;
}

uint64_t mh_emu_module_data_size(const mh_ptx_module *m)
{
    uint64_t data = 0;
    for (uint32_t i = 0; i < m->nvars; i++)
        if (m->vars[i].space == MH_SP_GLOBAL || m->vars[i].space == MH_SP_CONST)
            if (m->vars[i].offset + m->vars[i].size > data) data = m->vars[i].offset + m->vars[i].size;
    return data;
}

int mh_emu_run_ex(mh_emu *d, const mh_ptx_module *m, const char *name, const mh_emu_launch *l, const mh_emu_extra *x,
                  mh_emu_stats *st, mh_error *e)
{
    static const mh_emu_extra none;
    if (!x) x = &none;
    if (st) memset(st, 0, sizeof *st);
    mh_error_clear(e);
    const mh_ptx_func *f = mh_ptx_find(m, name);
    if (!f || !f->is_entry) return mh_fail(e, MH_E_NOT_FOUND, "%s: no kernel (.entry) named \"%s\"", m->path, name);
    if (mh_emu_check_kernel(m, f, e)) return (int)e->code;
    /* what a GPU would refuse, emu refuses (sm_90's limits) */
    if (mh_launch_shape_check(f, l->grid, l->block, l->dynamic_smem, MH_SMEM_PER_BLOCK_SM90, e)) return (int)e->code;
    if (l->nargs != f->nparams)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "%s takes %u arguments, %u given", f->short_name, f->nparams, l->nargs);

    ctx c;
    memset(&c, 0, sizeof c);
    c.d = d;
    c.m = m;
    c.f = f;
    c.e = e;
    memcpy(c.grid, l->grid, sizeof c.grid);
    memcpy(c.block, l->block, sizeof c.block);
    c.nthreads = l->block[0] * l->block[1] * l->block[2];
    c.nwarps = (c.nthreads + WARP - 1) / WARP;
    c.dyn_smem = l->dynamic_smem;
    if (l->timeout_s > 0) c.deadline = emu_monotonic_s() + l->timeout_s;
    c.shared_size = f->shared_bytes + l->dynamic_smem;
    uint64_t local_hi;
    if (kernel_locals(&c, &c.local_lo, &local_hi)) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    c.local_stride = (local_hi - c.local_lo + 15) & ~15ull;
    if (local_hi - c.local_lo > MH_EMU_MAX_LOCAL) /* what the driver refuses */
        return mh_fail(e, MH_E_LAUNCH_FAILED, "%s: %llu bytes of local memory per thread: more than the %u a thread "
                       "may have on sm_90", f->short_name, (unsigned long long)(local_hi - c.local_lo), MH_EMU_MAX_LOCAL);
    c.params = calloc(1, f->param_bytes ? f->param_bytes : 1);
    for (uint32_t i = 0; i < f->nparams; i++) {
        if (l->args[i].size != f->params[i].size) {
            free(c.params);
            return mh_fail(e, MH_E_BAD_ARGUMENT, "%s: argument %u (%s) is %u bytes, the parameter is %u", f->short_name, i,
                           f->params[i].name, l->args[i].size, f->params[i].size);
        }
        memcpy(c.params + f->params[i].offset, l->args[i].data, l->args[i].size);
    }
    /* module .global/.const data */
    uint64_t data = mh_emu_module_data_size(m);
    int rc = 0;
    if (data && x->data_addr) { /* the caller's, kept across launches */
        alloc *al = emu_find_alloc(d, x->data_addr, data);
        if (!al) {
            free(c.params);
            return mh_fail(e, MH_E_BAD_ARGUMENT, "%s: the module's data at 0x%llx is not an allocation of %llu bytes",
                           name, (unsigned long long)x->data_addr, (unsigned long long)data);
        }
        c.data_addr = x->data_addr;
        c.data_host = al->host + (x->data_addr - al->addr);
        c.data_size = data;
    } else if (data) {
        if (mh_emu_alloc(d, data, &c.data_addr, e)) { free(c.params); return -1; }
        alloc *al = emu_find_alloc(d, c.data_addr, data);
        c.data_host = al->host;
        c.data_size = data;
        c.data_owned = 1;
        for (uint32_t i = 0; i < m->nvars; i++)
            if (m->vars[i].init && (m->vars[i].space == MH_SP_GLOBAL || m->vars[i].space == MH_SP_CONST))
                memcpy(c.data_host + m->vars[i].offset, m->vars[i].init, m->vars[i].size);
    }
    c.nblocks = (uint64_t)l->grid[0] * l->grid[1] * l->grid[2];
    /* the blocks an SM holds at once: a GPU's limits, and no more than the SM gets */
    mh_occupancy occ;
    mh_occupancy_sm90(x->regs_per_thread, c.shared_size, c.nthreads, &occ);
    /* what a warp gets at launch: the count rounded up to the allocation unit (8 a thread, 256 a warp) */
    c.regs = x->regs_per_thread > 0 ? ((uint32_t)x->regs_per_thread + 7) / 8 * 8 : 0;
    c.setmaxnreg_off = x->setmaxnreg_ignored;
    uint64_t per_sm = (c.nblocks + d->nsm - 1) / d->nsm;
    c.resident = occ.blocks_per_sm > 0 ? (uint32_t)occ.blocks_per_sm : 1;
    if (x->cooperative && c.nblocks > (uint64_t)c.resident * d->nsm) {
        rc = mh_fail(e, MH_E_BAD_ARGUMENT, "%s: a cooperative grid of %llu blocks cannot be resident at once: %u "
                       "block%s per SM x %u SMs = %llu (blocks of %u threads, %llu bytes of shared memory%s)", f->short_name,
                       (unsigned long long)c.nblocks, c.resident, c.resident == 1 ? "" : "s", d->nsm,
                       (unsigned long long)c.resident * d->nsm,
                       c.nthreads, (unsigned long long)c.shared_size,
                       x->regs_per_thread ? ", the registers ptxas gives" : "");
        goto done;
    }
    if (x->cooperative) { /* the driver's grid workspace: {size, barrier} (cooperative_groups/details/driver_abi.h) */
        uint32_t ws[4] = {8, 0, 0, 0};
        if (mh_emu_alloc(d, sizeof ws, &c.grid_ws, e) || mh_emu_write(d, c.grid_ws, ws, sizeof ws, e)) { rc = -1; goto done; }
    }
    if (c.resident > per_sm) c.resident = (uint32_t)per_sm;
    if (emu_cluster_setup(&c, x->cluster, e)) { rc = -1; goto done; }
    if ((uint64_t)c.resident * (c.nblocks < d->nsm ? c.nblocks : d->nsm) < c.cluster_n) {
        rc = mh_fail(e, MH_E_BAD_ARGUMENT, "%s: a cluster of %u blocks cannot be resident at once: %u blocks per SM x %u "
                     "SMs", name, c.cluster_n, c.resident, d->nsm);
        goto done;
    }
    if (link_code(&c, e)) { rc = -1; goto done; }
    if (emu_regions_start(&c) || (x->flows && emu_flows_start(&c))) { rc = mh_fail(e, MH_E_NO_MEMORY, "emu: out of memory for the launch"); goto done; }
    c.icache = calloc(c.ncode ? c.ncode : 1, sizeof *c.icache);
    c.nsms = c.nblocks < d->nsm ? (uint32_t)c.nblocks : d->nsm;
    c.sms = calloc(c.nsms ? c.nsms : 1, sizeof *c.sms);
    c.sps_mem = calloc((size_t)(c.nsms ? c.nsms : 1) * SUBPARTS, sizeof *c.sps_mem);
    int slots_ok = c.sms != NULL && c.sps_mem != NULL;
    for (uint32_t i = 0; slots_ok && i < c.nsms; i++) {
        c.sms[i].sps = c.sps_mem + (size_t)i * SUBPARTS;
        if (!(c.sms[i].blks = calloc(c.resident, sizeof *c.sms[i].blks))) slots_ok = 0;
    }
    if (x->stats) c.counts = calloc((size_t)(c.ncode ? c.ncode : 1) * MH_CT_COUNT, sizeof *c.counts);
    if (!c.icache || !slots_ok || (x->stats && !c.counts)) { rc = mh_fail(e, MH_E_NO_MEMORY, "emu: out of memory for the launch"); goto done; }
    c.slow = d->strict || c.counts;
    if (d->strict && emu_hz_start(&c)) { rc = mh_fail(e, MH_E_NO_MEMORY, "emu: out of memory for the launch"); goto done; }
    if (emu_mt_start(&c)) { rc = mh_fail(e, MH_E_NO_MEMORY, "emu: out of memory for the launch"); goto done; }
    uint64_t longest = 0;
    rc = emu_run_grid(&c, &longest) ? -1 : 0;
    d->timer_ns += (uint64_t)((double)longest / d->model->clock_ghz) + 1000;
    if (st) {
        st->warp_insns = c.warp_insns;
        st->thread_insns = c.thread_insns;
        st->cycles = longest;
        st->blocks_per_sm = c.resident;
        st->workers = c.workers;
        st->serial = d->threads < 2 ? NULL : c.serial; /* (why not more workers: said when there are more) */
        if (!rc && c.counts) rc = mh_ct_build(m, c.code, c.ncode, c.counts, &st->counts, e);
        if (!rc) emu_flows_take(&c, &st->flows, &st->nflows);
    }
done:
    if (!rc) emu_regions_warn(&c); /* regions no one records: with emu's other warnings */
    if (st) { /* what the kernel printed, also when it faulted (a GPU prints it too) */
        st->output = c.out.p;
        st->output_len = c.out.n;
        st->warnings = c.warn.p;
        st->warnings_len = c.warn.n;
    } else {
        free(c.out.p);
        free(c.warn.p);
    }
    free(c.counts);
    emu_hz_free(&c);
    emu_regions_free(&c);
    emu_flows_free(&c);
    emu_mt_free(&c);
    if (c.data_owned) mh_emu_free(d, c.data_addr, &(mh_error){0});
    if (c.grid_ws) mh_emu_free(d, c.grid_ws, &(mh_error){0});
    free(c.params);
    for (uint32_t i = 0; c.sms && i < c.nsms; i++) {
        for (uint32_t s = 0; c.sms[i].blks && s < c.resident; s++) {
            emu_slot_release(&c, &c.sms[i].blks[s]);
        }
        free(c.sms[i].blks);
        free(c.sms[i].tma_q);
        for (uint32_t k = 0; k < c.sms[i].ntiles; k++) free(c.sms[i].tiles[k]);
        free(c.sms[i].tiles);
    }
    free(c.sms);
    free(c.sps_mem);
    free(c.icache);
    free(c.code);
    free(c.fast);
    free(c.pipe);
    free(c.sb);
    free(c.sb_regs);
    free(c.kconst);
    free(c.wgb);
    free(c.acc_touch);
    free(c.zero_rows);
    free(c.own_mma);
    free(c.own_mma_regs);
    free(c.insn_func);
    free(c.base);
    free(c.frame_off);
    return rc;
}
