-- mgpu.merge: `mgpu-harness merge OUT DIR...`: folders of one experiment (the
-- shards of a sweep, or runs of the same sweep) merged into one results folder
-- that resume, replay, compare and report take as a single run's.  Folders
-- whose manifests disagree (script, module and source hashes, axes, --set,
-- harness version, device kind) are refused naming what differs.  Where a point
-- appears more than once the ok row is taken (the latest ok one); its point
-- files are linked (copied where a link cannot be made).  The merged manifest
-- selects the whole sweep and says where each point came from, so points no
-- folder has are listed (with the shard that owed them) and `--resume OUT`
-- runs just those.  Merging again into the same OUT is idempotent.
local core = require "mgpu.core"
local errors = require "mgpu.errors"
local options = require "mgpu.options"
local files = require "mgpu.files"
local manifest = require "mgpu.manifest"
local results = require "mgpu.results"

local M = {}

-- The status of a run with a failed point (the experiment runner's: script_error's).
M.EXIT_FAILED_POINT = 7

local function bad(msg) error(errors.new("bad_argument", msg), 0) end

local function same(a, b) return core.json_encode(a) == core.json_encode(b) end

-- What every merged folder must agree on: {name, value of one manifest}.
local function identity(man)
  local ptx = {}
  for i, e in ipairs(man.ptx or {}) do ptx[i] = e.sha256 end
  local hdr = {}
  for i, e in ipairs(man.headers or {}) do hdr[i] = e.path .. "@" .. tostring(e.sha256) end
  return {
    { "experiment", man.experiment }, { "script", man.script and man.script.sha256 },
    { "module", ptx }, { "headers", hdr }, { "compiled PTX", man.compiled and man.compiled.sha256 },
    { "kernel", man.kernel }, { "instrument", man.instrument }, { "axes", man.axes }, { "--set", man.set or {} },
    { "point_keys", man.point_keys }, { "harness version", man.harness }, { "backend", man.backend },
    { "device", man.device },
  }
end

local function shard_of(i, shard)
  if not shard then return nil end
  return shard.count and string.format("%d/%d", (i - 1) % shard.count + 1, shard.count) or nil
end

-- Links src to dst (a copy when a link cannot be made, across filesystems); dst replaced.
local function place(src, dst)
  if src == dst then return end
  os.remove(dst)
  if core.link(src, dst) then return end
  local text = files.read(src)
  if not text then error(errors.new("io_error", src .. ": cannot read"), 0) end
  core.write_file(dst, text)
end

-- The builds of the merged folders (issue 35: compile-time axes): build N is the same build in
-- every shard (numbered over the whole sweep); each shard compiled those its points needed.
-- Takes, for each N, a record whose PTX is in its folder, and links builds/build-N.ptx (and a
-- failed build's nvcc log) into out.  A build N that differs between shards is refused.
local function merge_builds(dirs, out)
  local merged
  for _, src in ipairs(dirs) do
    for _, b in ipairs(src.man.builds or {}) do
      merged = merged or {}
      local have = merged[b.index]
      local key = tostring(b.arch) .. " " .. table.concat(b.nvcc_flags or {}, " ")
      if have and have.key ~= key then
        bad(string.format("merge: build %d is %s in one folder and %s in %s: the shards compiled other builds",
          b.index, have.key, key, src.dir))
      end
      local ptx = b.ptx and files.exists(src.dir .. "/" .. b.ptx)
      if not have or (ptx and not have.ptx) or (b.error and not have.rec.error and not have.ptx) then
        merged[b.index] = { key = key, rec = b, dir = src.dir, ptx = ptx }
      end
    end
  end
  if not merged then return nil end
  local list = {}
  for n, m in pairs(merged) do
    list[#list + 1] = m.rec
    for _, suffix in ipairs({ ".ptx", ".log" }) do
      local name = string.format("builds/build-%d%s", n, suffix)
      if files.exists(m.dir .. "/" .. name) then
        core.mkdir_p(out .. "/builds")
        place(m.dir .. "/" .. name, out .. "/" .. name)
      end
    end
  end
  table.sort(list, function(x, y) return x.index < y.index end)
  return list
end

-- Merges the folders dirs into out; returns {points=, ok=, missing={{index=, key=, shard=}}, sources=}.
function M.merge(out, dirs, opts)
  opts = opts or {}
  if #dirs == 0 then bad("merge: name the folders to merge: mgpu-harness merge OUT DIR...") end
  local mans, first = {}, nil
  for i, d in ipairs(dirs) do
    mans[i] = manifest.read(d)
    if not mans[i].point_keys then bad("merge: " .. d .. "'s manifest has no point_keys (an older harness wrote it)") end
    first = first or mans[i]
  end
  local want = identity(first)
  for i = 2, #mans do
    local got = identity(mans[i])
    for k, f in ipairs(want) do
      if not same(f[2], got[k][2]) then
        bad(string.format("merge: %s and %s differ in %s (%s against %s): they are not parts of one sweep", dirs[1],
          dirs[i], f[1], core.json_encode(f[2]), core.json_encode(got[k][2])))
      end
    end
  end
  core.mkdir_p(out)
  local lock = core.lock(out .. "/.lock")
  local ok, r = pcall(function()
    local old = files.exists(out .. "/manifest.json") and manifest.read(out) or nil
    if old and not old.merged_from then -- a shard or a run: never rewritten, listed as a source or not
      local is_source = false
      for _, d in ipairs(dirs) do is_source = is_source or files.absolute(d) == files.absolute(out) or core.same_file(d, out) end
      bad("merge: " .. out .. " holds a run's results that no merge made" .. (is_source and
        " (it is also one of the folders to merge)" or "") .. ": merge into a new folder")
    end
    if old then -- a merge of another sweep: refused before anything is written
      local got = identity(old)
      for k, f in ipairs(want) do
        if not same(f[2], got[k][2]) then
          bad(string.format("merge: %s holds a merge of another sweep (it differs from %s in %s: %s against %s): "
            .. "merge into a new folder", out, dirs[1], f[1], core.json_encode(got[k][2]), core.json_encode(f[2])))
        end
      end
    else
      local foreign = results.harness_file(out)
      if foreign then
        bad("merge: " .. out .. " holds " .. foreign .. ", which no run wrote there (no manifest.json): the merge "
          .. "would overwrite it; merge into a new folder")
      end
    end
    -- every row of every folder (a merged OUT given again as a source counts as one); the ok
    -- row of a point wins over a failed one, a later folder's over an earlier's
    local best, from = {}, {}
    local all_dirs = {}
    for i, d in ipairs(dirs) do all_dirs[i] = { dir = d, man = mans[i] } end
    if old and old.merged_from then table.insert(all_dirs, 1, { dir = out, man = old }) end
    for _, src in ipairs(all_dirs) do
      if files.exists(src.dir .. "/results.jsonl") then
        for _, row in ipairs(results.rows(src.dir, src.man)) do
          local cur = best[row.key]
          if not cur or row.status == "ok" or cur.status ~= "ok" then
            best[row.key], from[row.key] = row, src.dir
          end
        end
      end
    end
    local keys = first.point_keys
    local rows, missing, nok = {}, {}, 0
    local index_of = {}
    for i, k in ipairs(keys) do index_of[k] = i end
    -- the whole sweep: what any folder selected (a shard selects its part)
    local selected, seen = {}, {}
    for _, src in ipairs(all_dirs) do
      for _, i in ipairs(src.man.selected or {}) do
        if not seen[i] then seen[i] = true; selected[#selected + 1] = i end
      end
    end
    if first.shard then -- the shards' union is the sweep: every point a shard would own
      -- (what the sweep's filter kept, which each shard's manifest records; an older shard's
      -- manifest without it: every point of the axes)
      local kept = nil
      for _, src in ipairs(all_dirs) do
        if type(src.man.sweep_selected) == "table" then kept = src.man.sweep_selected end
      end
      if kept then
        for _, i in ipairs(kept) do if not seen[i] then seen[i] = true; selected[#selected + 1] = i end end
      else
        for i = 1, #keys do if not seen[i] then seen[i] = true; selected[#selected + 1] = i end end
      end
    end
    table.sort(selected)
    local sources = {}
    for _, i in ipairs(selected) do
      local k = keys[i]
      local row = best[k]
      if row then
        rows[#rows + 1] = row
        if row.status == "ok" then nok = nok + 1 end
        sources[k] = files.absolute(from[k])
        for _, suffix in ipairs({ ".trace.json", ".summary.json", ".stats.json", ".stats.csv" }) do
          local name = string.format("point-%d%s", index_of[k], suffix)
          if files.exists(from[k] .. "/" .. name) then place(from[k] .. "/" .. name, out .. "/" .. name) end
        end
      else
        missing[#missing + 1] = { index = i, key = k, shard = shard_of(i, first.shard) }
      end
    end
    -- results.jsonl, results.csv and the manifest written afresh (atomically)
    local lines = {}
    for n, row in ipairs(rows) do lines[n] = core.json_encode(row) end
    core.write_file(out .. "/results.jsonl", #lines > 0 and table.concat(lines, "\n") .. "\n" or "")
    local names = {}
    for _, g in ipairs(first.axes or {}) do for _, nm in ipairs(g.names or {}) do names[#names + 1] = nm end end
    results.write_csv(out, names, rows)
    local man = {}
    for k, v in pairs(first) do man[k] = v end
    man.builds = merge_builds(all_dirs, out) -- compile-time axes: every shard's builds, their PTX linked
    man.shard, man.workers, man.devices, man.sweep_selected = nil, nil, nil, nil
    man.selected, man.points = selected, #selected
    man.created = (old and old.created) or os.date("!%Y-%m-%dT%H:%M:%SZ")
    local parts = {}
    for _, src in ipairs(all_dirs) do
      parts[#parts + 1] = { dir = files.absolute(src.dir), shard = src.man.shard, points = #(src.man.selected or {}) }
    end
    man.merged_from = parts
    man.point_sources = sources
    man.missing = #missing > 0 and missing or nil
    man.commands = (old and old.commands) or {}
    man.commands[#man.commands + 1] = manifest.command(opts.command or "merge", "merge")
    core.write_file(out .. "/manifest.json", core.json_encode(man, true) .. "\n")
    return { points = #selected, ok = nok, rows = #rows, missing = missing, dir = out }
  end)
  lock:release()
  if not ok then error(r, 0) end
  return r
end

-- `mgpu-harness merge OUT DIR...` -> exit status (0: every point there and ok; 7, a failed point's, as the
-- experiment runner's: some point failed; 1: some missing, none failed)
function M.main(argv)
  local out, dirs = nil, {}
  for _, a in ipairs(argv) do
    if a == "--help" or a == "-h" then
      print("usage: mgpu-harness merge OUT DIR...\n  merges results folders of one experiment (shards of a sweep) into OUT")
      return 0
    elseif a:sub(1, 1) == "-" then bad("merge: unknown option " .. a .. " (usage: mgpu-harness merge OUT DIR...)")
    elseif not out then out = options.arg("merge", "OUT", a)
    else dirs[#dirs + 1] = options.arg("merge", "DIR", a) end
  end
  if not out then bad("usage: mgpu-harness merge OUT DIR...") end
  local cmd = { "mgpu-harness", "merge" }
  for _, a in ipairs(argv) do cmd[#cmd + 1] = a end
  local r = M.merge(out, dirs, { command = table.concat(cmd, " ") })
  print(string.format("merge: %d of %d points, %d ok, %d missing -> %s", r.rows, r.points, r.ok, #r.missing, out))
  for n, m in ipairs(r.missing) do
    if n > 20 then print(string.format("  ... and %d more", #r.missing - 20)); break end
    print(string.format("  missing: point %d (%s)%s", m.index, m.key, m.shard and (", owed by shard " .. m.shard) or ""))
  end
  if #r.missing > 0 then print("  run them with: mgpu-harness SCRIPT --resume " .. out) end
  if r.ok < r.rows then return M.EXIT_FAILED_POINT end
  return #r.missing == 0 and 0 or 1
end

return M
