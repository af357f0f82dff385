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

-- os.execute(cmd) whose command Ctrl-C stopped raises interrupted: system() ignores SIGINT in
-- the caller while it waits, so a Ctrl-C reaches only the command, and a caller that took its
-- failure for an ordinary one would go on (a `slurm --wait` loop never ending, an nvcc stopped
-- by Ctrl-C reported as a failed compile).  Returns os.execute's results otherwise.  what: the
-- command, for the message.
function M.execute(cmd, what)
  local a, how, code = os.execute(cmd)
  local sig
  if type(a) == "number" then -- Lua 5.1 / LuaJIT: a wait status
    local low = a % 128 -- WTERMSIG when the low 7 bits are neither 0 (exited) nor 0x7f (stopped)
    if low ~= 0 and low ~= 127 then sig = low end
  elseif how == "signal" then
    sig = code
  end
  if sig == 2 then error(M.new("interrupted", "interrupted (Ctrl-C) while " .. what .. " ran"), 0) end
  return a, how, code
end

return M
