-- Issue 12: table.move of 2^50 elements (nil ones) loops in C.
function classify(row)
  table.move({}, 1, 1 << 50, 1, {})
  return "c"
end
