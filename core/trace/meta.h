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

/* The SM clock rates the harness takes (GHz), wherever a rate is given: the meta's
 * clock_ghz, dump --clock-ghz, the Lua API's clock_ghz=.  A GPU's SM clock lies well
 * inside; 1e-300 (every time 0 ns) or 1e308 is a mistake, refused. */
#define MH_CLOCK_GHZ_MIN 0.1
#define MH_CLOCK_GHZ_MAX 10.0
static inline int mh_clock_ghz_ok(double g) { return g >= MH_CLOCK_GHZ_MIN && g <= MH_CLOCK_GHZ_MAX; }

#endif
