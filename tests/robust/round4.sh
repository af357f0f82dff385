#!/usr/bin/env bash
# round4.sh - issue 36's hostile round, one ctest test per class (tests/CMakeLists.txt registers
# robust4_CLASS):
#   emu        faults a GPU gives that emu passed silently (a wgmma run by 2 of a warpgroup's 4
#              warps, a shfl.sync reading a lane that did not run it, a read past a small shared
#              array: refused already when this round began), a spin that counts its
#              polls reported as a deadlock naming the load, and a deadlock of a large grid
#              reported about as fast as one block's
#   data_lost  --out, merge and slurm --out refuse a folder holding files the harness would write but no
#              run wrote (results.csv, point-1.trace.json: they were overwritten), and merge refuses
#              a folder holding a merge of another sweep before writing anything (it replaced its rows)
#   exits      corrupt manifests and summaries are bad_results (3) in compare and stats as
#              elsewhere (they said 2), a stats file with huge counters is bad_results naming the
#              field (a traceback and 7), --version extra is a usage error, compare --max-slowdown 1e3
#   accepted   values taken silently before: dev:array("f32", "10"), an i8 ramp that wraps, integral
#              floats (2^20, 2.0) refused as "not an integer", a negative value for a .u32 parameter
#              (nvcc's C int) refused, launch{grid = 3, cluster = 2} launch_failed (.reqnctapercluster's
#              check is bad_argument), an array too large for the host bad_argument (no_memory),
#              trace:save("") writing hidden files, --calib words that are not the trace's (random
#              words measured a random clock; 2e-05 GHz taken), a string clock_ghz "not 0", a newline
#              in slurm --partition written into the job script, the same FIFO as dump's input and -o
#   hangs      probe files escaping their 5 s limit (a __gc finalizer, a pcall loop), and an
#              experiment's setup looping inside pcall that timeout_s did not stop without --workers
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
local sf = dev:array("f32", 32)
try("smem_past", { grid = 1, block = 32, args = { sf, 0 } })
try("smem_past", { grid = 1, block = 32, args = { sf, 32 } })
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
  contains out.txt "hostile.ptx:35 (ld) block (0,0,0), (1,0,0), (2,0,0), (3,0,0), ... (132 blocks)" \
    "a spin that counts: the load's line"
  contains out.txt "wgmma_some 1x128: ok" "a wgmma every warp runs"
  contains out.txt "hostile.ptx:106: wgmma_some: wgmma.mma_async: warp 0 ran 1 (the last at line 106), warp 2 of the same warpgroup 0" \
    "a wgmma run by 2 of 4 warps"
  contains out.txt "shfl_some 1x32: ok" "a shfl.sync every lane runs"
  contains out.txt "hostile.ptx:148: shfl_some: shfl.sync: lane 15 reads lane 16, which did not execute this shfl.sync" \
    "a shfl.sync by half a warp"
  contains out.txt "smem_past 1x32: ok" "a read inside a 128-byte shared array"
  contains out.txt "hostile.ptx:182: smem_past: out-of-range shared read of 4 bytes at offset 0x80: the block has 128 bytes" \
    "a read past a 128-byte shared array"
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
    expect 2 "slurm --out onto a folder holding the user's $f" -- "$exe" slurm "$C" --tasks 2 --out M --dry-run
    contains err.txt "slurm: --out M holds $f, which no run wrote there" "slurm --out onto the user's $f"
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
accepted)
  # an array larger than the host's memory: under ASan its allocator must return NULL as malloc does
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1"
  cat >api.lua <<EOF
local mgpu = require "mgpu"
local dev = mgpu.device("emu")
local function try(what, f, ...)
  local ok, r = pcall(f, ...)
  print(what .. ": " .. (ok and "ACCEPTED" or (type(r) == "table" and r.code or "?") .. " " .. tostring(r)))
  return ok and r
end
try('array("f32", "10")', dev.array, dev, "f32", "10")
try('array("f32", 2.5)', dev.array, dev, "f32", 2.5)
try('array("f32", 2^20)', dev.array, dev, "f32", 2^20)
try('array("f32", 4.0, {shape = {2.0, 2}})', dev.array, dev, "f32", 4.0, { shape = { 2.0, 2 } })
try('array("i8", 300, ramp)', dev.array, dev, "i8", 300, { fill = "ramp" })
try('array("i8", 128, ramp)', dev.array, dev, "i8", 128, { fill = "ramp" })
try('array("u8", 4, ramp from -1)', dev.array, dev, "u8", 4, { fill = "ramp", start = -1 })
try('array("i8", 4, random to 200)', dev.array, dev, "i8", 4, { fill = "random", min = 0, max = 200 })
try('array("f32", 2^34)', dev.array, dev, "f32", 2^34)
local m = dev:load("$src/ptx/copy.ptx")
local k = m:kernel("copy_f32x4")
local x, y = dev:array("f32", 16, { fill = "ramp" }), dev:array("f32", 16)
try("launch grid=3 cluster=2", k.launch, k, { grid = 3, block = 32, cluster = 2, args = { x, y, 4 } })
try("launch grid=2.0 args 4.0", k.launch, k, { grid = 2.0, block = 32.0, args = { x, y, 4.0 } })
local o = dev:array("u32", 32)
local h = dev:load("$src/tests/ptx/hostile.ptx")
local s = h:kernel("shfl_some")
-- shfl_some's lanes parameter is a C unsigned; -1 is 0xffffffff: every lane (lanes < 32) shuffles
try("launch .u32 -1", s.launch, s, { grid = 1, block = 32, args = { o, -1 } })
print("out[1] = " .. o:read(1))
try("launch .u32 2^32", s.launch, s, { grid = 1, block = 32, args = { o, 2^32 } })
try("launch .u32 -2^31 - 1", s.launch, s, { grid = 1, block = 32, args = { o, -2^31 - 1 } })
local t = dev:load("$src/ptx/tiled.ptx", { instrument = "warp" }):kernel("tiled_scale")
local n = 128 * 8
local a, c = dev:array("f32", n, { fill = "ramp" }), dev:array("f32", n)
local run = t:launch { grid = 4, block = 128, smem = 128 * 4, args = { a, c, n, 0.5 }, profile = { entries = 200 } }
try('trace:save("")', run.trace.save, run.trace, "")
try('trace:save("sub/")', run.trace.save, run.trace, "sub/")
try('trace:dump("")', run.trace.dump, run.trace, "")
run.trace:save("inst")
EOF
  mkdir sub
  expect 0 "the API cases" -- "$exe" api.lua
  contains out.txt 'array("f32", "10"): bad_argument array length must be an integer (or a table of values), got string' 'an array length of "10"'
  contains out.txt 'array("f32", 2.5): bad_argument array length must be an integer, got 2.5' "an array length of 2.5"
  contains out.txt 'array("f32", 2^20): ACCEPTED' "an array length of 2^20"
  contains out.txt 'array("f32", 4.0, {shape = {2.0, 2}}): ACCEPTED' "integral floats in a shape"
  contains out.txt "array(\"i8\", 300, ramp): bad_argument array: fill = \"ramp\" reaches 0 to 299, beyond i8's range -128 to 127" \
    "an i8 ramp that wraps"
  contains out.txt 'array("i8", 128, ramp): ACCEPTED' "an i8 ramp that fits"
  contains out.txt 'array("u8", 4, ramp from -1): bad_argument' "a u8 ramp from -1"
  contains out.txt 'array("i8", 4, random to 200): bad_argument' "i8 random values to 200"
  contains out.txt 'array("f32", 2^34): no_memory array: out of host memory' "an array larger than the host's memory"
  contains out.txt 'launch grid=3 cluster=2: bad_argument copy_f32x4: grid 3x1x1 is not a whole number of 2x1x1 clusters' \
    "grid 3, cluster 2"
  contains out.txt 'launch grid=2.0 args 4.0: ACCEPTED' "integral floats in a launch"
  contains out.txt 'launch .u32 -1: ACCEPTED' "a .u32 parameter given -1"
  contains out.txt 'out[1] = 10' "a .u32 parameter given -1 (lane 0 read lane 1's 10)"
  contains out.txt 'launch .u32 2^32: bad_argument' "a .u32 parameter given 2^32"
  contains out.txt 'launch .u32 -2^31 - 1: bad_argument' "a .u32 parameter given -2^31 - 1"
  contains out.txt 'trace:save(""): bad_argument trace:save(prefix): the prefix names the files' 'trace:save("")'
  contains out.txt 'trace:save("sub/"): bad_argument' 'trace:save("sub/")'
  contains out.txt "trace:dump(\"\"): bad_argument an output file's path is the empty string" 'trace:dump("")'
  ok; { [ -z "$(ls -A sub)" ] && [ ! -e .bin ] && [ ! -e .meta.json ]; } || fail "trace:save wrote hidden files"
  # calibration words that are not the trace's: random ones, and ones measuring 2e-05 GHz
  cat >words.lua <<'EOF'
local n, kind, path = tonumber(arg[1]), arg[2], arg[3]
math.randomseed(7)
local f = assert(io.open(path, "wb"))
for _ = 1, n do
  if kind == "slow" then f:write(string.pack("<I4I4I4I4", 0, 0, 20, 1000000))
  else f:write(string.pack("<I4I4I4I4", math.random(0, 2^32 - 1), math.random(0, 2^32 - 1), math.random(0, 2^32 - 1),
    math.random(0, 2^32 - 1))) end
end
f:close()
EOF
  w=$(( $(stat -c %s inst.calib.bin) / 16 ))
  "$exe" words.lua "$w" random random.bin && "$exe" words.lua "$w" slow slow.bin
  expect 0 "dump with its own --calib" -- "$exe" dump inst.bin --meta inst.meta.json --calib inst.calib.bin -o ok.json
  expect 3 "dump with random --calib words" -- "$exe" dump inst.bin --meta inst.meta.json --calib random.bin -o r.json
  contains err.txt "have %clock or %globaltimer going backwards between start and exit: not this trace's --calib" \
    "random --calib words"
  expect 3 "dump with --calib words measuring 2e-05 GHz" -- "$exe" dump inst.bin --meta inst.meta.json --calib slow.bin -o s.json
  contains err.txt "the calibration words measure an SM clock of 2e-05 GHz" "--calib words measuring 2e-05 GHz"
  sed 's/"clock_ghz": [0-9.e+-]*/"clock_ghz": "fast"/' inst.meta.json >str.meta.json
  ok; grep -q '"fast"' str.meta.json || fail "the test's meta has no clock_ghz to replace"
  expect 3 "a string clock_ghz" -- "$exe" dump inst.bin --meta str.meta.json -o s.json
  contains err.txt 'field "clock_ghz" must be an SM clock rate from 0.1 to 10 GHz, not a string' "a string clock_ghz"
  expect 2 "slurm --partition with a newline" -- "$exe" slurm "$C" --tasks 2 --out S --partition "$(printf 'gpu\n#SBATCH --mem=1')" --dry-run
  contains err.txt "slurm: --partition takes a partition name" "slurm --partition with a newline"
  expect 0 "slurm --partition a,b" -- "$exe" slurm "$C" --tasks 2 --out S2 --partition gpu,debug --dry-run
  mkfifo ff
  expect 2 "dump ff -o ff (one FIFO)" -- timeout 10 "$exe" dump ff --meta inst.meta.json -o ff
  contains err.txt "-o ff is the input ff" "dump ff -o ff (one FIFO)"
  expect 2 "instrument ff -o ff (one FIFO)" -- timeout 10 "$exe" instrument ff -o ff
  # per = "iteration" is the default (one region per iteration), now documented
  printf '[{"name": "L", "loop": true, "per": "iteration"}]\n' >it.json
  printf '[{"name": "L", "loop": true}]\n' >def.json
  expect 0 'a probe per = "iteration"' -- "$exe" instrument "$src/tests/ptx/probes_triton.ptx" --probes it.json -o it.ptx
  expect 0 "a loop probe" -- "$exe" instrument "$src/tests/ptx/probes_triton.ptx" --probes def.json -o def.ptx
  same it.ptx def.ptx 'per = "iteration" (the default)'
  # a cubin on emu is refused by name, not parsed as PTX
  printf '\177ELF\002\001\001\063' >k.cubin
  printf 'local d = require("mgpu").device("emu"); d:load("k.cubin")\n' >cubin.lua
  expect 2 "a cubin on emu" -- "$exe" cubin.lua
  contains err.txt "k.cubin: a cubin/fatbin runs on the cuda backend only; emu runs PTX" "a cubin on emu"
  ;;
hangs)
  # probe files that escaped their 5 s limit: a __gc finalizer that loops (Lua runs finalizers
  # without hooks), a pcall loop that catches every raise; print writes to stderr
  T=$src/tests/ptx/probes_triton.ptx
  printf 'local t = setmetatable({}, {__gc = function() while true do end end})\nt = nil\ncollectgarbage()\nreturn {{name = "k", kernel = true}}\n' >gc.lua
  printf 'while true do pcall(error, "again") end\n' >pc.lua
  printf 'local function f() while true do end end\nwhile true do pcall(f) end\n' >pc2.lua
  for f in gc pc pc2; do
    t0=$(date +%s%N)
    expect 2 "a probe file $f.lua that never returns" -- timeout 30 "$exe" instrument "$T" --probes $f.lua -o $f.ptx
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    contains err.txt "$f.lua: the probe file ran past its time limit of 5 s" "a probe file $f.lua that never returns"
    ok; [ "$ms" -lt 9000 ] || fail "a probe file $f.lua stopped after $ms ms (5 s)"
    absent $f.ptx "a probe file $f.lua that never returns"
  done
  printf 'setmetatable({}, {__gc = function() while true do end end})\nprint("from the probes")\nreturn {{name = "k", kernel = true}}\n' >ok.lua
  printf '[{"name": "k", "kernel": true}]\n' >ok.json
  expect 0 "a probe file with print and a finalizer left" -- timeout 30 "$exe" instrument "$T" --probes ok.lua -o ok.ptx
  contains err.txt "from the probes" "print in a probe file"
  lacks ok.ptx "from the probes" "print in a probe file"
  expect 0 "the same probes from JSON" -- "$exe" instrument "$T" --probes ok.json -o okj.ptx
  same ok.ptx okj.ptx "a .lua probe file's list read back as JSON"
  # an experiment's setup looping inside pcall, run with timeout_s = 1 and no --workers: the point
  # fails as timeout and the sweep goes on (it ran until killed: timeout_s did not hold)
  cat >hang.lua <<EOF
return {
  name = "hang", module = "$src/ptx/copy.ptx", kernel = "copy_f32x4", timeout_s = 1,
  axes = { n = { 1024, 2048 } },
  setup = function(p, dev)
    local x, y = dev:array("f32", p.n), dev:array("f32", p.n)
    if p.n == 1024 then
      while true do pcall(function() local i = 0; while true do i = i + 1 end end) end
    end
    return { grid = 1, block = 256, args = { x, y, p.n // 4 } }
  end,
}
EOF
  t0=$(date +%s%N)
  expect 7 "a setup looping inside pcall, timeout_s = 1" -- timeout 60 "$exe" hang.lua --out H -q
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  ok; [ "$ms" -lt 15000 ] || fail "a setup looping inside pcall stopped after $ms ms (timeout_s = 1, 5 s for the worker)"
  contains H/results.jsonl '"code":"timeout"' "a setup looping inside pcall"
  contains H/results.jsonl 'it ran past timeout_s = 1 s (and 5 s more for the worker to stop it itself)' \
    "a setup looping inside pcall"
  contains H/results.jsonl '"key":"n=2048","point":{"n":2048},"status":"ok"' "the point after it"
  contains H/manifest.json '"workers": 1' "timeout_s: one worker"
  expect 0 "--workers 0 keeps a well-behaved run in process" -- "$exe" "$C" --workers 0 --out W0 -q
  ;;
*) echo "unknown class $class" >&2; exit 2 ;;
esac
if [ "$failures" -gt 0 ]; then echo "$class: $failures of $checks checks failed" >&2; exit 1; fi
echo "$class: $checks checks passed"
