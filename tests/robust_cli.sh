#!/usr/bin/env bash
# robust_cli.sh - issue 12's robustness checks of the command line, one ctest
# test per class (tests/CMakeLists.txt registers robust_CLASS):
#   outputs        -o, --summary-json, mgpu.dump{out=}, instrument -o/--names naming one of the
#                  command's inputs (the same file, a hard or symbolic link too) are refused with
#                  exit status 2 before anything is written: the inputs stay as they were
#   interrupt      SIGTERM or SIGINT during a dump, on the command line and under the Lua runner
#                  (one Ctrl-C, two), leaves no temporary file and the previous output as it was
#   pipes          a buffer, meta, calibration words or PTX from a pipe (/dev/stdin, <(...)) are
#                  read whole: the same output as from the files
#   script_errors  a Lua error in a script is script_error (exit 7) with its traceback; an error
#                  value names the script line that made it; an unreadable script is io_error (1)
#   options        every command takes --help; an unknown option is exit 2 with the usage; the
#                  top-level usage lists every option of every command; the exit-code list
#                  (docs/cli.md) names every error code of core/ and lua/
#   full_traces    a trace with no room left for another event is reported as possibly truncated
#                  (CLI stderr, mgpu.dump's warnings); not with -q, not one with room, not an
#                  instrumented one (--calib)
# usage: robust_cli.sh CLASS MGPU_HARNESS DUMPBENCH SOURCE_DIR
set -u
class=$1 exe=$2 dumpbench=$3 src=$4
fixtures=$src/tests/fixtures/mosaic-h200
. "$(dirname "$0")/robust/checks.sh"
robust_begin mgpu-robust

case $class in
outputs)
  cp "$fixtures/wg_1block.bin" b.bin && cp "$fixtures/wg_1block.meta.json" m.json
  cp b.bin b.orig && cp m.json m.orig
  ln b.bin hard.bin && ln -s m.json sym.json
  printf '\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0' >c.bin && cp c.bin c.orig
  expect 2 "dump -o BUFFER" -- "$exe" dump b.bin --meta m.json -o b.bin
  contains err.txt "[bad_argument]" "dump -o BUFFER"
  expect 2 "dump -o a hard link of BUFFER" -- "$exe" dump b.bin --meta m.json -o hard.bin --compat mosaic
  expect 2 "dump -o META via a symlink" -- "$exe" dump b.bin --meta m.json -o sym.json
  expect 2 "dump -o ./META spelled otherwise" -- "$exe" dump b.bin --meta m.json -o ./m.json
  expect 2 "dump --summary-json META" -- "$exe" dump b.bin --meta m.json -o t.json --summary-json m.json
  expect 2 "dump --summary-json BUFFER" -- "$exe" dump b.bin --meta m.json --summary-json hard.bin
  expect 2 "dump --calib C -o C" -- "$exe" dump b.bin --meta m.json --calib c.bin -o c.bin
  expect 2 "dump -o and --summary-json the same file" -- "$exe" dump b.bin --meta m.json -o t.json --summary-json t.json
  ok; [ ! -e t.json ] || fail "dump: a refused command wrote t.json"
  cat >d.lua <<'EOF'
local mgpu = require "mgpu"
local ok, err = pcall(mgpu.dump, { buffer = "b.bin", meta = "m.json", out = "hard.bin" })
assert(not ok and err.code == "bad_argument", tostring(err))
ok, err = pcall(mgpu.dump, { buffer = "b.bin", meta = "m.json", out = "sym.json", compat = "mosaic" })
assert(not ok and err.code == "bad_argument", tostring(err))
print("refused: " .. tostring(err))
EOF
  expect 0 "mgpu.dump{out=} naming an input" -- "$exe" d.lua
  contains out.txt "refused: the output sym.json is the input m.json" "mgpu.dump{out=}"
  same b.bin b.orig "the buffer after the refused dumps"
  same m.json m.orig "the meta after the refused dumps"
  same c.bin c.orig "the calibration words after the refused dumps"
  expect 0 "a dump with other outputs still runs" -- "$exe" dump b.bin --meta m.json -o t.json --summary-json s.json
  cp "$src/ptx/tiled.ptx" k.ptx && cp k.ptx k.orig && ln k.ptx k2.ptx
  expect 2 "instrument -o IN" -- "$exe" instrument k.ptx -o k.ptx
  expect 2 "instrument -o a link of IN" -- "$exe" instrument k.ptx -o k2.ptx
  expect 2 "instrument --names IN" -- "$exe" instrument k.ptx -o o.ptx --names k.ptx
  expect 2 "instrument -o and --names the same file" -- "$exe" instrument k.ptx -o n.json --names n.json
  same k.ptx k.orig "the PTX after the refused instruments"
  ok; [ ! -e o.ptx ] && [ ! -e n.json ] || fail "instrument: a refused command wrote an output"
  expect 0 "instrument to another file still runs" -- "$exe" instrument k.ptx -o o.ptx
  no_temps "outputs"
  ;;

interrupt)
  "$dumpbench" gen big.bin big.meta.json 528 8 1024 || exit 1
  # sig.pl SIGNALS CMD...: runs CMD (SIGINT at its default action, stdout to /dev/null, stderr to
  # err.txt), sends it the signals (comma-separated; "pause" waits 50 ms) once its temporary file
  # out.json.tmp.* exists,
  # and prints how it ended: "exit N", "signal NAME", or "done" when it ended before the signals.
  # (perl, not bash: bash starts background jobs with SIGINT ignored, and takes a child's death by
  # SIGINT as its own)
  cat >sig.pl <<'EOF'
use strict; use POSIX ":sys_wait_h"; use Config;
my ($sigs, @cmd) = @ARGV;
my @names = split ' ', $Config{sig_name};
my $pid = fork // die "fork: $!";
if (!$pid) {
  $SIG{INT} = 'DEFAULT'; $SIG{TERM} = 'DEFAULT';
  open STDOUT, '>', '/dev/null'; open STDERR, '>', 'err.txt';
  exec @cmd or die "exec: $!";
}
my $sent = 0;
for (1 .. 6000) {
  if (glob('out.json.tmp.*')) {
    for (split /,/, $sigs) { if ($_ eq 'pause') { select(undef, undef, undef, 0.05) } else { kill($_, $pid) } }
    $sent = 1;
    last;
  }
  last if waitpid($pid, WNOHANG) == $pid;
  select(undef, undef, undef, 0.002);
}
waitpid($pid, 0) if kill(0, $pid);
my $st = $?;
print !$sent ? "done\n" : ($st & 127) ? "signal $names[$st & 127]\n" : "exit " . ($st >> 8) . "\n";
EOF
  # run_until_signalled SIGNALS DESC CMD...: the run above, again (up to 6 times) while the dump ended
  # before the signals came; then no temporary file may be left and the previous output must be there
  run_until_signalled() {
    local sigs=$1 what=$2
    shift 2
    local attempt how=""
    for attempt in 1 2 3 4 5 6; do
      rm -f out.json.tmp.* # a case before may have left one (checked there)
      echo "previous output" >out.json
      how=$(perl sig.pl "$sigs" "$@")
      case $how in done) ;; "exit 0") ;; *) break ;; esac
      how=""
    done
    ok
    [ -n "$how" ] || { fail "$what: the dump always ended before the signal (6 tries)"; return; }
    echo "  $what: $how"
    no_temps "$what ($how)"
    ok
    [ "$(cat out.json)" = "previous output" ] || fail "$what: the previous output was replaced by an interrupted dump"
  }
  run_until_signalled TERM "dump, SIGTERM" "$exe" dump big.bin --meta big.meta.json -o out.json --clock-ghz 1.98 -q
  run_until_signalled INT "dump, SIGINT" "$exe" dump big.bin --meta big.meta.json -o out.json --clock-ghz 1.98 -q
  cat >d.lua <<'EOF'
local mgpu = require "mgpu"
mgpu.dump { buffer = "big.bin", meta = "big.meta.json", out = "out.json", clock_ghz = 1.98 }
print("not interrupted")
EOF
  run_until_signalled INT "mgpu.dump under the runner, one Ctrl-C" "$exe" d.lua
  contains err.txt "[interrupted]" "mgpu.dump under the runner, one Ctrl-C"
  run_until_signalled INT,INT "mgpu.dump under the runner, two Ctrl-C at once" "$exe" d.lua
  # a script that goes on after the first Ctrl-C: the second one ends it, and its temporary goes too
  cat >loop.lua <<'EOF'
local mgpu = require "mgpu"
while true do pcall(mgpu.dump, { buffer = "big.bin", meta = "big.meta.json", out = "out.json", clock_ghz = 1.98 }) end
EOF
  rm -f out.json.tmp.*
  how=$(perl sig.pl INT,pause,pause,INT "$exe" loop.lua)
  ok; [ "$how" = "signal INT" ] || fail "a script going on after a Ctrl-C: the second one ended it with $how, not SIGINT"
  no_temps "a script going on after a Ctrl-C, the second one"
  run_until_signalled TERM "mgpu.dump under the runner, SIGTERM" "$exe" d.lua
  ;;

pipes)
  buf=$fixtures/wg_264blocks_nested.bin meta=$fixtures/wg_264blocks_nested.meta.json
  expect 0 "dump from files" -- "$exe" dump "$buf" --meta "$meta" --compat mosaic -o files.json
  expect 0 "dump, buffer and meta from <(...)" -- "$exe" dump <(cat "$buf") --meta <(cat "$meta") --compat mosaic -o pipes.json
  same pipes.json files.json "dump from pipes"
  same pipes.json "$fixtures/wg_264blocks_nested.jax.json" "dump from pipes against JAX"
  cat "$buf" | "$exe" dump /dev/stdin --meta "$meta" --compat mosaic -o stdin.json 2>err.txt
  ok; [ $? = 0 ] || fail "dump /dev/stdin from a pipe"
  same stdin.json files.json "dump /dev/stdin"
  # a .npy through a pipe (header and data read whole)
  cat >npy.lua <<EOF
local f = assert(io.open("$buf", "rb")); local data = f:read("a"); f:close()
local n = #data // 4
local dict = string.format("{'descr': '<u4', 'fortran_order': False, 'shape': (%d,), }", n)
local pad = 64 - (10 + #dict + 1) % 64
local o = assert(io.open("b.npy", "wb"))
o:write("\x93NUMPY\1\0", string.pack("<I2", #dict + pad + 1), dict, string.rep(" ", pad), "\n", data)
o:close()
EOF
  expect 0 "write a .npy" -- "$exe" npy.lua
  expect 0 "dump a .npy from <(...)" -- "$exe" dump <(cat b.npy) --meta "$meta" --compat mosaic -o npy.json
  same npy.json files.json "dump of a .npy from a pipe"
  # calibration words through a pipe: an instrumented trace saved on emu
  cat >save.lua <<EOF
local mgpu = require "mgpu"
local dev = mgpu.device("emu")
local k = dev:load("$src/ptx/tiled.ptx", { instrument = "warp" }):kernel("tiled_scale")
local n = 128 * 8
local a, c = dev:array("f32", n, { fill = "ramp" }), dev:array("f32", n)
local run = k:launch { grid = 4, block = 128, smem = 128 * 4, args = { a, c, n, 0.5 }, profile = { entries = 200 } }
run.trace:save("inst")
EOF
  expect 0 "save an instrumented trace" -- "$exe" save.lua
  expect 0 "dump with --calib" -- "$exe" dump inst.bin --meta inst.meta.json --calib inst.calib.bin -o cal1.json
  expect 0 "dump with everything from pipes" -- "$exe" dump <(cat inst.bin) --meta <(cat inst.meta.json) --calib <(cat inst.calib.bin) -o cal2.json
  same cal1.json cal2.json "dump with --calib from pipes"
  # PTX from a pipe: today's empty output with exit 0 must not come back
  expect 0 "instrument a file" -- "$exe" instrument "$src/ptx/tiled.ptx" -o file.ptx
  cat "$src/ptx/tiled.ptx" | "$exe" instrument /dev/stdin -o pipe.ptx 2>err.txt
  ok; [ $? = 0 ] || fail "instrument /dev/stdin from a pipe"
  same pipe.ptx file.ptx "instrument /dev/stdin"
  expect 0 "instrument <(...)" -- "$exe" instrument <(cat "$src/ptx/tiled.ptx") -o sub.ptx
  same sub.ptx file.ptx "instrument <(...)"
  ok; [ -s pipe.ptx ] || fail "instrument /dev/stdin wrote an empty file"
  ;;

script_errors)
  printf 'local x = 1\nerror("plain failure")\n' >x.lua
  expect 7 "a Lua error in a script" -- "$exe" x.lua
  contains err.txt "mgpu-harness: x.lua:2: plain failure [script_error]" "a Lua error in a script"
  contains err.txt "x.lua:2: in main chunk" "its traceback"
  printf 'local t\nlocal function f() return t.field + 1 end\nlocal y = f()\nprint(y)\n' >idx.lua
  expect 7 "indexing nil in a function" -- "$exe" idx.lua
  contains err.txt "idx.lua:2: attempt to index" "indexing nil"
  contains err.txt "idx.lua:3: in" "the caller's frame in the traceback"
  printf 'local x =\n' >syn.lua
  expect 7 "a syntax error" -- "$exe" syn.lua
  contains err.txt "[script_error]" "a syntax error"
  cat >api.lua <<'EOF'
local mgpu = require "mgpu"
local function make()
  local s = mgpu.spec { grid = 1, block = 96, scope = "warpgroup", entries = 8 }
  return s
end
make()
EOF
  expect 2 "an error value of an API call" -- "$exe" api.lua
  contains err.txt "mgpu-harness: api.lua:3: block of 96 threads is not a multiple of the warpgroup size (128 threads) [bad_argument]" \
    "an error value names the script line"
  cat >dev.lua <<'EOF'
local mgpu = require "mgpu"
local dev = mgpu.device("emu")

local a = dev:array("f32", 4, { fill = "frobnicate" })
EOF
  expect 2 "an error value raised through the library" -- "$exe" dev.lua
  contains err.txt "mgpu-harness: dev.lua:4: " "an error value raised through the library names the script line"
  cat >exp.lua <<'EOF'
local base = { name = "e", module = "nope.ptx", kernel = "k", setup = function() end }
base.repeates = 3
return base
EOF
  expect 2 "an experiment with a misspelled key" -- "$exe" exp.lua
  contains err.txt 'unknown key "repeates"' "an experiment with a misspelled key"
  expect 1 "a script that does not exist" -- "$exe" missing.lua
  contains err.txt "[io_error]" "a script that does not exist"
  ;;

options)
  cp "$fixtures/wg_1block.bin" b.bin && cp "$fixtures/wg_1block.meta.json" m.json
  printf 'return { name = "e", module = "%s/ptx/copy.ptx", kernel = "copy_f32", setup = function() end }\n' "$src" >exp.lua
  "$exe" --help >top.txt 2>&1
  for cmd in dump instrument info replay compare run exp.lua; do
    expect 0 "$cmd --help" -- "$exe" $cmd --help
    contains out.txt "usage: mgpu-harness" "$cmd --help"
    cp out.txt "help-$cmd.txt"
    expect 0 "$cmd -h" -- "$exe" $cmd -h
  done
  expect 2 "info --bogus" -- "$exe" info --bogus
  contains err.txt "unknown option \`--bogus\`" "info --bogus"
  contains err.txt "usage: mgpu-harness info" "info --bogus prints the usage"
  expect 2 "info with an argument" -- "$exe" info extra
  expect 2 "dump --bogus" -- "$exe" dump b.bin --meta m.json --bogus
  contains err.txt "usage: mgpu-harness dump" "dump --bogus prints the usage"
  expect 2 "instrument --bogus" -- "$exe" instrument "$src/ptx/copy.ptx" --bogus
  contains err.txt "usage: mgpu-harness instrument" "instrument --bogus prints the usage"
  expect 2 "replay --bogus" -- "$exe" replay somewhere --bogus
  contains err.txt "unknown option --bogus" "replay --bogus"
  expect 2 "compare --bogus" -- "$exe" compare a b --bogus
  contains err.txt "usage: mgpu-harness compare" "compare --bogus prints the usage"
  expect 2 "an experiment with --bogus" -- "$exe" exp.lua --bogus
  expect 2 "an unknown top-level option" -- "$exe" --bogus
  expect 2 "run without a script" -- "$exe" run
  # the top-level usage names every option of every command
  for f in help-*.txt; do
    for opt in $(grep -oE -- '(^|[^[:alnum:]-])--?[a-z][a-z-]*' "$f" | sed 's/^[^-]*//' | sort -u); do
      case $opt in -h|--help) continue ;; esac
      ok
      grep -qE -- "(^|[^[:alnum:]-])$opt([^[:alnum:]-]|$)" top.txt || fail "mgpu-harness --help does not list $opt (from ${f#help-})"
    done
  done
  # ... and every option an experiment takes (lua/mgpu/experiment.lua's parse_args; --worker is internal)
  for opt in $(grep -oE 'a == "--?[a-z][a-z-]*"' "$src/lua/mgpu/experiment.lua" | grep -oE -- '--?[a-z-]+' | sort -u); do
    [ "$opt" = --worker ] && continue
    ok
    grep -qE -- "(^|[^[:alnum:]-])$opt([^[:alnum:]-]|$)" top.txt || fail "mgpu-harness --help does not list the experiment option $opt"
    grep -qE -- "(^|[^[:alnum:]-])$opt([^[:alnum:]-]|$)" help-exp.lua.txt || fail "SCRIPT.lua --help does not list $opt"
  done
  # the exit-code list (docs/cli.md, its last section) names every code the harness can raise
  readme=$(sed -n '/^## Exit codes/,$p' "$src/docs/cli.md")
  codes=$( (grep -oE '\] = "[a-z_]+"' "$src/core/base/error.c" | grep -oE '"[a-z_]+"' | tr -d '"';
            grep -rhoE 'errors\.new\("[a-z_]+"|code = "[a-z_]+"' "$src/lua" | grep -oE '"[a-z_]+"' | tr -d '"') |
          grep -vx ok | sort -u)
  for c in $codes; do
    ok
    grep -qF "\`$c\`" <<<"$readme" || fail "docs/cli.md's Exit codes do not name the error code $c"
  done
  ;;

full_traces)
  # one warpgroup trace of entries 32 (29 words for events): 14 events (28 words) leave no room for
  # another (Mosaic's bounds check drops the 15th), 13 events (26 words) do
  cat >gen.lua <<'EOF'
local function trace(path, events, entries)
  local w = { 1000, 7, 2 * events }
  local clock = 100
  for k = 0, events - 1 do
    w[#w + 1] = (k % 2 == 1) and 0x80000000 or 0
    clock = clock + 37
    w[#w + 1] = clock
  end
  while #w < entries do w[#w + 1] = 0 end
  local f = assert(io.open(path, "wb"))
  for _, v in ipairs(w) do f:write(string.pack("<I4", v)) end
  f:close()
end
trace("full.bin", 14, 32)
trace("room.bin", 12, 32)
local f = assert(io.open("m.json", "w"))
f:write('{"grid": [1, 1, 1], "block": [128, 1, 1], "entries_per_warpgroup": 32, "trace_scope": "warpgroup", "names": {"load": 0}}\n')
f:close()
-- an instrumented kernel's calibration (%clock and timer at start and exit); zeros are refused (issue 25)
f = assert(io.open("calib.bin", "wb")); f:write(string.pack("<I4I4I4I4", 0, 0, 1980, 1000)); f:close()
EOF
  expect 0 "generate the buffers" -- "$exe" gen.lua
  expect 0 "dump a full trace" -- "$exe" dump full.bin --meta m.json -o full.json
  contains err.txt "1 of 1 traces are full" "dump of a full trace warns"
  contains err.txt "possibly truncated" "dump of a full trace warns"
  expect 0 "dump a full trace, Mosaic mode" -- "$exe" dump full.bin --meta m.json -o fullm.json --compat mosaic
  contains err.txt "possibly truncated" "Mosaic-mode dump of a full trace warns"
  expect 0 "dump a full trace with -q" -- "$exe" dump full.bin --meta m.json -o full.json -q
  lacks err.txt "possibly truncated" "-q"
  expect 0 "dump a trace with room" -- "$exe" dump room.bin --meta m.json -o room.json
  lacks err.txt "possibly truncated" "a trace with room"
  expect 0 "dump a full instrumented trace" -- "$exe" dump full.bin --meta m.json --calib calib.bin -o cal.json
  lacks err.txt "possibly truncated" "an instrumented trace (its kernel counts past its capacity)"
  cat >d.lua <<'EOF'
local mgpu = require "mgpu"
local r = mgpu.dump { buffer = "full.bin", meta = "m.json", out = "lua.json" }
assert(#r.warnings >= 1, "no warning")
local found = false
for _, w in ipairs(r.warnings) do found = found or w:find("possibly truncated", 1, true) ~= nil end
assert(found, "no 'possibly truncated' warning: " .. table.concat(r.warnings, "; "))
r = mgpu.dump { buffer = "room.bin", meta = "m.json", out = "lua.json" }
for _, w in ipairs(r.warnings) do assert(not w:find("possibly truncated", 1, true), w) end
print("ok")
EOF
  expect 0 "mgpu.dump's warnings" -- "$exe" d.lua
  contains out.txt "ok" "mgpu.dump's warnings"
  ;;

*)
  echo "robust_cli.sh: unknown class $class" >&2
  exit 2
  ;;
esac

echo "robust_cli $class: $checks checks, $failures failed"
[ $failures = 0 ]
