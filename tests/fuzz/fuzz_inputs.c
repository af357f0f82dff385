/* fuzz_inputs.c - libFuzzer target: arbitrary meta JSON and .npy headers.
 * Any outcome is fine except a crash, a sanitizer report or a leak. */
#include <stdlib.h>
#include <string.h>
#include "trace/meta.h"
#include "base/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mh_error e;
    mh_npy n;
    mh_error_clear(&e);
    mh_npy_parse(data, size, &n, &e);

    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    mh_meta m;
    if (mh_meta_load_string(&m, text, "fuzz", &e) == 0) mh_meta_free(&m);
    free(text);
    return 0;
}
