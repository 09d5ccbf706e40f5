-- Issue 12 (found in review): two list fields in one key; the first column showed the
-- second's text (both were built in one scratch buffer).
local hmem = require "hmem"
hmem.aggregate{name = "lists", by = {"ops", "annotations"}}
function classify(row) return "c" end
