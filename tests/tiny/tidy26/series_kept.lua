-- A series' table fields are made once (issue 26): the same table at every read, and a loop
-- reading s.live_at_peak[i] for every i allocates nothing past the first read (it once built
-- the whole list at each read: quadratic). The collector is stopped while it counts.
return {
  classify = function(row) return "x" end,
  done = function(report)
    local s = report.series[1]
    for _, k in ipairs{"categories", "live_at_peak", "steps", "ooms", "leak"} do
      local a, b = s[k], s[k]
      print(k .. ": " .. (a == nil and "nil" or rawequal(a, b) and "the same table at each read" or "a new table at each read"))
    end
    local n = #s.live_at_peak
    collectgarbage("stop")
    local before = collectgarbage("count")
    local bytes = 0
    for i = 1, n do bytes = bytes + s.live_at_peak[i].bytes end
    local kb = collectgarbage("count") - before
    collectgarbage("restart")
    print(("%s rows live at the peak read one by one: %s"):format(n > 500 and "over 500" or n,
      kb < 64 and "under 64 KiB allocated" or ("%.0f KiB allocated"):format(kb)))
  end,
}
