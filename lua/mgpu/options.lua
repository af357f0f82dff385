-- mgpu.options: the check every option table of the Lua library goes through
-- (an experiment, its profile, the table setup returns, mgpu.time's options):
-- a key its reader does not know is a bad_argument naming the key and the keys
-- allowed, so a typo such as `repeates = 5` is not silently ignored.
local errors = require "mgpu.errors"

local M = {}

local function show(k)
  if type(k) == "string" then return string.format("%q", k) end
  return "[" .. tostring(k) .. "]"
end

-- Raises bad_argument when `tbl` has a key not in the list `allowed`:
--   what: unknown key "repeates" (allowed: name, module, ...)
-- (several unknown keys are all named, in sorted order); the error's `key`
-- is the first of them, as it was written.  Returns tbl.
function M.check_keys(tbl, what, allowed)
  local unknown
  for k in pairs(tbl) do
    local known = false
    for _, a in ipairs(allowed) do
      if k == a then
        known = true
        break
      end
    end
    if not known then
      unknown = unknown or {}
      unknown[#unknown + 1] = k
    end
  end
  if unknown then
    table.sort(unknown, function(a, b) return show(a) < show(b) end)
    local shown = {}
    for i, k in ipairs(unknown) do shown[i] = show(k) end
    error(errors.new("bad_argument", string.format("%s: unknown key%s %s (allowed: %s)", what,
      #unknown > 1 and "s" or "", table.concat(shown, ", "), table.concat(allowed, ", ")),
      { key = unknown[1] }), 0)
  end
  return tbl
end

return M
