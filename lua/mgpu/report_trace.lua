-- mgpu.report_trace: reads a Chrome trace (`point-N.trace.json`, `dump -o`)
-- for `mgpu-harness report` in one streaming pass, keeping only what the
-- figures draw, so an 8.65 M-event trace needs neither its 500 MB in memory
-- nor a decoded event tree:
--   * per trace (lane): its regions as runs, merged below a pixel's width
--     (consecutive regions at one depth whose gap and width are under the
--     time a pixel stands for become one run, drawn in the colour of the
--     region that took most of its time, its title counting them), and
--     merged further when the lanes together would draw more than BUDGET
--     runs (each lane gets BUDGET / lanes);
--   * per region name: count, total, min, max, truncated, and the durations
--     on a quantized scale (exact below 1024 units, within 0.1% above), from
--     which the histogram and, without a summary, the median and p99 come;
--   * per name, "in flight" in BINS slices of the span (the mean number of
--     traces inside the region in each slice, as `dump --counters` has it);
--   * per SM (process), when its last event was.
-- The harness's default dump writes one event per line, which is read with
-- one pattern per line; other layouts (Mosaic-compatible dumps, hand-written
-- traces) with a tolerant pattern, and what neither reads is decoded whole
-- (small files only).  A torn file (no end of the event list) or regions that
-- do not nest are a bad_trace naming the file.
local core = require "mgpu.core"
local errors = require "mgpu.errors"
local files = require "mgpu.files"

local M = {}

M.BUDGET = 40000    -- runs drawn over all lanes together
M.WIDTH = 1000      -- the timeline's plot width in px: what "a pixel" is
M.BINS = 300        -- slices of the span for the in-flight areas
M.MAX_DEPTH = 3     -- nesting levels drawn (deeper regions are counted, drawn at this level)

local floor, max, min, huge, abs = math.floor, math.max, math.min, math.huge, math.abs
local tonumber, fmt = tonumber, string.format
local CHUNK = 4194304

local function bad_trace(path, msg) error(errors.new("bad_trace", path .. ": " .. msg, { path = path }), 0) end

-- The duration's key on the quantized scale: integer units below 1024,
-- else rounded to 10 significant bits (within 0.1%).
local function qkey(d)
  if d < 1024 then return floor(d + 0.5) end
  local e = 1
  while d >= 2048 * e do e = e * 2 end
  return floor(d / e + 0.5) * e
end
M.qkey = qkey

-- The first bytes of the file: its format and its otherData.
local function head_of(path)
  local f = io.open(path, "rb")
  if not f then error(errors.new("io_error", path .. ": cannot open"), 0) end
  local head = f:read(65536) or ""
  local size = f:seek("end")
  f:close()
  return head, size
end

-- Scans the file in chunks cut at a line end (or, for a one-line file, before
-- an event), calling each(body) on whole events.
local function chunks(path, cut_pattern, each)
  local f = io.open(path, "rb")
  if not f then error(errors.new("io_error", path .. ": cannot open"), 0) end
  local carry = ""
  while true do
    local chunk = f:read(CHUNK)
    if not chunk then break end
    chunk = carry .. chunk
    local cut = chunk:match(cut_pattern)
    if cut and cut > 1 then
      each(chunk:sub(1, cut - 1))
      carry = chunk:sub(cut)
    else
      carry = chunk
    end
  end
  f:close()
  each(carry)
end

-- The two layouts: the fast one (the harness's default dump, one event per
-- line, no spaces) and the tolerant one (spaces allowed, any line breaks).
local LAYOUTS = {
  fast = {
    cut = ".*()\n",
    event = '\n{"name":"([^"]*)","ph":"([BE])","ts":([^,]*),([^}]*)',
    thread = '\n{"name":"thread_name","ph":"M","pid":(%d+),"tid":(%d+),"args":{"name":"([^"]*)"',
    process = '\n{"name":"process_name","ph":"M","pid":(%d+),"args":{"name":"([^"]*)"',
  },
  tolerant = {
    cut = '.*(){%s*"name"',
    event = '{%s*"name"%s*:%s*"([^"]*)"%s*,%s*"ph"%s*:%s*"([BE])"%s*,%s*"ts"%s*:%s*([-%d.eE+]+)%s*,([^}]*)',
    thread = '"name"%s*:%s*"thread_name"%s*,%s*"ph"%s*:%s*"M"%s*,%s*"pid"%s*:%s*(%d+)%s*,%s*"tid"%s*:%s*(%d+)%s*,'
      .. '%s*"args"%s*:%s*{%s*"name"%s*:%s*"([^"]*)"',
    process = '"name"%s*:%s*"process_name"%s*,%s*"ph"%s*:%s*"M"%s*,%s*"pid"%s*:%s*(%d+)%s*,%s*"args"%s*:%s*'
      .. '{%s*"name"%s*:%s*"([^"]*)"',
  },
}

local function check_tail(path)
  local f = io.open(path, "rb")
  if not f then error(errors.new("io_error", path .. ": cannot open"), 0) end
  local size = f:seek("end")
  f:seek("set", max(0, size - 256))
  local tail = f:read("*a") or ""
  f:close()
  if not tail:match("%]%s*}%s*$") then
    bad_trace(path, "the event list has no end (\"]}\"): the file is cut short (torn), or not a trace")
  end
end

-- A first pass, when the span is not known beforehand: the first and last
-- event times (units) and the number of lanes.
local function bounds(path, layout)
  local lo, hi, nev = huge, -huge, 0
  local lanes, nlanes = {}, 0
  local pat = layout.event
  chunks(path, layout.cut, function(body)
    for _, _, ts, rest in body:gmatch(pat) do
      local t = tonumber(ts)
      if t then
        if t < lo then lo = t end
        if t > hi then hi = t end
        nev = nev + 1
      end
      if not lanes[rest] then lanes[rest] = true; nlanes = nlanes + 1 end
    end
  end)
  return lo * 1000, hi * 1000, nev, nlanes
end

-- Re-merges a lane's runs with time quantum q (in place).
local function merge_runs(lane, q)
  local t0, t1, dep, nm, cnt, busy, mix = lane.t0, lane.t1, lane.dep, lane.nm, lane.cnt, lane.busy, lane.mix
  local last = {}
  local k = 0
  for i = 1, lane.n do
    local d = dep[i]
    local li = last[d]
    if li and t0[i] - t1[li] <= q and (nm[li] == nm[i] or t1[i] - t0[i] < q or t1[li] - t0[li] < q) then
      local m = mix[li]
      if nm[li] ~= nm[i] or m or mix[i] then
        if not m then m = { [nm[li]] = busy[li] }; mix[li] = m end
        if mix[i] then
          for name, v in pairs(mix[i]) do m[name] = (m[name] or 0) + v end
        else
          m[nm[i]] = (m[nm[i]] or 0) + busy[i]
        end
      end
      if t1[i] > t1[li] then t1[li] = t1[i] end
      cnt[li] = cnt[li] + cnt[i]
      busy[li] = busy[li] + busy[i]
    else
      k = k + 1
      t0[k], t1[k], dep[k], nm[k], cnt[k], busy[k], mix[k] = t0[i], t1[i], d, nm[i], cnt[i], busy[i], mix[i]
      last[d] = k
    end
  end
  for i = k + 1, lane.n do t0[i], t1[i], dep[i], nm[i], cnt[i], busy[i], mix[i] = nil, nil, nil, nil, nil, nil, nil end
  lane.n = k
  lane.q = q
  lane.last_run = last
end

-- Reads the trace at path.  opts.span: the span the summary states (units),
-- which spares the first pass when the trace is the default dump's (ts 0 =
-- the earliest trace start).  Returns {path, unit, mode, other, t_first,
-- t_last, span, events, lanes (sorted by SM, then trace), sms, names (in
-- order of first end), regions (by name), inflight = {q, from, layers},
-- budget, runs, merged (runs standing for more than one region)}.
function M.read(path, opts)
  opts = opts or {}
  local head, size = head_of(path)
  if not head:find('"traceEvents"', 1, true) then
    bad_trace(path, "not a Chrome trace (no \"traceEvents\" in its first 64 KiB)")
  end
  local other
  local other_text = head:match('"otherData"%s*:%s*(%b{})')
  if other_text then
    local ok, v = pcall(core.json_decode, other_text, path)
    if ok and type(v) == "table" then other = v end
  end
  check_tail(path)
  local fast = head:sub(1, 36) == '{"displayTimeUnit":"ns","otherData":' and other ~= nil
  local layout = fast and LAYOUTS.fast or LAYOUTS.tolerant
  local mode = (other and other.generator) and "default" or "mosaic"
  local unit = other and other.time_unit or (mode == "mosaic" and "ns" or "ns")
  local budget = opts.budget or M.BUDGET
  local width = opts.width or M.WIDTH
  local nbins = opts.bins or M.BINS

  -- the span and origin: from the summary (default mode) or a first pass
  local origin, span_est, nlanes_est
  if opts.span and opts.span > 0 and mode == "default" and other and other.origin then
    origin, span_est = 0, opts.span
    nlanes_est = other.traces
  else
    local lo, hi, nev, nl = bounds(path, layout)
    if nev == 0 then
      return M.read_decoded(path, opts, size)
    end
    origin, span_est, nlanes_est = lo, max(hi - lo, 1e-9), nl
  end
  if not nlanes_est or nlanes_est < 1 then nlanes_est = 1 end
  local q0 = span_est / width
  local Q = span_est / nbins
  local cap = max(4, floor(budget / nlanes_est))

  if fast and core.trace_scan and not opts.lua then
    -- the default dump: the same pass in C (core.trace_scan, issue 24), 10x faster
    local r = core.trace_scan(path, { q0 = q0, Q = Q, origin = origin, cap = cap, max_depth = M.MAX_DEPTH })
    if r.events == 0 then return M.read_decoded(path, opts, size) end
    return M.finish({ path = path, unit = unit, mode = mode, other = other, t_first = r.t_first, t_last = r.t_last,
      events = r.events, lane_list = r.lane_list, lane_names = r.lane_names, sm_names = r.sm_names,
      regions = r.regions, names = r.names, cov = r.cov, diff = r.diff, Q = Q, origin = origin, budget = budget,
      width = width })
  end
  local lanes, lane_list = {}, {}
  local sm_names, lane_names = {}, {}
  local regions, names = {}, {}
  local cov, diff = {}, {}
  local t_first, t_last, events = huge, -huge, 0
  local last_rest, lane, trunc = nil, nil, false
  local max_depth = M.MAX_DEPTH

  local function new_lane(rest)
    local pid, tid = rest:match('"pid"%s*:%s*(%d+)%s*,%s*"tid"%s*:%s*(%d+)')
    if not pid then bad_trace(path, "an event without pid and tid: " .. rest:sub(1, 80)) end
    local key = pid .. ":" .. tid
    local l = lanes[key]
    if not l then
      l = { pid = tonumber(pid), tid = tonumber(tid), key = key, sn = 0, sname = {}, st = {}, first = huge, last = -huge,
        regions = 0, n = 0, t0 = {}, t1 = {}, dep = {}, nm = {}, cnt = {}, busy = {}, mix = {}, last_run = {}, q = q0,
        cap = cap, depth = 0 }
      lanes[key] = l
      lane_list[#lane_list + 1] = l
    end
    return l
  end

  local function region_of(name)
    local g = regions[name]
    if not g then
      g = { name = name, count = 0, total = 0, min = huge, max = -huge, truncated = 0, hist = {} }
      regions[name] = g
      names[#names + 1] = name
      cov[name], diff[name] = {}, {}
      g.cov, g.diff = cov[name], diff[name]
    end
    return g
  end

  local pat = layout.event
  local function on_body(body)
    for sm, nm in body:gmatch(layout.process) do sm_names[tonumber(sm)] = nm end
    for pid, tid, nm in body:gmatch(layout.thread) do lane_names[pid .. ":" .. tid] = nm end
    for name, ph, ts, rest in body:gmatch(pat) do
      if rest ~= last_rest then
        last_rest = rest
        lane = new_lane(rest)
        trunc = rest:find('"truncated"', 1, true) ~= nil
      end
      local t = tonumber(ts)
      if not t then bad_trace(path, fmt("event %d (%s %s): ts %s is not a number", events + 1, ph, name, ts)) end
      t = t * 1000
      events = events + 1
      local l = lane
      if t < l.first then l.first = t end
      if t > l.last then l.last = t end
      if t < t_first then t_first = t end
      if t > t_last then t_last = t end
      if ph == "B" then
        if not regions[name] then region_of(name) end
        local sn = l.sn + 1
        l.sn = sn
        l.sname[sn], l.st[sn] = name, t
        if sn > l.depth then l.depth = sn end
      else
        local sn = l.sn
        if sn == 0 then
          bad_trace(path, fmt("event %d: an end of %s on pid %d tid %d with no region open", events, name, l.pid, l.tid))
        end
        local open = l.sname[sn]
        if open ~= name then
          bad_trace(path, fmt("event %d: an end of %s on pid %d tid %d while %s is open: regions must nest", events, name,
            l.pid, l.tid, open))
        end
        local t0 = l.st[sn]
        l.sname[sn], l.st[sn] = nil, nil
        l.sn = sn - 1
        local d = t - t0
        -- ts in us with 3 decimals: whole units, once the float's noise is rounded off
        d = floor(d * 1000 + 0.5) / 1000
        if d < 0 then d = 0 end
        local g = regions[name] or region_of(name)
        if trunc then
          g.truncated = g.truncated + 1
        else
          g.count = g.count + 1
          g.total = g.total + d
          if d < g.min then g.min = d end
          if d > g.max then g.max = d end
          local k = d < 1024 and floor(d + 0.5) or qkey(d)
          local h = g.hist
          h[k] = (h[k] or 0) + 1
        end
        -- in flight: the interval [t0, t) over the bins (partial ends, whole bins by differences)
        local c = g.cov
        local i0, i1 = floor((t0 - origin) / Q), floor((t - origin) / Q)
        if i0 == i1 then
          c[i0] = (c[i0] or 0) + d
        else
          c[i0] = (c[i0] or 0) + (origin + (i0 + 1) * Q - t0)
          c[i1] = (c[i1] or 0) + (t - (origin + i1 * Q))
          if i1 > i0 + 1 then
            local df = g.diff
            df[i0 + 1] = (df[i0 + 1] or 0) + 1
            df[i1] = (df[i1] or 0) - 1
          end
        end
        -- the lane's runs
        l.regions = l.regions + 1
        local dep = sn > max_depth and max_depth or sn
        local q = l.q
        local li = l.last_run[dep]
        local T1 = l.t1
        if li and t0 - T1[li] <= q and (l.nm[li] == name or d < q or T1[li] - l.t0[li] < q) then
          local m = l.mix[li]
          if l.nm[li] ~= name or m then
            if not m then m = { [l.nm[li]] = l.busy[li] }; l.mix[li] = m end
            m[name] = (m[name] or 0) + d
          end
          if t > T1[li] then T1[li] = t end
          l.cnt[li] = l.cnt[li] + 1
          l.busy[li] = l.busy[li] + d
        else
          local n = l.n + 1
          l.n = n
          l.t0[n], T1[n], l.dep[n], l.nm[n], l.cnt[n], l.busy[n] = t0, t, dep, name, 1, d
          l.last_run[dep] = n
          if n > l.cap then
            local nq = max(l.q * 2, q0)
            while true do
              merge_runs(l, nq)
              if l.n <= l.cap * 0.75 then break end
              nq = nq * 2
            end
          end
        end
      end
    end
  end
  chunks(path, layout.cut, on_body)
  if events == 0 then return M.read_decoded(path, opts, size) end
  for _, l in ipairs(lane_list) do
    if l.sn > 0 then
      bad_trace(path, fmt("pid %d tid %d: region %s never ends (a torn trace?)", l.pid, l.tid, l.sname[l.sn]))
    end
  end
  return M.finish({ path = path, unit = unit, mode = mode, other = other, t_first = t_first, t_last = t_last,
    events = events, lane_list = lane_list, lane_names = lane_names, sm_names = sm_names, regions = regions,
    names = names, cov = cov, diff = diff, Q = Q, origin = origin, budget = budget, width = width })
end

-- What neither pattern read (pretty-printed JSON, keys in another order):
-- the file decoded whole, then fed through the same code as events.
function M.read_decoded(path, opts, size)
  if size > 256 * 1048576 then
    bad_trace(path, "no event in the layout the report reads, and too large (" .. floor(size / 1048576)
      .. " MB) to decode whole")
  end
  local doc = files.read_json(path)
  local evs = type(doc) == "table" and doc.traceEvents
  if type(evs) ~= "table" then bad_trace(path, "not a Chrome trace (no traceEvents list)") end
  -- re-encode the events the tolerant pattern reads, one per line, into a temporary file
  local lines = { '{"traceEvents":[' }
  for _, e in ipairs(evs) do
    if type(e) == "table" and (e.ph == "B" or e.ph == "E") and type(e.ts) == "number" and type(e.name) == "string" then
      local extra = (type(e.args) == "table" and e.args.truncated) and ',"args":{"truncated":true}' or ""
      lines[#lines + 1] = fmt('{"name":%s,"ph":"%s","ts":%.17g,"pid":%d,"tid":%d%s},', core.json_encode(e.name), e.ph,
        e.ts, tonumber(e.pid) or 0, tonumber(e.tid) or 0, extra)
    elseif type(e) == "table" and e.ph == "M" and type(e.args) == "table" and type(e.args.name) == "string" then
      if e.name == "thread_name" then
        lines[#lines + 1] = fmt('{"name":"thread_name","ph":"M","pid":%d,"tid":%d,"args":{"name":%s}},',
          tonumber(e.pid) or 0, tonumber(e.tid) or 0, core.json_encode(e.args.name))
      elseif e.name == "process_name" then
        lines[#lines + 1] = fmt('{"name":"process_name","ph":"M","pid":%d,"args":{"name":%s}},', tonumber(e.pid) or 0,
          core.json_encode(e.args.name))
      end
    end
  end
  if #lines == 1 then bad_trace(path, "no region events (ph B and E) in the trace") end
  lines[#lines + 1] = "{}]}"
  local tmp = os.tmpname()
  local f = assert(io.open(tmp, "wb"))
  f:write(table.concat(lines, "\n"))
  f:close()
  local ok, r = pcall(M.read, tmp, { budget = opts.budget, width = opts.width, bins = opts.bins })
  os.remove(tmp)
  if not ok then
    if type(r) == "table" and r.message then r.message = r.message:gsub(tmp:gsub("%p", "%%%0"), path) end
    error(r, 0)
  end
  r.path = path
  if type(doc.otherData) == "table" then r.other = doc.otherData end
  return r
end

-- After the pass: lanes sorted and merged to the pixel of the real span
-- and to the budget, SMs, in-flight layers, region statistics.
function M.finish(s)
  local span = max(s.t_last - s.t_first, 1e-9)
  local q = span / s.width
  local lanes = s.lane_list
  table.sort(lanes, function(a, b)
    if a.pid ~= b.pid then return a.pid < b.pid end
    return a.tid < b.tid
  end)
  local total = 0
  for _, l in ipairs(lanes) do
    if l.q < q then merge_runs(l, q) end
    total = total + l.n
  end
  -- over the budget (more lanes than the first estimate): merge the longest lanes further
  local guard = 0
  while total > s.budget and guard < 40 do
    guard = guard + 1
    local cap = max(4, floor(s.budget / #lanes))
    total = 0
    for _, l in ipairs(lanes) do
      if l.n > cap then merge_runs(l, l.q * 2) end
      total = total + l.n
    end
  end
  local merged = 0
  local sms, by_pid = {}, {}
  for i, l in ipairs(lanes) do
    l.index = i
    l.label = s.lane_names[l.key] or ("tid " .. l.tid)
    for k = 1, l.n do if l.cnt[k] > 1 then merged = merged + 1 end end
    local sm = by_pid[l.pid]
    if not sm then
      sm = { pid = l.pid, name = s.sm_names[l.pid] or ("pid " .. l.pid), lanes = {}, done = -huge }
      by_pid[l.pid] = sm
      sms[#sms + 1] = sm
    end
    sm.lanes[#sm.lanes + 1] = l
    if l.last > sm.done then sm.done = l.last end
    l.last_run, l.sname, l.st = nil, nil, nil
  end
  for _, sm in ipairs(sms) do sm.done = sm.done - s.t_first end
  -- in flight: bins that overlap [t_first, t_last], as values per bin
  local Q, origin = s.Q, s.origin
  local b0, b1 = floor((s.t_first - origin) / Q), floor((s.t_last - origin) / Q)
  if (s.t_last - origin) / Q == b1 and b1 > b0 then b1 = b1 - 1 end
  local layers = {}
  for _, name in ipairs(s.names) do
    local c, df = s.cov[name], s.diff[name]
    local vals, run = {}, 0
    for i = b0, b1 do
      run = run + (df[i] or 0)
      vals[#vals + 1] = ((c[i] or 0) + run * Q) / Q
    end
    layers[#layers + 1] = { name = name, values = vals }
  end
  local regions = {}
  for _, name in ipairs(s.names) do
    local g = s.regions[name]
    local keys = {}
    for k in pairs(g.hist) do keys[#keys + 1] = k end
    table.sort(keys)
    g.keys = keys
    g.mean = g.count > 0 and g.total / g.count or nil
    if g.count == 0 then g.min, g.max = nil, nil end
    g.median = M.quantile(g, 0.5)
    g.p99 = M.quantile(g, 0.99)
    g.concurrency = g.total / span
    regions[#regions + 1] = g
  end
  return { path = s.path, unit = s.unit, mode = s.mode, other = s.other, t_first = s.t_first, t_last = s.t_last,
    span = span, events = s.events, lanes = lanes, sms = sms, names = s.names, regions = regions,
    inflight = { q = Q, from = origin + b0 * Q - s.t_first, layers = layers }, budget = s.budget, runs = total,
    merged = merged }
end

-- The nearest-rank quantile p of a region's quantized durations.
function M.quantile(g, p)
  if g.count == 0 then return nil end
  local rank = math.ceil(p * g.count)
  if rank < 1 then rank = 1 end
  local acc = 0
  for _, k in ipairs(g.keys) do
    acc = acc + g.hist[k]
    if acc >= rank then return k end
  end
  return g.keys[#g.keys]
end

-- Histogram bins of a region: about n bins over [min, max] of its quantized
-- durations, on a log scale when max / min > 20; each key counted in the bin
-- that holds it, so the bins add up to the region's count.
function M.bins(g, n)
  n = n or 32
  if g.count == 0 then return {}, false end
  local keys = g.keys
  local lo, hi = keys[1], keys[#keys]
  local log = lo > 0 and hi / lo > 20
  local bins = {}
  if hi == lo then
    -- one value (one region, or all equal): a bar one bin wide on an axis 32 bins wide around it,
    -- not a block across the whole figure (issue 35)
    local span = max(32, 0.2 * abs(lo))
    local w = span / 32
    local start = max(0, lo - w / 2 - 16 * w)
    if lo < 0 then start = lo - w / 2 - 16 * w end
    for i = 1, 33 do bins[i] = { lo = start + (i - 1) * w, hi = start + i * w, count = 0 } end
    local at = min(33, floor((lo - start) / w) + 1)
    bins[at].count, bins[at].first, bins[at].last = g.count, lo, lo
    return bins, false
  end
  if log then
    local l0, l1 = math.log(lo), math.log(hi)
    local step = (l1 - l0) / n
    for i = 1, n do bins[i] = { lo = math.exp(l0 + (i - 1) * step), hi = math.exp(l0 + i * step), count = 0 } end
    for _, k in ipairs(keys) do
      local i = min(n, floor((math.log(k) - l0) / step) + 1)
      bins[i].count = bins[i].count + g.hist[k]
    end
  else
    -- integer-wide bins when the range is narrow, so each bin holds whole values
    local width = (hi - lo) / n
    if hi - lo < 4 * n and hi == floor(hi) and lo == floor(lo) then width = max(1, math.ceil((hi - lo + 1) / n)) end
    local start = (width >= 1 and lo == floor(lo)) and (lo - 0.5) or lo
    local nb = max(1, math.ceil((hi - start) / width + 1e-9))
    if start + nb * width <= hi then nb = nb + 1 end
    for i = 1, nb do
      local b = { lo = start + (i - 1) * width, hi = start + i * width, count = 0 }
      if start ~= lo then b.first, b.last = b.lo + 0.5, b.hi - 0.5 end -- the whole values it holds
      bins[i] = b
    end
    for _, k in ipairs(keys) do
      local i = min(nb, floor((k - start) / width) + 1)
      bins[i].count = bins[i].count + g.hist[k]
    end
  end
  return bins, log
end

return M
