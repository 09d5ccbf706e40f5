-- Category names with multi-byte UTF-8 characters (the summary table must still align).
function classify(row)
  if row.bytes >= 1024 then
    return "größer (≥ 1 KiB)"
  end
  return "klein"
end
