-- Category = what classify was given: "alloc", "free", or "free before trace" (rules 3, 4).
function classify(row)
  if row.kind == "free" and row.before_trace then
    return "free before trace"
  end
  return row.kind
end
