-- Tries to load precompiled bytecode (load is text-only in the sandbox).
local f, err = load(string.dump(function() return "from bytecode" end))
assert(f, err)
function classify(row)
  return f()
end
