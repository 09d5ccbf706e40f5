-- Always nil: every allocation goes to "unclassified" (rule 8).
function classify(row)
  return nil
end
