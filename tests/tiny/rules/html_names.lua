-- Category and aggregation names that must be escaped in an HTML page (--html): a closing
-- script tag, markup, quotes and an ampersand; and a declared colour for one of them.
local hmem = require "hmem"

return {
  name = "html names",
  categories = { { name = '"><b>bold</b>', color = "#123abc" } },
  classify = function(row)
    if row.bytes == 1024 then return '</script><script>alert("x")</script>' end
    if row.bytes == 512 then return '"><b>bold</b>' end
    return "a & b <!-- c -->"
  end,
  init = function()
    hmem.aggregate{ name = "<i>by op</i>", by = { "category", "op" }, sum = "bytes" }
  end,
}
