-- Issue 12: copied as hmem.lua into a folder of traces (or an -I directory) by
-- tests/cli/sandbox_contain.t; hmem must never load it in place of its own module.
require "cjson"
return {KiB = 1024, MiB = 1048576, GiB = 1073741824, TiB = 1099511627776, _aggregations = {},
        cache_by = function() end, aggregate = function() end, human = tostring,
        bucket = function() return "replaced" end, version = "0.1.0"}
