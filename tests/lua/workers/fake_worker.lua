-- fake_worker.lua: a worker for workers_spec.lua, run by mgpu-harness: answers
-- {"item": I} with {"item": I, "ok": true, "square": I*I}; item 3 makes it exit
-- once (when the file MARK does not exist yet), item 5 never answers, item 7
-- prints a line that is not an answer first.
local core = require "mgpu.core"
local mark = arg[1]
for line in io.lines() do
  local msg = core.json_decode(line)
  local i = msg.item
  if i == 3 and mark and not io.open(mark) then
    io.open(mark, "w"):close()
    os.exit(1)
  end
  if i == 5 then while true do end end
  if i == 7 then io.write("noise\n") end
  io.write(core.json_encode({ item = i, ok = true, square = i * i }), "\n")
  io.stdout:flush()
end
