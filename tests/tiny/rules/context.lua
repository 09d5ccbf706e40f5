-- Prints the context fields of every classified row (issue 3), one line each.
local function names(list)
  local out = {}
  for i, v in ipairs(list) do
    out[i] = type(v) == "table" and (v.name .. "@" .. v.cat) or v
  end
  return "{" .. table.concat(out, " | ") .. "}"
end

function classify(row)
  print(("%s %d at %s: op=%s ops=%s annotations=%s step=%s module=%s python=%s thread=%s free_op=%s free_ops=%s")
    :format(row.kind, row.bytes, row.ts, tostring(row.op), names(row.ops), names(row.annotations),
      tostring(row.step), tostring(row.module), names(row.python), tostring(row.thread),
      tostring(row.free_op), names(row.free_ops)))
  print("  stack=" .. names(row.stack))
  return row.kind
end
