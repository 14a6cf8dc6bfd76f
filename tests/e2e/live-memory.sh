#!/usr/bin/env bash
# live-memory.sh - long live sessions stay bounded: three 14 s live views
# at once, report -a --interval 2, report -a with one table for the whole
# session and offcpu -a, while hundreds of short-lived processes a second
# come and go (the spawn workload: /bin/true again and again, bounded in
# time and count), and a dozen a second each run a file of its own (hard
# links of the manysyms workload, 4096 symbols each: to a profiler, each
# path is another file whose symbols it loads).  The threads and maps of
# the exited ones are released as the replay goes, and the files no
# process maps any more once an interval's table is printed, or, for the
# single table and offcpu (which keep their stacks as their own records
# of files and symbols), at most once a second.  The RSS is read every
# half second: its peak over 9..13.5 s stays within 20% of its peak over
# 4..8.5 s (one interval's files are held until its table is printed, so
# the RSS at any one moment swings with how many ran in that interval;
# without the release it grows all along: 54 MB to 71 MB between the two
# with --interval, 23 to 72 MB at 5 and 30 s for the single table, 26 to
# 36 MB for offcpu and the checks fail).  The single table and offcpu
# keep their streams (-o): report -i and offcpu -i of them print what the
# live views printed, files released and loaded again or not.  --comm
# keeps the reports to the spawned processes (files first hit by other
# work on the machine, a build's compilers, would load their symbols too:
# released as well once unmapped, but noise in the figures; the single
# table, read again later, to this run's own files), and offcpu to
# spawn's own waits: it still resolves every switch-out's stack (one
# thread's switch-out is another's switch-in), and drops those its table
# does not count.
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip live-memory "needs root for system-wide sampling"; exit 0; }
# AddressSanitizer holds freed memory in its quarantine and ignores
# malloc_trim: the RSS would measure that, not ember.
if ldd "$EMBER" 2>/dev/null | grep -q libasan; then
	skip live-memory "built with AddressSanitizer: its quarantine keeps freed memory"
	exit 0
fi
# The links: one copy in $TMP, each run under a path of its own named
# lmem$$ (its comm, for --comm: this run's own, as the single table is
# read again from its file after the run, when another run's links may
# be gone).
LINK=lmem$$
cp "$WORKLOADS/manysyms" "$TMP/manysyms" || { fail live-memory "cannot copy manysyms"; exit 0; }

"$EMBER" report -a --duration 14 --interval 2 -s sym --comm "spawn,true,$LINK" >"$TMP/out" 2>"$TMP/err" &
EM=$!
"$EMBER" report -a --duration 14 -s sym --comm "spawn,$LINK" -o "$TMP/one.data" \
	>"$TMP/one" 2>"$TMP/one.err" &
ONE=$!
"$EMBER" offcpu -a --duration 14 --comm spawn -o "$TMP/oc.data" >"$TMP/oc" 2>"$TMP/oc.err" &
OC=$!
sleep 0.3
"$WORKLOADS/spawn" 13 20000 >"$TMP/spawned" &
SP=$!
(
	i=0
	end=$((SECONDS + 13))
	while [ "$SECONDS" -lt "$end" ]; do
		i=$((i + 1))
		mkdir "$TMP/b$i" && ln "$TMP/manysyms" "$TMP/b$i/$LINK" && "$TMP/b$i/$LINK" 0.04
	done
	echo "$i" >"$TMP/files"
) &
FL=$!
trap 'kill $EM $ONE $OC $SP $FL 2>/dev/null; rm -rf "$TMP"' EXIT
PIDS=("$EM" "$ONE" "$OC")
rss() { awk '/^VmRSS:/ { print $2 }' /proc/$1/status 2>/dev/null; }
# peak_rss N: each view's highest RSS of N readings 0.5 s apart.
peak_rss() {
	local i k r m=(0 0 0)
	for ((i = 0; i < $1; i++)); do
		for k in 0 1 2; do
			r=$(rss "${PIDS[$k]}")
			[ -n "$r" ] && [ "$r" -gt "${m[$k]}" ] && m[$k]=$r
		done
		sleep 0.5
	done
	echo "${m[@]}"
}
sleep 3.7
read -r -a r5 <<<"$(peak_rss 9)"
sleep 0.5
read -r -a r19 <<<"$(peak_rss 9)"
wait $SP $FL
wait $EM; rc=$?
wait $ONE; rc_one=$?
wait $OC; rc_oc=$?
n=$(cat "$TMP/spawned")
files=$(cat "$TMP/files" 2>/dev/null)
# counted OUTPUT WHAT: the last "# live:" line's count of WHAT.
counted() { grep -Eo "[0-9]+ $2" "$1" | tail -1 | cut -d' ' -f1; }
if [ "${n:-0}" -lt 650 ] || [ "${files:-0}" -lt 65 ]; then
	skip live-memory "only ${n:-0} processes and ${files:-0} files run in 13 s (a busy machine): fewer than 50 and 5 a second"
	exit 0
fi
# bounded NAME INDEX OUTPUT EXIT: the view's RSS check.
bounded() {
	local a=${r5[$2]:-0} b=${r19[$2]:-0} freed released
	freed=$(counted "$3" "files' symbols released")
	released=$(counted "$3" "exited ones released")
	check "14 s live $1 with $n short-lived processes ($((n / 13))/s, ${released:-no} exited threads released) and $files files of 4096 symbols (${freed:-no} released): peak RSS $b KB over 9..13.5 s within 20% of $a KB over 4..8.5 s (exit $4)" \
		awk -v a="$a" -v b="$b" -v f="${freed:-0}" -v rc="$4" \
		'BEGIN { exit !(a > 0 && b > 0 && b <= a * 1.2 && f > 0 && rc == 0) }'
}
bounded "report --interval 2" 0 "$TMP/out" "$rc"
bounded "report, one table" 1 "$TMP/one" "$rc_one"
bounded "offcpu" 2 "$TMP/oc" "$rc_oc"
check "the live report and offcpu threads released" \
	awk -v a="$(counted "$TMP/out" "exited ones released")" \
	-v b="$(counted "$TMP/one" "exited ones released")" 'BEGIN { exit !(a > 0 && b > 0) }'

# The kept streams give the tables the live views printed.
grep -v '^# live: ' "$TMP/one" >"$TMP/one.live"
"$EMBER" report -i "$TMP/one.data" -s sym --comm "spawn,$LINK" >"$TMP/one.file" 2>/dev/null
check "report -i of the single table's stream prints its table ($(grep -c '%' "$TMP/one.live") rows)" \
	cmp -s "$TMP/one.live" "$TMP/one.file"
grep -v '^# live: ' "$TMP/oc" >"$TMP/oc.live"
"$EMBER" offcpu -i "$TMP/oc.data" --comm spawn >"$TMP/oc.file" 2>/dev/null
check "offcpu -i of offcpu's stream prints its table ($(grep -c ' us ' "$TMP/oc.live") stacks)" \
	cmp -s "$TMP/oc.live" "$TMP/oc.file"
