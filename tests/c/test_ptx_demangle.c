/* test_ptx_demangle.c - kernel names in messages (issue 30, item 4): demangled and shortened
 * (mh_short_name: "matmulKernel5<1, 8, 15, ..., ...>", at most MH_SHORT_NAME_MAX bytes), a plain
 * name as it is, the full demangled name (mh_demangle, which kernel:info gives); and a kernel with
 * a 1.9 KB mangled name that faults on emu: the message names it short and keeps its cause (the
 * block and thread at its end), where the mangled name took the whole 1,023 bytes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/demangle.h"
#include "check.h"
#include "emu/emu.h"
#include "frontend/ptx.h"

/* "_Z13matmulKernel5I" + n template arguments (Li1E Li8E ...) + "EvPfS0_i" in buf */
static void long_name(char *buf, size_t cap, int n)
{
    size_t at = (size_t)snprintf(buf, cap, "_Z13matmulKernel5I");
    for (int i = 0; i < n; i++) at += (size_t)snprintf(buf + at, cap - at, "Li%dE", i * 7 + 1);
    snprintf(buf + at, cap - at, "EvPfS0_i");
}

static void short_names(void)
{
    char *s = mh_short_name("_Z13matmulKernel5ILi128ELi256EEvPfS0_i");
    CHECK_STR(s, "matmulKernel5<128, 256>");
    free(s);
    s = mh_demangle("_Z13matmulKernel5ILi128ELi256EEvPfS0_i");
    CHECK_STR(s, "void matmulKernel5<128, 256>(float*, float*, int)");
    free(s);
    CHECK(mh_demangle("copy_kernel") == NULL);
    s = mh_short_name("copy_kernel");
    CHECK_STR(s, "copy_kernel");
    free(s);
    char name[4096];
    long_name(name, sizeof name, 300);
    CHECK(strlen(name) > 1900);
    s = mh_short_name(name);
    CHECK_STR(s, "matmulKernel5<1, 8, 15, 22, 29, 36, 43, 50, 57, 64, 71, 78, ...>");
    CHECK(s && strlen(s) <= MH_SHORT_NAME_MAX);
    free(s);
    char *full = mh_demangle(name); /* past the C++ runtime's demangler's limit */
    CHECK(full && !strncmp(full, "void matmulKernel5<1, 8, 15, ", 29) && strstr(full, ", 2094>(float*, float*, int)"));
    free(full);
    /* a first argument too long by itself is shortened in turn */
    s = mh_short_name("_Z4gemmI4TileI5ShapeIJLi128ELi256ELi64ELi1ELi2ELi3ELi4ELi5ELi6ELi7ELi8ELi9ELi10ELi11ELi12ELi13ELi14E"
                      "EEEEvPf");
    CHECK_STR(s, "gemm<Tile<Shape<128, 256, 64, 1, 2, 3, 4, 5, 6, 7, 8, 9, ...>>>");
    free(s);
    /* a plain name past the limit is cut */
    char plain[200];
    memset(plain, 'k', sizeof plain - 1);
    plain[sizeof plain - 1] = 0;
    s = mh_short_name(plain);
    CHECK(s && strlen(s) == MH_SHORT_NAME_MAX && !strcmp(s + MH_SHORT_NAME_MAX - 3, "..."));
    free(s);
}

static void fault_message(void)
{
    char name[4096], ptx[8192];
    long_name(name, sizeof name, 300);
    snprintf(ptx, sizeof ptx, ".version 8.0\n.target sm_90\n.address_size 64\n"
             ".visible .entry %s(.param .u64 p)\n{\n.reg .b64 %%rd<2>;\nld.param.u64 %%rd1, [p];\n"
             "st.global.u32 [%%rd1], 1;\nret;\n}\n", name);
    mh_ptx_module m;
    mh_error e;
    CHECK(mh_ptx_parse(&m, ptx, strlen(ptx), "long.ptx", &e) == 0);
    const mh_ptx_func *f = mh_ptx_find(&m, name);
    CHECK(f && f->short_name && !strcmp(f->short_name, "matmulKernel5<1, 8, 15, 22, 29, 36, 43, 50, 57, 64, 71, 78, ...>"));
    mh_emu_opts o = {.num_sms = 1};
    mh_emu *d = mh_emu_create(&o, &e);
    uint64_t bad = 16;
    mh_emu_arg args[1] = {{&bad, 8}};
    mh_emu_launch l = {{1, 1, 1}, {1, 1, 1}, 0, args, 1, 10.0};
    int rc = mh_emu_run(d, &m, name, &l, NULL, &e);
    CHECK(rc != 0 && e.code == MH_E_KERNEL_FAULT);
    CHECK_CONTAINS(e.message, "long.ptx:8: matmulKernel5<1, 8, 15, 22, 29, 36, 43, 50, 57, 64, 71, 78, ...>: ");
    CHECK_CONTAINS(e.message, "(block (0,0,0), thread (0,0,0))");
    mh_emu_destroy(d);
    mh_ptx_free(&m);
}

int main(void)
{
    short_names();
    fault_message();
    return check_report("test_ptx_demangle");
}
