#!/usr/bin/env bash
# round3.sh - the third hostile round, one ctest test per class
# (tests/CMakeLists.txt registers robust3_CLASS):
#   empty_args   an empty argument (an unset shell variable: --out "$DIR") is a usage error (2) in
#                every command, never a path: --out "" used to write results into the root folder
#                (/manifest.json), merge "" and replay "" too
#   twice        an option given twice is a usage error (2) naming both values, never the last one
#                silently winning (dump -o a.json -o b.json wrote only b.json)
#   children     the sweep's workers end with their parent however it ends (SIGTERM, SIGKILL), not
#                left spinning on a point; Ctrl-C to the terminal's process group stops
#                `slurm --wait` (its sleep ignored SIGINT in the harness, and the loop went on)
#   manifest     a manifest's selected with a point twice, and a backend that is none, are
#                bad_results (3) naming manifest.json's field
# usage: round3.sh CLASS MGPU_HARNESS SOURCE_DIR
set -u
class=$1 exe=$2 src=$3
fixtures=$src/tests/fixtures/mosaic-h200
. "$(dirname "$0")/checks.sh"
robust_begin mgpu-robust3
C=$src/scripts/examples/copy.lua

# alive PID: running (a zombie, which nobody reaps in a container, is not)
alive() { [ -e "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

case $class in
empty_args)
  # a results folder "" was the root folder ("" .. "/manifest.json"): these cases fail without writing
  # there when the refusal is missing (--list; replay and merge's DIR read /, which has no manifest)
  expect 0 "a run to use" -- "$exe" "$C" --out R -q
  cp "$fixtures/wg_1block.bin" b.bin && cp "$fixtures/wg_1block.meta.json" m.json
  expect 2 'experiment --out ""' -- "$exe" "$C" --out "" --list
  contains err.txt "--out is given an empty value" 'experiment --out ""'
  expect 2 'experiment --resume ""' -- "$exe" "$C" --resume "" -q
  expect 2 'experiment ""' -- "$exe" "$C" "" --out R2 -q
  absent R2 'experiment ""'
  expect 2 'merge M ""' -- "$exe" merge M ""
  contains err.txt "merge: DIR is the empty string" 'merge M ""'
  absent M 'merge M ""'
  expect 2 'replay ""' -- "$exe" replay ""
  contains err.txt "RESULTS_DIR is the empty string" 'replay ""'
  expect 2 'compare "" R' -- "$exe" compare "" R
  expect 2 'report ""' -- "$exe" report ""
  expect 2 'report R -o ""' -- "$exe" report R -o ""
  expect 2 'stats ""' -- "$exe" stats ""
  expect 2 'slurm --out ""' -- "$exe" slurm "$C" --tasks 1 --out "" --dry-run
  absent slurm 'slurm --out ""'
  expect 2 'dump ""' -- "$exe" dump "" --meta m.json -o t.json
  contains err.txt "BUFFER is the empty string" 'dump ""'
  expect 2 'dump --meta ""' -- "$exe" dump b.bin --meta "" -o t.json
  expect 2 'dump --meta=' -- "$exe" dump b.bin --meta= -o t.json
  expect 2 'dump -o ""' -- "$exe" dump b.bin --meta m.json -o ""
  contains err.txt "-o is given an empty value" 'dump -o ""'
  expect 2 'instrument ""' -- "$exe" instrument "" -o o.ptx
  expect 2 'instrument --names ""' -- "$exe" instrument "$src/ptx/copy.ptx" -o o.ptx --names ""
  absent t.json "refused dumps"
  absent o.ptx "refused instruments"
  # a plain script's output folder, and mgpu.run's
  printf 'local mgpu = require "mgpu"\nprint(mgpu.script_dir("default"))\n' >plain.lua
  expect 2 'a plain script given ""' -- "$exe" plain.lua ""
  contains err.txt "the output folder is the empty string" 'a plain script given ""'
  cat >api.lua <<EOF
local mgpu = require "mgpu"
local exp = dofile("$C")
exp.module = "$src/ptx/copy.ptx"
for _, o in ipairs({ { out = "" }, { resume = "" }, { out = 5 } }) do
  local ok, err = pcall(mgpu.run, exp, o)
  print(ok and "ACCEPTED" or (type(err) == "table" and err.code or "WRONG " .. tostring(err)), tostring(err))
end
EOF
  expect 0 'mgpu.run{out = ""}' -- "$exe" api.lua
  ok; [ "$(grep -c '^bad_argument' out.txt)" = 3 ] || { fail "mgpu.run with an empty folder"; cat out.txt >&2; }
  # an experiment named ".." put its results in results/../TIME, outside results/
  for name in . ..; do
    printf 'local e = dofile("%s"); e.module = "%s/ptx/copy.ptx"; e.name = "%s"; return e\n' "$C" "$src" "$name" >dots.lua
    mkdir -p sub && cd sub && expect 2 "an experiment named $name" -- "$exe" ../dots.lua -q
    contains err.txt "experiment.name must be" "an experiment named $name"
    ok; [ -z "$(ls | grep -v '\.txt$')" ] || { fail "an experiment named $name wrote"; ls -R >&2; }
    cd .. && rm -rf sub
  done
  ;;
twice)
  cp "$fixtures/wg_1block.bin" b.bin && cp "$fixtures/wg_1block.meta.json" m.json
  expect 2 "dump -o a.json -o b.json" -- "$exe" dump b.bin --meta m.json -o a.json -o b.json
  contains err.txt "-o given twice" "dump -o a.json -o b.json"
  absent a.json "dump -o a.json -o b.json"
  absent b.json "dump -o a.json -o b.json"
  expect 2 "dump --output=a.json -ob.json" -- "$exe" dump b.bin --meta m.json --output=a.json -ob.json
  expect 2 "dump --meta twice" -- "$exe" dump b.bin --meta m.json --meta m.json -o a.json
  expect 2 "dump --clock-ghz twice" -- "$exe" dump b.bin --meta m.json --clock-ghz 1 --clock-ghz 2 -o a.json
  expect 0 "dump -o - (stdout, once)" -- "$exe" dump b.bin --meta m.json -o -
  expect 2 "instrument --scope twice" -- "$exe" instrument "$src/ptx/copy.ptx" --scope warp --scope warpgroup
  expect 2 "instrument -o twice" -- "$exe" instrument "$src/ptx/copy.ptx" -o a.ptx -o b.ptx
  absent a.ptx "instrument -o twice"
  absent b.ptx "instrument -o twice"
  expect 2 "experiment --out A --out B" -- "$exe" "$C" --out A --out B -q
  contains err.txt "--out given twice (A and B)" "experiment --out A --out B"
  absent A "experiment --out A --out B"
  absent B "experiment --out A --out B"
  expect 2 "experiment --backend twice" -- "$exe" "$C" --backend emu --backend cuda --list
  expect 2 "experiment --shard twice" -- "$exe" "$C" --shard 1/2 --shard 2/2 --list
  expect 0 "experiment --set of two axes (may repeat)" -- "$exe" "$C" --set n=4096 --list
  expect 0 "a run to compare" -- "$exe" "$C" --out R -q
  expect 2 "compare --max-slowdown twice" -- "$exe" compare R R --max-slowdown 5 --max-slowdown 50
  expect 2 "report -o twice" -- "$exe" report R -o a.html --out b.html
  absent a.html "report -o twice"
  absent b.html "report -o twice"
  expect 2 "slurm --tasks twice" -- "$exe" slurm "$C" --tasks 1 --tasks 2 --out S --dry-run
  expect 2 "slurm --out twice" -- "$exe" slurm "$C" --tasks 1 --out S --out S2 --dry-run
  absent S "slurm --out twice"
  printf '{"total": {}, "lines": []}\n' >s.json
  expect 2 "stats --top twice" -- "$exe" stats s.json --top 1 --top 2
  ;;
children)
  # a point whose kernel spins forever (no timeout_s): the workers run it until someone kills them
  cat >spin.ptx <<'EOF'
.version 8.0
.target sm_90
.address_size 64
.visible .entry spin_forever()
{
L1:
	bra.uni L1;
}
EOF
  cat >spin.lua <<EOF
return {
  name = "spin", module = "$work/spin.ptx", kernel = "spin_forever",
  axes = { n = { 1, 2, 3 } },
  setup = function(p, dev) return { grid = 1, block = 32, args = {} } end,
}
EOF
  for sig in TERM KILL; do
    rm -rf W
    "$exe" spin.lua --workers 2 --out W -q >out.txt 2>err.txt & pid=$!
    kids=
    for _ in $(seq 100); do kids=$(pgrep -P "$pid" | tr '\n' ' '); [ "$(echo $kids | wc -w)" = 2 ] && break; sleep 0.05; done
    ok; [ -n "$kids" ] || fail "SIGTERM: no workers started (the test is wrong)"
    sleep 0.3
    kill -"$sig" "$pid"; wait "$pid" 2>/dev/null
    left=
    for _ in $(seq 40); do left=; for k in $kids; do alive "$k" && left="$left $k"; done; [ -z "$left" ] && break; sleep 0.05; done
    ok; [ -z "$left" ] || { fail "SIG$sig to the parent left its workers running:$left"; for k in $left; do kill -9 "$k"; done; }
  done
  # slurm --wait with a job that never ends; Ctrl-C as a terminal sends it (to the process group)
  mkdir fake && printf '#!/bin/sh\necho 123\n' >fake/sbatch && cp fake/sbatch fake/squeue && chmod +x fake/*
  MGPU_SBATCH=$work/fake/sbatch MGPU_SQUEUE=$work/fake/squeue setsid "$exe" slurm "$C" --tasks 1 --out SLW --wait \
    >out.txt 2>err.txt & pid=$!
  for _ in $(seq 100); do grep -q "merge job" out.txt && break; sleep 0.05; done
  sleep 1.5 # in its polling loop: mostly in sleep 1
  kill -INT -- -"$pid"
  for _ in $(seq 60); do alive "$pid" || break; sleep 0.05; done
  ok; if alive "$pid"; then fail "Ctrl-C to slurm --wait's process group: still running 3 s later"; kill -TERM -- -"$pid"; fi
  wait "$pid"; st=$?
  ok; [ "$st" = 130 ] || { fail "Ctrl-C to slurm --wait: exit status $st, not 130"; cat err.txt >&2; }
  contains err.txt "interrupted" "Ctrl-C to slurm --wait"
  ;;
manifest)
  expect 0 "a run" -- "$exe" "$C" --out R -q
  edit() { # edit DIR SED: a copy of R with its manifest edited
    rm -rf "$1" && cp -r R "$1" && sed -i "$2" "$1/manifest.json"
  }
  # selected [1, 1]: replay ran point 1 twice and then refused its own results.jsonl
  edit D '/"selected"/,/\]/c\ "selected": [1, 1],'
  expect 3 "replay of a manifest selecting a point twice" -- "$exe" replay D
  contains err.txt "D/manifest.json: selected[2] is point 1 again" "replay of a manifest selecting a point twice"
  ok; [ -z "$(ls -d D/replay-* 2>/dev/null)" ] || fail "a refused replay left a replay folder"
  expect 3 "resume of a manifest selecting a point twice" -- "$exe" "$C" --resume D -q
  edit B 's/"backend": "emu"/"backend": "gpu9"/'
  expect 3 "replay of a manifest with backend gpu9" -- "$exe" replay B
  contains err.txt "B/manifest.json: backend must be" "replay of a manifest with backend gpu9"
  expect 3 "resume of a manifest with backend gpu9" -- "$exe" "$C" --resume B -q
  ;;
*) echo "unknown class $class" >&2; exit 2 ;;
esac
if [ "$failures" -gt 0 ]; then echo "$class: $failures of $checks checks failed" >&2; exit 1; fi
echo "$class: $checks checks passed"
