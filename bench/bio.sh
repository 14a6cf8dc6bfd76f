#!/usr/bin/env bash
# bench/bio.sh - the cost of recording block I/O and of analysing it.
# 1) fio, 4 KiB random direct reads on a loop device (a file in /tmp):
#    IOPS bare, under `ember record --block -d`, under `perf record` with the
#    same tracepoints and filter, and under the kernel's blk tracer, in one
#    run: ROUNDS rounds of the four (order rotated each round), each mode's
#    slowdown against the same round's bare run (median and range), and the
#    CPU time of fio and recorder per I/O, steadier than IOPS on a shared
#    machine.
# 2) `ember bio` beside btt on one blktrace capture of NIOS I/Os (made up
#    here: Q, G, I, D, C per I/O, one at a time, alternating between two
#    per-CPU files), wall time of each; NIOS=0 skips it.
# Idle CPUs wake slowly and skew IOPS (any extra activity, a recorder's
# too, then looks like a speed-up), so two SCHED_IDLE spinners keep both
# CPUs awake for every run.  A benchmark, not a test: it asserts nothing.
# Needs root, fio, perf; btt (Debian package blktrace) for part 2.
#
#   EMBER=./ember bench/bio.sh   SECONDS_PER_RUN=3 ROUNDS=5 NIOS=1000000 IOENGINE=psync|libaio
#                                PIN=1 (the CPU of the I/O path; PIN= for none)
set -u
: "${PIN=1}"
: "${EMBER:=./ember}" "${PERF:=perf}" "${SECONDS_PER_RUN:=3}" "${ROUNDS:=5}" "${NIOS:=1000000}" \
  "${IOENGINE:=psync}"
EMBER=$(realpath "$EMBER")
[ "$(id -u)" -eq 0 ] || { echo "bench/bio.sh: needs root (losetup, tracepoints)" >&2; exit 2; }
for tool in fio "$PERF" losetup python3; do
	command -v "$tool" >/dev/null || { echo "bench/bio.sh: $tool missing (apt-get install fio linux-perf)" >&2; exit 2; }
done
TR=/sys/kernel/tracing
[ -d $TR/events ] || mount -t tracefs nodev $TR

T=$(mktemp -d /tmp/ember-bench.XXXXXX)
LOOP= SPINNERS=
OLD_TRACER=$(cat $TR/current_tracer)
WQ_MASK=/sys/devices/virtual/workqueue/cpumask OLD_WQ=
cleanup() {
	for p in $SPINNERS; do kill "$p" 2>/dev/null; done
	[ -n "$OLD_WQ" ] && echo "$OLD_WQ" >"$WQ_MASK"
	[ -n "$LOOP" ] && { echo 0 >"/sys/block/$(basename "$LOOP")/trace/enable" 2>/dev/null; losetup -d "$LOOP"; }
	echo 0 >$TR/options/bin 2>/dev/null
	echo "$OLD_TRACER" >$TR/current_tracer 2>/dev/null
	echo 1 >$TR/tracing_on
	rm -rf "$T"
}
trap cleanup EXIT
truncate -s 256M "$T/disk.img"
LOOP=$(losetup -f --show "$T/disk.img")
command -v udevadm >/dev/null && udevadm settle
DEV=$(( $(stat -c 0x%t "$LOOP") << 20 | $(stat -c 0x%T "$LOOP") ))
for _ in 1 2; do
	chrt -i 0 sh -c 'while :; do :; done' &
	SPINNERS="$SPINNERS $!"
done

FIO=(fio --name=randread --filename="$LOOP" --direct=1 --rw=randread --bs=4k
     --ioengine="$IOENGINE" --runtime="$SECONDS_PER_RUN" --time_based --output-format=json)
# PIN=CPU runs the whole I/O path on one CPU: fio there, and the loop
# device's worker too (unbound workqueues limited to that CPU, put back at
# exit); the recorders drain from the other.  Otherwise every I/O waits
# for a cross-CPU wakeup (~25 us on these VMs) and IOPS swing by half
# between identical runs; pinned, they hold within a few percent.
if [ -n "${PIN:-}" ]; then
	FIO=(taskset -c "$PIN" "${FIO[@]}")
	if [ -w "$WQ_MASK" ]; then
		OLD_WQ=$(cat "$WQ_MASK")
		printf '%x' $((1 << PIN)) >"$WQ_MASK"
	fi
fi

# IOPS and the I/O count from fio's JSON.
fio_num() { python3 -c 'import json,sys; r = json.load(open(sys.argv[1]))["jobs"][0]["read"]
print(int(r[sys.argv[2]]))' "$T/o.json" "$1" 2>/dev/null || echo 0; }

# perf gets the tracepoints ember records (format/tracepoints.c; plug and
# unplug carry no device, and ember leaves them out with -d), with the
# same device filter.
PERF_EV=()
for tp in block_bio_queue block_getrq block_rq_insert block_rq_issue block_rq_complete \
	  block_rq_requeue block_rq_merge block_bio_backmerge block_bio_frontmerge block_split \
	  block_bio_remap block_rq_remap block_rq_error; do
	[ -d $TR/events/block/$tp ] && PERF_EV+=(-e "block:$tp" --filter "dev == $DEV")
done

# Each leaves fio's JSON in $T/o.json.
run_bare() { "${FIO[@]}" --output="$T/o.json" >/dev/null 2>&1; }
run_ember() {
	"$EMBER" record -q --block -d "$LOOP" -o "$T/e.data" -- "${FIO[@]}" --output="$T/o.json" >/dev/null 2>&1
}
run_perf() {
	"$PERF" record -q --no-bpf-event -B -a "${PERF_EV[@]}" -o "$T/p.data" -- "${FIO[@]}" \
		--output="$T/o.json" >/dev/null 2>&1
}
run_blk() {
	echo blk >$TR/current_tracer && echo 1 >$TR/options/bin && echo >$TR/trace
	echo 1 >"/sys/block/$(basename "$LOOP")/trace/enable"
	"${FIO[@]}" --output="$T/o.json" >/dev/null 2>&1
	echo 0 >"/sys/block/$(basename "$LOOP")/trace/enable"
	echo 0 >$TR/options/bin; echo nop >$TR/current_tracer
}
# "IOPS CPU-us-per-I/O": the CPU time of fio and the recorder (bash's time
# counts every child) over fio's I/O count.  CPU per I/O is steadier than
# IOPS on a shared machine: another job's load delays fio but does not
# make it spend more CPU per request.  (The loop worker's CPU is not in it.)
measure() {
	local TIMEFORMAT='%U %S' u s
	read -r u s < <({ time run_"$1"; } 2>&1)
	local n; n=$(fio_num total_ios)
	echo "$(fio_num iops) $(awk -v u="$u" -v s="$s" -v n="$n" 'BEGIN { printf "%.2f", (n > 0 ? (u + s) * 1e6 / n : 0) }')"
}

# ROUNDS rounds of all four, the order rotated each round so no mode always
# follows the same one.  Each round's slowdown is against that round's bare
# run (a slow phase of the machine then hits both sides alike): shown are
# the median of the per-round slowdowns and their range, the best IOPS of
# each mode, and the median CPU per I/O.
MODES=(bare ember perf blk)
declare -A best=() sd=() cpu=() iops=()
for m in "${MODES[@]}"; do best[$m]=0; sd[$m]=; cpu[$m]=; done
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", 100 * (b - a) / b; else print "-" }'; }
run_bare   # warm-up, not counted: the first run pays for cold caches
for r in $(seq 0 $((ROUNDS - 1))); do
	for k in 0 1 2 3; do
		m=${MODES[$(( (k + r) % 4 ))]}
		read -r i c < <(measure "$m")
		iops[$m]=$i
		cpu[$m]+=" $c"
		[ "$i" -gt "${best[$m]}" ] && best[$m]=$i
	done
	line="  round $((r + 1)) IOPS:"
	for m in "${MODES[@]}"; do
		line+=" $m ${iops[$m]}"
		[ "$m" = bare ] || sd[$m]+=" $(pct "${iops[$m]}" "${iops[bare]}")"
	done
	echo "$line"
done
# "median (min .. max)" of a list of numbers
med() { tr ' ' '\n' <<<"$1" | awk 'NF' | sort -g | awk '{ v[n++] = $1 } END {
	if (!n) { print "-"; exit }
	m = n % 2 ? v[int(n / 2)] : (v[n / 2 - 1] + v[n / 2]) / 2
	printf "%.1f%s (%.1f .. %.1f)", m, unit, v[0], v[n - 1] }' unit="${2:-}"; }
echo "4 KiB random direct reads ($IOENGINE) on $LOOP, ${SECONDS_PER_RUN}s runs, $ROUNDS rounds:"
printf "  %-31s %8s %-31s %s\n" "" "best" "slowdown vs same round's bare" "CPU us per I/O"
printf "  %-31s %8s %-31s %s\n" "bare" "${best[bare]}" "" "$(med "${cpu[bare]}")"
for m in ember perf blk; do
	case $m in
	ember) name="ember record --block -d" ;;
	perf) name="perf record (same tracepoints)" ;;
	blk) name="kernel blk tracer" ;;
	esac
	printf "  %-31s %8s %-31s %s\n" "$name" "${best[$m]}" "$(med "${sd[$m]}" %)" "$(med "${cpu[$m]}")"
done
# The target compares ember with perf; their ranges overlap, so the
# question is whether the difference is more than chance.  Each round
# gives one paired difference (ember's slowdown less perf's, same bare
# run); their mean and its 95% interval (t distribution) say how sure.
paste <(tr ' ' '\n' <<<"${sd[ember]}" | awk 'NF') <(tr ' ' '\n' <<<"${sd[perf]}" | awk 'NF') |
	awk 'BEGIN { split("12.71 4.30 3.18 2.78 2.57 2.45 2.36 2.31 2.26 2.23 2.20 2.18 2.16 2.14 2.13 2.12 2.11 2.10 2.09", t, " ") }
	     { d[n++] = $1 - $2; s += $1 - $2 }
	     END { if (n < 2) exit
		   m = s / n; for (i = 0; i < n; i++) v += (d[i] - m) ^ 2
		   h = (n - 1 <= 19 ? t[n - 1] : 2.09) * sqrt(v / (n - 1) / n)
		   printf "  ember minus perf, paired by round: %+.2f points (95%% interval %+.2f .. %+.2f, %d rounds)\n", m, m - h, m + h, n }'

# ---- analysis time on a capture of NIOS I/Os -------------------------------
[ "$NIOS" -gt 0 ] || exit 0
python3 - "$T/cap" "$NIOS" <<'PY'
import random, struct, sys
base, n = sys.argv[1], int(sys.argv[2])
# blk_io_trace: magic|version, sequence, time, sector, bytes, action, pid,
# device, cpu, error, pdu_len (48 bytes, native order); per-CPU files.
MAGIC = 0x65617407
Q, G, I, D, C = 1, 4, 12, 7, 8
TC_READ, TC_QUEUE, TC_ISSUE, TC_COMPLETE = 1, 1 << 4, 1 << 6, 1 << 7
cat = {Q: TC_QUEUE, G: TC_QUEUE, I: TC_QUEUE, D: TC_ISSUE, C: TC_COMPLETE}
rec = struct.Struct("<IIQQIIIIIHH")
dev = 7 << 20
files = [bytearray(), bytearray()]
seqs = [0, 0]
t, rnd = 1000, random.Random(1)
for i in range(n):
    sector = rnd.randrange(0, 1 << 20) * 8
    cpu = i & 1
    for act, dt in ((Q, 0), (G, 1000), (I, 500), (D, 2000), (C, 40000)):
        t += dt
        seqs[cpu] += 1
        files[cpu] += rec.pack(MAGIC, seqs[cpu], t, sector, 4096,
                               act | (cat[act] | TC_READ) << 16, 100, dev, cpu, 0, 0)
    t += 500              # one at a time: each CPU's file stays in time order
for cpu, data in enumerate(files):
    open(f"{base}.blktrace.{cpu}", "wb").write(data)
PY
secs() { local s=$(date +%s.%N); "$@" >/dev/null 2>&1; awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
es=$(secs "$EMBER" bio -i "$T/cap")
echo "analysis of $NIOS I/Os ($(du -cb "$T"/cap.blktrace.* | awk 'END { printf "%.0f MB", $1 / 1e6 }')):"
printf "  %-34s %8s s\n" "ember bio (btt table)" "$es"
if command -v btt >/dev/null; then
	cat "$T"/cap.blktrace.* >/dev/null
	if command -v blkparse >/dev/null; then
		bs0=$(date +%s.%N)
		blkparse -q -i "$T/cap" -d "$T/cap.bin" -O >/dev/null 2>&1
		bs=$(cd "$T" && secs btt -i "$T/cap.bin")   # btt leaves .dat files in its cwd
		printf "  %-34s %8s s (blkparse -d to merge the CPUs: %s s more)  ember %sx faster\n" "btt" "$bs" \
			"$(awk -v a="$bs0" -v b="$(date +%s.%N)" -v c="$bs" 'BEGIN { printf "%.2f", b - a - c }')" \
			"$(awk -v a="$es" -v b="$bs" 'BEGIN { if (a > 0) printf "%.1f", b / a; else print "-" }')"
	fi
else
	echo "  btt: not installed (apt-get install blktrace)"
fi
