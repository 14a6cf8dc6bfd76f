#!/usr/bin/env bash
# tools-interval.sh - the tools' --interval: each interval's label ("[SECS
# s]", seconds since the first interval began) and the events it holds
# describe the same span, the first and the last included.  A program
# calls getppid 2000 times a second (toolwork paced: 20 calls every 10 ms
# on an absolute schedule), so every interval's count over its span (the
# label minus the one before) is 2000 a second: live with samples
# (syscount -L, funccount -o), live counting (syscount) and from the file.
# Before the replay's first interval began at the first event, a live
# tool's first interval began at a clock guessed two rounds in, after the
# program's first calls: it held 0.1 s of calls more than its label said
# (1.1 s labelled 1.000 s; 0.6 s labelled 0.500 s with --interval 0.5,
# which the checks use: 20% more).  A
# live tool stopped on a quiet target printed its last interval as
# [0.000 s], before the ones it followed.
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip tools-interval "needs root for tracepoints"; exit 0; }
ensure_tracefs || { skip tools-interval "no tracefs"; exit 0; }
busy_cpus 60

# rates FILE ROW: "LABEL COUNT RATE" per interval whose table has ROW
# (its first column), the rate over the span from the label before; the
# last interval (the rest after the last tick, often empty) left out.
rates() {
	awk -v row="$2" '
		/^\[/ { if (have) print lab, n, (lab - prev > 0 ? n / (lab - prev) : 0); prev = lab
			lab = substr($1, 2) + 0; n = 0; have = 1 }
		$1 == row { n = $2 }
	' "$1"
}
# rates_near FILE ROW RATE: every interval's rate within 10% of RATE (one
# 10 ms batch late at an edge of a 0.5 s interval moves a count by 2%; the
# first interval before the fix held 20% more), and at least 2.
rates_near() {
	rates "$1" "$2" | awk -v r="$3" '{ k++; if ($3 < r * 0.9 || $3 > r * 1.1) bad++ }
		END { exit !(k >= 2 && !bad) }'
}
# labels_rise FILE: every label after the one before it.
labels_rise() {
	awk '/^\[/ { l = substr($1, 2) + 0; if (k++ && l < p) bad++; p = l } END { exit !(k && !bad) }' "$1"
}
show() { rates "$1" "$2" | awk '{ printf "%s%s s: %s", sep, $1, $2; sep = ", " }'; }

W="$WORKLOADS/toolwork"
"$EMBER" syscount -L --interval 0.5 -- "$W" paced 2000 3 >"$TMP/L" 2>"$TMP/Lerr"
if grep -q lost "$TMP/Lerr"; then
	skip tools-interval-L "events lost at the ring: $(head -1 "$TMP/Lerr")"
else
	check "syscount -L live: 2000 getppid a second in every interval, the first too ($(show "$TMP/L" getppid))" \
		rates_near "$TMP/L" getppid 2000
fi
F=$TMP/fc.data
"$EMBER" funccount --interval 0.5 -o "$F" syscalls:sys_enter_getppid -- "$W" paced 2000 3 \
	>"$TMP/fc" 2>"$TMP/fcerr"
if grep -q lost "$TMP/fcerr"; then
	skip tools-interval-funccount "events lost at the ring: $(head -1 "$TMP/fcerr")"
else
	check "funccount -o live: 2000 a second in every interval ($(show "$TMP/fc" syscalls:sys_enter_getppid))" \
		rates_near "$TMP/fc" syscalls:sys_enter_getppid 2000
	"$EMBER" funccount --interval 0.5 -i "$F" >"$TMP/fci" 2>/dev/null
	check "funccount -i: 2000 a second in every interval ($(show "$TMP/fci" syscalls:sys_enter_getppid))" \
		rates_near "$TMP/fci" syscalls:sys_enter_getppid 2000
fi
"$EMBER" syscount --interval 0.5 -- "$W" paced 2000 3 >"$TMP/cnt" 2>/dev/null
check "syscount counting: 2000 a second in every interval ($(show "$TMP/cnt" getppid))" \
	rates_near "$TMP/cnt" getppid 2000
idle_cpus

# A quiet target stopped between ticks: the last interval is labelled
# where the recording ended, not before the ones printed.
sleep 60 &
quiet=$!
timeout -s INT 2.5 "$EMBER" syscount -L --interval 1 -p "$quiet" >"$TMP/quiet" 2>/dev/null
kill "$quiet" 2>/dev/null
check "a quiet target's last interval is labelled after the others ($(grep '^\[' "$TMP/quiet" | tr -d '\n'))" \
	labels_rise "$TMP/quiet"
