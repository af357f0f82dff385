/* test_fixtures.c - the real JAX Mosaic GPU captures from an H200
 * (tests/fixtures/mosaic-h200): the Mosaic-compatible dump must give the same
 * JSON value as JAX's own output (and, as it happens, the same bytes); the
 * default dump must give a balanced, valid trace with the same events. */
#include "check.h"
#include "trace/dump_file.h"
#include "dump_util.h"

static const char *const cases[] = {"wg_1block", "warp_1block", "wg_264blocks_nested"};

static void one_case(const char *dir, const char *name)
{
    char buf[512], meta[512], jax[512], out[] = "/tmp/mh_test_fix_XXXXXX";
    snprintf(buf, sizeof buf, "%s/%s.bin", dir, name);
    snprintf(meta, sizeof meta, "%s/%s.meta.json", dir, name);
    snprintf(jax, sizeof jax, "%s/%s.jax.json", dir, name);
    close(mkstemp(out));

    mh_dump_request req = {.buffer_path = buf, .meta_path = meta, .out_path = out, .mode = MH_DUMP_MOSAIC};
    mh_dump_result r;
    mh_error e;
    int rc = mh_dump_files(&req, &r, &e);
    CHECK(rc == 0);
    if (rc) { fprintf(stderr, "  %s: %s\n", name, e.message); return; }
    uint64_t events = r.stats.events;
    mh_dump_result_free(&r);

    size_t glen = 0, jlen = 0;
    char *got = read_file_all(out, &glen), *want = read_file_all(jax, &jlen);
    CHECK(got && want);
    json_error_t je;
    json_t *g = json_loads(got, 0, &je), *w = json_loads(want, 0, &je);
    CHECK(g && w && json_equal(g, w));
    CHECK(json_array_size(json_object_get(w, "traceEvents")) == events);
    int same_bytes = glen == jlen && memcmp(got, want, glen) == 0;
    CHECK(same_bytes);
    fprintf(stderr, "  %s: %llu events, same JSON value as JAX%s\n", name, (unsigned long long)events,
            same_bytes ? ", same bytes" : "");
    json_decref(g);
    free(got);

    /* default mode: same events, balanced per thread, names on every pid/tid */
    req.mode = MH_DUMP_DEFAULT;
    req.clock_ghz = 1.98;
    req.want_summary = 1;
    CHECK(mh_dump_files(&req, &r, &e) == 0);
    got = read_file_all(out, NULL);
    g = json_loads(got, 0, &je);
    CHECK(g != NULL);
    json_t *ev = json_object_get(g, "traceEvents");
    size_t nb = 0, ne = 0, nmeta = 0;
    for (size_t i = 0; i < json_array_size(ev); i++) {
        const char *ph = json_string_value(json_object_get(json_array_get(ev, i), "ph"));
        nb += !strcmp(ph, "B");
        ne += !strcmp(ph, "E");
        nmeta += !strcmp(ph, "M");
    }
    CHECK(nb == ne && nb + ne == events);
    CHECK(nmeta > 0);
    uint64_t regions = 0;
    for (size_t i = 0; i < r.summary.names->n; i++) regions += mh_summary_row(&r.summary, i).count;
    CHECK(regions == nb);
    mh_dump_result_free(&r);
    json_decref(g);
    json_decref(w);
    free(got);
    free(want);
    unlink(out);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_fixtures FIXTURE_DIR\n");
        return 2;
    }
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) one_case(argv[1], cases[i]);
    return check_report("test_fixtures");
}
