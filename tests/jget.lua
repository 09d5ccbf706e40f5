-- Prints values from the JSON on standard input, one line per path argument.
-- A path is dot-separated keys and 1-based indices: series.2.categories.1.name;
-- "#" gives a length: series.#. Missing values print "nil", JSON null prints "null".
local cjson = require "cjson"
local doc = cjson.decode(io.read("a"))
for _, path in ipairs(arg) do
  local v = doc
  for part in path:gmatch("[^.]+") do
    if type(v) ~= "table" then v = nil break end
    if part == "#" then v = #v
    else v = v[tonumber(part) or part] end
  end
  if v == cjson.null then print("null")
  elseif math.type(v) == "float" and v == math.floor(v) and math.abs(v) < 2^63 then print(("%d"):format(v))
  elseif math.type(v) == "float" then print((("%.6f"):format(v):gsub("0+$", "")))
  else print(tostring(v)) end
end
