# Issue 28: `hmem packs -I DIR` on a folder that keeps its busted specs beside its packs
# (examples/packs: team_rules.lua and team_rules_spec.lua) listed the spec as a broken pack
# ("team_rules_spec (fails to load: ...: undefined global 'describe')"). A *_spec.lua file is
# a test: it is skipped, and the listing says how many were.
$ hmem packs -I examples/packs | head -6
rule packs (use a name in place of a rule file: hmem run NAME PATH...):
  pytorch_host pytorch's categories on the GPUs, host memory as one category
               (examples/packs/pytorch_host.lua)
  team_rules   our team's view: the KV cache, then the training phase, with big allocations apart
               (examples/packs/team_rules.lua)
  (2 busted specs in examples/packs skipped: *_spec.lua files are tests, not packs)
? 0
$ hmem packs -I examples/packs | grep -c 'fails to load'
0
? 1
