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
#                 the Lua API's options)
# usage: round2.sh CLASS MGPU_HARNESS SOURCE_DIR
set -u
class=$1 exe=$2 src=$3
fixtures=$src/tests/fixtures/mosaic-h200
work=$(mktemp -d "${TMPDIR:-/tmp}/mgpu-robust2.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0 checks=0

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
ok() { checks=$((checks + 1)); }
# expect STATUS DESCRIPTION -- COMMAND...: runs it (stdout in out.txt, stderr in err.txt)
expect() {
  local want=$1 what=$2
  shift 3
  "$@" >out.txt 2>err.txt
  local st=$?
  ok
  if [ "$st" != "$want" ]; then fail "$what: exit status $st, expected $want"; sed 's/^/  | /' err.txt out.txt >&2; fi
}
contains() { # contains FILE TEXT DESCRIPTION
  ok
  grep -qF -- "$2" "$1" || { fail "$3: $1 does not contain \"$2\""; sed 's/^/  | /' "$1" >&2; }
}
lacks() {
  ok
  if grep -qF -- "$2" "$1"; then fail "$3: $1 contains \"$2\""; fi
}
same() { ok; cmp -s "$1" "$2" || fail "$3: $1 and $2 differ"; }
absent() { ok; [ ! -e "$1" ] || fail "$2: $1 was written"; }

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
*) echo "unknown class $class" >&2; exit 2 ;;
esac
if [ "$failures" -gt 0 ]; then echo "$class: $failures of $checks checks failed" >&2; exit 1; fi
echo "$class: $checks checks passed"
