/* stop.h - a process-wide request to stop what is running (Ctrl-C): set from
 * a signal handler, polled by long loops (emu's launch, an output file's
 * writes) so that a kernel that never ends can still be stopped.  The only
 * other process-wide state of the core is out.c's list of temporary files
 * a signal removes. */
#ifndef MH_STOP_H
#define MH_STOP_H

#include <signal.h>

/* Async-signal-safe. */
void mh_stop_request(void);
/* Non-zero once a stop was requested (and until mh_stop_clear). */
int mh_stop_requested(void);
void mh_stop_clear(void);

#endif
