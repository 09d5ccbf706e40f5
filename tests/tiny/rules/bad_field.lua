-- Reads a field rows do not have (the size is row.bytes).
function classify(row)
  return row.size > 1024 and "big" or "small"
end
