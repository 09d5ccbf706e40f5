-- Snapshot rows as classify sees them (issue 25): where a block comes from, with its block
-- size, segment and stream (nil where the snapshot does not say).
function classify(row)
  return ("%s block=%s segment=%s stream=%s"):format(row.frame or "-", tostring(row.block_bytes),
    tostring(row.segment), tostring(row.stream))
end
