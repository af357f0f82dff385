-- mgpu.errors: error values.  Every failure a script can act on is a table
-- {code=, message=, ...facts} with a metatable whose __tostring is the
-- message; the C core raises the same shape.
local core = require "mgpu.core"

local M = {}

-- Creates an error value: M.new("bad_argument", "what is wrong", {facts})
function M.new(code, message, facts)
  local e = {}
  if facts then
    for k, v in pairs(facts) do e[k] = v end
  end
  e.code = code
  e.message = message
  return core.error(e)
end

-- True when v is an mgpu error (optionally of the given code).
function M.is(v, code)
  return type(v) == "table" and type(v.code) == "string" and type(v.message) == "string"
    and (code == nil or v.code == code)
end

return M
