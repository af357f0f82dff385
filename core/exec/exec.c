/* exec.c - `mgpu-harness exec` and `mgpu-harness nvcc` (exec.h).  A program
 * built by `mgpu-harness nvcc` carries the stand-in; one built by plain nvcc
 * -cudart shared finds the stand-in's libcudart.so.13 (and libcuda.so.1) first
 * on LD_LIBRARY_PATH.  The nvcc wrapper adds, unless the arguments already
 * say otherwise: -gencode arch=compute_90a,code=compute_90a (the PTX emu
 * runs, read from the program's fat binary at run time), -no-compress, and
 * on a link step -cudart none plus the stand-in's libraries. */
#define _GNU_SOURCE
#include "exec/exec.h"
#include "emu/emu_model.h"
#include "exec/nvcc_markers.h"
#include "instrument/instrument.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MGPU_BUILD_CUDART_DIR
#define MGPU_BUILD_CUDART_DIR ""
#endif
#ifndef MGPU_SANITIZE_LINK
#define MGPU_SANITIZE_LINK 0 /* 1: the stand-in was built with AddressSanitizer: programs link its runtime */
#endif
#ifndef MGPU_JANSSON_LINK
#define MGPU_JANSSON_LINK "-ljansson" /* the trace dump's summary writes JSON */
#endif

static int is_dir_with(const char *dir, const char *file)
{
    char p[PATH_MAX * 2 + 2];
    snprintf(p, sizeof p, "%s/%s", dir, file);
    return access(p, R_OK) == 0;
}

const char *mh_exec_cudart_dir(mh_error *e)
{
    static char dir[PATH_MAX + 16];
    const char *env = getenv("MGPU_CUDART_DIR");
    if (env && *env) {
        if (!is_dir_with(env, "libmgpu_cudart.a")) {
            mh_fail(e, MH_E_NOT_FOUND, "MGPU_CUDART_DIR=%s holds no libmgpu_cudart.a", env);
            return NULL;
        }
        snprintf(dir, sizeof dir, "%s", env);
        return dir;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            snprintf(dir, sizeof dir, "%s/cudart", exe);
            if (is_dir_with(dir, "libmgpu_cudart.a")) return dir;
        }
    }
    if (*MGPU_BUILD_CUDART_DIR && is_dir_with(MGPU_BUILD_CUDART_DIR, "libmgpu_cudart.a")) {
        snprintf(dir, sizeof dir, "%s", MGPU_BUILD_CUDART_DIR);
        return dir;
    }
    mh_fail(e, MH_E_NOT_FOUND, "the CUDA runtime stand-in (libmgpu_cudart.a) was not found beside the executable "
            "(cudart/) nor in the build (%s): build the target mgpu_cudart, or set MGPU_CUDART_DIR",
            *MGPU_BUILD_CUDART_DIR ? MGPU_BUILD_CUDART_DIR : "unknown");
    return NULL;
}

static int make_dir(const char *d, const char *what, mh_error *e)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", d);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            if (mkdir(p, 0777) && errno != EEXIST) break;
            *s = '/';
        }
    if (mkdir(p, 0777) && errno != EEXIST)
        return mh_fail(e, MH_E_IO, "%s %s: cannot create it: %s", what, d, strerror(errno));
    struct stat sb;
    if (stat(p, &sb) || !S_ISDIR(sb.st_mode)) return mh_fail(e, MH_E_IO, "%s %s: not a folder", what, d);
    return 0;
}

static int set_abs(const char *name, const char *path, mh_error *e)
{
    char abs[PATH_MAX];
    if (!realpath(path, abs)) return mh_fail(e, MH_E_IO, "%s: %s", path, strerror(errno));
    setenv(name, abs, 1);
    return 0;
}

int mh_exec_run(const mh_exec_opts *o, int *status, mh_error *e)
{
    if (!o->argv || !o->argv[0] || !o->argv[0][0]) return mh_fail(e, MH_E_BAD_ARGUMENT, "no program to run");
    if (o->model || o->model_params) { /* refused here, before the program starts, as emu would refuse them */
        mh_emu_model m;
        char why[1024];
        if (mh_emu_model_make(&m, o->model, NULL, 0, o->model_params, why, sizeof why))
            return mh_fail(e, MH_E_BAD_ARGUMENT, "%s", why);
    }
    const char *dir = mh_exec_cudart_dir(e);
    if (!dir) return -1;
    if (o->capture_dir && make_dir(o->capture_dir, "--capture", e)) return -1;
    if (o->trace_dir && make_dir(o->trace_dir, "--trace", e)) return -1;
    pid_t pid = fork();
    if (pid < 0) return mh_fail(e, MH_E_IO, "cannot start %s: fork: %s", o->argv[0], strerror(errno));
    if (pid == 0) {
        mh_error ce = {0};
        char lib[PATH_MAX * 2];
        const char *old = getenv("LD_LIBRARY_PATH");
        snprintf(lib, sizeof lib, "%s/lib%s%s", dir, old && *old ? ":" : "", old ? old : "");
        setenv("LD_LIBRARY_PATH", lib, 1);
        unsetenv("MGPU_CUDART_CAPTURE");
        unsetenv("MGPU_CUDART_FOREIGN_SAID"); /* foreign_libs.c: said once per program */
        unsetenv("MGPU_CUDART_TRACE");
        unsetenv("MGPU_CUDART_STATS");
        unsetenv("MGPU_CUDART_SMS");
        unsetenv("MGPU_CUDART_LAUNCHES");
        unsetenv("MGPU_CUDART_PROBES");
        if (o->probes) setenv("MGPU_CUDART_PROBES", o->probes, 1);
        if ((o->capture_dir && set_abs("MGPU_CUDART_CAPTURE", o->capture_dir, &ce)) ||
            (o->trace_dir && set_abs("MGPU_CUDART_TRACE", o->trace_dir, &ce))) {
            fprintf(stderr, "mgpu-harness exec: %s\n", ce.message);
            _exit(127);
        }
        if (o->stats) setenv("MGPU_CUDART_STATS", "1", 1);
        if (o->launches_file) setenv("MGPU_CUDART_LAUNCHES", o->launches_file, 1);
        if (o->model) setenv("MGPU_CUDART_MODEL", o->model, 1);
        if (o->model_params) setenv("MGPU_CUDART_MODEL_PARAMS", o->model_params, 1);
        if (o->sms) {
            char b[16];
            snprintf(b, sizeof b, "%u", o->sms);
            setenv("MGPU_CUDART_SMS", b, 1);
        }
        execvp(o->argv[0], o->argv);
        fprintf(stderr, "mgpu-harness exec: cannot run %s: %s\n", o->argv[0], strerror(errno));
        _exit(127);
    }
    int ws;
    while (waitpid(pid, &ws, 0) < 0)
        if (errno != EINTR) return mh_fail(e, MH_E_IO, "waiting for %s: waitpid: %s", o->argv[0], strerror(errno));
    *status = WIFEXITED(ws) ? WEXITSTATUS(ws) : WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : 1;
    return 0;
}

static const char *find_nvcc(void)
{
    static char p[PATH_MAX];
    const char *env = getenv("MGPU_NVCC");
    if (env && *env) return env;
    const char *path = getenv("PATH");
    if (path) {
        char *copy = strdup(path), *save = NULL;
        for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save)) {
            snprintf(p, sizeof p, "%s/nvcc", *d ? d : ".");
            if (access(p, X_OK) == 0) { free(copy); return p; }
        }
        free(copy);
    }
    const char *home = getenv("CUDA_HOME");
    if (home && *home) {
        snprintf(p, sizeof p, "%s/bin/nvcc", home);
        if (access(p, X_OK) == 0) return p;
    }
    return access("/usr/local/cuda/bin/nvcc", X_OK) == 0 ? "/usr/local/cuda/bin/nvcc" : NULL;
}

static int one_of(const char *a, const char *const *flags)
{
    for (int i = 0; flags[i]; i++)
        if (!strcmp(a, flags[i])) return 1;
    return 0;
}

/* A step that compiles without linking: no libraries to add. */
static int no_link(const char *a)
{
    static const char *const flags[] = {"-c", "--compile", "-dc", "--device-c", "-lib", "--lib", NULL};
    return one_of(a, flags);
}

/* A step that makes no program (PTX, cubin, preprocessing, a question): the arguments go as they are. */
static int as_is(const char *a)
{
    static const char *const flags[] = {"-ptx", "--ptx", "-cubin", "--cubin", "-fatbin", "--fatbin", "-E",
                                        "--preprocess", "-M", "-MM", "--generate-dependencies", "-cuda", "--cuda",
                                        "-V", "--version", "-h", "--help", "-optix-ir", "--optix-ir", "-dryrun",
                                        "--dryrun", NULL};
    return one_of(a, flags);
}

/* A -c step: each marker object goes into its unit's object file (ld -r), in the order the .cu
 * sources came (mh_nvcc_marker_objects names them markers-<arg index>.o). */
static void merge_markers(char *const *args, size_t n, char **marks, size_t nmarks)
{
    const char *out = NULL;
    for (size_t i = 0; i + 1 < n; i++)
        if (!strcmp(args[i], "-o") || !strcmp(args[i], "--output-file")) out = args[i + 1];
    for (size_t m = 0; m < nmarks; m++) {
        const char *base = strrchr(marks[m], '-');
        size_t idx = base ? (size_t)strtoul(base + 1, NULL, 10) : n;
        if (idx >= n) continue;
        char obj[PATH_MAX], tmp[PATH_MAX + 8];
        if (out) snprintf(obj, sizeof obj, "%s", out);
        else {
            const char *src = strrchr(args[idx], '/');
            snprintf(obj, sizeof obj, "%s", src ? src + 1 : args[idx]);
            char *dot = strrchr(obj, '.');
            if (dot) strcpy(dot, ".o");
        }
        snprintf(tmp, sizeof tmp, "%s.mgpu", obj);
        pid_t pid = fork();
        if (pid == 0) {
            execlp("ld", "ld", "-r", "-o", tmp, obj, marks[m], (char *)NULL);
            _exit(127);
        }
        int ws = 0;
        while (pid > 0 && waitpid(pid, &ws, 0) < 0 && errno == EINTR) {}
        if (pid > 0 && WIFEXITED(ws) && WEXITSTATUS(ws) == 0) rename(tmp, obj);
        else {
            unlink(tmp);
            fprintf(stderr, "mgpu-harness nvcc: %s: the PTX with markers could not be added (ld -r failed)\n", obj);
        }
    }
}

/* Relocatable device code: its fat binaries register through __cudaRegisterLinkedBinary_*, which only
 * nvcc's device link defines (a link of PTX alone leaves it undefined), and what it is mostly for,
 * kernels launching kernels (dynamic parallelism), emu does not run.  The flag as given, NULL for none. */
static const char *rdc_flag(char *const *args, size_t n)
{
    static const char *const flags[] = {"-dc", "--device-c", "-dw", "--device-w", "-dlink", "--device-link", NULL};
    for (size_t i = 0; i < n; i++) {
        const char *a = args[i], *v = NULL;
        if (one_of(a, flags)) return a;
        if (!strncmp(a, "-rdc=", 5)) v = a + 5;
        else if (!strncmp(a, "--relocatable-device-code=", 26)) v = a + 26;
        else if ((!strcmp(a, "-rdc") || !strcmp(a, "--relocatable-device-code")) && i + 1 < n) v = args[i + 1];
        if (v && (!strcmp(v, "true") || !strcmp(v, "1"))) return a;
    }
    return NULL;
}

int mh_exec_nvcc(char *const *args, int *status, mh_error *e)
{
    size_t nargs = 0;
    int as_given = 0; /* a step that makes no program: -ptx -rdc=true is nvcc's to answer */
    for (; args[nargs]; nargs++) as_given |= as_is(args[nargs]);
    const char *rdc = as_given ? NULL : rdc_flag(args, nargs);
    if (rdc)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "%s%s: relocatable device code is not supported on emu (a kernel "
                       "launching kernels, dynamic parallelism, does not run there; its fat binary registers through "
                       "a device link the stand-in does not serve): build without -rdc, -dc, -dw and -dlink "
                       "(docs/cudart.md)", rdc, !strcmp(rdc, "-rdc") || !strcmp(rdc, "--relocatable-device-code")
                                                 ? " true" : "");
    const char *nvcc = find_nvcc();
    if (!nvcc) return mh_fail(e, MH_E_NOT_FOUND, "nvcc not found ($MGPU_NVCC, PATH, $CUDA_HOME/bin, "
                              "/usr/local/cuda/bin): `mgpu-harness nvcc` runs nvcc");
    const char *dir = mh_exec_cudart_dir(e);
    if (!dir) return -1;
    size_t n = 0;
    while (args[n]) n++;
    char **marks = NULL;
    size_t nmarks = 0;
    char tmpdir[PATH_MAX] = "";
    int plain_step = 0;
    for (size_t i = 0; i < n; i++) plain_step |= as_is(args[i]);
    if (!plain_step) { /* the markers' PTX (exec --trace): nvcc's fat binary drops comments */
        const char *t = getenv("TMPDIR");
        snprintf(tmpdir, sizeof tmpdir, "%s/mgpu-nvcc-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(tmpdir) || mh_nvcc_marker_objects(nvcc, args, n, tmpdir, &marks, &nmarks)) tmpdir[0] = 0;
    }
    char **argv = calloc(n + 20 + nmarks, sizeof *argv);
    char lib_a[PATH_MAX], core_a[PATH_MAX], iberty_a[PATH_MAX];
    if (!argv) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    snprintf(lib_a, sizeof lib_a, "%s/libmgpu_cudart.a", dir);
    snprintf(core_a, sizeof core_a, "%s/libmgpu_core.a", dir);
    snprintf(iberty_a, sizeof iberty_a, "%s/libiberty.a", dir); /* the core's demangler (base/demangle.c) */
    size_t k = 0;
    int link = 1, compress_given = 0, plain = 0;
    for (size_t i = 0; i < n; i++) plain |= as_is(args[i]);
    argv[k++] = (char *)nvcc;
    for (size_t i = 0; i < n; i++) {
        const char *a = args[i];
        if (plain) { argv[k++] = (char *)a; continue; }
        if (no_link(a)) link = 0;
        if (!strncmp(a, "-compress", 9) || !strncmp(a, "--compress", 10) || !strcmp(a, "-no-compress") ||
            !strcmp(a, "--no-compress"))
            compress_given = 1;
        if (!strcmp(a, "-cudart") || !strcmp(a, "--cudart")) { i++; continue; } /* ours replaces it */
        if (!strncmp(a, "-cudart=", 8) || !strncmp(a, "--cudart=", 9)) continue;
        /* the Driver API is the stand-in's too (driver_api.c): NVIDIA's libcuda would find no GPU */
        if (!strcmp(a, "-lcuda") || !strcmp(a, "--library=cuda")) continue;
        if ((!strcmp(a, "-l") || !strcmp(a, "--library")) && i + 1 < n && !strcmp(args[i + 1], "cuda")) { i++; continue; }
        argv[k++] = (char *)a;
    }
    if (!plain) {
        argv[k++] = "-gencode";
        argv[k++] = "arch=compute_90a,code=compute_90a";
        if (!compress_given) argv[k++] = "-no-compress";
        argv[k++] = "-cudart";
        argv[k++] = "none";
    }
    if (link && !plain) {
        for (size_t i = 0; i < nmarks; i++) argv[k++] = marks[i];
        argv[k++] = lib_a;
        argv[k++] = core_a;
        argv[k++] = iberty_a;
        argv[k++] = MGPU_JANSSON_LINK;
        argv[k++] = "-ldl";
        argv[k++] = "-lpthread";
        argv[k++] = "-lm";
        if (MGPU_SANITIZE_LINK) {
            argv[k++] = "-Xcompiler"; /* which splits its value at commas: one flag each */
            argv[k++] = "-fsanitize=address";
            argv[k++] = "-Xcompiler";
            argv[k++] = "-fsanitize=undefined";
        }
    }
    argv[k] = NULL;
    if (getenv("MGPU_NVCC_VERBOSE")) {
        for (size_t i = 0; i < k; i++) fprintf(stderr, "%s%s", i ? " " : "mgpu-harness nvcc: ", argv[i]);
        fputc('\n', stderr);
    }
    pid_t pid = fork();
    if (pid < 0) { free(argv); return mh_fail(e, MH_E_IO, "cannot run %s: fork: %s", nvcc, strerror(errno)); }
    if (pid == 0) {
        execv(nvcc, argv);
        fprintf(stderr, "mgpu-harness nvcc: cannot run %s: %s\n", nvcc, strerror(errno));
        _exit(127);
    }
    free(argv);
    int ws;
    while (waitpid(pid, &ws, 0) < 0)
        if (errno != EINTR) return mh_fail(e, MH_E_IO, "waiting for %s: waitpid: %s", nvcc, strerror(errno));
    *status = WIFEXITED(ws) ? WEXITSTATUS(ws) : WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : 1;
    if (!link && !plain && *status == 0 && nmarks) merge_markers(args, n, marks, nmarks);
    for (size_t i = 0; i < nmarks; i++) {
        unlink(marks[i]);
        free(marks[i]);
    }
    free(marks);
    if (tmpdir[0]) rmdir(tmpdir);
    return 0;
}

/* The probes as the stand-in reads them from MGPU_CUDART_PROBES: a record per probe (0x1e after
 * each), fields kind, name, loop, per_loop, around, from, to, from_line, to_line (0x1f between);
 * a string field is '=' and its text, or empty for none. */
char *mh_exec_probes_serialize(const mh_probe *p, unsigned n)
{
    size_t cap = 64, len = 0;
    char *out = malloc(cap);
    for (unsigned i = 0; out && i < n; i++) {
        const char *strs[] = {p[i].name, p[i].loop, p[i].around, p[i].from, p[i].to};
        size_t need = 64;
        for (int k = 0; k < 5; k++) need += strs[k] ? strlen(strs[k]) + 1 : 0;
        if (len + need >= cap) {
            char *no = realloc(out, cap = (len + need) * 2);
            if (!no) { free(out); return NULL; }
            out = no;
        }
        len += (size_t)sprintf(out + len, "%d\x1f%s%s\x1f%s%s\x1f%d\x1f%s%s\x1f%s%s\x1f%s%s\x1f%u\x1f%u\x1e", (int)p[i].kind,
                               p[i].name ? "=" : "", p[i].name ? p[i].name : "", p[i].loop ? "=" : "",
                               p[i].loop ? p[i].loop : "", p[i].per_loop, p[i].around ? "=" : "",
                               p[i].around ? p[i].around : "", p[i].from ? "=" : "", p[i].from ? p[i].from : "",
                               p[i].to ? "=" : "", p[i].to ? p[i].to : "", p[i].from_line, p[i].to_line);
    }
    if (out) out[len] = 0;
    return out;
}
