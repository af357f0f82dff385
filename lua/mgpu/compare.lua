-- mgpu.compare: `mgpu-harness compare BASE NEW`, what changed between two
-- runs.  BASE and NEW are results folders of one experiment (points matched by
-- their axis values) or region summaries (point-N.summary.json, or what
-- `dump --summary-json` writes; regions matched by name).  A change counts as
-- a change only beyond the runs' noise: for launch times, the spread (max -
-- min) both runs showed; for region medians, nothing (they come from one
-- launch each; emu's virtual time has none).  --max-slowdown PCT makes the
-- exit status 9 when something got slower by more than PCT percent beyond
-- that noise, for a regression gate in CI; it then names the point (and the
-- regions that got slower there) or the region, and whether the kernel's source
-- changed between the runs (the manifests' sha256 of the module, the headers a
-- .cu included and the PTX nvcc made).
local errors = require "mgpu.errors"
local options = require "mgpu.options"
local files = require "mgpu.files"
local results = require "mgpu.results"

local M = {}

M.EXIT_SLOWER = 9

local function bad(msg) error(errors.new("bad_argument", msg), 0) end

local read_json = files.read_json

local function is_results_dir(path) return files.exists(path .. "/results.jsonl") end

-- "+12.3%" / "-4.0%" / "0%"; nil when either side is missing or base is 0.
local function change(a, b)
  if type(a) ~= "number" or type(b) ~= "number" or a == 0 then return nil end
  return (b - a) / a * 100
end

local function fmt_change(pct, noisy)
  if pct == nil then return "-" end
  local s = pct == 0 and "0%" or string.format("%+.1f%%", pct)
  return noisy and (s .. " (noise)") or s
end

-- Keeps the worst slowdown beyond noise (percent), for --max-slowdown, and what it was: at
-- (the point or region, with its numbers) and slower (the regions slower there).
local function worst(acc, pct, noisy, at, slower)
  if pct and not noisy and pct > acc.worst then
    acc.worst, acc.worst_at, acc.worst_regions = pct, at, slower
  end
end

local function short(sha) return type(sha) == "string" and sha:sub(1, 12) or "?" end

-- Whether the kernel's source differs between two manifests: a sentence, nil when neither
-- recorded a hash (a run of a summary, or written by hand).  What is compared: the module
-- (ptx[1]: the .ptx, or the .cu), the headers the .cu included (by path), the PTX nvcc made.
function M.source_change(man_a, man_b)
  local pa, pb = (man_a.ptx or {})[1], (man_b.ptx or {})[1]
  if not (pa and pa.sha256) or not (pb and pb.sha256) then return nil end
  local changed = {}
  if pa.sha256 ~= pb.sha256 then
    changed[#changed + 1] = string.format("module %s (sha256 %s... -> %s...)", pb.path, short(pa.sha256),
      short(pb.sha256))
  end
  local ha = {}
  for _, e in ipairs(man_a.headers or {}) do ha[e.path] = e.sha256 end
  for _, e in ipairs(man_b.headers or {}) do
    if ha[e.path] == nil then changed[#changed + 1] = "header " .. e.path .. " (new)"
    elseif ha[e.path] ~= e.sha256 then
      changed[#changed + 1] = string.format("header %s (sha256 %s... -> %s...)", e.path, short(ha[e.path]),
        short(e.sha256))
    end
    ha[e.path] = nil
  end
  for path in pairs(ha) do changed[#changed + 1] = "header " .. path .. " (no longer included)" end
  local ca, cb = man_a.compiled, man_b.compiled
  if #changed == 0 and type(ca) == "table" and type(cb) == "table" and ca.sha256 ~= cb.sha256 then
    changed[#changed + 1] = string.format("the PTX nvcc made of it (sha256 %s... -> %s...: another nvcc, arch or "
      .. "flags)", short(ca.sha256), short(cb.sha256))
  end
  -- compile-time axes: build N's PTX in each run (another nvcc, a header the hashes above miss)
  local ba, bb = man_a.builds, man_b.builds
  if #changed == 0 and type(ba) == "table" and type(bb) == "table" then
    for i, x in ipairs(ba) do
      local y = bb[i]
      if type(x) == "table" and type(y) == "table" and x.sha256 and y.sha256 and x.sha256 ~= y.sha256 then
        changed[#changed + 1] = string.format("build %d's PTX (sha256 %s... -> %s...: another nvcc or flags)", i,
          short(x.sha256), short(y.sha256))
      end
    end
  end
  -- the experiment script: its setup, launch shape and arguments (another grid, another size)
  local sa, sb = man_a.script, man_b.script
  local script = ""
  if type(sa) == "table" and type(sb) == "table" and sa.sha256 and sb.sha256 and sa.sha256 ~= sb.sha256 then
    script = string.format("; the experiment script changed: %s (sha256 %s... -> %s...: its setup, launch shape or "
      .. "arguments may differ)", tostring(sb.path), short(sa.sha256), short(sb.sha256))
  end
  if #changed == 0 then
    return string.format("the kernel's source is the same in both runs (%s, sha256 %s...)%s", pb.path, short(pb.sha256),
      script), script ~= ""
  end
  return "the kernel's source changed: " .. table.concat(changed, "; ") .. script, true
end

-- What compare reads is checked before it is used: a results file written by
-- hand or cut by a crash gets an error naming the file, the line and the field.
local function bad_results(where, what) error(errors.new("bad_results", where .. ": " .. what), 0) end

local check_numbers, check_regions = results.check_numbers, results.check_regions

-- A folder's rows: results.rows, the one reader (a torn last line, a bad row: a bad_results
-- naming file:line, not a row silently dropped).
local function read_rows(dir)
  return results.rows(dir)
end

local function axis_names(man, path)
  local names = {}
  if man.axes ~= nil and type(man.axes) ~= "table" then bad_results(path, "axes must be a list") end
  for i, g in ipairs(man.axes or {}) do
    if type(g) ~= "table" or type(g.names) ~= "table" then bad_results(path, string.format("axes[%d] has no names", i)) end
    for _, n in ipairs(g.names) do
      if type(n) ~= "string" then bad_results(path, string.format("axes[%d]: a name that is not a string", i)) end
      names[#names + 1] = n
    end
  end
  return names
end

-- A comparison's result: its title and table, the worst slowdown, the counts.
local function finish(title, head, acc, source)
  return { title = title, table = results.format_table(head, acc.body), worst = acc.worst, matched = acc.matched,
    only_base = acc.only_base, only_new = acc.only_new, worst_at = acc.worst_at, worst_regions = acc.worst_regions,
    source = source, regressed = acc.regressed or 0 }
end

-- Two results folders: one line per point, by key.
function M.folders(base, new)
  local man_a, man_b = read_json(base .. "/manifest.json"), read_json(new .. "/manifest.json")
  if man_a.experiment ~= man_b.experiment then
    bad(string.format("%s is experiment %s, %s is %s: compare runs of one experiment", base,
      tostring(man_a.experiment), new, tostring(man_b.experiment)))
  end
  local names = axis_names(man_a, base .. "/manifest.json")
  axis_names(man_b, new .. "/manifest.json")
  local rows_a, rows_b = read_rows(base), read_rows(new)
  local by_key = {}
  for _, r in ipairs(rows_b) do by_key[r.key] = r end
  local head = { "#" }
  for _, n in ipairs(names) do head[#head + 1] = n end
  local instrumented = false -- an instrumented run: time_ns is the plain kernel's, the overhead beside it
  for _, rows in ipairs({ rows_a, rows_b }) do
    for _, r in ipairs(rows) do if r.overhead then instrumented = true end end
  end
  for _, c in ipairs({ "base", "new", "change" }) do head[#head + 1] = c end
  if instrumented then head[#head + 1] = "overhead" end
  head[#head + 1] = "regions (median change)"
  -- the overhead cell: "x1.60 -> x1.72", "-" when neither row has one
  local function overhead(a, b)
    if not instrumented then return nil end
    if not (a and a.overhead) and not (b and b.overhead) then return "-" end
    return results.fmt_overhead(a and a.overhead) .. " -> " .. results.fmt_overhead(b and b.overhead)
  end
  local function add(line, cells)
    for i = 1, 3 do line[#line + 1] = cells[i] end
    if instrumented then line[#line + 1] = cells[5] or "-" end
    line[#line + 1] = cells[4]
  end
  local acc = { worst = -math.huge, body = {}, matched = 0, only_base = 0, only_new = 0, regressed = 0 }
  local seen = {}
  for _, a in ipairs(rows_a) do
    local b = by_key[a.key]
    seen[a.key] = true
    local line = { tostring(a.index) }
    for _, n in ipairs(names) do line[#line + 1] = tostring(a.point and a.point[n]) end
    if not b then
      acc.only_base = acc.only_base + 1
      add(line, { results.fmt_ns(a.time_ns and a.time_ns.median, "ns"), "-", "-", "not in the new run" })
    elseif a.status ~= "ok" or b.status ~= "ok" then
      acc.matched = acc.matched + 1
      if a.status == "ok" then acc.regressed = acc.regressed + 1 end -- ok in BASE, not in NEW: the gate fails
      add(line, { a.status, b.status, "-", (b.error and b.error.message or a.error and a.error.message or ""):sub(1, 60) })
    else
      acc.matched = acc.matched + 1
      local ta, tb = a.time_ns or {}, b.time_ns or {}
      local pct = change(ta.median, tb.median)
      local noise = (ta.max or 0) - (ta.min or 0) + (tb.max or 0) - (tb.min or 0)
      local noisy = pct ~= nil and pct ~= 0 and math.abs(tb.median - ta.median) <= noise
      local cells = { results.fmt_ns(ta.median, "ns"), results.fmt_ns(tb.median, "ns"), fmt_change(pct, noisy) }
      local regs, by_name, slower = {}, {}, {}
      for _, g in ipairs(b.regions or {}) do by_name[g.name] = g end
      for _, g in ipairs(a.regions or {}) do
        local h = by_name[g.name]
        if a.unit ~= b.unit then
          regs[#regs + 1] = g.name .. " (units differ)"
        elseif h then
          local rp = change(g.median, h.median)
          regs[#regs + 1] = g.name .. " " .. fmt_change(rp)
          if rp and rp > 0 then slower[#slower + 1] = { name = g.name, pct = rp, a = g.median, b = h.median, unit = a.unit } end
        else
          regs[#regs + 1] = g.name .. " gone"
        end
      end
      table.sort(slower, function(x, y) return x.pct > y.pct end)
      local label = { string.format("point %s", tostring(a.index)) }
      local axes_of = {}
      for _, n in ipairs(names) do axes_of[#axes_of + 1] = n .. "=" .. tostring(a.point and a.point[n]) end
      if #axes_of > 0 then label[#label + 1] = "(" .. table.concat(axes_of, ", ") .. ")" end
      worst(acc, pct, noisy, string.format("%s: %s -> %s (%s)", table.concat(label, " "), cells[1], cells[2],
        fmt_change(pct)), slower)
      cells[4], cells[5] = table.concat(regs, ", "), overhead(a, b)
      add(line, cells)
    end
    acc.body[#acc.body + 1] = line
  end
  for _, b in ipairs(rows_b) do
    if not seen[b.key] then
      acc.only_new = acc.only_new + 1
      local line = { "new" }
      for _, n in ipairs(names) do line[#line + 1] = tostring(b.point and b.point[n]) end
      add(line, { "-", results.fmt_ns(b.time_ns and b.time_ns.median, "ns"), "-", "not in the base run" })
      acc.body[#acc.body + 1] = line
    end
  end
  local title = string.format("%s: %s (%s) -> %s (%s)", tostring(man_a.experiment), base, tostring(man_a.backend), new,
    tostring(man_b.backend))
  if man_a.backend ~= man_b.backend or man_a.device ~= man_b.device then
    title = title .. string.format("\nnote: different devices (%s, %s): times are not comparable",
      tostring(man_a.device), tostring(man_b.device))
  end
  local source, changed = M.source_change(man_a, man_b)
  if changed then title = title .. "\nnote: " .. source end
  return finish(title, head, acc, source or "the manifests record no source hashes")
end

-- Two region summaries: one line per region name.
function M.summaries(base, new)
  for _, f in ipairs({ base, new }) do -- a run's results file is one JSON value a line: its folder is what compares
    if f:match("results%.jsonl$") or f:match("manifest%.json$") then
      bad(string.format("%s is a file of a results folder: give the folder (%s)", f, f:match("^(.*)/[^/]*$") or "."))
    end
  end
  local a, b = read_json(base), read_json(new)
  for _, s in ipairs({ { a, base }, { b, new } }) do
    if type(s[1]) ~= "table" or type(s[1].regions) ~= "table" then
      bad(s[2] .. ": not a results folder (no results.jsonl) nor a region summary (no \"regions\")")
    end
  end
  if a.unit ~= b.unit then bad(string.format("%s is in %s, %s in %s", base, tostring(a.unit), new, tostring(b.unit))) end
  for _, s in ipairs({ { a, base }, { b, new } }) do
    check_regions(s[1].regions, s[2])
    check_numbers(s[1].timeline, { "span", "sms", "sm_done_max" }, s[2], "timeline")
  end
  local unit = a.unit
  local head = { "region", "count", "base median", "new median", "change", "mean change", "p99 change", "in flight" }
  local acc = { worst = -math.huge, body = {}, matched = 0, only_base = 0, only_new = 0 }
  local by_name, seen = {}, {}
  for _, g in ipairs(b.regions) do by_name[g.name] = g end
  for _, g in ipairs(a.regions) do
    local h = by_name[g.name]
    seen[g.name] = true
    if h then
      acc.matched = acc.matched + 1
      local pct = change(g.median, h.median)
      worst(acc, pct, false, string.format("region %s: median %s -> %s (%s)", g.name, results.fmt_ns(g.median, unit),
        results.fmt_ns(h.median, unit), fmt_change(pct)))
      local count = g.count == h.count and tostring(g.count) or (g.count .. " -> " .. h.count)
      local live = (g.concurrency and h.concurrency) and string.format("%.2f -> %.2f", g.concurrency, h.concurrency) or "-"
      acc.body[#acc.body + 1] = { g.name, count, results.fmt_ns(g.median, unit), results.fmt_ns(h.median, unit),
        fmt_change(pct), fmt_change(change(g.mean, h.mean)), fmt_change(change(g.p99, h.p99)), live }
    else
      acc.only_base = acc.only_base + 1
      acc.body[#acc.body + 1] = { g.name, tostring(g.count), results.fmt_ns(g.median, unit), "-", "gone", "", "", "" }
    end
  end
  for _, h in ipairs(b.regions) do
    if not seen[h.name] then
      acc.only_new = acc.only_new + 1
      acc.body[#acc.body + 1] = { h.name, tostring(h.count), "-", results.fmt_ns(h.median, unit), "new", "", "", "" }
    end
  end
  local title = string.format("regions: %s -> %s (%s)", base, new, tostring(unit))
  local ta, tb = a.timeline, b.timeline
  if type(ta) == "table" and type(tb) == "table" then
    local pct = change(ta.span, tb.span)
    worst(acc, pct, false, string.format("the kernel's span: %s -> %s (%s)", results.fmt_ns(ta.span, unit),
      results.fmt_ns(tb.span, unit), fmt_change(pct)))
    title = title .. string.format("\nspan %s -> %s (%s); SMs %s -> %s; last SM done %s -> %s",
      results.fmt_ns(ta.span, unit), results.fmt_ns(tb.span, unit), fmt_change(pct), tostring(ta.sms),
      tostring(tb.sms), results.fmt_ns(ta.sm_done_max, unit), results.fmt_ns(tb.sm_done_max, unit))
  end
  return finish(title, head, acc)
end

-- Either kind, by what BASE is.
function M.compare(base, new)
  local da, db = is_results_dir(base), is_results_dir(new)
  if da ~= db then bad(string.format("compare two results folders or two summaries, not %s and %s", base, new)) end
  return da and M.folders(base, new) or M.summaries(base, new)
end

-- What got slower, for the gate's message: the worst point (or region), the regions slower
-- there, whether the kernel's source changed.
function M.slowdown_detail(r)
  local lines = { "  worst: " .. tostring(r.worst_at) }
  if r.worst_regions then
    local regs = {}
    for i, g in ipairs(r.worst_regions) do
      if i > 5 then break end
      regs[#regs + 1] = string.format("%s %s (median %s -> %s)", g.name, fmt_change(g.pct), results.fmt_ns(g.a, g.unit),
        results.fmt_ns(g.b, g.unit))
    end
    lines[#lines + 1] = "  regions slower there: " .. (#regs > 0 and table.concat(regs, ", ") or "none")
  end
  if r.source then lines[#lines + 1] = "  " .. r.source end
  return table.concat(lines, "\n")
end

-- The gate's verdict on a comparison r (M.compare's result), for the terminal and the report's
-- comparison page: {fails = whether --max-slowdown max_slowdown fails (nil without one),
-- threshold = the least PCT that passes (nil: none does), lines = {...}}.  It fails when a
-- launch time beyond its noise, a region median or the span grew by more than PCT percent, or a
-- point ok in BASE failed in NEW or is not in it (then at any PCT).
function M.verdict(r, max_slowdown)
  local lines = {}
  local broken = (r.regressed or 0) + (r.only_base or 0)
  local worst = r.worst ~= -math.huge and r.worst or nil
  local threshold = broken == 0 and math.max(worst or 0, 0) or nil
  if worst and worst > 0 then
    lines[#lines + 1] = string.format("slowest change beyond the noise: %s", fmt_change(worst))
    lines[#lines + 1] = "worst: " .. tostring(r.worst_at)
  else
    lines[#lines + 1] = "nothing got slower beyond the noise"
  end
  if broken > 0 then
    lines[#lines + 1] = string.format("%d point%s ok in base failed in new, %d point%s of base not in new: the gate "
      .. "fails at any --max-slowdown", r.regressed or 0, (r.regressed or 0) == 1 and "" or "s", r.only_base or 0,
      (r.only_base or 0) == 1 and "" or "s")
  else
    lines[#lines + 1] = string.format("compare --max-slowdown PCT passes for PCT >= %.1f and fails below", threshold)
  end
  if r.source then lines[#lines + 1] = r.source end
  local fails = nil
  if max_slowdown then fails = (worst ~= nil and worst > max_slowdown) or broken > 0 end
  return { fails = fails, threshold = threshold, lines = lines }
end

local USAGE_TEXT = "usage: mgpu-harness compare BASE NEW [--max-slowdown PCT]\n"
  .. "  BASE, NEW: two results folders of one experiment, or two region summaries (.summary.json)"

-- `mgpu-harness compare BASE NEW [--max-slowdown PCT]` -> exit status
function M.main(argv)
  local paths, max_slowdown = {}, nil
  local seen = {}
  local i = 1
  while i <= #(argv or {}) do
    local a = argv[i]
    if a == "--max-slowdown" then
      i = i + 1
      local v = options.arg("compare", a, argv[i], seen)
      -- a decimal percentage, with an exponent or not (1e3): tonumber alone also took 0x10 and 1e400 (inf)
      local mant, ex = v:match("^([%d.]+)(.*)$")
      local decimal = mant and (mant:match("^%d+%.?%d*$") or mant:match("^%.%d+$")) and (ex == "" or ex:match("^[eE][+-]?%d+$"))
      max_slowdown = decimal and tonumber(v) or nil
      if not max_slowdown or max_slowdown < 0 or max_slowdown == math.huge then
        bad("--max-slowdown takes a percentage (0 or more), not " .. tostring(argv[i]) .. "\n" .. USAGE_TEXT)
      end
    elseif a:sub(1, 1) == "-" then
      bad("compare: unknown option " .. a .. "\n" .. USAGE_TEXT)
    else
      paths[#paths + 1] = options.arg("compare", #paths == 0 and "BASE" or "NEW", a)
    end
    i = i + 1
  end
  if #paths ~= 2 then bad(USAGE_TEXT) end
  local r = M.compare(paths[1], paths[2])
  print(r.title)
  print(r.table)
  local extra = ""
  if r.only_base > 0 then extra = extra .. string.format(", %d only in base", r.only_base) end
  if r.only_new > 0 then extra = extra .. string.format(", %d only in new", r.only_new) end
  print(string.format("%d compared%s", r.matched, extra))
  if max_slowdown and r.worst > max_slowdown then
    print(string.format("slower by %.1f%%, more than --max-slowdown %g%%", r.worst, max_slowdown))
    print(M.slowdown_detail(r))
    return M.EXIT_SLOWER
  end
  -- the gate also fails on what it cannot call not slower: points ok in BASE that failed in NEW or
  -- are not in it (a gate that passed them let a broken or partial run through)
  if max_slowdown and (r.regressed > 0 or r.only_base > 0) then
    print(string.format("--max-slowdown %g%%: %d point%s ok in base failed in new, %d point%s of base not in new",
      max_slowdown, r.regressed, r.regressed == 1 and "" or "s", r.only_base, r.only_base == 1 and "" or "s"))
    if r.source then print("  " .. r.source) end
    return M.EXIT_SLOWER
  end
  return 0
end

return M
