-- Two category names of 70 characters that differ only in their last words (issue 17:
-- cut to the column, they must still print differently).
local prefix = "a category name long enough to be cut by the summary table, ending in "
function classify(row)
  return prefix .. (row.bytes >= 1024 and "big" or "small")
end
