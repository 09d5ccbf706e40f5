-- Issue 12: pattern matching backtracks in C, where hooks do not run (20 nested a* on
-- 5000 bytes: longer than the age of the universe).
function classify(row)
  string.find(string.rep("a", 5000), string.rep("a*", 20) .. "b")
  return "c"
end
