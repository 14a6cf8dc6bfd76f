#!/usr/bin/env bash
# tools-stackcount-cfi.sh - stackcount's stacks are unwound with the
# binaries' CFI while recording, as record -g's, so code built without
# frame pointers shows whole stacks (#36):
# - a program built here with -O2 -fomit-frame-pointer calls getppid
#   exactly 2000 times from main -> middle -> leaf: every hit's stack holds
#   main;middle;leaf, live and through record --tool stackcount; with
#   --call-graph fp (the frame-pointer walk, kept for who asks) almost
#   none does;
# - Debian's own python3 (no frame pointers): at least 90% of its brk
#   hits reach __libc_start_call_main (only the loader's own brk at start
#   comes before main).
# parallel-safe
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip tools-stackcount-cfi "needs root for tracepoints"; exit 0; }
ensure_tracefs || { skip tools-stackcount-cfi "no tracefs"; exit 0; }
command -v cc >/dev/null || { skip tools-stackcount-cfi "no C compiler"; exit 0; }

cat >"$TMP/nofp.c" <<'C'
#include <stdlib.h>
#include <unistd.h>
static volatile int sink;
/* Bursts of 20, 50 us apart: a tight loop's hits come faster than any
 * drain unwinds them (the ring overflows and says so), and what is
 * tested here is the stacks. */
__attribute__((noinline)) static void leaf(int n)
{
	for (int i = 0; i < n; i++) {
		sink += getppid();
		if (i % 20 == 19)
			usleep(50);
	}
}
__attribute__((noinline)) static void middle(int n)
{
	leaf(n);
	sink++;
}
int main(int argc, char **argv)
{
	middle(argc > 1 ? atoi(argv[1]) : 1);
	sink++;
	return 0;
}
C
cc -O2 -g -fomit-frame-pointer -o "$TMP/nofp" "$TMP/nofp.c" ||
	{ fail tools-stackcount-cfi-build "cc failed"; exit 0; }

# share FILE: "HITS WITH" of the folded lines, WITH those holding $2.
share() {
	awk -v want="$2" '{ n = $NF; t += n; if (index($0, want)) w += n }
		END { print t + 0, w + 0 }' "$1"
}

# lost ERRFILE: the events the run said it lost at the ring (the drain can
# fall behind on a busy machine; what is tested here is the stacks).
lost() { grep -oE '[0-9]+ events lost at the ring' "$1" | awk '{ n += $1 } END { print n + 0 }'; }

busy_cpus 30
P=t:syscalls:sys_enter_getppid
"$EMBER" stackcount -f -o "$TMP/cfi.data" $P -- "$TMP/nofp" 2000 >"$TMP/cfi" 2>"$TMP/cfi.err"
read -r hits with < <(share "$TMP/cfi" "main;middle;leaf")
n=$(lost "$TMP/cfi.err")
check "live: 2000 hits (less $n lost), every stack main;middle;leaf (${hits} hits, ${with} with it)" \
	test $((hits + n)) = 2000 -a "$with" = "$hits" -a "$hits" -ge 1000
"$EMBER" stackcount -f -i "$TMP/cfi.data" >"$TMP/cfi-file" 2>/dev/null
check "the recording kept with -o gives the same stacks" cmp -s "$TMP/cfi" "$TMP/cfi-file"

"$EMBER" record -q --tool stackcount -e syscalls:sys_enter_getppid -o "$TMP/rec.data" \
	-- "$TMP/nofp" 2000 >/dev/null 2>&1
"$EMBER" stackcount -f -i "$TMP/rec.data" >"$TMP/rec" 2>/dev/null
read -r hits with < <(share "$TMP/rec" "main;middle;leaf")
check "record --tool stackcount: the same whole stacks (${hits} hits, ${with} with it)" \
	test "$hits" = 2000 -a "$with" = 2000

"$EMBER" stackcount -f --call-graph fp $P -- "$TMP/nofp" 2000 >"$TMP/fp" 2>"$TMP/fp.err"
read -r hits with < <(share "$TMP/fp" "main;middle;leaf")
n=$(lost "$TMP/fp.err")
check "--call-graph fp walks frame pointers: 2000 hits (less $n lost), under 10% whole (${with})" \
	test $((hits + n)) = 2000 -a "$hits" -ge 1000 -a $((with * 10)) -lt "$hits"

if [ -x /usr/bin/python3 ]; then
	"$EMBER" stackcount -f t:syscalls:sys_enter_brk -- /usr/bin/python3 -c \
		'x = [bytes(100000) for i in range(300)]' >"$TMP/py" 2>/dev/null
	read -r hits with < <(share "$TMP/py" "__libc_start_call_main")
	check "Debian's python3: at least 90% of brk hits reach main ($with of $hits)" \
		test "$hits" -gt 0 -a $((with * 10)) -ge $((hits * 9))
else
	skip tools-stackcount-cfi-python "no /usr/bin/python3"
fi
idle_cpus
