#!/usr/bin/env bash
# tests/e2e/record-counts.sh - nothing lost at an ordinary rate system-wide,
# and loss at an extreme rate is reported, never silent: the end line's
# lost count is non-zero and the file carries the LOST records perf sees.
set -u
. "$(dirname "$0")/../e2e-lib.sh"
. "$(dirname "$0")/../e2e-record-lib.sh"
require_perf record-counts

# -F 999 -a -g with every CPU busy (idle CPUs drop cpu-clock samples, see
# DESIGN.md): no loss, and about NCPU * 999 samples per second.
F=$TMP/busy.data
busy_all 2
start=$(date +%s.%N)
run_ember busy record -F 999 -a -g -o "$F" -- sleep 1.2
end=$(date +%s.%N)
stop_spinners
if [ "$RC" -ne 0 ]; then
	fail busy-record "exit $RC: $(head -c 400 "$TMP/busy.err")"
else
	pass busy-record
	n=$(perf_stat "$F" SAMPLE); lostrec=$(perf_stat "$F" LOST)
	if parse_end_line "$TMP/busy.err"; then
		if [ "$EL_M" -eq 0 ] && [ "$lostrec" -eq 0 ]; then pass busy-no-lost
		else fail busy-no-lost "end line says $EL_M lost, file has $lostrec LOST records"; fi
		if [ "$EL_N" -eq "$n" ]; then pass busy-end-line-samples
		else fail busy-end-line-samples "end line says $EL_N samples, perf counts $n"; fi
	else
		fail busy-no-lost "no end line in: $(tail -c 300 "$TMP/busy.err")"
	fi
	# At least 85% of NCPU CPUs x 1.2 s x 999 Hz, at most what the whole
	# run could hold.
	if awk -v n="$n" -v c="$NCPU" -v s="$start" -v e="$end" \
		'BEGIN { exit !(n >= 0.85 * c * 1.2 * 999 && n <= 1.05 * c * (e - s) * 999) }'; then
		pass busy-sample-count
	else
		fail busy-sample-count "$n samples for $NCPU busy CPUs over 1.2 s at 999 Hz"
	fi
fi

# An extreme rate into the smallest ring: cpu-clock every 10 us on every
# CPU with call chains and a one-page ring cannot be drained in time.
F=$TMP/flood.data
busy_all 1.5
run_ember flood record -e cpu-clock -c 10000 -a -g -m 1 -o "$F" -- sleep 1
stop_spinners
if [ "$RC" -ne 0 ]; then
	fail flood-record "exit $RC: $(head -c 400 "$TMP/flood.err")"
elif ! parse_end_line "$TMP/flood.err"; then
	fail flood-lost-reported "no end line in: $(tail -c 300 "$TMP/flood.err")"
else
	inFile=$(perf_lost_sum "$F")
	if [ "$EL_M" -eq 0 ] && [ "$inFile" -eq 0 ]; then
		skip flood-lost-reported "could not provoke loss at -c 10000 -a -g -m 1 ($EL_N samples kept)"
	elif [ "$EL_M" -gt 0 ] && [ "$inFile" -gt 0 ] && [ "$EL_M" -ge "$inFile" ]; then
		pass flood-lost-reported
		# The warning names each CPU's loss: "(cpu0 N, cpu1 M)", adding
		# up to the total.
		percpu=$(grep -o 'samples lost ([^)]*)' "$TMP/flood.err" | grep -o 'cpu[0-9]* [0-9]*')
		sum=$(echo "$percpu" | awk '{ s += $2 } END { print s + 0 }')
		if [ -n "$percpu" ] && [ "$sum" -eq "$EL_M" ]; then
			pass flood-lost-per-cpu
		else
			fail flood-lost-per-cpu "per-CPU losses '$(echo $percpu)' add to $sum, not $EL_M"
		fi
	else
		fail flood-lost-reported "end line says $EL_M lost, LOST records in the file total $inFile"
	fi
	n=$(perf_stat "$F" SAMPLE)
	if [ "$EL_N" -eq "$n" ]; then pass flood-end-line-samples
	else fail flood-end-line-samples "end line says $EL_N samples, perf counts $n"; fi
fi
