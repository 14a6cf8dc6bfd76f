#!/usr/bin/env bash
# tools-irqs.sh - ember softirqs and hardirqs.  softirqs on a busy machine
# shows timer time; hardirqs while a program writes with O_DIRECT shows
# the handlers this VM has (virtio's, whose names /proc/interrupts lists:
# virtio1-req.0 for the disk here); -d histograms, -C counts; live and
# offline the same.
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip tools-irqs "needs root for tracepoints"; exit 0; }
ensure_tracefs || { skip tools-irqs "no tracefs"; exit 0; }

F=$TMP/soft.data
"$EMBER" softirqs -o "$F" -- "$WORKLOADS/spin" 2 1 >"$TMP/soft" 2>"$TMP/err"
t=$(awk '$1 == "timer" { print $2 }' "$TMP/soft")
check "softirqs: timer time on a busy machine (${t:-none} us)" test "${t:-0}" -gt 0 2>/dev/null
"$EMBER" softirqs -i "$F" >"$TMP/soft2" 2>/dev/null
check "softirqs: live and offline print the same" cmp -s "$TMP/soft" "$TMP/soft2"
"$EMBER" softirqs -d -i "$F" >"$TMP/softd" 2>/dev/null
check "softirqs -d: a histogram for the timer" grep -q '^softirq = timer$' "$TMP/softd"
"$EMBER" softirqs -C -i "$F" >"$TMP/softc" 2>/dev/null
check "softirqs -C: counts" sh -c "grep -q TOTAL_count '$TMP/softc' && awk '\$1 == \"timer\" && \$2 > 0' '$TMP/softc' | grep -q ."

H=$TMP/hard.data
# The disk's completions interrupt whichever CPU: an idle one loses the
# events (DESIGN.md quirks; seen: no handler at all in one run of 30).
# Even so, 2 runs in 10 of this test saw no handler event at all (never
# in 12 runs of the same command alone): up to 3 tries, each failed one named.
busy_cpus 30
for try in 1 2 3; do
	"$EMBER" hardirqs -C -a -o "$H" -- dd if=/dev/zero of="$TMP/f" bs=64k count=64 oflag=direct \
		>"$TMP/hard" 2>"$TMP/err"
	rows=$(awk 'NR > 1 && $2 > 0' "$TMP/hard" | wc -l)
	[ "$rows" -gt 0 ] && break
	echo "note: hardirqs -C try $try saw no handler: $(tr '\n' ' ' <"$TMP/err" | head -c 200)"
done
idle_cpus
check "hardirqs -C: handlers with counts while writing O_DIRECT ($(awk 'NR > 1 { printf "%s=%s ", $1, $2 }' "$TMP/hard"))" \
	test "$rows" -gt 0
known=0
for name in $(awk 'NR > 1 { print $1 }' "$TMP/hard"); do
	grep -q " $name\$" /proc/interrupts && known=$((known + 1))
done
check "each handler is one /proc/interrupts names" test "$known" = "$rows"
"$EMBER" hardirqs -C -i "$H" >"$TMP/hard2" 2>/dev/null
check "hardirqs: live and offline print the same" cmp -s "$TMP/hard" "$TMP/hard2"
