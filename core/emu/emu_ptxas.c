/* emu_ptxas.c - ptxas -v for emu's kernel facts and residency (see emu_ptxas.h).
 * ptxas runs in /tmp/mgpu-ptxas.tmp.PID.XXXXXX with a time limit ($MGPU_PTXAS_TIMEOUT
 * seconds, 60 by default) and is stopped by a stop request (Ctrl-C, base/stop.h, left set
 * for the launch to raise): the figures are then unknown, the note says why, and nothing
 * is cached.  It gets SIGKILL when the harness ends however it ends (PR_SET_PDEATHSIG: a
 * killed harness no longer leaves it compiling).  The folders of runs killed while ptxas ran
 * are removed by the next process's first ptxas (base/out.h mh_stale_clean: their PID is gone). */
#include "emu/emu_ptxas.h"
#include "base/out.h"
#include "base/read_file.h"
#include "base/stop.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


static int is_exec(const char *p) { return p && *p && access(p, X_OK) == 0; }

/* the ptxas to run, or 0 and why not */
static int find_ptxas(char *out, size_t n, char *why, size_t wn)
{
    const char *env = getenv("MGPU_PTXAS");
    if (env && !strcmp(env, "none")) {
        snprintf(why, wn, "ptxas is turned off (MGPU_PTXAS=none)");
        return 0;
    }
    if (env && *env) {
        if (is_exec(env)) { snprintf(out, n, "%s", env); return 1; }
        snprintf(why, wn, "MGPU_PTXAS=%.200s is not an executable", env);
        return 0;
    }
    const char *path = getenv("PATH");
    if (path) {
        const char *p = path;
        while (*p) {
            size_t len = strcspn(p, ":");
            if (len) {
                snprintf(out, n, "%.*s/ptxas", (int)len, p);
                if (is_exec(out)) return 1;
            }
            p += len + (p[len] == ':');
        }
    }
    const char *home = getenv("CUDA_HOME");
    if (home && *home) {
        snprintf(out, n, "%s/bin/ptxas", home);
        if (is_exec(out)) return 1;
    }
    snprintf(out, n, "/usr/local/cuda/bin/ptxas");
    if (is_exec(out)) return 1;
    snprintf(why, wn, "ptxas not found (MGPU_PTXAS, PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)");
    return 0;
}

static void cache_dir(char *out, size_t n)
{
    const char *d = getenv("MGPU_CACHE"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    if (d && *d) snprintf(out, n, "%s", d);
    else if (x && *x) snprintf(out, n, "%s/mgpu-harness", x);
    else if (h && *h) snprintf(out, n, "%s/.cache/mgpu-harness", h);
    else snprintf(out, n, "/tmp/mgpu-harness-cache");
}

static void mkdir_p(const char *dir)
{
    char p[1024];
    snprintf(p, sizeof p, "%s", dir);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            mkdir(p, 0777);
            *s = '/';
        }
    mkdir(p, 0777);
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static int write_all(const char *path, const char *s, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    int ok = fwrite(s, 1, n, f) == n;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static mh_ptxas_kernel *kernel(mh_ptxas_info *o, const char *name, size_t len)
{
    for (size_t i = 0; i < o->n; i++)
        if (strlen(o->k[i].name) == len && !strncmp(o->k[i].name, name, len)) return &o->k[i];
    mh_ptxas_kernel *nk = realloc(o->k, (o->n + 1) * sizeof *nk);
    if (!nk) return NULL;
    o->k = nk;
    mh_ptxas_kernel *k = &o->k[o->n];
    memset(k, 0, sizeof *k);
    k->name = malloc(len + 1);
    if (!k->name) return NULL;
    memcpy(k->name, name, len);
    k->name[len] = 0;
    o->n++;
    return k;
}

/* the number before `what` in the line (", 1024 bytes smem"), -1 when absent */
static int field(const char *line, const char *what)
{
    const char *p = strstr(line, what);
    if (!p) return -1;
    while (p > line && p[-1] == ' ') p--;
    while (p > line && p[-1] >= '0' && p[-1] <= '9') p--;
    return atoi(p);
}

void mh_ptxas_parse(const char *log, mh_ptxas_info *out)
{
    /* indices, not pointers: kernel() reallocates out->k when a later line names a new one */
    ptrdiff_t entry = -1, props = -1;
    int c7507 = 0; /* ptxas prints its diagnostics of an entry before that entry's "Compiling entry function" */
    for (const char *p = log; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), p);
        const char *q;
        if ((q = strstr(line, "Compiling entry function '"))) {
            q += strlen("Compiling entry function '");
            mh_ptxas_kernel *k = kernel(out, q, strcspn(q, "'"));
            entry = k ? k - out->k : -1;
            if (k) k->setmaxnreg_ignored = c7507;
            c7507 = 0;
        } else if (strstr(line, "(C7507)") && strstr(line, "setmaxnreg")) {
            c7507 = 1;
        } else if ((q = strstr(line, "Function properties for "))) {
            q += strlen("Function properties for ");
            mh_ptxas_kernel *k = kernel(out, q, strcspn(q, " \r"));
            props = k ? k - out->k : -1;
        } else if (strstr(line, "bytes stack frame") && props >= 0) {
            out->k[props].stack = field(line, " bytes stack frame");
            out->k[props].spill_stores = field(line, " bytes spill stores");
            out->k[props].spill_loads = field(line, " bytes spill loads");
        } else if ((q = strstr(line, "Used ")) && strstr(line, " registers") && entry >= 0) {
            mh_ptxas_kernel *k = &out->k[entry];
            k->regs = atoi(q + 5);
            k->barriers = field(line, " barriers");
            int smem = field(line, " bytes smem");
            k->smem = smem < 0 ? 0 : smem;
        }
        p = nl ? nl + 1 : NULL;
    }
}

/* ptxas's time limit in seconds: $MGPU_PTXAS_TIMEOUT, else 60 */
static double time_limit(void)
{
    const char *env = getenv("MGPU_PTXAS_TIMEOUT");
    char *end;
    double v = env && *env ? strtod(env, &end) : 0;
    return env && *env && !*end && v > 0 && v <= 86400 ? v : 60;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Waits for the child until it exits, the time limit passes or a stop is requested (Ctrl-C,
 * base/stop.h, left set for the launch to raise): then it is killed (its process group).
 * 0 and its status when it exited; -1 and why not. */
static int wait_child(pid_t pid, int *st, char *why, size_t wn)
{
    double limit = time_limit(), t0 = now_s();
    for (;;) {
        pid_t r = waitpid(pid, st, WNOHANG);
        if (r == pid) return 0;
        if (r < 0 && errno != EINTR) {
            snprintf(why, wn, "ptxas: waitpid failed (%s)", strerror(errno));
            return -1;
        }
        int stop = mh_stop_requested(), late = now_s() - t0 > limit;
        if (stop || late) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            while (waitpid(pid, st, 0) < 0 && errno == EINTR) {} /* SIGKILL: it goes at once */
            if (stop) snprintf(why, wn, "ptxas stopped (Ctrl-C)");
            else
                snprintf(why, wn, "ptxas ran past its time limit of %g s (MGPU_PTXAS_TIMEOUT) and was stopped",
                         limit);
            return -1;
        }
        struct timespec nap = {0, 5 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
}

/* runs ptxas on the text; its -v output (malloc'd) or NULL and why (a time limit or a Ctrl-C
 * leave nothing, so nothing is cached: another run may not meet them) */
static char *run_ptxas(const char *ptxas, const char *arch, const char *ptx, size_t len, char *why, size_t wn, int *ok)
{
    char dir[64]; /* named by this process: a run that is killed leaves it for the next to remove */
    snprintf(dir, sizeof dir, "/tmp/mgpu-ptxas.tmp.%ld.XXXXXX", (long)getpid());
    if (!mkdtemp(dir)) {
        snprintf(why, wn, "ptxas: no temporary folder (%s)", strerror(errno));
        return NULL;
    }
    char in[96], log[96], archopt[32];
    snprintf(in, sizeof in, "%s/k.ptx", dir);
    snprintf(log, sizeof log, "%s/log", dir);
    snprintf(archopt, sizeof archopt, "-arch=%s", arch);
    char *res = NULL;
    if (write_all(in, ptx, len) == 0) {
        char *argv[] = {(char *)ptxas, archopt, "-v", in, "-o", "/dev/null", NULL};
        pid_t parent = getpid(), pid = fork();
        int st = 0;
        if (pid == 0) { /* the child: its own process group (what it starts is stopped with it), and
                         * killed with the harness however that ends (SIGKILL included) */
            setpgid(0, 0);
            if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(127);
            int o = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600), z = open("/dev/null", O_RDONLY);
            if (o < 0 || z < 0 || dup2(o, 1) < 0 || dup2(o, 2) < 0 || dup2(z, 0) < 0) _exit(127);
            execv(ptxas, argv);
            _exit(127);
        }
        if (pid < 0) {
            snprintf(why, wn, "ptxas (%.200s) could not be started: %s", ptxas, strerror(errno));
        } else if (wait_child(pid, &st, why, wn) == 0) {
            res = mh_read_file(log, 0, NULL, NULL);
            *ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
            if (!res) snprintf(why, wn, "ptxas wrote nothing");
            else if (WIFEXITED(st) && WEXITSTATUS(st) == 127 && !*res) {
                free(res);
                res = NULL;
                snprintf(why, wn, "ptxas (%.200s) could not be started", ptxas);
            }
        }
    } else {
        snprintf(why, wn, "ptxas: cannot write %s", in);
    }
    unlink(in);
    unlink(log);
    rmdir(dir);
    return res;
}

void mh_ptxas_info_get(const char *ptx, size_t len, const char *target, mh_ptxas_info *out)
{
    memset(out, 0, sizeof *out);
    /* sm_90's figures (the device emu stands for), or the module's own architecture when it needs a later one */
    const char *arch = "sm_90";
    if (target && !strncmp(target, "sm_", 3) && (atoi(target + 3) > 90 || !strcmp(target, "sm_90a"))) arch = target;
    snprintf(out->arch, sizeof out->arch, "%s", arch);
    char ptxas[1024];
    if (!find_ptxas(ptxas, sizeof ptxas, out->note, sizeof out->note)) return;
    static int cleaned; /* the folders of runs that were killed while ptxas ran, once a process */
    if (!cleaned) {
        cleaned = 1;
        mh_stale_clean("/tmp");
    }
    uint64_t h = 1469598103934665603ull;
    h = fnv1a(h, arch, strlen(arch) + 1);
    h = fnv1a(h, ptxas, strlen(ptxas) + 1);
    h = fnv1a(h, ptx, len);
    char dir[900], path[1024];
    cache_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/ptxas-%016llx.txt", dir, (unsigned long long)h);
    char *log = mh_read_file(path, 0, NULL, NULL);
    int ok = 1;
    if (log) {
        ok = strncmp(log, "FAILED\n", 7) != 0;
    } else {
        log = run_ptxas(ptxas, arch, ptx, len, out->note, sizeof out->note, &ok);
        if (!log) return;
        mkdir_p(dir);
        char tmp[1100];
        snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
        size_t ln = strlen(log);
        char *rec = malloc(ln + 8);
        if (rec) {
            snprintf(rec, ln + 8, "%s%s", ok ? "" : "FAILED\n", log);
            if (write_all(tmp, rec, strlen(rec)) == 0) rename(tmp, path);
            else unlink(tmp);
            free(rec);
        }
    }
    if (!ok) {
        const char *body = strncmp(log, "FAILED\n", 7) ? log : log + 7, *err = strstr(body, "error");
        const char *b = err ? err : body;
        while (b > body && b[-1] != '\n') b--;
        snprintf(out->note, sizeof out->note, "ptxas refused the module: %.*s", (int)strcspn(b, "\n"), b);
    } else {
        mh_ptxas_parse(log, out);
        out->ok = 1;
    }
    free(log);
}

void mh_ptxas_info_free(mh_ptxas_info *info)
{
    for (size_t i = 0; i < info->n; i++) free(info->k[i].name);
    free(info->k);
    info->k = NULL;
    info->n = 0;
}

const mh_ptxas_kernel *mh_ptxas_find(const mh_ptxas_info *info, const char *name)
{
    for (size_t i = 0; i < info->n; i++)
        if (!strcmp(info->k[i].name, name)) return &info->k[i];
    return NULL;
}
