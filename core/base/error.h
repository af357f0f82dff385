/* error.h - error values of the core: a stable code, a readable message and
 * the facts a caller needs to act on it (required/capacity entries, trace,
 * line).  Every core function that can fail fills an mh_error and returns
 * non-zero; nothing in the core prints or exits. */
#ifndef MH_ERROR_H
#define MH_ERROR_H

#include <stdint.h>

typedef enum {
    MH_OK = 0,
    MH_E_BAD_ARGUMENT,      /* a caller passed something invalid (CLI, Lua) */
    MH_E_BAD_BUFFER,        /* trace buffer file unreadable in form or size */
    MH_E_BAD_META,          /* meta JSON missing a field or of a wrong type */
    MH_E_BAD_TRACE,         /* trace content inconsistent (unknown name id, unbalanced end) */
    MH_E_INSUFFICIENT_SPACE,/* a trace needed more entries than it had */
    MH_E_ODD_EVENTS,        /* a trace counted an odd number of event words */
    MH_E_IO,                /* reading or writing a file failed */
    MH_E_NO_MEMORY,
    MH_E_PTX_SYNTAX,        /* malformed PTX */
    MH_E_PTX_UNSUPPORTED,   /* PTX the front end or emu does not support */
    MH_E_NOT_FOUND,         /* no kernel of that name */
    MH_E_LAUNCH_FAILED,     /* a launch refused before running (shape, arguments, resources) */
    MH_E_KERNEL_FAULT,      /* the kernel faulted while running (bad address, trap) */
    MH_E_INTERRUPTED,       /* Ctrl-C */
    MH_E_NO_DEVICE,         /* no CUDA driver or device */
    MH_E_JIT_FAILED,        /* the driver's JIT refused a module */
    MH_E_BUSY,              /* a results folder is locked by another run */
    MH_E_TIMEOUT,           /* a launch ran past its time limit (stopped) */
    MH_E_SCRIPT_ERROR,      /* an error in a user's script (a Lua error that is not a harness error value) */
    MH_E_COUNT_
} mh_code;

typedef struct mh_error {
    mh_code code;
    int64_t required;  /* insufficient_space: entries_per_warpgroup needed */
    int64_t capacity;  /* insufficient_space: entries_per_warpgroup given  */
    int64_t trace;     /* global trace index the error is about, or -1     */
    int64_t line;      /* line in the input file, or -1                    */
    char message[1024];
} mh_error;

/* Resets e to MH_OK with no facts. */
void mh_error_clear(mh_error *e);

/* Sets code and a printf-style message; leaves the facts as they are.
 * Returns (int)code so callers can write `return mh_fail(e, ...)`. */
int mh_fail(mh_error *e, mh_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prepends "prefix: " to the message (e.g. the file name). */
void mh_error_prefix(mh_error *e, const char *prefix);

/* Stable lower-case name of a code: "insufficient_space", ... */
const char *mh_code_name(mh_code code);

/* Process exit status for a code (documented in docs/cli.md "Exit codes"). */
int mh_code_exit_status(mh_code code);

#endif
