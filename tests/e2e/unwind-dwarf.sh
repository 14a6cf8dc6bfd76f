#!/usr/bin/env bash
# tests/e2e/unwind-dwarf.sh - user stacks without frame pointers: the
# known-ratio workload built -O2 -fomit-frame-pointer and recorded with
# --call-graph dwarf unwinds through every function to main with both
# unwinders, at the design's percentages and perf's; a libc qsort callback
# unwinds across the library; a copy too small for the stack ends in a
# marker frame; an inlined function shows as its own "(inlined)" frame;
# a binary whose CFI is only in .debug_frame unwinds with both; and the
# fast path in front of the backends changes no chain.
# parallel-safe: records only its own processes and checks nothing that load changes (tests/run.sh)
# long-running: starts first among the parallel-safe tests (tests/run.sh)
set -u
. "$(dirname "$0")/../e2e-lib.sh"
. "$(dirname "$0")/../e2e-report-lib.sh"
SRC=$TOP/tests/workloads

if ! need_root; then skip unwind-dwarf "needs root to record"; exit 0; fi

# -fno-optimize-sibling-calls: a tail call takes its caller off the stack
# for every unwinder, and the design counts mid_ab as a frame.
build() {   # build NAME SOURCE CFLAGS...
	local name=$1 src=$2; shift 2
	cc -O2 -g "$@" -o "$TMP/$name" "$SRC/$src" 2>"$TMP/$name.cc" ||
		{ fail "build-$name" "$(head -c 300 "$TMP/$name.cc")"; exit 0; }
}
build ratio ratio.c -fomit-frame-pointer -fno-optimize-sibling-calls
build qsortcb qsortcb.c -fomit-frame-pointer
build inlined inlined.c -fomit-frame-pointer
build lazybind lazybind.c -fomit-frame-pointer -fno-optimize-sibling-calls
# CFI only in .debug_frame (its .eh_frame has the C runtime's entries).
build ratio-df ratio.c -fomit-frame-pointer -fno-optimize-sibling-calls \
	-fno-asynchronous-unwind-tables
if objdump -d "$TMP/ratio" | grep -A3 '<mid_ab>:' | grep -q 'push.*%rbp'; then
	fail unwind-build "mid_ab still sets up a frame pointer"; exit 0
fi

start_spinner 30

record() {   # [RATE=HZ] record TAG ARGS... (after --call-graph dwarf)
	local tag=$1; shift
	if ! "$EMBER" record -q --call-graph dwarf -F "${RATE:-999}" -o "$TMP/$tag.data" -- "$@" \
		>"$TMP/$tag.rec" 2>&1; then
		fail "record-$tag" "$(head -c 300 "$TMP/$tag.rec")"
		return 1
	fi
}

# chains FILE [UNWINDER]: one line per sample, its symbols leaf first.
chains() {
	"$EMBER" script -i "$1" ${2:+--unwinder "$2"} -F ip,sym 2>"$TMP/chains.err" |
		awk 'NF == 0 { if (c != "") print c; c = ""; next }
		     { sub(/^[ \t]*[0-9a-f]+ /, ""); c = c (c == "" ? "" : " ") $0 }
		     END { if (c != "") print c }'
}

# ratio_reach CHAINS: "TOTAL GOOD", the known-ratio workload's leaf samples
# and how many of them reach main through every frame of the design.
ratio_reach() {
	awk '$1 == "leaf_a" || $1 == "leaf_b" { t++; if ($0 ~ /^leaf_[ab] mid_ab work main( |$)/) g++ }
	     $1 == "leaf_c" { t++; if ($0 ~ /^leaf_c work main( |$)/) g++ }
	     END { print t + 0, g + 0 }' "$1"
}

# pct FILE SYM: the first percentage of SYM's row in a --stdio report.
pct() {
	awk -v s="$2" '$(NF-1) == "[.]" && $NF == s { sub("%", "", $1); print $1; f = 1; exit }
		END { if (!f) print 0 }' "$1"
}

# ---- the known-ratio workload ---------------------------------------------
"$TMP/ratio" --design >"$TMP/design"
# 1999 Hz for 2 s: about 4000 samples, so the 3 points allowed against the
# design are nearly four standard deviations of chance.
RATE=1999 record ratio "$TMP/ratio" 2 || exit 0
"$EMBER" report -i "$TMP/ratio.data" --stdio --children --sort sym -gnone >"$TMP/r.ember" 2>&1
perf report -i "$TMP/ratio.data" --stdio --children --sort sym -g none \
	>"$TMP/r.perf" 2>/dev/null
for unw in libdw libunwind; do
	chains "$TMP/ratio.data" $unw >"$TMP/chains.$unw"
	# Every sample in a leaf must reach main through the design's frames.
	read -r total good < <(ratio_reach "$TMP/chains.$unw")
	if [ "$total" -gt 500 ] && [ $((good * 100)) -ge $((total * 95)) ]; then
		pass "ratio-$unw-unwound ($good of $total leaf samples reach main, $((good * 100 / total))%)"
	else
		fail "ratio-$unw-unwound" "$good of $total leaf samples reach main through every frame"
	fi
	"$EMBER" report -i "$TMP/ratio.data" --unwinder $unw --stdio --children --sort sym \
		-gnone >"$TMP/r.$unw" 2>&1
	"$EMBER" report -i "$TMP/ratio.data" --unwinder $unw --stdio --no-children --sort sym \
		-gnone >"$TMP/s.$unw" 2>&1
	while read -r kind sym want; do
		if [ "$kind" = self ]; then got=$(pct "$TMP/s.$unw" "$sym")
		else got=$(pct "$TMP/r.$unw" "$sym"); fi
		if within "$got" "$want" 3; then
			pass "ratio-$unw-design-$kind-$sym (${got}%, design ${want}%)"
		else
			fail "ratio-$unw-design-$kind-$sym" "${got}%, design ${want}% (tolerance 3)"
		fi
	done <"$TMP/design"
	for sym in work mid_ab leaf_a leaf_b leaf_c; do
		got=$(pct "$TMP/r.$unw" $sym) want=$(pct "$TMP/r.perf" $sym)
		if [ "$want" != 0 ] && within "$got" "$want" 1; then
			pass "ratio-$unw-perf-children-$sym (${got}%, perf ${want}%)"
		else
			fail "ratio-$unw-perf-children-$sym" "${got}%, perf --children ${want}% (tolerance 1)"
		fi
	done
done
# The other backend is asked only where a walk stopped where no stack can
# end: almost never on this workload, with the fast path off or on.
for unw in libdw libunwind; do
	line=$(EMBER_UNWIND_FAST=0 "$EMBER" report -i "$TMP/ratio.data" --unwinder $unw --stdio \
		-gnone 2>&1 | grep '^# dwarf unwinding')
	read -r stacks asked < <(sed -E 's/.*: ([0-9]+) user stacks.*asked for ([0-9]+).*/\1 \2/' <<<"$line")
	if [ "${stacks:-0}" -gt 1000 ] && [ "${asked:-x}" -le $((stacks / 100)) ] 2>/dev/null; then
		pass "ratio-$unw-second-opinion-rare (asked for $asked of $stacks stacks)"
	else
		fail "ratio-$unw-second-opinion-rare" "$line"
	fi
done

if cmp -s "$TMP/chains.libdw" "$TMP/chains.libunwind"; then
	pass "ratio-backends-agree (identical chains)"
else
	n=$(diff "$TMP/chains.libdw" "$TMP/chains.libunwind" | grep -c '^<')
	fail ratio-backends-agree "$n samples' chains differ between libdw and libunwind: $(diff "$TMP/chains.libdw" "$TMP/chains.libunwind" | head -4 | head -c 400)"
fi

# ---- across a shared library: qsort calling back into the executable -------
record qsortcb "$TMP/qsortcb" 2 || exit 0
for unw in libdw libunwind; do
	chains "$TMP/qsortcb.data" $unw >"$TMP/q.$unw"
	read -r total good < <(awk '$1 == "compare_keys" { t++
			if ($0 ~ / [^ ]*(qsort|msort)[^ ]* .*sort_all main( |$)/) g++ }
		END { print t + 0, g + 0 }' "$TMP/q.$unw")
	if [ "$total" -gt 300 ] && [ $((good * 100)) -ge $((total * 95)) ]; then
		pass "qsort-$unw-crosses-libc ($good of $total comparator samples reach main through libc)"
	else
		fail "qsort-$unw-crosses-libc" "$good of $total comparator samples reach sort_all and main through libc; first: $(grep -m1 '^compare_keys' "$TMP/q.$unw" | head -c 200)"
	fi
done

# ---- through ld.so's lazy-binding trampoline (its CFA is %rbx + 32) ------
# Under LD_BIND_NOT=1 every atoi call is resolved anew: most samples are
# in _dl_runtime_resolve and _dl_fixup, and must still reach call_loop and
# main.  (Where the chosen backend stops early in such a frame, the other
# one is asked: the report counts those as "taken further".)
if "$EMBER" record -q --call-graph dwarf -F 999 -o "$TMP/lazy.data" -- \
	env LD_BIND_NOT=1 "$TMP/lazybind" 1 >"$TMP/lazy.rec" 2>&1; then
	for unw in libdw libunwind; do
		chains "$TMP/lazy.data" $unw >"$TMP/lazy.$unw"
		read -r total good < <(awk '$0 ~ /_dl_(runtime_resolve|fixup)/ { t++
				if ($0 ~ / call_loop main( |$)/) g++ } END { print t + 0, g + 0 }' \
			"$TMP/lazy.$unw")
		if [ "$total" -gt 300 ] && [ $((good * 100)) -ge $((total * 99)) ]; then
			pass "lazy-binding-$unw ($good of $total samples in ld.so's resolver reach main)"
		else
			fail "lazy-binding-$unw" "$good of $total resolver samples reach call_loop and main; first: $(grep -m1 '_dl_' "$TMP/lazy.$unw" | head -c 200)"
		fi
	done
else
	fail lazy-binding-record "$(head -c 300 "$TMP/lazy.rec")"
fi

# ---- a copy too small: the walk ends in a marker, not in garbage -----------
if "$EMBER" record -q --call-graph dwarf,128 -F 999 -o "$TMP/small.data" -- "$TMP/qsortcb" 1 \
	>"$TMP/small.rec" 2>&1; then
	chains "$TMP/small.data" >"$TMP/small.chains"
	read -r total cut bad < <(awk '$1 == "compare_keys" { t++
			if ($NF == "ended]") c++
			for (i = 2; i <= NF; i++) if ($i == "[unknown]") b++ }
		END { print t + 0, c + 0, b + 0 }' "$TMP/small.chains")
	if [ "$total" -gt 100 ] && [ $((cut * 2)) -ge "$total" ] && [ "$bad" -eq 0 ]; then
		pass "small-copy-marker ($cut of $total comparator stacks end in the marker, no unknown frames)"
	else
		fail small-copy-marker "$cut of $total end in '[stack copy ended]', $bad unknown frames"
	fi
else
	fail small-copy-record "$(head -c 300 "$TMP/small.rec")"
fi

# ---- inline frames ----------------------------------------------------------
record inlined "$TMP/inlined" 1 || exit 0
chains "$TMP/inlined.data" >"$TMP/inl.chains"
read -r total good < <(awk '$1 == "spin_inner" { t++; if ($0 ~ /^spin_inner \(inlined\) outer_loop main( |$)/) g++ }
	$1 == "outer_loop" { t++ } END { print t + 0, g + 0 }' "$TMP/inl.chains")
if [ "$total" -gt 300 ] && [ $((good * 100)) -ge $((total * 90)) ]; then
	pass "inline-frame ($good of $total samples show spin_inner (inlined) <- outer_loop <- main)"
else
	fail inline-frame "$good of $total samples show 'spin_inner (inlined) outer_loop main'; first: $(head -1 "$TMP/inl.chains" | head -c 200)"
fi
"$EMBER" report -i "$TMP/inlined.data" --no-inline --stdio --children --sort sym -gnone \
	>"$TMP/noinl" 2>&1
if grep -q 'spin_inner' "$TMP/noinl"; then
	fail no-inline "--no-inline still shows spin_inner"
else
	pass "no-inline (no spin_inner frame)"
fi

# ---- CFI only in .debug_frame ----------------------------------------------
if ! readelf -SW "$TMP/ratio-df" | grep -q '\.debug_frame'; then
	fail debug-frame-build "ratio-df has no .debug_frame"
elif record ratio-df "$TMP/ratio-df" 2; then
	for unw in libdw libunwind; do
		chains "$TMP/ratio-df.data" $unw >"$TMP/df.$unw"
		read -r total good < <(ratio_reach "$TMP/df.$unw")
		if [ "$total" -gt 300 ] && [ $((good * 100)) -ge $((total * 95)) ]; then
			pass "debug-frame-$unw ($good of $total leaf samples reach main from .debug_frame)"
		else
			fail "debug-frame-$unw" "$good of $total leaf samples reach main; first: $(grep -m1 '^leaf' "$TMP/df.$unw" | head -c 200)"
		fi
	done
fi

# ---- the fast path changes nothing -----------------------------------------
# The same chains, marker frames included, with it turned off
# (EMBER_UNWIND_FAST=0), for each backend and each file above.
for unw in libdw libunwind; do
	for tag in ratio qsortcb small ratio-df; do
		[ -f "$TMP/$tag.data" ] || continue
		chains "$TMP/$tag.data" $unw >"$TMP/fast.$tag.$unw"
		EMBER_UNWIND_FAST=0 chains "$TMP/$tag.data" $unw >"$TMP/slow.$tag.$unw"
		n=$(wc -l <"$TMP/fast.$tag.$unw")
		if [ "$n" -gt 100 ] && cmp -s "$TMP/fast.$tag.$unw" "$TMP/slow.$tag.$unw"; then
			pass "fast-path-$unw-$tag (identical chains for $n samples)"
		else
			fail "fast-path-$unw-$tag" "$(diff "$TMP/fast.$tag.$unw" "$TMP/slow.$tag.$unw" | grep -c '^<') of $n chains differ: $(diff "$TMP/fast.$tag.$unw" "$TMP/slow.$tag.$unw" | head -4 | head -c 300)"
		fi
	done
done
