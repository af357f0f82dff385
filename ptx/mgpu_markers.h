/* mgpu_markers.h - region markers for mgpu-harness: PTX comments, so an
 * unprofiled build runs unchanged; the harness instruments them when
 * profiling is on.  MGPU_BEGIN("load") ... MGPU_END("load"). */
#pragma once
#define MGPU_BEGIN(name) asm volatile("// @mgpu begin " name ::: "memory")
#define MGPU_END(name) asm volatile("// @mgpu end " name ::: "memory")
