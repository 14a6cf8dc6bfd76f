#!/usr/bin/env bash
# tests/e2e/record-output.sh - where the file goes and how a recording ends:
# default ember.data in the working directory, an existing one kept as
# ember.data.old; --duration stops on its own; SIGINT and SIGTERM end a
# system-wide recording with a complete file; a SIGKILLed recorder and a
# full disk leave a file perf still reads up to where it stopped.
set -u
. "$(dirname "$0")/../e2e-lib.sh"
. "$(dirname "$0")/../e2e-record-lib.sh"
require_perf record-output

# Default name, and the rename of an existing file.
mkdir -p "$TMP/cwd"
( cd "$TMP/cwd" && run_ember def1 record -F 999 -- "$WORKLOADS/ratio" 0.3; echo "$RC" >"$TMP/def1.rc" )
if [ "$(cat "$TMP/def1.rc")" -eq 0 ] && why=$(perf_reads "$TMP/cwd/ember.data"); then
	pass default-ember-data
	if parse_end_line "$TMP/def1.err" && [ "$EL_FILE" = ember.data ]; then pass default-end-line-names-file
	else fail default-end-line-names-file "end line does not say 'written to ember.data': $(tail -c 200 "$TMP/def1.err")"; fi
	cp "$TMP/cwd/ember.data" "$TMP/first.data"
	( cd "$TMP/cwd" && run_ember def2 record -F 999 -- "$WORKLOADS/ratio" 0.3; echo "$RC" >"$TMP/def2.rc" )
	if [ "$(cat "$TMP/def2.rc")" -ne 0 ]; then
		fail default-renamed-old "second recording exit $(cat "$TMP/def2.rc"): $(head -c 300 "$TMP/def2.err")"
	elif ! cmp -s "$TMP/first.data" "$TMP/cwd/ember.data.old"; then
		fail default-renamed-old "ember.data.old is not the first recording"
	elif cmp -s "$TMP/first.data" "$TMP/cwd/ember.data" || ! perf_reads "$TMP/cwd/ember.data" >/dev/null; then
		fail default-renamed-old "the new ember.data is not a fresh readable recording"
	else
		pass default-renamed-old
	fi
else
	fail default-ember-data "exit $(cat "$TMP/def1.rc"), ${why:-}: $(head -c 300 "$TMP/def1.err")"
fi

# --duration with no command: stops by itself.
busy_all 2
run_ember dur record -a --duration 1 -o "$TMP/dur.data"
stop_spinners
if [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; then
	fail duration-stops "still running after 60 s"
elif [ "$RC" -ne 0 ]; then
	fail duration-stops "exit $RC: $(head -c 300 "$TMP/dur.err")"
elif why=$(perf_reads "$TMP/dur.data"); then
	pass duration-stops
else
	fail duration-stops "$why"
fi

# A signal ends `record -a` cleanly: exit 0, the end line, a complete file.
# env --default-signal undoes the SIGINT-ignore bash gives background jobs.
signal_stop() {
	local sig=$1 tag=sig-$1 pid rc
	busy_all 3
	env --default-signal=INT timeout -k 5 60 "$EMBER" record -a -g -o "$TMP/$tag.data" \
		>"$TMP/$tag.out" 2>"$TMP/$tag.err" </dev/null &
	pid=$!
	sleep 1.5
	# timeout(1) passes the signal on to ember.
	kill -"$sig" "$pid"
	wait "$pid"; rc=$?
	stop_spinners
	if [ "$rc" -ne 0 ] && [ "$rc" -ne $((128 + $(kill -l "$sig"))) ]; then
		fail "$tag-clean-stop" "exit $rc: $(head -c 300 "$TMP/$tag.err")"
	elif ! parse_end_line "$TMP/$tag.err"; then
		fail "$tag-clean-stop" "no end line after SIG$sig: $(tail -c 300 "$TMP/$tag.err")"
	elif ! why=$(perf_reads "$TMP/$tag.data"); then
		fail "$tag-clean-stop" "$why"
	elif ! looks_complete "$TMP/$tag.data"; then
		fail "$tag-clean-stop" "perf warns: $(head -c 300 "$TMP/lc.err")"
	else
		pass "$tag-clean-stop"
	fi
}
signal_stop INT
signal_stop TERM

# SIGKILL: no chance to finish, yet the samples written so far are readable.
busy_all 3
"$EMBER" record -a -g -o "$TMP/killed.data" >/dev/null 2>&1 </dev/null &
pid=$!
sleep 1.5
kill -KILL "$pid"; wait "$pid" 2>/dev/null
stop_spinners
# Linux perf 6.1 reads no sample of a killed recorder's file (not even of
# its own: "failed to process sample"), so ember's reader is the judge.
if "$EMBER" script --help >/dev/null 2>&1; then
	n=$("$EMBER" script -i "$TMP/killed.data" 2>/dev/null | grep -c ' cpu-clock: ')
	if [ "$n" -gt 0 ]; then pass sigkill-file-readable
	else fail sigkill-file-readable "ember script finds no samples in the killed recorder's file"; fi
else
	skip sigkill-file-readable "no 'ember script' to read it (perf cannot read killed recordings)"
fi

# A full disk: a tmpfs (in a private mount namespace) fills up.  ember
# fails saying so, and the file is readable up to where it stopped.  The
# disk holds what a recording of nothing takes (its header and the maps of
# every process on the machine: some 250 KiB when a test run's processes
# are about, all a 256 KiB disk held, with no room for a sample) and 256
# KiB more.
if command -v unshare >/dev/null && need_root; then
	mkdir -p "$TMP/small"
	"$EMBER" record -a -g -N -o "$TMP/empty.data" -- true >/dev/null 2>&1
	kb=$(( $(stat -c %s "$TMP/empty.data" 2>/dev/null || echo 0) / 1024 + 256 ))
	busy_all 3
	unshare -m --propagation private sh -c '
		mount -t tmpfs -o size=$4k ember-test "$1" || exit 99
		timeout -k 5 30 "$2" record -a -g -o "$1/full.data" -- sleep 2 >"$3/full.out" 2>"$3/full.err" </dev/null
		rc=$?
		cp "$1/full.data" "$3/full.data" 2>/dev/null
		exit $rc' _ "$TMP/small" "$EMBER" "$TMP" "$kb"
	rc=$?
	stop_spinners
	if [ "$rc" -eq 99 ]; then
		skip full-disk "cannot mount a tmpfs"
	elif [ "$rc" -eq 0 ]; then
		fail full-disk "exit 0 although the $kb KiB disk filled up ($(tail -c 200 "$TMP/full.err"))"
	elif ! grep -qiE 'space|ENOSPC' "$TMP/full.err"; then
		fail full-disk "exit $rc but the message does not say the disk is full: $(head -c 300 "$TMP/full.err")"
	else
		pass full-disk-reported
		n=$("$PERF" script -i "$TMP/full.data" -F comm 2>/dev/null | grep -c .)
		if [ "$n" -gt 0 ]; then pass full-disk-file-readable
		else fail full-disk-file-readable "perf script finds no samples in the truncated file"; fi
	fi
else
	skip full-disk "needs root and unshare"
fi
