/* test_ptx_scopes.c - names local to their { } block, as the PTX ISA scopes them (issue 30,
 * item 1), on emu and in the front end's refusals:
 *  - tests/ptx/scopes/wait_inlined.ptx (nvcc -O3): CUTLASS's mbarrier wait, an asm block with
 *    its own .reg .pred P1 and labels LAB_WAIT and DONE, inlined 8 times; every copy's branches
 *    go to its own labels (they went to the first copy's: the consumer looped back to stage 0,
 *    which the instruction budget here turns into a fault), and a .b32 and a .b64 register of
 *    one name in sibling blocks keep their own types;
 *  - tests/ptx/scopes/shadow.ptx: an inner label, variable and register hide the outer ones,
 *    sibling blocks have their own, a branch reaches an enclosing block's later label;
 *  - tests/ptx/scopes/bad_*.ptx: a label, variable or register defined twice in one scope, and
 *    a branch to a label out of sight, refused at ptxas's line, naming the first definition;
 *  - probes naming a label of the inlined copies: a loop probe takes every copy's loop, a range
 *    is refused as ambiguous;
 *  - every function's blocks (mh_ptx_func.blocks) and mh_ptx_block_at; 300 sibling blocks with
 *    a DONE each (the label index grows while they are read: a label's slot was kept across
 *    the growth, and the branches of the later blocks did not find their own DONE).
 *  - tests/ptx/scopes/vector_regs.ptx: vector registers (.reg .v2 .f32 mx in an inner block, as
 *    CUTLASS's top-K softmax epilogue has it; .reg .v4 .b32 v) by element (.x .. .w, .r .. .a) and
 *    whole as ld/st operands (mx.x was an unknown name, and the .v2 was taken as one f32);
 * `test_ptx_scopes --parse FILE...` prints, for each file, "accept FILE" or "refuse FILE LINE"
 * (the front end only: tests/ptxas_check.sh compares it with ptxas).
 * argv[1]: the source folder. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "emu/emu.h"
#include "emu_util.h"
#include "frontend/ptx.h"

static int parse_only(int argc, char **argv)
{
    for (int i = 2; i < argc; i++) {
        size_t n;
        char *t = read_file_all(argv[i], &n);
        if (!t) {
            fprintf(stderr, "test_ptx_scopes: cannot read %s\n", argv[i]);
            return 1;
        }
        mh_ptx_module m;
        mh_error e;
        if (mh_ptx_parse(&m, t, n, argv[i], &e) == 0) {
            printf("accept %s\n", argv[i]);
            mh_ptx_free(&m);
        } else {
            printf("refuse %s %u\n", argv[i], (unsigned)e.line);
            fprintf(stderr, "%s\n", e.message);
        }
        free(t);
    }
    return 0;
}

/* Runs `kernel` of root/rel with one block of `threads` threads and the buffers bufs[0 .. n) of
 * words[k] words (zeroed, or in's words for the buffer `in_at`), read back into out[k]. */
static int run(const char *root, const char *rel, const char *kernel, uint32_t threads, uint32_t n, const uint32_t *words,
               int in_at, const uint32_t *in, uint32_t **out)
{
    mh_ptx_module m;
    if (parse_ptx_file(&m, root, rel)) return -1;
    mh_error e;
    mh_emu_opts o = {.num_sms = 1, .max_warp_insns = 1000000}; /* a kernel that loops back stops: a fault */
    mh_emu *d = mh_emu_create(&o, &e);
    uint64_t addr[4];
    mh_emu_arg args[4];
    for (uint32_t k = 0; k < n; k++) {
        addr[k] = emu_upload(d, (int)k == in_at ? in : NULL, words[k] * 4ull);
        args[k] = (mh_emu_arg){&addr[k], 8};
    }
    mh_emu_launch l = {{1, 1, 1}, {threads, 1, 1}, 0, args, n, 20.0};
    int rc = mh_emu_run(d, &m, kernel, &l, NULL, &e);
    if (rc) fprintf(stderr, "  %s\n", e.message);
    for (uint32_t k = 0; k < n; k++) {
        out[k] = calloc(words[k], 4);
        mh_emu_read(d, addr[k], out[k], words[k] * 4ull, &e);
    }
    mh_emu_destroy(d);
    mh_ptx_free(&m);
    return rc;
}

static void wait_inlined(const char *root)
{
    uint32_t in[256], words[3] = {256, 256, 64}, *out[3];
    for (uint32_t k = 0; k < 256; k++) in[k] = k * 3 + 1;
    CHECK(run(root, "tests/ptx/scopes/wait_inlined.ptx", "wait_inlined", 64, 3, words, 1, in, out) == 0);
    int bad = 0;
    for (uint32_t lane = 0; lane < 32; lane++) {
        uint32_t acc = 0;
        for (uint32_t s = 0; s < 8; s++) {
            acc += in[s * 32 + lane] * (s + 1);
            bad += out[0][s * 32 + lane] != acc;
        }
        uint64_t w = (uint64_t)out[2][2 * lane] | (uint64_t)out[2][2 * lane + 1] << 32;
        bad += w != ((uint64_t)lane << 32 | (lane + 7));
    }
    CHECK(bad == 0);
    if (bad) fprintf(stderr, "  wait_inlined: %d outputs wrong (out[0] = %u, out[255] = %u)\n", bad, out[0][0], out[0][255]);
    for (int k = 0; k < 3; k++) free(out[k]);
}

static void shadow(const char *root)
{
    uint32_t words[1] = {8}, *out[1];
    CHECK(run(root, "tests/ptx/scopes/shadow.ptx", "shadow", 1, 1, words, -1, NULL, out) == 0);
    static const uint32_t want[8] = {1, 3, 5, 22, 11, 5, 2, 1};
    for (int k = 0; k < 8; k++) {
        CHECK(out[0][k] == want[k]);
        if (out[0][k] != want[k]) fprintf(stderr, "  shadow: out[%d] = %u, expected %u\n", k, out[0][k], want[k]);
    }
    free(out[0]);
}

static void vector_regs(const char *root)
{
    uint32_t words[1] = {9}, *out[1];
    CHECK(run(root, "tests/ptx/scopes/vector_regs.ptx", "vector_regs", 1, 1, words, -1, NULL, out) == 0);
    static const uint32_t want[9] = {0x40400000, 0x3f800000, 0x3f800000, 0, 7, 8, 9, 10, 17};
    for (int k = 0; k < 9; k++) {
        CHECK(out[0][k] == want[k]);
        if (out[0][k] != want[k]) fprintf(stderr, "  vector_regs: out[%d] = %#x, expected %#x\n", k, out[0][k], want[k]);
    }
    free(out[0]);
}

/* The blocks of shadow.ptx's kernel: the body and the 7 blocks inside, with their parents. */
static void blocks(const char *root)
{
    mh_ptx_module m;
    if (parse_ptx_file(&m, root, "tests/ptx/scopes/shadow.ptx")) {
        CHECK(0);
        return;
    }
    const mh_ptx_func *f = mh_ptx_find(&m, "shadow");
    CHECK(f && f->nblocks == 8);
    if (f && f->nblocks == 8) {
        CHECK(f->blocks[0].parent == -1 && f->blocks[0].open == f->body_open && f->blocks[0].close == f->body_close);
        CHECK(f->blocks[4].parent == 0 && f->blocks[5].parent == 4); /* { { bra OUT; } ... } */
        for (uint32_t b = 1; b < 8; b++) {
            CHECK(m.text[f->blocks[b].open - 1] == '{' && m.text[f->blocks[b].close] == '}');
            CHECK(mh_ptx_block_at(f, f->blocks[b].open) == b);
            CHECK(mh_ptx_block_at(f, f->blocks[b].close - 1) == b);
        }
        CHECK(mh_ptx_block_at(f, f->blocks[5].close + 1) == 4);
        CHECK(mh_ptx_block_at(f, f->body_open) == 0 && mh_ptx_block_at(f, f->body_close) == 0);
        /* each branch's target: shadow's "bra L" in block 1 goes to its own L (two instructions on) */
        for (uint32_t i = 0; i < f->ncode; i++) {
            const mh_ptx_insn *in = &f->code[i];
            if (in->op == MH_OP_BRA && mh_ptx_block_at(f, in->text_off) == 1) CHECK(in->o[0].reg == i + 2);
        }
    }
    mh_ptx_free(&m);
}

/* wait_inlined with a loop probe: the waits' loops end on the taken edge of "@P1 bra DONE",
 * through a trampoline, which goes at the top of the asm block (the top of the body, where it
 * went, is out of sight of DONE: ptxas said "Unknown symbol" and the front end now says the
 * rewrite does not read back).  The instrumented kernel computes what the plain one does, and
 * the consumer warp's trace holds a begin and an end per iteration. */
static void wait_instrumented(const char *root)
{
    mh_ptx_module m, mi;
    if (parse_ptx_file(&m, root, "tests/ptx/scopes/wait_inlined.ptx")) {
        CHECK(0);
        return;
    }
    mh_probe loop = {.kind = MH_PROBE_LOOP, .name = "wait"};
    mh_instrument_opts o = {.scope = MH_SCOPE_WARP, .probes = &loop, .nprobes = 1};
    mh_instrumented r;
    mh_error e;
    int rc = mh_instrument_with(&m, &o, &r, &e);
    CHECK(rc == 0);
    if (rc) {
        fprintf(stderr, "  %s\n", e.message);
        mh_ptx_free(&m);
        return;
    }
    CHECK(r.probe_points == 24); /* 8 loops: a begin, an end on the back edge, an end on the way out */
    rc = mh_ptx_parse(&mi, r.text, r.len, "wait_inlined (instrumented)", &e);
    CHECK(rc == 0);
    if (!rc) {
        enum { E = 256 };
        uint32_t in[256];
        for (uint32_t k = 0; k < 256; k++) in[k] = k * 3 + 1;
        mh_emu_opts eo = {.num_sms = 1, .max_warp_insns = 1000000};
        mh_emu *d = mh_emu_create(&eo, &e);
        uint64_t a_out = emu_upload(d, NULL, 1024), a_in = emu_upload(d, in, sizeof in), a_wide = emu_upload(d, NULL, 256);
        uint64_t a_trace = emu_upload(d, NULL, 2 * E * 4), a_calib = emu_upload(d, NULL, 2 * 16);
        uint32_t entries = E;
        mh_emu_arg args[6] = {ARG(a_out), ARG(a_in), ARG(a_wide), ARG(a_trace), ARG(entries), ARG(a_calib)};
        mh_emu_launch l = {{1, 1, 1}, {64, 1, 1}, 0, args, 6, 20.0};
        rc = mh_emu_run(d, &mi, "wait_inlined", &l, NULL, &e);
        CHECK(rc == 0);
        if (rc) fprintf(stderr, "  %s\n", e.message);
        uint32_t out[256], trace[2 * E];
        mh_emu_read(d, a_out, out, sizeof out, &e);
        mh_emu_read(d, a_trace, trace, sizeof trace, &e);
        int bad = 0;
        for (uint32_t lane = 0; lane < 32; lane++) {
            uint32_t acc = 0;
            for (uint32_t s = 0; s < 8; s++) bad += out[s * 32 + lane] != (acc += in[s * 32 + lane] * (s + 1));
        }
        CHECK(bad == 0);
        /* warp 1 (the consumer) ran each of the 8 loops at least once: begin and end, 2 words each */
        uint32_t n = trace[E + 2];
        CHECK(n >= 8 * 4 && n % 4 == 0 && n + 3 <= E);
        for (uint32_t k = 0; k + 3 < n + 3 && k < n; k += 4)
            CHECK(trace[E + 3 + k] >> 31 == 0 && trace[E + 3 + k + 2] >> 31 == 1 &&
                  (trace[E + 3 + k] & 0x7fffffff) == (trace[E + 3 + k + 2] & 0x7fffffff));
        mh_emu_destroy(d);
        mh_ptx_free(&mi);
    } else fprintf(stderr, "  %s\n", e.message);
    mh_instrumented_free(&r);
    mh_ptx_free(&m);
}

/* Probes naming a label that each inlined copy defines: a loop probe takes every loop headed by
 * one (it took the first copy's only), a range is refused as ambiguous, naming two of them. */
static void label_probes(const char *root)
{
    mh_ptx_module m;
    if (parse_ptx_file(&m, root, "tests/ptx/scopes/wait_inlined.ptx")) {
        CHECK(0);
        return;
    }
    mh_probe loop = {.kind = MH_PROBE_LOOP, .name = "wait", .loop = "LAB_WAIT"};
    mh_instrument_opts o = {.scope = MH_SCOPE_WARP, .probes = &loop, .nprobes = 1};
    mh_instrumented r;
    mh_error e;
    int rc = mh_instrument_with(&m, &o, &r, &e);
    CHECK(rc == 0);
    if (!rc) {
        CHECK(r.probe_points == 24);
        mh_instrumented_free(&r);
    } else fprintf(stderr, "  %s\n", e.message);
    mh_probe range = {.kind = MH_PROBE_RANGE, .name = "r", .from = "LAB_WAIT", .to = "DONE"};
    o.probes = &range;
    rc = mh_instrument_with(&m, &o, &r, &e);
    CHECK(rc == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "probe \"r\": label LAB_WAIT is defined in more than one block of wait_inlined");
    if (!rc) mh_instrumented_free(&r);
    mh_ptx_free(&m);
}

/* 300 sibling blocks with a DONE each (the name index grows many times while they are read):
 * every "bra DONE" goes to the DONE of its own block, the instruction after the next one. */
static void many_blocks(void)
{
    size_t cap = 64 * 1024, n = 0;
    char *t = malloc(cap);
    n += (size_t)snprintf(t + n, cap - n, ".version 8.0\n.target sm_90\n.address_size 64\n"
                          ".visible .entry k()\n{\n.reg .b32 %%r;\nmov.u32 %%r, 0;\n");
    for (int b = 0; b < 300; b++)
        n += (size_t)snprintf(t + n, cap - n, "{ bra DONE; add.u32 %%r, %%r, 1; DONE: add.u32 %%r, %%r, 2; }\n");
    n += (size_t)snprintf(t + n, cap - n, "ret;\n}\n");
    mh_ptx_module m;
    mh_error e;
    int rc = mh_ptx_parse(&m, t, n, "many.ptx", &e);
    CHECK(rc == 0);
    if (rc) fprintf(stderr, "  %s\n", e.message);
    const mh_ptx_func *f = rc ? NULL : mh_ptx_find(&m, "k");
    CHECK(rc || (f && f->nblocks == 301));
    int wrong = 0;
    for (uint32_t i = 0; f && i < f->ncode; i++)
        if (f->code[i].op == MH_OP_BRA) wrong += f->code[i].o[0].reg != i + 2;
    CHECK(wrong == 0);
    if (!rc) mh_ptx_free(&m);
    free(t);
}

static void refused(const char *root)
{
    static const struct { const char *file; uint32_t line; const char *msg; } cases[] = {
        {"bad_label_twice.ptx", 17, "label 'DONE' is defined twice in one scope (first at line 15)"},
        {"bad_label_twice_body.ptx", 11, "label 'LOOP' is defined twice in one scope (first at line 9)"},
        {"bad_label_register.ptx", 12, "label 'P1' is defined twice in one scope (first at line 10, as a register)"},
        {"bad_label_out_of_sight.ptx", 11, "branch to label 'DONE', which is not in sight here: it is defined at line 14"},
        {"bad_variable_twice.ptx", 10, "variable 's' is defined twice in one scope (first at line 9)"},
        {"bad_module_variable_twice.ptx", 6, "variable 'g' is defined twice in one scope (first at line 5)"},
        {"bad_register_in_range.ptx", 10, "register '%q1' is defined twice in one scope (first at line 9)"},
        {"bad_extern_static.ptx", 8, "'g' was declared .extern (line 6): its definition must be .visible (or .weak), not static"},
        {"bad_register_leading_zero.ptx", 9, "register '%r007' is defined twice in one scope (first at line 8)"},
        /* ptxas: "Argument vector size mismatch", "Illegal vector size: 3", "Vector operand is not allowed" */
        {"bad_vector_store_width.ptx", 11, "a register list ({...} or a .v2/.v4 register) needs a .v2/.v4 access"},
        {"bad_vector_load_count.ptx", 10, "the register list must have one register per element of the vector"},
        {"bad_vector_source.ptx", 11, "is read only by ld, st and mov: name its elements"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/tests/ptx/scopes/%s", root, cases[i].file);
        size_t n;
        char *t = read_file_all(path, &n);
        CHECK(t != NULL);
        if (!t) continue;
        mh_ptx_module m;
        mh_error e;
        int rc = mh_ptx_parse(&m, t, n, cases[i].file, &e);
        CHECK(rc == MH_E_PTX_SYNTAX);
        if (rc == 0) mh_ptx_free(&m);
        CHECK(e.line == cases[i].line);
        CHECK_CONTAINS(e.message, cases[i].msg);
        free(t);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--parse")) return parse_only(argc, argv);
    const char *root = argc > 1 ? argv[1] : ".";
    wait_inlined(root);
    shadow(root);
    vector_regs(root);
    blocks(root);
    many_blocks();
    wait_instrumented(root);
    label_probes(root);
    refused(root);
    return check_report("test_ptx_scopes");
}
