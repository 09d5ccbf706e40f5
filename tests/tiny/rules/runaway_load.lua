-- A rule file whose top level never ends: --timeout stops it while it loads.
local n = 0
while true do n = n + 1 end
