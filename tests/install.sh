#!/usr/bin/env bash
# make install into a temporary prefix, then use what it installed from outside the checkout
# (issue 17): the installed hmem, a busted spec requiring hmem.testing and hmem.rules.size
# from the prefix alone, the man page, bash completion; make uninstall leaves no file.
set -u
cd "$(dirname "$0")/.."
repo=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
p=$tmp/prefix
check() { # check NAME COMMAND...: ok when COMMAND succeeds
	local name=$1
	shift
	if "$@"; then echo "ok - install: $name"; else echo "not ok - install: $name"; fi
}
if ! make -s install PREFIX="$p" >"$tmp/make.log" 2>&1; then
	echo "not ok - install: make install PREFIX=... failed"
	sed 's/^/#   /' "$tmp/make.log" | head -20
	exit 0
fi
echo "ok - install: make install PREFIX=..."
mkdir "$tmp/work"
cd "$tmp/work" || exit 1
# Nothing of the checkout on the paths: the prefix's bin and Lua directory only.
export PATH="$p/bin:/usr/local/bin:/usr/bin:/bin"
export LUA_PATH="$p/share/lua/5.4/?.lua;$p/share/lua/5.4/?/init.lua;/usr/share/lua/5.4/?.lua;/usr/share/lua/5.4/?/init.lua"
unset LUA_PATH_5_4 HMEM_PATH
check "the installed hmem is the one on PATH" test "$(command -v hmem)" = "$p/bin/hmem"
check "hmem -V from the prefix prints the version lua/hmem/init.lua sets" \
	test "$(hmem -V)" = "hmem $(sed -n 's/^hmem\.version = "\(.*\)"$/\1/p' "$repo/lua/hmem/init.lua")"
check "hmem run size on a trace, outside the checkout" \
	sh -c "hmem run size '$repo/tests/tiny/y_pair_basic.json' --json - | grep -q '\"peak_bytes\": 1536'"
cat >outside_spec.lua <<'SPEC'
local testing = require "hmem.testing"
local hmem = require "hmem"
describe("an installed hmem.testing", function()
  it("is the prefix's, not a checkout's", function()
    local where = package.searchpath("hmem.testing", package.path)
    assert.are.equal(os.getenv("PREFIX_LUA") .. "/hmem/testing.lua", where)
  end)
  it("classifies with a shipped pack", function()
    assert.are.equal("big (> 1 GiB)", testing.classify("hmem.rules.size", { bytes = 2 * hmem.GiB }))
  end)
  it("knows hmem's version from the installed binary", function()
    assert.are.equal(io.popen("hmem -V"):read("l"), "hmem " .. hmem.version)
  end)
end)
SPEC
if PREFIX_LUA="$p/share/lua/5.4" busted -o TAP outside_spec.lua >busted.log 2>&1 && grep -q '^ok 3 ' busted.log; then
	echo "ok - install: busted outside the checkout finds require \"hmem.testing\""
else
	echo "not ok - install: busted outside the checkout finds require \"hmem.testing\""
	sed 's/^/#   /' busted.log | head -20
fi
check "the man page from the prefix renders, exit codes included" \
	sh -c "groff -man -Tutf8 -P-cbou '$p/share/man/man1/hmem.1' 2>/dev/null | grep -q 'EXIT STATUS'"
# The examples (issue 28): every file of examples/ but the README's picture, where the man
# page says, and one runs from there as the man page shows.
ex=$p/share/doc/hmem/examples
missing=$(cd "$repo/examples" && find . -type f ! -name report.png | while read -r f; do cmp -s "$f" "$ex/$f" || echo "$f"; done | tr "\n" " ")
check "the examples are installed in PREFIX/share/doc/hmem/examples${missing:+ (missing: $missing)}" test -z "$missing"
check "the man page points to the installed examples" \
	sh -c "groff -man -Tutf8 -P-cbou '$p/share/man/man1/hmem.1' 2>/dev/null | grep -q 'PREFIX/share/doc/hmem/examples/'"
check "hmem run on the installed example rule file and traces" \
	sh -c "hmem run '$ex/size_buckets.lua' '$ex/traces/' --json - | grep -q '\"peak_bytes\"'"
complete_words() { # the completions bash offers for the words given (the last is completed)
	bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _hmem; printf "%s\n" "${COMPREPLY[@]}"' \
		_ "$p/share/bash-completion/completions/hmem" "$@"
}
offers() { # offers WANT WORDS...: bash completes the last word to exactly WANT (space-joined)
	local want=$1
	shift
	test "$(complete_words "$@" | tr '\n' ' ')" = "$want "
}
packs_offered() { complete_words hmem run s | grep -qx size; }
check "bash completion offers the commands" offers allocations hmem a
check "bash completion offers the options of run" offers "--html" hmem run --ht
check "bash completion offers the shipped packs as RULES" packs_offered
check "bash completion offers --format values" offers csv hmem run --format c
cd "$repo" || exit 1
make -s uninstall PREFIX="$p" >/dev/null 2>&1
left=$(find "$p" -type f | sed "s|^$p/||")
check "make uninstall removes every file install wrote${left:+ (left: $left)}" test -z "$left"
