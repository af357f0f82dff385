-- selftest_cases.lua: the runner's own verdicts (ctest corpus_runner): one real case each way.
-- Expected: 1 ok, 1 xfail, 1 mismatch, 2 failed (an XPASS, and an xfail failing otherwise).
local here = (arg and arg[0] or ""):match("^(.*)/run%.lua$") or "tests/corpus"
local cases = dofile(here .. "/cases.lua")
local base
for _, c in ipairs(cases) do if c.name == "samples_f16_wmma_shmem" then base = c end end
assert(base, "selftest: samples_f16_wmma_shmem is not in cases.lua")

local function variant(name, t)
  local c = {}
  for k, v in pairs(base) do c[k] = v end
  for k, v in pairs(t) do c[k] = v end
  c.name = name
  return c
end
local transposed = {}
for k, v in pairs(base.check) do transposed[k] = v end
transposed.c_layout = "nm" -- D read column-major: the reference no longer matches

return {
  variant("self_ok", {}),
  variant("self_mismatch", { check = transposed }),
  variant("self_xfail", { check = transposed, xfail = "mismatch" }),
  variant("self_xpass", { xfail = "mismatch" }),
  variant("self_xfail_otherwise", { check = transposed, xfail = "not supported" }),
}
