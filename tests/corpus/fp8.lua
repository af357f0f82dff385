-- fp8.lua: the two 8-bit float formats of Hopper's tensor cores (e4m3: no infinities, S.1111.111
-- is NaN, largest 448; e5m2: IEEE-like, largest 57344) as bytes and back, for the corpus's fp8
-- inputs and outputs (emu's arrays have no fp8 type: the runner keeps them as u8).
local M = {}

local formats = { e4m3 = { ebits = 4, mbits = 3, bias = 7 }, e5m2 = { ebits = 5, mbits = 2, bias = 15 } }
M.formats = formats

local function format(name)
  return formats[name] or error("fp8: unknown format " .. tostring(name), 0)
end

-- The value of byte b.
function M.decode(b, name)
  local f = format(name)
  local sign = (b >> 7) == 1 and -1 or 1
  local e = (b >> f.mbits) & ((1 << f.ebits) - 1)
  local m = b & ((1 << f.mbits) - 1)
  local emax = (1 << f.ebits) - 1
  if name == "e4m3" and e == emax and m == (1 << f.mbits) - 1 then return 0 / 0 end
  if name == "e5m2" and e == emax then return m == 0 and sign * math.huge or 0 / 0 end
  if e == 0 then return sign * m * 2.0 ^ (1 - f.bias - f.mbits) end
  return sign * (1 + m / (1 << f.mbits)) * 2.0 ^ (e - f.bias)
end

-- The byte nearest x (ties away from zero; x within the format's finite range).
function M.encode(x, name)
  local f = format(name)
  local sign = (x < 0) and 0x80 or 0
  local a = math.abs(x)
  if a == 0 then return sign end
  local e = math.floor(math.log(a, 2))
  if a / 2.0 ^ e >= 2 then e = e + 1 elseif a / 2.0 ^ e < 1 then e = e - 1 end
  if e < 1 - f.bias then e = 1 - f.bias end -- subnormal: the smallest exponent's step
  local q = math.floor(a / 2.0 ^ (e - f.mbits) + 0.5) -- in units of the step, the hidden bit included
  if q == 1 << (f.mbits + 1) then e, q = e + 1, 1 << f.mbits end
  if q < 1 << f.mbits then return sign | q end -- subnormal (or zero)
  local ef = e + f.bias
  local b = ef < 1 << f.ebits and sign | (ef << f.mbits) | (q - (1 << f.mbits))
  local v = b and M.decode(b, name)
  if not v or v ~= v or math.abs(v) == math.huge then
    error(string.format("fp8: %g is beyond %s's range", x, name), 0)
  end
  return b
end

-- An fp8 array on the device: `bytes` is the u8 array the kernel reads or writes; :read() gives
-- the values, as an mgpu array's read does.
function M.array(bytes, name)
  format(name)
  return { bytes = bytes, dtype = name, read = function(self)
    local b = self.bytes:read()
    local v = {}
    for i = 1, #b do v[i] = M.decode(b[i], name) end
    return v
  end }
end

return M
