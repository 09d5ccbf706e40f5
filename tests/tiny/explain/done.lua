-- Prints the explain fields done(report) gets (tests/cli/explain_outputs.t, issue 14).
function classify(row) return tostring(row.bytes) end
function done(report)
  for _, s in ipairs(report.series) do
    print(s.device, s.reserved_unallocated_at_peak, s.max_reserved_unallocated, s.max_reserved_unallocated_ts, s.leak.verdict, s.leak.steps, s.leak.per_step_bytes, #s.steps, #s.ooms)
    for _, o in ipairs(s.ooms) do
      print(" oom", o.ts, o.bytes, o.op, table.concat(o.ops, ">"), o.step, o.step_ts, o.thread, o.freed_after, #o.live, o.live[1] and o.live[1].bytes, o.live[1] and table.concat(o.live[1].ops, ">"), o.categories[2].name, o.categories[2].bytes)
    end
    for _, st in ipairs(s.steps) do print(" step", st.step, st.start_ts, st.end_bytes, st.categories[1].name) end
  end
end
