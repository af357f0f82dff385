/* test_out.c - number formatting and atomic output files. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "base/out.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

/* Formats through an mh_out writing into a pipe-less temp file. */
static const char *fmt_milli(uint64_t v, int three)
{
    static char res[64];
    char path[] = "/tmp/mh_test_out_XXXXXX";
    int fd = mkstemp(path);
    mh_out o;
    mh_error e;
    mh_out_open_fd(&o, fd, &e);
    if (three) mh_out_milli3(&o, (int64_t)v); else mh_out_milli(&o, v);
    mh_out_flush_(&o);
    mh_out_abort(&o);
    close(fd);
    snprintf(res, sizeof res, "%s", slurp(path));
    unlink(path);
    return res;
}

/* mh_path_same: one file by its identity, or by its folder and name when not there yet. */
static void path_identity(void)
{
    char dir[] = "/tmp/mh_test_same_XXXXXX", a[128], b[128], sub[128];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    CHECK(mkdir(sub, 0700) == 0);
    snprintf(a, sizeof a, "%s/t.json", dir);
    snprintf(b, sizeof b, "%s/sub/../t.json", dir);
    CHECK(mh_path_same(a, b)); /* neither exists: the folder and the name */
    snprintf(b, sizeof b, "%s/./t.json", dir);
    CHECK(mh_path_same(a, b));
    snprintf(b, sizeof b, "%s/sub/t.json", dir);
    CHECK(!mh_path_same(a, b));
    snprintf(b, sizeof b, "%s/none/t.json", dir);
    CHECK(!mh_path_same(a, b)); /* a folder that is not there: nothing to compare */
    FILE *f = fopen(a, "w");
    fclose(f);
    snprintf(b, sizeof b, "%s/sub/../t.json", dir);
    CHECK(mh_path_same(a, b)); /* now it exists: its identity */
    snprintf(b, sizeof b, "%s/link.json", dir);
    CHECK(symlink(a, b) == 0);
    CHECK(mh_path_same(a, b));
    unlink(b);
    CHECK(!mh_path_same("-", "-"));
    CHECK(!mh_path_same(NULL, a));
    CHECK(!mh_path_same("/dev/null", "/dev/null")); /* written in place, never replaced */
    const char *outs[] = {a, NULL, b}, *what[] = {"-o", "--x", "--summary-json"};
    mh_error e;
    mh_error_clear(&e);
    snprintf(b, sizeof b, "%s/sub/../t.json", dir);
    CHECK(mh_out_refuse_overlap(outs, what, 3, NULL, 0, &e) != 0);
    CHECK(e.code == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "name the same file");
    snprintf(b, sizeof b, "%s/u.json", dir);
    const char *in[] = {b};
    CHECK(mh_out_refuse_overlap(outs, what, 3, in, 0, &e) == 0);
    unlink(a);
    rmdir(sub);
    rmdir(dir);
}

int main(void)
{
    path_identity();
    char b[32];
    uint64_t vals[] = {0, 1, 9, 10, 99, 100, 12345, 4294967295ull, 18446744073709551615ull};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
        char want[32];
        b[mh_fmt_u64(b, vals[i])] = 0;
        snprintf(want, sizeof want, "%llu", (unsigned long long)vals[i]);
        CHECK_STR(b, want);
    }
    /* Python: repr(float(v) / 1e3) */
    CHECK_STR(fmt_milli(0, 0), "0.0");
    CHECK_STR(fmt_milli(1, 0), "0.001");
    CHECK_STR(fmt_milli(7050, 0), "7.05");
    CHECK_STR(fmt_milli(7005, 0), "7.005");
    CHECK_STR(fmt_milli(7100, 0), "7.1");
    CHECK_STR(fmt_milli(380393792, 0), "380393.792");
    CHECK_STR(fmt_milli(4294967295ull, 0), "4294967.295");
    CHECK_STR(fmt_milli(250, 1), "0.250");
    CHECK_STR(fmt_milli((uint64_t)-1250, 1), "-1.250");

    /* Atomic replacement: an aborted write leaves the old file as it was. */
    char path[] = "/tmp/mh_test_atomic_XXXXXX";
    int fd = mkstemp(path);
    CHECK(write(fd, "old", 3) == 3);
    close(fd);
    mh_out o;
    mh_error e;
    CHECK(mh_out_open(&o, path, &e) == 0);
    mh_out_lit(&o, "partial");
    mh_out_flush_(&o);
    mh_out_abort(&o);
    CHECK_STR(slurp(path), "old");
    CHECK(mh_out_open(&o, path, &e) == 0);
    mh_out_lit(&o, "new");
    CHECK(mh_out_commit(&o, &e) == 0);
    CHECK_STR(slurp(path), "new");
    unlink(path);

    /* A device is written in place, never replaced by a file. */
    struct stat st;
    CHECK(mh_out_open(&o, "/dev/null", &e) == 0);
    mh_out_lit(&o, "gone");
    CHECK(mh_out_commit(&o, &e) == 0);
    CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
    CHECK(mh_out_open(&o, "/tmp", &e) == MH_E_IO);
    CHECK_CONTAINS(e.message, "is a directory");

    CHECK(mh_out_open(&o, "/nonexistent-dir/x.json", &e) == MH_E_IO);
    CHECK_CONTAINS(e.message, "/nonexistent-dir/x.json");

    /* A write larger than the buffer goes straight through. */
    char big_path[] = "/tmp/mh_test_big_XXXXXX";
    close(mkstemp(big_path));
    size_t big = (1u << 20) + 17;
    char *data = malloc(big);
    memset(data, 'x', big);
    CHECK(mh_out_open(&o, big_path, &e) == 0);
    mh_out_lit(&o, "ab");
    mh_out_mem(&o, data, big);
    CHECK(mh_out_commit(&o, &e) == 0);
    FILE *f = fopen(big_path, "rb");
    fseek(f, 0, SEEK_END);
    CHECK((size_t)ftell(f) == big + 2);
    fclose(f);
    unlink(big_path);
    free(data);
    return check_report("test_out");
}
