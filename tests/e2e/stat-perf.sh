#!/usr/bin/env bash
# tests/e2e/stat-perf.sh - perf stat and ember stat on the same workloads in
# one run: software counts agree within 2% (page faults within 50).
set -u
. "$(dirname "$0")/../e2e-lib.sh"
if ! have_perf; then skip stat-perf "Linux perf is not installed"; exit 0; fi

# one TOOL EVENT CMD... : the count perf or ember prints for EVENT (-x,).
one() {
	local tool=$1 ev=$2; shift 2
	local out=$TMP/$tool.csv
	if [ "$tool" = perf ]; then perf stat -x, -o "$out" -e "$ev" -- "$@" >/dev/null 2>&1
	else "$EMBER" stat -x, -o "$out" -e "$ev" -- "$@" >/dev/null; fi
	awk -F, -v ev="$ev" '$3 == ev { print $1; exit }' "$out"
}

# compare NAME EVENT TOLERANCE CMD... : perf and ember take turns, three
# runs each, and the least count of each is compared: other load on the
# machine only ever adds preemptions and CPU time, so the least is the
# workload's own figure, and taking turns exposes both to the same load.
compare() {
	local name=$1 ev=$2 tol=$3; shift 3
	local p e i
	for i in 1 2 3; do
		echo "perf $(one perf "$ev" "$@")"
		echo "ember $(one ember "$ev" "$@")"
	done >"$TMP/turns"
	p=$(awk '$1 == "perf" && NF == 2 { print $2 }' "$TMP/turns" | sort -g | head -1)
	e=$(awk '$1 == "ember" && NF == 2 { print $2 }' "$TMP/turns" | sort -g | head -1)
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
# 400 sleeps: both tools add a switch or two of their own around the
# exec, which 2% of 100 did not absorb (perf 98, ember 101 in one run).
compare perf-context-switches context-switches 2% "$WORKLOADS/sleeper" 400 1
compare perf-minor-faults minor-faults 50 "$WORKLOADS/touch" 5000
