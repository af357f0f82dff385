/* capture.c - exec --capture DIR (placeholder until the capture lands). */
#include "cudart/cudart.h"

cr_capture_launch *cr_capture_before(cr_kernel *k, const cr_launch *l, const mh_emu_arg *args, uint32_t nargs)
{
    (void)k, (void)l, (void)args, (void)nargs;
    return NULL;
}
void cr_capture_after(cr_capture_launch *c, int ok) { (void)c, (void)ok; }
void cr_capture_finish(void) {}
