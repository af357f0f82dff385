-- run.lua: runs the corpus (tests/corpus/cases.lua) on emu.  Each case is one launch recorded
-- from a public code base's own host code (tests/corpus/*/launches.lua, written by
-- tests/corpus/shim): the runner rebuilds its memory (inputs from a seed, the rest as recorded),
-- its parameters (the recorded bytes with emu's addresses and tensor maps put where the
-- program's were), launches the recorded kernel with the recorded shape, and compares the output
-- with a reference computed here from the inputs.  A case with `xfail = "text"` must fail with
-- a message holding that text (passing is an error: XPASS).
--   mgpu-harness tests/corpus/run.lua [NAME_PATTERN]
local mgpu = require "mgpu"
local here = (arg and arg[0] or ""):match("^(.*)/run%.lua$") or "tests/corpus"
local ref = dofile(here .. "/reference.lua")
local pattern = arg and arg[1]
local cases = dofile(here .. "/cases.lua")
local dev = mgpu.device("emu")

-- CUtensorMapDataType (cuda.h) -> the array dtype of its elements and emu's type name
local map_types = { [0] = "u8", [1] = "u16", [2] = "u32", [3] = "i32", [4] = "u64", [5] = "i64", [6] = "f16",
  [7] = "f32", [8] = "f64", [9] = "bf16", [10] = "f32", [11] = "f32", [12] = "f32" }
local map_type_names = { [0] = "uint8", "uint16", "uint32", "int32", "uint64", "int64", "float16", "float32", "float64",
  "bfloat16", "float32_ftz", "tfloat32", "tfloat32_ftz" } -- dev:tensor_map's data_type (cuda.h's names)
local sizes = { u8 = 1, i8 = 1, u16 = 2, i16 = 2, f16 = 2, bf16 = 2, u32 = 4, i32 = 4, f32 = 4, u64 = 8, i64 = 8, f64 = 8 }
local swizzles = { [0] = "none", "32B", "64B", "128B" }
local interleaves = { [0] = "none", "16B", "32B" }
local l2s = { [0] = "none", "64B", "128B", "256B" }

local function fail(fmt, ...) error(string.format(fmt, ...), 0) end

local function unhex(h) return (h:gsub("..", function(b) return string.char(tonumber(b, 16)) end)) end

-- The recorded launches of a file, the one whose kernel name holds `kernel` (exactly one).
local recordings = {}
local function recorded_launch(file, kernel)
  if not recordings[file] then
    local list = {}
    local chunk = assert(loadfile(here .. "/" .. file, "t", { launch = function(t) list[#list + 1] = t end }))
    chunk()
    recordings[file] = list
  end
  local found
  for _, l in ipairs(recordings[file]) do
    if l.kernel:find(kernel, 1, true) then
      if found then fail("%s: more than one recorded kernel holds %q", file, kernel) end
      found = l
    end
  end
  if not found then fail("%s: no recorded kernel holds %q", file, kernel) end
  return found
end

-- The dtype of each allocation: the case's inputs and output, else the tensor maps over it.
local function alloc_dtypes(c, l)
  local dt = {}
  for id, t in pairs(c.inputs or {}) do dt[id] = t end
  for id, t in pairs(c.outputs or {}) do dt[id] = t end
  for _, m in pairs(l.maps) do
    dt[m.alloc] = dt[m.alloc] or map_types[m.type]
  end
  return dt
end

-- Bytes of a pointer to `arr` plus delta.
local function ptr_bytes(arr, delta)
  local base = string.unpack("<I8", mgpu.struct { { "ptr", arr } })
  return string.pack("<I8", base + delta)
end

local function splice(s, off, bytes) return s:sub(1, off) .. bytes .. s:sub(off + #bytes + 1) end

-- The case's launch rebuilt on emu: arrays by allocation id, the kernel and its launch table.
local function build(c, l)
  local dt = alloc_dtypes(c, l)
  local arrays, words = {}, {}
  for id, a in pairs(l.allocs) do
    local t = a.init == "words" and "u32" or dt[id] or "u8"
    if a.bytes % sizes[t] ~= 0 then fail("allocation %d: %d bytes is not a whole number of %s", id, a.bytes, t) end
    local n = a.bytes // sizes[t]
    if c.inputs and c.inputs[id] then -- the program's values (perhaps made by a kernel of its own) are not stored
      local r = c.range or 1
      arrays[id] = dev:array(t, n, { fill = "random", seed = c.seed or id, min = -r, max = r })
    elseif a.init == "data" then
      fail("allocation %d holds the program's data (%d bytes) and the case names no input for it", id, a.bytes)
    else
      arrays[id] = dev:array(t, n)
      if a.init == "words" then
        local w = {}
        for i = 1, #a.words, 2 do
          for _ = 1, a.words[i + 1] do w[#w + 1] = a.words[i] end
        end
        words[id] = w
      end
    end
  end
  local maps = {}
  for m, t in pairs(l.maps) do
    local opts = { dims = t.dims, strides = t.strides, box = t.box, element_strides = t.element_strides,
      swizzle = swizzles[t.swizzle], interleave = interleaves[t.interleave], l2 = l2s[t.l2],
      oob = t.oob == 1 and "nan" or "zero" }
    local arr = arrays[t.alloc]
    if not arr then fail("tensor map %d: allocation %d was not recorded", m, t.alloc) end
    if t.delta ~= 0 then opts.offset = t.delta end -- a map based inside its array
    if t.type >= 10 or dt[t.alloc] ~= map_types[t.type] then
      opts.data_type = map_type_names[t.type] -- a map typed apart from its array
    end
    maps[m] = dev:tensor_map(arr, opts)
  end
  local params = {}
  for i, h in ipairs(l.params) do params[i] = unhex(h) end
  local ptr_params = {}
  for _, r in ipairs(l.refs) do
    local bytes = r.map and maps[r.map] or ptr_bytes(arrays[r.ptr], r.delta)
    if r.ptr and not arrays[r.ptr] then fail("a pointer to allocation %d, which was not recorded", r.ptr) end
    if r.map and not bytes then fail("tensor map %d was not recorded", r.map) end
    if r.where == "param" then
      params[r.at] = splice(params[r.at], r.off, bytes)
      if r.ptr and r.off == 0 and #l.params[r.at] == 16 then ptr_params[r.at] = r end
    else
      local w = words[r.at]
      if not w then fail("allocation %d holds a pointer or map but was not stored word by word", r.at) end
      for j = 0, #bytes // 4 - 1 do w[r.off // 4 + j + 1] = string.unpack("<I4", bytes, 4 * j + 1) end
    end
  end
  for id, w in pairs(words) do arrays[id]:write(w) end
  local k = dev:load(here .. "/" .. c.ptx):kernel(l.kernel)
  local args = {}
  for i, p in ipairs(k:params()) do
    local b = params[i]
    if not b then fail("parameter %d (%s) was not recorded", i, p.name) end
    if #b ~= p.size then fail("parameter %d (%s): %d bytes recorded, the PTX says %d", i, p.name, #b, p.size) end
    if p.aggregate then
      args[i] = b
    elseif ptr_params[i] then
      local r = ptr_params[i]
      if r.delta ~= 0 then fail("parameter %d points %d bytes into allocation %d", i, r.delta, r.ptr) end
      args[i] = arrays[r.ptr]
    elseif p.ptr and string.unpack("<I8", b) == 0 then
      args[i] = mgpu.null
    else
      local f = p.type:match("f(%d+)$")
      local signed = p.type:match("^%.?s")
      if f then args[i] = string.unpack(f == "32" and "<f" or "<d", b)
      else args[i] = string.unpack((signed and "<i" or "<I") .. p.size, b) end
    end
  end
  local launch = { grid = l.grid, block = l.block, smem = l.smem, cluster = l.cluster, args = args,
    timeout_s = c.timeout_s or 120, time = false }
  return k, launch, arrays
end

local function run_case(c)
  local l = recorded_launch(c.launches, c.kernel)
  local k, launch, arrays = build(c, l)
  local t0 = os.time()
  k:launch(launch)
  local secs = os.time() - t0
  local bad, n, first = ref.check(c.check, arrays)
  if bad > 0 then
    error(string.format("mismatch: %d of %d elements outside tolerance (first: %s)", bad, n, first), 0)
  end
  return string.format("%d elements within tolerance, %d s", n, secs)
end

local counts = { ok = 0, xfail = 0, mismatch = 0, failed = 0 }
for _, c in ipairs(cases) do
  if not pattern or c.name:find(pattern) then
    local ok, res = pcall(run_case, c)
    local msg = ok and res or (type(res) == "table" and (res.message or tostring(res.code)) or tostring(res))
    local status
    if c.xfail then
      if ok then status = "failed"; msg = "XPASS (expected to fail with " .. c.xfail .. "): " .. msg
      elseif msg:find(c.xfail, 1, true) then status = "xfail"
      else status = "failed"; msg = "failed otherwise than expected (" .. c.xfail .. "): " .. msg end
    else
      status = ok and "ok" or (msg:match("^mismatch") and "mismatch" or "failed")
    end
    counts[status] = counts[status] + 1
    print(string.format("%-8s %-28s %s", status, c.name, (msg:gsub("\n.*", ""):sub(1, 300))))
    io.stdout:flush()
  end
end
print(string.format("corpus: %d ok, %d xfail, %d mismatch, %d failed", counts.ok, counts.xfail, counts.mismatch,
  counts.failed))
os.exit((counts.mismatch + counts.failed == 0) and 0 or 1)
