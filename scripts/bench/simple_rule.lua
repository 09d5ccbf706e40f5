-- The simple pack of the Lua cost target: one field read per row, no cache_by, so hmem
-- calls classify for every allocation (make bench reports the cost per row).
function classify(row)
  if row.bytes >= 1048576 then return "large" end
  return "small"
end
