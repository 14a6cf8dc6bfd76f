# harden-valgrind.sh - a few commands of each kind (record, stat, report,
# script, collapse, flame, sched, offcpu, archive) under valgrind memcheck: no
# invalid access, no use of uninitialised memory, no definite leak.
# parallel-safe: records only its own processes and checks nothing that load changes (tests/run.sh)
# long-running: starts first among the parallel-safe tests (tests/run.sh)
source "$TOP/tests/e2e-lib.sh"

if ! command -v valgrind >/dev/null 2>&1; then
	skip harden-valgrind "valgrind is not installed"
	exit 0
fi
# Sanitizer builds (make asan) cannot run under valgrind; they check the
# same things themselves.
if grep -q __asan_init "$EMBER"; then
	skip harden-valgrind "ember is a sanitizer build"
	exit 0
fi
if ! need_root || ! ensure_tracefs; then
	skip harden-valgrind "needs root and tracefs"
	exit 0
fi

VG=(valgrind -q --error-exitcode=99 --leak-check=full
    --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect)

# vg NAME ARGS...: ember ARGS under memcheck exits 0 with nothing to say.
vg() {
	local name=$1 rc; shift
	timeout 300 "${VG[@]}" "$EMBER" "$@" >"$TMP/out" 2>"$TMP/vg"
	rc=$?
	if [ $rc -eq 0 ] && ! grep -q '^==[0-9]*==' "$TMP/vg"; then
		pass "valgrind: $name"
	else
		fail "valgrind: $name" "exit $rc: $(grep -m3 '^==[0-9]*==' "$TMP/vg" | tr '\n' ' ')"
	fi
}

vg "record -g" record -q -g -F 499 -o "$TMP/g.data" -- "$WORKLOADS/ratio" 0.2
vg "record tracepoints" record -q -e sched:sched_switch -e sched:sched_wakeup \
	-o "$TMP/tp.data" -- "$WORKLOADS/sleeper" 10 10
vg "stat" stat -- "$WORKLOADS/ratio" 0.1
vg "report" report -i "$TMP/g.data" --stdio
vg "report --children" report -i "$TMP/g.data" --stdio --children
vg "script" script -i "$TMP/g.data"
vg "script tracepoints" script -i "$TMP/tp.data"
vg "collapse" collapse -i "$TMP/g.data"
vg "flame" flame -i "$TMP/g.data" -o "$TMP/g.svg"
vg "sched lat" sched lat -i "$TMP/tp.data"
vg "offcpu" offcpu -i "$TMP/tp.data"
vg "archive" archive -i "$TMP/g.data" -o "$TMP/g.tar"
