/* stop.c - the stop request (see stop.h). */
#include "base/stop.h"

static volatile sig_atomic_t requested;

void mh_stop_request(void) { requested = 1; }
int mh_stop_requested(void) { return requested != 0; }
void mh_stop_clear(void) { requested = 0; }
