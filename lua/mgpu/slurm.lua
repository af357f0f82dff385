-- mgpu.slurm: `mgpu-harness slurm experiment.lua --tasks N --out DIR ...`: a
-- sweep as a Slurm job array.  It writes DIR/slurm/array.sh (task i runs shard
-- i/N of the sweep into DIR/shards/i, with --workers auto inside its
-- allocation, or resumes that shard when it exists) and DIR/slurm/merge.sh (a
-- job that depends on the array, afterany, and merges the shards into DIR),
-- submits both with the sbatch found on PATH ($MGPU_SBATCH overrides; squeue
-- likewise with $MGPU_SQUEUE), and prints the job ids and where the logs go.
-- --wait waits for the merge and exits with the sweep's status; --dry-run
-- writes and prints the scripts and submits nothing.  Run again on the same
-- DIR after tasks failed, timed out or were cancelled, it submits only the
-- shards that still miss points.  The harness, the experiment and DIR must be
-- on a filesystem every node sees: the scripts check it and say so.
local core = require "mgpu.core"
local errors = require "mgpu.errors"
local options = require "mgpu.options"
local files = require "mgpu.files"
local results = require "mgpu.results"

local M = {}

local function bad(msg) error(errors.new("bad_argument", msg), 0) end

local USAGE = "usage: mgpu-harness slurm EXPERIMENT.lua --tasks N --out DIR [--gpus-per-task G] [--partition P]\n"
  .. "         [--time T] [--wait] [--dry-run] [--set name=v1,v2 ...] [--backend emu|cuda] [-- EXTRA_SBATCH_ARGS...]"

local function quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

function M.parse_args(argv)
  local o = { set = {}, extra = {} }
  local seen = {} -- an option twice is refused (--set may repeat, an axis each), an empty value too
  local i = 1
  while i <= #argv do
    local a = argv[i]
    local function value()
      i = i + 1
      if argv[i] == nil then bad("slurm: " .. a .. " needs a value\n" .. USAGE) end
      return options.arg("slurm", a, argv[i], a ~= "--set" and seen or nil)
    end
    if a == "--" then
      for k = i + 1, #argv do o.extra[#o.extra + 1] = argv[k] end
      break
    elseif a == "--tasks" then o.tasks_text = value(); o.tasks = tonumber(o.tasks_text)
    elseif a == "--out" then o.out = value()
    elseif a == "--gpus-per-task" then o.gpus_text = value(); o.gpus = tonumber(o.gpus_text)
    elseif a == "--partition" then o.partition = value()
    elseif a == "--time" then o.time = value()
    elseif a == "--wait" then o.wait = true
    elseif a == "--dry-run" then o.dry_run = true
    elseif a == "--backend" then o.backend = value()
    elseif a == "--set" then o.set[#o.set + 1] = value()
    elseif a == "--help" or a == "-h" then o.help = true
    elseif a:sub(1, 1) == "-" then bad("slurm: unknown option " .. a .. "\n" .. USAGE)
    elseif not o.script then o.script = options.arg("slurm", "EXPERIMENT.lua", a)
    else bad("slurm: one experiment at a time (got " .. o.script .. " and " .. a .. ")\n" .. USAGE) end
    i = i + 1
  end
  if o.help then return o end
  if not o.script then bad("slurm: name the experiment\n" .. USAGE) end
  if not o.tasks or o.tasks < 1 or o.tasks ~= math.floor(o.tasks) or o.tasks > 100000 then
    bad("slurm: --tasks takes the number of array tasks (1 to 100000), not " .. tostring(o.tasks_text) .. "\n" .. USAGE)
  end
  if not o.out then bad("slurm: --out DIR is required (the merged results folder; the shards go under it)\n" .. USAGE) end
  if o.gpus_text and (not o.gpus or o.gpus < 1 or o.gpus ~= math.floor(o.gpus) or o.gpus > 1024) then
    bad("slurm: --gpus-per-task takes a count of GPUs (1 to 1024), not " .. o.gpus_text)
  end
  if o.time and not M.slurm_time(o.time) then
    bad("slurm: --time takes a Slurm time limit (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED), not "
      .. o.time)
  end
  if o.partition and not o.partition:match("^[%w_.%-]+$") and not o.partition:match("^[%w_.%-][%w_.,%-]*[%w_.%-]$") then
    -- it goes into an #SBATCH line: a newline there wrote a line of its own into the job script
    bad("slurm: --partition takes a partition name or a comma-separated list of them (letters, digits, _ . -), not "
      .. string.format("%q", o.partition))
  end
  if o.backend and not (o.backend == "emu" or o.backend == "cuda" or o.backend == "auto" or o.backend:match("^cuda:%d+$")) then
    bad("slurm: --backend takes emu, cuda, cuda:N or auto, not " .. o.backend)
  end
  return o
end

-- Whether t is a time limit sbatch --time takes (sbatch(1): "minutes", "minutes:seconds",
-- "hours:minutes:seconds", "days-hours", "days-hours:minutes", "days-hours:minutes:seconds";
-- UNLIMITED / infinite for none).
function M.slurm_time(t)
  if t == "UNLIMITED" or t == "unlimited" or t == "infinite" then return true end
  local n = "%d+"
  for _, f in ipairs({ "^" .. n .. "$", "^" .. n .. ":" .. n .. "$", "^" .. n .. ":" .. n .. ":" .. n .. "$",
    "^" .. n .. "%-" .. n .. "$", "^" .. n .. "%-" .. n .. ":" .. n .. "$", "^" .. n .. "%-" .. n .. ":" .. n .. ":" .. n .. "$" }) do
    if t:match(f) then return true end
  end
  return false
end

-- A Slurm command: $MGPU_<NAME> or the one on PATH; a not_found naming what was looked for.
function M.find(name)
  local env = "MGPU_" .. name:upper()
  local v = os.getenv(env)
  if v and v ~= "" then
    if not files.exists(v) then error(errors.new("not_found", string.format("%s=%s: no such file", env, v)), 0) end
    return v
  end
  for dir in (os.getenv("PATH") or ""):gmatch("[^:]+") do
    if files.exists(dir .. "/" .. name) then return dir .. "/" .. name end
  end
  error(errors.new("not_found", string.format("%s not found (looked on PATH and in $%s): is Slurm installed here?",
    name, env)), 0)
end

-- Runs a shell command; its stdout, and true when it exited 0.
local function capture(cmd)
  local p = io.popen(cmd .. "; printf '\\n__status %d' $?")
  local out = p:read("*a")
  p:close()
  local status
  out = out:gsub("\n__status (%d+)$", function(s) status = tonumber(s); return "" end)
  return out, status == 0
end

-- The shards that still miss points: all of them when DIR/shards is new.
local function shards_to_run(dir, n)
  local todo = {}
  for i = 1, n do
    local sd = string.format("%s/shards/%d", dir, i)
    local man = files.exists(sd .. "/manifest.json") and files.read_json(sd .. "/manifest.json") or nil
    local need = true
    if man and type(man.selected) == "table" and files.exists(sd .. "/results.jsonl") then
      local ok_keys, n_ok = {}, 0
      -- the results reader's rows (a torn last line is no row: its task runs it again)
      for _, row in ipairs((results.read_jsonl(sd .. "/results.jsonl"))) do
        if row.status == "ok" and type(row.key) == "string" and not ok_keys[row.key] then
          ok_keys[row.key] = true
          n_ok = n_ok + 1
        end
      end
      need = n_ok < #man.selected
    end
    if need then todo[#todo + 1] = i end
  end
  return todo
end

local function sbatch_lines(o, name, logs, extra_lines)
  local l = { "#!/bin/bash", "#SBATCH --job-name=" .. name, "#SBATCH --output=" .. logs }
  if o.partition then l[#l + 1] = "#SBATCH --partition=" .. o.partition end
  if o.time then l[#l + 1] = "#SBATCH --time=" .. o.time end
  for _, x in ipairs(extra_lines or {}) do l[#l + 1] = x end
  for _, x in ipairs(l) do -- sbatch reads its directives line by line: one value must not make two
    if x:find("[\r\n]") then bad("slurm: a line break in " .. string.format("%q", x) .. " (the results folder's or the "
      .. "experiment's name?): it would end the #SBATCH line") end
  end
  return l
end

-- The two scripts, as text.
function M.scripts(o, exe, script, dir, todo)
  local name = "mgpu-" .. (script:match("([^/]+)%.lua$") or "sweep")
  local check = {
    "# the harness, the experiment and the results folder must be visible on every node",
    string.format("for p in %s %s %s; do", quote(exe), quote(script), quote(dir)),
    "  if [ ! -e \"$p\" ]; then",
    "    echo \"mgpu-harness slurm: $p is not visible on $(hostname): the harness, the experiment and the results\" \\",
    "         \"folder must be on a filesystem every node sees\" >&2",
    "    exit 2",
    "  fi",
    "done",
  }
  local idx = {}
  for k, i in ipairs(todo) do idx[k] = tostring(i) end
  local head = { "#SBATCH --array=" .. table.concat(idx, ","), "#SBATCH --ntasks=1" }
  if o.gpus then head[#head + 1] = "#SBATCH --gpus-per-task=" .. o.gpus end
  local arr = sbatch_lines(o, name, dir .. "/slurm/logs/task-%a.out", head)
  arr[#arr + 1] = "set -u"
  for _, x in ipairs(check) do arr[#arr + 1] = x end
  local common = { "--workers", "auto", "--quiet" }
  if o.backend then common[#common + 1] = "--backend"; common[#common + 1] = o.backend end
  local sets = {}
  for _, s in ipairs(o.set) do sets[#sets + 1] = "--set " .. quote(s) end
  arr[#arr + 1] = "i=$SLURM_ARRAY_TASK_ID"
  arr[#arr + 1] = string.format("shard=%s/shards/$i", quote(dir))
  arr[#arr + 1] = "if [ -e \"$shard/manifest.json\" ]; then # a task run before: its missing points"
  arr[#arr + 1] = string.format("  exec %s %s --resume \"$shard\" %s", quote(exe), quote(script), table.concat(common, " "))
  arr[#arr + 1] = "fi"
  arr[#arr + 1] = string.format("exec %s %s --shard \"$i/%d\" --out \"$shard\" %s %s", quote(exe), quote(script), o.tasks,
    table.concat(common, " "), table.concat(sets, " "))
  local mrg = sbatch_lines(o, name .. "-merge", dir .. "/slurm/logs/merge.out", { "#SBATCH --ntasks=1" })
  mrg[#mrg + 1] = "set -u"
  for _, x in ipairs(check) do mrg[#mrg + 1] = x end
  local shards = {}
  for i = 1, o.tasks do shards[i] = string.format("%s/shards/%d", quote(dir), i) end
  mrg[#mrg + 1] = "present=()"
  mrg[#mrg + 1] = string.format("for s in %s; do [ -e \"$s/manifest.json\" ] && present+=(\"$s\"); done",
    table.concat(shards, " "))
  mrg[#mrg + 1] = string.format("%s merge %s \"${present[@]}\"", quote(exe), quote(dir))
  mrg[#mrg + 1] = "status=$?"
  mrg[#mrg + 1] = string.format("echo \"$status\" > %s/slurm/merge.status", quote(dir))
  mrg[#mrg + 1] = "exit $status"
  return table.concat(arr, "\n") .. "\n", table.concat(mrg, "\n") .. "\n"
end

local function job_running(squeue, id)
  local out = capture(string.format("%s -h -j %s -o %%i 2>/dev/null", quote(squeue), id))
  return out:match("%S") ~= nil
end

-- The experiment's points as the tasks would run them: `mgpu-harness SCRIPT --list` with the
-- sweep's --set and --backend (an unknown axis, a bad value, a script that is not an
-- experiment are refused here, naming what the harness said).
function M.count_points(exe, script, o)
  local cmd = { quote(exe), quote(script), "--list" }
  for _, v in ipairs(o.set) do cmd[#cmd + 1] = "--set " .. quote(v) end
  if o.backend then cmd[#cmd + 1] = "--backend " .. quote(o.backend) end
  local out, ok = capture(table.concat(cmd, " ") .. " 2>&1")
  local total = out:match("\n(%d+) points? %(%d+ filtered out%)%s*$") or out:match("^(%d+) points? %(%d+ filtered out%)%s*$")
  if not ok or not total then
    bad(string.format("slurm: %s --list%s did not list an experiment's points: %s", o.script,
      #o.set > 0 and (" --set " .. table.concat(o.set, " --set ")) or "",
      (out:gsub("^mgpu%-harness: ", ""):gsub("%s+$", ""):gsub(" %[[%w_]+%]$", "")):sub(1, 400)))
  end
  return tonumber(total)
end

function M.main(argv)
  local o = M.parse_args(argv)
  if o.help then print(USAGE); return 0 end
  local exe = assert(core.exe_path())
  local script = files.absolute(o.script)
  if not files.exists(script) then bad("slurm: " .. o.script .. ": no such experiment file") end
  local dir = files.absolute(o.out)
  -- before anything is written: DIR is this sweep's (a merge's, or new), and the experiment, its
  -- --set and --backend are what the tasks can run (its points listed by the harness itself)
  if files.exists(dir .. "/manifest.json") then
    local man = files.read_json(dir .. "/manifest.json")
    if type(man) ~= "table" or not man.merged_from then
      bad("slurm: --out " .. o.out .. " holds a run's results that no merge made: name a new folder")
    end
  elseif results.harness_file(dir) then -- the merge job would overwrite it (issue 36)
    bad("slurm: --out " .. o.out .. " holds " .. results.harness_file(dir) .. ", which no run wrote there (no "
      .. "manifest.json): the merge would overwrite it; name a new folder")
  end
  local points = M.count_points(exe, script, o)
  if o.tasks > points then
    bad(string.format("slurm: --tasks %d for %d point%s: %d task%s would have no point (at most %d)", o.tasks, points,
      points == 1 and "" or "s", o.tasks - points, o.tasks - points == 1 and "" or "s", points))
  end
  local todo = shards_to_run(dir, o.tasks)
  if #todo == 0 then
    print("slurm: every shard of " .. dir .. " holds its points: nothing to submit (merge: mgpu-harness merge "
      .. dir .. " " .. dir .. "/shards/*)")
    return 0
  end
  local array, merge = M.scripts(o, exe, script, dir, todo)
  if o.dry_run then -- prints what it would write and submit: writes nothing (issue 35), not even DIR
    local extra = {}
    for k, x in ipairs(o.extra) do extra[k] = quote(x) end
    io.write("# ", dir, "/slurm/array.sh (not written)\n", array, "\n# ", dir, "/slurm/merge.sh (not written)\n", merge)
    print(string.format("# would run: sbatch --parsable %s%s (then the merge job, after the array)",
      #extra > 0 and (table.concat(extra, " ") .. " ") or "", quote(dir .. "/slurm/array.sh")))
    print(string.format("slurm: dry run: %d of %d tasks would be submitted (nothing was written or submitted)", #todo,
      o.tasks))
    return 0
  end
  core.mkdir_p(dir .. "/slurm/logs")
  core.mkdir_p(dir .. "/shards")
  core.write_file(dir .. "/slurm/array.sh", array)
  core.write_file(dir .. "/slurm/merge.sh", merge)
  os.remove(dir .. "/slurm/merge.status")
  local sbatch = M.find("sbatch")
  local extra = {}
  for k, x in ipairs(o.extra) do extra[k] = quote(x) end
  local out, ok = capture(string.format("%s --parsable %s %s 2>&1", quote(sbatch), table.concat(extra, " "),
    quote(dir .. "/slurm/array.sh")))
  local array_id = out:match("^(%d+)")
  if not ok or not array_id then error(errors.new("launch_failed", "slurm: sbatch refused the array: " .. out), 0) end
  out, ok = capture(string.format("%s --parsable --dependency=afterany:%s %s 2>&1", quote(sbatch), array_id,
    quote(dir .. "/slurm/merge.sh")))
  local merge_id = out:match("^(%d+)")
  if not ok or not merge_id then error(errors.new("launch_failed", "slurm: sbatch refused the merge job: " .. out), 0) end
  print(string.format("slurm: array job %s (%d task%s: shards %s), merge job %s (after the array)", array_id, #todo,
    #todo == 1 and "" or "s", table.concat(todo, ","), merge_id))
  print(string.format("  logs: %s/slurm/logs/task-N.out, merge.out; results: %s", dir, dir))
  if not o.wait then return 0 end
  local squeue = M.find("squeue")
  while job_running(squeue, merge_id) or job_running(squeue, array_id) do
    errors.execute("sleep 1", "slurm --wait") -- Ctrl-C: interrupted (the sleep alone would die of it)
  end
  local status = files.read(dir .. "/slurm/merge.status")
  if not status then
    io.stderr:write("slurm: the merge job left no status (cancelled?): see " .. dir .. "/slurm/logs/merge.out\n")
    return 1
  end
  local st = tonumber(status:match("%d+")) or 1
  print(string.format("slurm: merged into %s (merge exit status %d)", dir, st))
  return st
end

return M
