-- A pack that composes a shipped pack (the table format of issue 3).
local size = require "hmem.rules.size"
local helper = require "mypack_helper"
return {
  name = "mypack",
  description = "test pack: size buckets, with the op for small ones",
  categories = { "unused first", { name = "small (< 1 MiB)", color = "#0072b2" } },
  classify = function(row)
    local c = size.classify(row)
    return helper.tag(c, row)
  end,
  done = function(report)
    print("mypack done with " .. #report.series .. " series")
  end,
}
