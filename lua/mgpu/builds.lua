-- mgpu.builds: compile-time axes (issue 35).  An experiment's `kernel`,
-- `defines` and `nvcc_flags` may be functions of the point; `defines` may also
-- list axis names (`defines = {"TILE"}`: -DTILE=<the point's TILE>) or give
-- fixed values (`{TILE = 32}`).  Each distinct build (arch, flags, defines) of
-- a .cu module is compiled once; builds are numbered over the whole sweep
-- (every point the filter kept, before sharding), so shards, workers and merge
-- agree on build N.  A results folder keeps each build's PTX (builds/build-N.ptx,
-- with its flags, nvcc's version and the PTX's SHA-256 in the manifest), so it
-- replays without nvcc and without the cache.  A kernel named as a C++ template
-- instance (`mm_tiled<32>`) is found among the module's entries by its mangled
-- name (Itanium ABI: _Z8mm_tiledILi32EE...).
local core = require "mgpu.core"
local errors = require "mgpu.errors"
local files = require "mgpu.files"

local M = {}

local function bad(msg) error(errors.new("bad_argument", msg), 0) end

-- Whether the experiment's build or kernel depends on the point.
function M.varies(exp)
  return type(exp.kernel) == "function" or type(exp.nvcc_flags) == "function" or exp.defines ~= nil
end

-- The experiment's kernel/defines/nvcc_flags fields, checked before the first point.
function M.validate(exp)
  local k = exp.kernel
  if not ((type(k) == "string" and k ~= "") or type(k) == "function") then
    bad("experiment.kernel must name the kernel (a string; a C++ template instance as written, \"mm_tiled<32>\") "
      .. "or be a function(point) returning its name, got " .. (type(k) == "string" and "the empty string" or type(k)))
  end
  local d = exp.defines
  if d ~= nil and type(d) ~= "table" and type(d) ~= "function" then
    bad("experiment.defines must be a list of axis names ({\"TILE\"}: -DTILE=<the point's TILE>), a table "
      .. "{NAME = value} or a function(point) returning one, got " .. type(d))
  end
  local f = exp.nvcc_flags
  if f ~= nil and type(f) ~= "table" and type(f) ~= "function" then
    bad("experiment.nvcc_flags must be a list of strings or a function(point) returning one, got " .. type(f))
  end
  if type(f) == "table" then
    for i, s in ipairs(f) do
      if type(s) ~= "string" then bad(string.format("experiment.nvcc_flags[%d] must be a string, got %s", i, type(s))) end
    end
  end
end

local function copy(p)
  local c = {}
  for k, v in pairs(p) do c[k] = v end
  return c
end

-- f(point) or the value itself; an error in f names the field.
local function of_point(v, point, what)
  if type(v) ~= "function" then return v end
  local ok, r = xpcall(v, function(e)
    if errors.is(e) then return e end
    return errors.new("script_error", debug.traceback(what .. "(point): " .. tostring(e), 2))
  end, copy(point))
  if not ok then error(r, 0) end
  return r
end

local function define_value(v, name)
  if type(v) == "boolean" then return v and "1" or "0" end
  if type(v) == "number" then
    if v == math.floor(v) and math.abs(v) < 2 ^ 53 then return string.format("%.0f", v) end
    return string.format("%.17g", v)
  end
  if type(v) == "string" and not v:find("[%c]") then return v end
  bad(string.format("experiment.defines: %s's value must be a number, a boolean or a string without control "
    .. "characters, got %s", name, type(v) == "string" and string.format("%q", v) or type(v)))
end

-- The sorted {{name, value}, ...} of a point's defines.
local function defines_of(exp, point)
  local d = of_point(exp.defines, point, "experiment.defines")
  if d == nil then return {} end
  if type(d) ~= "table" then bad("experiment.defines(point) must return a table {NAME = value}, got " .. type(d)) end
  local out, seen = {}, {}
  local function add(name, v)
    if type(name) ~= "string" or not name:match("^[%a_][%w_]*$") then
      bad("experiment.defines: " .. tostring(name) .. " is not a C macro name")
    end
    if seen[name] then bad("experiment.defines: " .. name .. " is defined twice") end
    seen[name] = true
    out[#out + 1] = { name, define_value(v, name) }
  end
  for k, v in pairs(d) do
    if type(k) == "number" then -- a list entry names an axis: its value at this point
      if type(v) ~= "string" then bad("experiment.defines: a list entry must name an axis, got " .. type(v)) end
      if point[v] == nil then
        bad(string.format("experiment.defines names %s, which is not an axis of the sweep", v))
      end
      add(v, point[v])
    else
      add(k, v)
    end
  end
  table.sort(out, function(a, b) return a[1] < b[1] end)
  return out
end

-- The point's kernel name (checked).
function M.kernel_of(exp, point)
  local k = of_point(exp.kernel, point, "experiment.kernel")
  if type(k) ~= "string" or k == "" then
    bad("experiment.kernel(point) must return the kernel's name, got " .. (type(k) == "string" and "\"\"" or type(k)))
  end
  return k
end

-- The point's build: {arch =, flags = {the user's flags, then -DNAME=value}, defines = {NAME = value}, key =}.
function M.build_of(exp, point, arch, default_flags)
  local flags = of_point(exp.nvcc_flags, point, "experiment.nvcc_flags") or default_flags
  if type(flags) ~= "table" then bad("experiment.nvcc_flags(point) must return a list of strings, got " .. type(flags)) end
  local all, defs = {}, {}
  for i, s in ipairs(flags) do
    if type(s) ~= "string" then bad(string.format("experiment.nvcc_flags[%d] must be a string, got %s", i, type(s))) end
    all[#all + 1] = s
  end
  for _, nv in ipairs(defines_of(exp, point)) do
    all[#all + 1] = "-D" .. nv[1] .. "=" .. nv[2]
    defs[nv[1]] = nv[2]
  end
  return { arch = arch, flags = all, defines = next(defs) and defs or nil,
    key = arch .. "\0" .. table.concat(all, "\0") }
end

-- The builds of a sweep: points = the indices of every point the filter kept (the whole sweep's:
-- the numbering is the same in every shard), all[i] the point.  prior: the builds a manifest
-- recorded (a resumed or replayed run keeps their numbers).  Returns {list = {build...},
-- of = {[i] = build number}}; each build has index, arch, flags, defines, key, points (a count).
function M.plan(exp, all, points, arch, default_flags, prior)
  local list, by_key, of = {}, {}, {}
  for i, b in ipairs(prior or {}) do -- a manifest's: checked before use (a bad_results naming the field)
    local function fail(what)
      error(errors.new("bad_results", string.format("manifest.json: builds[%d].%s", i, what)), 0)
    end
    if type(b) ~= "table" then fail("... must be an object {index, arch, nvcc_flags, ...}") end
    if b.index ~= i then fail("index must be " .. i) end
    if type(b.arch) ~= "string" then fail("arch must be a string") end
    if type(b.nvcc_flags) ~= "table" then fail("nvcc_flags must be a list of strings") end
    for _, f in ipairs(b.nvcc_flags) do if type(f) ~= "string" then fail("nvcc_flags must be a list of strings") end end
    if b.ptx ~= nil and (type(b.ptx) ~= "string" or not b.ptx:match("^builds/build%-%d+%.ptx$")) then
      fail("ptx must be builds/build-N.ptx")
    end
    if b.sha256 ~= nil and (type(b.sha256) ~= "string" or not b.sha256:match("^%x+$")) then fail("sha256 must be hex") end
    local nb = { index = #list + 1, arch = b.arch, flags = b.nvcc_flags, defines = b.defines, points = 0,
      key = b.arch .. "\0" .. table.concat(b.nvcc_flags, "\0"), prior = b }
    list[#list + 1], by_key[nb.key] = nb, nb
  end
  local static = not (type(exp.nvcc_flags) == "function" or exp.defines ~= nil)
  local one = static and M.build_of(exp, {}, arch, default_flags) or nil
  for _, i in ipairs(points) do
    local b = one or M.build_of(exp, all[i], arch, default_flags)
    local have = by_key[b.key]
    if not have then
      b.index, b.points = #list + 1, 0
      list[#list + 1], by_key[b.key], have = b, b, b
    end
    have.points = have.points + 1
    of[i] = have.index
  end
  return { list = list, of = of }
end

local nvcc_version
-- nvcc's "release 13.0, V13.0.88" (nil when it cannot be asked).
function M.nvcc_version()
  if nvcc_version ~= nil then return nvcc_version or nil end
  local path = require("mgpu.nvcc").find()
  nvcc_version = false
  if path then
    local p = io.popen("'" .. path:gsub("'", "'\\''") .. "' --version 2>/dev/null")
    local out = p and p:read("*a") or ""
    if p then p:close() end
    nvcc_version = out:match("release [^\n]+") or out:match("[^\n]+$") or false
  end
  return nvcc_version or nil
end

-- Compiles build b of src into the cache (mgpu.nvcc) unless from_dir (a results folder) holds its PTX
-- already with the recorded SHA-256.  Sets b.text, b.sha256, b.nvcc, b.deps; a compile error is kept as
-- b.error {code, message, log} (the build's points fail with it), or raised when raise is set.
function M.compile(src, b, from_dir, raise)
  local prior = b.prior
  if prior and from_dir and prior.ptx then
    local path = from_dir .. "/" .. prior.ptx
    local text = files.read(path)
    if text and core.sha256_file(path) == prior.sha256 then
      b.text, b.sha256, b.nvcc, b.reused = text, prior.sha256, prior.nvcc, true
      return b
    end
  end
  if prior and prior.error then -- the run's build failed; it may compile now (a header fixed)
    b.prior = nil
  end
  local nvcc = require "mgpu.nvcc"
  local ok, path, text, deps = pcall(nvcc.compile, src, { arch = b.arch, nvcc_flags = b.flags })
  if not ok then
    if raise or not errors.is(path) or (path.code ~= "compile_failed") then error(path, 0) end
    b.error = { code = path.code, message = path.message, log = path.log }
    return b
  end
  b.text, b.sha256, b.nvcc, b.deps = text, core.sha256_file(path), M.nvcc_version(), deps
  b.cache_path = path
  return b
end

-- What the manifest records of a build (its PTX in the folder: builds/build-N.ptx).
function M.record(b)
  return { index = b.index, arch = b.arch, nvcc_flags = b.flags, defines = b.defines, nvcc = b.nvcc,
    sha256 = b.sha256, ptx = b.text and string.format("builds/build-%d.ptx", b.index) or nil,
    error = b.error and { code = b.error.code, message = b.error.message } or nil, points = b.points }
end

-- Writes the builds' PTX (and a failed build's nvcc log) into dir/builds/.
function M.write(dir, list)
  local any = false
  for _, b in ipairs(list) do if b.text or b.error then any = true end end
  if not any then return end
  core.mkdir_p(dir .. "/builds")
  for _, b in ipairs(list) do
    if b.text then core.write_file(string.format("%s/builds/build-%d.ptx", dir, b.index), b.text) end
    if b.error and b.error.log then core.write_file(string.format("%s/builds/build-%d.log", dir, b.index), b.error.log) end
  end
end

-- The names of a PTX text's kernels (.entry).
function M.entries(text)
  local names = {}
  for name in text:gmatch("%.entry%s+([%w_$]+)") do names[#names + 1] = name end
  return names
end

-- Itanium-ABI codes of C++'s builtin types (template type arguments).
local TYPE_CODES = {
  ["void"] = "v", ["bool"] = "b", ["char"] = "c", ["signed char"] = "a", ["unsigned char"] = "h", ["short"] = "s",
  ["unsigned short"] = "t", ["int"] = "i", ["unsigned"] = "j", ["unsigned int"] = "j", ["long"] = "l",
  ["unsigned long"] = "m", ["long long"] = "x", ["unsigned long long"] = "y", ["float"] = "f", ["double"] = "d",
  ["half"] = "6__half", ["__half"] = "6__half", ["__nv_bfloat16"] = "13__nv_bfloat16",
  ["int8_t"] = "a", ["uint8_t"] = "h", ["int16_t"] = "s", ["uint16_t"] = "t", ["int32_t"] = "i", ["uint32_t"] = "j",
  ["int64_t"] = "l", ["uint64_t"] = "m",
}

local function escape(s) return (s:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", "%%%0")) end

-- The Lua pattern of one template argument's mangling, or nil.
local function arg_pattern(a)
  a = a:gsub("^%s+", ""):gsub("%s+$", ""):gsub("%s+", " ")
  if a == "true" or a == "false" then return "Lb" .. (a == "true" and "1" or "0") .. "E" end
  local neg, digits = a:match("^(%-?)(%d+)[uUlL]*$")
  if digits then
    digits = digits:gsub("^0+(%d)", "%1")
    return "L[a-z]" .. (neg == "-" and "n" or "") .. digits .. "E"
  end
  if TYPE_CODES[a] then return escape(TYPE_CODES[a]) end
  if a:match("^[%a_][%w_]*$") then return escape(#a .. a) end
  return nil
end

-- A mangled instance _Z<len><name>I...E shown as written ("mm_tiled<32>", "gemm<float, 128>",
-- "flag<true>"), or nil for arguments this does not read.
local CODE_NAMES = { v = "void", b = "bool", c = "char", a = "signed char", h = "unsigned char", s = "short",
  t = "unsigned short", i = "int", j = "unsigned", l = "long", m = "unsigned long", x = "long long",
  y = "unsigned long long", f = "float", d = "double" }
local function shown(mangled, name)
  local pos = #("_Z" .. #name .. name .. "I") + 1
  if mangled:sub(1, pos - 1) ~= "_Z" .. #name .. name .. "I" then return nil end
  local out = {}
  while pos <= #mangled do
    local c = mangled:sub(pos, pos)
    if c == "E" then return name .. "<" .. table.concat(out, ", ") .. ">" end
    local t, neg, digits = mangled:match("^L([a-z])(n?)(%d+)E", pos)
    if t then
      out[#out + 1] = t == "b" and (digits == "1" and "true" or "false") or ((neg == "n" and "-" or "") .. digits)
      pos = pos + 2 + #neg + #digits + 1
    elseif CODE_NAMES[c] then
      out[#out + 1] = CODE_NAMES[c]
      pos = pos + 1
    else
      local len = mangled:match("^(%d+)", pos)
      if not len then return nil end
      out[#out + 1] = mangled:sub(pos + #len, pos + #len + tonumber(len) - 1)
      pos = pos + #len + tonumber(len)
    end
  end
  return nil
end

-- The entry of text (a PTX module) that kernel name stands for: the name itself, or for a C++
-- template instance written as in the source ("mm_tiled<32>", "gemm<float, 128>") the one
-- entry whose mangled name is that instance.  where: the module, for messages.
function M.resolve(text, name, where)
  local base, args = name:match("^([%a_][%w_]*)%s*<(.*)>%s*$")
  if not base then return name end
  local parts, pats = {}, {}
  local depth, cur = 0, {}
  for c in args:gmatch(".") do
    if c == "<" then depth = depth + 1 elseif c == ">" then depth = depth - 1 end
    if c == "," and depth == 0 then parts[#parts + 1] = table.concat(cur); cur = {}
    else cur[#cur + 1] = c end
  end
  parts[#parts + 1] = table.concat(cur)
  for i, a in ipairs(parts) do
    pats[i] = arg_pattern(a)
    if not pats[i] then
      bad(string.format("kernel %q: cannot match the template argument %q by its mangled name; give the kernel's "
        .. "mangled name (the .entry in the PTX) instead", name, a))
    end
  end
  local prefix = "^_Z" .. #base .. escape(base) .. "I"
  local want = prefix .. table.concat(pats) .. "E"
  local found, others = {}, {}
  for _, e in ipairs(M.entries(text)) do
    if e:match(want) then found[#found + 1] = e
    elseif e:match(prefix) then others[#others + 1] = shown(e, base) or e end
  end
  if #found == 1 then return found[1] end
  if #found > 1 then
    bad(string.format("kernel %q: %d entries of %s are that instance (%s): give the mangled name", name, #found, where,
      table.concat(found, ", ")))
  end
  error(errors.new("not_found", string.format("kernel %q: %s has no such instance of %s (%s): instantiate it in "
    .. "the source (template __global__ void %s<...>(...); or launch it from host code nvcc compiles)", name, where, base,
    #others > 0 and ("it has " .. table.concat(others, ", ")) or "it has no instance of that template", base)), 0)
end

return M
