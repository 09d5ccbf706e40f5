-- Writes hmem's bash completion: the template completion/hmem.bash.in with its @SPEC@ line
-- replaced by static lists, read at build time from the built binary's `hmem --help` and
-- from the shipped packs, so that pressing TAB runs neither hmem nor a rule pack (issue 24).
--
-- usage: ./hmem --help | lua5.4 completion/gen.lua completion/hmem.bash.in PACK... > hmem.bash
--
-- What is read from --help:
--   usage lines   "hmem CMD POSITIONAL... [-X ARG] [options]": the commands, their positional
--                 words (RULES, PATH..., [RULES] optional) and the options named there;
--                 "[options]" gives the command its section; "[output options of CMD]" the
--                 options of CMD's section that write something (a FILE argument, or help
--                 about the summary or the exit status), not those that feed hmem merge;
--                 "hmem --help | -V, --version" the words that stand alone.
--   sections      "CMD options:" (and "CMD options: -A, -B and -C as for run, and") up to the
--                 next section; an option line is "  -X, --long ARG  help"; a line
--                 "  -A, -B: as for run" names options shared with run.
--   common        "common options (CMD, CMD):" belong to those commands (every command with
--                 "[options]" when no list is given).
-- An option followed by an upper-case word (FILE, DIR, N, KEY=VALUE) takes a value.
local template, packs = arg[1], { table.unpack(arg, 2) }
assert(template, "usage: hmem --help | lua5.4 completion/gen.lua TEMPLATE PACK...")
local help = io.read("a")

local OPT = "%-%-?%a[%w%-]*"
local commands, top = {}, {}
local usage = {} -- cmd -> {args = {...}, opts = {...}, own = bool, from = {qualifier, cmd}}
local sections = {} -- name -> list of {name =, help =}
local common_for -- set of commands, or nil for every command with [options]
local takes = {} -- option -> its argument's word

local function add_unique(list, v)
  for _, x in ipairs(list) do
    if x == v then return end
  end
  list[#list + 1] = v
end

-- Options and their arguments in a text such as "-I DIR" or "--from T, --to T".
local function options_in(text, into)
  text = " " .. text
  for name in text:gmatch("%f[%S](" .. OPT .. ")") do
    add_unique(into, name)
  end
  for name, word in text:gmatch("%f[%S](" .. OPT .. ") ([A-Z][%w=/%-]*)") do
    takes[name] = word
  end
end

local in_usage, section, last, open = true, nil, nil, false
for line in help:gmatch("([^\n]*)\n?") do
  if in_usage then
    local rest = line:match("^usage: hmem (.*)") or line:match("^%s+hmem (.*)")
    if line == "" and #commands > 0 then
      in_usage = false
    elseif rest and rest:match("^%-") then
      options_in(rest, top)
    elseif rest then
      local cmd, syn = rest:match("^(%a+)%s*(.*)$")
      syn = syn:match("^(.-)%s%s") or syn
      local u = { args = {}, opts = {} }
      usage[cmd] = u
      commands[#commands + 1] = cmd
      local i = 1
      while i <= #syn do
        local c = syn:sub(i, i)
        if c == " " then
          i = i + 1
        elseif c == "[" then
          local j = syn:find("]", i, true) or #syn
          local inner = syn:sub(i + 1, j - 1)
          local what, of = inner:match("^(.-)%s*options of (%a+)$")
          if inner:match("^%-") then
            options_in(inner, u.opts)
          elseif inner == "options" then
            u.own = true
          elseif of then
            u.from = { what, of }
          else
            u.args[#u.args + 1] = "[" .. inner .. "]"
          end
          i = j + 1
        else
          local j = syn:find(" ", i, true) or #syn + 1
          u.args[#u.args + 1] = syn:sub(i, j - 1)
          i = j
        end
      end
    end
  else
    local name, tail = line:match("^(%a+) options(.*)$")
    if open then
      open = not line:find(")", 1, true) -- the rest of a header's "(...)"
    elseif name then
      section, last = name, nil
      open = tail:find("(", 1, true) and not tail:find(")", 1, true)
      sections[name] = sections[name] or {}
      if name == "common" and tail:match("^ %(") then
        common_for = {}
        for c in tail:match("%((.-)%)"):gmatch("%a+") do common_for[c] = true end
      elseif tail:match("^:") then
        local names = {}
        options_in(tail, names)
        for _, o in ipairs(names) do sections[name][#sections[name] + 1] = { name = o, help = "" } end
      end
    elseif line:match("^%S") then
      section, last = nil, nil -- another paragraph ("exit codes: ...")
    elseif section and line:match("^  %-") then
      local left, text = line:match("^  (.-)%s%s+(.*)$")
      left, text = left or line:sub(3), text or ""
      local names = {}
      options_in(left, names)
      last = {}
      for _, o in ipairs(names) do
        local entry = { name = o, help = text }
        sections[section][#sections[section] + 1] = entry
        last[#last + 1] = entry
      end
    elseif section and last and line:match("^%s%s%s") then
      for _, e in ipairs(last) do e.help = e.help .. " " .. line:match("^%s*(.-)$") end
    end
  end
end
assert(#commands > 0, "no usage lines in hmem --help")

-- "[output options of run]": the options of run that write something.
local function writes(o)
  if o.help:find("hmem merge", 1, true) then return false end
  return takes[o.name] == "FILE" or o.help:find("summary", 1, true) or o.help:match("^exit ")
end

local function list(t)
  return "'" .. table.concat(t, " ") .. "'"
end

local out = {}
local function put(fmt, ...) out[#out + 1] = fmt:format(...) end
put("_hmem_commands=%s", list(commands))
put("_hmem_top=%s", list(top))
for _, p in ipairs(packs) do assert(p:match("^[%w_%-]+$"), "odd pack name " .. p) end
put("_hmem_packs=%s", list(packs))
local t = {}
for name, word in pairs(takes) do t[#t + 1] = name .. "=" .. word end
table.sort(t)
put("_hmem_takes=%s", list(t))
for _, cmd in ipairs(commands) do
  local u, opts = usage[cmd], {}
  for _, o in ipairs(u.opts) do add_unique(opts, o) end
  if u.own then
    for _, o in ipairs(sections[cmd] or {}) do add_unique(opts, o.name) end
  end
  if u.from then
    for _, o in ipairs(sections[u.from[2]] or {}) do
      if u.from[1] ~= "output" or writes(o) then add_unique(opts, o.name) end
    end
  end
  if (u.own or u.from) and (not common_for or common_for[cmd]) then
    for _, o in ipairs(sections.common or {}) do add_unique(opts, o.name) end
  end
  add_unique(opts, "--help") -- hmem CMD --help prints the usage, as hmem --help
  put("_hmem_opts_%s=%s", cmd, list(opts))
  put("_hmem_args_%s=%s", cmd, list(u.args))
end

local f = assert(io.open(template, "r"))
local text = f:read("a")
f:close()
local spec = table.concat(out, "\n")
local n
text, n = text:gsub("@SPEC@", function() return spec end)
assert(n == 1, template .. ": expected one @SPEC@ line")
io.write(text)
