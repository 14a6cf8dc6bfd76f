#!/usr/bin/env bash
# bio-stacks.sh - who caused the I/O: `ember bio --stacks` and `--folded` on
# a recording made with 'ember record --block -g' of a workload whose I/O is
# known by construction: writer_a() writes 100 x 64 KiB, writer_b() 50 x
# 64 KiB (direct, one bio each).  Each stack must get exactly its count and
# bytes; perf script on the same file gives the per-function counts too.
# The rings hold the whole run (-m 4096: 16 MiB a CPU for 600 samples of
# 16 KB stack copies), as the writes take some 16 ms and a drain held up
# for a few ms would lose events and with them the counts this test is for.
. "$(dirname "$0")/../e2e-lib.sh"

. "$(dirname "$0")/../e2e-bio-lib.sh"
bio_setup bio-stacks

F=$TMP/stk.data
if ! "$EMBER" record --block -d "$LOOP" -g -m 4096 -o "$F" -- \
	"$WORKLOADS/biowriters" "$LOOP" 100 50 65536 >"$TMP/wl.out" 2>"$TMP/rec.err"; then
	fail record "$(tail -2 "$TMP/rec.err")"
	exit 0
fi
check "workload: 100+50 writes" grep -q 'biowriters: 100+50 writes of 65536 bytes' "$TMP/wl.out"
check "record: nothing lost ($(grep -o '[0-9]* samples, [0-9]* lost' "$TMP/rec.err"))" \
	grep -q 'samples, 0 lost' "$TMP/rec.err"

"$EMBER" bio -i "$F" --stacks --comm biowriters >"$TMP/stacks" 2>"$TMP/err"
check "--stacks: exits 0" test $? -eq 0
# The row of the stack whose frames include FN: "IOS % BYTES %" on its
# header line (frames follow, indented, until a blank line).
row_of() {
	awk -v fn="$1" '/^ *[0-9]+ +[0-9.]+% +[0-9]+ +[0-9.]+%/ { head = $1 " " $3; next }
		$1 == fn && head { print head; head = "" }' "$TMP/stacks"
}
check "--stacks: 150 I/Os, 9830400 bytes in all" grep -q '^Who queued the I/O: 150 I/Os, 9830400 bytes' "$TMP/stacks"
check "--stacks: writer_a's stack queued 100 I/Os, 6553600 bytes ($(row_of writer_a))" \
	test "$(row_of writer_a)" = "100 6553600"
check "--stacks: writer_b's stack queued 50 I/Os, 3276800 bytes ($(row_of writer_b))" \
	test "$(row_of writer_b)" = "50 3276800"
check "--stacks: kernel frames of the submission path" grep -q 'submit_bio.* \[k\]' "$TMP/stacks"

"$EMBER" bio -i "$F" --folded --comm biowriters >"$TMP/folded" 2>"$TMP/err"
fsum() { awk -v fn="$1" '{ n = split($0, f, ";"); for (i = 1; i <= n; i++) if (f[i] == fn) { s += $NF; break } } END { print s + 0 }' "$2"; }
check "--folded: writer_a 100 I/Os ($(fsum writer_a "$TMP/folded"))" test "$(fsum writer_a "$TMP/folded")" = 100
check "--folded: writer_b 50 I/Os ($(fsum writer_b "$TMP/folded"))" test "$(fsum writer_b "$TMP/folded")" = 50
check "--folded: comm is the root frame" test "$(cut -d';' -f1 "$TMP/folded" | sort -u)" = biowriters
"$EMBER" bio -i "$F" --folded --bytes --comm biowriters >"$TMP/folded-b" 2>"$TMP/err"
check "--folded --bytes: writer_b 3276800 bytes" test "$(fsum writer_b "$TMP/folded-b")" = 3276800
"$EMBER" flame --folded "$TMP/folded" -o "$TMP/io.svg" >/dev/null 2>&1
check "ember flame draws the folded I/O stacks" grep -q 'writer_a' "$TMP/io.svg"

# perf reads the same file: its block_bio_queue callchains through writer_a
# and writer_b, counted by this script, are the ground truth's other half.
if have_perf; then
	perf script -i "$F" -F event,ip,sym 2>/dev/null | awk '
		/block:block_bio_queue/ { if (fn != "") c[fn]++; fn = ""; inq = 1; next }
		/^[^ \t]/ { if (fn != "") c[fn]++; fn = ""; inq = 0; next }
		inq && /writer_a/ { fn = "a" } inq && /writer_b/ { fn = "b" }
		END { if (fn != "") c[fn]++; printf "%d %d\n", c["a"], c["b"] }' >"$TMP/perf.n"
	check "perf script: block_bio_queue through writer_a/writer_b: $(cat "$TMP/perf.n")" \
		test "$(cat "$TMP/perf.n")" = "100 50"
else
	skip "perf script cross-check" "perf is not installed"
fi

# Bad input: one clear line each.
"$EMBER" record --block -d "$LOOP" -o "$TMP/nog.data" -- \
	"$WORKLOADS/biowriters" "$LOOP" 2 1 4096 >/dev/null 2>&1
"$EMBER" bio -i "$TMP/nog.data" --stacks >"$TMP/o" 2>"$TMP/e"; rc=$?
check "--stacks without -g: exit 1, says to record with -g" \
	eval 'test $rc -eq 1 && grep -q "record --block -g" "$TMP/e" && test "$(wc -l <"$TMP/e")" -eq 1'
"$EMBER" bio -i "$F" --bytes >/dev/null 2>"$TMP/e"; rc=$?
check "--bytes without --folded: exit 2" eval 'test $rc -eq 2 && grep -q "add --folded" "$TMP/e"'
"$EMBER" bio -i "$F" --stacks --rows 0 >/dev/null 2>"$TMP/e"; rc=$?
check "--rows 0: exit 2" test $rc -eq 2

# Debian's dd has no frame pointers: live, the submitters' user stacks are
# unwound with its CFI while recording (#36), so each of its 50 direct
# writes' stacks reaches __libc_start_call_main.
if [ -x /usr/bin/dd ]; then
	"$EMBER" bio --folded -d "$LOOP" -- /usr/bin/dd if=/dev/zero of="$LOOP" bs=64k count=50 \
		oflag=direct >"$TMP/dd.folded" 2>/dev/null
	read -r n whole < <(awk '/^#/ { next } { t += $NF; if (index($0, "__libc_start_call_main;")) w += $NF }
		END { print t + 0, w + 0 }' "$TMP/dd.folded")
	check "live --folded of Debian's dd: 50 writes, every stack whole ($whole of $n)" \
		test "$n" = 50 -a "$whole" = 50
fi
