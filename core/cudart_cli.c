/* cudart_cli.c - the `nvcc` and `exec` subcommands: build a CUDA program
 * with the harness's runtime in place of NVIDIA's, and run one with every
 * runtime call served by emu (core/exec/exec.h; docs/cudart.md). */
#include "cudart_cli.h"
#include "exec/exec.h"
#include "instrument/instrument.h"
#include "lua/lua_glue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char NVCC_USAGE[] =
    "usage: mgpu-harness nvcc NVCC_ARGS...\n"
    "\n"
    "Runs nvcc with the harness's CUDA runtime in place of NVIDIA's: the program's runtime calls\n"
    "run on emu.  Added to the arguments: -gencode arch=compute_90a,code=compute_90a (the PTX emu\n"
    "runs, read from the program's own fat binary when it runs), -no-compress (unless a compression\n"
    "option is given), -cudart none and, when linking, the stand-in's static libraries.\n"
    "-cudart given by you is replaced.  -ptx, -cubin, -E, -M, --version ... go to nvcc as they are.\n"
    "MGPU_NVCC names the nvcc (else PATH, $CUDA_HOME/bin, /usr/local/cuda/bin); MGPU_NVCC_VERBOSE=1\n"
    "prints the command.  The exit status is nvcc's (2: relocatable device code, -rdc/-dc/-dlink,\n"
    "which emu does not run; 77: no nvcc).\n";

static const char EXEC_USAGE[] =
    "usage: mgpu-harness exec [--capture DIR] [--trace DIR [--probes FILE]] [--stats] [--sms N] [--model NAME]\n"
    "                         [--model-params NAME=NUMBER,...] -- PROG [ARGS...]\n"
    "\n"
    "Runs PROG (built by `mgpu-harness nvcc`, or by nvcc -cudart shared) with every CUDA runtime call\n"
    "served by emu, and exits with its status (128 + N when signal N ended it).\n"
    "  --capture DIR  write DIR/launches.lua, every launch with its inputs and outputs; `mgpu-harness\n"
    "                 DIR/launches.lua` replays them on emu and checks the outputs are the program's\n"
    "  --trace DIR    a Perfetto trace per launch of a kernel with markers (DIR/launch-N.trace.json)\n"
    "  --probes FILE  with --trace: regions in kernels without markers (FILE.json or FILE.lua, as\n"
    "                 `instrument --probes` takes them)\n"
    "  --stats        emu's exact counters of each launch on stderr\n"
    "  --sms N        emu's virtual SMs (default 132)\n"
    "  --model NAME   the device model emu's virtual time comes from: h200 (default), h100-sxm, h100-pcie\n"
    "  --model-params NAME=NUMBER,...  parameters of that model set otherwise (docs/emu.md: l2_bytes_per_clk=6000)\n";

int mh_cli_nvcc(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(NVCC_USAGE, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    mh_error e = {0};
    int status = 0;
    if (mh_exec_nvcc(argv + 1, &status, &e)) {
        fprintf(stderr, "mgpu-harness nvcc: %s\n", e.message);
        return e.code == MH_E_NOT_FOUND ? 77 : e.code == MH_E_BAD_ARGUMENT ? 2 : 1;
    }
    return status;
}

static int usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "mgpu-harness exec: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n\n%s", EXEC_USAGE);
    return 2;
}

int mh_cli_exec(int argc, char **argv)
{
    mh_exec_opts o = {0};
    const char *probes_path = NULL;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) { i++; break; }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { fputs(EXEC_USAGE, stdout); return 0; }
        if (!strcmp(a, "--stats")) { o.stats = 1; continue; }
        if (!strcmp(a, "--capture") || !strcmp(a, "--trace") || !strcmp(a, "--sms") || !strcmp(a, "--probes") ||
            !strcmp(a, "--model") || !strcmp(a, "--model-params")) {
            if (i + 1 >= argc || !argv[i + 1][0]) return usage("option `%s` needs a value", a);
            const char *v = argv[++i];
            if (!strcmp(a, "--capture")) o.capture_dir = v;
            else if (!strcmp(a, "--trace")) o.trace_dir = v;
            else if (!strcmp(a, "--probes")) probes_path = v;
            else if (!strcmp(a, "--model")) o.model = v;
            else if (!strcmp(a, "--model-params")) o.model_params = v;
            else {
                char *end;
                unsigned long n = strtoul(v, &end, 10);
                if (*end || n < 1 || n > 1024) return usage("--sms takes a count from 1 to 1024, not `%s`", v);
                o.sms = (unsigned)n;
            }
            continue;
        }
        if (a[0] == '-') return usage("unknown option `%s` (the program follows `--`)", a);
        break; /* the program, without -- */
    }
    if (i >= argc) return usage("%s", "no program to run: exec [OPTIONS] -- PROG [ARGS...]");
    o.argv = argv + i;
    mh_error e = {0};
    int status = 0;
    char *probes = NULL;
    if (probes_path) { /* read and checked here, by the reader dev:load and instrument use */
        if (!o.trace_dir) return usage("%s", "--probes goes with --trace DIR (the probes place regions to trace)");
        const mh_probe *p = NULL;
        unsigned np = 0;
        mh_lua_probes *lp = mh_lua_probes_read(probes_path, &p, &np, &e);
        if (!lp) {
            fprintf(stderr, "mgpu-harness exec: %s\n", e.message);
            return e.code == MH_E_IO ? 1 : 2;
        }
        probes = mh_exec_probes_serialize(p, np);
        mh_lua_probes_free(lp);
        if (!probes) {
            fprintf(stderr, "mgpu-harness exec: out of memory\n");
            return 1;
        }
        o.probes = probes;
    }
    int rc = mh_exec_run(&o, &status, &e);
    free(probes);
    if (rc) {
        fprintf(stderr, "mgpu-harness exec: %s\n", e.message);
        return e.code == MH_E_BAD_ARGUMENT ? 2 : 1;
    }
    return status;
}
