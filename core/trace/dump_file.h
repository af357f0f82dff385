/* dump_file.h - the whole `dump` operation on files, shared by the CLI and
 * the Lua binding: open the buffer and meta, dump to an atomically written
 * output, optionally gather the region summary. */
#ifndef MH_DUMP_FILE_H
#define MH_DUMP_FILE_H

#include "trace/dump.h"
#include "trace/meta.h"

typedef struct mh_dump_request {
    const char *buffer_path;
    const char *meta_path;
    const char *out_path;      /* NULL or "-": stdout */
    mh_dump_mode mode;
    double clock_ghz;          /* 0: take it from the meta, if there */
    const char *calib_path;    /* optional (default mode): an instrumented trace's calibration words,
                                * 4 little-endian uint32 per trace (trace:save writes them) */
    int want_summary;
    uint32_t counter_bins;     /* default mode: "in flight" counter tracks over this many bins (0: none) */
    mh_warn_fn warn;
    void *warn_ctx;
} mh_dump_request;

typedef struct mh_dump_result {
    mh_meta meta;
    mh_summary summary;        /* valid when want_summary */
    mh_dump_stats stats;
    double clock_ghz;          /* the rate used, 0 if cycles */
} mh_dump_result;

/* On failure nothing is written (no partial file) and r holds nothing to
 * free; on success free r with mh_dump_result_free. */
int mh_dump_files(const mh_dump_request *req, mh_dump_result *r, mh_error *e);
void mh_dump_result_free(mh_dump_result *r);

#endif
