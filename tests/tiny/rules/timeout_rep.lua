-- Issue 12: string.rep of the empty string 2^62 times copies nothing 2^62 times in C.
function classify(row)
  local s = string.rep("", 1 << 62) .. string.rep("x", 0) .. string.rep("", 1 << 62, "")
  return "c" .. s
end
