-- Every field a snapshot row adds, joined into one category name (tests/cli/snap_inputs.t).
function classify(row)
  return table.concat({ row.frame, #row.frames, row.frames[1].name, row.frames[2].line, row.frames[2].file,
    row.block_bytes, row.bytes, row.stream, row.compile_context, row.user_metadata,
    table.concat(row.annotations, ">") }, "|")
end
