#!/usr/bin/env bash
# sweep_test.sh - `mgpu-harness slurm` against a real Slurm (run inside
# tests/slurm/cluster.sh, which starts one and sets SLURM_CONF): a 12-point emu
# sweep through --tasks 4 --wait equals a single-process run, a filtered one too (issue 24:
# complete, exit 0); --dry-run prints
# the scripts, writes nothing and submits nothing; a cancelled array task leaves its points
# missing, the merge says so, and the same command again completes them.
# usage: sweep_test.sh HARNESS SOURCE_DIR
set -euo pipefail
exe=$1 src=$2
T=$(mktemp -d /tmp/mgpu-sweep.XXXXXX)
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
fail() { echo "FAIL: $*"; exit 1; }
cat > "$T/exp.lua" <<LUA
return {
  name = "slurm_sweep", module = "$src/ptx/tiled.ptx", kernel = "tiled_scale", instrument = "warp",
  axes = { tiles = { 1, 2, 3, 4, 5, 6 }, alpha = { 1.0, 2.0 } },
  warmup = 0, repeats = 1,
  setup = function(p, dev)
    if os.getenv("MGPU_TEST_SLOW") and p.tiles % 4 == 2 then os.execute("sleep 20") end -- shard 2 of 4
    local n = 64 * p.tiles
    local a, c = dev:array("f32", n, { fill = "ramp" }), dev:array("f32", n)
    return { grid = 2, block = 64, smem = 256, args = { a, c, n, p.alpha }, estimate = 1 }
  end,
}
LUA
"$exe" "$T/exp.lua" --out "$T/one" --quiet || fail "the single-process run"

echo "== --dry-run"
out=$("$exe" slurm "$T/exp.lua" --tasks 4 --out "$T/dry" --dry-run --partition test --time 10)
grep -q '#SBATCH --array=1,2,3,4' <<<"$out" || fail "dry run: no array line"
grep -q -- '--shard "$i/4" --out "$shard" --workers auto' <<<"$out" || fail "dry run: task line"
grep -q '#SBATCH --partition=test' <<<"$out" || fail "dry run: partition"
grep -q 'slurm/merge.sh (not written)' <<<"$out" || fail "dry run: merge.sh"
grep -q 'not visible on' <<<"$out" || fail "dry run: the shared-filesystem check"
[ ! -e "$T/dry" ] || fail "dry run wrote $T/dry"
grep -q 'nothing was' <<<"$out" || fail "dry run: says it submitted nothing"
[ -z "$(squeue -h)" ] || fail "dry run submitted something"

echo "== --tasks 4 --wait"
"$exe" slurm "$T/exp.lua" --tasks 4 --out "$T/sweep" --wait || fail "the sweep through Slurm"
"$exe" "$src/tests/slurm/same_rows.lua" "$T/one" "$T/sweep" || fail "the merged sweep differs from the single run"
[ -e "$T/sweep/shards/4/manifest.json" ] || fail "no shard folder"

echo "== a filtered sweep: --tasks 4 --wait is complete (no shard owes a point the filter dropped)"
sed 's/name = "slurm_sweep",/name = "slurm_filtered", filter = function(p) return p.tiles % 2 == 1 or p.alpha == 1.0 end,/' \
  "$T/exp.lua" > "$T/filtered.lua"
grep -q 'filter = function' "$T/filtered.lua" || fail "no filter in the filtered experiment"
"$exe" "$T/filtered.lua" --out "$T/fone" --quiet || fail "the filtered single-process run"
"$exe" slurm "$T/filtered.lua" --tasks 4 --out "$T/fsweep" --wait || fail "the filtered sweep through Slurm"
"$exe" "$src/tests/slurm/same_rows.lua" "$T/fone" "$T/fsweep" || fail "the merged filtered sweep differs"
grep -q ' 0 missing' "$T/fsweep/slurm/logs/merge.out" || { cat "$T/fsweep/slurm/logs/merge.out"; fail "the filtered merge misses points"; }

echo "== a cancelled task, then the same command again"
out=$(MGPU_TEST_SLOW=1 "$exe" slurm "$T/exp.lua" --tasks 4 --out "$T/cut")
echo "$out"
array=$(sed -n 's/^slurm: array job \([0-9]*\).*/\1/p' <<<"$out")
merge=$(sed -n 's/.*merge job \([0-9]*\).*/\1/p' <<<"$out")
[ -n "$array" ] && [ -n "$merge" ] || fail "no job ids printed"
for _ in $(seq 100); do
  squeue -h -j "${array}_2" -t R -o %i | grep -q . && break
  sleep 0.2
done
scancel "${array}_2"
for _ in $(seq 300); do [ -z "$(squeue -h -j "$merge")" ] && break; sleep 0.2; done
grep -q "owed by shard 2/4" "$T/cut/slurm/logs/merge.out" || { cat "$T/cut/slurm/logs/merge.out"; fail "the merge did not name the missing shard"; }
[ "$(cat "$T/cut/slurm/merge.status")" != 0 ] || fail "the merge of a cut sweep said 0"
out=$("$exe" slurm "$T/exp.lua" --tasks 4 --out "$T/cut" --wait) || { echo "$out"; fail "the rerun"; }
echo "$out"
grep -q "1 task: shards 2" <<<"$out" || fail "the rerun did not submit shard 2 alone"
"$exe" "$src/tests/slurm/same_rows.lua" "$T/one" "$T/cut" || fail "the completed sweep differs from the single run"
echo "slurm sweep: all cases passed"
