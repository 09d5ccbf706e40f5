-- Fails while the file itself runs (before any trace is read), on line 3.
local cfg = nil
local limit = cfg.limit

function classify(row)
  return "ok"
end
