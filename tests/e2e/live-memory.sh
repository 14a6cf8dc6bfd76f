#!/usr/bin/env bash
# live-memory.sh - a long live session stays bounded: a 14 s live report
# -a --interval 2 while hundreds of short-lived processes a second come and
# go (the spawn workload: /bin/true again and again, bounded in time and
# count), and a dozen a second each run a file of its own (hard links of
# the manysyms workload, 4096 symbols each: to a profiler, each path is
# another file whose symbols it loads).  The threads and maps of the
# exited ones are released as the replay goes, and the files no process
# maps any more once an interval's table is printed.  The RSS is read
# every half second: its peak over 9..13.5 s stays within 20% of its
# peak over 4..8.5 s (one interval's files are held until its table is
# printed, so the RSS at any one moment swings with how many ran in that
# interval; without the release it grows all along: 54 MB to 71 MB
# between the two, and the check fails).  (One table for the whole session, without
# --interval, grows with the distinct stacks it holds, as any report
# does.)  --comm keeps the table to the spawned processes: files first hit
# by other work on the machine (a build's compilers) would load their
# symbols too (released as well once unmapped, but noise in the figures).
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip live-memory "needs root for system-wide sampling"; exit 0; }
# AddressSanitizer holds freed memory in its quarantine and ignores
# malloc_trim: the RSS would measure that, not ember.
if ldd "$EMBER" 2>/dev/null | grep -q libasan; then
	skip live-memory "built with AddressSanitizer: its quarantine keeps freed memory"
	exit 0
fi
# The links: one copy in $TMP, each run under a path of its own named
# true (its comm, for --comm).
cp "$WORKLOADS/manysyms" "$TMP/manysyms" || { fail live-memory "cannot copy manysyms"; exit 0; }

"$EMBER" report -a --duration 14 --interval 2 -s sym --comm spawn,true >"$TMP/out" 2>"$TMP/err" &
EM=$!
"$WORKLOADS/spawn" 13 20000 >"$TMP/spawned" &
SP=$!
(
	i=0
	end=$((SECONDS + 13))
	while [ "$SECONDS" -lt "$end" ]; do
		i=$((i + 1))
		mkdir "$TMP/b$i" && ln "$TMP/manysyms" "$TMP/b$i/true" && "$TMP/b$i/true" 0.04
	done
	echo "$i" >"$TMP/files"
) &
FL=$!
trap 'kill $EM $SP $FL 2>/dev/null; rm -rf "$TMP"' EXIT
rss() { awk '/^VmRSS:/ { print $2 }' /proc/$EM/status 2>/dev/null; }
# peak_rss N: the highest RSS of N readings 0.5 s apart.
peak_rss() {
	local i m=0 r
	for ((i = 0; i < $1; i++)); do
		r=$(rss); [ -n "$r" ] && [ "$r" -gt "$m" ] && m=$r
		sleep 0.5
	done
	echo "$m"
}
sleep 4
r5=$(peak_rss 9)
sleep 0.5
r19=$(peak_rss 9)
wait $SP $FL
wait $EM
rc=$?
n=$(cat "$TMP/spawned")
files=$(cat "$TMP/files" 2>/dev/null)
released=$(grep -Eo '[0-9]+ exited ones released' "$TMP/out" | tail -1 | cut -d' ' -f1)
freed=$(grep -Eo "[0-9]+ files' symbols released" "$TMP/out" | tail -1 | cut -d' ' -f1)
if [ "${r5:-0}" = 0 ] || [ "${r19:-0}" = 0 ]; then
	fail "live-memory" "could not read the RSS ($r5, $r19)"
	exit 0
fi
if [ "${n:-0}" -lt 650 ] || [ "${files:-0}" -lt 65 ]; then
	skip live-memory "only ${n:-0} processes and ${files:-0} files run in 13 s (a busy machine): fewer than 50 and 5 a second"
	exit 0
fi
check "14 s live report with $n short-lived processes ($((n / 13))/s, ${released:-no} exited threads released) and $files files of 4096 symbols (${freed:-no} released): peak RSS $r19 KB over 9..13.5 s within 20% of $r5 KB over 4..8.5 s (exit $rc)" \
	awk -v a="$r5" -v b="$r19" -v r="${released:-0}" -v f="${freed:-0}" 'BEGIN { exit !(b <= a * 1.2 && r > 0 && f > 0) }'
