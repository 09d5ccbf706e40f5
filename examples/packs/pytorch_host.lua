-- pytorch_host: the shipped pytorch pack, with host memory apart: an example of a pack made
-- of another with hmem.extend (README "Composing packs").
--
--   hmem run -I examples/packs pytorch_host traces/
--   busted --lpath='lua/?.lua;lua/?/init.lua;examples/packs/?.lua' examples/packs
--
-- Categories: "host" for every allocation in CPU memory (pinned buffers, tokenizer output,
-- the dataloader's batches), then pytorch's own on the GPUs (see lua/hmem/rules/pytorch.lua
-- for how each is inferred and where it can be wrong).
--
-- hmem.extend keeps what the pytorch pack needs to stay fast and right without this file
-- knowing it: its view, its cache_by (with "device" added, the one field this classify reads
-- besides), its categories and colours, and its done.
local hmem = require "hmem"
local pytorch = require "hmem.rules.pytorch"

return hmem.extend(pytorch, {
  name = "pytorch_host",
  description = "pytorch's categories on the GPUs, host memory as one category",
  categories = { { name = "host", color = "#7f7f7f" } },
  cache_by = { "device" },
  classify = function(row, inner)
    -- pytorch learns from the rows it sees (whether a trace's backward has run): ask it first
    local c = inner(row)
    if row.device == "cpu" then
      return "host"
    end
    return c
  end,
})
