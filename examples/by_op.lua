-- By op: each allocation is charged to the innermost PyTorch op that made it.
-- Memory allocated outside any op (in Python code between ops) is "(no op)".
function classify(row)
  return row.op or "(no op)"
end
