-- mgpu.axes: the parameter space of an experiment.  An experiment's `axes`
-- is either a map {name = {values}} (axes in name order) or a list whose
-- entries are mgpu.axis(name, values) or mgpu.zip{...} (several axes that
-- advance together).  Points are the cartesian product, first axis slowest,
-- minus those the experiment's filter rejects.
local errors = require "mgpu.errors"

local M = {}

local function bad(msg) error(errors.new("bad_argument", msg), 2) end

-- An axis value names its point (in the key, the manifest, --set): a string,
-- a boolean or a finite number; a table would be named by its address.
local function check_value(name, i, v)
  local t = type(v)
  if t == "string" or t == "boolean" or (t == "number" and v == v and v ~= math.huge and v ~= -math.huge) then return end
  bad(string.format("axis %s: value %d is %s: axis values are strings, booleans or finite numbers (they name the point)",
    name, i, t == "number" and tostring(v) or ("a " .. t)))
end

function M.axis(name, values)
  if type(name) ~= "string" or name == "" then bad("axis: name must be a non-empty string") end
  if type(values) ~= "table" or #values == 0 then
    bad(string.format("axis %s: values must be a non-empty list, got %s", name, type(values) == "table" and "an empty table"
      or type(values)))
  end
  for i, v in ipairs(values) do check_value(name, i, v) end
  return { kind = "axis", names = { name }, rows = (function()
    local rows = {}
    for i, v in ipairs(values) do rows[i] = { v } end
    return rows
  end)() }
end

-- mgpu.zip{ m = {..}, n = {..} } or mgpu.zip{ {"m", {..}}, {"n", {..}} }: equal lengths.
function M.zip(spec)
  local pairs_ = {}
  if #spec > 0 then
    for _, e in ipairs(spec) do pairs_[#pairs_ + 1] = { e[1], e[2] } end
  else
    for k, v in pairs(spec) do pairs_[#pairs_ + 1] = { k, v } end
    table.sort(pairs_, function(a, b) return a[1] < b[1] end)
  end
  if #pairs_ == 0 then bad("zip: no axes") end
  local len = #pairs_[1][2]
  local names, rows = {}, {}
  for j, p in ipairs(pairs_) do
    if type(p[2]) ~= "table" or #p[2] ~= len then bad("zip: axis " .. tostring(p[1]) .. " must have " .. len .. " values like the others") end
    if type(p[1]) ~= "string" or p[1] == "" then bad("zip: axis names must be non-empty strings") end
    names[j] = p[1]
    for i, v in ipairs(p[2]) do check_value(p[1], i, v) end
  end
  for i = 1, len do
    rows[i] = {}
    for j, p in ipairs(pairs_) do rows[i][j] = p[2][i] end
  end
  return { kind = "zip", names = names, rows = rows }
end

-- The axis groups of an experiment's axes table, in order.
function M.groups(axes)
  axes = axes or {}
  if type(axes) ~= "table" then
    bad("experiment.axes must be a table: a map {name = {values}} or a list of mgpu.axis(...) and mgpu.zip{...}, got "
      .. type(axes))
  end
  local groups = {}
  if #axes > 0 then
    for k in pairs(axes) do
      if type(k) ~= "number" or k < 1 or k > #axes or k ~= math.floor(k) then
        bad(string.format("experiment.axes mixes a list of mgpu.axis/mgpu.zip with the key %s: use one form", tostring(k)))
      end
    end
    for i, g in ipairs(axes) do
      if type(g) ~= "table" or not g.kind then bad("experiment.axes[" .. i .. "] must be mgpu.axis(...) or mgpu.zip{...}") end
      groups[i] = g
    end
  else
    local names = {}
    for k in pairs(axes) do
      if type(k) ~= "string" then bad("experiment.axes: an axis name must be a string, got " .. type(k)) end
      names[#names + 1] = k
    end
    table.sort(names)
    for i, k in ipairs(names) do groups[i] = M.axis(k, axes[k]) end
  end
  local seen = {}
  for _, g in ipairs(groups) do
    for _, n in ipairs(g.names) do
      if seen[n] then bad("axis " .. n .. " appears twice") end
      seen[n] = true
    end
  end
  return groups
end

-- "128" -> 128, "0.5" -> 0.5, "abc" -> "abc"
local function parse_value(s)
  local n = tonumber(s)
  if n ~= nil then
    -- an integral value stays an integer (math.tointeger is Lua 5.3+; LuaJIT has one number type)
    if math.tointeger then return math.tointeger(n) or n end
    return n
  end
  if s == "true" then return true elseif s == "false" then return false end
  return s
end

-- Applies command-line overrides {name = "v1,v2"} to the groups.
-- The typed values of a --set text "v1,v2".
function M.parse_list(text)
  local values = {}
  for item in string.gmatch(text, "[^,]+") do values[#values + 1] = parse_value(item) end
  return values
end

-- Whether two --set tables {name = "v1,v2"} ask for the same values.
function M.same_set(a, b)
  local function canon(set)
    local names, parts = {}, {}
    for k in pairs(set or {}) do names[#names + 1] = tostring(k) end
    table.sort(names)
    for _, k in ipairs(names) do
      local vs = {}
      for i, v in ipairs(M.parse_list(tostring(set[k]))) do vs[i] = type(v) .. ":" .. tostring(v) end
      parts[#parts + 1] = k .. "=" .. table.concat(vs, ",")
    end
    return table.concat(parts, " ")
  end
  return canon(a) == canon(b), canon(a), canon(b)
end

-- The axis groups a manifest recorded ({kind=, names=, rows=} each), checked:
-- a field that is not what the runner wrote is a bad_results naming it.
function M.from_manifest(t, where)
  local function fail(what) error(errors.new("bad_results", where .. ": " .. what), 0) end
  if type(t) ~= "table" then fail("axes must be a list of axis groups") end
  local groups = {}
  for i, g in ipairs(t) do
    if type(g) ~= "table" then fail(string.format("axes[%d] must be an object {kind, names, rows}", i)) end
    if g.kind ~= "axis" and g.kind ~= "zip" then fail(string.format("axes[%d].kind must be \"axis\" or \"zip\"", i)) end
    if type(g.names) ~= "table" or #g.names == 0 then fail(string.format("axes[%d].names must be a list of names", i)) end
    for _, n in ipairs(g.names) do
      if type(n) ~= "string" then fail(string.format("axes[%d]: a name that is not a string", i)) end
    end
    if type(g.rows) ~= "table" or #g.rows == 0 then fail(string.format("axes[%d].rows must be a list of values", i)) end
    for j, r in ipairs(g.rows) do
      if type(r) ~= "table" or #r ~= #g.names then
        fail(string.format("axes[%d].rows[%d] must hold %d value(s), one per name", i, j, #g.names))
      end
    end
    groups[i] = { kind = g.kind, names = g.names, rows = g.rows }
  end
  return groups
end

-- Applies command-line overrides {name = "v1,v2"} to the groups.
function M.override(groups, set)
  for name, text in pairs(set or {}) do
    local values = M.parse_list(text)
    if #values == 0 then bad("--set " .. name .. "= needs at least one value") end
    local found = false
    for gi, g in ipairs(groups) do
      for j, n in ipairs(g.names) do
        if n == name then
          found = true
          if g.kind == "zip" then bad("--set " .. name .. ": axis is zipped with others; set them in the script") end
          groups[gi] = M.axis(name, values)
          local _ = j
        end
      end
    end
    if not found then
      local names = {}
      for _, g in ipairs(groups) do for _, n in ipairs(g.names) do names[#names + 1] = n end end
      bad("--set " .. name .. ": no such axis (axes: " .. (#names > 0 and table.concat(names, ", ") or "none") .. ")")
    end
  end
  return groups
end

-- Canonical text of a point ("block=128,n=4096"), in axis order.
function M.key(groups, point)
  local parts = {}
  for _, g in ipairs(groups) do
    for _, n in ipairs(g.names) do parts[#parts + 1] = n .. "=" .. tostring(point[n]) end
  end
  return table.concat(parts, ",")
end

-- All points: cartesian product of the groups, first slowest; filter(point)
-- returning false drops a point.  Returns points, number filtered out.
function M.expand(groups, filter)
  local points, dropped = {}, 0
  local function rec(gi, acc)
    if gi > #groups then
      local p = {}
      for k, v in pairs(acc) do p[k] = v end
      if filter and not filter(p) then dropped = dropped + 1 else points[#points + 1] = p end
      return
    end
    for _, row in ipairs(groups[gi].rows) do
      for j, n in ipairs(groups[gi].names) do acc[n] = row[j] end
      rec(gi + 1, acc)
    end
    for _, n in ipairs(groups[gi].names) do acc[n] = nil end
  end
  rec(1, {})
  return points, dropped
end

-- The number of points of the groups' product (a float past 2^53: only compared with caps).
function M.count(groups)
  local n = 1
  for _, g in ipairs(groups) do n = n * #g.rows end
  return n
end

-- Point i (1-based) of the product, first group slowest, without building the others: a
-- sweep of 10^6 points is listed in constant memory.
function M.at(groups, i)
  local p, rest = {}, i - 1
  for gi = #groups, 1, -1 do
    local g = groups[gi]
    local r = rest % #g.rows
    rest = (rest - r) / #g.rows
    for j, n in ipairs(g.names) do p[n] = g.rows[r + 1][j] end
  end
  return p
end

function M.names(groups)
  local names = {}
  for _, g in ipairs(groups) do for _, n in ipairs(g.names) do names[#names + 1] = n end end
  return names
end

return M
