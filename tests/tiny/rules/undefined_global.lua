-- Reads a global that was never defined (a typo): an error naming it and the line.
function classify(row)
  local category = "small"
  return categroy
end
