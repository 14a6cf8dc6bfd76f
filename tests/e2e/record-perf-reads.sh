#!/usr/bin/env bash
# tests/e2e/record-perf-reads.sh - Linux perf accepts the files ember record
# writes in each mode: system-wide with call chains, DWARF stack copies,
# tracepoints (sched:sched_switch with kernel chains, block:block_rq_issue),
# and the pipe format on stdout.  Each check also compares what perf finds
# with what the workload is known to have done.
set -u
. "$(dirname "$0")/../e2e-lib.sh"
. "$(dirname "$0")/../e2e-record-lib.sh"
require_perf record-perf-reads
ensure_tracefs || true

# rec TAG ARGS... : record, then require exit 0 and a file perf reads.
# Passes "TAG-perf-reads" or fails it; returns non-zero on failure.
rec() {
	local tag=$1; shift
	run_ember "$tag" record -o "$TMP/$tag.data" "$@"
	if [ "$RC" -ne 0 ]; then
		fail "$tag-perf-reads" "ember exit $RC: $(head -c 400 "$TMP/$tag.err")"; return 1
	fi
	local why
	if why=$(perf_reads "$TMP/$tag.data"); then
		pass "$tag-perf-reads"
	else
		fail "$tag-perf-reads" "$why"; return 1
	fi
}

# -a -g while two pinned spinners keep every CPU busy: samples from every
# CPU, and the spinners' function resolves.
busy_all 1.6
if rec syswide -F 999 -a -g -- sleep 1; then
	"$PERF" script -i "$TMP/syswide.data" -F cpu 2>/dev/null | tr -d '[] ' | sort -u >"$TMP/cpus"
	ncpus_seen=$(wc -l <"$TMP/cpus")
	if [ "$ncpus_seen" -eq "$NCPU" ]; then pass syswide-every-cpu
	else fail syswide-every-cpu "samples on $ncpus_seen of $NCPU CPUs"; fi
	"$PERF" report -i "$TMP/syswide.data" --stdio --no-children --sort comm,sym 2>/dev/null >"$TMP/syswide.rep"
	pct=$(awk '$2 == "spin" && $NF == "spin_unit" { v = $1; sub(/%/, "", v); s += v } END { print s + 0 }' "$TMP/syswide.rep")
	# The spinners run for the whole recording on every CPU.
	if awk -v p="$pct" 'BEGIN { exit !(p >= 50) }'; then pass syswide-spinners-resolved
	else fail syswide-spinners-resolved "spin_unit in comm spin has ${pct}% of samples, want >= 50%; top: $(grep -E "^ +[0-9]" "$TMP/syswide.rep" | head -5 | tr -s " " | tr "\n" ";")"; fi
fi
stop_spinners

# --call-graph dwarf: perf unwinds ember's user stack copies itself and
# finds the ratio workload's intermediate frame.
if rec dwarf -F 999 --call-graph dwarf -- "$WORKLOADS/ratio" 0.5; then
	n=$("$PERF" script -i "$TMP/dwarf.data" -F ip,sym 2>/dev/null | grep -c ' mid_ab$')
	if [ "$n" -gt 0 ]; then pass dwarf-unwinds-mid_ab
	else fail dwarf-unwinds-mid_ab "perf's DWARF unwinding of the file never reaches mid_ab"; fi
fi

# sched:sched_switch -a -g: the sleeper switches out at least once per
# sleep; the tracepoint fields decode (tracing data is in the header) and
# the chains hold kernel frames (kallsyms map synthesized).
if [ -d /sys/kernel/tracing/events/sched/sched_switch ]; then
	if rec sched -e sched:sched_switch -a -g -- "$WORKLOADS/sleeper" 20 5; then
		"$PERF" script -i "$TMP/sched.data" 2>/dev/null >"$TMP/sched.txt"
		n=$(grep -c 'sched:sched_switch: .*prev_comm=sleeper ' "$TMP/sched.txt")
		if [ "$n" -ge 20 ]; then pass sched-switch-fields
		else fail sched-switch-fields "$n switches out of sleeper decoded, want >= 20"; fi
		if grep -qE '^[[:space:]]+[0-9a-f]+ (__schedule|schedule)\+0x' "$TMP/sched.txt"; then
			pass sched-switch-kernel-chain
		else
			fail sched-switch-kernel-chain "no __schedule/schedule frame in any chain"
		fi
	fi
else
	skip sched-perf-reads "no sched:sched_switch tracepoint"
fi

# block:block_rq_issue -a during 64 direct writes of 64 KiB by dd: perf
# sees dd's write requests, 4 MiB in total.
if [ -d /sys/kernel/tracing/events/block/block_rq_issue ]; then
	if rec block -e block:block_rq_issue -a -- \
		dd if=/dev/zero of="$TMP/ddfile" bs=64k count=64 oflag=direct status=none; then
		bytes=$("$PERF" script -i "$TMP/block.data" -F comm,trace 2>/dev/null |
			awk '$1 == "dd" && $3 ~ /W/ { s += $4 } END { print s + 0 }')
		if [ "$bytes" -eq $((64 * 65536)) ]; then pass block-rq-issue-bytes
		else fail block-rq-issue-bytes "dd's write requests total $bytes bytes, want $((64 * 65536))"; fi
	fi
else
	skip block-perf-reads "no block:block_rq_issue tracepoint"
fi

# Pipe mode: the stream format on stdout, read by perf from a pipe.  The
# workload's own stdout goes to /dev/null so it cannot mix into the stream.
# 4999 Hz for 1 s: 5000 samples, so the 5 points allowed are seven
# standard deviations of chance.
timeout -k 5 60 "$EMBER" record -F 4999 -g -o - -- sh -c "exec '$WORKLOADS/ratio' 1 >/dev/null" \
	2>"$TMP/pipe.err" </dev/null |
	"$PERF" report -i - --stdio --no-children --sort sym >"$TMP/pipe.rep" 2>"$TMP/pipe.perr"
st=("${PIPESTATUS[@]}")
if [ "${st[0]}" -ne 0 ]; then
	fail pipe-perf-reads "ember exit ${st[0]}: $(head -c 300 "$TMP/pipe.err")"
elif [ "${st[1]}" -ne 0 ]; then
	fail pipe-perf-reads "perf report -i - exit ${st[1]}: $(head -c 300 "$TMP/pipe.perr")"
else
	a=$(self_pct "$TMP/pipe.rep" leaf_a)
	if within "$a" 50 5; then pass pipe-perf-reads
	else fail pipe-perf-reads "leaf_a has ${a}% in perf's report of the pipe, design 50%"; fi
	# The summary goes to stderr, never into the stream.
	if parse_end_line "$TMP/pipe.err" && [ "$EL_N" -gt 0 ]; then pass pipe-end-line-on-stderr
	else fail pipe-end-line-on-stderr "no end line with samples on stderr: $(tail -c 200 "$TMP/pipe.err")"; fi
fi
timeout -k 5 60 "$EMBER" record -F 999 -o - -- sh -c "exec '$WORKLOADS/ratio' 0.5 >/dev/null" \
	2>"$TMP/pipe2.err" </dev/null |
	"$PERF" script -i - >"$TMP/pipe2.txt" 2>/dev/null
st=("${PIPESTATUS[@]}")
n=$(grep -c . "$TMP/pipe2.txt")
if [ "${st[0]}" -eq 0 ] && [ "${st[1]}" -eq 0 ] && [ "$n" -gt 0 ]; then
	pass pipe-perf-script
else
	fail pipe-perf-script "ember exit ${st[0]}, perf script -i - exit ${st[1]}, $n lines"
fi

# Beside another session: a perf recording made while `ember record -a`
# runs is one perf can read.  (With attr.build_id set, this kernel leaks
# the MMAP2 build-id flag onto the other session's records, and perf
# aborts on its own file.)  ember's file still lists the workload's
# build-id, read from the file as perf does.
"$EMBER" record -q -a -o "$TMP/beside.data" --duration 4 >/dev/null 2>&1 &
ember_pid=$!
sleep 1
"$PERF" record -q -B -o "$TMP/perf-beside.data" -F 999 -g -- "$WORKLOADS/ratio" 0.5 >/dev/null 2>&1
"$PERF" report -i "$TMP/perf-beside.data" --stdio >/dev/null 2>"$TMP/beside.err"
rc=$?
wait "$ember_pid"
check "a perf recording made beside ember record -a reads (perf report exit $rc)" test "$rc" = 0
want=$(readelf -n "$WORKLOADS/ratio" 2>/dev/null | awk '/Build ID:/ { print $3; exit }')
rec bidlist -F 999 -- "$WORKLOADS/ratio" 0.2 >/dev/null
got=$("$PERF" buildid-list -i "$TMP/bidlist.data" 2>/dev/null | awk -v f="$(realpath "$WORKLOADS/ratio")" '$2 == f { print $1 }')
check "ember's build-id list names the workload with its build-id ($got)" test -n "$want" -a "$got" = "$want"
