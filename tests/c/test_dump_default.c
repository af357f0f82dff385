/* test_dump_default.c - the default dump: cycles -> ns with a given clock,
 * 32-bit clock wrap inside a trace, 32-bit timer wrap across traces, a
 * clock that goes back, metadata names, cycles mode said plainly, synthetic
 * ends for truncated traces, and the region summary. */
#include "check.h"
#include "dump_util.h"

#include <math.h>

static mh_names names;

static json_t *events_of(const char *text)
{
    json_error_t je;
    json_t *root = json_loads(text, 0, &je);
    CHECK(root != NULL);
    if (!root) fprintf(stderr, "  invalid JSON at %d:%d: %s\n", je.line, je.column, je.text);
    return root;
}

/* The i-th non-metadata event. */
static json_t *nth_event(json_t *root, size_t i)
{
    json_t *ev = json_object_get(root, "traceEvents");
    for (size_t k = 0; k < json_array_size(ev); k++) {
        json_t *x = json_array_get(ev, k);
        if (!strcmp(json_string_value(json_object_get(x, "ph")), "M")) continue;
        if (i-- == 0) return x;
    }
    return NULL;
}

static double ts_of(json_t *root, size_t i) { return json_real_value(json_object_get(nth_event(root, i), "ts")); }

static int near(double a, double b) { return fabs(a - b) < 1e-9; }

int main(void)
{
    mh_error e;
    mosaic_names(&names);

    mh_spec s;
    mh_spec_init(&s, 2, 32, MH_SCOPE_WARP, 11);
    s.grid[1] = 1;
    CHECK(mh_spec_validate(&s, &e) == 0);
    /* trace 0: starts near the top of the 32-bit timer; its clock wraps.
     * trace 1: starts 64 ns later, after the timer wrapped; its clock goes
     * back by 100 cycles once (taken as no time passing). */
    uint32_t w[22] = {
        0xFFFFFFE0u, 5, 8,
        1, 0xFFFFFF00u,               /* load B   : 0 cycles              */
        2, 0xFFFFFF00u + 200,         /* store B  : 200 cycles            */
        0x80000002u, 0x00000100u,     /* store E  : 512 cycles (wrapped)  */
        0x80000001u, 0x00000300u,     /* load E   : 1024 cycles           */
        0x00000020u, 7, 8,
        0, 1000,                      /* Init B   : 0                     */
        0x80000000u, 2000,            /* Init E   : 1000                  */
        1, 1900,                      /* load B   : back by 100 -> 1000   */
        0x80000001u, 2100,            /* load E   : 1200                  */
    };

    /* ---- clock 2 GHz: ns = cycles / 2 ---- */
    mh_summary sum;
    mh_summary_init(&sum, &names, &e);
    char *text = dump_words(&s, &names, w, MH_DUMP_DEFAULT, 2.0, &sum, &e);
    CHECK(text != NULL);
    if (!text) { fprintf(stderr, "%s\n", e.message); return 1; }
    json_t *root = events_of(text);
    json_t *other = json_object_get(root, "otherData");
    CHECK_STR(json_string_value(json_object_get(other, "time_unit")), "ns");
    CHECK(near(json_number_value(json_object_get(other, "clock_ghz")), 2.0));
    /* trace 0 starts first (ts 0), events at 0, 100, 256, 512 ns */
    CHECK(near(ts_of(root, 0), 0.0));
    CHECK(near(ts_of(root, 1), 0.100));
    CHECK(near(ts_of(root, 2), 0.256));
    CHECK(near(ts_of(root, 3), 0.512));
    /* trace 1: 64 ns later despite the timer wrap; the backwards clock is clamped */
    CHECK(near(ts_of(root, 4), 0.064));
    CHECK(json_integer_value(json_object_get(nth_event(root, 4), "tid")) == 2);
    CHECK(json_integer_value(json_object_get(nth_event(root, 4), "pid")) == 8);
    CHECK(near(ts_of(root, 5), 0.064 + 0.500));
    CHECK(near(ts_of(root, 6), 0.064 + 0.500)); /* went back: +0 */
    CHECK(near(ts_of(root, 7), 0.064 + 0.600));
    CHECK(strstr(text, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":6,\"args\":{\"name\":\"SM 5\"}}") != NULL);
    CHECK(strstr(text, "\"tid\":2,\"args\":{\"name\":\"block 1 \xc2\xb7 warp 0\"}}") != NULL);

    /* summary in ns: load 512 ns and 100 ns, store 156 ns, Init 500 ns */
    mh_region_row r = mh_summary_row(&sum, 1);
    CHECK(r.count == 2 && r.min == 100 && r.max == 512);
    r = mh_summary_row(&sum, 2);
    CHECK(r.count == 1 && r.min == 156);
    r = mh_summary_row(&sum, 0);
    CHECK(r.count == 1 && r.min == 500);
    CHECK_STR(sum.unit, "ns");
    /* timeline: trace 0 on SM 5 from 0 to 512 ns, trace 1 on SM 7 from 64 to 664 ns */
    mh_timeline_row tl;
    CHECK(mh_summary_timeline(&sum, &tl) == 1);
    CHECK(tl.traces == 2 && tl.sms == 2 && tl.span == 664 && tl.sm_out_of_range == 0);
    CHECK(tl.sm_done_min == 512 && tl.sm_done_median == 512 && tl.sm_done_max == 664);
    CHECK(near(mh_summary_row(&sum, 1).concurrency, 612.0 / 664.0)); /* load: 512 + 100 ns inside */
    mh_summary_free(&sum);
    json_decref(root);
    free(text);

    /* ---- timeline: traces of one SM merge; a %smid out of range is counted apart ---- */
    {
        mh_spec s3;
        mh_spec_init(&s3, 3, 32, MH_SCOPE_WARP, 7);
        CHECK(mh_spec_validate(&s3, &e) == 0);
        uint32_t w3[21] = {
            1000, 4, 4, 1, 0, 0x80000001u, 100,    /* SM 4: 0 .. 100            */
            1500, 4, 4, 1, 0, 0x80000001u, 300,    /* SM 4: 500 .. 800          */
            1200, 9999, 4, 1, 0, 0x80000001u, 50,  /* SM 9999: 200 .. 250       */
        };
        mh_summary_init(&sum, &names, &e);
        text = dump_words(&s3, &names, w3, MH_DUMP_DEFAULT, 1.0, &sum, &e);
        CHECK(text != NULL);
        CHECK(mh_summary_timeline(&sum, &tl) == 1);
        CHECK(tl.traces == 3 && tl.sms == 1 && tl.sm_out_of_range == 1 && tl.span == 800);
        CHECK(tl.sm_done_min == 800 && tl.sm_done_max == 800);
        CHECK(near(mh_summary_row(&sum, 1).concurrency, 450.0 / 800.0));
        mh_summary_free(&sum);
        free(text);
    }

    /* ---- counters: "in flight" per region over 8 bins of 100 ns ---- */
    {
        mh_spec s3;
        mh_spec_init(&s3, 3, 32, MH_SCOPE_WARP, 9);
        CHECK(mh_spec_validate(&s3, &e) == 0);
        uint32_t w3[27] = {
            1000, 4, 4, 1, 0, 0x80000001u, 100, 0, 0,    /* load 0 .. 100                          */
            1500, 4, 4, 1, 0, 0x80000001u, 300, 0, 0,    /* load 500 .. 800                        */
            1200, 5, 6, 1, 0, 2, 20, 0x80000002u, 50,    /* load 200 .. (truncated at 250), store 220 .. 250 */
        };
        mh_tracebuf b;
        mh_tracebuf_memory(&b, w3, s3.words);
        CHECK(mh_tracebuf_bind(&b, &s3, &e) == 0);
        mh_dump_opts o = {.mode = MH_DUMP_DEFAULT, .clock_ghz = 1.0, .counter_bins = 8};
        text = dump_opts_to_string(&s3, &names, &b, &o, NULL, &e);
        CHECK(text != NULL);
        root = text ? events_of(text) : NULL;
        double load[9], store[9], lts[9];
        int nl = 0, ns = 0, named = 0;
        json_t *ev = json_object_get(root, "traceEvents");
        for (size_t k = 0; k < json_array_size(ev); k++) {
            json_t *x = json_array_get(ev, k);
            const char *ph = json_string_value(json_object_get(x, "ph")), *nm = json_string_value(json_object_get(x, "name"));
            if (!strcmp(ph, "M") && json_integer_value(json_object_get(x, "pid")) == 7 && !strcmp(nm, "process_name"))
                named = !strcmp(json_string_value(json_object_get(json_object_get(x, "args"), "name")), "regions in flight");
            if (strcmp(ph, "C")) continue;
            CHECK(json_integer_value(json_object_get(x, "pid")) == 7); /* after SM 5 (pid 6) */
            double v = json_number_value(json_object_get(json_object_get(x, "args"), "in flight"));
            if (!strcmp(nm, "load") && nl < 9) { lts[nl] = json_number_value(json_object_get(x, "ts")); load[nl++] = v; }
            else if (!strcmp(nm, "store") && ns < 9) store[ns++] = v;
            else CHECK(!"a counter for a name that was never in a region");
        }
        CHECK(named);
        CHECK(nl == 9 && ns == 9);
        static const double want_load[9] = {1, 0, 0.5, 0, 0, 1, 1, 1, 0}, want_store[9] = {0, 0, 0.3, 0, 0, 0, 0, 0, 0};
        for (int k = 0; k < 9 && nl == 9 && ns == 9; k++) {
            CHECK(near(load[k], want_load[k]) && near(store[k], want_store[k]) && near(lts[k], 0.1 * k));
            if (!near(load[k], want_load[k]) || !near(store[k], want_store[k]))
                fprintf(stderr, "  bin %d: load %g (want %g), store %g (want %g)\n", k, load[k], want_load[k], store[k],
                        want_store[k]);
        }
        json_decref(root);
        free(text);
        /* Mosaic mode refuses them */
        o.mode = MH_DUMP_MOSAIC;
        CHECK(dump_opts_to_string(&s3, &names, &b, &o, NULL, &e) == NULL && e.code == MH_E_BAD_ARGUMENT);
        CHECK_CONTAINS(e.message, "counters are for the default mode");
        mh_tracebuf_close(&b);
    }

    /* ---- Mosaic mode keeps no timeline (its times are not ns) ---- */
    mh_summary_init(&sum, &names, &e);
    text = dump_words(&s, &names, w, MH_DUMP_MOSAIC, 0, &sum, &e);
    CHECK(text != NULL && mh_summary_timeline(&sum, &tl) == 0 && mh_summary_row(&sum, 1).concurrency == 0);
    mh_summary_free(&sum);
    free(text);

    /* ---- no clock: cycles, and the trace says so ---- */
    text = dump_words(&s, &names, w, MH_DUMP_DEFAULT, 0, NULL, &e);
    root = events_of(text);
    other = json_object_get(root, "otherData");
    CHECK_STR(json_string_value(json_object_get(other, "time_unit")), "cycles");
    CHECK_CONTAINS(json_string_value(json_object_get(other, "note")), "SM clock cycles");
    CHECK(near(ts_of(root, 3), 1.024));
    json_decref(root);
    free(text);

    /* ---- truncated trace: open regions closed at the last event ---- */
    uint32_t tr[11] = {100, 3, 6, 0, 10, 0x80000000u, 30, 1, 50};
    mh_spec_init(&s, 1, 32, MH_SCOPE_WARP, 11);
    mh_spec_validate(&s, &e);
    mh_summary_init(&sum, &names, &e);
    text = dump_words(&s, &names, tr, MH_DUMP_DEFAULT, 1.0, &sum, &e);
    root = events_of(text);
    json_t *last = nth_event(root, 3);
    CHECK_STR(json_string_value(json_object_get(last, "name")), "load");
    CHECK_STR(json_string_value(json_object_get(last, "ph")), "E");
    CHECK(near(ts_of(root, 3), 0.040));
    CHECK(json_is_true(json_object_get(json_object_get(last, "args"), "truncated")));
    CHECK(mh_summary_row(&sum, 1).truncated == 1 && mh_summary_row(&sum, 1).count == 0);
    CHECK(mh_summary_row(&sum, 0).count == 1 && mh_summary_row(&sum, 0).min == 20);
    mh_summary_free(&sum);
    json_decref(root);
    free(text);

    /* ---- the same in Mosaic mode: a synthetic E at the last ts, no args;
     * the overhead estimate (min step 20, capped at 12, minus 1 = 11 cycles)
     * moves event k earlier by 11k cycles ---- */
    text = dump_words(&s, &names, tr, MH_DUMP_MOSAIC, 0, NULL, &e);
    CHECK_STR(text, "{\"displayTimeUnit\": \"ns\", \"traceEvents\": ["
                    "{\"name\": \"Init\", \"ph\": \"B\", \"ts\": 0.1, \"pid\": 4, \"tid\": 1}, "
                    "{\"name\": \"Init\", \"ph\": \"E\", \"ts\": 0.109, \"pid\": 4, \"tid\": 1}, "
                    "{\"name\": \"load\", \"ph\": \"B\", \"ts\": 0.118, \"pid\": 4, \"tid\": 1}, "
                    "{\"name\": \"load\", \"ph\": \"E\", \"ts\": 0.118, \"pid\": 4, \"tid\": 1}]}");
    free(text);

    /* ---- a 3-D grid names blocks by coordinates ---- */
    uint32_t g[2 * 11] = {0};
    uint32_t one[7] = {0, 0, 2, 1, 5, 0x80000001u, 9};
    mh_spec_init(&s, 1, 32, MH_SCOPE_WARP, 11);
    s.grid[2] = 2;
    mh_spec_validate(&s, &e);
    memcpy(g + 11, one, sizeof one);
    g[11 + 2] = 4;
    text = dump_words(&s, &names, g, MH_DUMP_DEFAULT, 1.0, NULL, &e);
    CHECK_CONTAINS(text, "\"name\":\"block (0,0,1) \xc2\xb7 warp 0\"");
    free(text);

    /* ---- no events at all: valid, empty ---- */
    uint32_t z[11] = {0};
    mh_spec_init(&s, 1, 32, MH_SCOPE_WARP, 11);
    mh_spec_validate(&s, &e);
    text = dump_words(&s, &names, z, MH_DUMP_DEFAULT, 1.0, NULL, &e);
    root = events_of(text);
    CHECK(json_array_size(json_object_get(root, "traceEvents")) == 0);
    json_decref(root);
    free(text);
    text = dump_words(&s, &names, z, MH_DUMP_MOSAIC, 0, NULL, &e);
    CHECK_STR(text, "{\"displayTimeUnit\": \"ns\", \"traceEvents\": []}");
    free(text);

    mh_names_free(&names);
    return check_report("test_dump_default");
}
