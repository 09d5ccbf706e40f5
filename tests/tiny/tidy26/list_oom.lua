-- Reads row.ops (150 ops: more than a row keeps on the C stack) until the state's memory
-- (--lua-mem) runs out, inside pcall, so the error is raised inside the list's making and
-- the run goes on (issue 26: the list's C buffer leaked then; valgrind and LeakSanitizer see it).
local made, failed = 0, 0
return {
  classify = function(row)
    local keep = {}
    local ok, err = pcall(function()
      while true do
        keep[#keep + 1] = row.ops
        made = made + 1
      end
    end)
    keep = nil
    collectgarbage()
    if not ok and tostring(err):find("memory") then failed = failed + 1 end
    return #row.ops == 150 and "ops" or "other"
  end,
  done = function()
    print(("lists made before the memory ran out: %s; out of memory inside pcall: %d"):format(made > 100 and "many" or made, failed))
  end,
}
