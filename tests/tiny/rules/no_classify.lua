-- Loads fine but defines no classify function (a typo in its name).
function clasify(row)
  return "ok"
end
