-- mgpu.stats: emu's exact counters (k:launch{..., stats = true} -> run.stats) as a
-- person reads them, and as files.  run.stats = {total = {metric = value}, lines =
-- {{file=, line=, ptx=, source=, metric = value, ...}}, files=, module=}; the metric
-- names are Nsight Compute's where one exists (ptx__*: counts of PTX instructions).
--   stats.report(st, {top = 10})      the text: totals and the kernel's top stall reasons,
--                                     then the lines that waste most global-memory
--                                     sectors, the bank-conflict lines, the lines with
--                                     most stalled warp-cycles (their top reasons), the
--                                     lines that run most instructions
--   stats.top_stalls(t)               a stalls table's reasons, most warp-cycles first
--   stats.write(prefix, st)           PREFIX.stats.json (run.stats as it is) and
--                                     PREFIX.stats.csv (a row per source line)
--   stats.totals(st)                  the totals without the rows (results.jsonl)
--   stats.csv_columns(rows)           results.csv's columns for rows' totals ("stats.NAME")
--   stats.csv_values(row, cols)       a row's cells for those columns
--   stats.main(argv)                  mgpu-harness stats FILE.stats.json [--top N]
local core = require "mgpu.core"
local errors = require "mgpu.errors"
local options = require "mgpu.options"
local files = require "mgpu.files"
local results = require "mgpu.results"

local M = {}

local function bad(msg) error(errors.new("bad_argument", msg), 0) end

-- The metrics in emu's order (core/emu/emu_counters.c); names a newer emu adds come after, sorted.
M.METRICS = {
  "ptx__inst_executed.sum", "ptx__thread_inst_executed.sum", "ptx__thread_inst_executed_pred_on.sum",
  "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
  "ptx__bytes_requested_mem_global_op_ld.sum",
  "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
  "ptx__bytes_requested_mem_global_op_st.sum",
  "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum",
  "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum",
  "l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum",
  "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
  "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
  "ptx__inst_executed_op_shared_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
  "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
  "ptx__inst_executed_op_shared_st.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
  "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
  "ptx__inst_executed_op_shared_atom.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum",
  "mgpu__inst_executed_instrumentation.sum", -- the instrumentation's own instructions, left out of the others
}

-- the total of warp instructions the instrumentation added, left out of every other counter
M.LEFT_OUT = "mgpu__inst_executed_instrumentation.sum"

-- Every metric name st has (rows and totals), emu's order first.
local function metric_names(st)
  local seen, out = {}, {}
  for _, n in ipairs(M.METRICS) do seen[n] = true; out[#out + 1] = n end
  local extra = {}
  local function add(t)
    for k, v in pairs(t or {}) do
      if type(v) == "number" and k ~= "line" and not seen[k] and not k:match("%.ratio$") then
        seen[k] = true
        extra[#extra + 1] = k
      end
    end
  end
  add(st.total)
  for _, r in ipairs(st.lines or {}) do add(r) end
  table.sort(extra)
  for _, n in ipairs(extra) do out[#out + 1] = n end
  return out
end

local function num(t, k) return (t and t[k]) or 0 end

local function short_file(path)
  return (tostring(path or "?"):match("[^/]+$")) or tostring(path)
end

local function where(r) return short_file(r.file) .. ":" .. tostring(r.line) .. (r.ptx and " (ptx)" or "") end

local function src(r)
  local s = r.source and r.source:gsub("^%s+", ""):gsub("%s+$", "") or ""
  if #s > 60 then s = s:sub(1, 57) .. "..." end
  return s
end

-- a percentage, rounded half up the same way under Lua 5.4 and LuaJIT (their %.0f differ at .5)
local function pct(x) return string.format("%d%%", math.floor(100 * x + 0.5)) end

local function fmt(v)
  if v == nil then return "" end
  if v == math.floor(v) and math.abs(v) < 1e15 then return string.format("%d", v) end
  return string.format("%.2f", v)
end

local G = "l1tex__t_%s_pipe_lsu_mem_global_op_%s.sum"

-- Global memory of a row: requests, sectors, bytes asked for, and the sectors' bytes not asked for;
-- op "ld" or "st" alone, both when nil.
local function global_waste(r, op)
  local req, sec, bytes = 0, 0, 0
  for _, o in ipairs(op and { op } or { "ld", "st" }) do
    req = req + num(r, G:format("requests", o))
    sec = sec + num(r, G:format("sectors", o))
    bytes = bytes + num(r, "ptx__bytes_requested_mem_global_op_" .. o .. ".sum")
  end
  return req, sec, bytes, math.max(0, sec * 32 - bytes)
end

local function conflicts(r)
  local req = num(r, "ptx__inst_executed_op_shared_ld.sum") + num(r, "ptx__inst_executed_op_shared_st.sum")
  local wf = num(r, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
    + num(r, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")
  local bc = num(r, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")
    + num(r, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum")
  return req, wf, bc
end

local COUNTER = {}
for _, n in ipairs(M.METRICS) do COUNTER[n] = true end

-- What is wrong with value v of metric k (where: "total.k"), or nil: a number, finite, and for
-- the counters emu writes a whole number from 0 to 2^53 (issue 36: 1e300 ended in a traceback).
local function bad_value(k, v, where)
  if type(v) ~= "number" then return string.format("%s is a %s, not a number", where, type(v)) end
  if v ~= v or v == math.huge or v == -math.huge then return string.format("%s is %s, not a finite number", where, v) end
  if COUNTER[k] and (v < 0 or v > 2 ^ 53 or v ~= math.floor(v)) then
    return string.format("%s is %.17g: a counter is a whole number from 0 to 2^53", where, v)
  end
end

-- Stall reasons: Nsight Compute's smsp__pcsamp_warps_issue_stalled_* names, warp-cycles each (emu
-- charges every cycle of a warp between two issues to one reason, at the instruction that made it
-- wait: docs/emu.md).  A line's `stalls` and the kernel's st.stalls hold them.
M.STALL_PREFIX = "smsp__pcsamp_warps_issue_stalled_"

local function stalls_problem(t)
  if type(t) ~= "table" then return "a " .. type(t) .. ", not an object" end
  for k, v in pairs(t) do
    if type(k) ~= "string" or type(v) ~= "number" or not (v >= 0 and v < math.huge) then
      return "not reason = warp-cycles"
    end
  end
end

-- The reasons of a stalls table, most warp-cycles first (ties by name): {{name=, short=, cycles=}}.
function M.top_stalls(t)
  local out, sum = {}, 0
  for k, v in pairs(t or {}) do
    if v > 0 then
      out[#out + 1] = { name = k, short = k:sub(#M.STALL_PREFIX + 1), cycles = v }
      sum = sum + v
    end
  end
  table.sort(out, function(a, b) if a.cycles ~= b.cycles then return a.cycles > b.cycles end return a.name < b.name end)
  for _, r in ipairs(out) do r.share = sum > 0 and r.cycles / sum or 0 end
  return out, sum
end

-- "long_scoreboard 80%, selected 12%, ..." (the first n reasons)
function M.stall_text(t, n)
  local top = M.top_stalls(t)
  local parts = {}
  for i = 1, math.min(n or 3, #top) do
    parts[#parts + 1] = string.format("%s %d%%", top[i].short, math.floor(100 * top[i].share + 0.5))
  end
  return table.concat(parts, ", ")
end

-- What is wrong with st as a run's stats ({total = {metric = number}, lines = {{line =, file =,
-- metric = number}, ...}}), or nil when nothing is.
function M.problem(st)
  if type(st) ~= "table" then return "a " .. type(st) .. ", not an object" end
  if type(st.total) ~= "table" then return "no total= object" end
  if type(st.lines) ~= "table" then return "no lines= list" end
  for k, v in pairs(st.total) do
    local why = bad_value(k, v, "total." .. tostring(k))
    if why then return why end
  end
  if st.stalls ~= nil then
    local why = stalls_problem(st.stalls)
    if why then return "stalls: " .. why end
  end
  for i, r in ipairs(st.lines) do
    if type(r) ~= "table" then return string.format("lines[%d] is a %s, not an object", i, type(r)) end
    if type(r.line) ~= "number" or r.line ~= math.floor(r.line) then return string.format("lines[%d] has no integer line=", i) end
    if r.file ~= nil and type(r.file) ~= "string" then return string.format("lines[%d].file is not a string", i) end
    for k, v in pairs(r) do
      if k == "ptx" then
        if type(v) ~= "boolean" then return string.format("lines[%d].ptx is not true or false", i) end
      elseif k == "stalls" then
        local why = stalls_problem(v)
        if why then return string.format("lines[%d].stalls: %s", i, why) end
      elseif k ~= "file" and k ~= "source" then
        local why = bad_value(k, v, string.format("lines[%d].%s", i, tostring(k)))
        if why then return why end
      end
    end
  end
end

-- The report as text (see the top of the file).  opts.top: rows per table (10).
function M.report(st, opts)
  opts = opts or {}
  local why = M.problem(st)
  if why then bad("stats.report: not a run's stats (run.stats from launch{stats = true}: total= and lines=): " .. why) end
  local top = opts.top or 10
  local t = st.total
  local out = {}
  local function add(s) out[#out + 1] = s end
  local inst, threads = num(t, "ptx__inst_executed.sum"), num(t, "ptx__thread_inst_executed.sum")
  add(string.format("%s: %s PTX warp instructions, %s threads each on average (of 32)", short_file(st.module), fmt(inst),
    inst > 0 and string.format("%.1f", threads / inst) or "-"))
  if num(t, M.LEFT_OUT) > 0 then
    add(string.format("(the user's code only: %s warp instructions the instrumentation added are left out)",
      fmt(num(t, M.LEFT_OUT))))
  end
  local req, sec, bytes = global_waste(t)
  if req > 0 then
    add(string.format("global: %s requests, %s sectors (%.1f a request), %s of the sectors' bytes asked for", fmt(req),
      fmt(sec), sec / req, pct(sec > 0 and bytes / (32 * sec) or 1)))
  end
  local sreq, swf, sbc = conflicts(t)
  if sreq > 0 then
    add(string.format("shared: %s requests, %s wavefronts, %s bank conflicts", fmt(sreq), fmt(swf), fmt(sbc)))
  end
  local lreq = num(t, "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum") + num(t, "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum")
  if lreq > 0 then
    add(string.format("local: %s requests, %s sectors (arrays the compiler put in local memory)", fmt(lreq),
      fmt(num(t, "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum") + num(t, "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum"))))
  end
  local atom = num(t, G:format("requests", "atom")) + num(t, G:format("requests", "red"))
    + num(t, "ptx__inst_executed_op_shared_atom.sum")
  if atom > 0 then add(string.format("atomics: %s requests", fmt(atom))) end
  local _, stall_sum = M.top_stalls(st.stalls)
  if stall_sum > 0 then
    add(string.format("warp-cycles: %s, by stall reason (smsp__pcsamp_warps_issue_stalled_*): %s", fmt(stall_sum),
      M.stall_text(st.stalls, 5)))
  end

  local function section(title, rows, head, cells)
    if #rows == 0 then return end
    add("")
    add(title)
    local body = {}
    for i = 1, math.min(top, #rows) do body[i] = cells(rows[i]) end
    local tbl = results.format_table(head, body)
    for line in tbl:gmatch("[^\n]+") do add("  " .. line) end
    if #rows > top then add(string.format("  ... %d more", #rows - top)) end
  end
  local waste, bank, hot = {}, {}, {}
  for _, r in ipairs(st.lines) do
    for _, op in ipairs({ "ld", "st" }) do -- a line's loads and stores apart: each its own row
      local rq, _, _, w = global_waste(r, op)
      if rq > 0 and w > 0 then waste[#waste + 1] = setmetatable({ op = op }, { __index = r }) end
    end
    local _, _, bc = conflicts(r)
    if bc > 0 then bank[#bank + 1] = r end
    if num(r, "ptx__inst_executed.sum") > 0 then hot[#hot + 1] = r end
  end
  local function by(f) return function(a, b) local x, y = f(a), f(b); if x ~= y then return x > y end
      if tostring(a.file) ~= tostring(b.file) then return tostring(a.file) < tostring(b.file) end
      return a.line < b.line end end
  table.sort(waste, function(a, b)
    local x, y = select(4, global_waste(a, a.op)), select(4, global_waste(b, b.op))
    if x ~= y then return x > y end
    if tostring(a.file) ~= tostring(b.file) then return tostring(a.file) < tostring(b.file) end
    if a.line ~= b.line then return a.line < b.line end
    return a.op < b.op
  end)
  table.sort(bank, by(function(r) return select(3, conflicts(r)) end))
  table.sort(hot, by(function(r) return num(r, "ptx__inst_executed.sum") end))
  section("global memory, worst coalescing first (bytes fetched in sectors and not asked for):", waste,
    { "line", "op", "requests", "sectors", "sectors/req", "used", "source" },
    function(r)
      local rq, sc, by_, _ = global_waste(r, r.op)
      return { where(r), r.op == "ld" and "load" or "store", fmt(rq), fmt(sc), string.format("%.1f", sc / rq),
        pct(sc > 0 and by_ / (32 * sc) or 1), src(r) }
    end)
  section("shared memory, most bank conflicts first:", bank,
    { "line", "requests", "wavefronts", "conflicts", "ways", "source" },
    function(r)
      local rq, wf, bc = conflicts(r)
      return { where(r), fmt(rq), fmt(wf), fmt(bc), string.format("%.1f", rq > 0 and wf / rq or 0), src(r) }
    end)
  local stalled = {}
  for _, r in ipairs(st.lines) do
    local _, sum = M.top_stalls(r.stalls)
    if sum > 0 then stalled[#stalled + 1] = setmetatable({ stall_sum = sum }, { __index = r }) end
  end
  table.sort(stalled, by(function(r) return r.stall_sum end))
  section("the lines where warps spend most cycles, by stall reason:", stalled,
    { "line", "warp-cycles", "top reasons", "source" },
    function(r) return { where(r), fmt(r.stall_sum), M.stall_text(r.stalls, 3), src(r) } end)
  section("the lines that run most instructions:", hot, { "line", "warp insts", "threads/inst", "source" },
    function(r)
      local n = num(r, "ptx__inst_executed.sum")
      return { where(r), fmt(n), string.format("%.1f", num(r, "ptx__thread_inst_executed.sum") / n), src(r) }
    end)
  return table.concat(out, "\n") .. "\n"
end

local function csv_cell(v)
  if v == nil then return "" end
  if type(v) == "number" then return fmt(v) end
  local s = tostring(v)
  if s:find('[,"\n]') then s = '"' .. s:gsub('"', '""') .. '"' end
  return s
end

-- PREFIX.stats.json and PREFIX.stats.csv; returns the two paths.
function M.write(prefix, st)
  local json = prefix .. ".stats.json"
  core.write_file(json, core.json_encode(st, true) .. "\n")
  local names = metric_names(st)
  local head = { "file", "line", "ptx", "source" }
  for _, n in ipairs(names) do head[#head + 1] = n end
  local lines = { table.concat(head, ",") }
  for _, r in ipairs(st.lines or {}) do
    local cells = { csv_cell(r.file), csv_cell(r.line), r.ptx and "1" or "0", csv_cell(r.source) }
    for _, n in ipairs(names) do cells[#cells + 1] = csv_cell(r[n] or 0) end
    lines[#lines + 1] = table.concat(cells, ",")
  end
  local csv = prefix .. ".stats.csv"
  core.write_file(csv, table.concat(lines, "\n") .. "\n")
  return json, csv
end

-- The totals alone (metric = value, the ratios too), for a results.jsonl row.
function M.totals(st)
  local t = {}
  for k, v in pairs(st.total or {}) do t[k] = v end
  return t
end

-- results.csv's columns for rows whose .stats holds totals: "stats.NAME", emu's order.
function M.csv_columns(rows)
  local present = {}
  for _, r in ipairs(rows or {}) do
    for k in pairs(r.stats or {}) do present[k] = true end
  end
  local cols, seen = {}, {}
  for _, n in ipairs(M.METRICS) do
    if present[n] then cols[#cols + 1] = "stats." .. n; seen[n] = true end
  end
  local rest = {}
  for n in pairs(present) do if not seen[n] then rest[#rest + 1] = n end end
  table.sort(rest)
  for _, n in ipairs(rest) do cols[#cols + 1] = "stats." .. n end
  return cols
end

function M.csv_values(row, cols)
  local v = {}
  for i, c in ipairs(cols) do v[i] = row.stats and row.stats[c:sub(7)] end
  return v
end

-- mgpu-harness stats FILE.stats.json [--top N]
function M.main(argv)
  local path, top = nil, 10
  local seen = {}
  local i = 1
  argv = argv or {}
  while i <= #argv do
    local a = argv[i]
    if a == "--top" then
      top = tonumber(options.arg("stats", a, argv[i + 1], seen))
      if not top or top < 1 or top ~= math.floor(top) then bad("stats: --top takes a number of rows, at least 1") end
      i = i + 1
    elseif a == "-h" or a == "--help" then
      print("usage: mgpu-harness stats FILE.stats.json [--top N]\n"
        .. "  prints emu's exact counters of a launch (launch{stats = true}, an experiment's point-N.stats.json):\n"
        .. "  the totals and the kernel's top stall reasons, then the lines that waste most global-memory sectors,\n"
        .. "  the lines with most shared-memory bank conflicts, the lines where warps spend most cycles (their top\n"
        .. "  stall reasons) and the lines that run most instructions (N rows each, 10 by default)")
      return 0
    elseif a:sub(1, 1) == "-" then
      bad("stats: unknown option " .. a .. " (--top N)")
    elseif path then
      bad("stats takes one FILE.stats.json")
    else
      path = options.arg("stats", "FILE.stats.json", a)
    end
    i = i + 1
  end
  if not path then bad("usage: mgpu-harness stats FILE.stats.json [--top N]") end
  local st = files.read_json(path)
  local why = M.problem(st)
  if why then -- a file that is not a stats file is bad input, as a results file is
    error(errors.new("bad_results", string.format("%s: not a stats file (point-N.stats.json, launch{stats = true}): %s",
      path, why)), 0)
  end
  io.write(M.report(st, { top = top }))
  return 0
end

return M
