-- run.lua: runs the corpus (tests/corpus/cases.lua) on emu (or a GPU).  Each case is one launch recorded
-- from a public code base's own host code (tests/corpus/*/launches.lua, written by
-- tests/corpus/shim): the runner rebuilds its memory (inputs from a seed, the rest as recorded),
-- its parameters (the recorded bytes with emu's addresses and tensor maps put where the
-- program's were), launches the recorded kernel with the recorded shape, and compares the output
-- with a reference computed here from the inputs.  A case with `xfail = "text"` must fail with
-- a message holding that text (passing is an error: XPASS).
--   mgpu-harness tests/corpus/run.lua [NAME_PATTERN [CASES_FILE [BACKEND]]]
-- ("" for the defaults: every case, cases.lua, emu; BACKEND cuda runs the same cases on a GPU)
local mgpu = require "mgpu"
local here = (arg and arg[0] or ""):match("^(.*)/run%.lua$") or "tests/corpus"
local ref = dofile(here .. "/reference.lua")
local fp8 = dofile(here .. "/fp8.lua")
local pattern = arg and arg[1] ~= "" and arg[1] or nil
local cases = dofile(arg and arg[2] and arg[2] ~= "" and arg[2] or here .. "/cases.lua")
local dev = mgpu.device(arg and arg[3] and arg[3] ~= "" and arg[3] or "emu")

-- CUtensorMapDataType (cuda.h) -> the array dtype of its elements and emu's type name
local map_types = { [0] = "u8", [1] = "u16", [2] = "u32", [3] = "i32", [4] = "u64", [5] = "i64", [6] = "f16",
  [7] = "f32", [8] = "f64", [9] = "bf16", [10] = "f32", [11] = "f32", [12] = "f32" }
local map_type_names = { [0] = "uint8", "uint16", "uint32", "int32", "uint64", "int64", "float16", "float32", "float64",
  "bfloat16", "float32_ftz", "tfloat32", "tfloat32_ftz" } -- dev:tensor_map's data_type (cuda.h's names)
local sizes = { e4m3 = 1, e5m2 = 1, u8 = 1, i8 = 1, u16 = 2, i16 = 2, f16 = 2, bf16 = 2, u32 = 4, i32 = 4, f32 = 4, u64 = 8, i64 = 8, f64 = 8 }
local swizzles = { [0] = "none", "32B", "64B", "128B" }
local interleaves = { [0] = "none", "16B", "32B" }
local l2s = { [0] = "none", "64B", "128B", "256B" }

local function fail(fmt, ...) error(string.format(fmt, ...), 0) end

local function unhex(h) return (h:gsub("..", function(b) return string.char(tonumber(b, 16)) end)) end

-- The recorded launch of a file whose kernel name holds `kernel` (a string, or a list of strings
-- it holds all of): exactly one must.
local recordings = {}
local function recorded_launch(file, kernel)
  if not recordings[file] then
    local list = {}
    local chunk = assert(loadfile(here .. "/" .. file, "t", { launch = function(t) list[#list + 1] = t end }))
    chunk()
    recordings[file] = list
  end
  local pieces = type(kernel) == "table" and kernel or { kernel }
  local found
  for _, l in ipairs(recordings[file]) do
    local all = true
    for _, p in ipairs(pieces) do all = all and l.kernel:find(p, 1, true) ~= nil end
    if all then
      if found then fail("%s: more than one recorded kernel holds %s", file, table.concat(pieces, " and ")) end
      found = l
    end
  end
  if not found then fail("%s: no recorded kernel holds %s", file, table.concat(pieces, " and ")) end
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

-- The bits of a 16-bit float (f16: 5 exponent bits, bf16: 8) holding x exactly (x came from such an
-- array, so no rounding is needed).
local function half_bits(x, dtype)
  local ebits, mbits = 5, 10
  if dtype == "bf16" then ebits, mbits = 8, 7 end
  local bias = (1 << (ebits - 1)) - 1
  local sign = (x < 0 or (x == 0 and 1 / x < 0)) and 1 or 0
  x = math.abs(x)
  local bits
  if x == 0 then bits = 0
  else
    local e = math.floor(math.log(x, 2))
    if x / 2.0 ^ e >= 2 then e = e + 1 elseif x / 2.0 ^ e < 1 then e = e - 1 end
    if e < 1 - bias then -- subnormal
      bits = math.floor(x / 2.0 ^ (1 - bias - mbits) + 0.5)
    else
      bits = ((e + bias) << mbits) | math.floor((x / 2.0 ^ e - 1) * (1 << mbits) + 0.5)
    end
  end
  return (sign << (ebits + mbits)) | bits
end

-- Bytes of a pointer to `arr` plus delta.
local function ptr_bytes(arr, delta)
  local base = string.unpack("<I8", mgpu.struct { { "ptr", arr } })
  return string.pack("<I8", base + delta)
end

local modules = {} -- loaded once per PTX file

local function splice(s, off, bytes) return s:sub(1, off) .. bytes .. s:sub(off + #bytes + 1) end

-- The case's launch rebuilt on emu: arrays by allocation id (what the kernel gets, and the
-- values the reference reads), the kernel and its launch table.  A case with `retype` gives an
-- input that a tensor map types otherwise (CUTLASS's UINT16 maps over f16) the map's type
-- holding the input's bits; without it the map names its type (`type =`).  A case with
-- `placeholder_maps` lets a map reach past its allocation (CUTLASS's grouped GEMM passes maps over
-- its pointer arrays with the first group's sizes and re-points them on the device before any copy):
-- such a map is made over zeros of its span, as its bytes are never read through it.
local function build(c, l)
  local dt = alloc_dtypes(c, l)
  local arrays, values, words = {}, {}, {}
  local retyped = {}
  if c.retype then
    for _, m in pairs(l.maps) do
      local want = map_types[m.type]
      if c.inputs[m.alloc] and want ~= c.inputs[m.alloc] and sizes[want] == 2 and sizes[c.inputs[m.alloc]] == 2 then
        retyped[m.alloc] = want
      end
    end
  end
  local made = {} -- each allocation's array type
  for id, a in pairs(l.allocs) do
    local t = a.init == "words" and "u32" or dt[id] or "u8"
    made[id] = fp8.formats[t] and "u8" or retyped[id] or t
    if a.bytes % sizes[t] ~= 0 then fail("allocation %d: %d bytes is not a whole number of %s", id, a.bytes, t) end
    local n = math.max(a.bytes // sizes[t], 1) -- an empty allocation (a workspace of 0 bytes) gets one element
    if c.inputs and c.inputs[id] and fp8.formats[t] then -- fp8: seeded values rounded to it, as bytes
      local r = c.range or 1
      local v = dev:array("f32", n, { fill = "random", seed = c.seed or id, min = -r, max = r }):read()
      for i = 1, n do v[i] = fp8.encode(v[i], t) end
      arrays[id] = dev:array("u8", v)
      values[id] = fp8.array(arrays[id], t)
    elseif fp8.formats[t] and a.init ~= "data" then -- an fp8 output
      arrays[id] = dev:array("u8", n)
      values[id] = fp8.array(arrays[id], t)
    elseif c.inputs and c.inputs[id] then -- the program's values (perhaps made by a kernel of its own) are not stored
      local r = c.range or 1
      values[id] = dev:array(t, n, { fill = "random", seed = c.seed or id, min = -r, max = r })
      arrays[id] = values[id]
      if retyped[id] then
        local bits = values[id]:read()
        for i = 1, #bits do bits[i] = half_bits(bits[i], t) end
        arrays[id] = dev:array(retyped[id], bits)
        dt[id] = retyped[id]
      end
    elseif a.init == "data" then
      fail("allocation %d holds the program's data (%d bytes) and the case names no input for it", id, a.bytes)
    else
      arrays[id] = dev:array(t, n)
      values[id] = arrays[id]
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
    if t.type >= 10 or made[t.alloc] ~= map_types[t.type] then
      opts.data_type = map_type_names[t.type] -- a map typed apart from its array
    end
    local span = t.dims[1] * sizes[map_types[t.type]]
    for i, st in ipairs(t.strides) do span = span + st * (t.dims[i + 1] - 1) end
    if span > l.allocs[t.alloc].bytes - t.delta then
      if not c.placeholder_maps then
        fail("tensor map %d spans %d bytes, past the end of allocation %d (%d bytes)", m, span, t.alloc, l.allocs[t.alloc].bytes)
      end
      arr, opts.offset, opts.data_type = dev:array("u8", span), nil, map_type_names[t.type]
    end
    maps[m] = dev:tensor_map(arr, opts)
  end
  local params = {}
  for i, h in ipairs(l.params) do params[i] = unhex(h) end
  local ptr_params = {}
  for _, r in ipairs(l.refs) do
    local bytes = r.map and maps[r.map] and maps[r.map]:bytes() or ptr_bytes(arrays[r.ptr], r.delta)
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
  modules[c.ptx] = modules[c.ptx] or dev:load(here .. "/" .. c.ptx)
  local k = modules[c.ptx]:kernel(l.kernel)
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
  local launch = { grid = l.grid, block = l.block, smem = l.smem, cluster = l.cluster, args = args, time = false }
  if dev.backend == "emu" then launch.timeout_s = c.timeout_s or 120 end
  return k, launch, values
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
    local shown = msg:gsub("\n.*", ""):gsub("_Z[%w_]+", function(n) -- long mangled names shortened
      return #n > 60 and n:sub(1, 40) .. "..." or n
    end)
    print(string.format("%-8s %-28s %s", status, c.name, shown:sub(1, 400)))
    io.stdout:flush()
  end
end
print(string.format("corpus: %d ok, %d xfail, %d mismatch, %d failed", counts.ok, counts.xfail, counts.mismatch,
  counts.failed))
os.exit((counts.mismatch + counts.failed == 0) and 0 or 1)
