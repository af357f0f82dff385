/* error.c - error values: codes, names, exit statuses, message helpers. */
#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void mh_error_clear(mh_error *e)
{
    e->code = MH_OK;
    e->required = e->capacity = e->trace = e->line = -1;
    e->message[0] = '\0';
}

int mh_fail(mh_error *e, mh_code code, const char *fmt, ...)
{
    va_list ap;
    e->code = code;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
    return (int)code;
}

void mh_error_prefix(mh_error *e, const char *prefix)
{
    char tmp[sizeof e->message];
    snprintf(tmp, sizeof tmp, "%.300s: %.700s", prefix, e->message);
    memcpy(e->message, tmp, sizeof tmp);
}

static const char *const names[MH_E_COUNT_] = {
    [MH_OK] = "ok",
    [MH_E_BAD_ARGUMENT] = "bad_argument",
    [MH_E_BAD_BUFFER] = "bad_buffer",
    [MH_E_BAD_META] = "bad_meta",
    [MH_E_BAD_TRACE] = "bad_trace",
    [MH_E_INSUFFICIENT_SPACE] = "insufficient_space",
    [MH_E_ODD_EVENTS] = "odd_events",
    [MH_E_IO] = "io_error",
    [MH_E_NO_MEMORY] = "no_memory",
    [MH_E_PTX_SYNTAX] = "ptx_syntax",
    [MH_E_PTX_UNSUPPORTED] = "ptx_unsupported",
    [MH_E_NOT_FOUND] = "not_found",
    [MH_E_LAUNCH_FAILED] = "launch_failed",
    [MH_E_KERNEL_FAULT] = "kernel_fault",
    [MH_E_INTERRUPTED] = "interrupted",
    [MH_E_NO_DEVICE] = "no_device",
    [MH_E_JIT_FAILED] = "jit_failed",
    [MH_E_BUSY] = "busy",
    [MH_E_TIMEOUT] = "timeout",
    [MH_E_SCRIPT_ERROR] = "script_error",
};

const char *mh_code_name(mh_code code)
{
    return (unsigned)code < MH_E_COUNT_ ? names[code] : "unknown";
}

int mh_code_exit_status(mh_code code)
{
    switch (code) {
    case MH_OK: return 0;
    case MH_E_BAD_ARGUMENT: return 2;
    case MH_E_BAD_BUFFER:
    case MH_E_BAD_META:
    case MH_E_BAD_TRACE: return 3;
    case MH_E_INSUFFICIENT_SPACE: return 4;
    case MH_E_ODD_EVENTS: return 5;
    case MH_E_PTX_SYNTAX:
    case MH_E_PTX_UNSUPPORTED:
    case MH_E_NOT_FOUND: return 3;
    case MH_E_LAUNCH_FAILED:
    case MH_E_KERNEL_FAULT: return 6;
    case MH_E_INTERRUPTED: return 130;
    case MH_E_JIT_FAILED: return 3;
    case MH_E_NO_DEVICE: return 1;
    case MH_E_BUSY: return 1;
    case MH_E_TIMEOUT: return 6;
    case MH_E_SCRIPT_ERROR: return 7;
    case MH_E_IO:
    case MH_E_NO_MEMORY:
    default: return 1;
    }
}
