-- Issue 12: copied as cjson.lua into a folder of traces by tests/cli/sandbox_contain.t;
-- if hmem ever runs it, it leaves a file named OWNED.
local f = io.open("OWNED", "w")
f:write("ran\n")
f:close()
return {encode = function() return "replaced" end}
