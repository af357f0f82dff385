/* test_names.c - name table and JSON string encoding (as Python's json). */
#include <stdlib.h>
#include "check.h"
#include "trace/names.h"

static void quote_is(const char *in, const char *want)
{
    char *q = mh_json_quote(in, NULL);
    CHECK_STR(q, want);
    free(q);
}

int main(void)
{
    quote_is("load", "\"load\"");
    quote_is("a\"b\\c", "\"a\\\"b\\\\c\"");
    quote_is("tab\there\nx", "\"tab\\there\\nx\"");
    quote_is("\x01\x7f", "\"\\u0001\\u007f\"");
    quote_is("caf\xc3\xa9", "\"caf\\u00e9\"");
    quote_is("\xf0\x9f\x98\x80", "\"\\ud83d\\ude00\"");
    CHECK(mh_json_quote("bad\xc3", NULL) == NULL);      /* truncated sequence */
    CHECK(mh_json_quote("\xc0\xaf", NULL) == NULL);     /* overlong */
    CHECK(mh_json_quote("\xed\xa0\x80", NULL) == NULL); /* surrogate */

    mh_names t;
    mh_error e;
    mh_error_clear(&e);
    mh_names_init(&t);
    CHECK(mh_names_add(&t, "store", 2, &e) == 0);
    CHECK(mh_names_add(&t, "Init", 0, &e) == 0);
    CHECK(mh_names_add(&t, "load", 1, &e) == 0);
    CHECK(mh_names_finish(&t, &e) == 0);
    CHECK(t.dense != NULL);
    CHECK_STR(mh_names_get(&t, 1)->name, "load");
    CHECK(mh_names_get(&t, 3) == NULL);
    CHECK(mh_names_get(&t, 0x7fffffff) == NULL);
    mh_names_free(&t);

    /* sparse ids use binary search */
    mh_names_init(&t);
    CHECK(mh_names_add(&t, "far", 0x7fffffff, &e) == 0);
    CHECK(mh_names_add(&t, "near", 5, &e) == 0);
    CHECK(mh_names_finish(&t, &e) == 0);
    CHECK(t.dense == NULL);
    CHECK_STR(mh_names_get(&t, 0x7fffffff)->name, "far");
    CHECK_STR(mh_names_get(&t, 5)->name, "near");
    CHECK(mh_names_get(&t, 6) == NULL);
    mh_names_free(&t);

    mh_names_init(&t);
    CHECK(mh_names_add(&t, "big", 0x80000000ull, &e) == MH_E_BAD_META);
    CHECK_CONTAINS(e.message, "below 2^31");
    CHECK(mh_names_add(&t, "a", 3, &e) == 0);
    CHECK(mh_names_add(&t, "b", 3, &e) == 0);
    CHECK(mh_names_finish(&t, &e) == MH_E_BAD_META);
    CHECK_CONTAINS(e.message, "share id 3");
    mh_names_free(&t);
    return check_report("test_names");
}
