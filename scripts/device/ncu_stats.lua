-- ncu_stats.lua: emu's exact memory counters (launch{stats = true}) against Nsight
-- Compute's on a GPU, for the kernels of tests/ptx/emu_stats.cu whose counts are known
-- (strided loads, transposes with and without padding, a broadcast, a divergent loop).
--   mgpu-harness scripts/device/ncu_stats.lua [OUT_DIR] [BACKEND]
--     runs the launches under `ncu --metrics ... --csv` in a child (this script with
--     `launch`), runs the same launches on emu with stats, and compares the metrics
--     both name; writes OUT_DIR/ncu-stats.md and prints a RESULT line.  Skipped, with
--     a message, where there is no ncu (MGPU_NCU, PATH, /usr/local/cuda/bin) or no
--     GPU (BACKEND emu: what ctest can run).
--   mgpu-harness scripts/device/ncu_stats.lua launch [BACKEND]
--     the launches alone, once each (what ncu profiles).
-- Compared exactly: global ld/st requests and sectors, shared ld/st wavefronts; bank
-- conflicts are shown beside them (the hardware counter is known to count more than
-- the wavefront rule in some cases).  Local memory is shown, not compared: ptxas may
-- keep a PTX local array in registers.
local mgpu = require "mgpu"

local here = (arg and arg[0] or ""):match("^(.*)/scripts/device/[^/]*$") or "."
local ptx = here .. "/tests/ptx/emu_stats.ptx"

local COMPARED = {
  "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
  "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
  "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
}
local SHOWN = {
  "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
  "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
}

-- the launches, in order: {label, kernel, launch table given the device}
local function launches(dev)
  local L = {}
  for _, s in ipairs({ 1, 2, 32 }) do
    L[#L + 1] = { "ld_stride stride " .. s, "ld_stride", { grid = 1, block = 256,
      args = { dev:array("f32", 256 * 32, { fill = "ramp" }), dev:array("f32", 256), s } } }
  end
  for _, k in ipairs({ "transpose32", "transpose32_padded" }) do
    L[#L + 1] = { k, k, { grid = 1, block = { 32, 32 }, args = { dev:array("f32", 1024, { fill = "ramp" }),
      dev:array("f32", 1024) } } }
  end
  L[#L + 1] = { "broadcast", "broadcast", { grid = 1, block = 64, args = { dev:array("f32", 64), dev:array("f32", 64) } } }
  L[#L + 1] = { "divergent", "divergent", { grid = 1, block = 64, args = { dev:array("i32", 64, { fill = "ramp" }),
    dev:array("i32", 64) } } }
  L[#L + 1] = { "local_array", "local_array", { grid = 1, block = 64, args = { dev:array("i32", 64), 3 } } }
  return L
end

local function quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local function exists(p)
  local f = p and io.open(p)
  if f then f:close() end
  return f ~= nil
end

local function find_ncu()
  local env = os.getenv("MGPU_NCU")
  if env and env ~= "" then return exists(env) and env or nil end
  local p = io.popen("command -v ncu 2>/dev/null")
  local path = p:read("*l")
  p:close()
  if path and path ~= "" then return path end
  if exists("/usr/local/cuda/bin/ncu") then return "/usr/local/cuda/bin/ncu" end
  return nil
end

local function harness_exe()
  local h = os.getenv("MGPU_HARNESS")
  if h and h ~= "" then return h end
  local p = io.popen("readlink /proc/$PPID/exe")
  local exe = p:read("*l")
  p:close()
  return exe
end

-- One CSV line's fields (quoted, with "" for a quote).
local function csv_fields(line)
  local out, i, n = {}, 1, #line
  while i <= n + 1 do
    if line:sub(i, i) == '"' then
      local s, j = {}, i + 1
      while j <= n do
        local c = line:sub(j, j)
        if c == '"' and line:sub(j + 1, j + 1) == '"' then s[#s + 1] = '"'; j = j + 2
        elseif c == '"' then break
        else s[#s + 1] = c; j = j + 1 end
      end
      out[#out + 1] = table.concat(s)
      i = j + 2 -- past the quote and the comma
    else
      local j = line:find(",", i, true) or n + 1
      out[#out + 1] = line:sub(i, j - 1)
      i = j + 1
    end
  end
  return out
end

-- ncu --csv (one row per kernel launch and metric) -> list of {kernel=, [metric] = value} in launch order.
local function parse_ncu(text)
  local head, launches_, by_id = nil, {}, {}
  for line in text:gmatch("[^\n]+") do
    if line:sub(1, 1) == '"' then
      local f = csv_fields(line)
      if not head then
        head = {}
        for i, name in ipairs(f) do head[name] = i end
      elseif head["Metric Name"] then
        local id = f[head["ID"]]
        local l = by_id[id]
        if not l then
          l = { kernel = f[head["Kernel Name"]] }
          by_id[id] = l
          launches_[#launches_ + 1] = l
        end
        local v = tonumber((f[head["Metric Value"]] or ""):gsub(",", ""), 10)
        l[f[head["Metric Name"]]] = v
      end
    end
  end
  return launches_
end

if arg[1] == "launch" then
  local dev = mgpu.device(arg[2] or "cuda")
  local m = dev:load(ptx)
  for _, l in ipairs(launches(dev)) do m:kernel(l[2]):launch(l[3]) end
  return
end

local out_dir = arg[1] or "results/device-check"
local backend = arg[2] or "cuda"
os.execute("mkdir -p " .. quote(out_dir))
local rows, failed = {}, 0
local function row(name, ok, detail)
  if ok == false then failed = failed + 1 end
  rows[#rows + 1] = string.format("| %s | %s | %s |", name, ok == nil and "skipped" or ok and "ok" or "FAIL", detail or "")
  io.stderr:write(string.format("%-34s %s %s\n", name, ok == nil and "skip" or ok and "ok  " or "FAIL", detail or ""))
end

local function finish(summary)
  local f = io.open(out_dir .. "/ncu-stats.md", "w")
  f:write("| ncu vs emu | result | detail |\n|---|---|---|\n" .. table.concat(rows, "\n") .. "\n")
  f:close()
  print("| ncu vs emu | result | detail |\n|---|---|---|\n" .. table.concat(rows, "\n"))
  print(summary)
end

local ncu = find_ncu()
if backend == "emu" or not ncu then
  row("ncu memory metrics", nil, backend == "emu" and "no GPU (emu): nothing to compare with"
    or "Nsight Compute (ncu) not found (MGPU_NCU, PATH, /usr/local/cuda/bin): skipped")
  finish("RESULT | emu counters vs ncu (ncu_stats.lua) | skipped | - | skipped |")
  return
end

local metrics = {}
for _, n in ipairs(COMPARED) do metrics[#metrics + 1] = n end
for _, n in ipairs(SHOWN) do metrics[#metrics + 1] = n end
local cmd = table.concat({ quote(ncu), "--csv", "--metrics", table.concat(metrics, ","), quote(harness_exe()),
  quote(here .. "/scripts/device/ncu_stats.lua"), "launch", quote(backend), "2>&1" }, " ")
local p = io.popen(cmd)
local text = p:read("*a")
p:close()
local got = parse_ncu(text)
local emu = mgpu.device("emu")
local m = emu:load(ptx)
local list = launches(emu)
if #got ~= #list then
  row("ncu memory metrics", false, string.format("ncu reported %d launches, %d were made: %s", #got, #list,
    text:sub(1, 300):gsub("\n", " ")))
else
  for i, l in ipairs(list) do
    local launch = l[3]
    launch.stats = true
    local t = m:kernel(l[2]):launch(launch).stats.total
    local g, differ, shown = got[i], {}, {}
    for _, n in ipairs(COMPARED) do
      if (g[n] or 0) ~= (t[n] or 0) then differ[#differ + 1] = string.format("%s ncu %s emu %s", n, tostring(g[n]), t[n]) end
    end
    for _, n in ipairs(SHOWN) do
      if (g[n] or 0) ~= 0 or (t[n] or 0) ~= 0 then shown[#shown + 1] = string.format("%s ncu %s emu %s", n, tostring(g[n]), t[n]) end
    end
    row(l[1], #differ == 0, (#differ > 0 and table.concat(differ, "; ") or "requests, sectors, wavefronts equal")
      .. (#shown > 0 and ("; " .. table.concat(shown, "; ")) or ""))
  end
end
finish(string.format("RESULT | emu counters vs ncu (ncu_stats.lua) | %d of %d equal | all | %s |", #rows - failed, #rows,
  failed == 0 and "met" or "MISSED"))
