#!/bin/sh
# run.sh HARNESS SRC_DIR WORK NAME [shared] - builds tests/cudart/NAME.cu with `mgpu-harness nvcc`
# (or, with `shared`, plain nvcc -cudart shared; `driver`: that and -lcuda, -DDIRECT_DRIVER;
# `ptsz`: --default-stream per-thread), runs it under `mgpu-harness exec` (its own
# checks decide), then again with --capture and replays the capture (`mgpu-harness
# DIR/launches.lua`), which checks every launch's outputs against the program's.
# Exit 77 (skipped) without nvcc.
set -u
H=$1 SRC=$2 WORK=$3 NAME=$4 MODE=${5:-}
NVCC=${MGPU_NVCC:-}
if [ -z "$NVCC" ]; then
  NVCC=$(command -v nvcc 2>/dev/null || true)
  [ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
fi
if [ -z "$NVCC" ]; then echo "skipped: nvcc is not installed (tests/cudart need it to build the programs)"; exit 77; fi
export MGPU_NVCC=$NVCC
if { [ "$MODE" = shared ] || [ "$MODE" = driver ]; } && [ "${MGPU_TEST_SANITIZE:-0}" = 1 ]; then
  echo "skipped: a plain nvcc program cannot load the sanitized libcudart.so.13 stand-in (AddressSanitizer's runtime must come first)"; exit 77
fi
D=$WORK/$NAME${MODE:+-$MODE}
rm -rf "$D" && mkdir -p "$D" || exit 1
FLAGS="-std=c++17 -O2 -arch=sm_90a -I$SRC -I$SRC/../../ptx"
EXTRA=$(sed -n 's|^// nvcc-flags: ||p' "$SRC/$NAME.cu")
if [ "$MODE" = driver ]; then # plain nvcc, the driver API too: exec's libcudart.so.13 and libcuda.so.1
  "$NVCC" $FLAGS $EXTRA -DDIRECT_DRIVER -cudart shared -o "$D/prog" "$SRC/$NAME.cu" \
    -L"$(dirname "$NVCC")/../lib64/stubs" -lcuda || { echo "FAIL: nvcc -cudart shared -lcuda"; exit 1; }
elif [ "$MODE" = ptsz ]; then # the per-thread default stream: the _ptsz/_ptds names
  "$H" nvcc $FLAGS $EXTRA --default-stream per-thread -o "$D/prog" "$SRC/$NAME.cu" || { echo "FAIL: mgpu-harness nvcc"; exit 1; }
elif [ "$MODE" = shared ]; then
  "$NVCC" $FLAGS $EXTRA -cudart shared -o "$D/prog" "$SRC/$NAME.cu" || { echo "FAIL: nvcc -cudart shared"; exit 1; }
else
  "$H" nvcc $FLAGS $EXTRA -o "$D/prog" "$SRC/$NAME.cu" || { echo "FAIL: mgpu-harness nvcc"; exit 1; }
fi
if [ "$MODE" = driver ] && command -v nm >/dev/null; then # the stand-in libcuda.so.1 shows the Driver API's names only
  OTHER=$(nm -D --defined-only "$(dirname "$H")/cudart/lib/libcuda.so.1" | awk 'NF == 3 && $2 != "A" {print $3}' | grep -v '^cu' | head -3)
  [ -z "$OTHER" ] || { echo "FAIL: libcuda.so.1 exports names of its own: $OTHER"; exit 1; }
fi
echo "== exec"
"$H" exec -- "$D/prog" || { echo "FAIL: $NAME under exec (status $?)"; exit 1; }
if grep -q MGPU_BEGIN "$SRC/$NAME.cu"; then
  echo "== exec --trace"
  "$H" exec --trace "$D/trace" -- "$D/prog" || { echo "FAIL: $NAME under exec --trace"; exit 1; }
  for n in 1 2; do
    grep -q '"load"' "$D/trace/launch-$n.trace.json" 2>/dev/null || { echo "FAIL: no region load in $D/trace/launch-$n.trace.json"; exit 1; }
  done
  ROLE=$(sed -n 's/.*MGPU_ROLE("\([^"]*\)").*/\1/p' "$SRC/$NAME.cu" | head -1)
  if [ -n "$ROLE" ]; then # the lanes are named by the kernel's role
    grep -q "warp 0 · $ROLE\"" "$D/trace/launch-1.trace.json" || { echo "FAIL: no lane named by role $ROLE in $D/trace/launch-1.trace.json"; exit 1; }
  fi
fi
echo "== exec --capture"
"$H" exec --capture "$D/capture" -- "$D/prog" > "$D/capture.out" 2>&1 || { cat "$D/capture.out"; echo "FAIL: $NAME under exec --capture"; exit 1; }
[ -f "$D/capture/launches.lua" ] || { echo "FAIL: no $D/capture/launches.lua"; exit 1; }
echo "== replay"
"$H" "$D/capture/launches.lua" || { echo "FAIL: the replay of $NAME's capture"; exit 1; }
if [ "$NAME" = vector_add ] && [ -z "$MODE" ]; then
  echo "== exec --trace --probes (a kernel without markers)"
  echo '[{"name": "whole", "kernel": true}, {"name": "loads", "around": "ld.global"}]' > "$D/probes.json"
  "$H" exec --trace "$D/ptrace" --probes "$D/probes.json" -- "$D/prog" > /dev/null 2>&1 || { echo "FAIL: exec --probes"; exit 1; }
  grep -q '"name":"whole"' "$D/ptrace/launch-1.trace.json" && grep -q '"name":"loads"' "$D/ptrace/launch-1.trace.json" ||
    { echo "FAIL: the probes' regions are not in $D/ptrace/launch-1.trace.json"; exit 1; }
  echo "== a replay whose output differs fails"
  cp -r "$D/capture" "$D/corrupt" && OUT=$(ls "$D"/corrupt/*.out.npy | head -1)
  printf '\377' | dd of="$OUT" bs=1 seek=$(( $(stat -c %s "$OUT") - 1 )) conv=notrunc 2>/dev/null
  if "$H" "$D/corrupt/launches.lua" > "$D/corrupt.out" 2>&1; then cat "$D/corrupt.out"; echo "FAIL: a changed output passed"; exit 1; fi
  grep -q "DIFFERENT" "$D/corrupt.out" || { cat "$D/corrupt.out"; echo "FAIL: the replay did not name the launch"; exit 1; }
fi
echo "PASS: $NAME"
