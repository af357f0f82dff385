/* emu_ptxas.h - what ptxas says of a module's kernels (ptxas -v: registers, stack,
 * spills, shared memory), so that emu reports registers a GPU would use (not the PTX's
 * virtual ones) and its SMs hold as many blocks as a GPU's would.  ptxas is looked for
 * in $MGPU_PTXAS ("none": never), then PATH, $CUDA_HOME/bin, /usr/local/cuda/bin; its
 * output is cached by a hash of the PTX (and the architecture and ptxas path) in
 * $MGPU_CACHE, else $XDG_CACHE_HOME/mgpu-harness, else ~/.cache/mgpu-harness, as
 * ptxas-<hash>.txt.  Without ptxas the figures are unknown, and say why. */
#ifndef MH_EMU_PTXAS_H
#define MH_EMU_PTXAS_H

#include <stddef.h>

typedef struct mh_ptxas_kernel {
    char *name;
    int regs, stack, spill_stores, spill_loads, smem, barriers;
    int setmaxnreg_ignored; /* ptxas dropped its setmaxnreg instructions (C7507: to keep the registers the
                             * code needs at entry); on a GPU they then do nothing */
} mh_ptxas_kernel;

typedef struct mh_ptxas_info {
    int ok;                      /* ptxas ran and accepted the module */
    char note[256];              /* when not: why ("ptxas not found ...", its first error) */
    char arch[16];               /* what it compiled for */
    mh_ptxas_kernel *k;
    size_t n;
} mh_ptxas_info;

/* Never fails: out->ok says whether the figures are known. */
void mh_ptxas_info_get(const char *ptx, size_t len, const char *target, mh_ptxas_info *out);
void mh_ptxas_info_free(mh_ptxas_info *info);
const mh_ptxas_kernel *mh_ptxas_find(const mh_ptxas_info *info, const char *name);
/* Parses ptxas -v output (exposed for the tests). */
void mh_ptxas_parse(const char *log, mh_ptxas_info *out);

#endif
