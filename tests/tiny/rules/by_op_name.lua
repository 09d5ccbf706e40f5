-- Issue 12: each allocation's category is its op's name, as the trace wrote it.
function classify(row)
  return row.op or "(no op)"
end
