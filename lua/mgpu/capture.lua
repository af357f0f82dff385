-- mgpu.capture: replays what `mgpu-harness exec --capture DIR` wrote (DIR/launches.lua, which
-- calls replay): each launch of the program on a device of the harness (emu unless the script's
-- first argument names another backend), from the inputs the program gave it, and every buffer
-- it reached checked byte for byte against the program's own run (one the launch left unchanged
-- against its bytes before).  Device pointers and tensor maps inside parameters point at the
-- replay's arrays; a pointer into the middle of an allocation passed as a pointer parameter gets
-- an array of that allocation's tail (docs/cudart.md).
local mgpu = require "mgpu"
local errors = require "mgpu.errors"

local M = {}

local function address(arr)
  return (string.unpack("<I8", mgpu.struct { { "ptr", arr } }))
end

-- The value of a scalar parameter from its bytes, as kernel:launch takes it.
local function scalar(p, bytes)
  local t, n = p.type, #bytes
  if t == "f32" then return (string.unpack("<f", bytes)) end
  if t == "f64" then return (string.unpack("<d", bytes)) end
  if t:sub(1, 1) == "s" then return (string.unpack("<i" .. n, bytes)) end
  if t == "f16" or t == "bf16" then
    local bits = string.unpack("<I2", bytes)
    if t == "bf16" then return (string.unpack("<f", string.pack("<I4", bits << 16))) end
    local s, e, m = bits >> 15, (bits >> 10) & 31, bits & 1023
    local v = e == 0 and m * 2.0 ^ -24 or (e == 31 and (m == 0 and math.huge or 0 / 0) or (1 + m / 1024) * 2.0 ^ (e - 15))
    return s == 1 and -v or v
  end
  if n == 8 then return (string.unpack("<i8", bytes)) end
  return (string.unpack("<I" .. n, bytes))
end

local function put(bytes, at, s)
  return bytes:sub(1, at) .. s .. bytes:sub(at + #s + 1)
end

-- One launch: its arrays, arguments, the launch, the check.  Returns ok, what (ok nil: not replayable).
local function replay_one(dev, dir, modules, L)
  local mod = modules[L.module]
  if not mod then
    mod = dev:load(dir .. "/" .. L.module)
    modules[L.module] = mod
  end
  local k = mod:kernel(L.kernel)
  local arrays = {}
  for j, b in ipairs(L.buffers) do arrays[j] = dev:load_npy(dir .. "/" .. b.input) end
  local params = k:params()
  local args, tails = {}, {}
  for i, p in ipairs(L.params) do
    local info = params[i]
    local bytes = p.bytes
    if info.aggregate then
      for _, m in ipairs(p.tmaps or {}) do
        local map = dev:tensor_map(arrays[m.buf], { dims = m.dims, strides = #m.strides > 0 and m.strides or nil,
          box = m.box, element_strides = m.element_strides, interleave = m.interleave, swizzle = m.swizzle, l2 = m.l2,
          oob = m.oob, data_type = m.data_type, offset = m.offset })
        bytes = put(bytes, m.at, map)
      end
      for _, q in ipairs(p.ptrs) do bytes = put(bytes, q.at, string.pack("<I8", address(arrays[q.buf]) + q.offset)) end
      args[i] = bytes
    elseif #p.ptrs > 0 then
      local q = p.ptrs[1]
      if info.ptr and q.offset == 0 then
        args[i] = arrays[q.buf]
      elseif info.ptr then -- the allocation's tail: an array of its own
        local whole = arrays[q.buf]:read()
        local tail = {}
        for x = q.offset + 1, #whole do tail[#tail + 1] = whole[x] end
        local t = dev:array("u8", tail)
        tails[#tails + 1] = { buf = q.buf, offset = q.offset, array = t }
        args[i] = t
      else
        args[i] = address(arrays[q.buf]) + q.offset
      end
    elseif info.ptr then -- a pointer into no allocation of the program's: NULL, or nothing to replay it with
      local v = string.unpack("<I8", bytes .. string.rep("\0", 8 - #bytes))
      if v ~= 0 then
        return nil, string.format("parameter %d is a pointer into no allocation the program made (0x%x)", i, v)
      end
      args[i] = mgpu.null
    else
      args[i] = scalar(info, bytes)
    end
  end
  local c = L.cluster
  local launch = { grid = L.grid, block = L.block, smem = L.smem, args = args, cooperative = L.cooperative or nil }
  if c[1] > 0 and (c[1] * c[2] * c[3] > 1) then launch.cluster = c end
  k:launch(launch)
  for _, t in ipairs(tails) do -- what the kernel wrote through the tail, back into its allocation
    local whole, part = arrays[t.buf]:read(), t.array:read()
    for x = 1, #part do whole[t.offset + x] = part[x] end
    arrays[t.buf]:write(whole)
  end
  -- every buffer the launch reached: one it changed against its bytes after, one it left as it was
  -- against its bytes before (a replay that writes there differs from the program's run too)
  local written = 0
  for j, b in ipairs(L.buffers) do
    local want = dev:load_npy(dir .. "/" .. (b.output or b.input))
    local r = arrays[j]:compare(want, { atol = 0, rtol = 0 })
    if r.mismatches > 0 then
      return false, string.format("buffer %d (%d bytes) differs from the program's in %d elements (first at %s)%s", j,
        b.size, r.mismatches, tostring(r.first), b.output and "" or ": the program's launch left it unchanged")
    end
    if b.output then written = written + 1 end
  end
  return true, string.format("%d buffer%s checked (%d changed by the launch)", #L.buffers, #L.buffers == 1 and "" or "s",
    written)
end

-- replay(backend, cap): cap = {dir=, launches={...}} as launches.lua has it.  Raises check_failed
-- naming the launches whose outputs differ.
function M.replay(backend, cap)
  local dev = mgpu.device(backend or "emu")
  local modules, bad, skipped = {}, {}, 0
  for n, L in ipairs(cap.launches) do
    local ok, what -- ok nil: not replayed (the capture marked it, or replay_one found it cannot be)
    if L.skip or L.failed then
      what = L.skip or "it failed in the program's run"
    else
      ok, what = replay_one(dev, cap.dir, modules, L)
    end
    if ok == nil then
      skipped = skipped + 1
      print(string.format("launch %d %s: not replayed: %s", n, L.kernel, what))
    else
      print(string.format("launch %d %s: %s%s", n, L.kernel, ok and "same outputs, " or "DIFFERENT: ", what))
      if not ok then bad[#bad + 1] = n end
    end
  end
  print(string.format("%d launch%s replayed, %d differ, %d not replayed", #cap.launches - skipped,
    #cap.launches - skipped == 1 and "" or "es", #bad, skipped))
  if #bad > 0 then
    error(errors.new("check_failed", "the replay's outputs differ from the program's in launch(es) "
      .. table.concat(bad, ", ")), 0)
  end
end

return M
