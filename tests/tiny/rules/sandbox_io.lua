-- Tries to open a file when loaded (the sandbox has no io).
local f = io.open("/dev/null")
function classify(row)
  return f and "opened" or "not opened"
end
