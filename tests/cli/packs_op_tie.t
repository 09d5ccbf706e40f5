# issue 15: on integer-µs traces an allocation at the very µs where aten::addmm ends and
# aten::relu begins is addmm's (the op that ends then); one where nothing ends is the
# op that begins (aten::mul)
$ hmem events -q tests/tiny/y_packs_op_tie.json | lua5.4 tests/csvcol.lua op
aten::addmm
aten::mul
? 0
