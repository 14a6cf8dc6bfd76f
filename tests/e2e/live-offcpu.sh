#!/usr/bin/env bash
# live-offcpu.sh - ember offcpu while it records: following a command
# (-- sleeper 20 10: 20 sleeps of 10 ms), --threads shows the sleeper's 20
# or more off-CPU intervals and at least the 200 ms it slept, with no file
# between the recorder and the view, and the live line after it.
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip live-offcpu "needs root for tracepoints"; exit 0; }
ensure_tracefs || { skip live-offcpu "no tracefs"; exit 0; }

"$EMBER" offcpu --threads -- "$WORKLOADS/sleeper" 20 10 >"$TMP/out" 2>"$TMP/err"
rc=$?
read -r off n <<<"$(awk '$3 == "sleeper" { print $6, $8 }' "$TMP/out")"
check "offcpu --threads -- sleeper 20 10 (exit $rc): ${n:-no} intervals, ${off:-no} ms off-CPU (want >= 20, >= 200)" \
	awk -v o="${off:-0}" -v n="${n:-0}" -v rc="$rc" 'BEGIN { exit !(rc == 0 && n >= 20 && o >= 200) }'
check "the live line follows the view" grep -q '^# live: ' "$TMP/out"
