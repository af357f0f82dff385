#!/usr/bin/env bash
# round2.sh - issue 25's second hostile round, one ctest test per class
# (tests/CMakeLists.txt registers robust2_CLASS):
#   data_lost     outputs compared with the inputs and with each other by resolved path, also
#                 when they do not exist yet (dump -o t.json --summary-json ./t.json, instrument
#                 -o o.ptx --names ./o.ptx, report R -o R/results.jsonl); report never writes over
#                 a file it did not make without --force
#   exit_status   error({}) and unknown codes exit 7; merge/slurm with a failed point exit 7;
#                 stats of a file that is not stats exit 3
#   hangs         temporaries of dead owners are removed at start-up (dump, emu's ptxas folders);
#                 an in-process setup that never returns stops at timeout_s
#   accepted      values refused that used to be taken silently (CLI, meta, calibration, .npy,
#                 the Lua API's options, an experiment's command line)
#   results       one reader of results rows: a duplicated ok line, an index the manifest does
#                 not have, a line without its key are bad_results (3) in resume, replay, merge,
#                 compare and report alike
# usage: round2.sh CLASS MGPU_HARNESS SOURCE_DIR
set -u
class=$1 exe=$2 src=$3
fixtures=$src/tests/fixtures/mosaic-h200
. "$(dirname "$0")/checks.sh"
robust_begin mgpu-robust2

case $class in
data_lost)
  cp "$fixtures/wg_1block.bin" b.bin && cp "$fixtures/wg_1block.meta.json" m.json
  mkdir sub
  expect 2 "dump -o t.json --summary-json ./t.json" -- "$exe" dump b.bin --meta m.json -o t.json --summary-json ./t.json
  contains err.txt "name the same file" "dump -o t.json --summary-json ./t.json"
  absent t.json "dump -o t.json --summary-json ./t.json"
  expect 2 "dump -o sub/../t.json --summary-json t.json" -- "$exe" dump b.bin --meta m.json -o sub/../t.json \
    --summary-json t.json
  expect 2 "dump -o $work/t.json --summary-json t.json" -- "$exe" dump b.bin --meta m.json -o "$work/t.json" \
    --summary-json t.json
  expect 2 "dump -o ./m.json (an input spelled otherwise)" -- "$exe" dump b.bin --meta m.json -o sub/../m.json
  absent t.json "dump: refused outputs"
  expect 0 "dump -o t.json --summary-json s.json" -- "$exe" dump b.bin --meta m.json -o t.json --summary-json s.json
  cp "$src/ptx/tiled.ptx" k.ptx
  expect 2 "instrument -o o.ptx --names ./o.ptx" -- "$exe" instrument k.ptx -o o.ptx --names ./o.ptx
  contains err.txt "name the same file" "instrument -o o.ptx --names ./o.ptx"
  absent o.ptx "instrument -o o.ptx --names ./o.ptx"
  expect 2 "instrument -o sub/../k.ptx" -- "$exe" instrument k.ptx -o sub/../k.ptx
  same k.ptx "$src/ptx/tiled.ptx" "the PTX after the refused instruments"
  expect 0 "instrument -o o.ptx --names n.json" -- "$exe" instrument k.ptx -o o.ptx --names n.json
  cp o.ptx o.orig
  expect 3 "instrument of an empty pipe" -- "$exe" instrument /dev/stdin -o o.ptx </dev/null
  contains err.txt "empty: no PTX module" "instrument of an empty pipe"
  same o.ptx o.orig "a refused instrument of an empty pipe leaves the output" 
  # report: never over what it reads, never over a file it did not make without --force
  expect 0 "an experiment to report on" -- "$exe" "$src/scripts/examples/copy.lua" --out R -q
  cp R/results.jsonl rj.orig && cp R/manifest.json mf.orig
  expect 2 "report R -o R/results.jsonl" -- "$exe" report R -o R/results.jsonl
  contains err.txt "which the report reads" "report R -o R/results.jsonl"
  expect 2 "report R -o R/results.jsonl --force" -- "$exe" report R -o ./R/results.jsonl --force
  expect 2 "report R -o R/manifest.json" -- "$exe" report R -o R/../R/manifest.json
  same R/results.jsonl rj.orig "results.jsonl after the refused reports"
  same R/manifest.json mf.orig "manifest.json after the refused reports"
  echo "my notes" >notes.html && cp notes.html notes.orig
  expect 2 "report over a file it did not make" -- "$exe" report R -o notes.html
  contains err.txt "--force" "report over a file it did not make"
  same notes.html notes.orig "a file the report did not make"
  expect 0 "report over it with --force" -- "$exe" report R -o notes.html --force
  expect 0 "report over its own report" -- "$exe" report R -o notes.html
  expect 0 "report R --svg FIGS" -- "$exe" report R -o r.html --svg FIGS
  fig=$(ls FIGS | head -1)
  expect 0 "report R --svg FIGS again (its own figures)" -- "$exe" report R -o r.html --svg FIGS
  echo "my drawing" >"FIGS/$fig"
  expect 2 "report --svg over a file it did not make" -- "$exe" report R -o r.html --svg FIGS
  contains "FIGS/$fig" "my drawing" "a figure file the report did not make"
  expect 0 "report R (R/report.html, twice)" -- "$exe" report R
  expect 0 "report R again" -- "$exe" report R
  ;;
exit_status)
  printf 'error({})\n' >e1.lua
  expect 7 "error({})" -- "$exe" e1.lua
  contains err.txt "[script_error]" "error({})"
  printf 'error({code = "mine", message = "my own"})\n' >e2.lua
  expect 7 "an error table with a code the harness does not raise" -- "$exe" e2.lua
  contains err.txt "my own [mine]" "an unknown code"
  printf 'error({code = 5})\n' >e3.lua
  expect 7 "an error table with a number for a code" -- "$exe" e3.lua
  printf 'error({code = "io_error", message = "x"})\n' >e4.lua
  expect 1 "a harness code keeps its status" -- "$exe" e4.lua
  cat >fails.lua <<EOF
return {
  name = "fails", module = "$src/ptx/copy.ptx", kernel = "copy_f32x4",
  axes = { n = { 1024, 2048 } },
  setup = function(p, dev)
    local x, y = dev:array("f32", p.n), dev:array("f32", p.n)
    return { grid = 1, block = 256, args = { x, y, p.n // 4 },
      check = function() return p.n == 1024, "n is not 1024" end }
  end,
}
EOF
  expect 7 "a run with a failed point" -- "$exe" fails.lua --out F -q
  expect 7 "merge of a folder with a failed point" -- "$exe" merge M F
  contains out.txt "2 of 2 points, 1 ok" "merge of a folder with a failed point"
  expect 7 "merge again (idempotent)" -- "$exe" merge M F
  expect 0 "the experiment's ok point only" -- "$exe" fails.lua --out G -q --set n=1024
  expect 0 "merge of ok points" -- "$exe" merge M2 G
  # stats: a file that is not stats is bad input (3), never a traceback
  expect 2 "stats of nothing" -- "$exe" stats
  expect 3 "stats of a manifest" -- "$exe" stats G/manifest.json
  contains err.txt "[bad_results]" "stats of a manifest"
  contains err.txt "not a stats file" "stats of a manifest"
  printf '{"total": {}, "lines": [1, 2]}\n' >s.json
  expect 3 "stats whose lines are not tables" -- "$exe" stats s.json
  contains err.txt "lines[1] is a number" "stats whose lines are not tables"
  lacks err.txt "traceback" "stats whose lines are not tables"
  printf '{"total": {}, "lines": [{"line": 3, "ptx__inst_executed.sum": "x"}]}\n' >s2.json
  expect 3 "stats with a counter that is not a number" -- "$exe" stats s2.json
  printf '[1, 2]\n' >s3.json
  expect 3 "stats of a JSON list" -- "$exe" stats s3.json
  ;;
hangs)
  export MGPU_CACHE=$work/cache
  # a ptxas that never ends (its pid in ptxas.pid, so that the test can stop what it started)
  printf '#!/bin/sh\necho $$ >%s/ptxas.pid\nexec sleep 100\n' "$work" >slowptxas && chmod +x slowptxas
  cat >launch.lua <<EOF
local mgpu = require "mgpu"
local dev = mgpu.device("emu")
local k = dev:load("$src/ptx/copy.ptx"):kernel("copy_f32x4")
local x, y = dev:array("f32", 1024), dev:array("f32", 1024)
k:launch { grid = 1, block = 256, args = { x, y, 256 } }
print("note: " .. tostring(k:info().note))
EOF
  t0=$(date +%s%N)
  MGPU_PTXAS=$work/slowptxas MGPU_PTXAS_TIMEOUT=1 expect 0 "a ptxas past its time limit" -- "$exe" launch.lua
  # the slow ptxas sleeps 100 s: a bound of 30 s shows the limit acted and leaves room for a loaded
  # machine (a 5 s bound failed now and then while other builds shared 2 cores)
  ms=$(( ($(date +%s%N) - t0) / 1000000 )); ok; [ "$ms" -lt 30000 ] || fail "ptxas's time limit of 1 s took $ms ms"
  contains out.txt "ran past its time limit of 1 s" "a ptxas past its time limit"
  ok; ! kill -0 "$(cat ptxas.pid)" 2>/dev/null || fail "the ptxas past its time limit still runs"
  # Ctrl-C while ptxas runs: stopped at once, exit 130
  rm -f ptxas.pid
  MGPU_PTXAS=$work/slowptxas "$exe" launch.lua >out.txt 2>err.txt & pid=$!
  for _ in $(seq 100); do [ -s ptxas.pid ] && break; sleep 0.05; done
  kill -INT "$pid"
  for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  ok; if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; fail "Ctrl-C during ptxas: still running 2 s later"; fi
  wait "$pid"; st=$?
  ok; [ "$st" = 130 ] || fail "Ctrl-C during ptxas: exit status $st, not 130"
  ok; ! kill -0 "$(cat ptxas.pid)" 2>/dev/null || fail "Ctrl-C during ptxas: ptxas still runs"
  # a run killed while ptxas ran leaves its folder; the next run's ptxas removes it (its owner is gone)
  rm -f ptxas.pid
  MGPU_PTXAS=$work/slowptxas "$exe" launch.lua >/dev/null 2>&1 & pid=$!
  for _ in $(seq 100); do [ -s ptxas.pid ] && break; sleep 0.05; done
  left=$(ls -d /tmp/mgpu-ptxas.tmp."$pid".* 2>/dev/null)
  kill -9 "$pid"; wait "$pid" 2>/dev/null
  # ptxas ends with the harness however it ends (a SIGKILL included: its parent-death signal)
  for _ in $(seq 40); do kill -0 "$(cat ptxas.pid)" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$(cat ptxas.pid)/status" 2>/dev/null || break; sleep 0.05; done
  ok; if kill -0 "$(cat ptxas.pid)" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$(cat ptxas.pid)/status" 2>/dev/null; then
    fail "ptxas outlived the harness killed with SIGKILL"; fi
  kill -9 "$(cat ptxas.pid)" 2>/dev/null
  ok; [ -n "$left" ] && [ -d "$left" ] || fail "a killed run left no ptxas folder to clean (the test is wrong)"
  live=/tmp/mgpu-ptxas.tmp.$$.abcdef   # this shell's: alive, never removed
  mkdir -p "$live" && touch "$live/k.ptx"
  MGPU_PTXAS=$work/slowptxas MGPU_PTXAS_TIMEOUT=0.2 expect 0 "the run after a killed one" -- "$exe" launch.lua
  ok; [ ! -e "$left" ] || fail "the killed run's ptxas folder $left is still there"
  ok; [ -d "$live" ] || fail "a live process's ptxas folder was removed"
  rm -rf "$live"
  # a dump killed mid-write leaves OUT.tmp.PID.XXXXXX; the next dump into the folder removes it
  cp "$fixtures/wg_1block.bin" b.bin && cp "$fixtures/wg_1block.meta.json" m.json
  dead=$(sh -c 'echo $$')
  echo partial >"t.json.tmp.$dead.Ab12Cd"; echo mine >"t.json.tmp.$$.Ab12Cd"; echo keep >"notes.tmp.x"
  expect 0 "a dump after a killed one" -- "$exe" dump b.bin --meta m.json -o t.json
  ok; [ ! -e "t.json.tmp.$dead.Ab12Cd" ] || fail "a dead dump's temporary is still there"
  ok; [ -e "t.json.tmp.$$.Ab12Cd" ] && [ -e notes.tmp.x ] || fail "a live process's temporary or a user's file was removed"
  # a second Ctrl-C after a caught first one ends the process, saying so
  printf 'print(pcall(function() while true do end end))\nio.stdout:flush()\nwhile true do end\n' >twice.lua
  "$exe" twice.lua >out.txt 2>err.txt & pid=$!
  sleep 0.5; kill -INT "$pid"
  for _ in $(seq 40); do grep -q interrupted out.txt && break; sleep 0.05; done
  kill -INT "$pid"
  for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  ok; if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; fail "a second Ctrl-C: still running"; fi
  wait "$pid"; st=$?
  ok; [ "$st" = 130 ] || fail "a second Ctrl-C: exit status $st, not 130 (SIGINT)"
  contains out.txt "false" "the first Ctrl-C was caught by the script's pcall"
  contains err.txt "interrupted again" "a second Ctrl-C says what it does"
  # a setup that never returns, in process, with timeout_s = 1: the point fails as timeout, the sweep goes on
  cat >hang.lua <<EOF
return {
  name = "hang", module = "$src/ptx/copy.ptx", kernel = "copy_f32x4", timeout_s = 1,
  axes = { n = { 1024, 2048 } },
  setup = function(p, dev)
    local x, y = dev:array("f32", p.n), dev:array("f32", p.n)
    if p.n == 1024 then local i = 0; while true do i = i + 1 end end
    return { grid = 1, block = 256, args = { x, y, p.n // 4 } }
  end,
}
EOF
  t0=$(date +%s%N)
  timeout 30 "$exe" hang.lua --out H -q >out.txt 2>err.txt; st=$?
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  ok; [ "$st" = 7 ] || { fail "a setup that never returns: exit status $st, not 7"; cat err.txt >&2; }
  ok; [ "$ms" -lt 5000 ] || fail "a setup that never returns stopped after $ms ms (timeout_s = 1)"
  contains H/results.jsonl '"code":"timeout"' "a setup that never returns"
  contains H/results.jsonl '"key":"n=2048","point":{"n":2048},"status":"ok"' "the point after it"
  ;;
accepted)
  cp "$fixtures/wg_1block.bin" b.bin && cp "$fixtures/wg_1block.meta.json" m.json
  expect 2 "--clock-ghz 1e-300" -- "$exe" dump b.bin --meta m.json -o t.json --clock-ghz 1e-300
  expect 2 "--clock-ghz 1e308" -- "$exe" dump b.bin --meta m.json -o t.json --clock-ghz 1e308
  for g in 1e308 1e-300; do
    sed "s/^{/{\"clock_ghz\": $g, /" m.json >mc.json
    expect 3 "clock_ghz $g in a meta file" -- "$exe" dump b.bin --meta mc.json -o t.json
    contains err.txt "clock_ghz" "clock_ghz $g in a meta file"
  done
  expect 1 "--meta on a directory" -- "$exe" dump b.bin --meta . -o t.json
  contains err.txt "is a directory" "--meta on a directory"
  lacks err.txt "JSON" "--meta on a directory"
  head -c 16 /dev/zero >zeros.bin
  expect 3 "a calibration file of zeros" -- "$exe" dump b.bin --meta m.json --calib zeros.bin -o t.json
  contains err.txt "calibration words" "a calibration file of zeros"
  absent t.json "refused dumps"
  # .npy: a garbage fortran_order, a bad magic, a header alone: refused as .npy, never read as raw words
  n=$(( $(stat -c %s b.bin) / 4 ))
  npy() { # npy HEADER_DICT MAGIC_FIRST_BYTE: a version 1.0 .npy header padded to 64 bytes
    local d="$1" first=$2 len
    len=$(( (${#d} + 11 + 63) / 64 * 64 - 10 ))
    printf "$first"'NUMPY\001\000'; printf "\\$(printf %o $((len % 256)))\\$(printf %o $((len / 256)))"
    printf '%-*s\n' $((len - 1)) "$d"
  }
  { npy "{'descr': '<u4', 'fortran_order': banana, 'shape': ($n,), }" '\223'; cat b.bin; } >fo.npy
  { npy "{'descr': '<u4', 'fortran_order': False, 'shape': ($n,), }" '\223'; cat b.bin; } >good.npy
  { npy "{'descr': '<u4', 'fortran_order': False, 'shape': ($n,), }" '\222'; cat b.bin; } >magic.npy
  npy "{'descr': '<u4', 'fortran_order': False, 'shape': ($n,), }" '\223' >header.npy
  expect 0 "a good .npy (the test's own writer)" -- "$exe" dump good.npy --meta m.json -o t.json
  expect 3 ".npy with a garbage fortran_order" -- "$exe" dump fo.npy --meta m.json -o t2.json
  contains err.txt "fortran_order" ".npy with a garbage fortran_order"
  expect 3 ".npy with a bad magic" -- "$exe" dump magic.npy --meta m.json -o t2.json
  contains err.txt ".npy" ".npy with a bad magic"
  expect 3 ".npy that is a header alone" -- "$exe" dump header.npy --meta m.json -o t2.json
  contains err.txt ".npy" ".npy that is a header alone"
  # the Lua API: every one a bad_argument (or io_error) naming what is wrong
  cat >api.lua <<EOF
local mgpu = require "mgpu"
local dev = mgpu.device("emu")
local function refused(what, code, f, ...)
  local ok, err = pcall(f, ...)
  if ok then print("ACCEPTED: " .. what) return end
  if type(err) ~= "table" or err.code ~= code then print("WRONG: " .. what .. ": " .. tostring(err)) return end
  print("refused: " .. what .. ": " .. tostring(err))
end
refused("entries_for(math.maxinteger)", "bad_argument", mgpu.entries_for, math.maxinteger)
refused("entries_for(2^53 + 2.0)", "bad_argument", mgpu.entries_for, 2.0 ^ 53 + 2)
refused("entries_for(2^31)", "bad_argument", mgpu.entries_for, 1 << 31)
assert(mgpu.entries_for(5) == 13)
refused("script_dir() outside a script", "bad_argument", function() arg = nil; return mgpu.script_dir() end)
refused("load_npy('.')", "io_error", function() return dev:load_npy(".") end)
refused("d:load(path, 42)", "bad_argument", function() return dev:load("$src/ptx/copy.ptx", 42) end)
refused("d:load(42)", "bad_argument", function() return dev:load(42) end)
refused("mgpu.device('emu', 42)", "bad_argument", mgpu.device, "emu", 42)
refused("sms = 0", "bad_argument", mgpu.device, "emu", { sms = 0 })
refused("array max = math.huge", "bad_argument", function() return dev:array("f32", 4, { fill = "random", max = math.huge }) end)
refused("array min = 0/0", "bad_argument", function() return dev:array("f32", 4, { fill = "random", min = 0 / 0 }) end)
refused("array seed = 'x'", "bad_argument", function() return dev:array("f32", 4, { fill = "random", seed = "x" }) end)
refused("array options 42", "bad_argument", function() return dev:array("f32", 4, 42) end)
refused("compare options 42", "bad_argument", function() local a = dev:array("f32", 4); return a:compare(a, 42) end)
refused("probe kernel = 'yes'", "bad_argument", function()
  return dev:load("$src/ptx/copy.ptx", { instrument = "warp", probes = { { name = "k", kernel = "yes" } } }) end)
refused("probe loop = 42", "bad_argument", function()
  return dev:load("$src/ptx/copy.ptx", { instrument = "warp", probes = { { name = "k", loop = 42 } } }) end)
refused("mgpu.struct{{'ptr', 42}}", "bad_argument", mgpu.struct, { { "ptr", 42 } })
refused("mgpu.TRACE passed twice", "bad_argument", function()
  local k = dev:load("$src/ptx/copy.ptx"):kernel("copy_f32x4")
  return k:launch { grid = 1, block = 128, args = { mgpu.TRACE, mgpu.TRACE, 4 },
    profile = { scope = "warpgroup", entries = 8, names = { "a" } } }
end)
assert(#mgpu.struct({ { "ptr", 0 }, { "ptr", dev:array("f32", 4) } }) == 16)
local exp = { name = "x", module = "$src/ptx/copy.ptx", kernel = "copy_f32x4", axes = { n = { 4 } },
  setup = function() error("not run") end }
refused("mgpu.run(exp, 42)", "bad_argument", mgpu.run, exp, 42)
refused("mgpu.run(exp, {outt = ...})", "bad_argument", mgpu.run, exp, { outt = "x" })
exp.seed = "x"
refused("experiment seed = 'x'", "bad_argument", mgpu.run, exp, { out = "never" })
EOF
  expect 0 "the Lua API's refusals" -- "$exe" api.lua
  lacks out.txt "ACCEPTED" "the Lua API's refusals"
  lacks out.txt "WRONG" "the Lua API's refusals"
  grep -E "ACCEPTED|WRONG" out.txt >&2
  contains out.txt "refused: probe loop = 42" "the Lua API's refusals"
  absent never "a refused experiment"
  # the command line of an experiment
  expect 0 "an experiment to refuse options of" -- "$exe" "$src/scripts/examples/copy.lua" --list
  expect 2 "--set k=a --set k=b" -- "$exe" "$src/scripts/examples/copy.lua" --set n=4096 --set n=65536 --list
  contains err.txt "given twice" "--set k=a --set k=b"
  expect 2 "--devices without --workers" -- "$exe" "$src/scripts/examples/copy.lua" --devices 0 --list
  contains err.txt "--workers" "--devices without --workers"
  # slurm --dry-run checks what the tasks would be given before it writes anything
  C=$src/scripts/examples/copy.lua
  printf 'print("a plain script")\n' >plain.lua
  expect 0 "a run that is not a merge's" -- "$exe" "$C" --out RUN -q
  for bad in "--backend x" "--gpus-per-task x" "--time banana" "--tasks 100000" "--set nope=1"; do
    # shellcheck disable=SC2086
    expect 2 "slurm --dry-run $bad" -- "$exe" slurm "$C" --tasks 2 --out SL --dry-run $bad
  done
  expect 2 "slurm --dry-run --out RUN" -- "$exe" slurm "$C" --tasks 2 --out RUN --dry-run
  contains err.txt "holds a run's results" "slurm --out RUN"
  expect 2 "slurm --dry-run of a plain script" -- "$exe" slurm plain.lua --tasks 1 --out SL --dry-run
  contains err.txt "did not list an experiment's points" "slurm --dry-run of a plain script"
  absent SL "refused slurm dry runs"
  expect 0 "slurm --dry-run with sbatch arguments" -- "$exe" slurm "$C" --tasks 2 --out SL --dry-run --time 1-02:00:00 \
    -- --qos=high
  contains out.txt "sbatch --parsable '--qos=high'" "the dry run shows the sbatch arguments after --"
  ;;
results)
  # one reader of results rows (lua/mgpu/results.lua rows, check_rows) for resume, merge, replay,
  # compare and report: a line the runner never writes is a bad_results naming file:line in each
  expect 0 "a run" -- "$exe" "$src/scripts/examples/copy.lua" --out R -q
  cp -r R R.orig
  head -1 R/results.jsonl >>R/results.jsonl   # a duplicated ok line
  for cmd in "resume:$src/scripts/examples/copy.lua --resume R -q" "replay:replay R" "merge:merge M R" \
             "compare:compare R.orig R" "report:report R -o r.html"; do
    name=${cmd%%:*}
    # shellcheck disable=SC2086
    expect 3 "$name of a folder with a duplicated ok line" -- "$exe" ${cmd#*:}
    contains err.txt "R/results.jsonl:3: a second row of point" "$name of a folder with a duplicated ok line"
  done
  rm -rf R M && cp -r R.orig R
  sed '1s/"index":1/"index":999/' R.orig/results.jsonl >R/results.jsonl
  expect 3 "resume with an index the manifest does not have" -- "$exe" "$src/scripts/examples/copy.lua" --resume R -q
  contains err.txt "R/results.jsonl:1: index 999" "resume with index 999"
  expect 3 "merge with an index the manifest does not have" -- "$exe" merge M R
  printf '{"status": "ok"}\n' >>R.orig/results.jsonl
  rm -rf R && cp -r R.orig R
  expect 3 "resume with a line without its key" -- "$exe" "$src/scripts/examples/copy.lua" --resume R -q
  contains err.txt "needs its point's key" "resume with a line without its key"
  same R/results.jsonl R.orig/results.jsonl "a refused resume leaves results.jsonl as it was"
  # a manifest without point_keys is refused naming point_keys, not the field that indexes them
  rm -rf NP && cp -r R.orig NP && sed -i '/"point_keys"/,/\]/d' NP/manifest.json
  expect 3 "resume of a manifest without point_keys" -- "$exe" "$src/scripts/examples/copy.lua" --resume NP -q
  contains err.txt "point_keys are missing" "resume of a manifest without point_keys"
  ;;
*) echo "unknown class $class" >&2; exit 2 ;;
esac
if [ "$failures" -gt 0 ]; then echo "$class: $failures of $checks checks failed" >&2; exit 1; fi
echo "$class: $checks checks passed"
