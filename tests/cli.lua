-- Transcript tests: each tests/cli/*.t file holds commands and what they print.
--
--   # a comment (says what is checked)
--   $ hmem run examples/size_buckets.lua tests/tiny/y_basic.json --json - | lua5.4 tests/jget.lua series.1.peak_bytes
--   1024
--   ? 0
--
-- A command starts with "$ " and runs with sh in the repository root (hmem on PATH);
-- its standard output and error, merged, must equal the lines that follow; "? N" is
-- its exit status. "..." alone on a line matches any number of lines. A command that
-- prints only "SKIP: why" (and exits 0) is reported as skipped.
-- The ```console blocks of README.md run the same way (each command must exit 0), so
-- every example in the manual is a test.
-- With --bless, failing blocks of tests/cli/*.t get the output they gave (review the diff!).
local bless = arg[1] == "--bless"
local pattern = bless and (arg[2] or "") or (arg[1] or "")

-- $T in a command: a temporary folder of this run alone, so that two runs side by side
-- (two make test at once) never share a file.
local T = assert(io.popen("mktemp -d")):read("l")

local function run(cmd)
  local p = io.popen("T='" .. T .. "'; export T; (" .. cmd .. ") 2>&1; echo \"?\" $?")
  local out = p:read("a")
  p:close()
  local lines = {}
  for l in out:gmatch("([^\n]*)\n") do lines[#lines + 1] = l end
  local status = table.remove(lines)
  return lines, status
end

-- Expected lines may contain "..." lines that match any run of lines.
local function match(exp, got, i, j)
  i, j = i or 1, j or 1
  if i > #exp then return j > #got end
  if exp[i] == "..." then
    for k = j, #got + 1 do
      if match(exp, got, i + 1, k) then return true end
    end
    return false
  end
  return got[j] == exp[i] and match(exp, got, i + 1, j + 1)
end

local files = {}
local p = io.popen("ls tests/cli/*.t 2>/dev/null")
for f in p:lines() do
  if f:find(pattern, 1, true) then files[#files + 1] = f end
end
p:close()

if ("README.md"):find(pattern, 1, true) then files[#files + 1] = "README.md" end

for _, file in ipairs(files) do
  local blocks, cur = {}, nil
  local n = 0
  local readme, in_console = file == "README.md", false
  for line in io.lines(file) do
    n = n + 1
    if readme then
      if line == "```console" then
        in_console = true
      elseif in_console and line == "```" then
        in_console, cur = false, nil
      elseif in_console and line:sub(1, 2) == "$ " then
        cur = { cmd = line:sub(3), line = n, exp = {}, status = "? 0" }
        blocks[#blocks + 1] = cur
      elseif in_console and cur then
        cur.exp[#cur.exp + 1] = line
      end
    elseif line:sub(1, 2) == "$ " then
      cur = { cmd = line:sub(3), line = n, exp = {} }
      blocks[#blocks + 1] = cur
    elseif line:match("^%? %d+$") and cur then
      cur.status = line
      cur.last = n
      cur = nil
    elseif cur then
      cur.exp[#cur.exp + 1] = line
    end
  end
  local blessed = {}
  for _, b in ipairs(blocks) do
    local name = ("%s:%d: %s"):format(file, b.line, b.cmd)
    local got, status = run(b.cmd)
    if #got == 1 and got[1]:match("^SKIP: ") and status == "? 0" then
      print("ok - " .. name .. " # " .. got[1]) -- a check this machine cannot make, said so
    elseif match(b.exp, got) and status == b.status then
      print("ok - " .. name)
    elseif bless and not readme then
      blessed[b.line] = { last = b.last, got = got, status = status }
      print("# blessed " .. name)
    else
      print("not ok - " .. name)
      print("#   expected (" .. tostring(b.status) .. "):")
      for _, l in ipairs(b.exp) do print("#     " .. l) end
      print("#   got (" .. status .. "):")
      for _, l in ipairs(got) do print("#     " .. l) end
    end
  end
  if next(blessed) then
    local lines, out, skip_to = {}, {}, nil
    for l in io.lines(file) do lines[#lines + 1] = l end
    for i, l in ipairs(lines) do
      local b = blessed[i]
      if b then
        out[#out + 1] = l
        for _, g in ipairs(b.got) do out[#out + 1] = g end
        out[#out + 1] = b.status
        skip_to = b.last
      elseif not skip_to or i > skip_to then
        out[#out + 1] = l
        skip_to = nil
      end
    end
    local f = assert(io.open(file, "w"))
    f:write(table.concat(out, "\n"), "\n")
    f:close()
  end
end
os.execute("rm -rf '" .. T .. "'")
