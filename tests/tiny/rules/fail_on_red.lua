-- Issue 12: an error whose message quotes an op name holding terminal controls.
function classify(row)
  if row.op and row.op:find("RED", 1, true) then
    error("cannot place " .. row.op)
  end
  return "other"
end
