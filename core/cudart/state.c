/* state.c - the stand-in's one state: created at the first call (emu with the
 * virtual SMs exec asked for), what exec asked through the environment, the
 * lock every entry point takes, and the last and sticky errors. */
#include "cudart/cudart.h"
#include "cudart/foreign_libs.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cr_state st;
static int made;
static pthread_mutex_t mu = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

void cr_lock(void) { pthread_mutex_lock(&mu); }
void cr_unlock(void) { pthread_mutex_unlock(&mu); }

void cr_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("mgpu cudart: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    fflush(stderr);
    va_end(ap);
}

static void at_exit(void)
{
    cr_lock();
    cr_capture_finish();
    cr_unlock();
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

cr_state *cr_get(void)
{
    if (made) return st.init_failed ? NULL : &st;
    made = 1;
    st.capture_dir = env("MGPU_CUDART_CAPTURE");
    st.trace_dir = env("MGPU_CUDART_TRACE");
    st.stats = env("MGPU_CUDART_STATS") != NULL;
    st.launches_path = env("MGPU_CUDART_LAUNCHES");
    const char *sms = env("MGPU_CUDART_SMS");
    if (sms) {
        char *end;
        unsigned long v = strtoul(sms, &end, 10);
        if (*end || v < 1 || v > 1024) cr_say("MGPU_CUDART_SMS=%s is not a count of SMs from 1 to 1024: using %d", sms,
                                            MH_EMU_DEFAULT_SMS);
        else st.sms = (uint32_t)v;
    }
    /* the device model (NULL: the default) and parameters of it set otherwise (exec --model, --model-params) */
    mh_emu_opts o = {.num_sms = st.sms, .model = env("MGPU_CUDART_MODEL"), .params_list = env("MGPU_CUDART_MODEL_PARAMS")};
    mh_error e = {0};
    st.emu = mh_emu_create(&o, &e);
    if (!st.emu) {
        cr_say("emu could not be created: %s", e.message);
        st.init_failed = 1;
        return NULL;
    }
    atexit(at_exit);
    cr_say_foreign_libraries(); /* cuBLAS and its kin say only "initialization error" */
    return &st;
}

cudaError_t cr_set(cudaError_t err, const char *fmt, ...)
{
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        fputs("mgpu cudart: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        fflush(stderr);
        va_end(ap);
    }
    if (err != cudaSuccess) st.last = err;
    return err;
}

cudaError_t cr_sticky(void) { return st.sticky; }

cudaError_t cr_from_mh(const mh_error *e)
{
    switch (e->code) {
    case MH_E_NO_MEMORY: return cudaErrorMemoryAllocation;
    case MH_E_BAD_ARGUMENT: return cudaErrorInvalidValue;
    case MH_E_PTX_SYNTAX: return cudaErrorInvalidPtx;
    case MH_E_PTX_UNSUPPORTED: return cudaErrorNotSupported;
    case MH_E_NOT_FOUND: return cudaErrorInvalidDeviceFunction;
    case MH_E_LAUNCH_FAILED: return cudaErrorLaunchOutOfResources;
    case MH_E_TIMEOUT: return cudaErrorLaunchTimeout;
    case MH_E_KERNEL_FAULT:
        if (strstr(e->message, "assert")) return cudaErrorAssert;
        if (strstr(e->message, "misaligned")) return 716; /* cudaErrorMisalignedAddress */
        if (strstr(e->message, "trap")) return cudaErrorLaunchFailure;
        return cudaErrorIllegalAddress;
    default: return cudaErrorUnknown;
    }
}

cudaError_t cr_ready(void)
{
    if (!cr_get()) return cudaErrorInitializationError;
    cr_capture_paint();
    return st.sticky;
}
