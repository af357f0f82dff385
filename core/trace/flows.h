/* flows.h - links between two traces' moments (Chrome trace flow events, issue 34): emu records
 * which arrive or TMA completion completed an mbarrier phase and which wait it then released, by
 * block, thread and %clock64; the default dump turns each into a pair of flow events ("s", then
 * "f" bound to its enclosing slice) between the traces of those threads. */
#ifndef MH_FLOWS_H
#define MH_FLOWS_H

#include <stdint.h>

typedef enum { MH_FLOW_ARRIVE = 0, MH_FLOW_TMA = 1 } mh_flow_kind;

typedef struct mh_trace_flow {
    uint32_t kind;                       /* mh_flow_kind: what completed the phase */
    uint32_t src_block[3], dst_block[3]; /* blockIdx of each end */
    uint32_t src_thread, dst_thread;     /* linear thread index in its block */
    uint64_t src_clock, dst_clock;       /* its SM's %clock64 (an arrive's, a TMA's issue; the wait's return) */
} mh_trace_flow;

#endif
