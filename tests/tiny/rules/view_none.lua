-- row.view without a view declared: an error that says what to add.
function classify(row)
  return row.view and "x" or "y"
end
