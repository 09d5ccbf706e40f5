-- A rule file from elsewhere, for hmem merge (issue 24): with io it writes the file
-- "marker" in the working directory when done(report) runs (at the merge); sandboxed it
-- finds no io and writes nothing. It prints what it was given: io or not, and hmem.args.k
-- as Lua quotes it (a newline in a --set value shows). --set spin=1 loops in done (for
-- --timeout), --set write=1 writes done.txt with hmem.write (for --out).
local hmem = require "hmem"
local has_io, lib = pcall(function() return io end)

function classify(row)
  return row.bytes > 512 and "big" or "small"
end

function done(report)
  if has_io and lib then
    lib.open("marker", "w"):write("written with io\n"):close()
  end
  print(("io: %s, k=%q"):format(tostring(has_io and lib ~= nil), hmem.args.k or "(none)"))
  if hmem.args.write then
    hmem.write("done.txt", "done\n")
  end
  while hmem.args.spin do
  end
end
