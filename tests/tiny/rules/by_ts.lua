-- Category = the event's own time ("at 10.000"): a free classified by its own fields
-- would land in a different category than its allocation (rule 2 says it must not).
function classify(row)
  return ("at %.3f"):format(row.ts)
end
