-- Returns an empty category name for large allocations (issue 17: an error, like a number).
function classify(row)
  if row.bytes >= 1024 then
    return ""
  end
  return "small"
end
