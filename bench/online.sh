#!/usr/bin/env bash
# bench/online.sh - complete stacks on stock binaries: ember record -g (user
# stacks unwound while recording) beside perf record -g (frame pointers)
# and perf record --call-graph dwarf (stack copies unwound at report time),
# measured in the same run (a benchmark, not a test: it asserts nothing).
#
# Load: Debian's python3 running a Python loop and xz -9 compressing, one
# per CPU (both built without frame pointers).  For each recorder at -F 999
# and -F 4999 -a: bytes per sample, the share of python3's and xz's samples
# that reach the program's start (main, _start, __libc_start_main,
# Py_BytesMain; ld.so's _dl_start_user), the recorder's own CPU seconds
# (user+sys of the record command, which includes perf's writing and
# ember's unwinding), the workload's throughput loss against an unrecorded
# run (the best of the unrecorded runs made before each recorded one), and
# samples lost or left for the report.  Every file is read by
# ember (collapse, report), which reads perf's files as perf does.
#
#   EMBER=./ember bench/online.sh   SECONDS_PER_RUN=3 RATES="999 4999" REPEAT=3
# Takes about three minutes.
set -u
: "${EMBER:=./ember}" "${PERF:=perf}" "${SECONDS_PER_RUN:=3}" "${RATES:=999 4999}" "${REPEAT:=3}"
EMBER=$(realpath "$EMBER")
PY=/usr/bin/python3 XZ=/usr/bin/xz
for need in "$EMBER" "$PY" "$XZ"; do
	[ -x "$need" ] || { echo "bench/online.sh: $need missing" >&2; exit 2; }
done
command -v "$PERF" >/dev/null || { echo "bench/online.sh: Linux perf missing (make deps)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || echo "bench/online.sh: not root; -a may be refused" >&2

T=$(mktemp -d /tmp/ember-bench-online.XXXXXX)
trap 'rm -rf "$T"' EXIT
PYLOOP=$(dirname "$(realpath "$0")")/../tests/workloads/pyloop.py
head -c 64M /dev/urandom >"$T/big"

# load SECS: python3 on CPU 0 and one xz -9 on CPU 1 for SECS seconds;
# prints "PYCALLS XZBYTES" (calls made, input bytes xz has read, from
# /proc: its output comes in steps of half a megabyte).
load() {
	taskset -c 0 "$PY" "$PYLOOP" "$1" >"$T/py.out" &
	local p=$!
	taskset -c 1 "$XZ" -9 -T1 -c "$T/big" >/dev/null &
	local x=$!
	sleep "$1"
	local xb
	xb=$(awk '/^rchar:/ { print $2 }' /proc/$x/io 2>/dev/null)
	kill $x 2>/dev/null
	wait $p $x 2>/dev/null
	echo "$(cat "$T/py.out") ${xb:-0}"
}

ROOTS='^(main|_start|__libc_start_main.*|__libc_start_call_main|_dl_start_user|Py_BytesMain)$'
# reached FILE COMM: percent of COMM's samples that reach the start.
reached() {
	"$EMBER" collapse -i "$1" 2>/dev/null | awk -v c="$2" -v roots="$ROOTS" '
		{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";"); if (f[1] != c) next
		  t += n; for (i = 2; i <= k; i++) if (f[i] ~ roots) { r += n; break } }
		END { printf "%.1f", t ? 100 * r / t : 0 }'
}
samples_of() {   # (report's header rounds to thousands, as perf's: "12K")
	"$EMBER" collapse -i "$1" 2>/dev/null | awk '{ n += $NF } END { print n + 0 }'
}
lost_of() {
	"$EMBER" report -i "$1" --stdio --no-children -gnone --sort comm 2>/dev/null |
		awk '/^# Total Lost Samples:/ { print $5; exit }'
}
cpu_of() {   # bash `times` output: the children line
	awk 'NR == 2 { s = 0
		for (i = 1; i <= 2; i++) { split($i, p, /m/); sub(/s/, "", p[2]); s += p[1] * 60 + p[2] }
		printf "%.2f", s }' "$1"
}

echo "bench/online.sh: python3 on CPU 0, xz -9 on CPU 1, ${SECONDS_PER_RUN}s per run; $("$EMBER" --version 2>/dev/null); $("$PERF" --version)" >&2
# Machine noise moves a run's throughput by several percent: each
# recorded run is paired with an unrecorded one just before it, and the
# loss is the median over REPEAT pairs (bytes, reach and CPU: the mean).
declare -A ROW
for ((rep = 0; rep < REPEAT; rep++)); do
	for hz in $RATES; do
		for tool in ember-g perf-g perf-dwarf; do
			read -r p0 x0 < <(load "$SECONDS_PER_RUN")
			case $tool in
			ember-g) rec=("$EMBER" record -g) ;;
			perf-g) rec=("$PERF" record -g --no-bpf-event) ;;
			perf-dwarf) rec=("$PERF" record --call-graph dwarf --no-bpf-event) ;;
			esac
			f=$T/$tool-$hz.data
			bash -c '"$@" >/dev/null 2>"'"$T/rec.err"'"; s=$?; times >"'"$T/rec.times"'"; exit $s' \
				_ "${rec[@]}" -F "$hz" -a -o "$f" -- sleep "$((SECONDS_PER_RUN + 1))" &
			r=$!
			sleep 0.5
			read -r py xz < <(load "$SECONDS_PER_RUN")
			wait $r
			n=$(samples_of "$f")
			bps=$(awk -v b="$(stat -c %s "$f")" -v n="${n:-0}" 'BEGIN { printf "%d", n ? b / n : 0 }')
			loss=$(awk -v p="$py" -v x="$xz" -v p0="$p0" -v x0="$x0" \
				'BEGIN { printf "%.2f", 100 * (1 - (p / p0 + x / x0) / 2) }')
			deferred=$(awk '/user stacks:/ { print $9 }' "$T/rec.err")
			echo "  $tool -F $hz: $py/$p0 python3 calls, $xz/$x0 xz bytes recorded/not: loss $loss%" >&2
			ROW[$tool-$hz]+="$bps $(reached "$f" python3) $(reached "$f" xz) $(cpu_of "$T/rec.times") $loss $(lost_of "$f") ${deferred:-0}"$'\n'
			rm -f "$f"
		done
	done
done

# summary ROWS: mean bytes, reach, CPU; median loss; total lost, deferred.
summary() {
	awk 'NF { n++; b += $1; pm += $2; xm += $3; c += $4; l[n] = $5; lost += $6; d += $7 }
	     END { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (l[j] < l[i]) { t = l[i]; l[i] = l[j]; l[j] = t }
		   med = n % 2 ? l[(n + 1) / 2] : (l[n / 2] + l[n / 2 + 1]) / 2
		   printf "%d %.1f %.1f %.3f %.1f %d %d\n", b / n, pm / n, xm / n, c / n, med, lost, d }'
}
printf '\n%-22s %9s %9s %9s %10s %8s %6s %9s\n' "recorder (-a, busy)" "B/sample" "py->main" \
	"xz->main" "rec CPU s" "wl loss" "lost" "deferred"
for hz in $RATES; do
	for tool in ember-g perf-g perf-dwarf; do
		read -r bps pm xm cpu loss lost deferred < <(summary <<<"${ROW[$tool-$hz]}")
		printf '%-22s %9s %8s%% %8s%% %10s %7s%% %6s %9s\n' "$tool -F $hz" "$bps" "$pm" "$xm" \
			"$cpu" "$loss" "$lost" "$([ $tool = ember-g ] && echo "$deferred" || echo -)"
	done
	read -r eb _ _ ec el _ _ < <(summary <<<"${ROW[ember-g-$hz]}")
	read -r db _ _ dc dl _ _ < <(summary <<<"${ROW[perf-dwarf-$hz]}")
	awk -v eb="$eb" -v db="$db" -v ec="$ec" -v dc="$dc" -v el="$el" -v dl="$dl" -v hz="$hz" 'BEGIN {
		printf "  -F %s ember -g / perf dwarf: bytes %.3f, recorder CPU %.2f, workload loss %+.1f points\n",
			hz, db ? eb / db : 0, dc ? ec / dc : 0, el - dl }'
done
echo "($REPEAT pairs of ${SECONDS_PER_RUN}s runs per row)"
