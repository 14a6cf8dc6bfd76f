#!/usr/bin/env bash
# report-sort-thread.sh - report's thread keys on a process whose threads
# rename themselves (tests/workloads/renames.c: main 2/5 of the CPU, half
# as "renames" and half renamed "split"; wA 1/5, then renamed "idle" off
# the CPU; wB 2/5): --sort pid is perf's per-thread key, one row per
# thread, TID:COMM with its last name, sampled or not (tid the same key);
# --sort comm one row per name at the samples; both as perf report prints
# them on the same file, alone and combined.
# parallel-safe: records only its own process and compares shares of it (tests/run.sh)
set -u
. "$(dirname "$0")/../e2e-lib.sh"

if ! need_root; then skip report-sort-thread "needs root to record"; exit 0; fi
if ! "$EMBER" record -q -F 999 -o "$TMP/r.data" -- "$WORKLOADS/renames" 0.2 \
	>"$TMP/rec.out" 2>"$TMP/rec.err"; then
	fail report-sort-thread-record "$(head -c 300 "$TMP/rec.err")"
	exit 0
fi
read -r main wa wb < <(awk '/^renames: pid/ { print $5, $6, $7 }' "$TMP/rec.out")
if [ -z "${wb:-}" ]; then
	fail report-sort-thread-record "no tids from the workload: $(head -c 200 "$TMP/rec.out")"
	exit 0
fi

# rows TOOL KEYS: "SHARE<TAB>KEY TEXT" per row, spaces squeezed.
rows() {
	local tool=$1 keys=$2
	if [ "$tool" = perf ]; then
		perf report -i "$TMP/r.data" --stdio --sort "$keys" 2>/dev/null
	else
		"$EMBER" report -i "$TMP/r.data" --stdio --sort "$keys" 2>"$TMP/ember.err"
	fi | awk '$1 ~ /%$/ { p = $1; sub(/%/, "", p); $1 = ""; sub(/^ +/, ""); print p "\t" $0 }'
}

# share ROWS TEXT: the share of the row whose key text is TEXT (0: none).
share() {
	awk -F'\t' -v t="$2" '$2 == t { print $1; f = 1; exit } END { if (!f) print 0 }' "$1"
}

rows ember pid >"$TMP/pid.ember"
n=$(wc -l <"$TMP/pid.ember")
a=$(share "$TMP/pid.ember" "$main:done")
b=$(share "$TMP/pid.ember" "$wa:idle")
c=$(share "$TMP/pid.ember" "$wb:wB")
if [ "$n" -eq 3 ] && within "$a" 40 6 && within "$b" 20 6 && within "$c" 40 6; then
	pass "report-sort-pid-design (3 rows: $main:done ${a}%, $wa:idle ${b}%, $wb:wB ${c}%; design 40/20/40)"
else
	fail report-sort-pid-design "$n rows, want 3 ($main:done 40, $wa:idle 20, $wb:wB 40): $(tr '\t\n' ' ;' <"$TMP/pid.ember")"
fi

rows ember comm >"$TMP/comm.ember"
r=$(share "$TMP/comm.ember" renames) s=$(share "$TMP/comm.ember" split)
ca=$(share "$TMP/comm.ember" wA) cb=$(share "$TMP/comm.ember" wB)
# Beside them at most the exit's samples under "done", and "idle"'s wakeup.
rest=$(awk -F'\t' '$2 !~ /^(renames|split|wA|wB)$/ { s += $1 } END { print s + 0 }' "$TMP/comm.ember")
if within "$r" 20 5 && within "$s" 20 5 && within "$ca" 20 5 && within "$cb" 40 5 &&
   within "$rest" 0 2; then
	pass "report-sort-comm-design (renames ${r}%, split ${s}%, wA ${ca}%, wB ${cb}%, others ${rest}%; design 20/20/20/40)"
else
	fail report-sort-comm-design "$(tr '\t\n' ' ;' <"$TMP/comm.ember")"
fi

rows ember tid >"$TMP/tid.ember"
if cmp -s "$TMP/tid.ember" "$TMP/pid.ember"; then
	pass "report-sort-tid-is-pid (the same rows)"
else
	fail report-sort-tid-is-pid "$(tr '\t\n' ' ;' <"$TMP/tid.ember")"
fi

# perf on the same file: the same rows, shares within 0.1 point.
if have_perf; then
	for keys in pid comm pid,comm comm,pid pid,sym; do
		rows ember "$keys" | sort -t$'\t' -k2 >"$TMP/e"
		rows perf "$keys" | sort -t$'\t' -k2 >"$TMP/p"
		why=$(join -t$'\t' -1 2 -2 2 -a1 -a2 -e none -o 0,1.1,2.1 "$TMP/e" "$TMP/p" |
			awk -F'\t' '$2 == "none" || $3 == "none" || $2 - $3 > 0.1 || $3 - $2 > 0.1 {
				print $1 ": ember " $2 ", perf " $3; exit }')
		if [ -z "$why" ] && [ -s "$TMP/e" ]; then
			pass "report-sort-perf-$keys ($(wc -l <"$TMP/e") rows as perf's)"
		else
			fail "report-sort-perf-$keys" "${why:-no rows} $(head -c 200 "$TMP/ember.err")"
		fi
	done
else
	skip report-sort-perf "perf (linux-perf) is not installed"
fi
