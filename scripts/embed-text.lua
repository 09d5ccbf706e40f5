-- Turns text files into C string constants, so the hmem binary carries the HTML report's
-- script and style. usage: lua5.4 scripts/embed-text.lua NAME=FILE... > build/x.c
local function c_string(s)
  local body = s:gsub(".", function(c)
    if c == "\\" or c == '"' then return "\\" .. c end
    if c == "\n" then return '\\n"\n\t"' end
    local b = c:byte()
    if b < 32 or b > 126 then return ("\\%03o"):format(b) end
  end)
  return '"' .. body .. '"'
end

local out = {}
for _, a in ipairs(arg) do
  local name, path = a:match("^([%w_]+)=(.+)$")
  assert(name, "expected NAME=FILE, got " .. a)
  local f = assert(io.open(path, "rb"))
  local text = f:read("a")
  f:close()
  out[#out + 1] = ("/* %s */\nconst char %s[] =\n\t%s;\n"):format(path, name, c_string(text))
end
print(table.concat(out, "\n"))
