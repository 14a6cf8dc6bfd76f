#!/usr/bin/env bash
# tests/e2e/stat-perf.sh - perf stat and ember stat on the same workloads in
# one run: software counts agree within 2% (page faults within 50).
set -u
. "$(dirname "$0")/../e2e-lib.sh"
if ! have_perf; then skip stat-perf "Linux perf is not installed"; exit 0; fi

# count TOOL EVENT CMD... : the count perf or ember prints for EVENT (-x,),
# the least of three runs: other load on the machine only ever adds
# preemptions and CPU time, so the least is the workload's own figure.
count() {
	local tool=$1 ev=$2; shift 2
	local out=$TMP/$tool.csv i
	for i in 1 2 3; do
		if [ "$tool" = perf ]; then perf stat -x, -o "$out" -e "$ev" -- "$@" >/dev/null 2>&1
		else "$EMBER" stat -x, -o "$out" -e "$ev" -- "$@" >/dev/null; fi
		awk -F, -v ev="$ev" '$3 == ev { print $1; exit }' "$out"
	done | sort -g | head -1
}

compare() {
	local name=$1 ev=$2 tol=$3; shift 3
	local p e
	p=$(count perf "$ev" "$@"); e=$(count ember "$ev" "$@")
	if [ -z "$p" ] || [ -z "$e" ]; then
		fail "$name" "no count: perf '$p' ember '$e'"
	elif within "$e" "$p" "$(awk -v p="$p" -v t="$tol" 'BEGIN {
			print (t ~ /%$/) ? p * substr(t, 1, length(t) - 1) / 100 : t }')"; then
		pass "$name"
	else
		fail "$name" "$ev: perf $p, ember $e (tolerance $tol)"
	fi
}

compare perf-page-faults page-faults 50 "$WORKLOADS/touch" 20000
compare perf-task-clock task-clock 2% "$WORKLOADS/burn" 0.4
compare perf-context-switches context-switches 2% "$WORKLOADS/sleeper" 100 1
compare perf-minor-faults minor-faults 50 "$WORKLOADS/touch" 5000
