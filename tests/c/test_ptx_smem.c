/* test_ptx_smem.c - each kernel's static shared memory, as ptxas counts it (issue 30, found by the
 * corpus: fast.cu's M3::s, 32 KiB used by one kernel only, pushed two others past 227 KiB): a
 * module-scope .shared variable counts for a kernel only when the kernel or a function it calls
 * names it; a kernel's own and its callees' own variables count, named or not.  The figures are
 * `ptxas -v -arch=sm_90a`'s for these modules (ptxas 13.0), checked again against ptxas when it is
 * installed; emu places each kernel's variables apart within its own figure, runs a kernel beside
 * another's large array, and the dynamic array starts after the kernel's own statics. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "emu/emu.h"
#include "frontend/ptx.h"

/* sa used by ka and kb, sb by kb, sc by f (called by kb), `unused` by none */
static const char two_kernels[] =
    ".version 8.7\n.target sm_90a\n.address_size 64\n"
    ".shared .align 4 .b8 sa[1024];\n.shared .align 4 .b8 sb[2048];\n"
    ".shared .align 4 .b8 sc[4096];\n.shared .align 4 .b8 unused[8192];\n"
    ".func (.param .b32 r) f(.param .b32 i)\n{\n.reg .b32 %r<4>;\n"
    "ld.param.b32 %r1, [i];\nmov.u32 %r2, sc;\nadd.u32 %r2, %r2, %r1;\nst.shared.b32 [%r2], %r1;\n"
    "mov.u32 %r3, sc;\nst.param.b32 [r], %r3;\nret;\n}\n"
    ".visible .entry ka(.param .u64 p)\n{\n.reg .b32 %r<4>;\n.reg .b64 %rd<2>;\n"
    "ld.param.u64 %rd1, [p];\nmov.u32 %r1, %tid.x;\nst.shared.b32 [sa], %r1;\n"
    "mov.u32 %r3, sa;\nst.global.b32 [%rd1], %r3;\nret;\n}\n"
    ".visible .entry kb(.param .u64 p)\n{\n.reg .b32 %r<6>;\n.reg .b64 %rd<2>;\n"
    "ld.param.u64 %rd1, [p];\nmov.u32 %r1, %tid.x;\nshl.b32 %r2, %r1, 2;\n"
    "mov.u32 %r3, sb;\nadd.u32 %r3, %r3, %r2;\nst.shared.b32 [%r3], %r1;\n"
    "{ .param .b32 a; .param .b32 rr; st.param.b32 [a], %r2; call.uni (rr), f, (a); ld.param.b32 %r4, [rr]; }\n"
    "bar.sync 0;\nld.shared.b32 %r5, [sa];\nst.global.b32 [%rd1+12], %r5;\n"
    "st.global.b32 [%rd1+8], %r4;\nmov.u32 %r4, sa;\nst.global.b32 [%rd1], %r4;\n"
    "mov.u32 %r4, sb;\nst.global.b32 [%rd1+4], %r4;\nret;\n}\n";

/* own variables: counted named or not; a .func's own for the kernel calling it */
static const char own_vars[] =
    ".version 8.7\n.target sm_90a\n.address_size 64\n"
    ".func (.param .b32 r) g()\n{\n.shared .align 4 .b8 gs[2048];\n.reg .b32 %r<2>;\n"
    "ld.shared.b32 %r1, [gs];\nst.param.b32 [r], %r1;\nret;\n}\n"
    ".visible .entry calls_g(.param .u64 p)\n{\n.reg .b32 %r<2>;\n.reg .b64 %rd<2>;\nld.param.u64 %rd1, [p];\n"
    "{ .param .b32 rr; call.uni (rr), g, (); ld.param.b32 %r1, [rr]; }\nst.global.b32 [%rd1], %r1;\nret;\n}\n"
    ".visible .entry own(.param .u64 p)\n{\n.shared .align 4 .b8 own_unused[4096];\n"
    ".shared .align 4 .b8 own_used[512];\n.reg .b32 %r<2>;\n.reg .b64 %rd<2>;\nld.param.u64 %rd1, [p];\n"
    "ld.shared.b32 %r1, [own_used+4];\nst.global.b32 [%rd1], %r1;\nret;\n}\n";

/* big (200 KiB) used by kbig only: ksmall, with 100 KiB of dynamic shared memory, still fits in 227 */
static const char big_and_small[] =
    ".version 8.7\n.target sm_90a\n.address_size 64\n"
    ".shared .align 16 .b8 big[204800];\n.shared .align 4 .b8 small[64];\n"
    ".extern .shared .align 16 .b8 dyn[];\n"
    ".visible .entry kbig(.param .u64 p)\n{\n.reg .b32 %r<2>;\n.reg .b64 %rd<2>;\nld.param.u64 %rd1, [p];\n"
    "mov.u32 %r1, 7;\nst.shared.b32 [big+204796], %r1;\nld.shared.b32 %r1, [big+204796];\n"
    "st.global.b32 [%rd1], %r1;\nret;\n}\n"
    ".visible .entry ksmall(.param .u64 p)\n{\n.reg .b32 %r<4>;\n.reg .b64 %rd<2>;\nld.param.u64 %rd1, [p];\n"
    "mov.u32 %r1, 9;\nst.shared.b32 [dyn+102396], %r1;\nst.shared.b32 [small], %r1;\n"
    "ld.shared.b32 %r2, [dyn+102396];\nst.global.b32 [%rd1], %r2;\nmov.u32 %r3, dyn;\nst.global.b32 [%rd1+4], %r3;\n"
    "ret;\n}\n";

static const mh_ptx_func *func(const mh_ptx_module *m, const char *name)
{
    for (uint32_t i = 0; i < m->nfuncs; i++)
        if (!strcmp(m->funcs[i].name, name)) return &m->funcs[i];
    return NULL;
}

static int parse(mh_ptx_module *m, const char *text, const char *path)
{
    mh_error e;
    int rc = mh_ptx_parse(m, text, strlen(text), path, &e);
    CHECK(rc == 0);
    if (rc) fprintf(stderr, "  %s\n", e.message);
    return rc;
}

/* The static shared bytes ptxas -v gives kernel `name` of `text`; -1 when ptxas is not installed
 * (or says nothing of it). */
static long ptxas_smem(const char *text, const char *name)
{
    const char *ptxas = "/usr/local/cuda/bin/ptxas";
    if (access(ptxas, X_OK)) return -1;
    char dir[] = "/tmp/test_ptx_smem_XXXXXX";
    if (!mkdtemp(dir)) return -1;
    char path[128], cmd[512], line[512];
    snprintf(path, sizeof path, "%s/m.ptx", dir);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs(text, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s -v -arch=sm_90a %s -o %s/m.cubin 2>&1", ptxas, path, dir);
    FILE *p = popen(cmd, "r");
    long smem = -1;
    int in_it = 0;
    while (p && fgets(line, sizeof line, p)) {
        char *q = strstr(line, "Compiling entry function '");
        if (q) {
            q += strlen("Compiling entry function '");
            in_it = !strncmp(q, name, strlen(name)) && q[strlen(name)] == '\'';
        }
        char *b = strstr(line, " bytes smem");
        if (in_it && b) {
            while (b > line && b[-1] >= '0' && b[-1] <= '9') b--;
            smem = atol(b);
            in_it = 0;
        }
    }
    if (p) pclose(p);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) {}
    return smem;
}

static void expect_smem(const char *text, const mh_ptx_module *m, const char *name, uint64_t want)
{
    const mh_ptx_func *f = func(m, name);
    CHECK(f != NULL);
    if (!f) return;
    CHECK(f->shared_bytes == want);
    if (f->shared_bytes != want)
        fprintf(stderr, "  %s: %llu static shared bytes, want %llu\n", name, (unsigned long long)f->shared_bytes,
                (unsigned long long)want);
    long px = ptxas_smem(text, name);
    if (px < 0) return;
    CHECK((uint64_t)px == want);
    if ((uint64_t)px != want) fprintf(stderr, "  ptxas gives %s %ld bytes, this test %llu\n", name, px, (unsigned long long)want);
}

/* Runs `kernel` of m as one block of `threads` with `dyn` dynamic shared bytes and one 64-byte
 * buffer argument read back into out; the launch's return code. */
static int run(const mh_ptx_module *m, const char *kernel, uint32_t threads, uint32_t dyn, uint32_t out[16], mh_error *e)
{
    mh_emu *d = mh_emu_create(NULL, e);
    CHECK(d != NULL);
    if (!d) return -1;
    uint64_t p = 0;
    CHECK(mh_emu_alloc(d, 64, &p, e) == 0);
    memset(out, 0, 64);
    mh_emu_write(d, p, out, 64, e);
    mh_emu_arg args[] = {{&p, 8}};
    mh_emu_launch l = {{1, 1, 1}, {threads, 1, 1}, dyn, args, 1, 0};
    int rc = mh_emu_run(d, m, kernel, &l, NULL, e);
    mh_error e2;
    mh_emu_read(d, p, out, 64, &e2);
    mh_emu_destroy(d);
    return rc;
}

int main(void)
{
    mh_ptx_module m;
    mh_error e;
    uint32_t out[16];
    if (!parse(&m, two_kernels, "two.ptx")) {
        expect_smem(two_kernels, &m, "ka", 1024);
        expect_smem(two_kernels, &m, "kb", 7168); /* sa + sb + sc (through f); `unused` in neither */
        /* kb: its three arrays apart, inside its 7168 bytes; f's sc is kb's */
        int rc = run(&m, "kb", 32, 0, out, &e);
        CHECK(rc == 0);
        if (rc) fprintf(stderr, "  kb: %s\n", e.message);
        uint32_t sa = out[0], sb = out[1], sc = out[2];
        CHECK(sa + 1024 <= 7168 && sb + 2048 <= 7168 && sc + 4096 <= 7168);
        CHECK((sa + 1024 <= sb || sb + 2048 <= sa) && (sa + 1024 <= sc || sc + 4096 <= sa) &&
              (sb + 2048 <= sc || sc + 4096 <= sb));
        CHECK(out[3] == 0); /* sa[0] untouched by the stores to sb and sc */
        rc = run(&m, "ka", 1, 0, out, &e);
        CHECK(rc == 0 && out[0] == 0); /* ka's sa starts its 1024 bytes */
        mh_ptx_free(&m);
    }
    if (!parse(&m, own_vars, "own.ptx")) {
        expect_smem(own_vars, &m, "own", 4608);     /* own_unused counts */
        expect_smem(own_vars, &m, "calls_g", 2048); /* g's own */
        mh_ptx_free(&m);
    }
    if (!parse(&m, big_and_small, "big.ptx")) {
        expect_smem(big_and_small, &m, "kbig", 204800);
        expect_smem(big_and_small, &m, "ksmall", 64);
        int rc = run(&m, "ksmall", 1, 102400, out, &e);
        CHECK(rc == 0);
        if (rc) fprintf(stderr, "  ksmall: %s\n", e.message);
        CHECK(out[0] == 9 && out[1] == 64); /* the dynamic array right after small */
        rc = run(&m, "kbig", 1, 0, out, &e);
        CHECK(rc == 0 && out[0] == 7);
        mh_ptx_free(&m);
    }
    return check_report("test_ptx_smem");
}
