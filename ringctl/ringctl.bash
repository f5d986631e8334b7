# bash completion for ringctl(8). Installed as
# /usr/share/bash-completion/completions/ringctl; works sourced on its own
# too (it uses no bash-completion helper).
#
# Commands and options are the ones of ringctl's table (ringctl/help.c,
# printed by `ringctl -f json help`), formats the ones `ringctl --help`
# lists (tests/integration/test_completion.py checks that they agree). Node, edge
# and ring names come from the coordinator: `ringctl -f keyvalue status` on the
# socket the command line names (-s, else $RINGCTL_SOCKET, else the
# default), bounded to about 2 s so that a coordinator that is down or hung
# costs a short pause and no names, never a stuck shell.

_ringctl_formats="plain keyvalue json"
_ringctl_rank_formats="hostfile rankfile torchrun env"
_ringctl_status_formats="svg"
_ringctl_commands="status inventory explain forget survey ranks alerts check history watch plan test pki help"
_ringctl_check_cmds="ranks rendezvous nccl-env all"
_ringctl_test_cmds="bw lat rdma-bw rdma-lat allreduce"
_ringctl_pki_cmds="init issue"
_ringctl_global_opts="-s -f -t -h --help -V --version"
_ringctl_watch_kinds="node edge topology alert health survey measurement"

# The coordinator's status as keyvalue lines, or nothing. $1: the socket
# given with -s (may be empty), $2: the ringctl to run.
_ringctl_status_kv()
{
	local args=(-t 1.5 -f keyvalue)
	[[ -n $1 ]] && args=(-s "$1" "${args[@]}")
	if type -P timeout >/dev/null; then
		timeout -k 0.5 2 "$2" "${args[@]}" status 2>/dev/null </dev/null
	else
		"$2" "${args[@]}" status 2>/dev/null </dev/null
	fi
}

# Node names (one per line) from status: the records of list "nodes" are
# named by their node (nodes.NAME.state=...); a name may hold dots, so the
# member "state" right after it marks its end.
_ringctl_nodes()
{
	_ringctl_status_kv "$1" "$2" |
		sed -n 's/^nodes\.\([A-Za-z0-9_][A-Za-z0-9._-]*\)\.state=.*/\1/p' |
		sort -u
}

# Edge names (a-b, a-b:IFACE for a twin) from status: the last survey's
# edges, each with its state now (topology.edges.NAME.live_state=...).
_ringctl_edges()
{
	_ringctl_status_kv "$1" "$2" |
		sed -n 's/^topology\.edges\.\([A-Za-z0-9_][A-Za-z0-9._:-]*\)\.live_state=.*/\1/p' |
		sort -u
}

# Ring ids (one per line) from status: every ring of the site
# (topology.rings.NAME.id=ID; the record's name has '.' made '_', the id
# is as the coordinator gave it).
_ringctl_rings()
{
	_ringctl_status_kv "$1" "$2" |
		sed -n 's/^topology\.rings\.[A-Za-z0-9_+:@-]*\.id=\([A-Za-z0-9_][A-Za-z0-9._-]*\)$/\1/p' |
		sort -u
}

# Complete the last element of a comma-separated list in $cur from the
# words in $1.
_ringctl_comma_list()
{
	local head="" last="$cur"
	if [[ $cur == *,* ]]; then
		head="${cur%,*},"
		last="${cur##*,}"
	fi
	local w
	COMPREPLY=()
	while IFS= read -r w; do
		[[ -n $w ]] && COMPREPLY+=("$head$w")
	done < <(compgen -W "$1" -- "$last")
	[[ ${#COMPREPLY[@]} -gt 0 ]] && compopt -o nospace 2>/dev/null
	return 0
}

_ringctl()
{
	local cur="${COMP_WORDS[COMP_CWORD]}"
	local prev=""
	((COMP_CWORD > 0)) && prev="${COMP_WORDS[COMP_CWORD - 1]}"
	local prog="${COMP_WORDS[0]}"
	# A path typed (./build/bin/ringctl) is the ringctl to ask; else PATH's.
	if [[ $prog != */* || ! -x $prog ]]; then
		prog=ringctl
	fi
	COMPREPLY=()

	# The command line so far: -s's value, the command and its words
	# (global options and their values taken out, as ringctl does).
	local sock="" cmd="" i w
	local -a args=()
	for ((i = 1; i < COMP_CWORD; i++)); do
		w="${COMP_WORDS[i]}"
		case "$w" in
		-s | -f | -t)
			((i++))
			[[ $w == -s ]] && sock="${COMP_WORDS[i]}"
			continue
			;;
		-s?*) sock="${w#-s}"; continue ;;
		-f?* | -t?*) continue ;;
		esac
		if [[ -z $cmd && $w != -* ]]; then
			cmd="$w"
		elif [[ -n $cmd ]]; then
			args+=("$w")
		fi
	done
	# ~ in -s as the shell would expand it (the word is still literal).
	# shellcheck disable=SC2088
	[[ $sock == "~/"* ]] && sock="$HOME/${sock#"~/"}"

	case "$prev" in
	-f)
		if [[ -z $cmd ]]; then
			mapfile -t COMPREPLY < <(compgen -W "$_ringctl_formats $_ringctl_rank_formats $_ringctl_status_formats" -- "$cur")
		elif [[ $cmd == ranks ]]; then
			mapfile -t COMPREPLY < <(compgen -W "$_ringctl_formats $_ringctl_rank_formats" -- "$cur")
		elif [[ $cmd == status ]]; then
			mapfile -t COMPREPLY < <(compgen -W "$_ringctl_formats $_ringctl_status_formats" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -W "$_ringctl_formats" -- "$cur")
		fi
		return 0
		;;
	-s)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return 0
		;;
	-t) return 0 ;;
	esac

	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			mapfile -t COMPREPLY < <(compgen -W "$_ringctl_global_opts" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -W "$_ringctl_commands" -- "$cur")
		fi
		return 0
	fi

	# Words of the command that are not options (its positional arguments).
	local -a pos=()
	local skip=0
	for w in "${args[@]}"; do
		if ((skip)); then skip=0; continue; fi
		case "$w" in
		--wait | --all | --coordinator | --verbose | -v) ;;
		--*=*) ;;
		--*) skip=1 ;;
		*) pos+=("$w") ;;
		esac
	done
	local npos=${#pos[@]}
	local opts=""

	# --ring ID: the commands about one ring of a site (issue 24).
	if [[ $prev == --ring ]]; then
		case "$cmd" in
		status | ranks | check | explain | plan | history | watch | survey | test)
			mapfile -t COMPREPLY < <(compgen -W "$(_ringctl_rings "$sock" "$prog")" -- "$cur")
			;;
		esac
		return 0
	fi

	case "$cmd" in
	status) opts="-v --verbose --ring" ;;
	inventory | forget)
		if [[ $cur != -* ]] && ((npos == 0)); then
			mapfile -t COMPREPLY < <(compgen -W "$(_ringctl_nodes "$sock" "$prog")" -- "$cur")
			return 0
		fi
		;;
	explain)
		opts="--ring"
		if [[ $cur != -* ]] && ((npos == 0)); then
			mapfile -t COMPREPLY < <(compgen -W "$(_ringctl_nodes "$sock" "$prog") $(_ringctl_edges "$sock" "$prog")" -- "$cur")
			return 0
		fi
		;;
	survey) opts="--wait -v --ring" ;;
	ranks) opts="--ring" ;;
	alerts)
		case "$prev" in --since) return 0 ;; esac
		opts="--all --since"
		;;
	history)
		case "$prev" in --since | --before) return 0 ;; esac
		opts="--since --before --ring"
		if [[ $cur != -* ]] && ((npos == 0)); then
			mapfile -t COMPREPLY < <(compgen -W "$(_ringctl_edges "$sock" "$prog")" -- "$cur")
			return 0
		fi
		;;
	watch)
		case "$prev" in
		--count) return 0 ;;
		--kind)
			_ringctl_comma_list "$_ringctl_watch_kinds"
			return 0
			;;
		esac
		opts="--count --kind --ring"
		;;
	check)
		if ((npos == 0)); then
			[[ $cur != -* ]] && mapfile -t COMPREPLY < <(compgen -W "$_ringctl_check_cmds" -- "$cur")
			return 0
		fi
		opts="--ring"
		case "${pos[0]}" in
		nccl-env)
			[[ $prev == --nccl-version ]] && return 0
			if [[ $cur == -* ]]; then
				mapfile -t COMPREPLY < <(compgen -W "--nccl-version --ring $_ringctl_global_opts" -- "$cur")
				return 0
			fi
			compopt -o filenames 2>/dev/null
			mapfile -t COMPREPLY < <(compgen -f -- "$cur")
			return 0
			;;
		ranks)
			if [[ $cur != -* ]] && ((npos == 1)); then
				compopt -o filenames 2>/dev/null
				mapfile -t COMPREPLY < <(compgen -f -- "$cur")
				return 0
			fi
			;;
		all)
			case "$prev" in
			--hostfile | --env)
				compopt -o filenames 2>/dev/null
				mapfile -t COMPREPLY < <(compgen -f -- "$cur")
				return 0
				;;
			--rendezvous | --nccl-version) return 0 ;;
			esac
			opts="--hostfile --env --rendezvous --nccl-version --ring"
			;;
		esac
		;;
	plan)
		case "$prev" in
		--nodes)
			_ringctl_comma_list "$(_ringctl_nodes "$sock" "$prog")"
			return 0
			;;
		--weights)
			compopt -o filenames 2>/dev/null
			mapfile -t COMPREPLY < <(compgen -f -- "$cur")
			return 0
			;;
		--model-bytes | --params | --bytes-per-param | --reserve | \
			--max-bytes | --layers | --token-ms | --allreduce-bytes)
			return 0
			;;
		esac
		opts="--model-bytes --params --bytes-per-param --reserve --nodes --weights --max-bytes --layers --token-ms --allreduce-bytes --ring"
		;;
	test)
		if ((npos == 0)); then
			[[ $cur != -* ]] && mapfile -t COMPREPLY < <(compgen -W "$_ringctl_test_cmds" -- "$cur")
			return 0
		fi
		case "$prev" in
		--op)
			mapfile -t COMPREPLY < <(compgen -W "write read" -- "$cur")
			return 0
			;;
		--direction)
			mapfile -t COMPREPLY < <(compgen -W "a-to-b b-to-a both" -- "$cur")
			return 0
			;;
		--transport)
			mapfile -t COMPREPLY < <(compgen -W "auto tcp rdma" -- "$cur")
			return 0
			;;
		--nodes | --order)
			_ringctl_comma_list "$(_ringctl_nodes "$sock" "$prog")"
			return 0
			;;
		--*) return 0 ;;
		esac
		case "${pos[0]}" in
		bw) opts="--streams --duration --warmup --direction" ;;
		lat) opts="--sizes --iterations" ;;
		rdma-bw) opts="--op --qps --size --duration --warmup --iterations --tx-depth --cq-mod --post-list --gid-a --gid-b --mtu --tc --sl --ack-timeout" ;;
		rdma-lat) opts="--op --sizes --iterations --gid-a --gid-b --tc --sl --ack-timeout" ;;
		allreduce) opts="--nodes --order --sizes --iterations --warmup --step-timeout --transport --ring" ;;
		esac
		# A and B: two nodes (allreduce takes none).
		if [[ $cur != -* && ${pos[0]} != allreduce ]] && ((npos < 3)); then
			mapfile -t COMPREPLY < <(compgen -W "$(_ringctl_nodes "$sock" "$prog")" -- "$cur")
			return 0
		fi
		;;
	pki)
		if ((npos == 0)); then
			[[ $cur != -* ]] && mapfile -t COMPREPLY < <(compgen -W "$_ringctl_pki_cmds" -- "$cur")
			return 0
		fi
		case "$prev" in --cn | --days) return 0 ;; esac
		case "${pos[0]}" in
		init) opts="--cn --days" ;;
		issue) opts="--coordinator --days" ;;
		esac
		if [[ $cur != -* ]] && ((npos == 1)); then
			compopt -o dirnames 2>/dev/null
			mapfile -t COMPREPLY < <(compgen -d -- "$cur")
			return 0
		fi
		;;
	help)
		# help [COMMAND]: a command, or a group's subcommand.
		if [[ $cur != -* ]]; then
			local words=""
			if ((npos == 0)); then
				words="$_ringctl_commands"
			elif ((npos == 1)); then
				case "${pos[0]}" in
				check) words="$_ringctl_check_cmds" ;;
				test) words="$_ringctl_test_cmds" ;;
				pki) words="$_ringctl_pki_cmds" ;;
				esac
			fi
			mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
			return 0
		fi
		;;
	*) return 0 ;;
	esac

	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$opts $_ringctl_global_opts" -- "$cur")
	fi
	return 0
}

complete -F _ringctl ringctl
