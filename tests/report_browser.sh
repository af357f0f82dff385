#!/usr/bin/env bash
# report_browser.sh - `mgpu-harness report` in a real browser: Debian's
# chromium, headless, loads each kind of report from disk (a point, a sweep,
# two folders and two summaries compared) through tests/report/check.html,
# which writes what the page holds (script elements, figures and their drawn
# size, labels crossing a figure's edge, lanes, histogram bins, bars) into the DOM that --dump-dom prints;
# tests/report/check_result.lua compares it with the data.  Each report is
# also saved as a screenshot (--screenshot) in SHOTS_DIR when given, for a
# person to look at.  Every chromium runs in its own session and process
# group, is waited for with a time limit, and its group is ended, by its id,
# before the next one starts: nothing is left running.
# usage: tests/report_browser.sh MGPU_HARNESS SOURCE_DIR [SHOTS_DIR]
# exit 77 (skipped) when chromium is not installed.
set -euo pipefail
exe=$1
src=$2
shots=${3:-}
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "SKIP: chromium is not installed (apt-get install chromium; scripts/setup-deps.sh installs it)"
  exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mgpu-report-browser.XXXXXX")
group=""
cleanup() {
  if [ -n "$group" ] && kill -0 -- "-$group" 2>/dev/null; then
    kill -KILL -- "-$group" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# Runs chromium headless with a fresh profile, in a session of its own,
# for at most 90 s; then ends whatever is left of its process group.
browse() {
  local profile
  profile=$(mktemp -d "$tmp/profile.XXXXXX")
  setsid "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --no-default-browser-check \
    --user-data-dir="$profile" "$@" >"$tmp/browser.out" 2>"$tmp/browser.err" </dev/null &
  group=$!
  local waited=0
  while kill -0 "$group" 2>/dev/null; do
    if [ "$waited" -ge 900 ]; then
      echo "chromium ran for more than 90 s: stopped" >&2
      kill -KILL -- "-$group" 2>/dev/null || true
      break
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  local rc=0
  wait "$group" || rc=$?
  # its helpers (zygote, renderers) belong to its group: end any that outlived it
  if kill -0 -- "-$group" 2>/dev/null; then
    kill -TERM -- "-$group" 2>/dev/null || true
    sleep 0.5
    kill -KILL -- "-$group" 2>/dev/null || true
  fi
  group=""
  rm -rf "$profile"
  return "$rc"
}

report() { "$exe" "$src/tests/report/report.lua" "$@" >/dev/null; }

# the inputs: the H200 fixture (a point), the tile sweep on emu twice (a sweep, a comparison)
"$exe" dump "$src/tests/fixtures/mosaic-h200/wg_264blocks_nested.bin" \
  --meta "$src/tests/fixtures/mosaic-h200/wg_264blocks_nested.meta.json" --clock-ghz 1.98 \
  -o "$tmp/fixture.trace.json" --summary-json "$tmp/fixture.summary.json" -q
"$exe" "$src/scripts/examples/tile_sweep.lua" --out "$tmp/sweep" --quiet >/dev/null
"$exe" "$src/scripts/examples/tile_sweep.lua" --out "$tmp/sweep2" --set block=64,128 --quiet >/dev/null
# 8 points whose throughput axes read in TB/s and TFLOP/s: the widest tick labels (issue 35)
"$exe" "$src/tests/report/flops_sweep.lua" --out "$tmp/flops" --quiet >/dev/null
report "$tmp/fixture.trace.json" -o "$tmp/point.html"
report "$tmp/sweep" -o "$tmp/sweep.html"
report "$tmp/flops" -o "$tmp/flops.html"
report "$tmp/sweep" "$tmp/sweep2" -o "$tmp/compare.html"
report "$tmp/sweep/point-1.summary.json" "$tmp/sweep/point-3.summary.json" -o "$tmp/compare-summaries.html"

fail=0
check() { # check NAME KIND INPUT [INPUT2]
  local name=$1 kind=$2
  shift 2
  echo "== $name ($kind)"
  # a loaded machine may dump the page before the check inside it finished ("pending"):
  # up to 6 tries, each in a fresh browser with twice the virtual time of the one before (3 tries
  # of 30 s each all read "pending" once, for compare-summaries, on the ASan build of a fresh-clone CI run)
  local try budget=30000
  for try in 1 2 3 4 5 6; do
    if ! browse --allow-file-access-from-files --virtual-time-budget=$budget \
        --dump-dom "file://$src/tests/report/check.html?report=file://$tmp/$name.html"; then
      echo "FAILED  chromium exited with an error"; tail -5 "$tmp/browser.err"; fail=1; return
    fi
    sed -n 's:.*<pre id="result">\(.*\)</pre>.*:\1:p' "$tmp/browser.out" | sed 's/&amp;/\&/g; s/&lt;/</g; s/&gt;/>/g' \
      >"$tmp/$name.result.json"
    grep -qx 'pending' "$tmp/$name.result.json" || break
    budget=$((budget * 2))
    [ "$try" -lt 6 ] && echo "(the check had not finished when the page was dumped: try $((try + 1)))"
  done
  "$exe" "$src/tests/report/check_result.lua" "$tmp/$name.result.json" "$kind" "$@" || fail=1
  if [ -n "$shots" ]; then
    mkdir -p "$shots"
    browse --hide-scrollbars --window-size=1280,1800 --screenshot="$shots/$name.png" "file://$tmp/$name.html" || fail=1
    [ -s "$shots/$name.png" ] && echo "screenshot: $shots/$name.png" || { echo "FAILED  no screenshot"; fail=1; }
  fi
}
check point point "$tmp/fixture.trace.json" "$tmp/fixture.summary.json"
check sweep sweep "$tmp/sweep"
check flops sweep "$tmp/flops"
check compare compare-folders "$tmp/sweep" "$tmp/sweep2"
check compare-summaries compare-summaries "$tmp/sweep/point-1.summary.json" "$tmp/sweep/point-3.summary.json"
# a screenshot is a PNG with a size (the page drew)
if [ -z "$shots" ]; then
  browse --hide-scrollbars --window-size=1280,1000 --screenshot="$tmp/point.png" "file://$tmp/point.html" || fail=1
  head -c 8 "$tmp/point.png" | od -An -c | grep -q 'P   N   G' || { echo "FAILED  the screenshot is no PNG"; fail=1; }
fi
[ "$fail" -eq 0 ] && echo "report_browser: all reports render and match their data" || echo "report_browser: FAILED"
exit "$fail"
