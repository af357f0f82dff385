-- mgpu.nvcc: CUDA C sources as modules.  dev:load("kernel.cu") (and an
-- experiment's `module = "kernel.cu"`) compiles the file to PTX with nvcc, as
-- ptx/regen.sh does (-ptx -arch=sm_90 -O3 -lineinfo), and loads that;
-- `#include "mgpu_markers.h"` works wherever the source is.  The PTX
-- is written where the user can open it, since messages name its lines:
-- $MGPU_CACHE, else $XDG_CACHE_HOME/mgpu-harness, else ~/.cache/mgpu-harness,
-- as NAME-<first 12 hex digits of its SHA-256>.ptx.  Nothing is reused from
-- there: the source is compiled at every load (headers it includes would
-- otherwise have to be tracked), which costs about a second.
-- nvcc is looked for in $MGPU_NVCC, then PATH, $CUDA_HOME/bin, /usr/local/cuda/bin.
local core = require "mgpu.core"
local errors = require "mgpu.errors"
local files = require "mgpu.files"

local M = {}

M.DEFAULT_FLAGS = { "-O3", "-lineinfo" }

-- ptx/mgpu_markers.h, which every compile can include without a copy next to the source
-- (written to <cache>/include; a spec checks that it is the file in ptx/ byte for byte)
M.MARKERS_H = [[
/* mgpu_markers.h - region markers for mgpu-harness: PTX comments, so an
 * unprofiled build runs unchanged; the harness instruments them when
 * profiling is on.  MGPU_BEGIN("load") ... MGPU_END("load"); MGPU_ROLE("producer"). */
#pragma once
#define MGPU_BEGIN(name) asm volatile("// @mgpu begin " name ::: "memory")
#define MGPU_END(name) asm volatile("// @mgpu end " name ::: "memory")
/* MGPU_ROLE("producer"): names the role of the lane (warp or warpgroup) that runs it, e.g. at the
 * top of a warp-specialised branch; the timeline labels the lane "block 0 · warpgroup 0 · producer".
 * One word: letters, digits, '_', '-', '.'. */
#define MGPU_ROLE(name) asm volatile("// @mgpu role " name ::: "memory")
]]

local function quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local exists = files.exists

-- Runs a shell command; true when it exited with status 0 (Lua 5.1 and 5.4 differ).
local function execute(cmd)
  local a, _, c = errors.execute(cmd, "nvcc") -- Ctrl-C: interrupted, not a failed compile
  if type(a) == "number" then return a == 0 end
  return a == true and (c == nil or c == 0)
end

-- The nvcc to use, or nil and where it was looked for.
function M.find()
  local env = os.getenv("MGPU_NVCC")
  if env and env ~= "" then
    if exists(env) then return env end
    return nil, "MGPU_NVCC=" .. env .. " (no such file)"
  end
  local tried = {}
  for dir in (os.getenv("PATH") or ""):gmatch("[^:]+") do
    if exists(dir .. "/nvcc") then return dir .. "/nvcc" end
  end
  tried[#tried + 1] = "PATH"
  local home = os.getenv("CUDA_HOME")
  if home and home ~= "" then
    if exists(home .. "/bin/nvcc") then return home .. "/bin/nvcc" end
    tried[#tried + 1] = home .. "/bin"
  end
  if exists("/usr/local/cuda/bin/nvcc") then return "/usr/local/cuda/bin/nvcc" end
  tried[#tried + 1] = "/usr/local/cuda/bin"
  return nil, table.concat(tried, ", ")
end

local function cache_dir()
  local dir = os.getenv("MGPU_CACHE")
  if not dir or dir == "" then
    local xdg, home = os.getenv("XDG_CACHE_HOME"), os.getenv("HOME")
    if xdg and xdg ~= "" then dir = xdg .. "/mgpu-harness"
    elseif home and home ~= "" then dir = home .. "/.cache/mgpu-harness"
    else dir = "/tmp/mgpu-harness-cache" end
  end
  core.mkdir_p(dir)
  return dir
end

-- The first "error" line of nvcc's output, for the message (the whole log is err.log).
local function first_error(log)
  for line in log:gmatch("[^\n]+") do
    if line:find("error") then return line end
  end
  return log:match("[^\n]+") or "(no output)"
end

-- The headers a make-style dependency file (nvcc -MMD -MF) names, absolute,
-- without the source itself, the toolkit's own (under root) and the
-- harness's include folder.
local function read_deps(depfile, src, root, include)
  local text = files.read(depfile)
  if not text then return nil end
  text = text:gsub("\\\n", " ")
  local words, cur = {}, {}
  local i = 1
  while i <= #text do
    local c = text:sub(i, i)
    if c == "\\" and i < #text then
      cur[#cur + 1] = text:sub(i + 1, i + 1)
      i = i + 1
    elseif c:match("%s") then
      if #cur > 0 then words[#words + 1] = table.concat(cur); cur = {} end
    else
      cur[#cur + 1] = c
    end
    i = i + 1
  end
  if #cur > 0 then words[#words + 1] = table.concat(cur) end
  local deps, seen, after_colon = {}, {}, false
  local src_abs = files.absolute(src)
  for _, w in ipairs(words) do
    if not after_colon then
      if w:sub(-1) == ":" then after_colon = true end
    elseif w ~= ":" then
      local abs = files.absolute(w)
      local own = abs == src_abs or (root and abs:sub(1, #root + 1) == root .. "/")
        or abs:sub(1, #include + 1) == include .. "/"
      if not own and not seen[abs] then
        seen[abs] = true
        deps[#deps + 1] = abs
      end
    end
  end
  return deps
end

-- Compiles src (a .cu file) to PTX: opts.arch (default "sm_90"), opts.nvcc_flags
-- (a list; default M.DEFAULT_FLAGS).  Returns the PTX file's path, its text and
-- the headers the source included (absolute paths, from nvcc -MMD: not the system headers; the toolkit's
-- and mgpu_markers.h from the harness's include folder left out), or nil when
-- nvcc wrote no dependency file.
-- Errors: not_found (no nvcc, no source), compile_failed {log=} with nvcc's output.
function M.compile(src, opts)
  opts = opts or {}
  local arch = opts.arch or "sm_90"
  if type(arch) ~= "string" or not arch:match("^sm_%d+[af]?$") then
    error(errors.new("bad_argument", "arch must be like \"sm_90\" or \"sm_90a\", not " .. tostring(arch)), 0)
  end
  local flags = opts.nvcc_flags or M.DEFAULT_FLAGS
  if type(flags) ~= "table" then error(errors.new("bad_argument", "nvcc_flags must be a list of strings"), 0) end
  if not exists(src) then error(errors.new("not_found", src .. ": cannot open"), 0) end
  local nvcc, looked = M.find()
  if not nvcc then
    error(errors.new("not_found", string.format("%s: compiling CUDA C needs nvcc (the CUDA toolkit), not found in %s; "
      .. "set MGPU_NVCC, or load the PTX instead (nvcc -ptx -arch=sm_90 %s)", src, looked, src)), 0)
  end
  local dir = cache_dir()
  local include = dir .. "/include"
  if files.read(include .. "/mgpu_markers.h") ~= M.MARKERS_H then
    core.mkdir_p(include)
    core.write_file(include .. "/mgpu_markers.h", M.MARKERS_H)
  end
  local base = src:match("([^/]+)%.cu$") or "module"
  local tmp = string.format("%s/.%s-%d-%d.ptx.tmp", dir, base, os.time(), math.random(1, 1e9))
  local log_path = tmp .. ".log"
  local args = { quote(nvcc), "-ptx", "-arch=" .. arch }
  for _, f in ipairs(flags) do args[#args + 1] = quote(f) end
  args[#args + 1] = "-I" .. quote(include) -- after the user's: their -I directories come first
  local depfile = tmp .. ".d"
  args[#args + 1] = "-MMD -MF " .. quote(depfile) -- the headers it includes, not the system's
  args[#args + 1] = "-o " .. quote(tmp)
  args[#args + 1] = quote(src)
  local cmd = table.concat(args, " ")
  local ok = execute(cmd .. " >" .. quote(log_path) .. " 2>&1")
  local log = files.read(log_path) or ""
  os.remove(log_path)
  local root = nvcc:match("^(.*)/bin/[^/]*$")
  local deps = read_deps(depfile, src, root and files.absolute(root), files.absolute(include))
  os.remove(depfile)
  local text = ok and files.read(tmp)
  if not text or text == "" then
    -- ptxas names the PTX it checked, our temporary file: keep it where the message can point
    -- (NAME-failed.ptx in the cache), and name that instead of a file that is gone
    local kept = string.format("%s/%s-failed.ptx", dir, base)
    local partial = files.read(tmp)
    os.remove(tmp)
    if partial and partial ~= "" then
      core.write_file(kept, partial)
      local function plain(p) return (p:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", "%%%0")) end
      log = log:gsub(plain(tmp), (kept:gsub("%%", "%%%%")))
    end
    local msg = string.format("%s: nvcc failed: %s", src, first_error(log))
    local target = log:match("not supported on %.target '(sm_%d+)'")
    if target and not arch:match("[af]$") then -- wgmma, setmaxnreg, ...: the architecture-specific target
      msg = msg .. string.format(" (this instruction needs the architecture-specific target: arch = \"%sa\" in "
        .. "the experiment, or { arch = \"%sa\" } to dev:load)", target, target)
    end
    error(errors.new("compile_failed", msg, { log = log, command = cmd }), 0)
  end
  local path = string.format("%s/%s-%s.ptx", dir, base, core.sha256_file(tmp):sub(1, 12))
  local moved = os.rename(tmp, path)
  if not moved then
    os.remove(tmp)
    error(errors.new("io_error", "cannot write " .. path), 0)
  end
  return path, text, deps
end

return M
