/* emu_counters.h - exact counters of a launch on emu (mh_emu_launch.stats): what
 * Nsight Compute estimates from hardware counters, counted from every access emu
 * checks anyway, per instruction, then summed per source line (.loc/.file) or,
 * in a module without line information, per PTX line.
 *
 * Rules (docs/DESIGN.md says where they come from):
 * - instructions are PTX instructions, not SASS (ptx__* names); a warp
 *   instruction counts once, its threads are the lanes active (pred_on: those
 *   whose guard held);
 * - a global (or local) request is one warp instruction that accesses that
 *   space with at least one lane; its sectors are the distinct 32-byte sectors
 *   the lanes touch.  Local memory is counted as the GPU lays it out: the
 *   4-byte words of a warp's threads interleaved, so all lanes at one offset
 *   are 4 sectors.  A generic access counts in the space its address falls in;
 * - shared: the warp's access is served in phases of 128 bytes (one phase of
 *   32 lanes for accesses of up to 4 bytes, lanes 0-15 and 16-31 for 8, four
 *   quarters of 8 lanes for 16); a phase takes as many wavefronts as the most
 *   distinct 4-byte words any one of the 32 banks (4 bytes wide) holds among
 *   its lanes' words (one word read by many lanes is a broadcast: free), and
 *   bank conflicts are the wavefronts beyond one per phase with active lanes. */
#ifndef MH_EMU_COUNTERS_H
#define MH_EMU_COUNTERS_H

#include <stdint.h>
#include "base/error.h"
#include "frontend/ptx.h"
#include "launch/backend.h"

enum {
    MH_CT_INST, MH_CT_THREAD_INST, MH_CT_PRED_ON,
    MH_CT_GLD_REQ, MH_CT_GLD_SEC, MH_CT_GLD_BYTES,
    MH_CT_GST_REQ, MH_CT_GST_SEC, MH_CT_GST_BYTES,
    MH_CT_GATOM_REQ, MH_CT_GATOM_SEC,
    MH_CT_GRED_REQ, MH_CT_GRED_SEC,
    MH_CT_LDGSTS_REQ, MH_CT_LDGSTS_SEC,
    MH_CT_LLD_REQ, MH_CT_LLD_SEC,
    MH_CT_LST_REQ, MH_CT_LST_SEC,
    MH_CT_SLD_REQ, MH_CT_SLD_WF, MH_CT_SLD_BC,
    MH_CT_SST_REQ, MH_CT_SST_WF, MH_CT_SST_BC,
    MH_CT_SATOM_REQ, MH_CT_SATOM_WF,
    MH_CT_LEFT_OUT, /* warp instructions of the instrumentation's code: left out of every other counter */
    /* stall reasons (emu_stalls.c): warp-cycles charged to an instruction, Nsight Compute's
     * smsp__pcsamp_warps_issue_stalled_* names; MH_CT_STALL_FIRST .. MH_CT_COUNT - 1 */
    MH_CT_STALL_SELECTED, MH_CT_STALL_NOT_SELECTED, MH_CT_STALL_LONG_SB, MH_CT_STALL_SHORT_SB,
    MH_CT_STALL_LG_THROTTLE, MH_CT_STALL_MIO_THROTTLE, MH_CT_STALL_MATH, MH_CT_STALL_WAIT, MH_CT_STALL_BARRIER,
    MH_CT_STALL_MEMBAR, MH_CT_STALL_SLEEPING, MH_CT_STALL_BRANCH, MH_CT_STALL_MISC,
    MH_CT_COUNT
};
#define MH_CT_STALL_FIRST MH_CT_STALL_SELECTED
#define MH_CT_STALL_PREFIX "smsp__pcsamp_warps_issue_stalled_"

extern const char *const mh_ct_names[MH_CT_COUNT];

/* Distinct values among ids[0 .. n) (sorted in place). */
uint32_t mh_ct_distinct(uint64_t *ids, uint32_t n);

/* Shared memory: the wavefronts a warp's access takes (the rule above); *phases: the
 * phases with active lanes.  addr[i] is lane lane[i]'s byte offset, size its bytes. */
uint32_t mh_ct_wavefronts(const uint64_t *addr, const uint8_t *lane, uint32_t n, uint32_t size, uint32_t *phases);

/* What instruction `in` of module text `text` is to the counters (issue 24): the user's
 * (MH_CT_USER), code the instrumentation added (MH_CT_ADDED: it names a __mgpu register,
 * parameter or label, or a "// mgpu:" comment follows it on its line; core/instrument/emit.c's
 * contract; the "// @mgpu: ..." comments it adds too), or an added branch that stands for the user's instruction after it
 * (MH_CT_STAND_IN: counted as that one, which is then not counted itself). */
enum { MH_CT_USER, MH_CT_ADDED, MH_CT_STAND_IN };
int mh_ct_kind(const char *text, const mh_ptx_insn *in);

/* Sums per-instruction counters (ncode x MH_CT_COUNT, in the linked code's order) into
 * rows per source line; *out is the caller's (out->release frees it).  The instrumentation's
 * code (mh_ct_kind) is left out of the rows and the totals: its warp instructions are the
 * total's MH_CT_LEFT_OUT. */
int mh_ct_build(const mh_ptx_module *m, const mh_ptx_insn *code, uint32_t ncode, const uint64_t *per_insn,
                mh_launch_counts **out, mh_error *e);

#endif
