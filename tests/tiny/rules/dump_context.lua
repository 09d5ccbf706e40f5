-- Prints, for every allocation, its op, annotations and step (tests/ops.lua compares them
-- with a brute-force search of the trace file).
function classify(row)
  if row.kind == "alloc" then
    print(table.concat({ row.device, tostring(row.op or ""), table.concat(row.annotations, " > "),
      tostring(row.step or "") }, "\t"))
  end
  return "x"
end
