/* emu_tma.c - Hopper's bulk copies on emu: emu's own tensor-map encoding, cp.async.bulk between
 * global and shared memory (and to another block of the cluster), cp.async.bulk.tensor tile loads
 * and stores (1d-5d, swizzles, interleave, element strides, out-of-bounds fill), the reductions
 * cp.reduce.async.bulk(.tensor), each completing on an mbarrier (complete_tx::bytes) or a
 * bulk_group.  Copies are done at issue, their complete_tx lands on the barrier when the copy ends in
 * virtual time (the SM's TMA unit: bandwidth and latency); see docs/emu.md for what that means. */
#include "emu/emu_memtime.h"
#include "emu/emu_internal.h"
#include "emu/emu_tma.h"
#include "frontend/ptx_tma.h"

#include <stdio.h>
#include <stdlib.h>

static const char magic[8] = {'M', 'G', 'P', 'U', 'T', 'M', 'A', 'P'};

static void put_u64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
static uint64_t get_u64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

int mh_emu_tensor_map(const mh_tensor_map_spec *s, unsigned char out[MH_TMAP_BYTES], mh_error *e)
{
    if (mh_tensor_map_check(s, e)) return (int)e->code;
    if (!s->elem_size)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "tensor map: data type %s (packed values) is for sm_100 and later; emu "
                       "runs sm_90", mh_tensor_map_type_name(s->data_type));
    memset(out, 0, MH_TMAP_BYTES);
    memcpy(out, magic, 8);
    out[8] = 1;
    out[9] = (unsigned char)s->rank;
    out[10] = (unsigned char)s->data_type;
    out[11] = (unsigned char)s->elem_size;
    out[12] = (unsigned char)s->interleave;
    out[13] = (unsigned char)s->swizzle;
    out[14] = (unsigned char)s->l2;
    out[15] = (unsigned char)s->oob;
    put_u64(out + 16, s->address);
    for (uint32_t i = 0; i < s->rank; i++) {
        put_u64(out + 24 + 8 * i, s->dims[i]);
        if (i + 1 < s->rank) put_u64(out + 64 + 8 * i, s->strides[i]);
        uint16_t b = (uint16_t)s->box[i];
        memcpy(out + 96 + 2 * i, &b, 2);
        out[106 + i] = (unsigned char)s->elem_strides[i];
    }
    return 0;
}

/* A decoded map's fields: its element size one a map can have, the rest as mh_tensor_map_check
 * rules (a map made here passes; one edited in memory may not).  0, or -1 with the reason in e. */
static int fields_check(const mh_tensor_map_spec *s, mh_error *e)
{
    mh_error_clear(e);
    if (s->elem_size != 1 && s->elem_size != 2 && s->elem_size != 4 && s->elem_size != 8)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "its element size is %u bytes", (unsigned)s->elem_size);
    return mh_tensor_map_check(s, e);
}

int mh_emu_tensor_map_decode(const unsigned char in[MH_TMAP_BYTES], mh_tensor_map_spec *s)
{
    if (memcmp(in, magic, 8) || in[8] != 1 || in[9] < 1 || in[9] > MH_TMAP_MAX_RANK) return -1;
    memset(s, 0, sizeof *s);
    s->rank = in[9];
    s->data_type = in[10];
    s->elem_size = in[11];
    s->interleave = in[12];
    s->swizzle = in[13];
    s->l2 = in[14];
    s->oob = in[15];
    s->address = get_u64(in + 16);
    s->bytes = UINT64_MAX;
    for (uint32_t i = 0; i < s->rank; i++) {
        s->dims[i] = get_u64(in + 24 + 8 * i);
        if (i + 1 < s->rank) s->strides[i] = get_u64(in + 64 + 8 * i);
        uint16_t b;
        memcpy(&b, in + 96 + 2 * i, 2);
        s->box[i] = b;
        s->elem_strides[i] = in[106 + i];
    }
    mh_error e;
    return fields_check(s, &e) ? -2 : 0;
}

/* ---- the copies ------------------------------------------------------------- */

/* The tensor map an instruction names: kernel parameter bytes, or 128 bytes at a generic address
 * (a __grid_constant__ parameter through cvta.param, or global memory). */
static int read_map(ctx *c, warp *w, int l, const mh_ptx_opnd *o, mh_tensor_map_spec *s)
{
    unsigned char buf[MH_TMAP_BYTES];
    if (o->reg == UINT32_MAX && o->sym < 0 && o->param >= 0) {
        const mh_ptx_param *p = &c->f->params[o->param];
        if (!c->f->is_entry || o->imm < 0 || (uint64_t)o->imm + MH_TMAP_BYTES > p->size)
            return emu_fault(c, w, l, "tensor map: [%s+%lld] is not 128 bytes of a kernel parameter", p->name,
                             (long long)o->imm), -1;
        memcpy(buf, c->params + p->offset + o->imm, MH_TMAP_BYTES);
    } else {
        uint64_t a = address(c, w, o, l);
        if (a % 64)
            return emu_fault(c, w, l, "tensor map at 0x%llx: not 64-byte aligned", (unsigned long long)a), -1;
        for (int h = 0; h < 2; h++) {
            const unsigned char *p = emu_mem(c, w, l, MH_SP_GENERIC, a + 64 * h, 64, 0);
            if (!p) return -1;
            memcpy(buf + 64 * h, p, 64);
        }
    }
    int d = mh_emu_tensor_map_decode(buf, s);
    if (d == -2) { /* emu's encoding, its fields out of range: a tensormap.replace or a store made it so */
        mh_error e;
        fields_check(s, &e);
        return emu_fault(c, w, l, "the tensor map as it is now in memory (tensormap.replace, or a store) is not valid: %s",
                         e.message), -1;
    }
    if (d)
        return emu_fault(c, w, l, "the tensor map is not one dev:tensor_map made on emu (emu's own encoding, "
                         "docs/emu.md; a map the driver encoded is not read)"), -1;
    return 0;
}

/* a tensor map's swizzle (none, 32B, 64B, 128B): the row bits of its pattern (emu_swizzle) */
static const uint32_t swizzle_rows[4] = {0, 1, 3, 7};

static mh_ptx_type elem_type(int dt)
{
    switch (dt) {
    case MH_TMAP_FLOAT16: return MH_PT_F16;
    case MH_TMAP_BFLOAT16: return MH_PT_BF16;
    case MH_TMAP_FLOAT32: case MH_TMAP_FLOAT32_FTZ: case MH_TMAP_TFLOAT32: case MH_TMAP_TFLOAT32_FTZ: return MH_PT_F32;
    case MH_TMAP_FLOAT64: return MH_PT_F64;
    case MH_TMAP_INT32: return MH_PT_S32;
    case MH_TMAP_INT64: return MH_PT_S64;
    case MH_TMAP_UINT8: return MH_PT_U8;
    case MH_TMAP_UINT16: return MH_PT_U16;
    case MH_TMAP_UINT32: return MH_PT_U32;
    default: return MH_PT_U64;
    }
}

static int is_float_type(int dt) { return mh_ptx_type_is_float(elem_type(dt)); }

/* A reduction's operation on elements of type t (the ISA's: add on every type, min/max on
 * integers and f16/bf16, inc/dec on u32, and/or/xor on 32/64-bit integers). */
static int red_ok(int op, mh_ptx_type t)
{
    int fl = mh_ptx_type_is_float(t), bits = mh_ptx_type_bits(t);
    switch (op) {
    case AOP_ADD: return 1;
    case AOP_MIN: case AOP_MAX: return !fl || t == MH_PT_F16 || t == MH_PT_BF16;
    case AOP_INC: case AOP_DEC: return t == MH_PT_U32 || t == MH_PT_B32;
    default: return !fl && bits >= 32;
    }
}

static const char *aop_name(int op)
{
    static const char *const n[] = {"add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas"};
    return op >= 0 && op < 10 ? n[op] : "?";
}

/* A row of a tensor copy at once: elements e0 .. e0 + n0 - 1 of the box (shared offsets e * esz
 * from smem, swizzled by 16-byte chunks, which the swizzle moves whole), dimension 0's element
 * stride 1, the row's global elements contiguous from gb (in: the row's other indices are inside
 * the tensor; dimension 0's from c00).  Only where the element-by-element copy would find every
 * element's bytes: the shared bytes in the block's own memory or a live peer's, the global ones in
 * one allocation, aligned; it then leaves what that copy would (the same bytes, fills, the lines the
 * memory model records, c->writes).  1: done; 0: not that case, nothing touched (the caller goes
 * element by element: the same faults at the same bytes). */
static int row_copy(ctx *c, warp *w, uint64_t smem, uint64_t e0, uint32_t n0, int64_t c00, uint32_t es0,
                    const mh_tensor_map_spec *s, int in, uint64_t gb, int load, uint64_t fill)
{
    uint32_t esz = s->elem_size, rows = swizzle_rows[s->swizzle & 3];
    if (es0 != 1 || (uint64_t)n0 * esz > 4096) return 0;
    uint64_t u0 = smem + e0 * esz, u1 = u0 + (uint64_t)n0 * esz;
    uint64_t hi = u0 / EMU_DSMEM_RANK, hi128 = (((u1 - 1) % EMU_DSMEM_RANK) | 127) + 1; /* (a chunk stays in its 128 bytes) */
    if ((u1 - 1) / EMU_DSMEM_RANK != hi || hi128 > c->shared_size || u0 % esz) return 0;
    blk *b = w->b;
    if (hi) {
        if (hi - 1 >= emu_cluster_size(c)) return 0;
        b = emu_cluster_size(c) == 1 ? w->b : w->b->peer[hi - 1];
        if (!b || !b->live) return 0;
    }
    /* the row's elements inside the tensor: [jl, jh) */
    uint32_t jl = 0, jh = 0;
    if (in) {
        int64_t a = c00 < 0 ? -c00 : 0, z = (int64_t)s->dims[0] - c00;
        if (z > (int64_t)n0) z = n0;
        if (a < z) jl = (uint32_t)a, jh = (uint32_t)z;
    }
    uint64_t ga = gb + (uint64_t)(c00 + (int64_t)jl) * esz, gbytes = (uint64_t)(jh - jl) * esz;
    unsigned char *gp = NULL;
    if (gbytes) {
        if (ga % esz) return 0;
        alloc *al = emu_find_alloc(c->d, ga, gbytes);
        if (!al) return 0;
        gp = al->host + (ga - al->addr);
    }
    unsigned char tmp[4096];
    unsigned char *sh = b->shared;
    uint64_t off0 = u0 % EMU_DSMEM_RANK, rb = (uint64_t)n0 * esz;
    if (load) {
        for (uint32_t j = 0; j < n0; j++)
            if (j < jl || j >= jh) st_elem(tmp + (size_t)j * esz, fill, (int)esz);
        if (gbytes) {
            emu_mt_touch_range(c, ga, gbytes);
            memcpy(tmp + (size_t)jl * esz, gp, gbytes);
        }
        for (uint64_t x = 0; x < rb;) { /* to shared memory by the pieces inside one 16-byte chunk */
            uint64_t a = off0 + x, len = 16 - a % 16;
            if (len > rb - x) len = rb - x;
            memcpy(sh + emu_swizzle(a, rows, 0), tmp + x, len);
            x += len;
        }
        c->writes += n0; /* a write a shared element, as emu_dsmem counts them */
    } else {
        if (!gbytes) return 1; /* a store skips the elements outside the tensor */
        for (uint64_t x = (uint64_t)jl * esz; x < (uint64_t)jh * esz;) {
            uint64_t a = off0 + x, len = 16 - a % 16;
            if (len > (uint64_t)jh * esz - x) len = (uint64_t)jh * esz - x;
            memcpy(tmp + x, sh + emu_swizzle(a, rows, 0), len);
            x += len;
        }
        emu_mt_touch_range(c, ga, gbytes);
        memcpy(gp, tmp + (size_t)jl * esz, gbytes); /* (global writes are not counted: emu_mem) */
    }
    return 1;
}

/* One tensor copy for lane l: the box at the coordinates, between the tensor and shared memory
 * at `smem` (a shared::cluster address); *bytes the box's bytes (what complete_tx counts). */
static int tensor_copy(ctx *c, warp *w, int l, const mh_ptx_tma *r, uint64_t smem, uint64_t *bytes)
{
    mh_tensor_map_spec s;
    if (read_map(c, w, l, &r->map, &s)) return -1;
    if (s.rank != r->dim)
        return emu_fault(c, w, l, "cp.async.bulk.tensor.%ud with a tensor map of %u dimensions", r->dim, s.rank), -1;
    if (smem % 128)
        return emu_fault(c, w, l, "cp.async.bulk.tensor: shared address 0x%llx is not 128-byte aligned",
                         (unsigned long long)smem), -1;
    int load = r->kind == MH_TMA_TENSOR_LOAD, red = r->kind == MH_TMA_TENSOR_RED;
    mh_ptx_type t = elem_type(s.data_type);
    if (red && !red_ok(r->redop, t))
        return emu_fault(c, w, l, "cp.reduce.async.bulk.tensor .%s on a tensor of %s elements: not in the ISA",
                         aop_name(r->redop), mh_ptx_type_name(t)), -1;
    uint32_t n[MH_TMAP_MAX_RANK], es[MH_TMAP_MAX_RANK];
    int64_t c0[MH_TMAP_MAX_RANK];
    uint64_t total = 1;
    for (uint32_t i = 0; i < MH_TMAP_MAX_RANK; i++) {
        es[i] = i < s.rank ? s.elem_strides[i] : 1;
        if (i == 0 && s.interleave == MH_TMAP_INTERLEAVE_NONE) es[i] = 1; /* ignored for dimension 0 (cuda.h) */
        n[i] = i < s.rank ? (s.box[i] + es[i] - 1) / es[i] : 1;
        c0[i] = i < s.rank ? (int64_t)(int32_t)val(c, w, &r->coord[i], l) : 0;
        total *= n[i];
    }
    uint32_t esz = s.elem_size;
    *bytes = total * esz;
    uint64_t nan = esz == 2 ? 0x7fffull : esz == 4 ? 0x7fffffffull : 0x7fffffffffffffffull;
    uint64_t fill = s.oob == MH_TMAP_OOB_NAN && is_float_type(s.data_type) ? nan : 0;
    uint32_t k[MH_TMAP_MAX_RANK] = {0}, rows = swizzle_rows[s.swizzle & 3];
    for (uint64_t e0 = 0; e0 < total; e0 += n[0]) {
        /* a row of the box: its n[0] elements along dimension 0, the other indices k[1..] */
        int in = 1;
        uint64_t gb = s.address;
        for (uint32_t i = 1; i < s.rank; i++) {
            int64_t g = c0[i] + (int64_t)k[i] * es[i];
            if (g < 0 || (uint64_t)g >= s.dims[i]) in = 0;
            else gb += (uint64_t)g * s.strides[i - 1];
        }
        int rc = red ? 0 : row_copy(c, w, smem, e0, n[0], c0[0], es[0], &s, in, gb, load, fill);
        for (uint32_t j = 0; !rc && j < n[0]; j++) { /* element by element: reductions, and rows row_copy leaves */
            int64_t g = c0[0] + (int64_t)j * es[0];
            int ein = in && g >= 0 && (uint64_t)g < s.dims[0];
            uint64_t ga = gb + (ein ? (uint64_t)g * esz : 0);
            uint64_t sa = emu_swizzle(smem + (e0 + j) * esz, rows, 0);
            unsigned char *sp = emu_dsmem(c, w, l, sa, esz, load, NULL);
            if (!sp) return -1;
            if (load) {
                if (ein) {
                    emu_mt_touch(c, ga);
                    const unsigned char *gp = emu_mem(c, w, l, MH_SP_GLOBAL, ga, esz, 0);
                    if (!gp) return -1;
                    memcpy(sp, gp, esz);
                } else {
                    st_elem(sp, fill, (int)esz);
                }
            } else if (ein) { /* stores and reductions skip the elements outside the tensor */
                emu_mt_touch(c, ga);
                unsigned char *gp = emu_mem(c, w, l, MH_SP_GLOBAL, ga, esz, 1);
                if (!gp) return -1;
                if (red) emu_atomic((mh_ptx_aop)r->redop, t, gp, ld_elem(sp, (int)esz), 0);
                else memcpy(gp, sp, esz);
            }
        }
        for (uint32_t i = 1; i < MH_TMAP_MAX_RANK && ++k[i] == n[i]; i++) k[i] = 0;
    }
    return 0;
}

/* `size` bytes of global memory at addr (16-byte aligned), inside one allocation. */
static unsigned char *bulk_global(ctx *c, warp *w, int l, uint64_t addr, uint64_t size, int write)
{
    alloc *al = emu_find_alloc(c->d, addr, size); /* (global writes are not counted in c->writes: emu_mem) */
    if (al) return al->host + (addr - al->addr);
    if (!emu_mem(c, w, l, MH_SP_GLOBAL, addr, 16, write)) return NULL; /* names the nearest allocation */
    return emu_fault(c, w, l, "cp.async.bulk of %llu bytes at 0x%llx runs past the end of its allocation",
                     (unsigned long long)size, (unsigned long long)addr);
}

/* A bulk copy (or reduction) of `size` bytes for lane l; *bytes what complete_tx counts. */
static int bulk_copy(ctx *c, warp *w, int l, const mh_ptx_tma *r, uint64_t *bytes)
{
    uint64_t dst = address(c, w, &r->dst, l), src = address(c, w, &r->src, l), size = val(c, w, &r->size, l);
    *bytes = size;
    if (size % 16 || dst % 16 || src % 16)
        return emu_fault(c, w, l, "cp.async.bulk: size %llu, destination 0x%llx and source 0x%llx must be multiples "
                         "of 16", (unsigned long long)size, (unsigned long long)dst, (unsigned long long)src), -1;
    if (!size) return 0;
    if (size > UINT32_MAX) return emu_fault(c, w, l, "cp.async.bulk of %llu bytes", (unsigned long long)size), -1;
    int to_global = r->kind == MH_TMA_BULK_STORE || (r->kind == MH_TMA_BULK_RED && r->to_global);
    const unsigned char *sp = r->kind == MH_TMA_BULK_LOAD ? bulk_global(c, w, l, src, size, 0)
                                                          : emu_dsmem(c, w, l, src, (uint32_t)size, 0, NULL);
    if (!sp) return -1;
    if (r->kind == MH_TMA_BULK_LOAD) emu_mt_touch_range(c, src, size);
    if (to_global) emu_mt_touch_range(c, dst, size);
    unsigned char *dp = to_global ? bulk_global(c, w, l, dst, size, 1)
                                  : emu_dsmem(c, w, l, dst, (uint32_t)size, 1, NULL);
    if (!dp) return -1;
    if (r->kind != MH_TMA_BULK_RED) {
        memmove(dp, sp, size);
        return 0;
    }
    mh_ptx_type t = (mh_ptx_type)r->type;
    int eb = elem_bytes(t);
    if (!red_ok(r->redop, t) || (r->redop >= AOP_AND && mh_ptx_type_is_signed(t)))
        return emu_fault(c, w, l, "cp.reduce.async.bulk .%s.%s: not in the ISA", aop_name(r->redop),
                         mh_ptx_type_name(t)), -1;
    for (uint64_t i = 0; i < size; i += (uint64_t)eb) emu_atomic((mh_ptx_aop)r->redop, t, dp + i, ld_elem(sp + i, eb), 0);
    return 0;
}

/* ---- virtual time (docs/DESIGN.md "TMA on emu: virtual time") ---- */

/* When a copy of `bytes` issued now on warp w's SM ends: the SM's TMA unit takes copies one after
 * another; the bytes come through the L2 (and HBM for the lines it misses) with the bandwidths
 * shared by every SM, or through the SM-to-SM network (emu_memtime.c, the device model's figures). */
static uint64_t tma_time(ctx *c, warp *w, uint64_t bytes, int dsmem, int store)
{
    uint64_t end = emu_mt_tma_end(c, w->b->sm, c->now, bytes,
                                  dsmem ? EMU_MT_TMA_DSMEM : store ? EMU_MT_TMA_STORE : EMU_MT_TMA_LOAD);
    if (end > w->bulk.pending) w->bulk.pending = end;
    return end;
}

/* The complete_tx of a copy, on the mbarrier at shared::cluster address addr, at `due`. */
static int tma_complete(ctx *c, warp *w, int l, uint64_t addr, uint64_t bytes, uint64_t due, uint32_t need)
{
    blk *owner = NULL;
    if (!emu_dsmem(c, w, l, addr, 8, 0, &owner)) return -1;
    vsm *sm = owner->sm; /* the queue of the SM whose block's mbarrier it lands on */
    if (sm->ntma_q == sm->cap_tma_q) {
        uint32_t cap = sm->cap_tma_q ? 2 * sm->cap_tma_q : 64;
        tma_done *q = realloc(sm->tma_q, cap * sizeof *q);
        if (!q) {
            mh_fail(c->e, MH_E_NO_MEMORY, "emu: out of memory for bulk copies in flight");
            c->faulted = 1;
            return -1;
        }
        sm->tma_q = q;
        sm->cap_tma_q = cap;
    }
    if (!owner->tma_n++ || due < owner->tma_due) owner->tma_due = due;
    sm->tma_q[sm->ntma_q++] = (tma_done){due, owner, (uint32_t)(addr % EMU_DSMEM_RANK), (uint32_t)bytes,
                                       (uint32_t)(c->cur - c->code), need, {w->b->ctaid[0], w->b->ctaid[1], w->b->ctaid[2]},
                                       w->index * WARP + (uint32_t)l, w->b->sm->clock0 + c->now};
    return 0;
}

/* The copies of block b that have landed by `now`, in the queue's order (the same order whatever
 * the index: the entries are scanned as they lie); b's count and earliest due let an operation
 * with none due skip the scan. */
int emu_tma_settle(ctx *c, warp *w, blk *b, uint64_t now)
{
    if (!b->tma_n || b->tma_due > now) return 0;
    uint64_t next = UINT64_MAX;
    vsm *sm = b->sm;
    for (uint32_t i = 0; i < sm->ntma_q;) {
        tma_done d = sm->tma_q[i];
        if (d.b != b) { i++; continue; }
        if (d.due > now) {
            if (d.due < next) next = d.due;
            i++;
            continue;
        }
        sm->tma_q[i] = sm->tma_q[--sm->ntma_q]; /* in no order: the last one takes its place */
        b->tma_n--;
        if (c->hz && emu_hz_land(c, w, &d, b->shared + d.off)) return -1; /* strict: more bytes than expected */
        if (c->flows) emu_flows_tma_source(c, &d);
        int rc = emu_mbar_tx_host(c, w, 0, b->shared + d.off, d.bytes);
        if (c->flows) emu_flows_tma_source(c, NULL);
        if (rc) return -1;
    }
    b->tma_due = next;
    return 0;
}

uint64_t emu_tma_next_due(const ctx *c, const blk *b)
{
    (void)c;
    return b->tma_n ? b->tma_due : UINT64_MAX;
}

void emu_tma_forget(ctx *c, blk *b)
{
    (void)c;
    vsm *sm = b->sm;
    for (uint32_t i = 0; i < sm->ntma_q;)
        if (sm->tma_q[i].b == b) sm->tma_q[i] = sm->tma_q[--sm->ntma_q];
        else i++;
    b->tma_n = 0;
    b->tma_due = UINT64_MAX;
}

/* cp.async.bulk.commit_group: the group's end (the last 8 per warp); wait_group N: the warp waits
 * until at most N of its groups are pending (.read: the same; emu's copies read their source at issue) */
static void bulk_commit(warp *w)
{
    w->bulk.group[w->bulk.ngroups % 8] = w->bulk.pending;
    w->bulk.ngroups++;
}

static void bulk_wait(ctx *c, warp *w, uint32_t n)
{
    if (w->bulk.ngroups <= n || n >= 8) return; /* (a group 8 or more back: not kept, taken as done) */
    uint64_t end = w->bulk.group[(w->bulk.ngroups - 1 - n) % 8];
    if (end > c->now + c->cost) c->cost = end - c->now;
}

/* ---- tensor-map edits (grouped GEMMs point one map at each group's matrices in turn) ---- */

/* tensormap.replace for lane l: one field of the map at the record's address (global or shared::cta),
 * a map made by dev:tensor_map (emu's encoding: the field's slot in it, mh_emu_tensor_map).  The map
 * is not checked as a whole: a kernel edits it field by field (a new address before its new
 * dimensions), and the TMA copy that reads it checks it.  Ordinals past the map's rank are written
 * to their slots and never read (CUTLASS writes all five dimensions of a rank-2 map). */
static int map_replace(ctx *c, warp *w, int l, const mh_ptx_tma *r)
{
    uint64_t a = address(c, w, &r->dst, l), v = val(c, w, &r->size, l);
    if (a % 64) return emu_fault(c, w, l, "tensormap.replace: the tensor map at 0x%llx is not 64-byte aligned",
                                 (unsigned long long)a), -1;
    unsigned char *p = r->to_global ? bulk_global(c, w, l, a, MH_TMAP_BYTES, 1)
                                    : emu_dsmem(c, w, l, a, MH_TMAP_BYTES, 1, NULL);
    if (!p) return -1;
    if (memcmp(p, magic, 8) || p[8] != 1)
        return emu_fault(c, w, l, "tensormap.replace: the 128 bytes at 0x%llx are not a tensor map made on emu "
                         "(emu's own encoding, docs/emu.md)", (unsigned long long)a), -1;
    if (r->type == MH_PT_B32) v &= 0xffffffffu;
    switch (r->field) {
    case MH_TMAP_ADDRESS: put_u64(p + 16, v); break;
    case MH_TMAP_DIM: put_u64(p + 24 + 8 * r->ord, v); break;
    case MH_TMAP_STRIDE: put_u64(p + 64 + 8 * r->ord, v); break;
    case MH_TMAP_BOX: {
        if (v > 0xffff) return emu_fault(c, w, l, "tensormap.replace.box_dim %u: %llu is not a box size", r->ord,
                                         (unsigned long long)v), -1;
        uint16_t b = (uint16_t)v;
        memcpy(p + 96 + 2 * r->ord, &b, 2);
        break;
    }
    default: /* MH_TMAP_ESTRIDE */
        if (v > 0xff) return emu_fault(c, w, l, "tensormap.replace.element_stride %u: %llu is not an element stride",
                                       r->ord, (unsigned long long)v), -1;
        p[106 + r->ord] = (unsigned char)v;
        break;
    }
    if (r->to_global) emu_mt_touch_range(c, a, MH_TMAP_BYTES);
    return 0;
}

/* tensormap.cp_fenceproxy for lane l: the 128 bytes of the map in shared memory to global memory (the
 * fence orders nothing more on emu: its copies are made at issue). */
static int map_copy(ctx *c, warp *w, int l, const mh_ptx_tma *r)
{
    uint64_t dst = address(c, w, &r->dst, l), src = address(c, w, &r->src, l);
    if (dst % 64 || src % 64)
        return emu_fault(c, w, l, "tensormap.cp_fenceproxy: 0x%llx and 0x%llx must be 64-byte aligned",
                         (unsigned long long)dst, (unsigned long long)src), -1;
    const unsigned char *sp = emu_dsmem(c, w, l, src, MH_TMAP_BYTES, 0, NULL);
    if (!sp) return -1;
    unsigned char *dp = bulk_global(c, w, l, dst, MH_TMAP_BYTES, 1);
    if (!dp) return -1;
    memmove(dp, sp, MH_TMAP_BYTES);
    emu_mt_touch_range(c, dst, MH_TMAP_BYTES);
    return 0;
}

/* An operand of the record with its register the kernel's (emu renumbers from the kernel's first). */
static void renumber(const ctx *c, mh_ptx_opnd *o)
{
    if ((o->kind == MH_OPK_REG || o->kind == MH_OPK_ADDR) && o->reg != UINT32_MAX) o->reg -= c->reg_lo;
}

int emu_tma_exec(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t emask)
{
    mh_ptx_tma rec = c->m->tma[in->callee];
    const mh_ptx_tma *r = &rec;
    mh_ptx_opnd *all[] = {&rec.dst, &rec.src, &rec.map, &rec.size, &rec.mbar, &rec.mask, &rec.coord[0], &rec.coord[1],
                          &rec.coord[2], &rec.coord[3], &rec.coord[4]};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) renumber(c, all[i]);
    if (r->kind == MH_TMA_COMMIT || r->kind == MH_TMA_WAIT) {
        if (r->kind == MH_TMA_COMMIT) bulk_commit(w);
        else bulk_wait(c, w, (uint32_t)r->size.imm);
        return 0;
    }
    if (r->kind == MH_TMA_MAP_REPLACE || r->kind == MH_TMA_MAP_COPY) {
        c->cost += 2;
        for (int l = 0; l < WARP; l++)
            if ((emask >> l & 1) && (r->kind == MH_TMA_MAP_REPLACE ? map_replace(c, w, l, r) : map_copy(c, w, l, r)))
                return -1;
        c->progress++;
        return 0;
    }
    c->cost += 2;
    for (int l = 0; l < WARP; l++) {
        if (!(emask >> l & 1)) continue;
        uint64_t bytes = 0;
        int tensor = r->kind == MH_TMA_TENSOR_LOAD || r->kind == MH_TMA_TENSOR_STORE || r->kind == MH_TMA_TENSOR_RED;
        uint16_t ctamask = r->multicast ? (uint16_t)val(c, w, &r->mask, l) : 0;
        uint64_t due = 0;
        int store = r->kind == MH_TMA_TENSOR_STORE || r->kind == MH_TMA_TENSOR_RED || r->kind == MH_TMA_BULK_STORE ||
                    (r->kind == MH_TMA_BULK_RED && r->to_global);
        emu_mt_tma_begin(c); /* the global lines the copy touches (one block's, for a multicast) */
        if (r->multicast) { /* the same shared offsets in every block of the mask: read once, written n times */
            uint64_t off = address(c, w, &r->dst, l) & (EMU_DSMEM_RANK - 1), boff = address(c, w, &r->mbar, l) & (EMU_DSMEM_RANK - 1);
            for (uint32_t rank = 0; rank < 16; rank++) {
                if (!(ctamask >> rank & 1)) continue;
                if (rank >= emu_cluster_size(c))
                    return emu_fault(c, w, l, "multicast: CTA mask 0x%x names rank %u; the cluster has %u blocks",
                                     ctamask, rank, emu_cluster_size(c)), -1;
                uint64_t base = (uint64_t)(rank + 1) * EMU_DSMEM_RANK;
                if (tensor ? tensor_copy(c, w, l, r, base + off, &bytes) : 0) return -1;
                if (!due) due = tma_time(c, w, bytes, 0, 0);
                if (!tensor) {
                    mh_ptx_tma one = *r;
                    one.dst.reg = UINT32_MAX, one.dst.sym = -1, one.dst.param = -1, one.dst.imm = (int64_t)(base + off);
                    if (bulk_copy(c, w, l, &one, &bytes)) return -1;
                    if (!due) due = tma_time(c, w, bytes, 0, 0);
                }
                uint32_t need = 0;
                if (c->hz && emu_hz_copy(c, w, l, base + off, bytes, base + boff, &need)) return -1;
                if (tma_complete(c, w, l, base + boff, bytes, due, need)) return -1;
            }
            continue;
        }
        if (tensor) {
            uint64_t smem = address(c, w, r->kind == MH_TMA_TENSOR_LOAD ? &r->dst : &r->src, l);
            if (tensor_copy(c, w, l, r, smem, &bytes)) return -1;
        } else if (bulk_copy(c, w, l, r, &bytes)) {
            return -1;
        }
        due = tma_time(c, w, bytes, r->kind == MH_TMA_BULK_S2S || (r->kind == MH_TMA_BULK_RED && !r->to_global), store);
        uint32_t need = 0;
        int to_shared = r->kind == MH_TMA_TENSOR_LOAD || r->kind == MH_TMA_BULK_LOAD || r->kind == MH_TMA_BULK_S2S ||
                        (r->kind == MH_TMA_BULK_RED && !r->to_global);
        if (c->hz && to_shared && r->mbar.kind == MH_OPK_ADDR &&
            emu_hz_copy(c, w, l, address(c, w, &r->dst, l), bytes, address(c, w, &r->mbar, l), &need))
            return -1;
        if (r->mbar.kind == MH_OPK_ADDR && tma_complete(c, w, l, address(c, w, &r->mbar, l), bytes, due, need)) return -1;
    }
    c->progress++;
    return 0;
}
