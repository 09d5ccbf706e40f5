-- A team pack that carries its own limits (issue 15): budgets read from --set parameters,
-- converted by the pack, and a done that fails the run on purpose.
local hmem = require "hmem"

local limit = tonumber(hmem.args.limit or "") or 2 * hmem.KiB
hmem.budget{device = "cuda:*", max = limit}
hmem.budget{category = "big", max = "1KiB"}

return {
  name = "budgeted",
  categories = { "big", "small" },
  classify = function(row)
    return row.bytes >= 1024 and "big" or "small"
  end,
  done = function(report)
    if hmem.args.fail then
      hmem.fail("the rule file says no: " .. hmem.args.fail)
      print("not reached")
    end
  end,
}
