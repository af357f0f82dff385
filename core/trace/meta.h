/* meta.h - reads the meta JSON that describes a trace buffer (the format of
 * JAX Mosaic GPU's captures: grid, block, entries_per_warpgroup,
 * trace_scope, names {name: id}; optionally clock_ghz). */
#ifndef MH_META_H
#define MH_META_H

#include "base/error.h"
#include "trace/names.h"
#include "trace/spec.h"

typedef struct mh_meta {
    mh_spec spec;
    mh_names names;
    double clock_ghz;     /* SM clock rate from the meta, 0 when absent */
} mh_meta;

/* Parses META from a file; errors name the file and the field. */
int mh_meta_load_file(mh_meta *m, const char *path, mh_error *e);
/* Parses META from a string; `origin` names it in errors. */
int mh_meta_load_string(mh_meta *m, const char *json, const char *origin, mh_error *e);
void mh_meta_free(mh_meta *m);

#endif
