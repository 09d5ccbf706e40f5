-- hmem.rules.size: the size of each allocation, in the buckets of the original request.
--
--   hmem run size traces/            or, composed:  local size = require "hmem.rules.size"
--
-- Categories (by the size of the request, row.bytes):
--   "very big (> 5 GiB)"  more than 5 GiB
--   "big (> 1 GiB)"       more than 1 GiB, up to 5 GiB
--   "normal"              from 1 MiB up to 1 GiB
--   "small (< 1 MiB)"     less than 1 MiB
-- The same rule as examples/size_buckets.lua (binary units: 1 GiB = 2^30 bytes).
--
-- Cost: cache_by{"bytes"}, one classify call per distinct size: 30-40 ns per allocation on
-- a 1 GiB scripts/gen-trace trace.
--
-- Where it can be wrong: it counts what PyTorch asked the caching allocator for (the trace's
-- Bytes), not the block the allocator carved (rounded up to 512 B, or to 2 MiB segments for
-- large requests), nor reserved but unused memory (Total Reserved). A free before the trace
-- (row.before_trace) is bucketed by its own size, which is the size of its allocation.
local hmem = require "hmem"

local size = {
  name = "size",
  description = "allocation size: very big > 5 GiB, big > 1 GiB, small < 1 MiB, normal otherwise",
  categories = {
    { name = "very big (> 5 GiB)", color = "#d62728" },
    { name = "big (> 1 GiB)", color = "#ff7f0e" },
    { name = "normal", color = "#1f77b4" },
    { name = "small (< 1 MiB)", color = "#7f7f7f" },
  },
  -- The category depends on bytes alone: hmem calls classify once per distinct size.
  cache_by = { "bytes" },
}

local limits = { { 5 * hmem.GiB, "very big (> 5 GiB)" }, { hmem.GiB, "big (> 1 GiB)" } }

-- The bucket of a size in bytes (also usable without a row).
function size.bucket(bytes)
  local b = hmem.bucket(bytes, limits, nil)
  if b then
    return b
  elseif bytes < hmem.MiB then
    return "small (< 1 MiB)"
  end
  return "normal"
end

function size.classify(row)
  return size.bucket(row.bytes)
end

return size
