#!/usr/bin/env bash
# round4.sh - issue 36's hostile round, one ctest test per class (tests/CMakeLists.txt registers
# robust4_CLASS):
#   emu        faults a GPU gives that emu passed silently (a wgmma run by 2 of a warpgroup's 4
#              warps, a shfl.sync reading a lane that did not run it), a spin that counts its
#              polls reported as a deadlock naming the load, and a deadlock of a large grid
#              reported about as fast as one block's
#   data_lost  --out and merge refuse a folder holding files the harness would write there but no
#              run wrote (results.csv, point-1.trace.json: they were overwritten), and merge refuses
#              a folder holding a merge of another sweep before writing anything (it replaced its rows)
#   exits      corrupt manifests and summaries are bad_results (3) in compare and stats as
#              elsewhere (they said 2), a stats file with huge counters is bad_results naming the
#              field (a traceback and 7), --version extra is a usage error, compare --max-slowdown 1e3
# usage: round4.sh CLASS MGPU_HARNESS SOURCE_DIR
set -u
class=$1 exe=$2 src=$3
. "$(dirname "$0")/checks.sh"
robust_begin mgpu-robust4
C=$src/scripts/examples/copy.lua

case $class in
emu)
  cat >emu.lua <<EOF
local mgpu = require "mgpu"
local dev = mgpu.device("emu")
local m = dev:load("$src/tests/ptx/hostile.ptx")
local function try(name, l)
  local k = m:kernel(name)
  local t = os.clock()
  local ok, err = pcall(k.launch, k, l)
  print(string.format("%s %dx%d: %s %.1f s %s", name, l.grid, l.block, ok and "ok" or err.code, os.clock() - t,
                      ok and "" or err.message))
end
local flag, out = dev:array("u32", 1), dev:array("u32", 132 * 384)
-- while (flag[0] == 0) n++;  (n changes each poll: not a spin by the registers-unchanged rule)
try("spin_count", { grid = 1, block = 32, args = { flag, out }, timeout_s = 30 })
try("spin_count", { grid = 132, block = 384, args = { flag, out }, timeout_s = 30 })
local f = dev:array("f32", 128)
try("wgmma_some", { grid = 1, block = 128, args = { f, 4 } })
try("wgmma_some", { grid = 1, block = 128, args = { f, 2 } })
try("shfl_some", { grid = 1, block = 32, args = { out, 32 } })
try("shfl_some", { grid = 1, block = 32, args = { out, 16 } })
-- an mbarrier phase nothing completes: one block, and 132 x 384 and 264 x 1024 (7.7 s and 67 s before)
m = dev:load("$src/tests/ptx/mbarrier.ptx")
try("mbar_deadlock", { grid = 1, block = 1024, args = { out } })
try("mbar_deadlock", { grid = 132, block = 384, args = { out } })
try("mbar_deadlock", { grid = 264, block = 1024, args = { out } })
EOF
  expect 0 "the emu cases" -- "$exe" emu.lua
  contains out.txt "spin_count 1x32: kernel_fault" "a spin that counts, one warp"
  contains out.txt "spin_count 132x384: kernel_fault" "a spin that counts, 132 blocks"
  contains out.txt "deadlock: no warp has made progress" "a spin that counts"
  contains out.txt "hostile.ptx:34 (ld) block (0,0,0), (1,0,0), (2,0,0), (3,0,0), ... (132 blocks)" \
    "a spin that counts: the load's line"
  contains out.txt "wgmma_some 1x128: ok" "a wgmma every warp runs"
  contains out.txt "hostile.ptx:105: wgmma_some: wgmma.mma_async: warp 0 ran 1 (the last at line 105), warp 2 of the same warpgroup 0" \
    "a wgmma run by 2 of 4 warps"
  contains out.txt "shfl_some 1x32: ok" "a shfl.sync every lane runs"
  contains out.txt "hostile.ptx:147: shfl_some: shfl.sync: lane 15 reads lane 16, which did not execute this shfl.sync" \
    "a shfl.sync by half a warp"
  for g in 1x1024 132x384 264x1024; do
    contains out.txt "mbar_deadlock $g: kernel_fault" "an mbarrier deadlock of $g"
    ok; t=$(grep "^mbar_deadlock $g:" out.txt | sed 's/.*kernel_fault \([0-9.]*\) s.*/\1/')
    awk -v t="$t" 'BEGIN { exit !(t != "" && t < 2) }' || fail "an mbarrier deadlock of $g took ${t:-?} s (2 s at most)"
  done
  ;;
data_lost)
  expect 0 "a run to merge" -- "$exe" "$C" --out R -q
  for f in results.csv results.jsonl.torn point-1.trace.json point-2.summary.json point-1.stats.csv; do
    rm -rf U && mkdir U && echo mine >"U/$f"
    expect 2 "--out onto a folder holding the user's $f" -- "$exe" "$C" --out U -q
    contains err.txt "--out U holds $f, which no run wrote there" "--out onto the user's $f"
    contains "U/$f" mine "--out onto the user's $f"
    rm -rf M && mkdir M && echo mine >"M/$f"
    expect 2 "merge into a folder holding the user's $f" -- "$exe" merge M R
    contains err.txt "merge: M holds $f, which no run wrote there" "merge into the user's $f"
    contains "M/$f" mine "merge into the user's $f"
  done
  mkdir N && echo notes >N/notes.txt
  expect 0 "--out onto a folder of other files" -- "$exe" "$C" --out N -q
  printf 'local e = dofile("%s"); e.module = "%s/ptx/copy.ptx"; e.name = "copy2"; return e\n' "$C" "$src" >c2.lua
  expect 0 "a run of another experiment" -- "$exe" c2.lua --out R2 -q
  expect 0 "a merge" -- "$exe" merge M1 R
  cp -r M1 M1.before
  expect 2 "merge of another sweep into a merge" -- "$exe" merge M1 R2
  contains err.txt 'merge: M1 holds a merge of another sweep (it differs from R2 in experiment: "copy" against "copy2")' \
    "merge of another sweep into a merge"
  for f in manifest.json results.jsonl results.csv; do same "M1/$f" "M1.before/$f" "merge of another sweep: $f"; done
  expect 0 "merge of the same sweep again" -- "$exe" merge M1 R
  ;;
exits)
  expect 0 "a run" -- "$exe" "$C" --out R -q
  cp -r R RC && echo '{"broken' >RC/manifest.json
  for cmd in "compare R RC" "compare RC R" "report RC -o r.html" "replay RC" "merge MX RC"; do
    expect 3 "$cmd with a corrupt manifest" -- "$exe" $cmd
    contains err.txt "RC/manifest.json: invalid JSON at line 1" "$cmd with a corrupt manifest"
  done
  echo '{"regions": [' >bad.summary.json
  printf '{"regions": []}\n' >good.summary.json
  expect 3 "compare of a corrupt summary" -- "$exe" compare bad.summary.json good.summary.json
  expect 3 "stats of a corrupt file" -- "$exe" stats bad.summary.json
  G=l1tex__t_%s_pipe_lsu_mem_global_op_ld.sum
  printf '{"total": {"%s": 1, "%s": 1, "ptx__bytes_requested_mem_global_op_ld.sum": 1e300}, "lines": []}\n' \
    "$(printf $G requests)" "$(printf $G sectors)" >huge.json
  expect 3 "stats with a huge counter" -- "$exe" stats huge.json
  contains err.txt "total.ptx__bytes_requested_mem_global_op_ld.sum is 1.0000000000000001e+300: a counter is a whole number" \
    "stats with a huge counter"
  lacks err.txt "traceback" "stats with a huge counter"
  printf '{"total": {}, "lines": [{"line": 3, "ptx__inst_executed.sum": -2}]}\n' >neg.json
  expect 3 "stats with a negative counter" -- "$exe" stats neg.json
  contains err.txt "lines[1].ptx__inst_executed.sum is -2" "stats with a negative counter"
  expect 2 "--version extra" -- "$exe" --version extra
  contains err.txt "--version takes no argument (got 'extra')" "--version extra"
  expect 0 "compare --max-slowdown 1e3" -- "$exe" compare R R --max-slowdown 1e3
  expect 0 "compare --max-slowdown 2.5e-1" -- "$exe" compare R R --max-slowdown 2.5e-1
  for v in 0x10 1e400 inf nan -1 1e; do expect 2 "compare --max-slowdown $v" -- "$exe" compare R R --max-slowdown "$v"; done
  ;;
*) echo "unknown class $class" >&2; exit 2 ;;
esac
if [ "$failures" -gt 0 ]; then echo "$class: $failures of $checks checks failed" >&2; exit 1; fi
echo "$class: $checks checks passed"
