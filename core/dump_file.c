/* dump_file.c - buffer file + meta file -> trace JSON file. */
#include "dump_file.h"

#include <string.h>

int mh_dump_files(const mh_dump_request *req, mh_dump_result *r, mh_error *e)
{
    mh_tracebuf buf;
    mh_out out;
    int rc;
    memset(r, 0, sizeof *r);
    mh_error_clear(e);
    if (mh_meta_load_file(&r->meta, req->meta_path, e)) return -1;
    r->clock_ghz = req->clock_ghz > 0 ? req->clock_ghz : r->meta.clock_ghz;
    if (mh_tracebuf_open(&buf, req->buffer_path, e)) goto fail_meta;
    if (mh_tracebuf_bind(&buf, &r->meta.spec, e)) goto fail_buf;
    if (req->want_summary && mh_summary_init(&r->summary, &r->meta.names, e)) goto fail_buf;
    if (mh_out_open(&out, req->out_path, e)) goto fail_sum;

    mh_dump_opts opts = {
        .mode = req->mode,
        .clock_ghz = r->clock_ghz,
        .summary = req->want_summary ? &r->summary : NULL,
        .warn = req->warn,
        .warn_ctx = req->warn_ctx,
    };
    rc = mh_dump(&r->meta.spec, &r->meta.names, &buf, &opts, &out, &r->stats, e);
    if (rc) {
        mh_out_abort(&out);
        goto fail_sum;
    }
    if (mh_out_commit(&out, e)) goto fail_sum;
    mh_tracebuf_close(&buf);
    return 0;

fail_sum:
    if (req->want_summary) mh_summary_free(&r->summary);
fail_buf:
    mh_tracebuf_close(&buf);
fail_meta:
    mh_meta_free(&r->meta);
    return -1;
}

void mh_dump_result_free(mh_dump_result *r)
{
    if (r->summary.stats) mh_summary_free(&r->summary);
    mh_meta_free(&r->meta);
    memset(r, 0, sizeof *r);
}
