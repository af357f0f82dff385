/* dumpbench.c - helper of scripts/bench/dump.sh:
 *   dumpbench gen OUT.bin META.json BLOCKS WARPS EVENTS   a warp-scope buffer
 *   dumpbench floor OUT BYTES      write BYTES bytes in 1 MiB writes (the floor)
 *   dumpbench measure CMD ARGS...  run CMD; print "wall_s peak_rss_kb" */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int gen(const char *out, const char *meta, long blocks, long warps, long events)
{
    long E = 3 + 2 * events;
    uint32_t *tr = malloc((size_t)E * 4);
    FILE *f = fopen(out, "wb");
    if (!f || !tr) { perror(out); return 1; }
    uint64_t rng = 12345;
    for (long b = 0; b < blocks; b++)
        for (long w = 0; w < warps; w++) {
            tr[0] = 1000000u + (uint32_t)(b % 97);
            tr[1] = (uint32_t)(b % 132);
            tr[2] = (uint32_t)(2 * events);
            uint32_t clock = (uint32_t)(b * 7919 + w * 104729);
            /* groups of 4: B step, B load|store, E load|store, E step */
            for (long k = 0; k < events; k++) {
                rng = rng * 6364136223846793005ull + 1442695040888963407ull;
                clock += 20 + (uint32_t)(rng >> 55);
                long p = k % 4;
                uint32_t inner = (k / 4) % 2 ? 2 : 1;
                uint32_t tag = p == 0 ? 0 : p == 1 ? inner : p == 2 ? (inner | 0x80000000u) : 0x80000000u;
                tr[3 + 2 * k] = tag;
                tr[4 + 2 * k] = clock;
            }
            if (fwrite(tr, 4, (size_t)E, f) != (size_t)E) { perror(out); return 1; }
        }
    fclose(f);
    free(tr);
    f = fopen(meta, "w");
    if (!f) { perror(meta); return 1; }
    fprintf(f, "{\"grid\": [%ld, 1, 1], \"block\": [%ld, 1, 1], \"entries_per_warpgroup\": %ld, "
               "\"trace_scope\": \"warp\", \"names\": {\"step\": 0, \"load\": 1, \"store\": 2}}\n",
            blocks, warps * 32, E);
    fclose(f);
    return 0;
}

static int floor_write(const char *out, long long bytes)
{
    size_t chunk = 1u << 20;
    char *buf = malloc(chunk);
    memset(buf, ' ', chunk);
    FILE *f = fopen(out, "wb");
    if (!f) { perror(out); return 1; }
    int fd = fileno(f);
    while (bytes > 0) {
        size_t n = bytes < (long long)chunk ? (size_t)bytes : chunk;
        /* touch the buffer as a producer would */
        buf[bytes % (long long)chunk] = 'x';
        if (write(fd, buf, n) != (ssize_t)n) { perror(out); return 1; }
        bytes -= (long long)n;
    }
    fclose(f);
    free(buf);
    return 0;
}

static int measure(char **argv)
{
    double t0 = now();
    pid_t pid = fork();
    if (pid == 0) {
        execvp(argv[0], argv);
        perror(argv[0]);
        _exit(127);
    }
    int status;
    struct rusage ru;
    wait4(pid, &status, 0, &ru);
    double t = now() - t0;
    printf("%.4f %ld\n", t, ru.ru_maxrss);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv)
{
    if (argc >= 7 && !strcmp(argv[1], "gen"))
        return gen(argv[2], argv[3], atol(argv[4]), atol(argv[5]), atol(argv[6]));
    if (argc == 4 && !strcmp(argv[1], "floor")) return floor_write(argv[2], atoll(argv[3]));
    if (argc >= 3 && !strcmp(argv[1], "measure")) return measure(argv + 2);
    fprintf(stderr, "usage: dumpbench gen OUT META BLOCKS WARPS EVENTS | floor OUT BYTES | measure CMD...\n");
    return 2;
}
