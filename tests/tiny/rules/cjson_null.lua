-- cjson.null is lua-cjson's own light userdata, never a row (issue 11).
local cjson = require "cjson"
print(("load: %s %s"):format(tostring(cjson.null), type(cjson.null) == "userdata" and "light userdata" or "?"))
local said = false
function classify(row)
  if not said then
    said = true
    print(("classify: %s %s %s"):format(tostring(cjson.null), cjson.null ~= row and getmetatable(cjson.null) == nil, type(row)))
  end
  return "all"
end
