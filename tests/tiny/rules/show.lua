-- Writes the fields named in $SHOW (space-separated) of every row classify is given, one
-- line per call, to standard error; tables print as {a>b>c}. Every row goes to "x".
local fields = {}
for f in (os.getenv("SHOW") or "kind bytes ts"):gmatch("%S+") do
  fields[#fields + 1] = f
end

function classify(row)
  local out = {}
  for i, f in ipairs(fields) do
    local v = row[f]
    if type(v) == "table" then
      v = "{" .. table.concat(v, ">") .. "}"
    end
    out[i] = f .. "=" .. tostring(v)
  end
  io.stderr:write(table.concat(out, " "), "\n")
  return "x"
end
