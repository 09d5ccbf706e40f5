-- Issue 24: hmem.write into --out DIR. --set name=NAME picks the file (--set nul=1: the
-- name "a\0/../x", which the old code cut at the NUL and wrote as "a").
local hmem = require "hmem"
function classify(row)
  return "all"
end
function done(report)
  local name = hmem.args.nul and "a\0/../x" or hmem.args.name
  hmem.write(name, "written by the rule file\n")
end
