-- same_rows.lua: `mgpu-harness same_rows.lua A B` exits 0 when the results
-- folders A and B hold the same rows, point for point (wall-clock fields
-- aside), else prints the first difference and raises an error.
local core = require "mgpu.core"
local results = require "mgpu.results"
local function rows(dir)
  local out, n = {}, 0
  for _, r in ipairs(results.latest(results.read_rows(dir .. "/results.jsonl"))) do
    r.wall_s = nil
    out[r.key] = core.json_encode(r)
    n = n + 1
  end
  return out, n
end
local a, na = rows(arg[1])
local b, nb = rows(arg[2])
if na ~= nb then error(string.format("%s has %d rows, %s %d", arg[1], na, arg[2], nb), 0) end
for k, v in pairs(a) do
  if b[k] ~= v then error("point " .. k .. " differs:\n  " .. v .. "\n  " .. tostring(b[k]), 0) end
end
print(string.format("same_rows: %d points identical", na))
