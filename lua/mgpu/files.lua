-- mgpu.files: the few file operations the Lua library shares (whether a
-- file exists, its whole text, a JSON file decoded, absolute paths), with
-- errors as values.
local core = require "mgpu.core"
local errors = require "mgpu.errors"

local M = {}

function M.exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

-- The file's bytes, or nil when it cannot be opened.
function M.read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

-- The file's bytes; an io_error naming it when it cannot be opened.
function M.read_or_fail(path)
  local s = M.read(path)
  if not s then error(errors.new("io_error", path .. ": cannot open"), 0) end
  return s
end

-- The file decoded as JSON (errors name the file, and line and column).  The files read so are
-- the harness's own (manifests, summaries, stats, traces): one that is not JSON is bad_results
-- (exit 3) in every command, as manifest.read says (issue 36: compare and stats said 2).
function M.read_json(path)
  local ok, v = pcall(core.json_decode, M.read_or_fail(path), path)
  if ok then return v end
  if type(v) == "table" and v.code == "bad_argument" then error(errors.new("bad_results", v.message), 0) end
  error(v, 0)
end

-- The folder part of a path ("." when it has none).
function M.dirname(path) return path:match("^(.*)/[^/]*$") or "." end

-- A path without "." components, repeated slashes and "x/.." pairs (lexically;
-- a ".." at the start of a relative path stays).
function M.normalize(path)
  local abs = path:sub(1, 1) == "/"
  local parts = {}
  for part in path:gmatch("[^/]+") do
    if part == ".." and #parts > 0 and parts[#parts] ~= ".." then
      parts[#parts] = nil
    elseif part == ".." and abs then
      -- "/.." is "/"
    elseif part ~= "." then
      parts[#parts + 1] = part
    end
  end
  local s = table.concat(parts, "/")
  if abs then return "/" .. s end
  return s == "" and "." or s
end

local cwd
-- The working directory (the shell's `pwd`: $PWD when it names it, else the
-- physical path); the process never changes it, so it is asked once.
function M.cwd()
  if cwd then return cwd end
  local p = io.popen("pwd 2>/dev/null")
  local out = p and p:read("*l")
  if p then p:close() end
  if type(out) ~= "string" or out:sub(1, 1) ~= "/" then
    local env = os.getenv("PWD")
    if type(env) ~= "string" or env:sub(1, 1) ~= "/" then
      error(errors.new("io_error", "cannot tell the working directory (pwd gave nothing)"), 0)
    end
    out = env
  end
  cwd = out
  return cwd
end

-- path made absolute against the working directory (or against `base`, itself
-- absolute or relative to the working directory), normalized.
function M.absolute(path, base)
  if path:sub(1, 1) == "/" then return M.normalize(path) end
  base = base and M.absolute(base) or M.cwd()
  return M.normalize(base .. "/" .. path)
end

return M
