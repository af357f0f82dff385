/* dump_file.c - buffer file + meta file -> trace JSON file. */
#include "dump_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The calibration words of num_traces traces: exactly 16 bytes each. */
static uint32_t *read_calib(const char *path, uint64_t num_traces, mh_error *e)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        mh_fail(e, MH_E_IO, "%s: cannot open", path);
        return NULL;
    }
    uint64_t want;
    if (mh_mul_u64(num_traces, 16, &want) || want > ((uint64_t)1 << 40)) {
        fclose(f);
        mh_fail(e, MH_E_BAD_BUFFER, "%s: %llu traces of calibration words is more than this harness reads", path,
                (unsigned long long)num_traces);
        return NULL;
    }
    unsigned char *raw = malloc(want + 1);
    size_t got = raw ? fread(raw, 1, want + 1, f) : 0;
    fclose(f);
    if (!raw) {
        mh_fail(e, MH_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    if (got != want) {
        free(raw);
        mh_fail(e, MH_E_BAD_BUFFER, "%s: %s bytes of calibration words; %llu traces need %llu (4 uint32 each)", path,
                got > want ? "more" : "fewer", (unsigned long long)num_traces, (unsigned long long)want);
        return NULL;
    }
    uint32_t *w = malloc(want ? want : 1);
    if (w)
        for (uint64_t i = 0; i < num_traces * 4; i++)
            w[i] = (uint32_t)raw[4 * i] | (uint32_t)raw[4 * i + 1] << 8 | (uint32_t)raw[4 * i + 2] << 16 |
                   (uint32_t)raw[4 * i + 3] << 24;
    free(raw);
    if (!w) mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    return w;
}

int mh_dump_files(const mh_dump_request *req, mh_dump_result *r, mh_error *e)
{
    mh_tracebuf buf;
    mh_out out;
    int rc;
    uint32_t *calib = NULL;
    memset(r, 0, sizeof *r);
    mh_error_clear(e);
    if (mh_meta_load_file(&r->meta, req->meta_path, e)) return -1;
    if (req->calib_path && req->mode == MH_DUMP_MOSAIC) {
        mh_fail(e, MH_E_BAD_ARGUMENT, "%s", "calibration words are for the default mode (Mosaic's convention takes "
                "cycles as ns)");
        goto fail_meta;
    }
    r->clock_ghz = req->clock_ghz > 0 ? req->clock_ghz : r->meta.clock_ghz;
    if (mh_tracebuf_open(&buf, req->buffer_path, e)) goto fail_meta;
    if (mh_tracebuf_bind(&buf, &r->meta.spec, e)) goto fail_buf;
    /* after the buffer: its size has vouched for the number of traces */
    if (req->calib_path && !(calib = read_calib(req->calib_path, r->meta.spec.num_traces, e))) goto fail_buf;
    if (req->want_summary && mh_summary_init(&r->summary, &r->meta.names, e)) goto fail_buf;
    if (mh_out_open(&out, req->out_path, e)) goto fail_sum;

    mh_dump_opts opts = {
        .mode = req->mode,
        .clock_ghz = r->clock_ghz,
        .summary = req->want_summary ? &r->summary : NULL,
        .calib = calib,
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
    free(calib);
    if (r->stats.clock_ghz_measured > 0 && r->stats.clock_measured_used) r->clock_ghz = r->stats.clock_ghz_measured;
    return 0;

fail_sum:
    if (req->want_summary) mh_summary_free(&r->summary);
fail_buf:
    mh_tracebuf_close(&buf);
fail_meta:
    free(calib);
    mh_meta_free(&r->meta);
    return -1;
}

void mh_dump_result_free(mh_dump_result *r)
{
    if (r->summary.stats) mh_summary_free(&r->summary);
    mh_meta_free(&r->meta);
    memset(r, 0, sizeof *r);
}
