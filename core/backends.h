/* backends.h - the backends this build has, and opening a device by the
 * name a user writes: "emu", "cuda", "cuda:N", or "auto" (the first CUDA
 * device where a driver and a device are found, else emu). */
#ifndef MH_BACKENDS_H
#define MH_BACKENDS_H

#include "launch/backend.h"

/* In the order "auto" tries them; NULL-terminated. */
extern const mh_backend *const mh_backends[];

/* Opens the device `kind` names (o->ordinal is set from "cuda:N").  An
 * unknown kind is bad_argument listing the choices; "auto" falls back to
 * the last backend (emu) when an earlier one cannot open. */
int mh_device_open(const char *kind, mh_device_opts *o, mh_device *out, mh_error *e);

#endif
