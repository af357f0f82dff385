-- mgpu.files: the few file operations the Lua library shares (whether a
-- file exists, its whole text, a JSON file decoded), with errors as values.
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

-- The file decoded as JSON (errors name the file, and line and column).
function M.read_json(path)
  return core.json_decode(M.read_or_fail(path), path)
end

return M
