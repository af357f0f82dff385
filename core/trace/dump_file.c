/* dump_file.c - buffer file + meta file -> trace JSON file. */
#include "trace/dump_file.h"

#include <stdlib.h>
#include <string.h>

/* The calibration words of the spec's traces (MH_CALIB_WORDS each), read like
 * a trace buffer (.bin or .npy); the file must hold exactly that many. */
static uint32_t *read_calib(const char *path, const mh_spec *spec, mh_error *e)
{
    mh_tracebuf cb;
    if (mh_tracebuf_open(&cb, path, e)) return NULL;
    /* spec validation keeps num_traces x entries (>= 3) x 4 within 64 bits */
    uint64_t want = spec->num_traces * MH_CALIB_WORDS;
    uint32_t *w = NULL;
    if (cb.words != want) {
        mh_fail(e, MH_E_BAD_BUFFER, "%s: %s bytes of calibration words; %llu traces need %llu (4 uint32 each)", path,
                cb.words > want ? "more" : "fewer", (unsigned long long)spec->num_traces,
                (unsigned long long)want * 4);
    } else {
        mh_spec cs = *spec;
        cs.entries = MH_CALIB_WORDS;
        cs.words = want;
        w = malloc(want ? want * 4 : 4);
        if (!w) mh_fail(e, MH_E_NO_MEMORY, "out of memory");
        else if (mh_tracebuf_bind(&cb, &cs, e)) {
            free(w);
            w = NULL;
        }
        for (uint64_t t = 0; w && t < spec->num_traces; t++) {
            const uint32_t *words = mh_tracebuf_trace(&cb, t, e);
            if (!words) {
                free(w);
                w = NULL;
            } else {
                memcpy(w + t * MH_CALIB_WORDS, words, MH_CALIB_WORDS * 4);
            }
        }
    }
    mh_tracebuf_close(&cb);
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
    /* before anything is read or written: the output must not be one of the inputs */
    const char *inputs[] = {req->buffer_path, req->meta_path, req->calib_path};
    if (mh_out_refuse_input(req->out_path, "the output", inputs, 3, e)) return -1;
    if (mh_meta_load_file(&r->meta, req->meta_path, e)) return -1;
    if (req->calib_path && req->mode == MH_DUMP_MOSAIC) {
        mh_fail(e, MH_E_BAD_ARGUMENT, "%s", "calibration words are for the default mode (Mosaic's convention takes "
                "cycles as ns)");
        goto fail_meta;
    }
    if (req->counter_bins && req->mode == MH_DUMP_MOSAIC) {
        mh_fail(e, MH_E_BAD_ARGUMENT, "%s", "counters are for the default mode (Mosaic's dump has none)");
        goto fail_meta;
    }
    r->clock_ghz = req->clock_ghz > 0 ? req->clock_ghz : r->meta.clock_ghz;
    if (mh_tracebuf_open(&buf, req->buffer_path, e)) goto fail_meta;
    if (mh_tracebuf_bind(&buf, &r->meta.spec, e)) goto fail_buf;
    /* after the buffer: its size has vouched for the number of traces */
    if (req->calib_path && !(calib = read_calib(req->calib_path, &r->meta.spec, e))) goto fail_buf;
    if (req->want_summary && mh_summary_init(&r->summary, &r->meta.names, e)) goto fail_buf;
    if (mh_out_open(&out, req->out_path, e)) goto fail_sum;

    mh_dump_opts opts = {
        .mode = req->mode,
        .clock_ghz = r->clock_ghz,
        .summary = req->want_summary ? &r->summary : NULL,
        .calib = calib,
        .counter_bins = req->counter_bins,
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
