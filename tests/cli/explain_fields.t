# Issue 14, who allocated it: modules (outermost first), frame (the innermost python frame
# that is user code: not torch/ nor /torch/, not <built-in>, not nn.Module) and step_ts (the
# start of the step slice: PyTorch 1.13 writes ProfilerStep#0 twice, the starts tell them apart).
$ SHOW="step step_ts module modules frame op" hmem run --allow-io tests/tiny/rules/show.lua tests/tiny/explain/y_who.json -q --json $T/o.json
step=0 step_ts=0.0 module=nil modules={} frame=nil op=nil
step=0 step_ts=100.0 module=Attention_1 modules={Model_0>Attention_1} frame=models/attn.py(40): forward op=aten::bmm
? 0
