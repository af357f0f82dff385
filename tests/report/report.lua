-- report.lua: `mgpu-harness tests/report/report.lua ARGS...` runs what
-- `mgpu-harness report ARGS...` runs (mgpu.report's main), for the tests and
-- for a build whose core/main.c does not dispatch `report` yet.
local status = require("mgpu.report").main(arg)
if status ~= 0 then os.exit(status) end
