-- Category names that need escaping: a comma and quotes (CSV), a backslash, a tab and a
-- newline (JSON), and a byte that is not UTF-8.
local names = {
  [1024] = 'a, "quoted" name',
  [512] = "back\\slash\ttab\nnewline",
  [256] = "bad \255 byte",
}

function classify(row)
  return names[row.bytes]
end
