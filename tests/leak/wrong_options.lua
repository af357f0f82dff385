-- wrong_options.lua: every API function called with a wrong-typed option
-- after a valid allocation must refuse it as a bad_argument naming the field,
-- and (under AddressSanitizer, where ctest runs it with detect_leaks=1) leak
-- nothing.  Run by mgpu-harness: `mgpu-harness tests/leak/wrong_options.lua SRC`.
local core = require "mgpu.core"
local src = assert(arg[1], "usage: wrong_options.lua SOURCE_DIR")
local dir = os.getenv("TMPDIR") or "/tmp"
local failures, checked = 0, 0

local function refuses(what, field, f, ...)
  checked = checked + 1
  local ok, err = pcall(f, ...)
  local good = not ok and type(err) == "table" and err.code == "bad_argument"
    and tostring(err.message):find(field, 1, true)
  if not good then
    failures = failures + 1
    io.stderr:write(string.format("FAIL %s: %s\n", what, ok and "accepted" or tostring(err and err.message or err)))
  end
end

local dev = core.device("emu")
local a = dev:array("f32", 1000000, { fill = "random", seed = 3 }) -- a valid 4 MB allocation first
refuses("array seed", "array.seed", dev.array, dev, "f32", 1000000, { fill = "random", seed = "x" })
refuses("array min", "array.min", dev.array, dev, "f32", 1000000, { fill = "random", min = "lo" })
refuses("array step", "array.step", dev.array, dev, "f32", 1000000, { fill = "ramp", step = {} })
refuses("array fill", "array.fill", dev.array, dev, "f32", 1000000, { fill = 7 })
refuses("array shape", "array.shape", dev.array, dev, "f32", 1000000, { shape = 5 })
refuses("array values", "values must be numbers", dev.array, dev, "f32", { 1, 2, "three" })
refuses("array key", "seeed", dev.array, dev, "f32", 10, { seeed = 1 })
refuses("write values", "values must be numbers", a.write, a, { 1, 2, "x" })
refuses("compare atol", "compare.atol", a.compare, a, a, { atol = "tight" })
refuses("device sms", "device.sms", core.device, "emu", { sms = "many" })
refuses("device strict", "device.strict", core.device, "emu", { strict = "yes" })
refuses("device key", "smss", core.device, "emu", { smss = 4 })
refuses("spec entries", "entries", core.spec, { grid = 1, block = 128, entries = "x" })
refuses("spec scope", "scope", core.spec, { grid = 1, block = 128, scope = 3, entries = 9 })
refuses("dump summary", "dump.summary", core.dump, { buffer = "b", meta = "m", out = "o", summary = "yes" })
refuses("dump key", "outt", core.dump, { buffer = "b", meta = "m", outt = "o" })
refuses("load opt_level", "load.opt_level", dev.load, dev, src .. "/ptx/copy.ptx", { opt_level = "max" })
refuses("load instrument", "load.instrument", dev.load, dev, src .. "/ptx/copy.ptx", { instrument = "thread" })
refuses("load key", "instrumnet", dev.load, dev, src .. "/ptx/copy.ptx", { instrumnet = "warp" })
refuses("load source", "load.name", dev.load, dev, { source = ".version 8.0\n.target sm_90\n.address_size 64\n", name = 1 })

local m = dev:load(src .. "/ptx/copy.ptx")
local kname = m:kernels()[1]
local k = m:kernel(kname)
local np = #k:params()
local args = {}
for i, p in ipairs(k:params()) do args[i] = p.ptr and dev:array("u8", 1 << 20) or 1 end
refuses("launch smem", "launch.smem", k.launch, k, { grid = 1, block = 32, smem = "lots", args = args })
refuses("launch grid", "launch.grid", k.launch, k, { grid = "one", block = 32, args = args })
refuses("launch time", "launch.time", k.launch, k, { grid = 1, block = 32, time = "no", args = args })
refuses("launch args", "launch.args", k.launch, k, { grid = 1, block = 32, args = 5 })
refuses("launch key", "smme", k.launch, k, { grid = 1, block = 32, smme = 512, args = args })
refuses("launch profile", "launch.profile", k.launch, k, { grid = 1, block = 32, profile = 3, args = args })
local mi = dev:load(src .. "/ptx/copy.ptx", { instrument = "warp" })
local ki = mi:kernel(kname)
refuses("profile entries", "profile.entries", ki.launch, ki, { grid = 1, block = 32, args = args, profile = { entries = "x" } })
refuses("profile retry", "profile.retry", ki.launch, ki, { grid = 1, block = 32, args = args, profile = { retry = "no" } })
refuses("profile key", "entires", ki.launch, ki, { grid = 1, block = 32, args = args, profile = { entires = 9 } })
local run = ki:launch { grid = 1, block = 32, args = args }
refuses("trace dump counters", "dump.counters", run.trace.dump, run.trace, dir .. "/never.json", { counters = "x" })
refuses("trace dump key", "countres", run.trace.dump, run.trace, dir .. "/never.json", { countres = 5 })
refuses("tensor map box", "box", dev.tensor_map, dev, a, { box = "x" })
refuses("tensor map key", "boxx", dev.tensor_map, dev, a, { boxx = { 4 } })
refuses("struct field", "struct field 1", core.struct, { { "f32", "x" } })
assert(np > 0)
print(string.format("wrong_options: %d calls refused as they should, %d did not", checked - failures, failures))
if failures > 0 then error(string.format("%d option errors were not refused as bad_argument", failures), 0) end
