-- hmem.diff for runs on two vendors and many ranks (issue 28): series pair by (rank, device),
-- then by (rank, device index) across device kinds; --changed-only; names escaped as hmem's
-- other text is (src/util.c hm_esc).
local cjson = require "cjson"
local diff = require "hmem.diff"

local function report(series)
  local s = {}
  for i, x in ipairs(series) do
    s[i] = { path = x[1], rank = x[2], device = x[3], peak_bytes = x[4],
             categories = { { name = "c", peak_bytes = x[4], bytes_at_peak = x[4] } } }
  end
  return cjson.encode({ version = 1, series = s })
end

local function pairs_of(a, b, opts)
  opts = opts or {}
  opts.formats = { json = true }
  local out = diff.run(report(a), report(b), opts)
  return cjson.decode(out.json)
end

describe("hmem.diff pairing", function()
  it("pairs cuda:N with hip:N of the same rank, and says it did", function()
    local d = pairs_of({ { "a.json", 0, "cuda:1", 10 }, { "a.json", 0, "cuda:0", 10 }, { "a.json", 0, "cpu", 1 } },
      { { "b.json", 0, "hip:0", 20 }, { "b.json", 0, "hip:1", 30 }, { "b.json", 0, "cpu", 1 } })
    local seen = {}
    for _, p in ipairs(d.pairs) do seen[p.before.device .. ">" .. p.after.device] = p.across_kinds end
    assert.are.same({ ["cuda:0>hip:0"] = true, ["cuda:1>hip:1"] = true, ["cpu>cpu"] = false }, seen)
    assert.are.equal(0, #d.unmatched)
  end)

  it("prefers the same kind: a cuda:0 on both sides pairs there, the hip:0 left has no partner", function()
    local d = pairs_of({ { "a.json", 0, "cuda:0", 10 } }, { { "b.json", 0, "hip:0", 20 }, { "b.json", 0, "cuda:0", 30 } })
    assert.are.equal(1, #d.pairs)
    assert.are.equal("cuda:0", d.pairs[1].after.device)
    assert.is_false(d.pairs[1].across_kinds)
    assert.are.equal("hip:0", d.unmatched[1].device)
  end)

  it("never pairs across ranks, nor a cpu with a device", function()
    local d = pairs_of({ { "a.json", 0, "cuda:0", 10 }, { "a.json", 1, "cpu", 1 } },
      { { "b.json", 1, "hip:0", 20 }, { "b.json", 1, "cuda:0", 1 } })
    assert.are.equal(0, #d.pairs)
    assert.are.equal(4, #d.unmatched)
  end)
end)

describe("hmem.diff --changed-only", function()
  it("keeps the rows that changed and counts the pairs left out", function()
    local a = { { "a.json", 0, "cuda:0", 10 }, { "a.json", 1, "cuda:0", 10 } }
    local b = { { "b.json", 0, "cuda:0", 10 }, { "b.json", 1, "cuda:0", 12 } }
    local d = pairs_of(a, b, { changed_only = true })
    assert.are.equal(1, #d.pairs)
    assert.are.equal(1, d.unchanged_left_out)
    for _, r in ipairs(d.pairs[1].rows) do assert.are_not.equal(0, r.change) end
    local text = diff.run(report(a), report(b), { changed_only = true }).text
    assert.is_truthy(text:find("1 pair of series with no change left out (--changed-only)", 1, true))
  end)
end)

describe("hmem.diff text", function()
  it("escapes what a terminal obeys, as hm_esc does", function()
    assert.are.equal("a\\x1b[2Jb\\x0ac\\x09", diff.esc("a\27[2Jb\nc\t"))
    assert.are.equal("a\\x00b", diff.esc("a\0b"))
    assert.are.equal("\\x7f\\xc2\\x9b\\x80", diff.esc("\127\194\155\128")) -- DEL, C1 in UTF-8, a lone C1 byte
    assert.are.equal("é→ü\xff", diff.esc("é→ü\xff")) -- UTF-8 and a byte that is not: as they are
    assert.are.equal("\xe2\\x80", diff.esc("\xe2\x80")) -- a cut sequence: the lead as it is, the C1-range byte shown
  end)

  it("gives the rows of identical ranks once, and one overview line each", function()
    local a, b = {}, {}
    for r = 0, 7 do
      a[#a + 1] = { "r" .. r .. ".json", r, "cuda:0", 100 }
      b[#b + 1] = { "r" .. r .. ".json", r, "hip:0", 150 }
    end
    local text = diff.run(report(a), report(b), {}).text
    local overview, blocks = 0, 0
    for line in text:gmatch("[^\n]+") do
      if line:match("^ +%d  cuda:0 %-> hip:0 ") then overview = overview + 1 end
      if line:match("  %->  ") then blocks = blocks + 1 end
    end
    assert.are.equal(8, overview)
    assert.are.equal(1, blocks)
    assert.is_truthy(text:find("and 7 more pairs with these rows to the byte: rank 1, rank 2, rank 3, rank 4, rank 5, rank 6, rank 7", 1, true))
  end)
end)
