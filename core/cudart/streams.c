/* streams.c - streams and events.  emu runs every launch and copy to its end
 * when it is issued, so a stream is a checked handle, synchronizing returns at
 * once and queries say "done".  An event records the virtual time so far
 * (the sum of the launches' virtual times, emu's clock; copies take none), so
 * cudaEventElapsedTime is the launches' virtual time between two events in
 * milliseconds: a model's, not a GPU's (docs/cudart.md). */
#include "cudart/cudart.h"

#include <stdlib.h>
#include <string.h>

#define STREAM_MAGIC 0x5354524dU
#define EVENT_MAGIC 0x4556544eU

/* attr: the values cudaStreamSetAttribute stored, by attribute id (cudaLaunchAttributeValue: 64 bytes) */
#define STREAM_ATTRS 17
struct CUstream_st { unsigned magic; unsigned flags; int priority; unsigned char attr[STREAM_ATTRS][64]; };
struct CUevent_st { unsigned magic; unsigned flags; int recorded; double t_ns; };

/* The handles made and not yet destroyed: a handle is checked against these, never dereferenced
 * before (a garbage handle is cudaErrorInvalidResourceHandle, not a crash). */
static void **handles;
static size_t nhandles, cap_handles;

static int known(const void *h)
{
    for (size_t i = nhandles; i-- > 0;)
        if (handles[i] == h) return 1;
    return 0;
}
static void forget(const void *h)
{
    for (size_t i = nhandles; i-- > 0;)
        if (handles[i] == h) { handles[i] = handles[--nhandles]; return; }
}

int cr_stream_ok(cudaStream_t s)
{
    uintptr_t v = (uintptr_t)s;
    return v <= 2 /* 0, cudaStreamLegacy, cudaStreamPerThread */ || (known(s) && s->magic == STREAM_MAGIC);
}

static int event_ok(cudaEvent_t e) { return e && known(e) && e->magic == EVENT_MAGIC; }

static cudaError_t stream_create(cudaStream_t *out, unsigned flags, int priority, const char *call)
{
    if (!out) return cr_set(cudaErrorInvalidValue, "%s: the pointer to the stream is NULL", call);
    struct CUstream_st *s = calloc(1, sizeof *s);
    if (!s) return cr_set(cudaErrorMemoryAllocation, "%s: out of memory", call);
    s->magic = STREAM_MAGIC;
    s->flags = flags;
    s->priority = priority;
    if (cr_push(&handles, &nhandles, &cap_handles, s)) {
        free(s);
        return cr_set(cudaErrorMemoryAllocation, "%s: out of memory", call);
    }
    *out = s;
    return cudaSuccess;
}
CR_EXPORT cudaError_t cudaStreamCreate(cudaStream_t *s);
cudaError_t cudaStreamCreate(cudaStream_t *s) { CR_API(stream_create(s, 0, 0, "cudaStreamCreate")); }
CR_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags)
{
    CR_API(stream_create(s, flags, 0, "cudaStreamCreateWithFlags"));
}
CR_EXPORT cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned flags, int priority);
cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned flags, int priority)
{
    CR_API(stream_create(s, flags, priority, "cudaStreamCreateWithPriority"));
}

static cudaError_t stream_check(cudaStream_t s, const char *call)
{
    return cr_stream_ok(s) ? cudaSuccess : cr_set(cudaErrorInvalidResourceHandle, "%s: %p is not a stream", call,
                                                  (void *)s);
}
static cudaError_t stream_destroy(cudaStream_t s)
{
    if ((uintptr_t)s <= 2 || !cr_stream_ok(s))
        return cr_set(cudaErrorInvalidResourceHandle, "cudaStreamDestroy: %p is not a stream of cudaStreamCreate",
                      (void *)s);
    s->magic = 0;
    forget(s);
    free(s);
    return cudaSuccess;
}
CR_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamDestroy(cudaStream_t s) { CR_API(stream_destroy(s)); }
CR_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s) { CR_API(stream_check(s, "cudaStreamSynchronize")); }
CR_EXPORT cudaError_t cudaStreamQuery(cudaStream_t s);
cudaError_t cudaStreamQuery(cudaStream_t s) { CR_API(stream_check(s, "cudaStreamQuery")); }
static cudaError_t stream_wait(cudaStream_t s, cudaEvent_t e)
{
    cudaError_t err = stream_check(s, "cudaStreamWaitEvent");
    if (!err && !event_ok(e)) err = cr_set(cudaErrorInvalidResourceHandle, "cudaStreamWaitEvent: %p is not an event",
                                           (void *)e);
    return err;
}
CR_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags);
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags)
{
    (void)flags;
    CR_API(stream_wait(s, e));
}
static cudaError_t stream_priority(cudaStream_t s, int *p)
{
    cudaError_t err = stream_check(s, "cudaStreamGetPriority");
    if (!err && p) *p = (uintptr_t)s <= 2 ? 0 : s->priority;
    return err;
}
CR_EXPORT cudaError_t cudaStreamGetPriority(cudaStream_t s, int *p);
cudaError_t cudaStreamGetPriority(cudaStream_t s, int *p) { CR_API(stream_priority(s, p)); }
static cudaError_t stream_flags(cudaStream_t s, unsigned *f)
{
    cudaError_t err = stream_check(s, "cudaStreamGetFlags");
    if (!err && f) *f = (uintptr_t)s <= 2 ? 0 : s->flags;
    return err;
}
CR_EXPORT cudaError_t cudaStreamGetFlags(cudaStream_t s, unsigned *f);
cudaError_t cudaStreamGetFlags(cudaStream_t s, unsigned *f) { CR_API(stream_flags(s, f)); }

/* cudaStreamSet/GetAttribute: the ids valid for streams (cuda 13's driver_types.h: access policy window,
 * synchronization policy, priority, memory sync domain and map, NVLink scheduling hint) are kept and
 * given back; they are hints emu's model does not act on (its L2 has no persisting lines), and the
 * priority is the stream's (cudaStreamGetPriority). */
static unsigned char default_attr[3][STREAM_ATTRS][64]; /* the streams 0, cudaStreamLegacy, cudaStreamPerThread */
static cudaError_t stream_attr(cudaStream_t s, int id, void *value, int set)
{
    const char *call = set ? "cudaStreamSetAttribute" : "cudaStreamGetAttribute";
    cudaError_t err = stream_check(s, call);
    if (err) return err;
    if (!value) return cr_set(cudaErrorInvalidValue, "%s: the value pointer is NULL", call);
    if (id != 1 && id != 3 && id != 8 && id != 9 && id != 10 && id != 16)
        return cr_set(cudaErrorInvalidValue, "%s: attribute %d is not one of a stream's (1, 3, 8, 9, 10, 16)", call, id);
    int dflt = (uintptr_t)s <= 2;
    unsigned char *slot = dflt ? default_attr[(uintptr_t)s][id] : s->attr[id];
    if (id == 8) { /* the priority: the stream's own */
        int *pr = dflt ? NULL : &s->priority, p0 = 0;
        if (set && pr) memcpy(pr, value, sizeof *pr);
        memset(slot, 0, 64);
        memcpy(slot, pr ? pr : &p0, sizeof p0);
    } else if (set) {
        memcpy(slot, value, 64);
    }
    if (!set) memcpy(value, slot, 64);
    return cudaSuccess;
}
CR_EXPORT cudaError_t cudaStreamSetAttribute(cudaStream_t s, int id, const void *value);
cudaError_t cudaStreamSetAttribute(cudaStream_t s, int id, const void *value)
{
    CR_API(stream_attr(s, id, (void *)(uintptr_t)value, 1));
}
CR_EXPORT cudaError_t cudaStreamGetAttribute(cudaStream_t s, int id, void *value);
cudaError_t cudaStreamGetAttribute(cudaStream_t s, int id, void *value) { CR_API(stream_attr(s, id, value, 0)); }

/* cudaCtxResetPersistingL2Cache: emu's L2 keeps no persisting lines (the windows above are not acted
 * on), so there is nothing to reset */
CR_EXPORT cudaError_t cudaCtxResetPersistingL2Cache(void);
cudaError_t cudaCtxResetPersistingL2Cache(void) { CR_API(cudaSuccess); }

CR_EXPORT cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaDeviceSynchronize(void) { CR_API(cudaSuccess); }
CR_EXPORT cudaError_t cudaThreadSynchronize(void);
cudaError_t cudaThreadSynchronize(void) { CR_API(cudaSuccess); }

/* ---- events --------------------------------------------------------------------- */

static cudaError_t event_create(cudaEvent_t *out, unsigned flags, const char *call)
{
    if (!out) return cr_set(cudaErrorInvalidValue, "%s: the pointer to the event is NULL", call);
    struct CUevent_st *e = calloc(1, sizeof *e);
    if (!e) return cr_set(cudaErrorMemoryAllocation, "%s: out of memory", call);
    e->magic = EVENT_MAGIC;
    e->flags = flags;
    if (cr_push(&handles, &nhandles, &cap_handles, e)) {
        free(e);
        return cr_set(cudaErrorMemoryAllocation, "%s: out of memory", call);
    }
    *out = e;
    return cudaSuccess;
}
CR_EXPORT cudaError_t cudaEventCreate(cudaEvent_t *e);
cudaError_t cudaEventCreate(cudaEvent_t *e) { CR_API(event_create(e, 0, "cudaEventCreate")); }
CR_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags)
{
    CR_API(event_create(e, flags, "cudaEventCreateWithFlags"));
}
static cudaError_t event_record(cudaEvent_t e, cudaStream_t s, const char *call)
{
    if (!event_ok(e)) return cr_set(cudaErrorInvalidResourceHandle, "%s: %p is not an event", call, (void *)e);
    cudaError_t err = stream_check(s, call);
    if (err) return err;
    e->recorded = 1;
    e->t_ns = cr_get()->vtime_ns;
    return cudaSuccess;
}
CR_EXPORT cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) { CR_API(event_record(e, s, "cudaEventRecord")); }
CR_EXPORT cudaError_t cudaEventRecordWithFlags(cudaEvent_t e, cudaStream_t s, unsigned flags);
cudaError_t cudaEventRecordWithFlags(cudaEvent_t e, cudaStream_t s, unsigned flags)
{
    (void)flags;
    CR_API(event_record(e, s, "cudaEventRecordWithFlags"));
}
static cudaError_t event_check(cudaEvent_t e, const char *call)
{
    return event_ok(e) ? cudaSuccess : cr_set(cudaErrorInvalidResourceHandle, "%s: %p is not an event", call, (void *)e);
}
CR_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t e);
cudaError_t cudaEventSynchronize(cudaEvent_t e) { CR_API(event_check(e, "cudaEventSynchronize")); }
CR_EXPORT cudaError_t cudaEventQuery(cudaEvent_t e);
cudaError_t cudaEventQuery(cudaEvent_t e) { CR_API(event_check(e, "cudaEventQuery")); }
static cudaError_t event_destroy(cudaEvent_t e)
{
    cudaError_t err = event_check(e, "cudaEventDestroy");
    if (err) return err;
    e->magic = 0;
    forget(e);
    free(e);
    return cudaSuccess;
}
CR_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaEventDestroy(cudaEvent_t e) { CR_API(event_destroy(e)); }
static cudaError_t elapsed(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    if (!ms) return cr_set(cudaErrorInvalidValue, "cudaEventElapsedTime: ms is NULL");
    cudaError_t err = event_check(a, "cudaEventElapsedTime");
    if (!err) err = event_check(b, "cudaEventElapsedTime");
    if (err) return err;
    if (!a->recorded || !b->recorded)
        return cr_set(cudaErrorInvalidResourceHandle, "cudaEventElapsedTime: an event that was never recorded");
    if ((a->flags | b->flags) & 2 /* cudaEventDisableTiming */)
        return cr_set(cudaErrorInvalidResourceHandle, "cudaEventElapsedTime: an event created with "
                      "cudaEventDisableTiming");
    *ms = (float)((b->t_ns - a->t_ns) / 1e6);
    return cudaSuccess;
}
CR_EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) { CR_API(elapsed(ms, a, b)); }

/* Nothing is ever being captured into a graph (graphs are not supported). */
static cudaError_t is_capturing(cudaStream_t s, int *status)
{
    cudaError_t err = stream_check(s, "cudaStreamIsCapturing");
    if (!err && status) *status = 0; /* cudaStreamCaptureStatusNone */
    return err;
}
CR_EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t s, int *status);
cudaError_t cudaStreamIsCapturing(cudaStream_t s, int *status) { CR_API(is_capturing(s, status)); }
CR_EXPORT cudaError_t cudaStreamAttachMemAsync(cudaStream_t s, void *p, size_t n, unsigned flags);
cudaError_t cudaStreamAttachMemAsync(cudaStream_t s, void *p, size_t n, unsigned flags)
{
    (void)p, (void)n, (void)flags;
    CR_API(stream_check(s, "cudaStreamAttachMemAsync"));
}
/* A host function on a stream runs when everything before it is done: at once. */
static cudaError_t host_func(cudaStream_t s, void (*fn)(void *), void *data)
{
    cudaError_t err = stream_check(s, "cudaLaunchHostFunc");
    if (err) return err;
    if (!fn) return cr_set(cudaErrorInvalidValue, "cudaLaunchHostFunc: fn is NULL");
    fn(data);
    return cudaSuccess;
}
CR_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t s, void (*fn)(void *), void *data);
cudaError_t cudaLaunchHostFunc(cudaStream_t s, void (*fn)(void *), void *data) { CR_API(host_func(s, fn, data)); }
static cudaError_t add_callback(cudaStream_t s, void (*fn)(cudaStream_t, cudaError_t, void *), void *data)
{
    cudaError_t err = stream_check(s, "cudaStreamAddCallback");
    if (err) return err;
    if (!fn) return cr_set(cudaErrorInvalidValue, "cudaStreamAddCallback: callback is NULL");
    fn(s, cudaSuccess, data);
    return cudaSuccess;
}
CR_EXPORT cudaError_t cudaStreamAddCallback(cudaStream_t s, void (*fn)(cudaStream_t, cudaError_t, void *), void *data,
                                            unsigned flags);
cudaError_t cudaStreamAddCallback(cudaStream_t s, void (*fn)(cudaStream_t, cudaError_t, void *), void *data,
                                  unsigned flags)
{
    (void)flags;
    CR_API(add_callback(s, fn, data));
}
CR_ALIAS(cudaEventRecord_ptsz, cudaEventRecord)
CR_ALIAS(cudaEventRecordWithFlags_ptsz, cudaEventRecordWithFlags)
CR_ALIAS(cudaLaunchHostFunc_ptsz, cudaLaunchHostFunc)
CR_ALIAS(cudaStreamAddCallback_ptsz, cudaStreamAddCallback)
CR_ALIAS(cudaStreamAttachMemAsync_ptsz, cudaStreamAttachMemAsync)
CR_ALIAS(cudaStreamGetFlags_ptsz, cudaStreamGetFlags)
CR_ALIAS(cudaStreamGetAttribute_ptsz, cudaStreamGetAttribute)
CR_ALIAS(cudaStreamGetPriority_ptsz, cudaStreamGetPriority)
CR_ALIAS(cudaStreamIsCapturing_ptsz, cudaStreamIsCapturing)
CR_ALIAS(cudaStreamQuery_ptsz, cudaStreamQuery)
CR_ALIAS(cudaStreamSetAttribute_ptsz, cudaStreamSetAttribute)
CR_ALIAS(cudaStreamSynchronize_ptsz, cudaStreamSynchronize)
CR_ALIAS(cudaStreamWaitEvent_ptsz, cudaStreamWaitEvent)
