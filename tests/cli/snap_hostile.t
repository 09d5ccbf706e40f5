# Memory snapshots (issue 18): hostile pickles are refused before anything is done with them,
# each with the file, the byte offset of the opcode at fault and exit code 4. The pickles are
# written by tests/snapshots/gen.py hostile.

# A trace entry whose frames are an object that calls os.system: refused at its STACK_GLOBAL,
# and the command never runs (no marker file).
$ python3 tests/snapshots/gen.py hostile $T/h && cd $T/h && hmem run size os_system.pickle; echo "exit $?"; test -e marker && echo "it ran" || echo "nothing ran"
hmem: os_system.pickle:93: refused pickle opcode STACK_GLOBAL (0x93): a memory snapshot holds only data, and hmem never imports, calls or builds objects
hmem: stopped; use --keep-going to skip traces that cannot be read
exit 4
nothing ran
? 0
# The same file does run its command under Python's pickle.load: the test is a real attack.
$ cd $T/h && python3 -c 'import pickle,sys; pickle.load(open(sys.argv[1],"rb"))' os_system.pickle >/dev/null 2>&1; test -e marker && echo "pickle.load ran it"
pickle.load ran it
? 0
# Every opcode outside the 33 data opcodes, at byte 5 of a dict being filled.
$ cd $T/h && for f in op_*.pickle; do hmem run size $f -q; echo "exit $?"; done 2>&1 | grep -v "^hmem: stopped"
hmem: op_binbytes.pickle:5: refused pickle opcode BINBYTES (0x42): a memory snapshot holds only data, and hmem never imports, calls or builds objects
exit 4
hmem: op_binbytes8.pickle:5: refused pickle opcode BINBYTES8 (0x8e): a memory snapshot holds only data, and hmem never imports, calls or builds objects
exit 4
hmem: op_binpersid.pickle:5: refused pickle opcode BINPERSID (0x51): a memory snapshot holds only data, and hmem never imports, calls or builds objects
exit 4
hmem: op_build.pickle:5: refused pickle opcode BUILD (0x62): a memory snapshot holds only data, and hmem never imports, calls or builds objects
exit 4
hmem: op_bytearray8.pickle:5: refused pickle opcode BYTEARRAY8 (0x96): a memory snapshot holds only data, and hmem never imports, calls or builds objects
exit 4
hmem: op_dup.pickle:5: refused pickle opcode DUP (0x32): a memory snapshot holds only data, and hmem never imports, calls or builds objects
exit 4
hmem: op_empty_set.pickle:5: refused pickle opcode EMPTY_SET (0x8f): a memory snapshot holds only data, and hmem never imports, calls or builds objects
exit 4
hmem: op_ext1.pickle:5: refused pickle opcode EXT1 (0x82): a memory snapshot holds only data, and hmem never imports, calls or builds objects
exit 4
hmem: op_ext2.pickle:5: refused pickle opcode EXT2 (0x83): a memory snapshot holds only data, and hmem never imports, calls or builds objects
exit 4
hmem: op_ext4.pickle:5: refused pickle opcode EXT4 (0x84): a memory snapshot holds only data, and hmem never imports, calls or builds objects
exit 4
hmem: op_frozenset.pickle:5: refused pickle opcode FROZENSET (0x91): a memory snapshot holds only data, and hmem never imports, calls or builds objects
exit 4
hmem: op_global.pickle:5: refused pickle opcode GLOBAL (0x63): a memory snapshot holds only data, and hmem never imports, calls or builds objects
exit 4
hmem: op_inst.pickle:5: refused pickle opcode INST (0x69): a memory snapshot holds only data, and hmem never imports, calls or builds objects
exit 4
hmem: op_long4.pickle:5: refused pickle opcode LONG4 (0x8b): a memory snapshot holds only data, and hmem never imports, calls or builds objects
exit 4
hmem: op_newobj.pickle:5: refused pickle opcode NEWOBJ (0x81): a memory snapshot holds only data, and hmem never imports, calls or builds objects
exit 4
hmem: op_newobj_ex.pickle:5: refused pickle opcode NEWOBJ_EX (0x92): a memory snapshot holds only data, and hmem never imports, calls or builds objects
exit 4
hmem: op_next_buffer.pickle:5: refused pickle opcode NEXT_BUFFER (0x97): a memory snapshot holds only data, and hmem never imports, calls or builds objects
exit 4
hmem: op_obj.pickle:5: refused pickle opcode OBJ (0x6f): a memory snapshot holds only data, and hmem never imports, calls or builds objects
exit 4
hmem: op_persid.pickle:5: refused pickle opcode PERSID (0x50): a memory snapshot holds only data, and hmem never imports, calls or builds objects
exit 4
hmem: op_pop.pickle:5: refused pickle opcode POP (0x30): a memory snapshot holds only data, and hmem never imports, calls or builds objects
exit 4
hmem: op_reduce.pickle:5: refused pickle opcode REDUCE (0x52): a memory snapshot holds only data, and hmem never imports, calls or builds objects
exit 4
hmem: op_short_binbytes.pickle:5: refused pickle opcode SHORT_BINBYTES (0x43): a memory snapshot holds only data, and hmem never imports, calls or builds objects
exit 4
hmem: op_stack_global.pickle:5: refused pickle opcode STACK_GLOBAL (0x93): a memory snapshot holds only data, and hmem never imports, calls or builds objects
exit 4
hmem: op_string.pickle:5: refused pickle opcode STRING (0x53): a memory snapshot holds only data, and hmem never imports, calls or builds objects
exit 4
hmem: op_unknown.pickle:5: unknown pickle opcode 0xff
exit 4
? 0
# Bounds and malformed data: truncation (inside the data, and no STOP), a memo index out of
# range or never set, APPENDS without its MARK, declared string lengths too big or beyond the
# data, a list that contains itself, 100 nested lists (at most 64), invalid UTF-8, a LONG1 of
# 10 bytes, protocol 1, a pickle that is no snapshot.
$ cd $T/h && for f in truncated no_stop memo_range memo_unset mark_underflow huge_string long_string self_list deep bad_utf8 long1_wide proto1 not_snapshot; do hmem run size $f.pickle -q; echo "exit $?"; done 2>&1 | grep -v "^hmem: stopped"
hmem: truncated.pickle:45: the pickle ends before its STOP opcode (truncated)
exit 4
hmem: no_stop.pickle:3: the pickle ends before its STOP opcode (truncated)
exit 4
hmem: memo_range.pickle:3: memo index 2147483647 out of range
exit 4
hmem: memo_unset.pickle:4: memo index 5 was never set
exit 4
hmem: mark_underflow.pickle:4: no MARK is open (mark stack underflow)
exit 4
hmem: huge_string.pickle:2: a string of 4611686018427387904 bytes (at most 1 GiB)
exit 4
hmem: long_string.pickle:2: a string of 268435456 bytes, but the pickle ends 4 bytes later
exit 4
hmem: self_list.pickle:2: the container made here contains itself (a cycle)
exit 4
hmem: deep.pickle:66: containers nested more than 64 deep
exit 4
hmem: bad_utf8.pickle:5: invalid UTF-8 in a string
exit 4
hmem: long1_wide.pickle:2: an integer of 10 bytes (hmem reads 64-bit integers)
exit 4
hmem: proto1.pickle:0: pickle protocol 1 (hmem reads protocols 2 to 5; re-save it with pickle.dump(snapshot, f, protocol=4))
exit 4
hmem: not_snapshot.pickle:11: memory snapshot: segment 0 is not a dict
exit 4
? 0
# --keep-going skips a refused snapshot like any bad trace, and reads the good one.
$ cd $T/h && hmem run size op_reduce.pickle fields.pickle --keep-going --json - 2>/dev/null | lua5.4 $OLDPWD/tests/jget.lua skipped.1.path series.1.end_bytes
op_reduce.pickle
100
? 0
