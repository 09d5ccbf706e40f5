# bash completion for hmem(1): commands, options per command, pack names and *.lua files for
# RULES, traces (*.json, *.json.gz) and directories for PATH.
_hmem()
{
	local cur prev words cword
	_init_completion 2>/dev/null || {
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD - 1]}
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
	}
	local cmd=${words[1]}
	if [ "$cword" -eq 1 ]; then
		COMPREPLY=($(compgen -W 'run events allocations packs --help -V --version' -- "$cur"))
		return
	fi
	case $prev in
	--json | --timeline | --html | --perfetto | --annotate | --csv)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	-I | --out)
		COMPREPLY=($(compgen -d -- "$cur"))
		return
		;;
	--format)
		COMPREPLY=($(compgen -W 'text csv json' -- "$cur"))
		return
		;;
	--color)
		COMPREPLY=($(compgen -W 'auto always never' -- "$cur"))
		return
		;;
	--top | --timeout | --lua-mem | -j)
		return
		;;
	esac
	local run_opts='--json --timeline --html --perfetto --annotate --summary --format --color --top -I --out --allow-io --timeout --lua-mem'
	local common='--keep-going -q --quiet -v --verbose -j --help'
	local opts
	case $cmd in
	run) opts="$run_opts $common" ;;
	allocations) opts="--csv -I --out --allow-io --timeout --lua-mem $common" ;;
	events) opts="--csv $common" ;;
	packs) opts='-I --timeout --lua-mem' ;;
	*) return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		return
	fi
	# RULES: the first word after run or allocations that is not an option or its value
	local i n=0
	for ((i = 2; i < cword; i++)); do
		case ${words[i]} in
		--json | --timeline | --html | --perfetto | --annotate | --csv | -I | --out | --format | --color | --top | --timeout | --lua-mem | -j) i=$((i + 1)) ;;
		-*) ;;
		*) n=$((n + 1)) ;;
		esac
	done
	if [ "$n" -eq 0 ] && { [ "$cmd" = run ] || [ "$cmd" = allocations ]; }; then
		local packs
		packs=$("${words[0]}" packs 2>/dev/null | sed -n 's/^  \([A-Za-z0-9_]\{1,\}\) .*/\1/p')
		COMPREPLY=($(compgen -W "$packs" -- "$cur") $(compgen -f -X '!*.lua' -- "$cur") $(compgen -d -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -f -X '!*.@(json|json.gz|gz)' -- "$cur") $(compgen -d -- "$cur"))
}
shopt -s extglob 2>/dev/null
complete -o filenames -F _hmem hmem
