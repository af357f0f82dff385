/* mgpu_markers.h - region markers for mgpu-harness: PTX comments, so an
 * unprofiled build runs unchanged; the harness instruments them when
 * profiling is on.  MGPU_BEGIN("load") ... MGPU_END("load"); MGPU_ROLE("producer"). */
#pragma once
#define MGPU_BEGIN(name) asm volatile("// @mgpu begin " name ::: "memory")
#define MGPU_END(name) asm volatile("// @mgpu end " name ::: "memory")
/* MGPU_ROLE("producer"): names the role of the lane (warp or warpgroup) that runs it, e.g. at the
 * top of a warp-specialised branch; the timeline labels the lane "block 0 · warpgroup 0 · producer".
 * One word: letters, digits, '_', '-', '.'. */
#define MGPU_ROLE(name) asm volatile("// @mgpu role " name ::: "memory")
