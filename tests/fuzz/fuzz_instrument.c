/* fuzz_instrument.c - libFuzzer target: arbitrary text through the PTX front
 * end and the marker instrumentation, both scopes.  Besides crashes, leaks
 * and sanitizer reports it stops on two broken promises: a module without
 * markers must come back byte for byte, a rewritten module (in both record
 * layouts, with probes or without) must parse again, and its lines must map back into the original in order.  Every instrumented kernel is then run on emu with a trace buffer
 * (one block of 128 threads, 16 entries per trace, an instruction budget).
 * And the front end's marker records must be every marker comment, none dropped:
 * checked against a scan of the text of this file's own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "emu/emu.h"
#include "instrument/instrument.h"
#include "frontend/ptx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void run_instrumented(const mh_ptx_module *m, const mh_instrumented *r)
{
    mh_error e;
    mh_emu_opts o = {.num_sms = 2, .max_warp_insns = 20000};
    mh_emu *d = mh_emu_create(&o, &e);
    if (!d) return;
    for (uint32_t i = 0; i < m->nfuncs; i++) {
        const mh_ptx_func *f = &m->funcs[i];
        if (!f->is_entry || !f->defined || f->nparams > 11 || !mh_instrumented_has(r, f->name)) continue;
        uint64_t vals[11];
        mh_emu_arg args[11];
        for (uint32_t k = 0; k < f->nparams; k++) {
            vals[k] = 0;
            if (f->params[k].size == 8) mh_emu_alloc(d, 4096, &vals[k], &e); /* user buffers, trace, calib */
            args[k].data = &vals[k];
            args[k].size = f->params[k].size <= 8 ? f->params[k].size : 8;
        }
        vals[f->nparams - MH_INSTRUMENT_PARAMS] += r->trace_shift; /* aligned records: the buffer at + 4 */
        vals[f->nparams - MH_INSTRUMENT_PARAMS + 1] = 16; /* __mgpu_entries: 4 traces x 16 x 4 bytes fit */
        mh_emu_launch l = {{1, 1, 1}, {128, 1, 1}, 256, args, f->nparams, 0};
        mh_emu_run(d, m, f->name, &l, NULL, &e);
    }
    mh_emu_destroy(d);
}

/* Every "//" comment outside strings and block comments whose text (after
 * blanks) starts with "@mgpu" must be a record, at its offset and line, in
 * order, and nothing else. */
static void check_records(const mh_ptx_module *m, const char *t, size_t len)
{
    size_t k = 0;
    uint32_t line = 1;
    for (size_t i = 0; i < len; i++) {
        if (t[i] == '\n') line++;
        else if (t[i] == '"') { /* a string ends at its quote or the line's end */
            while (i + 1 < len && t[i + 1] != '"' && t[i + 1] != '\n') i++;
            if (i + 1 < len && t[i + 1] == '"') i++;
        } else if (t[i] == '/' && i + 1 < len && t[i + 1] == '*') {
            for (i += 2; i + 1 < len && !(t[i] == '*' && t[i + 1] == '/'); i++) line += t[i] == '\n';
            i++;
        } else if (t[i] == '/' && i + 1 < len && t[i + 1] == '/') {
            size_t q = i + 2;
            while (q < len && (t[q] == ' ' || t[q] == '\t')) q++;
            if (len - q >= 5 && !memcmp(t + q, "@mgpu", 5)) {
                if (k >= m->nmarkers || m->markers[k].off != i || m->markers[k].line != line) {
                    fprintf(stderr, "marker comment at offset %zu (line %u) is not record %zu\n", i, line, k);
                    abort();
                }
                k++;
            }
            while (i + 1 < len && t[i + 1] != '\n') i++;
        }
    }
    if (k != m->nmarkers) {
        fprintf(stderr, "%zu marker records for %zu marker comments\n", m->nmarkers, k);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mh_ptx_module m;
    mh_error e;
    if (mh_ptx_parse(&m, (const char *)data, size, "fuzz.ptx", &e)) return 0;
    check_records(&m, (const char *)data, size);
    /* probes on whatever the input is: the kernel probe by default, every loop, the barriers */
    static const mh_probe probes[] = {{MH_PROBE_LOOP, "loop", NULL, 0, NULL, NULL, NULL, 0, 0},
                                      {MH_PROBE_LOOP, "whole", NULL, 1, NULL, NULL, NULL, 0, 0},
                                      {MH_PROBE_AROUND, "sync", NULL, 0, "bar.sync", NULL, NULL, 0, 0}};
    for (int s = 0; s < 8; s++) { /* both scopes, both record layouts, without and with probes */
        mh_instrumented r;
        mh_instrument_opts io = {.scope = s & 1 ? MH_SCOPE_WARPGROUP : MH_SCOPE_WARP, .aligned = (s >> 1) & 1};
        if (s >= 4) io.kernel_probe = 1, io.probes = probes + (s & 2 ? 2 : 0), io.nprobes = s & 2 ? 1 : 2;
        if (mh_instrument_with(&m, &io, &r, &e)) {
            /* the rewrite's own check (issue 30): a bug of ours.  Known by the message's start, which
             * names the module and nothing the input chose: a marker's name may hold the same words
             * (the fuzzer made one, and a marker error naming it was taken for this) */
            static const char readback[] = "fuzz.ptx: the instrumentation wrote PTX that does not read back";
            if (e.code == MH_E_PTX_UNSUPPORTED && !strncmp(e.message, readback, sizeof readback - 1)) {
                fprintf(stderr, "%s\n", e.message);
                abort();
            }
            continue;
        }
        if (!r.markers && !r.probe_points && (r.len != size || memcmp(r.text, data, size))) {
            fprintf(stderr, "a module without markers changed\n");
            abort();
        }
        /* the line map back: within the original, never going backwards */
        uint32_t orig_lines = 1, lines = 1, prev = 1;
        for (size_t i = 0; i < size; i++) orig_lines += data[i] == '\n';
        for (size_t i = 0; i < r.len; i++) lines += r.text[i] == '\n';
        for (uint32_t l = 1; l <= lines; l++) {
            uint32_t o = mh_instrumented_line(&r, l, NULL);
            if (o < prev || o > orig_lines) {
                fprintf(stderr, "line %u maps to %u (previous %u, %u lines)\n", l, o, prev, orig_lines);
                abort();
            }
            prev = o;
        }
        mh_ptx_module again;
        if (r.markers || r.probe_points) {
            if (mh_ptx_parse(&again, r.text, r.len, "fuzz.ptx", &e)) {
                fprintf(stderr, "the rewritten module does not parse: %s\n", e.message);
                abort();
            }
            run_instrumented(&again, &r);
            mh_ptx_free(&again);
        }
        mh_instrumented_free(&r);
    }
    mh_ptx_free(&m);
    return 0;
}
