-- Category = the size in bytes ("1024"): one category per distinct size.
function classify(row)
  return tostring(row.bytes)
end
