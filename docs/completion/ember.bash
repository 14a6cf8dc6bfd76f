# ember.bash - bash completion for ember, installed by 'make install' as
# share/bash-completion/completions/ember.  Commands and options come from
# the installed ember itself ('ember --list-commands', 'ember CMD
# --list-options', built from each command's option table), so they are
# never out of date.
_ember()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local ember=${COMP_WORDS[0]}
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$("$ember" --list-commands 2>/dev/null) --help --version" -- "$cur"))
		return
	fi
	local cmd=${COMP_WORDS[1]} short long arg takes=""
	local opts=()
	while read -r short long arg; do
		[ "$short" != - ] && opts+=("$short")
		[ "$long" != - ] && opts+=("$long")
		# Options whose value is a file complete as files.
		if [ -n "$arg" ] && { [ "$prev" = "$short" ] || [ "$prev" = "$long" ]; }; then
			takes=$arg
		fi
	done < <("$ember" "$cmd" --list-options 2>/dev/null)
	if [ -n "$takes" ]; then
		case $takes in
		*FILE*|*OUT*|BEFORE*) COMPREPLY=($(compgen -f -- "$cur")) ;;
		*) COMPREPLY=() ;;
		esac
		return
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "${opts[*]}" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}
complete -o filenames -F _ember ember
