-- flow_check.lua: a strict check of a Chrome trace's flow events against the Trace Event Format
-- (v1 flows: "s" starts a flow and binds to the slice enclosing it on its thread; "f" ends it and,
-- with "bp": "e", binds to the slice enclosing it; both carry name, cat, id, ts, pid, tid).  What
-- Perfetto's and Catapult's JSON importers need to draw an arrow: every flow one "s" and one "f"
-- with the same cat, id and name, the "f" not before the "s", each inside a B/E slice of its own
-- thread (begin <= ts < end: at a slice's very end the binding depends on the importer's order),
-- on a thread with a name.  Slices are checked too: per thread, E closes the last open B, times
-- never go back.  check(doc) returns {flows = n, by_name = {name = n}} or raises an error naming
-- the first event at fault (its index in traceEvents).
local M = {}

-- (LuaJIT has no math.type: JSON numbers are doubles there)
local function integer(x) return type(x) == "number" and x == math.floor(x) end

local function fail(i, e, why)
  error(string.format("traceEvents[%d] (ph %s, name %s, id %s): %s", i, tostring(e.ph), tostring(e.name), tostring(e.id), why), 0)
end

function M.check(doc)
  assert(type(doc) == "table" and type(doc.traceEvents) == "table", "not a Chrome trace: no traceEvents array")
  local slices, open, last, named = {}, {}, {}, {}
  for i, e in ipairs(doc.traceEvents) do
    local key = tostring(e.pid) .. "/" .. tostring(e.tid)
    if e.ph == "M" and e.name == "thread_name" then named[key] = true end
    if e.ph == "B" or e.ph == "E" then
      if type(e.ts) ~= "number" then fail(i, e, "a slice event without a numeric ts") end
      if last[key] and e.ts < last[key] then fail(i, e, "time goes back on its thread") end
      last[key] = e.ts
      open[key] = open[key] or {}
      if e.ph == "B" then
        table.insert(open[key], { e.ts, e.name })
      else
        local b = table.remove(open[key])
        if not b then fail(i, e, "E with no open B on its thread") end
        if b[2] ~= e.name then fail(i, e, "E closes \"" .. tostring(b[2]) .. "\", not its own name") end
        slices[key] = slices[key] or {}
        table.insert(slices[key], { b[1], e.ts })
      end
    end
  end
  local function inside(e)
    for _, s in ipairs(slices[tostring(e.pid) .. "/" .. tostring(e.tid)] or {}) do
      if e.ts >= s[1] and (e.ts < s[2] or e.ts == s[1]) then return true end
    end
    return false
  end
  local starts, ends, n, by_name = {}, {}, 0, {}
  for i, e in ipairs(doc.traceEvents) do
    if e.ph == "s" or e.ph == "t" or e.ph == "f" then
      if e.ph == "t" then fail(i, e, "a step (t): the harness writes none") end
      if type(e.name) ~= "string" or e.name == "" then fail(i, e, "no name") end
      if type(e.cat) ~= "string" or e.cat == "" then fail(i, e, "no cat (flows are matched by cat and id)") end
      if not integer(e.id) or e.id < 1 then fail(i, e, "id is not a positive integer") end
      if type(e.ts) ~= "number" or not integer(e.pid) or not integer(e.tid) then
        fail(i, e, "ts, pid and tid must be numbers (pid and tid integers)")
      end
      local key = tostring(e.pid) .. "/" .. tostring(e.tid)
      if not named[key] then fail(i, e, "its thread " .. key .. " has no thread_name") end
      if not inside(e) then fail(i, e, "outside every slice of its thread (nothing to bind to)") end
      local fid = e.cat .. "#" .. e.id
      if e.ph == "s" then
        if e.bp ~= nil then fail(i, e, "an s with a bp (only an f's bp is read)") end
        if starts[fid] then fail(i, e, "a second s for this cat and id") end
        starts[fid] = { i = i, e = e }
      else
        if e.bp ~= "e" then fail(i, e, "an f without \"bp\": \"e\" binds to the next slice, not the wait's") end
        if ends[fid] then fail(i, e, "a second f for this cat and id") end
        ends[fid] = { i = i, e = e }
      end
    end
  end
  for fid, s in pairs(starts) do
    local f = ends[fid]
    if not f then fail(s.i, s.e, "a start with no end") end
    if f.e.name ~= s.e.name then fail(f.i, f.e, "ends a flow that started as \"" .. s.e.name .. "\"") end
    if f.e.ts < s.e.ts then fail(f.i, f.e, "ends before its start (ts " .. s.e.ts .. ")") end
    n = n + 1
    by_name[s.e.name] = (by_name[s.e.name] or 0) + 1
  end
  for fid, f in pairs(ends) do
    if not starts[fid] then fail(f.i, f.e, "an end with no start") end
  end
  return { flows = n, by_name = by_name }
end

return M
