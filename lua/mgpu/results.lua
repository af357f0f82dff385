-- mgpu.results: a run's results folder.  results.jsonl gets one line per
-- point, appended and flushed as each point finishes (so an interrupted run
-- keeps every finished point); results.csv and the summary table are made
-- from those lines (results.csv is rebuilt from the whole file at the end of
-- every run); manifest.json says how to repeat the run.  Every file but
-- the jsonl is written atomically (temporary file, then rename).
local core = require "mgpu.core"
local errors = require "mgpu.errors"
local files = require "mgpu.files"

local M = {}

local function bad_results(msg) error(errors.new("bad_results", msg), 0) end

-- The files the harness writes in a results folder: a folder holding one that no run of the
-- harness wrote (no manifest.json beside it) is refused, never overwritten (issue 36).
local OWN = { "^manifest%.json$", "^results%.jsonl$", "^results%.jsonl%.torn$", "^results%.csv$",
  "^point%-%d+%.trace%.json$", "^point%-%d+%.summary%.json$", "^point%-%d+%.stats%.json$", "^point%-%d+%.stats%.csv$" }

-- The first name (in sorted order) of a file in folder dir that the harness would write there, or nil.
function M.harness_file(dir)
  local names = core.list_dir(dir) or {}
  table.sort(names)
  for _, n in ipairs(names) do
    for _, p in ipairs(OWN) do if n:match(p) then return n end end
  end
end

-- The rows of a results.jsonl, the line each came from, and its torn last
-- line if it has one.  The runner writes each line in one write ending with
-- its newline, so a last line without a newline, or one that is not a JSON
-- object, was cut short by a crash mid-write: it is returned as torn =
-- {line=, text=, offset= (bytes before it), reason=}, not as a row.  A line
-- before the last that is not a JSON object is no crash's doing: a
-- bad_results naming file:line.  A missing file has no rows.
function M.read_jsonl(path)
  local rows, lines = {}, {}
  local s = files.read(path)
  if not s then return rows, lines end
  local n, pos, torn = 0, 1, nil
  while pos <= #s do
    local nl = s:find("\n", pos, true)
    local line = s:sub(pos, (nl or #s + 1) - 1)
    n = n + 1
    if line ~= "" then
      local ok, row = pcall(core.json_decode, line, path)
      local object = ok and type(row) == "table"
      local last = nl == nil or nl == #s
      if object and nl then
        rows[#rows + 1] = row
        lines[#rows] = n
      elseif last then
        torn = { line = n, text = line, offset = pos - 1,
          reason = not nl and "it has no newline at its end" or "it is not a JSON object" }
      else
        local why = ok and ("a " .. type(row)) or tostring(row.message or row):gsub("^.-invalid JSON at line %d+, ", "")
        bad_results(string.format("%s:%d: not a JSON object (a result row): %s", path, n, why))
      end
    end
    if not nl then break end
    pos = nl + 1
  end
  return rows, lines, torn
end

-- What a torn line is, for messages: "results.jsonl:7 is torn (it has no newline at its end, 53 bytes)".
function M.torn_text(path, torn)
  return string.format("%s:%d is torn (%s, %d bytes): a crash cut it short while it was written", path, torn.line,
    torn.reason, #torn.text)
end

-- The rows of a results.jsonl for a reader that must not guess (compare,
-- replay): a torn last line is a bad_results naming file:line.
function M.read_rows(path)
  local rows, lines, torn = M.read_jsonl(path)
  if torn then
    bad_results(M.torn_text(path, torn) .. "; `mgpu-harness SCRIPT --resume " .. files.dirname(path)
      .. "` sets it aside and runs its point again")
  end
  return rows, lines
end

-- Sets a torn last line aside: appended to results.jsonl.torn (what was
-- there stays), then results.jsonl rewritten without it (atomically).
-- Returns the file the line went to.
function M.set_aside(dir, torn)
  local path = dir .. "/results.jsonl"
  local s = files.read_or_fail(path)
  core.append_line(path .. ".torn", torn.text)
  core.write_file(path, s:sub(1, torn.offset))
  return path .. ".torn"
end

-- The checks of every reader of results rows (compare, merge, replay, report, resume, the
-- end of a run): a row written by hand or by something else gets a bad_results naming the
-- file, the line and the field, never a traceback or a row silently used.
local function bad_row(where, what) bad_results(where .. ": " .. what) end

local function check_numbers(t, keys, where, what)
  if t == nil then return end
  if type(t) ~= "table" then bad_row(where, what .. " must be an object") end
  for _, k in ipairs(keys) do
    if t[k] ~= nil and type(t[k]) ~= "number" then bad_row(where, string.format("%s.%s must be a number", what, k)) end
  end
end

local function check_regions(regions, where)
  if regions == nil then return end
  if type(regions) ~= "table" then bad_row(where, "regions must be a list") end
  for i, g in ipairs(regions) do
    if type(g) ~= "table" or type(g.name) ~= "string" then bad_row(where, string.format("region %d has no name", i)) end
    check_numbers(g, { "count", "mean", "median", "p99", "concurrency" }, where, "region " .. g.name)
  end
end

M.check_numbers, M.check_regions = check_numbers, check_regions

-- Checks rows (from path, read at lines[i]) as the runner writes them: a point's key, a
-- status, the fields' types; with the folder's manifest man, an index that names that key in
-- man.point_keys (without, an index is an integer where there is one); and no row of a point after its ok row (a resume never runs an ok
-- point again: such a line was copied or written by hand).  Returns rows.
function M.check_rows(path, rows, lines, man)
  local keys = man and type(man.point_keys) == "table" and man.point_keys or nil
  local ok_at = {}
  for i, r in ipairs(rows) do
    local where = string.format("%s:%d", path, lines and lines[i] or i)
    if type(r.key) ~= "string" then bad_row(where, "a result row needs its point's key") end
    if type(r.status) ~= "string" then bad_row(where, "a result row needs a status") end
    if (r.index ~= nil or keys) and (type(r.index) ~= "number" or r.index ~= math.floor(r.index) or r.index < 1) then
      bad_row(where, "a result row needs its point's index (an integer from 1), got " .. tostring(r.index))
    end
    if keys and (r.index > #keys or keys[r.index] ~= r.key) then
      bad_row(where, string.format("index %d and key %s are not a point of this folder's manifest (%d points%s)",
        r.index, r.key, #keys, keys[r.index] and (", point " .. r.index .. " is " .. tostring(keys[r.index])) or ""))
    end
    if r.point ~= nil and type(r.point) ~= "table" then bad_row(where, "point must be an object") end
    if r.error ~= nil and (type(r.error) ~= "table" or type(r.error.message) ~= "string") then
      bad_row(where, "error must be an object with a message")
    end
    check_numbers(r.time_ns, { "min", "median", "max" }, where, "time_ns")
    check_numbers(r.instrumented_time_ns, { "min", "median", "max" }, where, "instrumented_time_ns")
    for _, f in ipairs({ "overhead", "bytes", "flops", "gbps", "gflops" }) do
      if r[f] ~= nil and type(r[f]) ~= "number" then bad_row(where, f .. " must be a number") end
    end
    check_regions(r.regions, where)
    if ok_at[r.key] then
      bad_row(where, string.format("a second row of point %s after its ok row at line %d (a run never writes one)",
        r.key, ok_at[r.key]))
    end
    if r.status == "ok" then ok_at[r.key] = lines and lines[i] or i end
  end
  return rows
end

-- The one reader of a results folder's rows: results.jsonl read (a torn last line is a
-- bad_results), checked (M.check_rows, against the manifest man when given) and reduced to the
-- latest row of each point, in point order.
function M.rows(dir, man)
  local path = dir .. "/results.jsonl"
  local rows, lines = M.read_rows(path)
  return M.latest(M.check_rows(path, rows, lines, man))
end

function M.append(dir, row)
  core.append_line(dir .. "/results.jsonl", core.json_encode(row))
end

local function csv_cell(v)
  if v == nil then return "" end
  local s = tostring(v)
  if s:find('[,"\n]') then s = '"' .. s:gsub('"', '""') .. '"' end
  return s
end

-- The latest row for each point key, in point order (rows without a key, which
-- the runner never writes, are left out: --resume runs their point again).
function M.latest(rows)
  local by_key, order = {}, {}
  for _, r in ipairs(rows) do
    if type(r.key) == "string" then
      if not by_key[r.key] then order[#order + 1] = r.key end
      by_key[r.key] = r
    end
  end
  local out = {}
  for _, k in ipairs(order) do out[#out + 1] = by_key[k] end
  local function index(r) return type(r.index) == "number" and r.index or 0 end
  table.sort(out, function(a, b) return index(a) < index(b) end)
  return out
end

-- The region statistics that become columns, per region name.
local REGION_STATS = { "count", "mean", "median", "p99", "max", "truncated", "concurrency" }

-- Region names over all rows, in order of first appearance (a sweep's points
-- may record different regions: a point without one leaves its cells empty).
local function region_names(rows)
  local seen, out = {}, {}
  for _, r in ipairs(rows) do
    for _, g in ipairs(r.regions or {}) do
      if not seen[g.name] then seen[g.name] = true; out[#out + 1] = g.name end
    end
  end
  return out
end

-- One row per point: the axes, the status, the launch times, the trace's
-- timeline (span, SMs, when the median and the last SM finished), then for
-- each region name its count, mean, median, p99, max, truncated count and
-- concurrency (columns "load.median" ...; the unit, ns or cycles, in
-- region_unit), so a sweep plots straight from the file.
function M.write_csv(dir, axis_names, rows)
  local cols = { "index" }
  for _, n in ipairs(axis_names) do cols[#cols + 1] = n end
  local fixed = { "status", "error_code", "error", "time_ns_min", "time_ns_median", "time_ns_mean",
    "time_ns_stddev", "instrumented_time_ns_median", "overhead", "bytes", "flops", "gbps", "gflops", "cycles",
    "thread_insns", "entries", "attempts", "trace", "time_n", "time_noise_pct", "time_stop", "timing", "time_kind" }
  for _, c in ipairs(fixed) do cols[#cols + 1] = c end
  local regions = region_names(rows)
  if #regions > 0 then
    for _, c in ipairs({ "region_unit", "span", "sms", "sm_done_median", "sm_done_max" }) do cols[#cols + 1] = c end
  end
  for _, name in ipairs(regions) do
    for _, stat in ipairs(REGION_STATS) do cols[#cols + 1] = name .. "." .. stat end
  end
  local stats = require "mgpu.stats"   -- emu's exact counters (experiment stats = true): "stats.NAME"
  local stat_cols = stats.csv_columns(rows)
  for _, c in ipairs(stat_cols) do cols[#cols + 1] = c end
  local head = {}
  for i = 1, #cols do head[i] = csv_cell(cols[i]) end
  local lines = { table.concat(head, ",") }
  for _, r in ipairs(rows) do
    local t = r.time_ns or {}
    local v, k = { r.index }, 1 -- explicit positions: values may be nil
    for _, n in ipairs(axis_names) do k = k + 1; v[k] = r.point and r.point[n] end
    local rest = { r.status, r.error and r.error.code, r.error and r.error.message, t.min, t.median, t.mean, t.stddev,
      r.instrumented_time_ns and r.instrumented_time_ns.median, r.overhead, r.bytes, r.flops, r.gbps, r.gflops,
      r.cycles, r.thread_insns, r.entries, r.attempts and #r.attempts or 0, r.trace,
      -- how the timing ended (issue 35): launches measured, noise (relative stddev, %), the rule that
      -- stopped it, hot or cold, and whether the times and rates are virtual (emu) or measured
      t.n, t.noise, t.stop, t.mode, r.time_ns and (r.time_kind or "measured") or nil }
    for j = 1, #fixed do v[k + j] = rest[j] end
    k = k + #fixed
    if #regions > 0 then
      local tl = r.timeline or {}
      v[k + 1], v[k + 2], v[k + 3], v[k + 4], v[k + 5] = r.regions and r.unit, tl.span, tl.sms, tl.sm_done_median,
        tl.sm_done_max
      k = k + 5
      local by_name = {}
      for _, g in ipairs(r.regions or {}) do by_name[g.name] = g end
      for _, name in ipairs(regions) do
        local g = by_name[name]
        for _, stat in ipairs(REGION_STATS) do k = k + 1; v[k] = g and g[stat] end
      end
    end
    for j, x in ipairs(stats.csv_values(r, stat_cols)) do v[k + j] = x end
    k = k + #stat_cols
    local cells = {}
    for i = 1, #cols do cells[i] = csv_cell(v[i]) end
    lines[#lines + 1] = table.concat(cells, ",")
  end
  core.write_file(dir .. "/results.csv", table.concat(lines, "\n") .. "\n")
end

-- "812 ns", "1.25 us", "3.10 ms" for ns; a plain integer for cycles.
local function fmt_ns(v, unit)
  if v == nil then return "-" end
  if unit ~= "ns" then return string.format("%.0f", v) end
  if v < 1e3 then return string.format("%.0f ns", v) end
  if v < 1e6 then return string.format("%.2f us", v / 1e3) end
  return string.format("%.2f ms", v / 1e6)
end

M.fmt_ns = fmt_ns

-- "x1.85" (instrumented / plain median), "-" without
function M.fmt_overhead(v) return type(v) == "number" and string.format("x%.2f", v) or "-" end

-- "412.3 GB/s", "1.25 TB/s" (bytes / ns); "GFLOP/s" for unit "FLOP"; "-" without
function M.fmt_rate(v, unit)
  if type(v) ~= "number" then return "-" end
  unit = unit or "B"
  if v >= 1000 then return string.format("%.2f T%s/s", v / 1000, unit) end
  if v >= 1 then return string.format("%.1f G%s/s", v, unit) end
  return string.format("%.1f M%s/s", v * 1000, unit)
end

-- A table for the terminal: one line per point (the plain kernel's time, and
-- beside it the instrumented one's and the overhead when the kernel was instrumented).
function M.table(axis_names, rows, time_label)
  local head = { "#" }
  local instrumented, gbps, gflops, noise = false, false, false, false
  for _, r in ipairs(rows) do
    if r.instrumented_time_ns then instrumented = true end
    if r.time_ns and r.time_ns.stop and r.time_ns.stop ~= "repeats" then noise = true end
    if r.gbps then gbps = true end
    if r.gflops then gflops = true end
  end
  for _, n in ipairs(axis_names) do head[#head + 1] = n end
  head[#head + 1] = "status"
  head[#head + 1] = time_label or "time"
  -- emu's rates are over virtual times: named as its time column is (issue 35)
  local virtual = time_label and time_label:match("^emu ") and "emu " or ""
  if noise then head[#head + 1] = "noise (n, stop)" end
  if instrumented then head[#head + 1] = "instrumented"; head[#head + 1] = "overhead" end
  if gbps then head[#head + 1] = virtual .. "GB/s" end
  if gflops then head[#head + 1] = virtual .. "GFLOP/s" end
  for _, c in ipairs({ "entries", "regions (mean)" }) do head[#head + 1] = c end
  local body = {}
  for _, r in ipairs(rows) do
    local line = { tostring(r.index) }
    for _, n in ipairs(axis_names) do line[#line + 1] = tostring(r.point and r.point[n]) end
    line[#line + 1] = r.status == "ok" and "ok" or (r.status .. (r.error and (" " .. r.error.code) or ""))
    line[#line + 1] = r.time_ns and fmt_ns(r.time_ns.median, "ns") or "-"
    if noise then
      local t = r.time_ns
      line[#line + 1] = t and t.noise and string.format("%.2f%% (%s, %s)", t.noise, tostring(t.n), tostring(t.stop)) or "-"
    end
    if instrumented then
      line[#line + 1] = r.instrumented_time_ns and fmt_ns(r.instrumented_time_ns.median, "ns") or "-"
      line[#line + 1] = M.fmt_overhead(r.overhead)
    end
    if gbps then line[#line + 1] = r.gbps and string.format("%.1f", r.gbps) or "-" end
    if gflops then line[#line + 1] = r.gflops and string.format("%.1f", r.gflops) or "-" end
    local tries = r.attempts and #r.attempts or 0
    line[#line + 1] = r.entries and (tostring(r.entries) .. (tries > 1 and (" (" .. tries .. " tries)") or "")) or "-"
    local regs = {}
    for _, g in ipairs(r.regions or {}) do regs[#regs + 1] = g.name .. " " .. fmt_ns(g.mean, r.unit) end
    -- a failed point: its error's whole first line (a fault names FILE.cu:LINE and the PTX line first)
    line[#line + 1] = #regs > 0 and table.concat(regs, ", ") or (r.error and r.error.message:match("[^\n]*") or "")
    body[#body + 1] = line
  end
  return M.format_table(head, body)
end

-- Aligned columns, two spaces apart; the last column is not padded.
function M.format_table(head, body)
  local width = {}
  for i, h in ipairs(head) do width[i] = #h end
  for _, line in ipairs(body) do
    for i, c in ipairs(line) do if i < #line and #c > (width[i] or 0) then width[i] = #c end end
  end
  local out = {}
  local function row(cells)
    local parts = {}
    for i, c in ipairs(cells) do
      parts[i] = i < #cells and (c .. string.rep(" ", width[i] - #c)) or c
    end
    out[#out + 1] = table.concat(parts, "  ")
  end
  row(head)
  for _, line in ipairs(body) do row(line) end
  return table.concat(out, "\n")
end

return M
