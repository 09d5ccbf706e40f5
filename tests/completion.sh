#!/usr/bin/env bash
# Bash completion (issue 24): TAB never runs hmem (a looping rule pack made each TAB of the old
# completion, which ran `hmem packs`, take a minute), knows every command and option of the
# built hmem's --help, and offers file names with spaces whole.
# Usage: tests/completion.sh [COMPLETION]  (default build/hmem.bash, which make writes)
# Prints a plan, then "ok - NAME" or "not ok - NAME" per check.
set -u
cd "$(dirname "$0")/.." || exit 1
repo=$PWD
comp=${1:-build/hmem.bash}
case $comp in /*) ;; *) comp=$repo/$comp ;; esac
echo "1..16"
if [ ! -f "$comp" ] || [ ! -x ./hmem ]; then
	echo "not ok - completion: $comp or ./hmem is missing (make hmem build/hmem.bash)"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
help=$(./hmem --help)

# A fake hmem first on PATH, which notes each call; and a pack that loops on HMEM_PATH.
mkdir -p "$tmp/bin" "$tmp/packs" "$tmp/cwd/a dir" "$tmp/cwd/rules dir"
printf '#!/bin/sh\necho "$@" >> "%s/called"\nsleep 5\n' "$tmp" >"$tmp/bin/hmem"
chmod +x "$tmp/bin/hmem"
printf 'while true do end\n' >"$tmp/packs/looping.lua"
cd "$tmp/cwd" || exit 1
touch "my trace.json" "my trace 2.json.gz" "my notes.txt" "my rules.lua" "other.json"

# The completions bash offers for the words given (the last is completed), one per line,
# sorted; each word as typed on the command line (quotes and backslashes kept).
complete_words() {
	PATH="$tmp/bin:$PATH" HMEM_PATH="$tmp/packs" bash --norc --noprofile -c '
		source "$1" || exit 1
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		_hmem
		printf "%s\n" "${COMPREPLY[@]}"' _ "$comp" "$@" 2>&1 | LC_ALL=C sort
}
n=0
check() { # check NAME COMMAND...: ok when COMMAND succeeds
	local name=$1
	shift
	n=$((n + 1))
	if "$@"; then echo "ok $n - completion: $name"; else echo "not ok $n - completion: $name"; fi
}
offers() { # offers WANT WORDS...: the completions are exactly WANT (space-joined, sorted)
	local want=$1 got
	shift
	got=$(complete_words "$@" | tr '\n' ' ')
	[ "$got" = "$want " ] || { echo "#   hmem ${*:2}<TAB>: got '$got', want '$want '"; return 1; }
}
among() { # among yes|no NAME... -- WORDS...: each NAME is (yes) or is not (no) offered
	local mode=$1 names=() got w
	shift
	while [ "$1" != -- ]; do names+=("$1"); shift; done
	shift
	got=$(complete_words "$@")
	for w in "${names[@]}"; do
		if grep -qxF -- "$w" <<<"$got"; then
			[ "$mode" = yes ] || { echo "#   hmem ${*:2}<TAB>: '$w' offered"; return 1; }
		else
			[ "$mode" = no ] || { echo "#   hmem ${*:2}<TAB>: no '$w' in: $(tr '\n' ' ' <<<"$got")"; return 1; }
		fi
	done
}

# Every command of the usage lines, and every option --help names, in the generated lists.
commands=$(sed -n 's/^\(usage:\)\{0,1\} *hmem \([a-z][a-z]*\) .*/\2/p' <<<"$help" | LC_ALL=C sort | tr '\n' ' ')
check "hmem <TAB> offers the commands of hmem --help (${commands% })" \
	offers "--help --version -V ${commands% }" hmem ''
all_opts() { grep -o -E '(^|[[:space:][,])--?[a-zA-Z][a-zA-Z0-9-]*' <<<"$help" | sed 's/^[[:space:][,]*//' | LC_ALL=C sort -u; }
known() { # every option of --help is offered to some command
	local o missing=
	for o in $(all_opts); do
		grep -q -E "^_hmem_(opts_[a-z]+|top)='(.* )?$o( .*)?'$" "$comp" || missing+=" $o"
	done
	[ -z "$missing" ] || { echo "#   not in any command's list:$missing"; return 1; }
}
check "every option of hmem --help is completed for its command" known
check "hmem run -<TAB>: the outputs, the run options and the common ones" \
	among yes --json --timeline --html --perfetto --annotate --db --partial --summary --format --color --top --steps --fail-above --set -I --out --keep-going -q --quiet -v -j --help -- hmem run -
check "hmem run --<TAB>: not the options of events, allocations and diff" \
	among no --csv --fail-above-delta -- hmem run --
check "hmem diff --<TAB>: diff's options, those shared with run" \
	among yes --json --html --format --summary --fail-above-delta --top --set --timeout --lua-mem --allow-io -- hmem diff --
check "hmem diff --<TAB>: not run's other outputs nor --keep-going" \
	among no --timeline --perfetto --partial --db --keep-going --csv -- hmem diff --
plan_merge() {
	local plan merge
	plan=$(complete_words hmem plan - | tr '\n' ' ')
	merge=$(complete_words hmem merge -)
	[ "$plan" = "--help --shard " ] && grep -qx -e --json <<<"$merge" && grep -qx -e --summary <<<"$merge" &&
		grep -qx -e --timeout <<<"$merge" && grep -qx -e -I <<<"$merge" &&
		! grep -qxE -e '--(partial|top|set|steps|from|to)' <<<"$merge"
}
check "hmem plan -<TAB> and hmem merge -<TAB> (run's outputs and the merge's own limits, not the options the partials give)" plan_merge
values() {
	[ "$(complete_words hmem run --format '' | tr '\n' ' ')" = "csv json text " ] &&
		[ "$(complete_words hmem run --color a | tr '\n' ' ')" = "always auto " ]
}
check "hmem run --format <TAB> and --color a<TAB>: their values" values
check "hmem run <TAB>: the shipped packs, *.lua files (with spaces) and folders, not traces" \
	offers "a dir lifetime my rules.lua op phase pytorch rules dir size" hmem run ''
check "hmem run size my\\ <TAB>: the traces named with a space, whole" \
	offers "my trace 2.json.gz my trace.json" hmem run size 'my\ '
check "hmem run size \"my t<TAB> (an open quote)" \
	offers "my trace 2.json.gz my trace.json" hmem run size '"my t'
check "hmem run size x.json --json my<TAB>: any file" \
	offers "my notes.txt my rules.lua my trace 2.json.gz my trace.json" hmem run size x.json --json my
check "hmem run -I <TAB>: folders (with spaces)" offers "a dir rules dir" hmem run -I ''
diff_sides() {
	local first second
	first=$(complete_words hmem diff '')
	second=$(complete_words hmem diff size other.json '')
	grep -qx size <<<"$first" && grep -qx other.json <<<"$first" && ! grep -qx size <<<"$second" &&
		grep -qx other.json <<<"$second"
}
check "hmem diff <TAB>: [RULES] or BEFORE, then BEFORE AFTER" diff_sides
# The last checks: every completion above ran with the fake hmem first on PATH.
never_ran() { ! test -e "$tmp/called" || { sed "s/^/#   ran: hmem /" "$tmp/called"; false; }; }
check "no TAB ran hmem" never_ran
loaded() { bash --norc -c 'source "$1"; complete -p hmem' _ "$comp" | grep -q -- "-F _hmem hmem"; }
check "the completion is loaded by name (complete -p hmem)" loaded
