-- Every call spends 30 ms of CPU: many such calls add up to more than a short --timeout,
-- but none of them alone runs that long, so none is stopped.
function classify(row)
  local t = os.clock()
  while os.clock() - t < 0.03 do end
  return "slow"
end
