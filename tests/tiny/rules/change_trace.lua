-- Runs with --allow-io: done() overwrites the trace the run just read (the path in
-- HMEM_TEST_TRACE), so --annotate finds another file when it re-reads it: shorter than
-- before, or (HMEM_TEST_PAD set) as long but with something else where the events were.
function classify(row)
  return "all"
end

function done(report)
  local f = assert(io.open(os.getenv("HMEM_TEST_TRACE"), "w"))
  f:write('{"traceEvents": {"changed": true}', os.getenv("HMEM_TEST_PAD") and (', "pad": "' .. ("x"):rep(100) .. '"') or "", "}")
  f:close()
end
