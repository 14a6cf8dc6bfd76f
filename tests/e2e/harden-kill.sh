# harden-kill.sh - `ember record -a -g` SIGKILLed at 12 random moments leaves
# files `ember report` reads with a warning, no crash; SIGINT during a
# command's run reaches it, the file is complete, and the exit status says
# what happened (the command's own exit, or death by SIGINT as perf's).
# parallel-safe: checks exit statuses and readable files, not counts or timing that load changes (tests/run.sh)
# long-running: starts first among the parallel-safe tests (tests/run.sh)
source "$TOP/tests/e2e-lib.sh"

if ! need_root; then
	skip harden-kill "needs root for system-wide recording"
	exit 0
fi

# Something to sample while the recorder runs, on every CPU.
"$WORKLOADS/spin" 1 120 >/dev/null 2>&1 &
spin=$!
trap 'kill $spin 2>/dev/null; wait $spin 2>/dev/null; rm -rf "$TMP"' EXIT

# judge FILE: prints why the report of a killed recording is wrong, if it is.
# A recorder killed before its header reached the disk leaves no events:
# then a clear error naming the offset is the right answer.
judge() {
	local file=$1 rc
	# Killed before it created its output (an early kill under ASan's
	# slower start): nothing was recorded, as with an empty header.
	[ -e "$file" ] || { echo empty; return; }
	timeout 60 "$EMBER" report -i "$file" --stdio >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if grep -q -e AddressSanitizer -e 'runtime error' -e LeakSanitizer "$TMP/err"; then
		echo "sanitizer: $(grep -m1 -e Sanitizer -e 'runtime error' "$TMP/err")"
	elif [ $rc -eq 0 ]; then
		grep -q 'was not closed cleanly' "$TMP/err" ||
			echo "exit 0 without the not-closed warning"
	elif [ $rc -eq 1 ] && grep -q 'offset' "$TMP/err"; then
		echo "empty"    # told apart by the caller: no data had been written
	else
		echo "exit $rc: $(head -c 200 "$TMP/err")"
	fi
}

RANDOM=$$
bad=0 empty=0 with_samples=0 msgs=""
for i in $(seq 1 12); do
	f="$TMP/kill$i.data"
	"$EMBER" record -q -a -g -F 499 -o "$f" >/dev/null 2>&1 &
	rec=$!
	# 0.05 .. 1.5 s: from the start-up (synthesis) into steady recording.
	sleep "$(awk -v r=$RANDOM 'BEGIN { printf "%.2f", 0.05 + r % 146 / 100 }')"
	kill -KILL $rec
	wait $rec 2>/dev/null
	m=$(judge "$f")
	if [ "$m" = empty ]; then
		empty=$((empty + 1))
	elif [ -n "$m" ]; then
		bad=$((bad + 1)); msgs+="kill $i ($(stat -c %s "$f") bytes): $m; "
	elif grep -q '^# Samples: [1-9]' "$TMP/out"; then
		with_samples=$((with_samples + 1))
	fi
done
echo "killed recordings: $with_samples with samples, $empty before any data"
if [ $bad -eq 0 ]; then
	pass "12 SIGKILLed recordings read with a warning, no crash"
else
	fail "12 SIGKILLed recordings read with a warning, no crash" "$msgs"
fi
check "most killed recordings hold samples" test $with_samples -ge 6

# SIGINT while a command runs: the command sees it (its trap writes a mark
# and exits 3), the recording closes normally, and ember exits with the
# command's status, as perf passes the command's failure on.
cmd="trap 'echo interrupted >$TMP/mark; kill \$!; exit 3' INT; $WORKLOADS/spin 1 30 & wait"
"$EMBER" record -q -g -o "$TMP/int.data" -- bash -c "$cmd" >/dev/null 2>"$TMP/rec.err" &
rec=$!
sleep 1
kill -INT $rec
wait $rec
rc=$?
check "SIGINT: the command got it" grep -q interrupted "$TMP/mark"
check "SIGINT: ember exits with the command's status (3)" test $rc -eq 3
"$EMBER" report -i "$TMP/int.data" --stdio >"$TMP/out" 2>"$TMP/err"
rc=$?
check "SIGINT: the file is complete (report exits 0, no warning)" \
	test $rc -eq 0 -a ! -s "$TMP/err"
check "SIGINT: the file holds the samples before it" grep -q '^# Samples: [1-9]' "$TMP/out"

# Ctrl-C as a terminal sends it: SIGINT to the whole process group, ember
# and the command alike.  As perf 6.1 does (tried with perf record and perf
# stat -- sleep): a command killed by it makes ember end by SIGINT too once
# its output is complete (the shell shows 130); a command that handles it
# and exits gives its own status.  Prints python's returncode (-2: died of
# SIGINT) after 1 s of running ARGS in a session of their own.
ctrl_c() {
	python3 - "$@" <<'PY'
import os, signal, subprocess, sys, time
p = subprocess.Popen(sys.argv[1:], start_new_session=True,
                     stdout=subprocess.DEVNULL, stderr=open(os.environ["ERR"], "w"),
                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
time.sleep(1)
os.killpg(p.pid, signal.SIGINT)
print(p.wait())
PY
}
export ERR=$TMP/ctrlc.err
rc=$(ctrl_c "$EMBER" record -q -g -o "$TMP/cc.data" -- "$WORKLOADS/spin" 1 30)
check "Ctrl-C record: ember ends by SIGINT as perf does" test "$rc" = -2
"$EMBER" report -i "$TMP/cc.data" --stdio >"$TMP/out" 2>"$TMP/err"
check "Ctrl-C record: the file is complete (report exits 0, no warning)" \
	test $? -eq 0 -a ! -s "$TMP/err"
check "Ctrl-C record: the file holds the samples before it" grep -q '^# Samples: [1-9]' "$TMP/out"
if have_perf; then
	perf report -i "$TMP/cc.data" --stdio >/dev/null 2>"$TMP/perr"
	check "Ctrl-C record: perf reads the file" test $? -eq 0
fi
rc=$(ctrl_c "$EMBER" record -q -o "$TMP/cc3.data" -- bash -c \
	"trap 'exit 3' INT; while :; do sleep 0.05; done")
check "Ctrl-C record: a command that exits 3 on it gives 3" test "$rc" = 3
rc=$(ctrl_c "$EMBER" stat -e task-clock -- "$WORKLOADS/spin" 1 30)
check "Ctrl-C stat: ember ends by SIGINT as perf does" test "$rc" = -2
check "Ctrl-C stat: the counts are printed first" grep -q 'seconds time elapsed' "$ERR"
rc=$(ctrl_c "$EMBER" stat -e task-clock -- bash -c \
	"trap 'exit 3' INT; while :; do sleep 0.05; done")
check "Ctrl-C stat: a command that exits 3 on it gives 3" test "$rc" = 3

# The command runs with the dispositions it would have without ember: the
# recorder ignores SIGPIPE for itself, which exec would otherwise pass on
# (a `yes | head` pipeline would then write into a closed pipe for ever).
# SIGPIPE is signal 13: bit 12 of the SigIgn mask.
pipe_ignored() {
	local mask
	mask=$(awk '/^SigIgn:/ { print $2 }')
	[ -n "$mask" ] && echo $(( 0x$mask >> 12 & 1 ))
}
bare=$(grep SigIgn /proc/self/status | pipe_ignored)
for cmd in record stat; do
	if [ $cmd = record ]; then
		got=$("$EMBER" record -q -o "$TMP/sig.data" -- grep SigIgn /proc/self/status 2>/dev/null | pipe_ignored)
	else
		got=$("$EMBER" stat -e task-clock -- grep SigIgn /proc/self/status 2>/dev/null | pipe_ignored)
	fi
	check "$cmd: SIGPIPE ignored by the command as without ember ($got, bare $bare)" \
		test -n "$got" -a "$got" = "$bare"
done
got=$(timeout 20 "$EMBER" record -q -o "$TMP/pipe.data" -- sh -c 'yes | head -1' 2>"$TMP/pipe.err")
check "record: yes | head ends, and yes dies of SIGPIPE (no error line)" \
	test "$got" = y -a ! -s "$TMP/pipe.err"
