/* emu_backend.h - emu behind the backend interface (launch/backend.h). */
#ifndef MH_EMU_BACKEND_H
#define MH_EMU_BACKEND_H

#include "launch/backend.h"

extern const mh_backend mh_emu_backend;

#endif
