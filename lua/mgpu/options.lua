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

-- The command lines' shared checks (experiment, compare, report, slurm, stats, merge, replay).
-- An argument that is the empty string (an unset shell variable, `--out "$DIR"`) is refused,
-- never taken as a path: a folder "" joined as "" .. "/manifest.json" is the root folder's.
-- An option given twice is refused, never the last one silently winning (`-o a -o b`).
--   local seen = {}
--   v = options.arg("slurm", "--out", argv[i], seen)   -- an option's value, once
--   options.arg("merge", "OUT", a)                      -- a positional argument
-- cmd: the command, for the message (nil: none); seen: the options taken so far (nil: it may repeat).
function M.arg(cmd, what, v, seen)
  local function bad(msg)
    error(errors.new("bad_argument", (cmd and (cmd .. ": ") or "") .. msg), 0)
  end
  if v == "" then
    if what:sub(1, 1) == "-" then bad(what .. " is given an empty value (an unset shell variable?)") end
    bad(what .. " is the empty string (an unset shell variable?): give a path")
  end
  if seen then
    if seen[what] ~= nil then bad(string.format("%s given twice (%s and %s): give it once", what, seen[what], v)) end
    seen[what] = v
  end
  return v
end

-- A script's arguments split into emu model parameters (NAME=VALUE: mgpu.device's model_params) and
-- the others, in order: params, positional.  A NAME=VALUE whose value is not a number is an error.
--   local params, pos = options.model_params(arg)   -- "4096 h100-sxm l2_lat=300" -> {l2_lat = 300}, {"4096", "h100-sxm"}
function M.model_params(argv)
  local params, pos = {}, {}
  for _, a in ipairs(argv or {}) do
    local k, v = a:match("^([%a_][%w_]*)=(.+)$")
    if k then params[k] = assert(tonumber(v), a .. ": a model parameter takes a number") else pos[#pos + 1] = a end
  end
  return params, pos
end

return M
