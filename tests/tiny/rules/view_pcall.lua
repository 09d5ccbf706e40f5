-- A view that raises is asked again the next time (a rule that goes on after pcall must not
-- get a code that was never given): aten::add raises once, then answers; done() reads the
-- view of the aten::add allocation again after other names were asked.
local failed, asked_add = false, 0
function view(name, kind)
  if name == "aten::add" then
    asked_add = asked_add + 1
    if not failed then
      failed = true
      error("not yet")
    end
  end
  return kind == "op" and name or nil
end
local seen = {}
function classify(row)
  local ok = pcall(function() return row.view end)
  seen[#seen + 1] = ok and "view" or "error"
  return "x"
end
function done(report)
  local first = report.series[1]:allocations()[1]
  local ok, v = pcall(function() return first.view end)
  seen[#seen + 1] = first.op .. (ok and type(v) == "number" and " view" or " error")
  print(table.concat(seen, " ") .. "; aten::add asked " .. asked_add .. " times")
end
