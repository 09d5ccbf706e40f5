-- Size buckets: where do the very big allocations come from?
-- very big > 5 GiB, big > 1 GiB, small < 1 MiB, normal otherwise.
local hmem = require "hmem"

function classify(row)
  if row.bytes > 5 * hmem.GiB then
    return "very big (> 5 GiB)"
  elseif row.bytes > hmem.GiB then
    return "big (> 1 GiB)"
  elseif row.bytes < hmem.MiB then
    return "small (< 1 MiB)"
  end
  return "normal"
end
