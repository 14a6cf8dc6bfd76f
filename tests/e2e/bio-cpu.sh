#!/usr/bin/env bash
# bio-cpu.sh - `ember bio --cpu LIST` picks the I/Os queued on those CPUs,
# and --pid, --tid and --time the I/Os of those tasks and times, in every
# view: one dd pinned to CPU 0 writes 120 x 64 KiB, another
# pinned to CPU 1 writes 80 x 32 KiB elsewhere on the same loop device, at
# once (direct, one bio each), so each CPU's I/Os are known by
# construction; the recording's own block_bio_queue records per CPU
# (ember script) say the same.  The views then show exactly one dd's I/Os
# each: btt, --hist, --snoop, --size, --seek, --top, --monitor, the heat
# map, --stacks and --save-plan.  A plan file keeps no task or queue
# time per I/O: --plan refuses the filters (exit 2); a blktrace capture
# keeps thread ids only: it refuses --pid.
. "$(dirname "$0")/../e2e-lib.sh"
. "$(dirname "$0")/../e2e-bio-lib.sh"
bio_setup bio-cpu
[ "$(nproc)" -ge 2 ] || { skip bio-cpu "needs two CPUs"; exit 0; }

F=$TMP/cpu.data
WL="taskset -c 0 dd if=/dev/zero of=$LOOP bs=64k count=120 oflag=direct 2>/dev/null &
    taskset -c 1 dd if=/dev/zero of=$LOOP bs=32k count=80 seek=400 oflag=direct 2>/dev/null &
    wait"
# -g: some 4 stack samples of 16 KB per I/O; -m 8192 holds them all.
ok=
for try in 1 2 3; do
	"$EMBER" record --block -g -d "$LOOP" -m 8192 -o "$F" -- sh -c "$WL" \
		>/dev/null 2>"$TMP/rec.err" || continue
	"$EMBER" bio -i "$F" --comm dd >"$TMP/btt" 2>&1 || continue
	grep -q '^I/Os: 200 completed' "$TMP/btt" && grep -q ' 0 lost' "$TMP/rec.err" && { ok=1; break; }
done
[ -n "$ok" ] || { fail record "no complete recording in 3 tries: $(grep '^I/Os' "$TMP/btt") $(tail -1 "$TMP/rec.err")"; exit 0; }

# The recording's own queue records of dd per CPU.
"$EMBER" script -i "$F" >"$TMP/script" 2>&1
q0=$(awk '$1 == "dd" && $3 == "[000]" && /block:block_bio_queue:/' "$TMP/script" | wc -l)
q1=$(awk '$1 == "dd" && $3 == "[001]" && /block:block_bio_queue:/' "$TMP/script" | wc -l)
check "script: dd queued 120 I/Os on CPU 0 ($q0) and 80 on CPU 1 ($q1)" test "$q0" = 120 -a "$q1" = 80

# each FILTER N KIB BUCKET: the views with FILTER (--cpu 0, --pid P...)
# show one dd's N I/Os of KIB KiB.
each() {
	local filter=$1 n=$2 kib=$3 lo=$4 bytes=$(($2 * $3 * 1024)) k=$(($2 * $3))
	local b="$EMBER bio -i $F --comm dd $filter"
	$b >"$TMP/c" 2>&1
	check "$filter btt: writes $n ($bytes bytes)" \
		grep -q "^I/Os: $n completed, $bytes bytes: reads 0 (0 bytes), writes $n " "$TMP/c"
	check "$filter btt: Q2C N $n" eval "awk '\$1 == \"Q2C\" { print \$5 }' '$TMP/c' | grep -qx $n"
	$b --hist >"$TMP/c" 2>&1
	check "$filter --hist: $n requests" grep -q "latency of $n requests" "$TMP/c"
	$b --snoop --csv >"$TMP/c" 2>&1
	local rows other
	rows=$(awk -F, 'NR > 1' "$TMP/c" | wc -l)
	other=$(awk -F, -v s=$((kib * 1024)) 'NR > 1 && $7 != s' "$TMP/c" | wc -l)
	check "$filter --snoop: $n lines ($rows), all of $kib KiB ($other others)" \
		test "$rows" = "$n" -a "$other" = 0
	$b --size >"$TMP/c" 2>&1
	check "$filter --size: $n I/Os, all in $lo KiB" eval \
		"grep -q '^Process name = dd: $n I/Os' '$TMP/c' && grep -Eq '^ +$lo -> [0-9]+ +: $n ' '$TMP/c'"
	$b --seek >"$TMP/c" 2>&1
	check "$filter --seek: $((n - 1)) after the first, all sequential" \
		grep -q ": $((n - 1)) I/Os after the first, $((n - 1)) sequential" "$TMP/c"
	$b --top >"$TMP/c" 2>&1
	check "$filter --top: one dd row, $n I/Os, $k Kbytes" \
		eval "test \"\$(awk 'NR > 1 { print \$2, \$7, \$8 }' '$TMP/c')\" = 'dd $n $k'"
	$b --monitor >"$TMP/c" 2>&1
	check "$filter --monitor: $n requests" grep -q "^requests: $n completed" "$TMP/c"
	$b --stacks >"$TMP/c" 2>&1
	check "$filter --stacks: $n I/Os, $bytes bytes" \
		grep -q "^Who queued the I/O: $n I/Os, $bytes bytes" "$TMP/c"
	$b --heatmap "$TMP/heat.svg" >/dev/null 2>&1
	local cells
	cells=$(grep -Eo '<title>[0-9]+ I/Os' "$TMP/heat.svg" | awk '{ n += substr($1, 8) } END { print n + 0 }')
	check "$filter --heatmap: cells of $n I/Os ($cells)" test "$cells" = "$n"
	$b --save-plan "$TMP/plan-${filter//[^0-9a-z]/}.plan" >"$TMP/c" 2>&1
	check "$filter --save-plan: $n writes queued on 1 CPU" \
		grep -q "^plan: wrote $n I/Os (0 reads, $n writes) of 1 device, queued on 1 CPU" "$TMP/c"
}
each "--cpu 0" 120 64 64
each "--cpu 1" 80 32 32
# The same through the other filters: each dd is one process of one
# thread, pinned, so --pid and --tid pick the same I/Os as its CPU.
p0=$(awk '$1 == "dd" && $3 == "[000]" && /block:block_bio_queue:/ { print $2; exit }' "$TMP/script")
p1=$(awk '$1 == "dd" && $3 == "[001]" && /block:block_bio_queue:/ { print $2; exit }' "$TMP/script")
each "--pid ${p0%/*}" 120 64 64
each "--tid ${p1#*/}" 80 32 32
# --time: the I/Os queued in the middle third of the queueing, as the
# recording's own queue records say.
read -r from to < <(awk '$1 == "dd" && /block:block_bio_queue:/ { t = $4 + 0; if (!a) a = t; b = t }
	END { printf "%.6f %.6f\n", a + (b - a) / 3, a + 2 * (b - a) / 3 }' "$TMP/script")
inwin=$(awk -v a="$from" -v b="$to" '$1 == "dd" && /block:block_bio_queue:/ && $4 + 0 >= a && $4 + 0 <= b' \
	"$TMP/script" | wc -l)
"$EMBER" bio -i "$F" --comm dd --time "$from,$to" >"$TMP/c" 2>&1
check "--time $from,$to: $inwin I/Os queued then ($(grep -o '^I/Os: [0-9]* completed' "$TMP/c"))" \
	eval 'test "$inwin" -gt 0 -a "$inwin" -lt 200 && grep -q "^I/Os: $inwin completed" "$TMP/c"'
"$EMBER" bio -i "$F" --comm dd --time "$from,$to" --snoop --csv >"$TMP/c" 2>&1
check "--time --snoop: $inwin lines" test "$(awk 'NR > 1' "$TMP/c" | wc -l)" = "$inwin"

"$EMBER" bio -i "$F" --comm dd --cpu 0,1 >"$TMP/c" 2>&1
check "--cpu 0,1: all 200" grep -q '^I/Os: 200 completed' "$TMP/c"
"$EMBER" bio --plan "$TMP/plan-cpu0.plan" --save-plan "$TMP/x.plan" --cpu 0 >/dev/null 2>"$TMP/err"
rc=$?
check "--plan refuses --cpu: exit 2 ($rc), one line: $(head -1 "$TMP/err")" \
	eval 'test "$rc" = 2 && test "$(wc -l <"$TMP/err")" = 1 && grep -q -- "--cpu" "$TMP/err"'

# A blktrace capture keeps each event's thread id, not its process: it
# refuses --pid (one line, exit 2) and takes --tid.
"$WORKLOADS/blkgen" "$TMP/g" 14 >/dev/null
"$EMBER" bio -i "$TMP/g" --pid 1 >/dev/null 2>"$TMP/err"
rc=$?
check "blktrace capture refuses --pid: exit 2 ($rc), one line: $(head -1 "$TMP/err")" \
	eval 'test "$rc" = 2 && test "$(wc -l <"$TMP/err")" = 1 && grep -q -- "--pid" "$TMP/err"'
"$EMBER" bio -i "$TMP/g" --tid 1 >/dev/null 2>&1
check "blktrace capture takes --tid" test $? = 0
