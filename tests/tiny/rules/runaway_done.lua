-- A done() that never ends: --timeout stops it after every row was classified.
function classify(row) return "all" end

function done(report)
  local n = 0
  while true do n = n + 1 end
end
