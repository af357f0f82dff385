/* meta.c - meta JSON reader (jansson: a maintained, strict parser that
 * reports line and column of syntax errors). */
#include "trace/meta.h"
#include "base/read_file.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

/* The JSON type of v, for messages ("a string"). */
static const char *json_type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_TRUE: case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    default: return "a number";
    }
}

/* grid/block: an integer or an array of 1..3 positive integers. */
static int read_dims(json_t *root, const char *key, uint64_t out[3], mh_error *e)
{
    json_t *v = json_object_get(root, key);
    out[0] = out[1] = out[2] = 1;
    if (!v) return mh_fail(e, MH_E_BAD_META, "field \"%s\" is missing", key);
    if (json_is_integer(v)) {
        if (json_integer_value(v) < 1)
            return mh_fail(e, MH_E_BAD_META, "field \"%s\" must be a positive integer, got %lld", key,
                           (long long)json_integer_value(v));
        out[0] = (uint64_t)json_integer_value(v);
        return 0;
    }
    if (!json_is_array(v) || json_array_size(v) < 1 || json_array_size(v) > 3)
        return mh_fail(e, MH_E_BAD_META,
                       "field \"%s\" must be an array of 1 to 3 positive integers (e.g. [264, 1, 1])", key);
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *d = json_array_get(v, i);
        if (!json_is_integer(d) || json_integer_value(d) < 1)
            return mh_fail(e, MH_E_BAD_META, "field \"%s\"[%zu] must be a positive integer", key, i);
        out[i] = (uint64_t)json_integer_value(d);
    }
    return 0;
}

/* The object v of field "names" (or "roles" when role): {"NAME": id, ...}, each added to m->names. */
static int read_ids(mh_meta *m, json_t *v, int role, mh_error *e)
{
    const char *field = role ? "roles" : "names", *item = role ? "role" : "name";
    if (!json_is_object(v))
        return mh_fail(e, MH_E_BAD_META, "field \"%s\" must be an object {\"%s\": id, ...}", field, item);
    const char *key;
    json_t *id;
    json_object_foreach(v, key, id) {
        if (!json_is_integer(id) || json_integer_value(id) < 0)
            return mh_fail(e, MH_E_BAD_META, "%s[\"%s\"] must be a non-negative integer id", field, key);
        uint64_t n = (uint64_t)json_integer_value(id);
        if (role ? mh_names_add_role(&m->names, key, n, e) : mh_names_add(&m->names, key, n, e)) return -1;
    }
    return 0;
}

static int parse_root(mh_meta *m, json_t *root, mh_error *e)
{
    json_t *v;
    if (!json_is_object(root)) return mh_fail(e, MH_E_BAD_META, "top level must be a JSON object");
    if (read_dims(root, "grid", m->spec.grid, e) || read_dims(root, "block", m->spec.block, e)) return -1;

    v = json_object_get(root, "entries_per_warpgroup");
    if (!v) return mh_fail(e, MH_E_BAD_META, "field \"entries_per_warpgroup\" is missing");
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return mh_fail(e, MH_E_BAD_META, "field \"entries_per_warpgroup\" must be a non-negative integer");
    m->spec.entries = (uint64_t)json_integer_value(v);

    /* Captures from JAX before trace scopes existed have no trace_scope: they
     * are warpgroup traces. */
    m->spec.scope = MH_SCOPE_WARPGROUP;
    v = json_object_get(root, "trace_scope");
    if (v && (!json_is_string(v) || mh_scope_parse(json_string_value(v), &m->spec.scope)))
        return mh_fail(e, MH_E_BAD_META, "field \"trace_scope\" must be \"warp\" or \"warpgroup\"");

    /* "partial": true (trace:save of an instrumented kernel): a block's last, partial warp or
     * warpgroup has a trace too (mh_spec.partial); absent: blocks must be whole, as in JAX */
    v = json_object_get(root, "partial");
    if (v && !json_is_boolean(v)) return mh_fail(e, MH_E_BAD_META, "field \"partial\" must be true or false");
    m->spec.partial = v && json_is_true(v);

    v = json_object_get(root, "clock_ghz");
    if (v) {
        if (!json_is_number(v)) /* a string was reported as "not 0" (issue 36) */
            return mh_fail(e, MH_E_BAD_META, "field \"clock_ghz\" must be an SM clock rate from %g to %g GHz, not %s",
                           MH_CLOCK_GHZ_MIN, MH_CLOCK_GHZ_MAX, json_type_name(v));
        if (!mh_clock_ghz_ok(json_number_value(v)))
            return mh_fail(e, MH_E_BAD_META, "field \"clock_ghz\" must be an SM clock rate from %g to %g GHz, not %.17g",
                           MH_CLOCK_GHZ_MIN, MH_CLOCK_GHZ_MAX, json_number_value(v));
        m->clock_ghz = json_number_value(v);
    }

    v = json_object_get(root, "names");
    if (!v) return mh_fail(e, MH_E_BAD_META, "field \"names\" is missing");
    if (read_ids(m, v, 0, e)) return -1;
    /* the lanes' roles (an instrumented kernel's "// @mgpu role NAME"): ids beside the names' */
    v = json_object_get(root, "roles");
    if (v && read_ids(m, v, 1, e)) return -1;
    if (mh_names_finish(&m->names, e)) return -1;
    if (mh_spec_validate(&m->spec, e)) {
        e->code = MH_E_BAD_META;
        return -1;
    }
    return 0;
}

static int finish(mh_meta *m, json_t *root, json_error_t *je, const char *origin, mh_error *e)
{
    int rc;
    if (!root) {
        if (json_error_code(je) == json_error_cannot_open_file)
            rc = mh_fail(e, MH_E_IO, "cannot read: %s", je->text);
        else {
            rc = mh_fail(e, MH_E_BAD_META, "invalid JSON at line %d, column %d: %s", je->line, je->column,
                         je->text);
            e->line = je->line;
        }
    } else {
        rc = parse_root(m, root, e) ? -1 : 0;
        json_decref(root);
    }
    if (rc) {
        mh_error_prefix(e, origin);
        mh_meta_free(m);
    }
    return rc ? -1 : 0;
}

int mh_meta_load_file(mh_meta *m, const char *path, mh_error *e)
{
    json_error_t je;
    memset(m, 0, sizeof *m);
    mh_names_init(&m->names);
    size_t len; /* read here: a folder or a missing file is an I/O error naming it, not "invalid JSON" */
    char *text = mh_read_file(path, 0, &len, e);
    if (!text) return -1;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    free(text);
    return finish(m, root, &je, path, e);
}

int mh_meta_load_string(mh_meta *m, const char *json, const char *origin, mh_error *e)
{
    json_error_t je;
    memset(m, 0, sizeof *m);
    mh_names_init(&m->names);
    json_t *root = json_loads(json, JSON_REJECT_DUPLICATES, &je);
    return finish(m, root, &je, origin, e);
}

void mh_meta_free(mh_meta *m) { mh_names_free(&m->names); }
