#!/usr/bin/env bash
# tests/e2e/record-cli.sh - the command line around record: help and version
# exit 0 and print to stdout, an unknown command is a usage error (2), and
# the default event falls back from cycles to cpu-clock on a machine
# without a hardware PMU, saying so in one line.
# parallel-safe: records only its own processes and checks nothing that load changes (tests/run.sh)
set -u
. "$(dirname "$0")/../e2e-lib.sh"
. "$(dirname "$0")/../e2e-record-lib.sh"

# ok_out NAME PATTERN ARGS... : exit 0 with stdout matching PATTERN.
ok_out() {
	local name=$1 pat=$2; shift 2
	run_ember "$name" "$@"
	if [ "$RC" -ne 0 ]; then fail "$name" "exit $RC: $(head -c 200 "$TMP/$name.err")"
	elif ! grep -qiE -- "$pat" "$TMP/$name.out"; then fail "$name" "stdout does not match /$pat/: $(head -c 200 "$TMP/$name.out")"
	else pass "$name"; fi
}

ok_out help               'record'             --help
ok_out record-help        'usage.*record'      record --help
# record --help documents the options this issue promises.
for opt in -F -g --call-graph -a -C -p -t -e -o -m --duration; do
	if grep -qE -- "(^|[ ,])$opt([ ,=]|$)" "$TMP/record-help.out"; then pass "record-help-mentions$opt"
	else fail "record-help-mentions$opt" "record --help does not mention $opt"; fi
done
ok_out version            '^ember [0-9]'       --version

run_ember nocmd no-such-command
if [ "$RC" -eq 2 ] && grep -q 'no-such-command' "$TMP/nocmd.err"; then pass unknown-command
else fail unknown-command "exit $RC, stderr: $(head -c 200 "$TMP/nocmd.err")"; fi

# Default event: cycles, or cpu-clock with one line saying so.
if [ -d /sys/bus/event_source/devices/cpu ]; then
	skip default-event-fallback "this machine has a hardware PMU"
else
	run_ember defev record -o "$TMP/defev.data" -- "$WORKLOADS/ratio" 0.2
	if [ "$RC" -ne 0 ]; then
		fail default-event-fallback "exit $RC: $(head -c 300 "$TMP/defev.err")"
	elif [ "$(grep -ci 'cpu-clock' "$TMP/defev.err")" -ne 1 ]; then
		fail default-event-fallback "want one line naming cpu-clock on stderr, got: $(head -c 300 "$TMP/defev.err")"
	elif have_perf && ! "$PERF" script -i "$TMP/defev.data" -F event 2>/dev/null | grep -q 'cpu-clock'; then
		fail default-event-fallback "perf sees no cpu-clock samples in the file"
	else
		pass default-event-fallback
	fi
fi
