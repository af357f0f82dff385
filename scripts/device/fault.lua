-- fault.lua: the device check's faulting kernel, run by check.lua in a process
-- of its own: after an illegal address the CUDA driver says the process must
-- be terminated and relaunched, so the harness declares the device lost for
-- the process and refuses every further call on it.  Prints two lines for
-- check.lua to read:
--   FAULT <code> <message>   what the faulting launch raised (code "none": it did not fault)
--   AFTER <code> <message>   what a further use of the same device then did (code "ok": it worked)
--   mgpu-harness scripts/device/fault.lua [BACKEND]
local mgpu = require "mgpu"

local dev = mgpu.device(arg[1] or "cuda")
local function line(tag, ok, err, detail)
  local code = ok and (detail or "ok") or (type(err) == "table" and err.code or "error")
  local msg = ok and "" or tostring(err)
  print(tag .. " " .. code .. " " .. (msg:gsub("\n", " ")))
  io.stdout:flush()
end

-- a store 1 TiB past a 16-byte array: an illegal address on a GPU, a bounds fault on emu
local src = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry fault(.param .u64 p)\n{\n"
  .. ".reg .b64 %rd<3>;\n.reg .b32 %r<2>;\nld.param.u64 %rd1, [p];\ncvta.to.global.u64 %rd1, %rd1;\n"
  .. "add.s64 %rd2, %rd1, 1099511627776;\nmov.u32 %r1, 1;\nst.global.u32 [%rd2], %r1;\nret;\n}\n"
local k = dev:load({ name = "fault.ptx", source = src }):kernel("fault")
local a = dev:array("u32", 4)
local ok, err = pcall(k.launch, k, { grid = 1, block = 32, args = { a } })
line("FAULT", ok, err, "none")
ok, err = pcall(function()
  local b = dev:array("u32", { 1, 2, 3, 4 })
  return b:read(4)
end)
line("AFTER", ok, err)
