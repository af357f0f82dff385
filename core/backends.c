/* backends.c - the list of backends and the choice of one by name (see
 * backends.h).  Adding a backend is one line in mh_backends. */
#include "backends.h"
#include "cuda/cuda_backend.h"
#include "emu/emu_backend.h"

#include <stdlib.h>
#include <string.h>

const mh_backend *const mh_backends[] = {&mh_cuda_backend, &mh_emu_backend, NULL};

static const mh_backend *find(const char *name, size_t n)
{
    for (int i = 0; mh_backends[i]; i++)
        if (strlen(mh_backends[i]->name) == n && !strncmp(mh_backends[i]->name, name, n)) return mh_backends[i];
    return NULL;
}

int mh_device_open(const char *kind, mh_device_opts *o, mh_device *out, mh_error *e)
{
    memset(out, 0, sizeof *out);
    if (!strcmp(kind, "auto")) {
        for (int i = 0; mh_backends[i]; i++) {
            mh_error_clear(e);
            if (!mh_backends[i]->open(o, out, e)) return 0;
        }
        return -1;
    }
    const char *colon = strchr(kind, ':');
    size_t n = colon ? (size_t)(colon - kind) : strlen(kind);
    const mh_backend *b = find(kind, n);
    if (b && colon) { /* "cuda:N": a device number */
        char *end;
        long v = strtol(colon + 1, &end, 10);
        if (colon[1] < '0' || colon[1] > '9' || *end || v > 1000000) b = NULL;
        else o->ordinal = (int)v;
    }
    if (!b || (colon && !strcmp(b->name, "emu")))
        return mh_fail(e, MH_E_BAD_ARGUMENT, "unknown backend \"%s\" (auto, emu, cuda, cuda:N)", kind);
    return b->open(o, out, e);
}
