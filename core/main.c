/* main.c - the mgpu-harness executable: subcommands (dump, instrument, info,
 * replay, compare: the last two in Lua) and, for anything ending in .lua, the
 * embedded Lua runner (lua/runner.c).  Every command answers --help and
 * refuses an option it does not take (exit status 2, with its usage). */
#include "base/read_file.h"
#include "trace/counters.h"
#include "trace/dump_file.h"
#include "trace/meta.h"
#include "backends.h"
#include "cudart_cli.h"
#include "instrument/instrument.h"
#include "frontend/ptx.h"
#include "lua/lua_glue.h"
#include "version.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char USAGE[] =
    "usage: mgpu-harness SCRIPT.lua [ARGS...]     run a Lua script (or: mgpu-harness run SCRIPT.lua [ARGS...]);\n"
    "                                             an experiment takes [--set NAME=V1,V2] [--list] [--out DIR]\n"
    "                                             [--resume DIR [--force]] [--backend B] [-q|--quiet]\n"
    "                                             [--workers N|auto [--devices 0,2,3]] [--shard I/N]\n"
    "       mgpu-harness dump BUFFER --meta META.json [-o|--output OUT.json] [--compat mosaic]\n"
    "                         [--clock-ghz G] [--calib FILE] [--counters BINS] [--summary]\n"
    "                         [--summary-json FILE] [-q|--quiet]\n"
    "       mgpu-harness instrument IN.ptx [-o|--output OUT.ptx] [--scope warp|warpgroup] [--names NAMES.json]\n"
    "                               [--roles ROLES.json] [--probes FILE.json|FILE.lua]   regions from markers and probes\n"
    "       mgpu-harness replay RESULTS_DIR [--force]\n"
    "       mgpu-harness compare BASE NEW [--max-slowdown PCT]   results folders or region summaries\n"
    "       mgpu-harness merge OUT DIR...                        shard folders of one sweep into one\n"
    "       mgpu-harness stats FILE.stats.json [--top N]          emu's exact counters, costliest lines first\n"
    "       mgpu-harness report INPUT [INPUT2] [-o report.html] [--svg OUTDIR] [--point N|all]\n"
    "                           [--force]                        an HTML report with pictures\n"
    "       mgpu-harness slurm SCRIPT.lua --tasks N --out DIR [--gpus-per-task G] [--partition P]\n"
    "                          [--time T] [--wait] [--dry-run] [--set NAME=V1,V2] [--backend B]\n"
    "                          [-- EXTRA_SBATCH_ARGS...]      a sweep as a Slurm job array, merged\n"
    "       mgpu-harness nvcc NVCC_ARGS...                    build a CUDA program that runs on emu\n"
    "       mgpu-harness exec [--capture DIR] [--trace DIR] [--stats] -- PROG [ARGS...]\n"
    "                                                    run a CUDA program on emu (docs/cudart.md)\n"
    "       mgpu-harness info\n"
    "       mgpu-harness --help | --version\n"
    "\n"
    "Every command takes --help (-h): `mgpu-harness dump --help` explains the dump options.\n"
    "An option a command does not take is an error (exit status 2).\n";

static const char SCRIPT_USAGE[] =
    "usage: mgpu-harness SCRIPT.lua [ARGS...]\n"
    "       mgpu-harness run SCRIPT.lua [ARGS...]\n"
    "\n"
    "Runs a Lua script with the mgpu library embedded; ARGS are its `arg` (arg[1..n]) and `...`.\n"
    "A script that returns an experiment (a table with setup) is run point by point; it takes:\n"
    "  --set NAME=V1,V2   override an axis (values typed: integers, numbers, true/false, strings)\n"
    "  --list             list the points (and a .cu's builds), run nothing; streamed, any number\n"
    "  --out DIR          write the results here (default results/NAME/TIME)\n"
    "  --resume DIR       redo only the points of DIR without an ok line (its axes and --set)\n"
    "  --force            with --resume: go on although the script, the module or a source changed\n"
    "  --backend B        emu, cuda, cuda:N (default: auto)\n"
    "  --workers N|auto   run the points in N worker processes (auto: one per GPU, or per core on emu)\n"
    "  --devices 0,2,3    with --workers: the CUDA devices the workers use\n"
    "  --shard I/N        only the points of shard I of N (round-robin over the full point list)\n"
    "  -q, --quiet        no progress line and no table; each failed point still one line on stderr\n"
    "A plain script takes what it reads from `arg`; mgpu.script_dir takes an output folder.\n"
    "`mgpu-harness SCRIPT.lua --help` prints this, without running the script.\n"
    "\n"
    "exit status: 0 ok, 7 an error in the script (script_error) or a failed point, the status of an\n"
    "             uncaught error value's code otherwise (docs/cli.md \"Exit codes\")\n";

static const char INFO_USAGE[] =
    "usage: mgpu-harness info\n"
    "\n"
    "Lists the backends (emu, cuda: the driver, its devices) and where nvcc is. Takes no options.\n";

static const char REPLAY_USAGE[] =
    "usage: mgpu-harness replay RESULTS_DIR [--force]\n"
    "\n"
    "Re-runs a results folder from its manifest into RESULTS_DIR/replay-TIME/ and compares every point.\n"
    "  --force            go on although the script, the module or a source changed since the run\n"
    "\n"
    "exit status: 0 every point agrees, 8 some point differs\n";

static const char COMPARE_USAGE[] =
    "usage: mgpu-harness compare BASE NEW [--max-slowdown PCT]\n"
    "\n"
    "Compares two results folders of one experiment (points matched by their axis values: each point's\n"
    "median launch time before and after, its change, \"(noise)\" when within the spread both runs\n"
    "showed, each region's median change), or two region summaries (.summary.json: per region).\n"
    "  --max-slowdown PCT a regression gate: exit status 9 when a launch time beyond its noise, a region\n"
    "                     median or the span grew by more than PCT percent (a decimal, 0 or more), or a\n"
    "                     point ok in BASE failed in NEW or is not in it; it names the worst point, the\n"
    "                     regions slower there and whether the kernel's source changed\n"
    "  -h, --help         this text\n"
    "\n"
    "exit status: 0 compared (and within --max-slowdown), 2 bad usage, 3 a folder or summary that is\n"
    "             not what the harness writes (bad_results), 1 unreadable, 9 slower than --max-slowdown\n";

static const char MERGE_USAGE[] =
    "usage: mgpu-harness merge OUT DIR...\n"
    "\n"
    "Merges results folders of one experiment (the shards of a sweep) into OUT: refuses folders whose\n"
    "manifests disagree, takes the ok row of a point found twice, links the point files, lists the\n"
    "points no folder has (`SCRIPT.lua --resume OUT` runs them). Merging again is idempotent.\n"
    "\n"
    "exit status: 0 every point there and ok, 7 some point failed (as the run's), 1 some missing\n";

static const char SLURM_USAGE[] =
    "usage: mgpu-harness slurm SCRIPT.lua --tasks N --out DIR [--gpus-per-task G] [--partition P]\n"
    "                          [--time T] [--wait] [--dry-run] [--set NAME=V1,V2] [--backend B]\n"
    "                          [-- EXTRA_SBATCH_ARGS...]\n"
    "\n"
    "Writes DIR/slurm/array.sh (task i runs --shard i/N --out DIR/shards/i --workers auto) and\n"
    "DIR/slurm/merge.sh (after the array, merges the shards into DIR), submits both with sbatch and\n"
    "prints the job ids. Run again on the same DIR, it submits only shards missing points.\n"
    "  --tasks N          array tasks (1 to 100000, at most the sweep's points)\n"
    "  --out DIR          the merged results folder; the shards go to DIR/shards/i (on a filesystem\n"
    "                     every node sees, as the harness and the experiment must be)\n"
    "  --gpus-per-task G  #SBATCH --gpus-per-task (1 to 1024)\n"
    "  --partition P      #SBATCH --partition of both jobs\n"
    "  --time T           #SBATCH --time of both jobs (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS,\n"
    "                     UNLIMITED)\n"
    "  --wait             wait for the merge job and exit with its status\n"
    "  --dry-run          print the two scripts and the sbatch command; write and submit nothing\n"
    "  --set NAME=V1,V2   an axis override, passed to every task (once per axis)\n"
    "  --backend B        the tasks' backend (emu, cuda, cuda:N, auto)\n"
    "  -- ARGS...         passed to both sbatch calls as they are (-- --account=proj --qos=high)\n"
    "  -h, --help         this text\n"
    "sbatch and squeue are found on PATH ($MGPU_SBATCH, $MGPU_SQUEUE override).\n"
    "\n"
    "exit status: 0 submitted (with --wait, the merge's status: 0 complete, 7 a point failed, 1 points\n"
    "             missing), 2 bad usage, 3 sbatch or squeue not found, 6 sbatch refused a job, 1 I/O\n";

static const char DUMP_USAGE[] =
    "usage: mgpu-harness dump BUFFER --meta META.json [options]\n"
    "\n"
    "Converts a trace buffer to a Chrome/Perfetto trace (JSON).\n"
    "  BUFFER               raw little-endian uint32 words (.bin) or a NumPy .npy of uint32/int32\n"
    "  --meta FILE          grid, block, entries_per_warpgroup, trace_scope, names (JAX capture format)\n"
    "  -o, --output FILE    write the trace here (atomically); default stdout\n"
    "  --compat mosaic      produce exactly what JAX's ProfilerSpec.dump writes\n"
    "  --clock-ghz G        SM clock rate for cycles -> ns (default: the meta's clock_ghz; without\n"
    "                       either, times stay in cycles and the trace says so)\n"
    "  --calib FILE         an instrumented trace's calibration words (trace:save writes them): the\n"
    "                       SM clock is measured from them (default mode)\n"
    "  --counters BINS      add a counter track per region: how many traces are inside it, averaged\n"
    "                       over each of BINS equal slices of the kernel's span (default mode)\n"
    "  --summary            print a table of region durations (to stderr when the trace goes to stdout)\n"
    "  --summary-json FILE  write the region summary as JSON\n"
    "  -q, --quiet          no warnings (a trace full to its capacity, clock steps backwards)\n"
    "  -h, --help           this text\n"
    "BUFFER, META and FILE may be pipes (/dev/stdin, <(...)): they are read whole. An output that is\n"
    "one of the inputs is refused before anything is written.\n"
    "\n"
    "exit status: 0 ok, 1 I/O error, 2 bad usage, 3 bad buffer/meta/trace, 4 insufficient_space,\n"
    "             5 odd_events\n";

static void print_warning(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "mgpu-harness: warning: %s\n", msg);
}

static int report(const mh_error *e, const char *context)
{
    if (context)
        fprintf(stderr, "mgpu-harness: %s: %s [%s]\n", context, e->message, mh_code_name(e->code));
    else
        fprintf(stderr, "mgpu-harness: %s [%s]\n", e->message, mh_code_name(e->code));
    if (e->code == MH_E_INSUFFICIENT_SPACE && e->required > 0)
        fprintf(stderr, "mgpu-harness: required entries_per_warpgroup: %lld (have %lld)\n", (long long)e->required,
                (long long)e->capacity);
    return mh_code_exit_status(e->code);
}

/* A usage error: the message, then the command's usage; exit status 2. */
static int usage_error_of(const char *usage, const char *fmt, const char *arg)
{
    fprintf(stderr, "mgpu-harness: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n\n%s", usage);
    return mh_code_exit_status(MH_E_BAD_ARGUMENT);
}

#define usage_error(fmt, arg) usage_error_of(DUMP_USAGE, fmt, arg)

/* "-h" or "--help" */
static int is_help(const char *a) { return !strcmp(a, "--help") || !strcmp(a, "-h"); }

/* An option's value, checked as getopt hands it over: an empty one (an unset shell variable,
 * `-o "$OUT"`) is refused, never taken as a file named "", and so is an option given a second
 * time (`-o a.json -o b.json` would silently write only b.json).  seen: the values so far, by
 * getopt's code (< 512).  0 when the value is taken, else the usage error's exit status. */
static int take_value(const char *usage, const char **seen, int c, char **argv, int optind_now)
{
    /* the option as written: `-o VALUE` / `--meta VALUE` (two words), `--meta=VALUE`, `-oVALUE` */
    const char *opt = optarg == argv[optind_now - 1] ? argv[optind_now - 2] : argv[optind_now - 1];
    char what[96];
    snprintf(what, sizeof what, "%s", opt);
    char *eq = strchr(what, '=');
    if (eq) *eq = '\0';
    else if (what[0] == '-' && what[1] != '-' && what[1]) what[2] = '\0';
    if (!optarg[0]) return usage_error_of(usage, "%s is given an empty value (an unset shell variable?)", what);
    if (seen[c]) {
        fprintf(stderr, "mgpu-harness: %s given twice (`%s` and `%s`): give it once\n\n%s", what, seen[c], optarg,
                usage);
        return mh_code_exit_status(MH_E_BAD_ARGUMENT);
    }
    seen[c] = optarg;
    return 0;
}

static int cmd_dump(int argc, char **argv)
{
    enum { OPT_META = 256, OPT_COMPAT, OPT_CLOCK, OPT_CALIB, OPT_COUNTERS, OPT_SUMMARY, OPT_SUMMARY_JSON };
    static const struct option opts[] = {
        {"meta", required_argument, NULL, OPT_META},
        {"output", required_argument, NULL, 'o'},
        {"compat", required_argument, NULL, OPT_COMPAT},
        {"clock-ghz", required_argument, NULL, OPT_CLOCK},
        {"calib", required_argument, NULL, OPT_CALIB},
        {"counters", required_argument, NULL, OPT_COUNTERS},
        {"summary", no_argument, NULL, OPT_SUMMARY},
        {"summary-json", required_argument, NULL, OPT_SUMMARY_JSON},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    mh_dump_request req = {.mode = MH_DUMP_DEFAULT, .warn = print_warning};
    const char *summary_json = NULL;
    int print_summary = 0, c;
    char *end;

    const char *seen[512] = {0};
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:qh", opts, NULL)) != -1) {
        if (c > 0 && c < 512 && optarg) {
            int st = take_value(DUMP_USAGE, seen, c, argv, optind);
            if (st) return st;
        }
        switch (c) {
        case OPT_META: req.meta_path = optarg; break;
        case 'o': req.out_path = optarg; break;
        case OPT_COMPAT:
            if (strcmp(optarg, "mosaic") != 0) return usage_error("--compat takes `mosaic`, not `%s`", optarg);
            req.mode = MH_DUMP_MOSAIC;
            break;
        case OPT_CLOCK:
            errno = 0;
            req.clock_ghz = strtod(optarg, &end);
            if (errno || *end || end == optarg || !mh_clock_ghz_ok(req.clock_ghz))
                return usage_error("--clock-ghz takes an SM clock rate in GHz from 0.1 to 10, such as 1.98, not `%s`",
                                   optarg);
            break;
        case OPT_CALIB: req.calib_path = optarg; break;
        case OPT_COUNTERS: {
            errno = 0;
            unsigned long bins = strtoul(optarg, &end, 10);
            if (errno || *end || end == optarg || optarg[0] == '-' || bins < 1 || bins > MH_COUNTERS_MAX_BINS)
                return usage_error("--counters takes a number of bins from 1 to 100000, not `%s`", optarg);
            req.counter_bins = (uint32_t)bins;
            break;
        }
        case OPT_SUMMARY: print_summary = 1; break;
        case OPT_SUMMARY_JSON: summary_json = optarg; break;
        case 'q': req.warn = NULL; break;
        case 'h': fputs(DUMP_USAGE, stdout); return 0;
        case ':': return usage_error("option `%s` needs a value", argv[optind - 1]);
        default: return usage_error("unknown option `%s`", argv[optind - 1]);
        }
    }
    if (optind >= argc) return usage_error("%s", "dump needs a BUFFER file");
    if (optind + 1 < argc) return usage_error("unexpected argument `%s`", argv[optind + 1]);
    if (!req.meta_path) return usage_error("%s", "dump needs --meta META.json (grid, block, entries, names)");
    if (!argv[optind][0]) return usage_error("%s", "BUFFER is the empty string (an unset shell variable?): give a path");
    req.buffer_path = argv[optind];
    req.want_summary = print_summary || summary_json;

    mh_dump_result r;
    mh_error e;
    mh_error_clear(&e);
    /* the outputs, before anything is written: never one of the inputs, nor each other */
    const char *inputs[] = {req.buffer_path, req.meta_path, req.calib_path};
    const char *outs[] = {req.out_path, summary_json}, *what[] = {"-o", "--summary-json"};
    if (mh_out_refuse_overlap(outs, what, 2, inputs, 3, &e)) return report(&e, NULL);
    if (mh_dump_files(&req, &r, &e)) {
        int on_trace = e.code == MH_E_BAD_TRACE || e.code == MH_E_INSUFFICIENT_SPACE || e.code == MH_E_ODD_EVENTS;
        return report(&e, on_trace ? req.buffer_path : NULL);
    }
    int status = 0;
    if (print_summary) {
        int to_stdout = req.out_path && strcmp(req.out_path, "-") != 0;
        mh_summary_print(&r.summary, to_stdout ? stdout : stderr);
    }
    if (summary_json && mh_summary_write_json(&r.summary, summary_json, &e)) status = report(&e, NULL);
    mh_dump_result_free(&r);
    return status;
}

static const char INSTRUMENT_USAGE[] =
    "usage: mgpu-harness instrument IN.ptx [-o OUT.ptx] [--scope warp|warpgroup] [--names NAMES.json]\n"
    "                                      [--roles ROLES.json] [--probes FILE.json|FILE.lua]\n"
    "\n"
    "Rewrites the region markers (// @mgpu begin NAME ... // @mgpu end NAME) of every kernel, and the\n"
    "probes, into trace stores. Each instrumented kernel gets three parameters appended: .u64 __mgpu_trace\n"
    "(the buffer, traces x entries uint32), .u32 __mgpu_entries (entries_per_warpgroup) and .u64\n"
    "__mgpu_calib (per trace: %clock and %globaltimer_lo at its start and exit, 4 uint32). A module\n"
    "without markers or probes is written unchanged.\n"
    "  IN.ptx               the module; a pipe (/dev/stdin, <(...)) is read to its end\n"
    "  -o, --output FILE    write the rewritten PTX here (atomically); default stdout\n"
    "  --scope S            warp (default) or warpgroup: who records, one trace per warp or per 128 threads\n"
    "  --names FILE         write the region name table as {\"name\": id}\n"
    "  --roles FILE         write the lanes' roles (// @mgpu role NAME) as {\"role\": id}: a meta's \"roles\"\n"
    "  --probes FILE        regions in kernels without markers: FILE.json holds a JSON array of probe\n"
    "                       objects, FILE.lua returns the list, as dev:load's probes = {...} (docs/cli.md)\n"
    "  -h, --help           this text\n"
    "An output that is the input (or the other output) is refused before anything is written.\n"
    "\n"
    "exit status: 0 ok, 1 I/O error, 2 bad usage or a bad probe file (naming probes[N]) or a probe that\n"
    "             matches nothing, 3 PTX it cannot parse or markers that do not nest\n";

static int cmd_instrument(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"scope", required_argument, NULL, 's'},
        {"names", required_argument, NULL, 'n'},  {"probes", required_argument, NULL, 'p'},
        {"roles", required_argument, NULL, 'r'},  {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *out_path = NULL, *names_path = NULL, *probes_path = NULL, *roles_path = NULL;
    mh_scope scope = MH_SCOPE_WARP;
    const char *seen[512] = {0};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        if (c > 0 && c < 512 && optarg) {
            int st = take_value(INSTRUMENT_USAGE, seen, c, argv, optind);
            if (st) return st;
        }
        switch (c) {
        case 'o': out_path = optarg; break;
        case 'n': names_path = optarg; break;
        case 'r': roles_path = optarg; break;
        case 'p': probes_path = optarg; break;
        case 's':
            if (mh_scope_parse(optarg, &scope))
                return usage_error_of(INSTRUMENT_USAGE, "--scope takes warp or warpgroup, not `%s`", optarg);
            break;
        case 'h': fputs(INSTRUMENT_USAGE, stdout); return 0;
        case ':': return usage_error_of(INSTRUMENT_USAGE, "option `%s` needs a value", argv[optind - 1]);
        default: return usage_error_of(INSTRUMENT_USAGE, "unknown option `%s`", argv[optind - 1]);
        }
    }
    if (optind != argc - 1) return usage_error_of(INSTRUMENT_USAGE, "%s", "instrument needs exactly one IN.ptx");
    if (!argv[optind][0])
        return usage_error_of(INSTRUMENT_USAGE, "%s", "IN.ptx is the empty string (an unset shell variable?): give a path");
    mh_error e;
    mh_error_clear(&e);
    /* the outputs, before anything is read or written: never the input, nor each other */
    const char *input[] = {argv[optind], probes_path};
    const char *outs[] = {out_path, names_path, roles_path}, *what[] = {"-o", "--names", "--roles"};
    if (mh_out_refuse_overlap(outs, what, 3, input, probes_path ? 2 : 1, &e)) return report(&e, NULL);
    /* the probes first: read and checked before the module (one reader with dev:load's) */
    mh_instrument_opts io = {.scope = scope};
    mh_lua_probes *probes = NULL;
    if (probes_path && !(probes = mh_lua_probes_read(probes_path, &io.probes, &io.nprobes, &e))) return report(&e, NULL);
    size_t len;
    char *text = mh_read_file(argv[optind], 0, &len, &e);
    if (!text) {
        mh_lua_probes_free(probes);
        return report(&e, NULL);
    }
    size_t blank = 0;
    while (blank < len && (text[blank] == ' ' || text[blank] == '\t' || text[blank] == '\n' || text[blank] == '\r'))
        blank++;
    if (blank == len) { /* an empty pipe (a compiler that failed upstream) is no module to write out unchanged */
        free(text);
        mh_lua_probes_free(probes);
        mh_fail(&e, MH_E_PTX_SYNTAX, "%s: empty: no PTX module to instrument (%zu bytes read)", argv[optind], len);
        return report(&e, NULL);
    }
    mh_ptx_module m;
    mh_instrumented r;
    int rc = mh_ptx_parse(&m, text, len, argv[optind], &e);
    free(text);
    if (rc) {
        mh_lua_probes_free(probes);
        return report(&e, NULL);
    }
    rc = mh_instrument_with(&m, &io, &r, &e);
    /* a probe that matches nothing (bad_argument) is the probe file's: say which file */
    const char *context = rc && probes_path && e.code == MH_E_BAD_ARGUMENT ? probes_path : NULL;
    mh_lua_probes_free(probes);
    if (!rc) {
        mh_out o;
        rc = mh_out_open(&o, out_path, &e);
        if (!rc) {
            if (r.markers || r.probe_points) mh_out_mem(&o, r.text, r.len);
            else mh_out_str(&o, m.text);
            rc = mh_out_commit(&o, &e);
        }
        /* --names: the regions, --roles: the roles, each {"name": id} */
        for (int roles = 0; roles < 2 && !rc; roles++) {
            const char *path = roles ? roles_path : names_path;
            if (!path) continue;
            rc = mh_out_open(&o, path, &e);
            if (rc) break;
            mh_out_lit(&o, "{");
            for (size_t i = 0, k = 0; i < r.names.n; i++) {
                if (r.names.v[i].role != roles) continue;
                if (k++) mh_out_lit(&o, ", ");
                mh_out_mem(&o, r.names.v[i].json, r.names.v[i].json_len);
                mh_out_lit(&o, ": ");
                mh_out_u64(&o, r.names.v[i].id);
            }
            mh_out_lit(&o, "}\n");
            rc = mh_out_commit(&o, &e);
        }
        if (!rc)
        {
            char funcs[64] = "";
            if (r.nfuncs) snprintf(funcs, sizeof funcs, " and %u device function%s", r.nfuncs, r.nfuncs == 1 ? "" : "s");
            char probed[64] = "";
            if (io.nprobes)
                snprintf(probed, sizeof probed, ", %u probe point%s", r.probe_points, r.probe_points == 1 ? "" : "s");
            size_t nroles = 0;
            for (size_t i = 0; i < r.names.n; i++) nroles += r.names.v[i].role;
            char roles[48] = "";
            if (nroles) snprintf(roles, sizeof roles, ", %zu role%s", nroles, nroles == 1 ? "" : "s");
            fprintf(stderr, "mgpu-harness: %u marker%s%s in %u kernel%s%s, %zu region name%s%s\n", r.markers,
                    r.markers == 1 ? "" : "s", probed, r.nkernels, r.nkernels == 1 ? "" : "s", funcs, r.names.n - nroles,
                    r.names.n - nroles == 1 ? "" : "s", roles);
        }
        mh_instrumented_free(&r);
    }
    mh_ptx_free(&m);
    return rc ? report(&e, context) : 0;
}

/* What each backend says of itself (backends.h), then where nvcc is. */
static int cmd_info(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (is_help(argv[i])) {
            fputs(INFO_USAGE, stdout);
            return 0;
        }
        return usage_error_of(INFO_USAGE, argv[i][0] == '-' ? "unknown option `%s`" : "unexpected argument `%s`",
                              argv[i]);
    }
    printf("mgpu-harness %s\n", MH_VERSION);
    printf("lua: %s (embedded)\n", mh_lua_version());
    printf("backends:\n");
    for (int b = 0; mh_backends[b]; b++) {
        const mh_backend *be = mh_backends[b];
        mh_backend_probe p;
        be->probe(NULL, &p);
        if (!p.available) {
            printf("  %-5s not available: %s\n", be->name, p.detail);
            continue;
        }
        printf("  %-5s %s, %d device%s%s\n", be->name, p.detail, p.devices, p.devices == 1 ? "" : "s",
               strcmp(be->name, "cuda") ? "" : " (mgpu.device() and experiments use device 0)");
        for (int i = 0; i < p.devices && i < MH_PROBE_MAX_DEVICES; i++) {
            const mh_device_facts *f = &p.facts[i];
            if (p.device_error[i][0]) {
                printf("        %d: %s\n", i, p.device_error[i]);
                continue;
            }
            char mem[48] = "host memory"; /* emu: arrays live in the harness's own memory */
            if (!f->virtual_time) snprintf(mem, sizeof mem, "%.1f GiB", (double)f->memory / (1 << 30));
            printf("        %d: %s, sm_%d%d, %u %sSMs, %.2f GHz (%s), %s, %llu KiB shared memory per block (opt-in)\n",
                   i, f->name, f->major, f->minor, f->sms, f->virtual_time ? "virtual " : "", f->clock_ghz,
                   f->virtual_time ? "virtual" : "nominal", mem, (unsigned long long)(f->max_smem / 1024));
        }
    }
    /* CUDA C modules need nvcc; where it is found is mgpu.nvcc's business */
    return mh_lua_run_builtin("mgpu-harness info",
                              "local nvcc, looked = require('mgpu.nvcc').find()\n"
                              "print(nvcc and ('nvcc: ' .. nvcc .. ' (.cu modules compile with it)')\n"
                              "  or ('nvcc: not found (' .. looked .. '): .cu modules cannot be loaded; PTX can'))\n"
                              "return 0",
                              0, NULL);
}

/* replay and compare parse their arguments in Lua (lua/mgpu/replay.lua,
 * compare.lua, which refuse unknown options with exit status 2); --help is
 * answered here, as for every other command.  1 when it was asked for. */
static int lua_command_help(int argc, char **argv, const char *usage)
{
    for (int i = 1; i < argc; i++)
        if (is_help(argv[i])) {
            fputs(usage, stdout);
            return 1;
        }
    return 0;
}

/* `mgpu-harness SCRIPT.lua --help`: the runner's usage, the script not run */
static int run_script(const char *path, int argc, char **argv)
{
    if (argc >= 1 && is_help(argv[0])) {
        fputs(SCRIPT_USAGE, stdout);
        return 0;
    }
    return mh_lua_run_script(path, argc, argv);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(USAGE, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(USAGE, stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
        if (argc > 2) return usage_error_of(USAGE, "--version takes no argument (got '%s')", argv[2]);
        printf("mgpu-harness %s\n", MH_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "dump")) return cmd_dump(argc - 1, argv + 1);
    if (!strcmp(cmd, "nvcc")) return mh_cli_nvcc(argc - 1, argv + 1);
    if (!strcmp(cmd, "exec")) return mh_cli_exec(argc - 1, argv + 1);
    if (!strcmp(cmd, "info")) return cmd_info(argc - 1, argv + 1);
    if (!strcmp(cmd, "instrument")) return cmd_instrument(argc - 1, argv + 1);
    if (!strcmp(cmd, "replay")) {
        if (lua_command_help(argc - 1, argv + 1, REPLAY_USAGE)) return 0;
        return mh_lua_run_builtin("mgpu-harness replay", "return require('mgpu.replay').main(arg)", argc - 2,
                                  argv + 2);
    }
    if (!strcmp(cmd, "compare")) {
        if (lua_command_help(argc - 1, argv + 1, COMPARE_USAGE)) return 0;
        return mh_lua_run_builtin("mgpu-harness compare", "return require('mgpu.compare').main(arg)", argc - 2,
                                  argv + 2);
    }
    if (!strcmp(cmd, "report")) /* its main answers --help and unknown options itself */
        return mh_lua_run_builtin("mgpu-harness report", "return require('mgpu.report').main(arg)", argc - 2, argv + 2);
    if (!strcmp(cmd, "stats")) /* its main answers --help and unknown options itself */
        return mh_lua_run_builtin("mgpu-harness stats", "return require('mgpu.stats').main(arg)", argc - 2, argv + 2);
    if (!strcmp(cmd, "merge")) {
        if (lua_command_help(argc - 1, argv + 1, MERGE_USAGE)) return 0;
        return mh_lua_run_builtin("mgpu-harness merge", "return require('mgpu.merge').main(arg)", argc - 2, argv + 2);
    }
    if (!strcmp(cmd, "slurm")) {
        if (lua_command_help(argc - 1, argv + 1, SLURM_USAGE)) return 0;
        return mh_lua_run_builtin("mgpu-harness slurm", "return require('mgpu.slurm').main(arg)", argc - 2, argv + 2);
    }
    if (!strcmp(cmd, "run")) {
        if (argc < 3 || is_help(argv[2])) {
            fputs(SCRIPT_USAGE, argc < 3 ? stderr : stdout);
            return argc < 3 ? 2 : 0;
        }
        return run_script(argv[2], argc - 3, argv + 3);
    }
    size_t n = strlen(cmd);
    if (n > 4 && !strcmp(cmd + n - 4, ".lua")) return run_script(cmd, argc - 2, argv + 2);
    fprintf(stderr, "mgpu-harness: unknown %s `%s`\n\n%s", cmd[0] == '-' ? "option" : "command", cmd, USAGE);
    return 2;
}
