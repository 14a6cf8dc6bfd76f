#!/usr/bin/env bash
# bench/serve.sh - what streaming a recording to `ember serve` costs beside
# writing it to a local file: `ember record -a -g -F 4999` while the spin
# workload keeps every CPU busy, once to a file and once to a server on
# 127.0.0.1 (-o tcp://), REPEAT times each in turn.  For each: the
# workload's throughput loss against an unrecorded run, the recorder's own
# CPU time (user+sys; the server's is printed apart), samples and samples
# lost (the end line's figures).  A benchmark, not a test: it asserts nothing.
#
#   EMBER=./ember WORKLOADS=build/workloads bench/serve.sh
#   SECONDS_PER_RUN=3 RATE=4999 REPEAT=3  (defaults)
set -u
: "${SECONDS_PER_RUN:=3}" "${RATE:=4999}" "${REPEAT:=3}"
. "$(dirname "$0")/lib.sh"
bench_setup serve spin

# The server: a port the kernel picks, its stored files in $T/srv.
mkdir -p "$T/srv"
"$EMBER" serve --listen 127.0.0.1:0 -o "$T/srv" 2>"$T/srv.log" </dev/null &
SRV=$!
trap 'kill $SRV 2>/dev/null; wait $SRV 2>/dev/null; rm -rf "$T"' EXIT
PORT=
for _ in $(seq 100); do
	PORT=$(sed -n 's/^ember serve: listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$T/srv.log")
	[ -n "$PORT" ] && break
	sleep 0.05
done
[ -n "$PORT" ] || { echo "bench/serve.sh: the server did not start: $(head -c 200 "$T/srv.log")" >&2; exit 1; }

# measure NAME OUT : one recording around a spin run; sets RATE_, CPU,
# SAMPLES, LOST.
measure() {
	local name=$1 out=$2 rpid rc
	bash -c '"$@" >/dev/null 2>"'"$T/$name.err"'"; s=$?; times >"'"$T/$name.times"'"; exit $s' \
		_ "$EMBER" record -a -g -F "$RATE" -o "$out" -- \
		sleep "$(awk -v s="$SECONDS_PER_RUN" 'BEGIN { print s + 1.5 }')" &
	rpid=$!
	sleep 0.8
	RATE_=$(spin_rate)
	wait "$rpid"; rc=$?
	[ "$rc" -eq 0 ] || { echo "bench/serve.sh: $name exited $rc: $(tail -c 200 "$T/$name.err")" >&2; return 1; }
	CPU=$(cpu_of "$T/$name.times")
	read -r SAMPLES LOST < <(awk '/^ember record: / { for (i = 1; i <= NF; i++) {
			if ($i ~ /^samples,?$/) s = $(i - 1); if ($i ~ /^lost/) l = $(i - 1) } }
		END { print s + 0, l + 0 }' "$T/$name.err")
	rm -f "$T/file.data"
}

srv_cpu() { awk '{ print ($14 + $15) / 100 }' "/proc/$(pgrep -P $SRV -x ember || echo $SRV)/stat" 2>/dev/null || echo 0; }

echo "bench/serve.sh: $NCPU CPUs busy with spin, -F $RATE -a -g, ${SECONDS_PER_RUN}s a run, $REPEAT runs each" >&2
declare -A SUM
base=0
srv0=$(srv_cpu)
for ((rep = 0; rep < REPEAT; rep++)); do
	b=$(spin_rate); base=$(bench_best max "$b" "$base")
	for kind in file tcp; do
		if [ $kind = file ]; then out=$T/file.data; else out=tcp://127.0.0.1:$PORT; fi
		measure "$kind" "$out" || continue
		echo "  $kind: $RATE_ units/s, cpu ${CPU}s, $SAMPLES samples, $LOST lost" >&2
		SUM[$kind]=$(awk -v o="${SUM[$kind]:-0 0 0 0 0}" -v r="$RATE_" -v c="$CPU" -v s="$SAMPLES" -v l="$LOST" \
			'BEGIN { split(o, v, " "); if (r > v[1]) v[1] = r
				printf "%s %s %s %s %d", v[1], v[2] + c, v[3] + s, v[4] + l, v[5] + 1 }')
	done
done
srv=$(awk -v a="$srv0" -v b="$(srv_cpu)" 'BEGIN { printf "%.3f", b - a }')

printf '\n%-28s %12s %12s %10s\n' "-a -g -F $RATE, busy" "file" "tcp" "tcp/file"
read -r fr fc fs fl fn <<<"${SUM[file]:-0 0 0 0 0}"
read -r tr tc ts tl tn <<<"${SUM[tcp]:-0 0 0 0 0}"
row() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%-28s %12s %12s %10s\n", n, a, b, (a + 0 == 0 ? "n/a" : sprintf("%.2f", b / a)) }'; }
loss() { awk -v r="$1" -v b="$base" 'BEGIN { printf "%.1f", (b - r) * 100 / b }'; }
row "throughput (best, units/s)" "$fr" "$tr"
printf '%-28s %11s%% %11s%%\n' "throughput loss" "$(loss "$fr")" "$(loss "$tr")"
row "recorder CPU (mean, s)" "$(awk -v c="$fc" -v n="$fn" 'BEGIN { printf "%.3f", n ? c / n : 0 }')" \
	"$(awk -v c="$tc" -v n="$tn" 'BEGIN { printf "%.3f", n ? c / n : 0 }')"
row "samples (all runs)" "$fs" "$ts"
row "lost (all runs)" "$fl" "$tl"
printf '%-28s %12s %12s\n' "server CPU (all runs, s)" "" "$srv"
printf '%-28s %12s\n' "baseline throughput" "$base units/s"
