# A series' table fields (categories, live_at_peak, steps, ooms, leak) are made once per
# series: the same table at each read, and reading s.live_at_peak[i] for each of 1000 rows
# allocates nothing past the first read (issue 26: each read built the whole list again).
$ lua5.4 -e 'local t = {} for i = 1, 1000 do t[i] = ("{\"ph\": \"i\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": %d, \"args\": {\"Bytes\": %d, \"Addr\": %d, \"Device Id\": 0, \"Device Type\": 1}}"):format(i, 512 + i, 4096 * i) end print("{\"traceEvents\": [" .. table.concat(t, ",\n") .. "]}")' > $T/many.json
? 0
$ hmem run tests/tiny/tidy26/series_kept.lua $T/many.json -q --top 1000 --json $T/r.json
categories: the same table at each read
live_at_peak: the same table at each read
steps: the same table at each read
ooms: the same table at each read
leak: the same table at each read
over 500 rows live at the peak read one by one: under 64 KiB allocated
? 0
$ hmem run tests/tiny/tidy26/series_kept.lua tests/data/tracelens/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz -q --json $T/o.json
categories: the same table at each read
live_at_peak: the same table at each read
steps: the same table at each read
ooms: the same table at each read
leak: the same table at each read
20 rows live at the peak read one by one: under 64 KiB allocated
? 0
