-- mgpu.manifest: a results folder's manifest.json.  The runner writes it when
-- a run starts; --resume and replay read it back, checked (a field that is
-- not what the runner wrote is a bad_results naming the file and the field),
-- and refuse when a source it names changed since (the script, the module, a
-- header the .cu included, the PTX nvcc made of it), unless forced.  Its paths
-- are absolute, so it is read the same from any working directory; a relative
-- one (written by hand) is taken relative to the results folder.  `commands`
-- lists every command that wrote into the folder.
local core = require "mgpu.core"
local errors = require "mgpu.errors"
local files = require "mgpu.files"

local M = {}

local function bad(msg) error(errors.new("bad_argument", msg), 0) end

-- {path=, sha256=} of a file, its path made absolute.
function M.entry(path)
  local abs = files.absolute(path)
  return { path = abs, sha256 = core.sha256_file(abs) }
end

-- A path the manifest holds: absolute, or relative to the results folder.
function M.path(dir, p)
  if p:sub(1, 1) == "/" then return p end
  return files.absolute(p, dir)
end

-- The entry of a command that wrote into the folder.
function M.command(command, kind, extra)
  local e = { command = command, kind = kind, at = os.date("!%Y-%m-%dT%H:%M:%SZ"), cwd = files.cwd(),
    harness = core.VERSION }
  for k, v in pairs(extra or {}) do e[k] = v end
  return e
end

local function is_list(t)
  if type(t) ~= "table" then return false end
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n == #t
end

-- DIR/manifest.json, decoded and checked.  Missing: an io_error; not JSON, or
-- a field of the wrong kind: a bad_results naming the file and the field.
function M.read(dir)
  local path = dir .. "/manifest.json"
  local text = files.read(path)
  if not text then error(errors.new("io_error", path .. ": cannot open (is " .. dir .. " a results folder?)"), 0) end
  local function fail(what) error(errors.new("bad_results", path .. ": " .. what), 0) end
  local ok, man = pcall(core.json_decode, text, path)
  if not ok then fail(tostring(man.message or man):gsub("^" .. path:gsub("%p", "%%%0") .. ": ", "")) end
  if type(man) ~= "table" or (#man > 0) then fail("not an object") end
  if type(man.experiment) ~= "string" then fail("experiment must be the experiment's name (a string)") end
  local function file_entry(e, what, need_sha)
    if type(e) ~= "table" or type(e.path) ~= "string" or e.path == "" then fail(what .. ".path must be a path") end
    if (need_sha or e.sha256 ~= nil) and (type(e.sha256) ~= "string" or not e.sha256:match("^%x+$")) then
      fail(what .. ".sha256 must be a hex digest")
    end
  end
  file_entry(man.script, "script", false)
  for _, f in ipairs({ "ptx", "headers" }) do
    if man[f] ~= nil then
      if not is_list(man[f]) then fail(f .. " must be a list of {path, sha256}") end
      for i, e in ipairs(man[f]) do file_entry(e, string.format("%s[%d]", f, i), true) end
    end
  end
  if man.compiled ~= nil then
    if type(man.compiled) ~= "table" or type(man.compiled.ptx) ~= "string" then fail("compiled.ptx must be a path") end
    if type(man.compiled.sha256) ~= "string" then fail("compiled.sha256 must be a hex digest") end
  end
  if man.set ~= nil then
    if type(man.set) ~= "table" then fail("set must be an object {axis = \"v1,v2\"}") end
    for k, v in pairs(man.set) do
      if type(k) ~= "string" or type(v) ~= "string" then fail("set must map axis names to \"v1,v2\" strings") end
    end
  end
  if man.axes ~= nil then require("mgpu.axes").from_manifest(man.axes, path) end
  if man.point_keys ~= nil then
    if not is_list(man.point_keys) then fail("point_keys must be a list of point keys") end
    for i, k in ipairs(man.point_keys) do
      if type(k) ~= "string" then fail(string.format("point_keys[%d] must be a string", i)) end
    end
    if man.axes == nil then fail("axes are missing (point_keys come from them)") end
  end
  for _, f in ipairs({ "selected", "sweep_selected" }) do
    if man[f] ~= nil then
      if man.point_keys == nil then -- selected indexes point_keys: name what is missing, not selected
        fail("point_keys are missing (" .. f .. " indexes them): an older mgpu-harness wrote it, or it was edited")
      end
      if not is_list(man[f]) then fail(f .. " must be a list of point indices") end
      local at = {} -- a point twice would run twice, its second row refused as a duplicate
      for i, v in ipairs(man[f]) do
        if type(v) ~= "number" or v ~= math.floor(v) or v < 1 or v > #man.point_keys then
          fail(string.format("%s[%d] must be a point index from 1 to %d", f, i, #man.point_keys))
        end
        if at[v] then fail(string.format("%s[%d] is point %d again (%s[%d] is it)", f, i, v, f, at[v])) end
        at[v] = i
      end
    end
  end
  for _, f in ipairs({ "backend", "device", "kernel", "command" }) do
    if man[f] ~= nil and type(man[f]) ~= "string" then fail(f .. " must be a string") end
  end
  if man.backend ~= nil and not (man.backend == "emu" or man.backend == "cuda" or man.backend == "auto"
      or man.backend:match("^cuda:%d+$")) then -- what replay and --resume run on: named here, not as an option
    fail(string.format("backend must be emu, cuda, cuda:N or auto, not %q", man.backend))
  end
  if man.commands ~= nil and not is_list(man.commands) then fail("commands must be a list") end
  return man
end

-- The sources of the run that differ now from what the manifest recorded:
-- a list of "script /x/exp.lua changed since the run (sha256 1a2b..., now 3c4d...)".
function M.changes(man, dir)
  local changed = {}
  local function check(e, what)
    if not e.sha256 then return end
    local path = M.path(dir, e.path)
    local ok, now = pcall(core.sha256_file, path)
    if not ok then
      changed[#changed + 1] = string.format("%s %s of the run is gone", what, path)
    elseif now ~= e.sha256 then
      changed[#changed + 1] = string.format("%s %s changed since the run (sha256 %s..., now %s...)", what, path,
        e.sha256:sub(1, 12), now:sub(1, 12))
    end
  end
  check(man.script, "script")
  for _, p in ipairs(man.ptx or {}) do check(p, p.path:match("%.cu$") and "module" or "PTX") end
  for _, p in ipairs(man.headers or {}) do check(p, "header") end
  return changed
end

-- Refuses (bad_argument) when a source changed, unless force; what: the
-- command ("replay", "--resume DIR").  Returns the changes (forced ones).
-- A run made from Lua without a script file (mgpu.run) has no script to check.
function M.check_sources(man, dir, force, what)
  local changed = M.changes(man, dir)
  if #changed > 0 and not force then
    bad(string.format("%s: %s: it would not repeat the run; use --force to go on anyway (recorded in the manifest)",
      what, table.concat(changed, "; ")))
  end
  return changed
end

-- Appends a command to DIR/manifest.json's commands (the folder's lock held).
function M.add_command(dir, man, entry)
  if not man.commands then
    man.commands = { { command = man.command, kind = "run", at = man.created } }
  end
  man.commands[#man.commands + 1] = entry
  core.write_file(dir .. "/manifest.json", core.json_encode(man, true) .. "\n")
end

return M
