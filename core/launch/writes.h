/* writes.h - which pointer parameters a kernel may write memory through, from
 * its PTX, so that a launch that runs again (the retry of a trace that did not
 * fit) can first put back exactly the arrays the first run may have changed. */
#ifndef MH_WRITES_H
#define MH_WRITES_H

#include <stdint.h>
#include "frontend/ptx.h"

#define MH_WRITES_UNKNOWN UINT64_MAX /* cannot be told: any parameter */

/* Bit i set: the kernel may store or do atomics through an address derived from parameter i.
 * MH_WRITES_UNKNOWN when that cannot be told (calls, instructions kept as text, addresses
 * loaded from memory, more than 62 parameters); 0 when it writes no global memory. */
uint64_t mh_kernel_written_params(const mh_ptx_module *m, const mh_ptx_func *f);

#endif
