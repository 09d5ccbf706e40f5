-- Turns the Lua modules under lua/ into a C table, so the hmem binary carries them.
-- usage: lua5.4 scripts/embed-lua.lua lua/hmem/init.lua ... > build/embedded.c
local function c_string(s)
  local body = s:gsub(".", function(c)
    if c == "\\" or c == '"' then return "\\" .. c end
    if c == "\n" then return '\\n"\n\t"' end
    local b = c:byte()
    if b < 32 or b > 126 then return ("\\%03o"):format(b) end
  end)
  return '"' .. body .. '"'
end

local out = {'#include "script.h"', "", "const hm_embedded hm_embedded_modules[] = {"}
for _, path in ipairs(arg) do
  local f = assert(io.open(path, "rb"))
  local src = f:read("a")
  f:close()
  local name = path:gsub("^lua/", ""):gsub("%.lua$", ""):gsub("/init$", ""):gsub("/", ".")
  out[#out + 1] = ("\t{%s, %s,\n\t%s},"):format(c_string(name), c_string(path), c_string(src))
end
out[#out + 1] = "\t{0, 0, 0},"
out[#out + 1] = "};"
print(table.concat(out, "\n"))
