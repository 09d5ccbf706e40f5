-- Issue 12: a loop in a coroutine (--allow-io): hooks are per coroutine, and this one was
-- made before the watchdog set its hook.
function classify(row)
  local co = coroutine.wrap(function() while true do end end)
  co()
  return "c"
end
