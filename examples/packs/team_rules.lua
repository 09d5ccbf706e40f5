-- team_rules: an example team pack, composed from the shipped phase and size packs.
--
--   hmem run examples/packs/team_rules.lua traces/
--   busted --lpath='lua/?.lua;lua/?/init.lua;examples/packs/?.lua' examples/packs
--
-- Categories:
--   "kv cache"                      an inference engine's KV cache: allocated under an op,
--                                   annotation or Python frame whose name mentions kv_cache /
--                                   "kv cache" (vLLM's _allocate_kv_cache..., initialize_kv_cache)
--   "<phase>: very big (> 5 GiB)"   a very big or big allocation, by the training phase that
--   "<phase>: big (> 1 GiB)"        made it (hmem.rules.phase: forward, backward, optimizer,
--                                   other), e.g. "backward: big (> 1 GiB)"
--   "<phase>"                       every other allocation, by phase
-- Where it can be wrong: what hmem.rules.phase and hmem.rules.size say in their headers; a
-- KV cache allocated by code whose names do not mention it is counted by phase and size.
local phase = require "hmem.rules.phase"
local size = require "hmem.rules.size"

local BIG = { ["very big (> 5 GiB)"] = true, ["big (> 1 GiB)"] = true }

local function mentions_kv_cache(names)
  for i = 1, #names do
    local n = names[i]:lower()
    if n:find("kv_cache", 1, true) or n:find("kv cache", 1, true) or n:find("kvcache", 1, true) then
      return true
    end
  end
  return false
end

-- Categories in display order: the KV cache first, then per phase its big buckets and itself.
local categories = { { name = "kv cache", color = "#8c564b" } }
for _, p in ipairs(phase.categories) do
  for _, s in ipairs(size.categories) do
    if BIG[s.name] then
      categories[#categories + 1] = p.name .. ": " .. s.name
    end
  end
  categories[#categories + 1] = { name = p.name, color = p.color }
end

return {
  name = "team_rules",
  description = "our team's view: the KV cache, then the training phase, with big allocations apart",
  categories = categories,
  classify = function(row)
    -- Call phase for every row: its ProfilerStep fallback learns from the rows it sees.
    local p = phase.classify(row)
    if mentions_kv_cache(row.ops) or mentions_kv_cache(row.annotations) or mentions_kv_cache(row.python) then
      return "kv cache"
    end
    local s = size.classify(row)
    if BIG[s] then
      return p .. ": " .. s
    end
    return p
  end,
}
