#!/usr/bin/env bash
# round5.sh - the fourth hostile round (a new user's CUDA programs, cuda-samples among them, through
# `mgpu-harness nvcc`, `exec` and `--capture`), one ctest test per class (tests/CMakeLists.txt
# registers robust5_CLASS); none needs nvcc:
#   messages   exec's, nvcc's and mgpu.exec's messages carry one prefix ("mgpu-harness exec: exec: no
#              program to run" before), and relocatable device code (-rdc=true, -dc, -dlink: what
#              dynamic parallelism builds with, cuda-samples' cdpSimplePrint) refused by name before nvcc
#              runs (it ended in an undefined __cudaRegisterLinkedBinary_* from ld)
#   capture    a capture's replay checks the buffers the program's launch left unchanged too (a replay
#              that wrote over one said "same outputs, 0 buffers checked"); a NULL pointer parameter
#              replays as mgpu.null (the integer 0 was refused: cuda-samples shfl_scan's replay ended)
#   lua_api    dev:array's ramp options (start, step) without fill = "ramp", or a random fill's (seed,
#              min, max) without "random", refused by name (zeros came, silently)
# usage: round5.sh CLASS MGPU_HARNESS SOURCE_DIR
set -u
class=$1 exe=$2 src=$3
. "$(dirname "$0")/checks.sh"
robust_begin mgpu-robust5

case $class in
messages)
  expect 2 "exec of an empty program name" -- "$exe" exec -- ""
  contains err.txt "mgpu-harness exec: no program to run" "exec of an empty program name"
  lacks err.txt "exec: exec:" "exec of an empty program name: one prefix"
  : > afile
  expect 1 "exec --capture onto a file" -- "$exe" exec --capture afile/cap -- /bin/true
  contains err.txt "mgpu-harness exec: --capture afile/cap: " "exec --capture onto a file"
  lacks err.txt "exec: exec:" "exec --capture onto a file: one prefix"
  cat >lua_exec.lua <<'EOF'
local mgpu = require "mgpu"
local ok, e = pcall(mgpu.exec, { prog = "/bin/true", capture = "afile/cap" })
print(ok, e.code, e.message)
EOF
  expect 0 "mgpu.exec with a capture folder it cannot make" -- "$exe" lua_exec.lua
  contains out.txt "false	io_error	mgpu.exec: --capture afile/cap: " "mgpu.exec's message names mgpu.exec once"
  # relocatable device code, in each spelling nvcc takes; refused before nvcc is looked for
  for flags in "-rdc=true" "-rdc true" "--relocatable-device-code=true" "--relocatable-device-code true" "-dc" \
               "--device-c" "-dlink" "-dw"; do
    # shellcheck disable=SC2086
    expect 2 "nvcc $flags" -- env MGPU_NVCC=/nonexistent/nvcc "$exe" nvcc -O2 $flags -o prog cdp.cu
    contains err.txt "mgpu-harness nvcc: ${flags}: relocatable device code is not supported on emu" "nvcc $flags"
    contains err.txt "dynamic parallelism" "nvcc $flags names what it is for"
  done
  # -rdc=false is the default; -ptx -rdc=true makes no program (nvcc's to answer): neither refused
  for flags in "-rdc=false" "-ptx -rdc=true"; do # nvcc is run (a missing one: 127)
    # shellcheck disable=SC2086
    expect 127 "nvcc $flags" -- env MGPU_NVCC=/nonexistent/nvcc "$exe" nvcc $flags -o prog x.cu
    contains err.txt "mgpu-harness nvcc: cannot run /nonexistent/nvcc" "nvcc $flags runs nvcc"
    lacks err.txt "relocatable" "nvcc $flags is not refused"
  done
  ;;
capture)
  # a capture written by hand: copy_f32x4 copies buffer 1 into buffer 2; the program's launch
  # "left buffer 2 unchanged" (no output file): true when it held the copy already, false when zeros
  cp "$src/ptx/copy.ptx" .
  cat >mk.lua <<'EOF'
local dev = require("mgpu").device("emu")
dev:array("f32", 256, { fill = "ramp", start = 1, step = 1 }):save("ramp.npy")
dev:array("f32", 256):save("zero.npy")
EOF
  expect 0 "the capture's buffers" -- "$exe" mk.lua
  for out in ramp zero; do
    mkdir -p "$out" && cp copy.ptx ramp.npy zero.npy "$out"/
    cat >"$out/launches.lua" <<EOF
return require("mgpu.capture").replay(..., {
 dir = (debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."),
 launches = {
  { kernel = "copy_f32x4", module = "copy.ptx", grid = {1, 1, 1}, block = {64, 1, 1}, cluster = {0, 0, 0}, smem = 0,
   cooperative = false,
   params = {
    { bytes = "\0\0\0\0\0\0\0\0", ptrs = { { at = 0, buf = 1, offset = 0 } } },
    { bytes = "\0\0\0\0\0\0\0\0", ptrs = { { at = 0, buf = 2, offset = 0 } } },
    { bytes = "\64\0\0\0", ptrs = { } },
   },
   buffers = {
    { size = 1024, input = "ramp.npy" },
    { size = 1024, input = "$out.npy" },
   },
  },
 },
})
EOF
  done
  expect 0 "a replay that leaves an unchanged buffer as it was" -- "$exe" ramp/launches.lua
  contains out.txt "launch 1 copy_f32x4: same outputs, 2 buffers checked (0 changed by the launch)" \
    "the unchanged buffers are checked and counted"
  expect 7 "a replay that writes a buffer the program's launch left unchanged" -- "$exe" zero/launches.lua
  contains out.txt "launch 1 copy_f32x4: DIFFERENT: buffer 2 (1024 bytes) differs from the program's in 256 elements" \
    "the replay that wrote a buffer left unchanged"
  contains out.txt "the program's launch left it unchanged" "the difference says the buffer was not written"
  contains err.txt "[check_failed]" "the replay that wrote a buffer left unchanged"
  # a NULL pointer parameter (cuda-samples shfl_scan passes partial_sums = NULL): replayed with
  # mgpu.null (it was handed over as the integer 0, a bad_argument that ended the replay); a pointer
  # into no allocation of the program's is a launch not replayed, said so
  mkdir -p null && cp copy.ptx ramp.npy null/
  for v in '\0\0\0\0\0\0\0\0' '\0\16\0\0\0\127\0\0'; do
    cat >>null/launches.lua.in <<EOF
  { kernel = "copy_f32x4", module = "copy.ptx", grid = {1, 1, 1}, block = {64, 1, 1}, cluster = {0, 0, 0}, smem = 0,
   cooperative = false,
   params = {
    { bytes = "$v", ptrs = { } },
    { bytes = "\0\0\0\0\0\0\0\0", ptrs = { { at = 0, buf = 1, offset = 0 } } },
    { bytes = "\0\0\0\0", ptrs = { } },
   },
   buffers = { { size = 1024, input = "ramp.npy" } },
  },
EOF
  done
  { echo 'return require("mgpu.capture").replay(..., { dir = (debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."),'
    echo ' launches = {'; cat null/launches.lua.in; echo ' },'; echo '})'; } >null/launches.lua
  expect 0 "a replay with a NULL pointer parameter" -- "$exe" null/launches.lua
  contains out.txt "launch 1 copy_f32x4: same outputs, 1 buffer checked (0 changed by the launch)" "a NULL pointer parameter"
  contains out.txt "launch 2 copy_f32x4: not replayed: parameter 1 is a pointer into no allocation the program made (0x7f0000001000)" \
    "a pointer into no allocation"
  contains out.txt "1 launch replayed, 0 differ, 1 not replayed" "a pointer into no allocation"
  ;;
lua_api)
  # a ramp's options without fill = "ramp" (or a random fill's without "random") gave zeros silently
  cat >arr.lua <<'EOF'
local dev = require("mgpu").device("emu")
for _, o in ipairs { { start = 1, step = 1 }, { fill = "random", step = 2 }, { fill = "ramp", seed = 3 }, { min = 0 },
                     { fill = "ramp", start = 2 }, { fill = "random", seed = 2, min = 0, max = 5 } } do
  local ok, e = pcall(dev.array, dev, "f32", 4, o)
  print(ok, ok and #e or (e.code .. ": " .. e.message))
end
EOF
  expect 0 "dev:array's fill options" -- "$exe" arr.lua
  contains out.txt 'false	bad_argument: array: start is an option of fill = "ramp", and fill is "zeros" (the default: give fill too)' \
    "start without fill"
  contains out.txt 'false	bad_argument: array: step is an option of fill = "ramp", and fill is "random"' "step with a random fill"
  contains out.txt 'false	bad_argument: array: seed is an option of fill = "random", and fill is "ramp"' "seed with a ramp"
  contains out.txt 'false	bad_argument: array: min is an option of fill = "random", and fill is "zeros"' "min without fill"
  ok; [ "$(grep -c '^true	4$' out.txt)" = 2 ] || fail "a ramp with start and a random fill with seed, min, max are taken"
  ;;
*) echo "unknown class $class" >&2; exit 2 ;;
esac
if [ "$failures" -gt 0 ]; then echo "$class: $failures of $checks checks failed" >&2; exit 1; fi
echo "$class: $checks checks passed"
